"""The capacity questions in one call: how much load meets a response-time target, how
many servers a station needs, and which single upgrade helps most.

Each answer rests on a monotonicity of the product-form solution, so a search over one
variable finds it exactly (to the resolution stated):

* open network: R(lambda) is continuous and strictly increasing on [0, lambda_sat)
  and diverges at lambda_sat ([LZGS] sec. 6.4), so the largest lambda with
  R(lambda) <= R_target is found by bisection to a relative width of 1e-12;
* closed network: R(n) is non-decreasing in n ([LZGS] sec. 6.3; exact MVA), so the
  largest population is read off one MVA curve (extended by doubling); with
  non-exponential single-server FCFS stations that curve is the residual-life MVA of
  :mod:`qnmodel.solvers.mva_residual` (approximate), and a server added to such a station
  is refused (the correction is for one server);
* adding a server to a station never increases R (open: C(m, a)/(m - a) decreases in
  m; closed: the station's rate min(j, m) grows pointwise), so the fewest servers are
  found by doubling then bisection; nor does spreading a station's load over one more
  identical device (n copies of demand D/n each: open, D / (1 - lambda D / n) for
  M/M/1 copies decreases in n), so the fewest devices are found the same way.

Identical stations of one array (``disk1`` .. ``disk6``) form a symmetric group
(:mod:`qnmodel.solvers.groups`): :func:`best_upgrade` offers all members faster, one
more member and one more server in each member, and :func:`min_servers` answers for
the whole group (servers in each member, or the number of members).

Targets are :class:`~qnmodel.solvers.targets.Target` objects or strings
(``"R <= 50 ms"``, ``"p95 <= 80 ms"``, ``"X >= 2000/s"``; a bare time is a mean
target). Percentile targets use the response-time law of
:mod:`qnmodel.solvers.response_laws`: exact for open tandems of M/M/1 (and delay)
stations, for a lone M/M/m and for one closed M/M/m station, an approximation
elsewhere (closed networks: per-station laws from the arrival theorem -- m-server
stations with their exact load-dependent marginals -- taken as independent; M/G/1
and M/G/m stations: two-moment fits); the same
searches then assume the percentile grows with the load, as the mean does.

A storage model that describes its own upgrades (an object with
``capacity_candidates(speedup)``, such as
:class:`qnmodel.models.storage_cache.CachedNetworkedRAID`) may be given to
:func:`best_upgrade` in place of a network: its candidates (more cache, a faster
link, a faster device, one more server) are ranked the same way.

References
----------
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, ch. 5-6.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._validate import as_population, as_positive_int, check_size
from ..errors import (
    InvalidModelError,
    InvalidTypeError,
    NumericalInstabilityWarning,
    UnstableModelError,
)
from ..model import Network, Station
from ..results.open import UpgradeResult
from .groups import StationGroup, faster, find_groups, replace_members, spread_group
from .mva import mva
from .open import open_network
from .response_laws import response_time_law
from .targets import Target, as_target

#: The most devices min_servers(count="devices") writes out, one station each.
MAX_DEVICES = 20_000
#: The most (candidates x stations) best_upgrade solves: 3 x 200 x 200 take seconds.
MAX_UPGRADE_WORK = 250_000

__all__ = ["max_arrival_rate", "max_population", "min_servers", "best_upgrade"]


def _target(value: Any) -> Target:
    return as_target(value, "target")


def _metric(net: Network, tgt: Target, arrival_rate: Any, N: Any) -> float:
    """The target's metric at one workload: R, a percentile of R, or X (inf/0 if unstable)."""
    if (arrival_rate is None) == (N is None):
        raise InvalidModelError("give exactly one of arrival_rate (open) or N (closed)")
    if tgt.metric == "mean":
        return _workload_R(net, arrival_rate, N)
    if tgt.metric == "throughput":
        if arrival_rate is not None:
            raise InvalidModelError(
                f"target {tgt.text!r}: in an open network X equals the arrival rate; give a "
                "response-time target, or a population"
            )
        return float(mva(net, N, keep="last").throughput[-1])
    try:
        with _probing():
            law = response_time_law(net, arrival_rate=arrival_rate, N=N)
    except UnstableModelError:
        return float("inf")
    return law.quantile(tgt.q)


def _meets(value: float, tgt: Target) -> bool:
    return value >= tgt.value if tgt.metric == "throughput" else value <= tgt.value


