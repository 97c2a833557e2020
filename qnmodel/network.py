"""Immutable description of a closed queueing network.

A :class:`Network` is a tuple of :class:`Station` objects plus a think time.
It is compiled once into flat arrays (:attr:`Network.demands`,
:attr:`Network.servers`, :attr:`Network.is_delay`) that the solvers in
:mod:`qnmodel.solvers` consume; the solvers never see station objects.

Station kinds
-------------
``"queue"``
    A load-independent FCFS/PS queueing station. With ``servers=m > 1`` it is
    a multi-server (load-dependent) station of ``m`` identical servers: its
    service rate with ``j`` jobs present is ``min(j, m) / D``.
``"delay"``
    An infinite-server (IS) station: jobs never wait, residence time is the
    demand. Equivalent to (and additive with) the terminal think time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validate import as_choice, as_quantity, as_servers, check_same_length
from .errors import InvalidModelError, InvalidTypeError

__all__ = ["Station", "Network", "STATION_KINDS", "ForkJoin", "refuse_forkjoin"]

STATION_KINDS = ("queue", "delay")


@dataclass(frozen=True)
class Station:
    """One service centre of a closed network.

    Parameters
    ----------
    name : str
        Unique, non-empty name within its network (e.g. ``"disk"``).
    demand : float or str
        Service demand D_k = V_k * S_k, total service time a job needs at this
        station per interaction, in **seconds**; a string must carry a time
        unit (``"4.9 ms"``). Must be finite and >= 0.
    kind : {"queue", "delay"}
        Queueing station (jobs wait for a server) or delay (infinite-server).
    servers : int
        Number of identical servers of a ``"queue"`` station (>= 1). Leave at 1
        for a delay station.
    """

    name: str
    demand: float
    kind: str = "queue"
    servers: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise InvalidTypeError(
                f"Station name must be a string, got {self.name!r} ({type(self.name).__name__})"
            )
        if not self.name.strip():
            raise InvalidModelError("Station name must be a non-empty string, got ''")
        label = f"Station {self.name!r}"
        object.__setattr__(self, "demand", as_quantity(self.demand, f"{label}: demand", "time"))
        as_choice(self.kind, f"{label}: kind", STATION_KINDS)
        servers = as_servers(self.servers, f"{label}: servers")
        if self.kind == "delay" and servers != 1:
            raise InvalidModelError(
                f"{label}: servers must be 1 for a delay station (it has infinitely many), "
                f"got {self.servers!r}"
            )
        object.__setattr__(self, "servers", servers)

    @property
    def is_delay(self) -> bool:
        """True for an infinite-server station."""
        return self.kind == "delay"


def _per_station(values: Any, name: str) -> list[Any]:
    """A per-station sequence (list, tuple, array, pandas Series, ...) as a list.

    A string or a mapping is rejected rather than iterated character by character or
    key by key.
    """
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise InvalidTypeError(
            f"{name} must be a sequence with one entry per station, got {type(values).__name__}"
        )
    return list(values)


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class Network:
    """A closed, single-class queueing network.

    Parameters
    ----------
    stations : sequence of Station
        At least one station; names must be unique.
    think_time : float or str
        Terminal think time Z in seconds (>= 0), spent outside the stations;
        response time R excludes it and X = n / (R + Z).

    Attributes
    ----------
    demands : ndarray (K,)
        Service demands in seconds, in station order.
    servers : ndarray (K,) of int
        Servers per station (1 for delay stations).
    is_delay : ndarray (K,) of bool
        Which stations are infinite-server.
    names : tuple of str
        Station names.
    """

    stations: tuple[Station, ...]
    think_time: float = 0.0
    demands: np.ndarray = field(init=False, repr=False, compare=False)
    servers: np.ndarray = field(init=False, repr=False, compare=False)
    is_delay: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        stations = self.stations
        if isinstance(stations, Station):
            stations = (stations,)
        if not isinstance(stations, Sequence) or isinstance(stations, str):
            raise InvalidTypeError(
                f"stations must be a sequence of Station, got {type(stations).__name__}"
            )
        stations = tuple(stations)
        if not stations:
            raise InvalidModelError("stations is empty: a network needs at least one station")
        for i, s in enumerate(stations):
            if not isinstance(s, Station | ForkJoin):
                raise InvalidTypeError(
                    f"stations[{i}] must be a Station or ForkJoin, got {s!r} ({type(s).__name__})"
                )
        seen: set[str] = set()
        for s in stations:
            if s.name in seen:
                raise InvalidModelError(f"station names must be unique; {s.name!r} appears twice")
            seen.add(s.name)
        object.__setattr__(self, "stations", stations)
        object.__setattr__(self, "think_time", as_quantity(self.think_time, "think_time", "time"))
        object.__setattr__(
            self, "demands", _readonly(np.array([s.demand for s in stations], dtype=np.float64))
        )
        object.__setattr__(
            self, "servers", _readonly(np.array([s.servers for s in stations], dtype=np.int64))
        )
        object.__setattr__(
            self, "is_delay", _readonly(np.array([s.is_delay for s in stations], dtype=bool))
        )

    # -- constructors ---------------------------------------------------------------
    @classmethod
    def from_demands(
        cls,
        demands: Sequence[Any],
        think_time: float | str = 0.0,
        names: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        servers: Sequence[int] | None = None,
    ) -> Network:
        """Build a network from per-station demands (seconds or unit strings).

        ``names`` default to ``"s0", "s1", ...``; ``kinds`` to all ``"queue"``;
        ``servers`` to all 1. Each given sequence must have one entry per demand.
        """
        demands = _per_station(demands, "demands")
        if not demands:
            raise InvalidModelError("demands is empty: a network needs at least one station")
        k = len(demands)
        names = [f"s{i}" for i in range(k)] if names is None else _per_station(names, "names")
        kinds = ["queue"] * k if kinds is None else _per_station(kinds, "kinds")
        servers = [1] * k if servers is None else _per_station(servers, "servers")
        check_same_length("demands", demands, "names", names)
        check_same_length("demands", demands, "kinds", kinds)
        check_same_length("demands", demands, "servers", servers)
        return cls(
            tuple(
                Station(n, d, kind=kd, servers=m)
                for n, d, kd, m in zip(names, demands, kinds, servers, strict=True)
            ),
            think_time=think_time,
        )

    # -- derived quantities ---------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        """Station names in order."""
        return tuple(s.name for s in self.stations)

    @property
    def K(self) -> int:
        """Number of stations."""
        return len(self.stations)

    @property
    def total_demand(self) -> float:
        """D = sum of all demands (seconds): the response time of a lone job."""
        return float(self.demands.sum())

    @property
    def has_multiserver(self) -> bool:
        """True if any queueing station has more than one server."""
        return bool(np.any((self.servers > 1) & ~self.is_delay))

    def station(self, name: str) -> Station:
        """The station called ``name``."""
        for s in self.stations:
            if s.name == name:
                return s
        raise InvalidModelError(f"no station named {name!r}; stations are {list(self.names)}")

    def with_think_time(self, think_time: float | str) -> Network:
        """A copy with another think time."""
        return Network(self.stations, think_time=think_time)

    def __repr__(self) -> str:
        rows = ", ".join(
            f"{s.name}={s.demand:.6g}s"
            + ("(delay)" if s.is_delay else (f"(x{s.servers})" if s.servers > 1 else ""))
            for s in self.stations
        )
        return f"Network(K={self.K}, Z={self.think_time:.6g}s: {rows})"


# ==================================================================================
# Fork-join elements (issue 13). Self-contained block: the class, and the one helper
# that solvers without fork-join support call to refuse such a network.
# ==================================================================================


@dataclass(frozen=True)
class ForkJoin:
    """A fork-join element: a request forks into one sub-request per branch and joins.

    Usable wherever a :class:`Station` is, in ``Network(stations=[...])``. The request
    leaves when ``k`` of its ``n`` sub-requests have finished (``k = n``, the default,
    is a full-stripe read or write; ``k < n`` an erasure-coded read that needs any k
    of n fragments). The other ``n - k`` sub-requests are then cancelled, whether
    queued or in service, so with k < n a branch is busy for less than its demand
    per request.

    Parameters
    ----------
    name : str
        Unique, non-empty name within its network (e.g. ``"stripe"``).
    branches : sequence of Station
        At least one branch; each a queueing Station (``kind="queue"``, possibly
        multi-server) with a name unique within this element. Its ``demand`` is the
        service time of one sub-request. Identical or different branches.
    k : int, optional
        Sub-requests to wait for, 1 <= k <= n; default n.

    Attributes
    ----------
    n : int
        Number of branches.
    demand : float
        The largest branch demand D_max (s). :class:`Network` puts it in
        ``Network.demands``. For k = n every branch serves every sub-request, so
        by the utilisation law the busiest branch has utilisation X D_max and the
        bottleneck bound X <= 1 / D_max holds; for k < n cancellation shortens
        the busy time (``qnmodel.solvers.forkjoin.busy_per_request``). It is *not*
        the element's response time, even for one request: that is the mean of
        the k-th order statistic of the branch times (d H_n for n identical
        exponential branches of mean d and k = n).
    kind : str
        ``"forkjoin"``.

    Notes
    -----
    Solvers that do not model the join (``mva``, ``amva``, ``bounds``,
    ``mva_multiclass``) refuse a network holding a ForkJoin (:func:`refuse_forkjoin`);
    use :func:`qnmodel.fork_join`.

    Examples
    --------
    >>> fj = ForkJoin("stripe", [Station(f"m{i}", "5 ms") for i in range(4)])
    >>> fj.n, fj.k, fj.demand
    (4, 4, 0.005)
    """

    name: str
    branches: tuple[Station, ...]
    k: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise InvalidTypeError(
                f"ForkJoin name must be a string, got {self.name!r} ({type(self.name).__name__})"
            )
        if not self.name.strip():
            raise InvalidModelError("ForkJoin name must be a non-empty string, got ''")
        label = f"ForkJoin {self.name!r}"
        branches = self.branches
        if isinstance(branches, Station):
            branches = (branches,)
        if not isinstance(branches, Sequence) or isinstance(branches, str):
            raise InvalidTypeError(
                f"{label}: branches must be a sequence of Station, got {type(branches).__name__}"
            )
        branches = tuple(branches)
        if not branches:
            raise InvalidModelError(
                f"{label}: branches is empty; a fork-join needs at least one branch Station"
            )
        seen: set[str] = set()
        for i, b in enumerate(branches):
            if not isinstance(b, Station):
                raise InvalidTypeError(
                    f"{label}: branches[{i}] must be a Station, got {b!r} ({type(b).__name__})"
                )
            if b.kind != "queue":
                raise InvalidModelError(
                    f"{label}: branches[{i}] ({b.name!r}) is a {b.kind!r} station; every branch "
                    "must be a queueing station (kind='queue'): a delay branch never queues, "
                    "model it as a think time or a delay Station outside the fork"
                )
            if b.name in seen:
                raise InvalidModelError(
                    f"{label}: branch names must be unique; {b.name!r} appears twice"
                )
            seen.add(b.name)
        object.__setattr__(self, "branches", branches)
        n = len(branches)
        if self.k is None:
            k = n
        else:
            from ._validate import as_positive_int

            k = as_positive_int(self.k, f"{label}: k")
            if k > n:
                raise InvalidModelError(
                    f"{label}: k must be between 1 and the number of branches n = {n}, "
                    f"got k={self.k!r}"
                )
        object.__setattr__(self, "k", k)

    # Duck-typed like a Station so that Network builds its arrays unchanged.
    @property
    def n(self) -> int:
        """Number of branches."""
        return len(self.branches)

    @property
    def demand(self) -> float:
        """Largest branch demand D_max, seconds (see the class docstring)."""
        return max(float(b.demand) for b in self.branches)

    @property
    def branch_demands(self) -> np.ndarray:
        """Branch demands in branch order, seconds (a fresh float64 array)."""
        return np.array([b.demand for b in self.branches], dtype=np.float64)

    @property
    def kind(self) -> str:
        return "forkjoin"

    @property
    def servers(self) -> int:
        return 1

    @property
    def is_delay(self) -> bool:
        return False

    @property
    def rate_multipliers(self) -> None:
        return None

    def __repr__(self) -> str:
        rows = ", ".join(f"{b.name}={b.demand:.6g}s" for b in self.branches)
        join = "" if self.k == self.n else f", k={self.k}"
        return f"ForkJoin({self.name!r}, n={self.n}{join}: {rows})"


def refuse_forkjoin(net: Any, solver: str) -> None:
    """Raise InvalidModelError if ``net`` holds a fork-join element ``solver`` cannot solve.

    The one check the solvers without fork-join support call (``mva``, ``amva``,
    ``bounds``, ``mva_multiclass``). Duck-typed on ``.branches`` so that any network
    type with a ``stations`` sequence works.
    """
    for s in getattr(net, "stations", ()) or ():
        if hasattr(s, "branches"):
            raise InvalidModelError(
                f"{solver} cannot solve station {s.name!r}: it is a fork-join element "
                f"(n={len(s.branches)}, k={s.k}) and {solver} has no join; use "
                "qnmodel.fork_join(net, N) (approximate fork-join MVA) or simulate the network"
            )
