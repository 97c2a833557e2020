"""Immutable description of a multi-class network: closed and open classes.

A :class:`MultiClassNetwork` holds the stations (the same :class:`~qnmodel.model.network.Station`
objects as a single-class :class:`~qnmodel.model.network.Network`, with one demand per class) and
the classes:

* :class:`ClosedClass` -- a fixed population ``N`` of jobs that circulate, each thinking
  ``think_time`` between interactions (terminal workload, Lazowska et al. ch. 7);
* :class:`OpenClass` -- jobs that arrive from outside at ``arrival_rate`` (Poisson) and
  leave after their last station (transaction workload, Lazowska et al. ch. 6 and 7.5).

It is compiled once into flat arrays that the solvers consume: ``demands`` (C, K),
``servers`` and ``is_delay`` (K,), and per class ``is_open``, ``N``, ``think_time`` and
``arrival_rate`` (C,). Solvers take ``(network, N)`` for closed classes and
``(network, arrival_rate)`` for open ones; both default to the values stored in the classes.

>>> import qnmodel as qn
>>> net = qn.MultiClassNetwork(
...     [qn.Station("cpu", {"read": "2 ms", "write": "3 ms"}),
...      qn.Station("disk", {"read": "8 ms", "write": "12 ms"})],
...     [qn.ClosedClass("read", N=10, think_time="1 s"), qn.ClosedClass("write", N=4)],
... )
>>> net.demands.shape, net.N.tolist()
((2, 2), [10, 4])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validate import (
    as_choice,
    as_demand_matrix,
    as_named_items,
    as_populations,
    as_positive_int,
    as_quantity,
    as_servers,
)
from ..errors import InvalidModelError, InvalidTypeError
from .network import STATION_KINDS, Network, Station, check_stations, station_arrays

__all__ = ["ClosedClass", "OpenClass", "MultiClassNetwork"]


def _class_name(name: Any, what: str) -> str:
    if not isinstance(name, str):
        raise InvalidTypeError(f"{what} name must be a string, got {name!r}")
    if not name.strip():
        raise InvalidModelError(f"{what} name must be a non-empty string, got {name!r}")
    return name


@dataclass(frozen=True)
class ClosedClass:
    """A closed class: ``N`` jobs circulating, each thinking ``think_time`` between visits.

    Parameters
    ----------
    name : str
        Unique, non-empty class name.
    N : int
        Population, an integer >= 0 (a class with N = 0 is solved as one arriving job
        would see the others; solvers may be given another N at call time).
    think_time : float or str
        Z_c, seconds (>= 0), spent outside the stations; excluded from response time.
    """

    name: str
    N: int = 0
    think_time: float = 0.0

    def __post_init__(self) -> None:
        _class_name(self.name, "ClosedClass")
        label = f"ClosedClass {self.name!r}"
        object.__setattr__(self, "N", as_positive_int(self.N, f"{label}: N", 0))
        object.__setattr__(
            self, "think_time", as_quantity(self.think_time, f"{label}: think_time", "time")
        )

    @property
    def is_open(self) -> bool:
        return False

    @property
    def population(self) -> int:
        """The population N (alias)."""
        return self.N


@dataclass(frozen=True)
class OpenClass:
    """An open class: jobs arrive from outside at ``arrival_rate`` and leave when done.

    Parameters
    ----------
    name : str
        Unique, non-empty class name.
    arrival_rate : float or str
        lambda_c, jobs per second (>= 0): a number in 1/s or a string such as
        ``"40000/s"``, ``"40 kHz"`` or ``"4e4 IOPS"``.
    """

    name: str
    arrival_rate: float = 0.0

    def __post_init__(self) -> None:
        _class_name(self.name, "OpenClass")
        object.__setattr__(
            self,
            "arrival_rate",
            as_quantity(self.arrival_rate, f"OpenClass {self.name!r}: arrival_rate", "frequency"),
        )

    @property
    def is_open(self) -> bool:
        return True


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class MultiClassNetwork:
    """A queueing network with several classes, closed and/or open.

    Parameters
    ----------
    stations : sequence of Station
        At least one station, unique names. A station's demand is a mapping
        ``{class name: demand}`` (classes not named have demand 0 there: they do not
        visit it) or one value used by every class.
    classes : sequence of ClosedClass or OpenClass
        At least one class, unique names.

    Attributes
    ----------
    demands : ndarray (C, K)
        D_ck, seconds, read-only.
    servers : ndarray (K,) of int
    is_delay, is_load_dependent : ndarray (K,) of bool
    is_open : ndarray (C,) of bool
    N : ndarray (C,) of int
        Populations of the closed classes (0 for open classes).
    think_time : ndarray (C,)
        Z_c, seconds (0 for open classes).
    arrival_rate : ndarray (C,)
        lambda_c, 1/s (0 for closed classes).
    """

    stations: tuple[Station, ...]
    classes: tuple[ClosedClass | OpenClass, ...]
    demands: np.ndarray = field(init=False, repr=False, compare=False)
    servers: np.ndarray = field(init=False, repr=False, compare=False)
    is_delay: np.ndarray = field(init=False, repr=False, compare=False)
    is_load_dependent: np.ndarray = field(init=False, repr=False, compare=False)
    is_open: np.ndarray = field(init=False, repr=False, compare=False)
    N: np.ndarray = field(init=False, repr=False, compare=False)
    think_time: np.ndarray = field(init=False, repr=False, compare=False)
    arrival_rate: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        classes = as_named_items(
            self.classes, "classes", ClosedClass | OpenClass, "ClosedClass or OpenClass", "class"
        )
        cnames = [c.name for c in classes]
        stations = check_stations(self.stations)
        D = np.zeros((len(classes), len(stations)))
        index = {n: c for c, n in enumerate(cnames)}
        for k, s in enumerate(stations):
            if s.per_class:
                for cname, d in s.demand.items():
                    if cname not in index:
                        raise InvalidModelError(
                            f"Station {s.name!r}: demand names class {cname!r}, which is not "
                            f"one of the network's classes {cnames}"
                        )
                    D[index[cname], k] = d
            else:
                D[:, k] = s.demand
        closed = np.array([not c.is_open for c in classes])
        N = np.array([c.N if not c.is_open else 0 for c in classes], dtype=np.int64)
        Z = np.array([c.think_time if not c.is_open else 0.0 for c in classes])
        lam = np.array([c.arrival_rate if c.is_open else 0.0 for c in classes])
        stuck = closed & (N > 0) & (D.sum(axis=1) + Z <= 0)
        if stuck.any():
            c = int(np.flatnonzero(stuck)[0])
            raise InvalidModelError(
                f"class {cnames[c]!r} has zero demand everywhere and zero think time: its "
                "throughput is unbounded; give it a demand > 0 somewhere"
            )
        object.__setattr__(self, "stations", stations)
        object.__setattr__(self, "classes", classes)
        object.__setattr__(self, "demands", _readonly(D))
        servers, is_delay, is_ld = station_arrays(stations)
        object.__setattr__(self, "servers", servers)
        object.__setattr__(self, "is_delay", is_delay)
        object.__setattr__(self, "is_load_dependent", is_ld)
        object.__setattr__(self, "is_open", _readonly(~closed))
        object.__setattr__(self, "N", _readonly(N))
        object.__setattr__(self, "think_time", _readonly(Z))
        object.__setattr__(self, "arrival_rate", _readonly(lam))

    # -- constructors ---------------------------------------------------------------
    @classmethod
    def from_demands(
        cls,
        demands: Any,
        classes: Sequence[ClosedClass | OpenClass] | None = None,
        *,
        N: Any = None,
        think_time: Any = 0.0,
        names: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        servers: Sequence[int] | None = None,
    ) -> MultiClassNetwork:
        """Build a network from a C x K demand matrix (seconds or unit strings).

        Either give ``classes`` (one per row), or give ``N`` (one population per row)
        and ``think_time`` (one for all or one per row) to make closed classes named
        ``"c0", "c1", ...``. ``names`` default to ``"s0", "s1", ...``; ``kinds`` to all
        ``"queue"``; ``servers`` to all 1.
        """
        D = as_demand_matrix(demands)
        C, K = D.shape
        if classes is None:
            if N is None:
                raise InvalidModelError(
                    "give classes (ClosedClass/OpenClass, one per row of demands) or N "
                    "(one population per row)"
                )
            Ns = as_populations(N, "N")
            if Ns.size != C:
                raise InvalidModelError(
                    f"N has {Ns.size} entries but demands has {C} rows (classes): "
                    "give one population per class"
                )
            Z = _per_class_think_time(think_time, C)
            classes = [ClosedClass(f"c{c}", int(Ns[c]), float(Z[c])) for c in range(C)]
        else:
            if N is not None:
                raise InvalidModelError("give either classes or N, not both")
            classes = list(classes)
            if len(classes) != C:
                raise InvalidModelError(
                    f"classes has {len(classes)} entries but demands has {C} rows: "
                    "give one class per row"
                )
        names = _per_station_names(names, K)
        delay = _per_station_kinds(kinds, K)
        m = _per_station_servers(servers, K, delay)
        cnames = [c.name for c in classes]
        stations = [
            Station(
                names[k],
                {cnames[c]: float(D[c, k]) for c in range(C)},
                kind="delay" if delay[k] else "queue",
                servers=int(m[k]),
            )
            for k in range(K)
        ]
        return cls(tuple(stations), tuple(classes))

    # -- derived quantities ---------------------------------------------------------
    @property
    def K(self) -> int:
        """Number of stations."""
        return len(self.stations)

    @property
    def C(self) -> int:
        """Number of classes."""
        return len(self.classes)

    @property
    def names(self) -> tuple[str, ...]:
        """Station names in order."""
        return tuple(s.name for s in self.stations)

    @property
    def class_names(self) -> tuple[str, ...]:
        """Class names in order."""
        return tuple(c.name for c in self.classes)

    @property
    def population(self) -> np.ndarray:
        """Alias of :attr:`N`."""
        return self.N

    @property
    def closed_classes(self) -> np.ndarray:
        """Indices of the closed classes."""
        return np.flatnonzero(~self.is_open)

    @property
    def open_classes(self) -> np.ndarray:
        """Indices of the open classes."""
        return np.flatnonzero(self.is_open)

    def class_index(self, c: int | str) -> int:
        """Index of class ``c`` (a name or an index)."""
        if isinstance(c, str):
            try:
                return self.class_names.index(c)
            except ValueError:
                raise InvalidModelError(
                    f"no class named {c!r}; classes are {list(self.class_names)}"
                ) from None
        i = as_positive_int(c, "class index", 0)
        if i >= self.C:
            raise InvalidModelError(f"class index {c!r} out of range: there are {self.C}")
        return i

    def station(self, name: str) -> Station:
        """The station called ``name``."""
        for s in self.stations:
            if s.name == name:
                return s
        raise InvalidModelError(f"no station named {name!r}; stations are {list(self.names)}")

    # -- copies -----------------------------------------------------------------
    def with_population(self, N: Any) -> MultiClassNetwork:
        """A copy whose closed classes have populations ``N``.

        ``N`` has one entry per class (open classes' entries must be 0), or one per
        closed class, or is a mapping ``{class name: N}`` for some closed classes.
        """
        Ns = self.population_vector(N)
        classes = [
            c if c.is_open else ClosedClass(c.name, int(Ns[i]), c.think_time)
            for i, c in enumerate(self.classes)
        ]
        return MultiClassNetwork(self.stations, classes)

    def with_arrival_rate(self, rates: Any) -> MultiClassNetwork:
        """A copy whose open classes arrive at ``rates`` (1/s or unit strings).

        One entry per class (closed classes' entries must be 0), or one per open
        class, or a mapping ``{class name: rate}``.
        """
        lam = self.arrival_rate_vector(rates)
        classes = [
            OpenClass(c.name, float(lam[i])) if c.is_open else c for i, c in enumerate(self.classes)
        ]
        return MultiClassNetwork(self.stations, classes)

    def population_vector(self, N: Any = None, name: str = "N") -> np.ndarray:
        """Validated per-class populations (C,) int64; None gives the classes' own."""
        if N is None:
            return np.array(self.N)
        closed = self.closed_classes
        if isinstance(N, Mapping):
            out = np.array(self.N)
            for key, v in N.items():
                c = self.class_index(key)
                if self.is_open[c]:
                    raise InvalidModelError(
                        f"{name}[{key!r}]: class {self.class_names[c]!r} is open; give its "
                        "arrival_rate instead"
                    )
                out[c] = as_positive_int(v, f"{name}[{key!r}]", 0)
            return out
        Ns = as_populations(N, name)
        if Ns.size == self.C:
            bad = np.flatnonzero(self.is_open & (Ns != 0))
            if bad.size:
                c = int(bad[0])
                raise InvalidModelError(
                    f"{name}[{c}] = {int(Ns[c])} but class {self.class_names[c]!r} is open: "
                    "give 0 for open classes"
                )
            return Ns
        if Ns.size == closed.size:
            out = np.zeros(self.C, dtype=np.int64)
            out[closed] = Ns
            return out
        raise InvalidModelError(
            f"{name} has {Ns.size} entries but the network has {self.C} classes "
            f"({closed.size} closed): give one population per class"
        )

    def arrival_rate_vector(self, rates: Any = None, name: str = "arrival_rate") -> np.ndarray:
        """Validated per-class arrival rates (C,) in 1/s; None gives the classes' own."""
        if rates is None:
            return np.array(self.arrival_rate)
        opened = self.open_classes
        if isinstance(rates, Mapping):
            out = np.array(self.arrival_rate)
            for key, v in rates.items():
                c = self.class_index(key)
                if not self.is_open[c]:
                    raise InvalidModelError(
                        f"{name}[{key!r}]: class {self.class_names[c]!r} is closed; give its "
                        "population N instead"
                    )
                out[c] = as_quantity(v, f"{name}[{key!r}]", "frequency")
            return out
        if isinstance(rates, str) or np.isscalar(rates):
            rates = [rates]
        vals = [as_quantity(v, f"{name}[{i}]", "frequency") for i, v in enumerate(rates)]
        lam = np.array(vals, dtype=np.float64)
        if lam.size == self.C:
            bad = np.flatnonzero(~self.is_open & (lam != 0))
            if bad.size:
                c = int(bad[0])
                raise InvalidModelError(
                    f"{name}[{c}] = {lam[c]:g} but class {self.class_names[c]!r} is closed: "
                    "give 0 for closed classes"
                )
            return lam
        if lam.size == opened.size:
            out = np.zeros(self.C)
            out[opened] = lam
            return out
        raise InvalidModelError(
            f"{name} has {lam.size} entries but the network has {self.C} classes "
            f"({opened.size} open): give one arrival rate per class"
        )

    def class_network(self, c: int | str) -> Network:
        """Closed class ``c`` alone, as a single-class :class:`~qnmodel.model.network.Network`."""
        i = self.class_index(c)
        if self.is_open[i]:
            raise InvalidModelError(
                f"class {self.class_names[i]!r} is open; a Network describes one closed class"
            )
        stations = tuple(
            Station(s.name, float(self.demands[i, k]), s.kind, s.servers, s.rate_multipliers)
            for k, s in enumerate(self.stations)
        )
        return Network(stations, think_time=float(self.think_time[i]))

    def __repr__(self) -> str:
        cls = ", ".join(
            f"{c.name}(open, lambda={c.arrival_rate:.6g}/s)"
            if c.is_open
            else f"{c.name}(N={c.N}, Z={c.think_time:.6g}s)"
            for c in self.classes
        )
        return f"MultiClassNetwork(K={self.K}, C={self.C}: {cls}; stations {list(self.names)})"


def _per_class_think_time(think_time: Any, C: int) -> np.ndarray:
    if isinstance(think_time, str) or np.isscalar(think_time):
        return np.full(C, as_quantity(think_time, "think_time", "time"))
    zs = list(think_time)
    if len(zs) != C:
        raise InvalidModelError(
            f"think_time has {len(zs)} entries but there are {C} classes: "
            "give a scalar or one think time per class"
        )
    return np.array([as_quantity(z, f"think_time[{c}]", "time") for c, z in enumerate(zs)])


def _per_station_names(names: Any, K: int) -> tuple[str, ...]:
    if names is None:
        return tuple(f"s{k}" for k in range(K))
    names = tuple(names) if not isinstance(names, str) else (names,)
    if len(names) != K or not all(isinstance(s, str) and s for s in names):
        raise InvalidModelError(f"names must be {K} non-empty strings, got {names!r}")
    if len(set(names)) != K:
        raise InvalidModelError(f"names must be unique, got {names!r}")
    return names


def _per_station_kinds(kinds: Any, K: int) -> np.ndarray:
    if kinds is None:
        return np.zeros(K, dtype=bool)
    kinds = list(kinds) if not isinstance(kinds, str) else [kinds]
    if len(kinds) != K:
        raise InvalidModelError(
            f"kinds has {len(kinds)} entries but demands has {K} columns (stations)"
        )
    return np.array(
        [as_choice(kd, f"kinds[{k}]", STATION_KINDS) == "delay" for k, kd in enumerate(kinds)],
        dtype=bool,
    )


def _per_station_servers(servers: Any, K: int, delay: np.ndarray) -> np.ndarray:
    if servers is None:
        return np.ones(K, dtype=np.int64)
    ms = list(np.atleast_1d(servers))
    if len(ms) != K:
        raise InvalidModelError(
            f"servers has {len(ms)} entries but demands has {K} columns (stations)"
        )
    m = np.array([as_servers(v, f"servers[{k}]") for k, v in enumerate(ms)], dtype=np.int64)
    both = np.flatnonzero(delay & (m > 1))
    if both.size:
        k = int(both[0])
        raise InvalidModelError(
            f"servers[{k}] must be 1 for a delay station (it has infinitely many), got {int(m[k])}"
        )
    return m
