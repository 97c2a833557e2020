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

A queueing station may instead be *load-dependent* with a general rate curve
(``rate_multipliers``): with ``j`` jobs present it serves at
``r(j) / D`` where ``r(j) = rate_multipliers[min(j, L) - 1]``; a multi-server
station is the special case ``r(j) = min(j, m)``.

Several classes (closed or open) are described by
:class:`~qnmodel.model.multiclass.MultiClassNetwork`, whose stations carry one demand
per class (``Station("disk", {"read": "5 ms", "write": "8 ms"})``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from .._validate import (
    as_choice,
    as_named_items,
    as_quantity,
    as_rate_multipliers,
    as_servers,
    check_same_length,
)
from ..errors import InvalidModelError, InvalidTypeError

__all__ = [
    "Station",
    "Network",
    "STATION_KINDS",
    "check_stations",
    "station_arrays",
    "ForkJoin",
    "refuse_forkjoin",
]

STATION_KINDS = ("queue", "delay")


@dataclass(frozen=True)
class Station:
    """One service centre of a queueing network.

    Parameters
    ----------
    name : str
        Unique, non-empty name within its network (e.g. ``"disk"``).
    demand : float, str or mapping
        Service demand D_k = V_k * S_k, total service time a job needs at this
        station per interaction, in **seconds**; a string must carry a time
        unit (``"4.9 ms"``). Must be finite and >= 0. In a
        :class:`~qnmodel.model.multiclass.MultiClassNetwork` it may be a mapping
        ``{class name: demand}`` (classes not named have demand 0 here); a plain
        value there is the demand of every class.
    kind : {"queue", "delay"}
        Queueing station (jobs wait for a server) or delay (infinite-server).
    servers : int
        Number of identical servers of a ``"queue"`` station (>= 1). Leave at 1
        for a delay station.
    rate_multipliers : sequence of float, optional
        General load-dependent service: with j jobs present the station serves
        at ``rate_multipliers[min(j, L) - 1] / D`` (the last value holds beyond
        the curve). Finite and > 0; only for a single-server ``"queue"``
        station (``servers=m`` is the special case ``min(j, m)``). Typically
        fitted from a queue-depth sweep (NVMe, disks with command queueing).
    """

    name: str
    demand: Any
    kind: str = "queue"
    servers: int = 1
    rate_multipliers: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise InvalidTypeError(
                f"Station name must be a string, got {self.name!r} ({type(self.name).__name__})"
            )
        if not self.name.strip():
            raise InvalidModelError("Station name must be a non-empty string, got ''")
        label = f"Station {self.name!r}"
        if isinstance(self.demand, Mapping):
            per_class = {}
            for cls, d in self.demand.items():
                if not isinstance(cls, str) or not cls:
                    raise InvalidTypeError(
                        f"{label}: demand keys must be class names (non-empty strings), got {cls!r}"
                    )
                per_class[cls] = as_quantity(d, f"{label}: demand[{cls!r}]", "time")
            if not per_class:
                raise InvalidModelError(
                    f"{label}: demand is an empty mapping; give {{class name: demand}}"
                )
            object.__setattr__(self, "demand", MappingProxyType(per_class))
        else:
            object.__setattr__(self, "demand", as_quantity(self.demand, f"{label}: demand", "time"))
        as_choice(self.kind, f"{label}: kind", STATION_KINDS)
        servers = as_servers(self.servers, f"{label}: servers")
        if self.kind == "delay" and servers != 1:
            raise InvalidModelError(
                f"{label}: servers must be 1 for a delay station (it has infinitely many), "
                f"got {self.servers!r}"
            )
        object.__setattr__(self, "servers", servers)
        if self.rate_multipliers is not None:
            if self.kind == "delay":
                raise InvalidModelError(
                    f"{label}: rate_multipliers apply to a queueing station; a delay station "
                    "already serves every job at once"
                )
            if servers != 1:
                raise InvalidModelError(
                    f"{label}: give either servers={servers} or rate_multipliers, not both "
                    f"(m servers are rate_multipliers=[1, 2, ..., m])"
                )
            r = as_rate_multipliers(self.rate_multipliers, f"{label}: rate_multipliers")
            r.setflags(write=False)
            object.__setattr__(self, "rate_multipliers", r)

    def __hash__(self) -> int:
        r = None if self.rate_multipliers is None else tuple(self.rate_multipliers.tolist())
        d = tuple(sorted(self.demand.items())) if self.per_class else self.demand
        return hash((self.name, d, self.kind, self.servers, r))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Station):
            return NotImplemented
        return (
            self.name == other.name
            and self.kind == other.kind
            and self.servers == other.servers
            and (dict(self.demand) if self.per_class else self.demand)
            == (dict(other.demand) if other.per_class else other.demand)
            and _same_curve(self.rate_multipliers, other.rate_multipliers)
        )

    @property
    def is_delay(self) -> bool:
        """True for an infinite-server station."""
        return self.kind == "delay"

    @property
    def per_class(self) -> bool:
        """True when the demand is a mapping {class name: seconds}."""
        return isinstance(self.demand, Mapping)

    @property
    def is_load_dependent(self) -> bool:
        """True when the station has a general rate curve (``rate_multipliers``)."""
        return self.rate_multipliers is not None

    def rate_multiplier(self, jobs: Any) -> np.ndarray:
        """r(j): service-rate multiplier with j jobs present (j >= 1), as float64.

        1 for a single server, ``min(j, m)`` for m servers, ``j`` for a delay
        station, ``rate_multipliers[min(j, L) - 1]`` for a general curve.
        """
        j = np.asarray(jobs, dtype=np.int64)
        if np.any(j < 1):
            raise InvalidModelError(f"jobs must be >= 1, got {jobs!r}")
        if self.is_delay:
            return j.astype(np.float64)
        if self.rate_multipliers is not None:
            r = self.rate_multipliers
            return r[np.minimum(j, r.size) - 1]
        return np.minimum(j, self.servers).astype(np.float64)


