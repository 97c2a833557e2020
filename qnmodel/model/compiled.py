"""The one compiled form of a network: arrays and flags, built and validated once.

:class:`Compiled` is what every solver, the simulator and the model-exchange writers read:
per element (station or fork-join, K of them) and per class (C of them), with every derived
fact (a delay, a multi-server, a class-dependent FCFS service, a fork-join column, ...)
computed here once. :attr:`Compiled.features` names the features a model uses and where, which
the solvers compare with what they declare to solve (:mod:`qnmodel.solvers.support`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_populations, as_positive_int, as_quantity
from ..errors import InvalidModelError
from .classes import ClosedClass, OpenClass
from .forkjoin import ForkJoin
from .laws import Exponential, law_for_scv
from .routing import compile_routing
from .station import PRIORITY_DISCIPLINES, Station

__all__ = ["Compiled", "compile_network", "FEATURES"]

#: the features a model can use, as solvers name them in their refusals
FEATURES = {
    "open": "open classes",
    "closed": "closed classes",
    "multiclass": "several classes",
    "delay": "delay (IS) stations",
    "multiserver": "multi-server stations",
    "load_dependent": "load-dependent stations (rate curves)",
    "ps": "processor-sharing (PS) stations",
    "lcfs_pr": "LCFS-PR stations",
    "fcfs_class_dependent": "FCFS stations whose classes have different service times",
    "non_exponential": "non-exponential service (SCV != 1) at FCFS stations",
    "priority": "priority scheduling (HOL, PRIO-PR)",
    "finite_capacity": "finite capacity (a station's capacity)",
    "forkjoin": "fork-join elements",
    "class_switching": "class switching (classes that turn into each other: one chain)",
}


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Compiled:
    """A network as arrays (read-only). K elements, C classes.

    Attributes
    ----------
    station_names : tuple of str (K,)
    class_names : tuple of str (C,)
    single : bool
        The network has no classes (one class, closed or open when solved).
    D : ndarray (C, K)
        Demands D_ck, seconds (a fork-join column: its busiest branch's busy time per request).
    V : ndarray (C, K)
        Visits per interaction (1 where only a demand was given and it is > 0).
    S : ndarray (C, K)
        Mean service time per visit, D / V (0 where a class does not visit).
    scv : ndarray (C, K)
        Squared coefficient of variation of the service time per visit.
    laws : tuple of tuple (K, C)
        The service-time law each class draws at each station (for the simulator).
    discipline : tuple of str (K,)
        ``"FCFS"``, ``"PS"``, ``"LCFS-PR"``, ``"IS"``, ``"HOL"``, ``"PRIO-PR"``, or
        ``"forkjoin"`` for a fork-join column.
    is_delay, is_ld, is_forkjoin : ndarray (K,) of bool
    servers : ndarray (K,) of int
        Servers (1 for delays, general load-dependent stations and fork-joins).
    rates : tuple (K,)
        The rate curve of a general load-dependent station, else None.
    capacity : ndarray (K,) of int
        Jobs a station holds at most; 0 is unlimited.
    forkjoins : tuple (K,)
        The :class:`ForkJoin` of a fork-join column, else None.
    is_open : ndarray (C,) of bool
    N : ndarray (C,) of int
        Populations of the closed classes (0 for open ones).
    Z : ndarray (C,)
        Think times of the closed classes, s.
    arrival_rate : ndarray (C,)
        lambda_c of the open classes, 1/s.
    priority : ndarray (C,) of int
        Priority levels (a smaller number is served first).
    routing : ndarray (C, K + 1, C, K + 1) or None
        With a routing: M[r, i, s, j], the probability that a class-r job leaving node i goes
        to node j as class s; node K is the outside (a closed class's terminals, an open
        class's source and sink). None: each class visits the stations where it has demand,
        in order, once per cycle.
    chains : ndarray (C,) of int or None
        With a routing: the chain of each class (classes that switch into each other share
        one; -1 for a class no job stays in).
    outside_visits : ndarray (C,) or None
        With a routing: visits of each class to the outside node per chain cycle (the
        classes of a chain sum to 1); a closed class thinks Z_c at each.
    features : dict of str -> tuple of str
        Each feature of :data:`FEATURES` the model uses, with the elements or classes that use
        it. Open and closed classes of a single-class network are decided when it is solved.
    """

    station_names: tuple[str, ...]
    class_names: tuple[str, ...]
    single: bool
    D: np.ndarray
    V: np.ndarray
    S: np.ndarray
    scv: np.ndarray
    laws: tuple
    discipline: tuple[str, ...]
    is_delay: np.ndarray
    is_ld: np.ndarray
    is_forkjoin: np.ndarray
    servers: np.ndarray
    rates: tuple
    capacity: np.ndarray
    forkjoins: tuple
    is_open: np.ndarray
    N: np.ndarray
    Z: np.ndarray
    arrival_rate: np.ndarray
    priority: np.ndarray
    features: Mapping[str, tuple[str, ...]]
    routing: np.ndarray | None = None
    chains: np.ndarray | None = None
    outside_visits: np.ndarray | None = None

    @property
    def C(self) -> int:
        return len(self.class_names)

    @property
    def K(self) -> int:
        return len(self.station_names)

    def rate_table(self, N: int) -> np.ndarray:
        """r_k(j) for j = 1..N, shape (K, N) (see :meth:`Station.rate_multiplier`); a
        fork-join column is 1."""
        j = np.arange(1, int(N) + 1, dtype=np.float64)
        out = np.empty((self.K, j.size))
        for k in range(self.K):
            if self.is_delay[k]:
                out[k] = j
            elif self.rates[k] is not None:
                r = self.rates[k]
                out[k] = r[np.minimum(j.astype(np.int64), r.size) - 1]
            else:
                out[k] = np.minimum(j, self.servers[k])
        return out

    def uses(self, feature: str) -> bool:
        """True when the model uses ``feature`` (a key of :data:`FEATURES`)."""
        return feature in self.features

    # -- per-class vectors given at call time ----------------------------------------------
    def population_vector(self, N: Any = None, name: str = "N") -> np.ndarray:
        """Validated per-class populations (C,) int64; None gives the classes' own. ``N`` has
        one entry per class (0 for open classes), one per closed class, or is a mapping."""
        if N is None:
            return np.array(self.N)
        closed = np.flatnonzero(~self.is_open)
        if isinstance(N, Mapping):
            out = np.array(self.N)
            for key, v in N.items():
                c = self._index(key)
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
        """Validated per-class arrival rates (C,) in 1/s; None gives the classes' own. One
        entry per class (0 for closed classes), one per open class, or a mapping."""
        if rates is None:
            return np.array(self.arrival_rate)
        opened = np.flatnonzero(self.is_open)
        if isinstance(rates, Mapping):
            out = np.array(self.arrival_rate)
            for key, v in rates.items():
                c = self._index(key)
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

    def _index(self, key: Any) -> int:
        if isinstance(key, str):
            if key not in self.class_names:
                raise InvalidModelError(
                    f"no class named {key!r}; classes are {list(self.class_names)}"
                )
            return self.class_names.index(key)
        i = as_positive_int(key, "class index", 0)
        if i >= self.C:
            raise InvalidModelError(f"class index {key!r} out of range: there are {self.C}")
        return i


def compile_network(
    elements: Sequence[Station | ForkJoin],
    classes: Sequence[ClosedClass | OpenClass] | None,
    think_time: float,
    routing: Any = None,
) -> Compiled:
    """The compiled form of validated elements and classes (``classes=None``: one class),
    and of a routing (:func:`qnmodel.model.routing.compile_routing`) when one is given."""
    single = classes is None
    cnames = ("class0",) if single else tuple(c.name for c in classes)
    index = {n: c for c, n in enumerate(cnames)}
    C, K = len(cnames), len(elements)
    D = np.zeros((C, K))
    V = np.zeros((C, K))
    scv = np.ones((C, K))
    laws: list[tuple] = []
    disc: list[str] = []
    servers = np.ones(K, dtype=np.int64)
    capacity = np.zeros(K, dtype=np.int64)
    rates: list = []
    fjs: list = []
    for k, el in enumerate(elements):
        if isinstance(el, ForkJoin):
            _check_class_names(el, [b for b in el.branches], index, cnames)
            busy = el.busy_demand
            for c, name in enumerate(cnames):
                D[c, k] = busy.get(name, 0.0) if isinstance(busy, Mapping) else busy
            V[:, k] = (D[:, k] > 0).astype(np.float64)
            disc.append("forkjoin")
            rates.append(None)
            fjs.append(el)
            laws.append(tuple(Exponential() for _ in cnames))
            continue
        _check_class_names(el, [el], index, cnames)
        for c, name in enumerate(cnames):
            cls = None if single else name
            D[c, k] = el.demand_of(cls)
            V[c, k] = el.visits_of(cls)
            scv[c, k] = el.scv_of(cls)
        law = el.law
        laws.append(tuple(law if law is not None else law_for_scv(scv[c, k]) for c in range(C)))
        disc.append(el.discipline)
        servers[k] = el.servers
        capacity[k] = el.capacity or 0
        rates.append(el.rate_multipliers)
        fjs.append(None)
    M = chains = outside = None
    if routing is not None:
        M, Vfull, chains = _routed(elements, cnames, single, routing, classes)
        V, outside = Vfull[:, :-1], Vfull[:, -1]
        for k, el in enumerate(elements):
            for c, name in enumerate(cnames):
                D[c, k] = V[c, k] * el.service_time_of(None if single else name)
    S = np.divide(D, V, out=np.zeros_like(D), where=V > 0)
    if single:
        is_open = np.zeros(1, dtype=bool)
        N = np.zeros(1, dtype=np.int64)
        Z = np.array([float(think_time)])
        lam = np.zeros(1)
        prio = np.zeros(1, dtype=np.int64)
    else:
        is_open = np.array([c.is_open for c in classes])
        N = np.array([0 if c.is_open else c.N for c in classes], dtype=np.int64)
        Z = np.array([0.0 if c.is_open else c.think_time for c in classes])
        lam = np.array([c.arrival_rate if c.is_open else 0.0 for c in classes])
        prio = np.array([c.priority for c in classes], dtype=np.int64)
        stuck = ~is_open & (N > 0) & (D.sum(axis=1) + Z <= 0)
        if stuck.any():
            c = int(np.flatnonzero(stuck)[0])
            raise InvalidModelError(
                f"class {cnames[c]!r} has zero demand everywhere and zero think time: its "
                "throughput is unbounded; give it a demand > 0 somewhere"
            )
    is_delay = np.array([d == "IS" for d in disc], dtype=bool)
    is_fj = np.array([d == "forkjoin" for d in disc], dtype=bool)
    is_ld = np.array([r is not None for r in rates], dtype=bool)
    names = tuple(el.name for el in elements)
    features = _features(names, cnames, single, D, S, scv, disc, servers, is_ld, capacity,
                         is_open)  # fmt: skip
    if chains is not None:
        shared = [q for q in set(chains.tolist()) if q >= 0 and (chains == q).sum() > 1]
        if shared:
            features["class_switching"] = tuple(
                cnames[c] for c in range(len(cnames)) if chains[c] in shared
            )
    return Compiled(
        station_names=names, class_names=cnames, single=single,
        D=_ro(D), V=_ro(V), S=_ro(S), scv=_ro(scv), laws=tuple(laws), discipline=tuple(disc),
        is_delay=_ro(is_delay), is_ld=_ro(is_ld), is_forkjoin=_ro(is_fj), servers=_ro(servers),
        rates=tuple(rates), capacity=_ro(capacity), forkjoins=tuple(fjs),
        is_open=_ro(is_open), N=_ro(N), Z=_ro(Z), arrival_rate=_ro(lam), priority=_ro(prio),
        features=features, routing=None if M is None else _ro(M),
        chains=None if chains is None else _ro(chains),
        outside_visits=None if outside is None else _ro(np.array(outside)),
    )  # fmt: skip


def _routed(elements, cnames, single, routing, classes):
    """(M, V, chains) of a routing, after the checks only a description can make: stations
    give service times (the visits come from the routing), no fork-join element, and no
    chain that mixes open and closed classes or switches between open classes."""
    for el in elements:
        if isinstance(el, ForkJoin):
            raise InvalidModelError(
                f"ForkJoin {el.name!r}: a routing through fork-join elements is not described "
                "yet; give the fork-join network without a routing (each class visits its "
                "elements in order)"
            )
        if el.service_time is None:
            raise InvalidModelError(
                f"Station {el.name!r}: with a routing, give its service_time per visit (the "
                "visits come from the routing), not a demand"
            )
    M, V, chains = compile_routing(routing, tuple(el.name for el in elements), cnames, single)
    if classes is not None:
        is_open = np.array([c.is_open for c in classes])
        for q in set(chains.tolist()) - {-1}:
            members = np.flatnonzero(chains == q)
            kinds = set(is_open[members].tolist())
            names = [cnames[c] for c in members]
            if len(kinds) > 1:
                raise InvalidModelError(
                    f"routing: classes {names} switch into each other but some are open and "
                    "some closed; a chain is open or closed"
                )
            if kinds == {True} and members.size > 1:
                raise InvalidModelError(
                    f"routing: the open classes {names} switch into each other; class "
                    "switching between open classes is not described yet (closed chains are)"
                )
        stray = [cnames[c] for c in range(len(cnames)) if chains[c] < 0 and (
            classes[c].is_open and classes[c].arrival_rate > 0
            or not classes[c].is_open and classes[c].N > 0)]  # fmt: skip
        if stray:
            raise InvalidModelError(
                f"routing: class {stray[0]!r} has jobs but the routing never keeps a job of it "
                "(no row leads back to it): give it a row from the outside node"
            )
    return M, V, chains


def _check_class_names(el, stations, index, cnames) -> None:
    """Every class a (per-class) station names is one of the network's."""
    for s in stations:
        for what in ("demand", "scv", "visits", "service_time"):
            value = getattr(s, what)
            if isinstance(value, Mapping):
                for cname in value:
                    if cname not in index:
                        where = s.name if s is el else f"{el.name}.{s.name}"
                        raise InvalidModelError(
                            f"Station {where!r}: {what} names class {cname!r}, which is not "
                            f"one of the network's classes {list(cnames)}"
                        )


def _features(names, cnames, single, D, S, scv, disc, servers, is_ld, capacity, is_open):
    """{feature: (elements or classes that use it)} for the features of :data:`FEATURES`."""
    K = len(names)
    out: dict[str, list[str]] = {f: [] for f in FEATURES}
    if not single:
        out["open"] = [cnames[c] for c in np.flatnonzero(is_open)]
        out["closed"] = [cnames[c] for c in np.flatnonzero(~is_open)]
        if len(cnames) > 1:
            out["multiclass"] = list(cnames)
    for k in range(K):
        d = disc[k]
        visiting = D[:, k] > 0
        if d == "forkjoin":
            out["forkjoin"].append(names[k])
            continue
        if d == "IS":
            out["delay"].append(names[k])
            continue
        if servers[k] > 1:
            out["multiserver"].append(names[k])
        if is_ld[k]:
            out["load_dependent"].append(names[k])
        if capacity[k] > 0:
            out["finite_capacity"].append(names[k])
        if d == "PS":
            out["ps"].append(names[k])
        elif d == "LCFS-PR":
            out["lcfs_pr"].append(names[k])
        elif d in PRIORITY_DISCIPLINES:
            out["priority"].append(names[k])
        if d == "FCFS":
            s = S[visiting, k]
            if s.size > 1 and not np.allclose(s, s[0], rtol=1e-12, atol=0.0):
                out["fcfs_class_dependent"].append(names[k])
            if np.any(scv[visiting, k] != 1.0):
                out["non_exponential"].append(names[k])
    return {f: tuple(v) for f, v in out.items() if v}