def _response_time_target(tgt: Target, question: str) -> None:
    if not tgt.is_response_time:
        raise InvalidModelError(
            f"{question} takes a response-time target ('R <= 50 ms', 'p95 <= 80 ms'), "
            f"got {tgt.text!r}"
        )


def _check_net(net: Any) -> Network:
    if not isinstance(net, Network):
        raise InvalidTypeError(f"net must be a single-class Network, got {type(net).__name__}")
    if not net.single:
        raise InvalidModelError(
            f"the capacity questions take a network without classes; this one has classes "
            f"{list(net.class_names)}: ask them of one class (net.class_network(name))"
        )
    return net


@contextlib.contextmanager
def _probing():
    """The searches probe loads up to 1 - 1e-12 of saturation to bracket the answer: the
    near-saturation warning of such a probe is about the probe, not about the answer."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalInstabilityWarning)
        yield


def _open_R(net: Network, lam: float) -> float:
    try:
        with _probing():
            return float(open_network(net, lam).response_time[0])
    except UnstableModelError:
        return float("inf")


def max_arrival_rate(net: Network, target: Any) -> float:
    """Largest arrival rate (jobs/s) at which the open network meets a response-time target.

    Parameters
    ----------
    net : Network
        Read as an open single-class network (think time not used).
    target : Target, str or float
        ``"R <= 50 ms"`` (mean), ``"p95 <= 80 ms"`` (percentile), or a bare time
        (``"50 ms"``, seconds): a mean target.

    Returns
    -------
    float
        lambda* at which the metric equals the target, to a relative width of 1e-12
        (mean, bisection) or 1e-10 (percentile, Brent's method), on the side that meets
        it; always below the saturation rate.

    Raises
    ------
    InvalidModelError
        Even a lone job misses the target (the message gives its value at lambda = 0),
        or the target is a throughput.
    """
    net = _check_net(net)
    tgt = _target(target)
    _response_time_target(tgt, "max_arrival_rate")
    t = tgt.value
    base = open_network(net, 0.0)
    v0 = float(base.response_time[0]) if tgt.metric == "mean" else _metric(net, tgt, 0.0, None)
    if v0 > t:
        what = "R" if tgt.metric == "mean" else tgt.label
        raise InvalidModelError(
            f"target {tgt.text} cannot be met: a lone job already takes {what} = {v0:.6g} s"
        )
    hi = base.saturation_arrival_rate
    if not np.isfinite(hi):  # only delay stations: R does not depend on lambda
        return float("inf")
    if tgt.metric == "percentile":  # Brent's method: each evaluation is a quantile
        from scipy.optimize import brentq

        def f(lam: float) -> float:
            return _metric(net, tgt, lam, None) - t

        top = hi * (1.0 - 1e-12)
        if f(top) <= 0.0:  # pragma: no cover - the quantile diverges at saturation
            return top
        lam = float(brentq(f, 0.0, top, xtol=1e-10 * hi, rtol=1e-12))
        while f(lam) > 0.0:  # land on the side that meets the target
            lam -= 1e-10 * hi
        return lam
    lo = 0.0
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if _open_R(net, mid) <= t:
            lo = mid
        else:
            hi = mid
    return lo


def max_population(net: Network, target: Any, n_max: int = 1_000_000) -> int:
    """Largest population n (closed network) that meets a response-time target.

    Mean targets use exact MVA; percentile targets the approximate closed-network law
    of :func:`~qnmodel.solvers.response_laws.response_time_law` (doubling, then
    bisection on n, assuming the percentile grows with n).

    Returns 0 when even one job misses the target; raises :class:`InvalidModelError`
    if the target is still met at ``n_max`` (a network of delay stations only, or a
    target above the heavy-load asymptote seen so far).
    """
    net = _check_net(net)
    tgt = _target(target)
    _response_time_target(tgt, "max_population")
    t = tgt.value
    n_max = as_population(n_max, "n_max")
    if tgt.metric == "percentile":
        return _max_population_search(net, tgt, n_max)
    N = 64
    while True:
        N = min(N, n_max)
        R = mva(net, N).response_time
        over = np.flatnonzero(R > t)
        if over.size:
            return int(over[0])  # R(n) for n = over[0] + 1 is the first above
        if N == n_max:
            raise InvalidModelError(
                f"R(n) <= {t:.6g} s for every n up to n_max = {n_max}: raise n_max or "
                "check the target"
            )
        N *= 4


def _bisect(lo: int, hi: int, past: Callable[[int], bool]) -> tuple[int, int]:
    """Integer bisection: from lo < hi with ``past(lo)`` false and ``past(hi)`` true
    (``past`` monotone), the neighbours (lo, lo + 1) where it turns, calling ``past`` only
    strictly between the two."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if past(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi


def _max_population_search(net: Network, tgt: Target, n_max: int) -> int:
    def ok(n: int) -> bool:
        return _meets(_metric(net, tgt, None, n), tgt)

    if not ok(1):
        return 0
    lo, hi = 1, 2
    while ok(min(hi, n_max)):
        if hi >= n_max:
            raise InvalidModelError(
                f"{tgt.label}(n) <= {tgt.value:.6g} s for every n up to n_max = {n_max}: "
                "raise n_max or check the target"
            )
        lo, hi = hi, 2 * hi
    return _bisect(lo, min(hi, n_max), lambda n: not ok(n))[0]


def _with_station(net: Network, k: int, **changes: Any) -> Network:
    stations = list(net.stations)
    stations[k] = stations[k].replace(**changes)
    return Network(tuple(stations), think_time=net.think_time)


def _workload_R(net: Network, arrival_rate: Any, N: Any) -> float:
    if (arrival_rate is None) == (N is None):
        raise InvalidModelError("give exactly one of arrival_rate (open) or N (closed)")
    if arrival_rate is not None:
        try:
            return float(open_network(net, arrival_rate).response_time[0])
        except UnstableModelError:
            return float("inf")
    return float(mva(net, N, keep="last").response_time[-1])


def min_servers(
    net: Network,
    station: str,
    target: Any,
    *,
    arrival_rate: Any = None,
    N: Any = None,
    max_servers: int = 1_000_000,
    count: str | None = None,
    groups: Any = "auto",
) -> int:
    """Fewest servers (or devices) at ``station`` that meet ``target`` at the given workload.

    Two questions, chosen by ``count``:

    * ``"servers"`` (default for a station with ``servers``): the fewest servers m per
      station; for a member of a symmetric group (:mod:`qnmodel.solvers.groups`), every
      member gets m servers;
    * ``"devices"`` (default, and the only meaning, for a station with a rate curve): the
      fewest identical devices -- each one a copy of the station, with its rate curve --
      sharing the load evenly: for a group, the number of members (``disk1..disk6``: how
      many disks?); for a station alone, the number of copies of it. Each device carries
      1/n of the group's total demand (or of its total visits, for stations written with
      ``service_time``): requests are spread evenly, as in a striped or one-of-k array
      (:func:`qnmodel.solvers.groups.spread_group`).

    Parameters
    ----------
    net : Network
    station : str
        A queueing station of ``net``, or the name of a group (``groups`` mapping key, or
        an automatic group's name such as ``"disk1..disk6"``). A member of a group
        answers for its group.
    target : Target, str or float
        ``"R <= 50 ms"``, ``"p95 <= 80 ms"``, ``"X >= 2000/s"`` (closed workloads
        only: the throughput at ``N``), or a bare time (mean target).
    arrival_rate, N
        The workload: exactly one of an open arrival rate or a closed population N.
    max_servers : int
        Search limit (servers, or devices).
    count : {"servers", "devices"}, optional
        The question; default ``"devices"`` for a station with ``rate_multipliers``,
        ``"servers"`` otherwise.
    groups : "auto", None or mapping
        The symmetric groups (:func:`qnmodel.solvers.groups.find_groups`).

    Returns
    -------
    int
        The fewest servers per member, or the fewest devices.

    Notes
    -----
    Adding a server never increases R (module docstring); nor does spreading the same
    load over one more identical device (open: n d/(1 - lambda D/n) per M/M/1 group of
    total demand D decreases in n; closed: more service capacity at every population), so
    doubling then bisection finds the fewest. Each probe solves the network with n
    devices written out, so the cost grows with the answer.

    Raises
    ------
    InvalidModelError
        The target cannot be met with any number up to ``max_servers`` (another station
        limits R), naming the limit reached; ``count="servers"`` at a station whose
        servers are a rate curve (ask ``count="devices"``); a delay station.
    """
    net = _check_net(net)
    tgt = _target(target)
    group = _group_of(net, station, groups)
    first = net.station(group.members[0])
    if count is None:
        count = "devices" if first.rate_multipliers is not None else "servers"
    if count not in ("servers", "devices"):
        raise InvalidModelError(f"count must be 'servers' or 'devices', got {count!r}")
    if count == "servers" and first.rate_multipliers is not None:
        raise InvalidModelError(
            f"station {first.name!r} has rate_multipliers: its servers are part of its rate "
            "curve; ask how many such devices: min_servers(..., count='devices')"
        )
    max_servers = as_positive_int(max_servers, "max_servers")
    where = repr(station) if group.size == 1 else f"group {group.label!r}"
    what = "servers" if count == "servers" else "devices"

    def build(m: int) -> Network:
        if count == "servers":
            return replace_members(net, group, servers=m)
        return spread_group(net, group, m)

    def ok(m: int) -> bool:
        return _meets(_metric(build(m), tgt, arrival_rate, N), tgt)

    # Infinitely many servers (or devices) make the station a delay (no waiting): if even
    # that misses the target, no number of them meets it.
    if not _meets(_metric(_no_waiting(net, group, count), tgt, arrival_rate, N), tgt):
        raise InvalidModelError(
            f"target {tgt} is not met even with {max_servers} {what} at {where}, nor "
            f"with unlimited {what} (no waiting there): its service time or another station "
            "limits it"
        )
    # devices are written out, one station each, and the network solved at every probe
    limit = max_servers if count == "servers" else min(max_servers, MAX_DEVICES)
    lo, hi = 0, 1  # invariant: ok(hi) once found; lo is known to fail (or 0)
    while not ok(hi):
        lo = hi
        if hi >= limit and limit < max_servers:
            raise InvalidModelError(
                f"target {tgt} is not met with {limit} devices at {where}, the most "
                "min_servers writes out (each probe solves the network with every device a "
                "station: 12000 take seconds); model the group as one station with servers "
                "(count='servers') or a rate curve"
            )
        if hi >= max_servers:
            raise InvalidModelError(
                f"target {tgt} is not met even with {max_servers} {what} at "
                f"{where}: another station limits it"
            )
        hi = min(2 * hi, limit)
    return _bisect(lo, hi, ok)[1]


def _group_of(net: Network, station: str, groups: Any) -> StationGroup:
    """The group named ``station``, the group it belongs to, or the station alone."""
    found = find_groups(net, groups)
    for g in found:
        if station in (g.name, g.label) and (g.size > 1 or g.explicit):
            if station in net.names and station not in g.members:
                raise InvalidModelError(
                    f"{station!r} names both a station and the group {g.label!r} (members "
                    f"{list(g.members)}): ambiguous; rename the station, or name the group "
                    "with groups={name: [members]}"
                )
            return g
    element = net.station(station)
    if not isinstance(element, Station):
        raise InvalidModelError(
            f"{station!r} is a fork-join element: min_servers sizes a queueing station; "
            "solve fork-join variants with qnmodel.fork_join"
        )
    if element.is_delay:
        raise InvalidModelError(f"station {station!r} is a delay station: it has no servers")
    for g in found:
        if station in g.members:
            return g
    return StationGroup(station, (station,))  # a queueing station without demand


def _no_waiting(net: Network, group: StationGroup, count: str) -> Network:
    """The limit of unlimited servers or devices: the group as one delay station of its
    total demand at the rate of one job."""
    if count == "servers":
        return replace_members(net, group, discipline="IS")
    first = net.station(group.members[0])
    one = 1.0 if first.rate_multipliers is None else float(first.rate_multipliers[0])
    total = float(sum(net.station(x).demand for x in group.members))
    stations = [s for s in net.stations if s.name not in group.members[1:]]
    k = [s.name for s in stations].index(group.members[0])
    stations[k] = Station(first.name, demand=total / one, kind="delay")
    return Network(tuple(stations), think_time=net.think_time)


def _network_candidates(
    net: Network, speedup: float, groups: Any = "auto"
) -> list[tuple[str, Network]]:
    """Per station alone: ``speedup`` times faster, and one more server. Per symmetric
    group: all members ``speedup`` times faster, one more member (the load spread over
    it), one more server in each member."""
    found = find_groups(net, groups)
    check_size(
        3 * len(found) * len(net.stations), MAX_UPGRADE_WORK,
        f"best_upgrade: candidates x stations (up to 3 candidates for each of {len(found)} "
        f"stations or groups, each a network of {len(net.stations)} stations solved whole; "
        "200 stations take seconds)",
        "ask of a smaller network (its bottleneck stations), or group identical stations",
    )  # fmt: skip
    out = []
    for g in found:
        s = net.station(g.members[0])
        if g.size == 1:
            k = net.names.index(s.name)
            out.append(
                (f"{s.name}: {speedup:g}x faster", _with_station(net, k, demand=s.demand / speedup))
            )
            if s.rate_multipliers is None:  # a curve already says how it serves more at once
                m = int(s.servers) + 1
                out.append((f"{s.name}: {m} servers", _with_station(net, k, servers=m)))
            continue
        n = g.size
        stations = tuple(faster(x, speedup) if x.name in g.members else x for x in net.stations)
        out.append(
            (
                f"{g.label}: all {n} members {speedup:g}x faster",
                Network(stations, think_time=net.think_time),
            )
        )
        out.append((f"{g.label}: one more member ({n + 1})", spread_group(net, g, n + 1)))
        if s.rate_multipliers is None:
            m = int(s.servers) + 1
            out.append((f"{g.label}: {m} servers each", replace_members(net, g, servers=m)))
    return out


def best_upgrade(
    net: Any,
    *,
    arrival_rate: Any = None,
    N: Any = None,
    speedup: float = 2.0,
    target: Any = None,
    groups: Any = "auto",
) -> UpgradeResult:
    """Rank single upgrades by the response time (or percentile) they buy.

    Parameters
    ----------
    net : Network or storage model
        A network: the candidates per queueing station alone are a device ``speedup``
        times faster (demand divided by ``speedup``) and one more server (not for a
        station with rate multipliers, whose curve already describes its
        parallelism). Per symmetric group of identical stations (``disk1..disk6``, see
        ``groups``), the upgrades that help an array: all its members ``speedup`` times
        faster, one more member (the group's load spread evenly over n + 1 members, each
        member's demand times n/(n + 1): requests go to one member each, as in a striped
        or one-of-k array) and one more server in each member; upgrading one member of an
        array is not offered. A storage model with ``capacity_candidates(speedup)`` (e.g.
        :class:`qnmodel.models.storage_cache.CachedNetworkedRAID` or
        :class:`~qnmodel.models.storage_cache.CachedNFS`): its own candidates --
        more cache, a faster link, a faster device, one more server.
    arrival_rate, N
        The workload: exactly one of an open arrival rate or a closed population N.
    speedup : float
        Factor of a faster device (> 1).
    target : Target or str, optional
        Rank by this target's metric (``"p95 <= 80 ms"``: the 95th percentile) and
        report which options meet it; default: the mean response time.
    groups : "auto", None or mapping
        The symmetric groups of a network (:func:`qnmodel.solvers.groups.find_groups`):
        ``"auto"`` finds identical queueing stations named by one stem and a number;
        ``{"disks": ["a", "b", "c"]}`` names them; None upgrades every station alone.

    Returns
    -------
    UpgradeResult
        The candidates sorted by the metric (best first; an upgrade that leaves an
        open network unstable has inf and comes after every stable one), with the
        baseline and the ``speedup`` factor of the "faster" options.
    """
    if isinstance(speedup, bool) or not isinstance(speedup, int | float) or not speedup > 1.0:
        raise InvalidModelError(f"speedup must be a number > 1, got {speedup!r}")
    speedup = float(speedup)
    if not np.isfinite(speedup):
        raise InvalidModelError(f"speedup must be finite, got {speedup!r}")
    tgt = None if target is None else _target(target)
    if tgt is not None and not tgt.is_response_time:
        _response_time_target(tgt, "best_upgrade")
    if isinstance(net, Network):
        base_net, candidates = net, _network_candidates(net, speedup, groups)
    elif callable(getattr(net, "capacity_candidates", None)):
        base_net, candidates = net.capacity_candidates(speedup)
    else:
        raise InvalidTypeError(
            "net must be a single-class Network or a storage model with capacity_candidates(), "
            f"got {type(net).__name__}"
        )
    metric = tgt if tgt is not None else Target("mean", float("inf"), None, "R")
    base = _metric(base_net, metric, arrival_rate, N)
    options = [label for label, _ in candidates]
    R = [_metric(n, metric, arrival_rate, N) for _, n in candidates]
    order = np.argsort(np.asarray(R), kind="stable")
    values = np.asarray(R, dtype=np.float64)[order]
    return UpgradeResult(
        options=tuple(options[i] for i in order),
        response_time=values,
        baseline_response_time=base,
        workload=(f"arrival_rate={arrival_rate}" if arrival_rate is not None else f"N={N}"),
        metric=metric.label,
        target=None if tgt is None else str(tgt),
        meets_target=None if tgt is None else values <= tgt.value,
        speedup=speedup,
    )
