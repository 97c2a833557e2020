"""The one network type: stations and fork-join elements, and the classes that visit them.

``Network(stations, think_time=...)`` is a single-class model: one class whose population N
(closed) or arrival rate (open) a solver is given when called. ``Network(stations,
classes=[...])`` holds several classes, closed (:class:`~qnmodel.model.classes.ClosedClass`)
and/or open (:class:`~qnmodel.model.classes.OpenClass`); a station's demand is then one value
per class (a mapping). Both are compiled once into :attr:`Network.compiled`
(:class:`~qnmodel.model.compiled.Compiled`), the array form every solver and the simulator
read.

>>> import qnmodel as qn
>>> net = qn.Network(
...     [qn.Station("cpu", {"read": "2 ms", "write": "3 ms"}, discipline="PS"),
...      qn.Station("disk", {"read": "8 ms", "write": "12 ms"}, discipline="PS")],
...     classes=[qn.ClosedClass("read", N=10, think_time="1 s"), qn.ClosedClass("write", N=4)],
... )
>>> net.demands.shape, net.N.tolist()
((2, 2), [10, 4])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validate import (
    as_demand_matrix,
    as_named_items,
    as_populations,
    as_positive_int,
    as_quantity,
    as_servers,
    check_same_length,
)
from ..errors import InvalidModelError, InvalidTypeError
from ..units import format_quantity
from .classes import ClosedClass, OpenClass
from .compiled import Compiled, compile_network
from .forkjoin import ForkJoin
from .station import STATION_KINDS, Station

__all__ = ["Network", "SINGLE_CLASS"]

#: the name of the one class of a single-class network
SINGLE_CLASS = "class0"


def _per_station(values: Any, name: str) -> list[Any]:
    """A per-station sequence (list, tuple, array, pandas Series, ...) as a list; a string or
    a mapping is refused rather than iterated character by character or key by key."""
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise InvalidTypeError(
            f"{name} must be a sequence with one entry per station, got {type(values).__name__}"
        )
    return list(values)


@dataclass(frozen=True, eq=False)
class Network:
    """A queueing network: stations and fork-join elements, visited by one or several classes.

    Parameters
    ----------
    stations : sequence of Station or ForkJoin
        At least one element; names must be unique.
    think_time : float or str
        Single-class network: the terminal think time Z in seconds (>= 0), spent outside the
        stations; response time R excludes it and X = n / (R + Z). With ``classes``, each
        closed class has its own (leave this at 0).
    classes : sequence of ClosedClass or OpenClass, optional (keyword)
        Several classes (unique names). Without it the network has one class, closed or open
        as the solver is called (``mva(net, N)``, ``open_network(net, arrival_rate)``).
    routing : mapping, optional (keyword)
        Where a job goes when it leaves a node, with what probability: ``{station: {station:
        p}}`` without classes, ``{(class, station): {(class, station): p}}`` with them (class
        switching where the classes differ). ``"think"`` (or ``"source"``, ``"sink"``) is the
        node outside the stations: a closed class's cycle leaves from it and ends there, an
        open class enters from it and leaves to it. Stations then give their ``service_time``
        per visit; the visits come from the routing (:mod:`qnmodel.model.routing`). Without a
        routing each class visits the stations where it has demand, in order, once per
        cycle.

    Attributes
    ----------
    compiled : Compiled
        The array form every solver reads (built and validated once).
    demands : ndarray
        D in seconds: (K,) for a single-class network, (C, K) with classes.
    servers : ndarray (K,) of int
    is_delay, is_load_dependent : ndarray (K,) of bool
    names, class_names : tuple of str
    think_time : float or ndarray (C,)
        Z (single class) or Z_c per class (0 for open classes).
    N, arrival_rate, is_open : ndarray (C,)
        Per class (a single-class network: one closed class of population 0).
    """

    stations: tuple[Station | ForkJoin, ...]
    think_time: Any = 0.0
    classes: tuple[ClosedClass | OpenClass, ...] | None = field(default=None, kw_only=True)
    routing: Any = field(default=None, kw_only=True, repr=False)

    def __post_init__(self) -> None:
        stations = as_named_items(
            self.stations, "stations", (Station, ForkJoin), "Station or ForkJoin", "station"
        )
        object.__setattr__(self, "stations", stations)
        if self.classes is None:
            if isinstance(self.think_time, Sequence) and not isinstance(self.think_time, str):
                if any(isinstance(c, ClosedClass | OpenClass) for c in self.think_time):
                    raise InvalidTypeError(
                        "Network(stations, think_time, classes=...): give the classes by "
                        "keyword, classes=[...]"
                    )
            z = as_quantity(self.think_time, "think_time", "time")
            object.__setattr__(self, "think_time", z)
            for s in stations:
                if s.per_class if isinstance(s, Station) else s.per_class:
                    raise InvalidModelError(
                        f"{type(s).__name__} {s.name!r} has per-class demands; a network "
                        "without classes has one: give the classes, "
                        "Network(stations, classes=[ClosedClass(...), ...])"
                    )
            compiled = compile_network(stations, None, z, self.routing)
        else:
            if not (np.ndim(self.think_time) == 0 and self.think_time in (0, 0.0)):
                raise InvalidModelError(
                    f"think_time={self.think_time!r} with classes: each closed class has its "
                    "own think time (ClosedClass(name, N, think_time))"
                )
            classes = as_named_items(
                self.classes, "classes", ClosedClass | OpenClass, "ClosedClass or OpenClass",
                "class",
            )  # fmt: skip
            object.__setattr__(self, "classes", classes)
            compiled = compile_network(stations, classes, 0.0, self.routing)
            object.__setattr__(self, "think_time", compiled.Z)
        object.__setattr__(self, "compiled", compiled)

    compiled: Compiled = field(init=False, repr=False)

    # -- constructors ---------------------------------------------------------------
    @classmethod
    def from_demands(
        cls,
        demands: Any,
        think_time: Any = 0.0,
        names: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        servers: Sequence[int] | None = None,
        *,
        classes: Sequence[ClosedClass | OpenClass] | None = None,
        N: Any = None,
        disciplines: Sequence[str] | None = None,
    ) -> Network:
        """Build a network from demands (seconds or unit strings).

        A sequence of K demands is a single-class network (with ``think_time``). A C x K
        matrix is a network of C classes: give ``classes`` (one per row), or ``N`` (one
        population per row) and ``think_time`` (one for all, or one per row) for closed
        classes named ``"c0", "c1", ...``. ``names`` default to ``"s0", "s1", ...``,
        ``kinds`` to all ``"queue"``, ``servers`` to all 1, ``disciplines`` to FCFS queues
        and IS delays.
        """
        if classes is not None or N is not None or np.ndim(_plain(demands)) == 2:
            return _from_matrix(demands, classes, N, think_time, names, kinds, servers,
                                disciplines)  # fmt: skip
        demands = _per_station(demands, "demands")
        if not demands:
            raise InvalidModelError("demands is empty: a network needs at least one station")
        k = len(demands)
        cols = _columns(k, names, kinds, servers, disciplines)
        return cls(
            tuple(Station(n, d, kind=kd, servers=m, discipline=ds)
                  for d, (n, kd, m, ds) in zip(demands, cols, strict=True)),
            think_time=think_time,
        )  # fmt: skip

    # -- the compiled arrays, as attributes ------------------------------------------
    @property
    def single(self) -> bool:
        """True for a network without classes (one class, closed or open when solved)."""
        return self.classes is None

    @property
    def demands(self) -> np.ndarray:
        """D, seconds: (K,) for a single-class network, (C, K) with classes (read-only)."""
        D = self.compiled.D
        return D[0] if self.single else D

    @property
    def servers(self) -> np.ndarray:
        return self.compiled.servers

    @property
    def is_delay(self) -> np.ndarray:
        return self.compiled.is_delay

    @property
    def is_load_dependent(self) -> np.ndarray:
        return self.compiled.is_ld

    @property
    def names(self) -> tuple[str, ...]:
        """Element (station and fork-join) names in order."""
        return self.compiled.station_names

    @property
    def K(self) -> int:
        """Number of elements (a fork-join counts as one)."""
        return len(self.stations)

    @property
    def C(self) -> int:
        """Number of classes (1 without classes)."""
        return self.compiled.C

    @property
    def class_names(self) -> tuple[str, ...]:
        return self.compiled.class_names

    @property
    def is_open(self) -> np.ndarray:
        return self.compiled.is_open

    @property
    def N(self) -> np.ndarray:
        """Populations of the closed classes (C,) (0 for open classes)."""
        return self.compiled.N

    @property
    def population(self) -> np.ndarray:
        """Alias of :attr:`N`."""
        return self.compiled.N

    @property
    def arrival_rate(self) -> np.ndarray:
        """lambda_c (C,), 1/s (0 for closed classes)."""
        return self.compiled.arrival_rate

    @property
    def closed_classes(self) -> np.ndarray:
        """Indices of the closed classes."""
        return np.flatnonzero(~self.compiled.is_open)

    @property
    def open_classes(self) -> np.ndarray:
        """Indices of the open classes."""
        return np.flatnonzero(self.compiled.is_open)

    @property
    def total_demand(self) -> float:
        """D = sum of all demands (seconds) of a single-class network: a lone job's R."""
        return float(self.demands.sum()) if self.single else float(self.compiled.D.sum())

    @property
    def has_multiserver(self) -> bool:
        """True if any queueing station has more than one server."""
        return bool(np.any((self.servers > 1) & ~self.is_delay))

    @property
    def rate_multipliers(self) -> tuple[np.ndarray | None, ...]:
        """Per element: its general rate curve (read-only float64 array) or None."""
        return self.compiled.rates

    def rate_table(self, N: int) -> np.ndarray:
        """r_k(j) for j = 1..N, shape (K, N): every station's rate multiplier (1 at a single
        server, min(j, m) at m servers, j at a delay, the curve (last value holding) at a
        general load-dependent station). The service rate with j jobs is r_k(j) / D_k."""
        return self.compiled.rate_table(as_positive_int(N, "N"))

    # -- look-ups -------------------------------------------------------------------
    def station(self, name: str) -> Station | ForkJoin:
        """The element called ``name``."""
        for s in self.stations:
            if s.name == name:
                return s
        raise InvalidModelError(f"no station named {name!r}; stations are {list(self.names)}")

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

    # -- copies -------------------------------------------------------------------
    def with_think_time(self, think_time: float | str) -> Network:
        """A copy of a single-class network with another think time."""
        if not self.single:
            raise InvalidModelError(
                "with_think_time: each class has its own think time; use with_population or "
                "build the classes again"
            )
        return Network(self.stations, think_time=think_time)

    def with_population(self, N: Any) -> Network:
        """A copy whose closed classes have populations ``N`` (one per class, one per
        closed class, or a mapping ``{class name: N}``)."""
        if self.single:
            raise InvalidModelError(
                "with_population: a single-class network takes its population when solved "
                "(mva(net, N))"
            )
        Ns = self.population_vector(N)
        classes = [
            c if c.is_open else ClosedClass(c.name, int(Ns[i]), c.think_time, c.priority)
            for i, c in enumerate(self.classes)
        ]
        return Network(self.stations, classes=classes)

    def with_arrival_rate(self, rates: Any) -> Network:
        """A copy whose open classes arrive at ``rates`` (1/s or unit strings): one per class,
        one per open class, or a mapping ``{class name: rate}``."""
        if self.single:
            raise InvalidModelError(
                "with_arrival_rate: a single-class network takes its arrival rate when solved "
                "(open_network(net, arrival_rate))"
            )
        lam = self.arrival_rate_vector(rates)
        classes = [
            OpenClass(c.name, float(lam[i]), c.priority) if c.is_open else c
            for i, c in enumerate(self.classes)
        ]
        return Network(self.stations, classes=classes)

    def population_vector(self, N: Any = None, name: str = "N") -> np.ndarray:
        """Validated per-class populations (C,) int64; None gives the classes' own."""
        return self.compiled.population_vector(N, name)

    def arrival_rate_vector(self, rates: Any = None, name: str = "arrival_rate") -> np.ndarray:
        """Validated per-class arrival rates (C,) in 1/s; None gives the classes' own."""
        return self.compiled.arrival_rate_vector(rates, name)

    def class_network(self, c: int | str) -> Network:
        """Closed class ``c`` alone, as a single-class network (its demands, its think time)."""
        i = self.class_index(c)
        if self.compiled.is_open[i]:
            raise InvalidModelError(
                f"class {self.class_names[i]!r} is open; class_network takes a closed class"
            )
        name = self.class_names[i]
        return Network(
            tuple(_one_class(s, name) for s in self.stations),
            think_time=float(self.compiled.Z[i]),
        )

    def as_multiclass(self, class_name: str = SINGLE_CLASS, N: int = 0) -> Network:
        """This single-class network with its one class named: a closed class of population
        ``N`` and this network's think time."""
        if not self.single:
            return self
        stations = tuple(_named_class(s, class_name) for s in self.stations)
        return Network(stations, classes=[ClosedClass(class_name, N, self.think_time)])

    # -- identity: value semantics (the compiled form follows from these) ------------------
    def _key(self) -> tuple:
        return (self.stations, self.classes, self.think_time if self.single else None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Network):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        rows = ", ".join(repr(s) for s in self.stations)
        if self.single:
            return f"Network(K={self.K}, Z={format_quantity(self.think_time, 'time')}: {rows})"
        cls = ", ".join(
            f"{c.name}(open, lambda={c.arrival_rate:.6g}/s)"
            if c.is_open
            else f"{c.name}(N={c.N}, Z={format_quantity(c.think_time, 'time')})"
            for c in self.classes
        )
        return f"Network(K={self.K}, C={self.C}: {cls}; {rows})"


