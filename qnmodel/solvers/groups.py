"""Symmetric groups: identical stations that form one array (``disk1`` .. ``disk6``), which
the capacity questions (:mod:`qnmodel.solvers.capacity`) upgrade together.

A group is a set of queueing stations with the same parameters (demand or service time
and visits, servers, rate curve, discipline, service-time law and SCV, capacity): the
members of a symmetric array behind one controller. Upgrading one member of such an
array buys little -- the others stay as loaded as before -- so the questions act on the
group: all members k times faster, one more member, one more server in each member, the
fewest members (devices) that meet a target.

A group is found automatically when identical queueing stations are named by one stem
and a trailing number (``disk1``, ``disk2``, ...; ``ssd_0``, ``ssd_1``): two distinct
devices that happen to have the same demand (``cpu`` and ``nic``, both 1 ms) are not an
array. Any other set is named explicitly (``groups={"disks": ["a", "b", "c"]}``, or
``group = "disks"`` on each member in a model file).

Assumption of "one more member" and of a member count: requests are spread evenly over
the members (a striped or one-of-k array: each request visits one member, chosen at
random or round-robin), so the group's total demand (or total visits) is conserved and
n members carry 1/n of it each. A station written with ``demand`` keeps that form (each
member's demand is D_total / n); one written with ``service_time`` and ``visits`` keeps
its service time per visit and carries V_total / n visits. Mean values are the same in
both forms; the response-time law of a percentile target is not (see
docs/how-to/capacity.md, "Arrays: one request, one member").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidModelError, InvalidTypeError
from ..model import Network, Station

__all__ = ["StationGroup", "find_groups", "spread_group", "replace_members", "faster"]

_NUMBERED = re.compile(r"(.*?)(\d+)")


@dataclass(frozen=True)
class StationGroup:
    """Identical stations upgraded together.

    Attributes
    ----------
    name : str
        ``"disk1..disk6"`` (found automatically) or the name the user gave.
    members : tuple of str
        The member stations, in network order (one for a station alone).
    explicit : bool
        Named by the user (``groups=`` or a model file's ``group`` key).
    """

    name: str
    members: tuple[str, ...]
    explicit: bool = False

    @property
    def size(self) -> int:
        """The number of members."""
        return len(self.members)

    @property
    def label(self) -> str:
        """``"disk1..disk6 (6 identical)"``; a station alone is its name."""
        if self.size == 1 and not self.explicit:
            return self.name
        return f"{self.name} ({self.size} identical)"


def _same(a: Station, b: Station) -> bool:
    """Equal in every parameter but the name."""
    return a.replace(name="_") == b.replace(name="_")


def _difference(a: Station, b: Station) -> str:
    for field in ("demand", "service_time", "visits", "servers", "rate_multipliers",
                  "discipline", "scv", "service", "capacity"):  # fmt: skip
        va, vb = getattr(a, field), getattr(b, field)
        if isinstance(va, np.ndarray) or isinstance(vb, np.ndarray):
            same = va is not None and vb is not None and np.array_equal(va, vb)
        else:
            same = va == vb
        if not same:
            return f"{field} ({vb!r}, while {a.name!r} has {va!r})"
    return "a parameter"  # pragma: no cover - _same said they differ


def _auto_name(members: Sequence[str]) -> str:
    nums = [int(_NUMBERED.fullmatch(m).group(2)) for m in members]
    if sorted(nums) == list(range(min(nums), min(nums) + len(nums))):
        first = members[nums.index(min(nums))]
        last = members[nums.index(max(nums))]
        return f"{first}..{last}"
    return ", ".join(members)


def find_groups(net: Network, groups: Any = "auto") -> tuple[StationGroup, ...]:
    """The network's queueing stations as groups (a station alone is a group of one).

    Parameters
    ----------
    net : Network
        A single-class network.
    groups : "auto", None or mapping
        ``"auto"`` (default): identical queueing stations named by one stem and a trailing
        number form a group. None: every station alone. A mapping ``{name: [station,
        ...]}``: exactly these groups (at least two identical queueing stations each; a
        station in one group at most); the other stations alone.

    Returns
    -------
    tuple of StationGroup
        In network order (a group at its first member), delay stations, fork-joins and
        stations without demand left out.

    Raises
    ------
    InvalidModelError
        A named group has an unknown, repeated, delay or non-identical member (naming the
        parameter that differs), or fewer than two members.
    InvalidTypeError
        ``groups`` is neither "auto", None nor a mapping of names to lists of names.
    """
    queues = [
        s
        for k, s in enumerate(net.stations)
        if isinstance(s, Station) and not net.is_delay[k] and s.demand_of() > 0
    ]
    if groups is None:
        return tuple(StationGroup(s.name, (s.name,)) for s in queues)
    if isinstance(groups, str) and groups == "auto":
        return _auto_groups(queues)
    if not isinstance(groups, Mapping):
        raise InvalidTypeError(
            f"groups must be 'auto', None or a mapping {{name: [station, ...]}}, got {groups!r}"
        )
    return _named_groups(net, queues, groups)


def _auto_groups(queues: list[Station]) -> tuple[StationGroup, ...]:
    sets: list[list[Station]] = []
    by_stem: dict[str, list[list[Station]]] = {}  # linear in the stations, not quadratic
    for s in queues:
        m = _NUMBERED.fullmatch(s.name)
        for g in by_stem.get(m.group(1), []) if m else []:
            if _same(g[0], s):
                g.append(s)
                break
        else:
            sets.append([s])
            if m:
                by_stem.setdefault(m.group(1), []).append(sets[-1])
    return tuple(
        StationGroup(_auto_name([s.name for s in g]), tuple(s.name for s in g))
        if len(g) > 1
        else StationGroup(g[0].name, (g[0].name,))
        for g in sets
    )


def _named_groups(net: Network, queues: list[Station], groups: Mapping) -> tuple[StationGroup, ...]:
    queue_names = {s.name for s in queues}
    owner: dict[str, str] = {}
    for name, members in groups.items():
        if not isinstance(name, str) or not name.strip():
            raise InvalidTypeError(f"groups: a group name must be a non-empty string, got {name!r}")
        if isinstance(members, str) or not isinstance(members, Sequence):
            raise InvalidTypeError(
                f"groups[{name!r}] must be a list of station names, got {members!r}"
            )
        if name in net.names and name not in members:
            raise InvalidModelError(
                f"groups: the group name {name!r} is also a station outside the group (its "
                f"members are {list(members)}): an upgrade or a min_servers question naming "
                f"{name!r} would be ambiguous; rename the group"
            )
        if len(members) < 2:
            raise InvalidModelError(
                f"groups[{name!r}] has {len(members)} member(s): a group has at least two "
                "identical stations; leave a station alone out of groups"
            )
        for m in members:
            if m not in net.names:
                raise InvalidModelError(
                    f"groups[{name!r}]: no station {m!r}; the stations are {list(net.names)}"
                )
            if m not in queue_names:
                raise InvalidModelError(
                    f"groups[{name!r}]: station {m!r} is a delay station or has no demand; a "
                    "group gathers queueing stations"
                )
            if m in owner:
                raise InvalidModelError(
                    f"groups[{name!r}]: station {m!r} is already in group {owner[m]!r}; a "
                    "station belongs to one group at most"
                )
            owner[m] = name
        first = net.station(members[0])
        for m in members[1:]:
            if not _same(first, net.station(m)):
                raise InvalidModelError(
                    f"groups[{name!r}]: station {m!r} differs from {first.name!r} in "
                    f"{_difference(first, net.station(m))}; a group's members are identical "
                    "(the upgrades spread its load evenly over them): make them identical "
                    "or leave it out of the group"
                )
    out: list[StationGroup] = []
    done: set[str] = set()
    for s in queues:
        g = owner.get(s.name)
        if g is None:
            out.append(StationGroup(s.name, (s.name,)))
        elif g not in done:
            done.add(g)
            ordered = tuple(n for n in net.names if owner.get(n) == g)
            out.append(StationGroup(g, ordered, explicit=True))
    return tuple(out)


def replace_members(net: Network, group: StationGroup, **changes: Any) -> Network:
    """The network with ``changes`` (Station.replace keywords) applied to every member."""
    stations = [s.replace(**changes) if s.name in group.members else s for s in net.stations]
    return Network(tuple(stations), think_time=net.think_time)


def faster(station: Station, factor: float) -> Station:
    """The station ``factor`` times faster: its service time (or demand) divided."""
    if station.service_time is not None:
        return station.replace(service_time=station.service_time / factor)
    return station.replace(demand=station.demand / factor)


def spread_group(net: Network, group: StationGroup, n: int) -> Network:
    """The network with the group's load spread evenly over ``n`` identical members.

    The total demand (or, for members written with ``service_time``, the total visits)
    of the group is conserved: each of the n members carries 1/n of it. Members beyond
    the present ones are named by continuing the numbering (``disk7``) or, without one,
    ``name#2``, ``name#3``, ...; members dropped (n below the group's size) are the last.
    """
    first = net.station(group.members[0])
    m = group.size
    if first.service_time is not None:
        member = first.replace(visits=first.visits * m / n)
    else:
        member = first.replace(demand=first.demand * m / n)
    names = list(group.members[:n]) + _new_names(net, group, n - m)
    last = max(net.names.index(x) for x in group.members)
    before = [s for s in net.stations[:last] if s.name not in group.members]
    after = list(net.stations[last + 1 :])
    new = [member.replace(name=x) for x in names]
    return Network(tuple(before + new + after), think_time=net.think_time)


def _new_names(net: Network, group: StationGroup, count: int) -> list[str]:
    taken = set(net.names)
    out: list[str] = []
    numbered = [_NUMBERED.fullmatch(x) for x in group.members]
    if all(numbered) and len({x.group(1) for x in numbered}) == 1:
        stem = numbered[0].group(1).replace("{", "{{").replace("}", "}}")
        digits = [x.group(2) for x in numbered]
        width = max(len(d) for d in digits) if any(d.startswith("0") for d in digits) else 1
        i = max(int(d) for d in digits)
        pattern = stem + "{:0" + str(width) + "d}"
    else:
        i = 1
        pattern = group.members[-1].replace("{", "{{").replace("}", "}}") + "#{}"
    while len(out) < count:
        i += 1
        name = pattern.format(i)
        if name not in taken:
            taken.add(name)
            out.append(name)
    return out