def _same_curve(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool(np.array_equal(a, b))


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


def check_stations(stations: Any) -> tuple[Station, ...]:
    """The stations of a network as a tuple: a non-empty sequence of Station, unique names."""
    return as_named_items(stations, "stations", (Station, ForkJoin), "Station", "station")


def station_arrays(stations: Sequence[Station]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Read-only (servers int64, is_delay bool, is_load_dependent bool), each (K,)."""
    return (
        _readonly(np.array([s.servers for s in stations], dtype=np.int64)),
        _readonly(np.array([s.is_delay for s in stations], dtype=bool)),
        _readonly(np.array([s.is_load_dependent for s in stations], dtype=bool)),
    )


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
    is_load_dependent : ndarray (K,) of bool
        Which stations have a general rate curve (``rate_multipliers``).
    names : tuple of str
        Station names.
    """

    stations: tuple[Station, ...]
    think_time: float = 0.0
    demands: np.ndarray = field(init=False, repr=False, compare=False)
    servers: np.ndarray = field(init=False, repr=False, compare=False)
    is_delay: np.ndarray = field(init=False, repr=False, compare=False)
    is_load_dependent: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        stations = check_stations(self.stations)
        for s in stations:
            if s.per_class:
                raise InvalidModelError(
                    f"Station {s.name!r} has per-class demands {dict(s.demand)}; a Network has "
                    "one class: use qnmodel.MultiClassNetwork for several classes"
                )
        object.__setattr__(self, "stations", stations)
        object.__setattr__(self, "think_time", as_quantity(self.think_time, "think_time", "time"))
        object.__setattr__(
            self, "demands", _readonly(np.array([s.demand for s in stations], dtype=np.float64))
        )
        servers, is_delay, is_ld = station_arrays(stations)
        object.__setattr__(self, "servers", servers)
        object.__setattr__(self, "is_delay", is_delay)
        object.__setattr__(self, "is_load_dependent", is_ld)

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

    @property
    def rate_multipliers(self) -> tuple[np.ndarray | None, ...]:
        """Per station: its general rate curve (read-only float64 array) or None."""
        return tuple(s.rate_multipliers for s in self.stations)

    def rate_table(self, N: int) -> np.ndarray:
        """r_k(j) for j = 1..N, shape (K, N): every station's rate multiplier.

        1 at single-server queues, ``min(j, m)`` at m servers, ``j`` at delay
        stations, the given curve (last value holding) at general
        load-dependent stations. The service rate with j jobs is r_k(j) / D_k.
        """
        j = np.arange(1, int(N) + 1)
        return np.vstack([s.rate_multiplier(j) for s in self.stations])

    def as_multiclass(self, class_name: str = "class0", N: int = 0) -> Any:
        """This network as a one-class :class:`~qnmodel.model.multiclass.MultiClassNetwork`.

        The class is closed, with population ``N`` and this network's think time.
        """
        from .multiclass import ClosedClass, MultiClassNetwork

        return MultiClassNetwork(
            self.stations, [ClosedClass(class_name, N=N, think_time=self.think_time)]
        )

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
        rows = ", ".join(f"{s.name}={s.demand:.6g}s" + _kind_tag(s) for s in self.stations)
        return f"Network(K={self.K}, Z={self.think_time:.6g}s: {rows})"


def _kind_tag(s: Station) -> str:
    """``(delay)``, ``(x4)`` or ``(ld)`` after a station's demand in a repr."""
    if s.is_delay:
        return "(delay)"
    if s.is_load_dependent:
        return "(ld)"
    return f"(x{s.servers})" if s.servers > 1 else ""


# The fork-join element lives in its own module (it builds on Station); re-exported here,
# where users and solvers have always imported it from.
from .forkjoin import ForkJoin, refuse_forkjoin  # noqa: E402