# -- helpers ------------------------------------------------------------------------------
def _plain(demands: Any) -> Any:
    """Demands as an array for shape checks only (strings stay objects)."""
    try:
        return np.asarray(demands, dtype=object)
    except (TypeError, ValueError):
        return demands


def _columns(K: int, names, kinds, servers, disciplines):
    names = [f"s{i}" for i in range(K)] if names is None else _per_station(names, "names")
    kinds = [None] * K if kinds is None else _per_station(kinds, "kinds")
    servers = [1] * K if servers is None else _per_station(servers, "servers")
    disc = [None] * K if disciplines is None else _per_station(disciplines, "disciplines")
    for label, seq in (("names", names), ("kinds", kinds), ("servers", servers),
                       ("disciplines", disc)):  # fmt: skip
        check_same_length("demands", [None] * K, label, seq)
    for k, kd in enumerate(kinds):
        if kd is not None and kd not in STATION_KINDS:
            raise InvalidModelError(
                f"kinds[{k}] must be one of {', '.join(map(repr, STATION_KINDS))}; got {kd!r}"
            )
    for k, m in enumerate(servers):
        as_servers(m, f"servers[{k}]")
    return list(zip(names, kinds, servers, disc, strict=True))


def _from_matrix(demands, classes, N, think_time, names, kinds, servers, disciplines):
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
        if not (np.ndim(think_time) == 0 and think_time in (0, 0.0)):
            raise InvalidModelError(
                "think_time with classes: each closed class has its own think time"
            )
        classes = list(classes)
        if len(classes) != C:
            raise InvalidModelError(
                f"classes has {len(classes)} entries but demands has {C} rows: "
                "give one class per row"
            )
    cnames = [c.name for c in classes]
    stations = [
        Station(n, {cnames[c]: float(D[c, k]) for c in range(C)}, kind=kd, servers=m,
                discipline=ds)
        for k, (n, kd, m, ds) in enumerate(_columns(K, names, kinds, servers, disciplines))
    ]  # fmt: skip
    return Network(tuple(stations), classes=tuple(classes))


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


def _one_class(s: Station | ForkJoin, name: str) -> Station | ForkJoin:
    """An element with class ``name``'s demand and SCV only (single-class)."""
    if isinstance(s, ForkJoin):
        return ForkJoin(s.name, tuple(_one_class(b, name) for b in s.branches), s.k, s.cancel,
                        s.fanout)  # fmt: skip
    return Station(s.name, s.demand_of(name), servers=s.servers, discipline=s.discipline,
                   rate_multipliers=s.rate_multipliers, capacity=s.capacity,
                   **_law_of(s, name))  # fmt: skip


def _named_class(s: Station | ForkJoin, name: str) -> Station | ForkJoin:
    """A single-class element whose demand becomes ``{name: demand}``."""
    if isinstance(s, ForkJoin):
        return ForkJoin(s.name, tuple(_named_class(b, name) for b in s.branches), s.k,
                        s.cancel, s.fanout)  # fmt: skip
    return Station(s.name, {name: s.demand}, servers=s.servers, discipline=s.discipline,
                   rate_multipliers=s.rate_multipliers, capacity=s.capacity,
                   **_law_of(s, None))  # fmt: skip


def _law_of(s: Station, name: str | None) -> dict:
    if s.service is not None:
        return {"service": s.service}
    return {"scv": s.scv_of(name)}
