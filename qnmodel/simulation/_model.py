"""Reading a network into the flat arrays of the event loop.

The one place the simulator looks at a :class:`~qnmodel.model.Network`: its compiled form
(:attr:`Network.compiled`) gives the classes (closed with a population, open with an arrival
rate; a network without classes is closed with ``N`` or open with ``arrival_rate``), the
elements and their service-time laws; fork-join elements give their branches.

Routing: without a routing matrix each class visits the nodes where it has work, in station
order, once per cycle with the whole demand D = V S as one visit -- the view the analytic
solvers take. With one (``Network(..., routing=...)``, :attr:`Compiled.routing`) the run is
*routed*: a job leaving a node draws its next (class, node) from the matrix row, each visit
a service of mean S (the service time per visit), class switching changing the job's class;
the outside node is a closed job's terminal (its think time) and an open job's source and
sink (:func:`routing_rows`).

Stations become event-loop kinds (``ST_*``, the ``QNS_ST_*`` of ``qnsim.h``) with a server
count, a rate curve (PS always has one: min(n, m) for m servers) and a capacity (0: none);
the classes' priorities become dense levels 0..L-1, 0 served first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_quantity
from ..errors import InvalidModelError, InvalidTypeError, UnstableModelError
from ..model import ForkJoin, Network, Station
from ..model import laws as dist
from ..solvers.support import require
from ._engine import CompiledModel

#: largest fork-join with a random fan-out (QNS_MAX_FAN of qnsim.h)
MAX_FAN = 64

__all__ = ["ModelInfo", "compile_model"]


@dataclass(frozen=True)
class ModelInfo:
    """Names and per-class parameters the facade needs to report results."""

    class_names: tuple[str, ...]
    station_names: tuple[str, ...]  # top-level nodes
    branch_names: tuple[str, ...]  # physical stations inside fork-join elements
    is_open: np.ndarray  # (C,)
    population: np.ndarray  # (C,)
    arrival_rate: np.ndarray  # (C,)
    think_time: np.ndarray  # (C,)
    node_station: np.ndarray  # (K,) physical station of a plain node, -1 for fork-join
    branch_station: np.ndarray  # (NB,) physical station of each branch
    util_scale: np.ndarray  # (P,) servers used to normalise utilisation (1: delay, curves)
    finite: bool  # some station has a finite capacity (losses are reported)
    node_is_delay: np.ndarray  # (K,)
    demand: np.ndarray  # (C, K) total demand per cycle (fork-join: the largest branch)
    throughput_guess: np.ndarray  # (C,) for default run lengths
    events_per_cycle: np.ndarray  # (C,) node visits per cycle plus one (think or arrival)
    chains: np.ndarray | None = None  # (C,) chain of each class in a routed run, else None


def _is_forkjoin(el: Any) -> bool:
    return isinstance(el, ForkJoin)


def _branch_demand(br: Station, cname: str | None) -> float:
    return br.demand_of(cname)


#: station kinds of the event loop (QNS_ST_* of qnsim.h)
ST_QUEUE, ST_DELAY, ST_HOL, ST_LD, ST_PS, ST_LCFS, ST_PRIO = range(7)


def _station_kind(el: Station, label: str) -> tuple[int, int, np.ndarray | None, int]:
    """(event-loop kind, servers, rate curve, capacity) of a station (capacity 0: unlimited).

    A PS station always gets a curve: its total speed r(n) with n jobs in service, min(n, m)
    for m servers. LCFS-PR has one server (of speed r(n) with a rate curve).
    """
    cap = 0 if el.capacity is None else int(el.capacity)
    disc, m, r = el.discipline, int(el.servers), el.rate_multipliers
    curve = None if r is None else np.asarray(r, dtype=np.float64)
    if disc == "IS":
        return ST_DELAY, 1, None, 0
    if disc == "FCFS":
        return (ST_LD, 1, curve, cap) if curve is not None else (ST_QUEUE, m, None, cap)
    if disc == "PS":
        if curve is None:
            curve = np.arange(1, m + 1, dtype=np.float64)
        return ST_PS, m, curve, cap
    if disc == "LCFS-PR":
        if m > 1:
            raise InvalidModelError(
                f"{label}: LCFS-PR with servers={m} cannot be simulated: LCFS-PR has one "
                "server (BCMP type 4); give rate_multipliers=[1, 2, ..., m] for a server whose "
                "speed grows with the jobs present as m servers would (the same mean values), "
                "or discipline='PS' or 'FCFS' with servers=m"
            )
        return ST_LCFS, 1, (curve if curve is not None else np.ones(1)), cap
    # HOL, PRIO-PR
    if curve is not None:
        raise InvalidModelError(
            f"{label}: discipline {disc!r} with rate_multipliers cannot be simulated: a "
            "priority station has m identical servers; give servers=m instead of a rate curve"
        )
    return (ST_HOL if disc == "HOL" else ST_PRIO), m, None, cap


def _classes(net: Network, N: Any, arrival_rate: Any):
    """(names, is_open, population, think, rate) of the call."""
    if not isinstance(net, Network):
        raise InvalidTypeError(f"simulate: net must be a Network, got {type(net).__name__}")
    cm = net.compiled
    if not net.single:
        pop = cm.population_vector(N)
        rate = cm.arrival_rate_vector(arrival_rate)
        return cm.class_names, np.array(cm.is_open), pop, np.array(cm.Z), rate
    if arrival_rate is not None:
        if N is not None:
            raise InvalidModelError(
                "simulate: give N (closed) or arrival_rate (open) for a network without "
                "classes, not both"
            )
        lam = as_quantity(arrival_rate, "arrival_rate", "frequency", positive=True)
        return cm.class_names, np.array([True]), np.zeros(1, np.int64), np.zeros(1), np.array([lam])
    if N is None:
        raise InvalidModelError("simulate: a closed network needs N (population) or arrival_rate")
    if isinstance(N, bool) or not float(N).is_integer() or int(N) < 1:
        raise InvalidModelError(f"N must be a positive integer population, got {N!r}")
    return cm.class_names, np.array([False]), np.array([int(N)]), np.array(cm.Z), np.zeros(1)


def compile_model(
    net: Any, N: Any, arrival_rate: Any, service: Any
) -> tuple[CompiledModel, ModelInfo]:
    """Flat arrays for the event loop and the names to report them under."""
    cnames, is_open, pop, think, rate = _classes(net, N, arrival_rate)
    C = len(cnames)
    cm = net.compiled
    require(cm, "simulate", drop=("open", "closed"))
    routed = cm.routing is not None
    if routed and np.any(cm.capacity > 0):
        k = int(np.flatnonzero(cm.capacity > 0)[0])
        raise InvalidModelError(
            f"simulate: station {cm.station_names[k]!r} has a finite capacity and the network a "
            "routing; finite capacities are simulated with the class routes only (a network "
            "without routing=), or solved by qnmodel.mva_blocking"
        )
    classes = [None] if net.single else list(cnames)  # the names per-class demands use
    elements = tuple(net.stations)
    K = len(elements)
    node_kind, node_first, node_count, node_k, node_names = [], [], [], [], []
    node_fan: list[int] = []
    st_kind, st_servers, st_rates, st_label, st_dem, st_law = [], [], [], [], [], []
    st_cap: list[int] = []
    branch_names, branch_station, node_station, node_is_delay = [], [], [], []
    demand = np.zeros((C, K))
    for k, el in enumerate(elements):
        name = el.name
        node_names.append(name)
        if _is_forkjoin(el):
            branches = tuple(el.branches)
            n = len(branches)
            fan, kj = el.fanout, el.k
            if n == 0 or not 1 <= kj <= fan <= n:
                raise InvalidModelError(
                    f"ForkJoin {name!r}: needs branches and 1 <= k <= n (k <= fanout <= n "
                    f"with a fan-out), got n={n}, k={el.k!r}, fanout={fan}"
                )
            if fan < n and n > MAX_FAN:
                raise InvalidModelError(
                    f"ForkJoin {name!r}: a random fan-out ({fan} of n={n}) is simulated for at "
                    f"most {MAX_FAN} branches"
                )
            if kj < fan and el.cancel:
                raise InvalidModelError(
                    f"ForkJoin {name!r}: k={kj} of n={n} with cancel=True; the simulator "
                    "keeps the n - k stragglers running (set cancel=False), and "
                    "qnmodel.fork_join solves cancelling joins"
                )
            node_kind.append(1)
            node_first.append(len(st_kind))
            node_count.append(n)
            node_k.append(kj)
            node_fan.append(fan)
            node_station.append(-1)
            node_is_delay.append(False)
            for br in branches:
                label = f"ForkJoin {name!r} branch {br.name!r}"
                kind, m, r, cap = _station_kind(br, label)
                bname = f"{name}/{br.name}"
                branch_names.append(bname)
                branch_station.append(len(st_kind))
                st_kind.append(kind)
                st_servers.append(m)
                st_rates.append(r)
                st_cap.append(cap)
                st_label.append((bname, br.name))
                st_dem.append([_branch_demand(br, c) for c in classes])
                st_law.append([br.law if br.law is not None else None for _ in range(C)])
            demand[:, k] = np.max(np.array(st_dem[-n:]), axis=0) * fan / n
        else:
            label = f"Station {name!r}"
            kind, m, r, cap = _station_kind(el, label)
            node_kind.append(0)
            node_first.append(len(st_kind))
            node_count.append(1)
            node_k.append(1)
            node_fan.append(1)
            node_station.append(len(st_kind))
            node_is_delay.append(kind == ST_DELAY)
            st_kind.append(kind)
            st_servers.append(m)
            st_rates.append(r)
            st_cap.append(cap)
            st_label.append((name,))
            d = [float(cm.D[c, k]) for c in range(C)]
            st_dem.append(d)
            st_law.append(list(cm.laws[k]))
            demand[:, k] = d
    P = len(st_kind)
    dem = np.array(st_dem, dtype=np.float64).T.copy()  # (C, P)
    # mean of one service: the demand per cycle, or per visit in a routed run (P = K)
    smean = np.array(cm.S, dtype=np.float64) if routed else dem

    # routes: nodes with work for the class (a fork-join node only if its join can wait)
    routes, route_off, route_len = [], [], []
    for c in range(C):
        route_off.append(len(routes))
        for k in range(K):
            if node_kind[k] == 0:
                use = dem[c, node_first[k]] > 0
            else:
                sl = dem[c, node_first[k] : node_first[k] + node_count[k]]
                use = node_k[k] - int(np.sum(~(sl > 0))) > 0
            if use:
                routes.append(k)
        route_len.append(len(routes) - route_off[c])
        if not is_open[c] and pop[c] > 0 and route_len[c] == 0 and not think[c] > 0:
            raise InvalidModelError(
                f"class {cnames[c]!r}: no demand at any station and no think time; nothing to "
                "simulate"
            )

    # service distributions per (class, physical station)
    svc = _service_specs(service, cnames, st_label, st_law)
    svc_kind = np.zeros(C * P, np.int64)
    p1, p2 = np.zeros(C * P), np.zeros(C * P)
    tab_off, tab_len, tabs, ntab = np.zeros(C * P, np.int64), np.zeros(C * P, np.int64), [], 0
    for c in range(C):
        for p in range(P):
            i, mean, d = c * P + p, smean[c, p], svc[c][p]
            svc_kind[i] = d.kind
            if mean <= 0:
                continue
            if isinstance(d, dist.Lognormal):
                p1[i], p2[i] = d.params(mean)
            elif isinstance(d, dist.Empirical):
                t = d.table(mean)
                tab_off[i], tab_len[i] = ntab, t.shape[0]
                tabs.append(t)
                ntab += t.shape[0]

    ld_off, ld_len, ld_rates = np.zeros(P, np.int64), np.ones(P, np.int64), []
    util_scale = np.ones(P)  # utilisation per server: m servers (FCFS, HOL, PRIO-PR, PS)
    for p in range(P):
        r = st_rates[p] if st_rates[p] is not None else np.ones(1)
        ld_off[p], ld_len[p] = len(ld_rates), r.size
        ld_rates.extend(r.tolist())
        if st_kind[p] in (ST_QUEUE, ST_HOL, ST_PRIO, ST_PS):
            util_scale[p] = st_servers[p]
    stations = (st_kind, st_cap, st_rates, st_servers, st_label)
    nodes = (node_kind, node_first, node_count, node_fan)
    _check_stable(rate * is_open, dem, stations, nodes, (routes, route_off, route_len))

    events = (demand > 0).sum(axis=1) + 1.0
    rows: dict[str, np.ndarray] = {}
    if routed:
        rows = routing_rows(np.asarray(cm.routing))
        pop = _chain_population(pop, np.asarray(cm.chains), rows["rt_off"], K, cnames)
        events = np.asarray(cm.V).sum(axis=1) + 1.0  # visits per chain cycle

    guess = np.zeros(C)
    for c in range(C):
        if is_open[c]:
            guess[c] = rate[c]
        elif pop[c] > 0:
            kinds = np.array(st_kind)
            bott = np.max(dem[c] / np.where(kinds == ST_DELAY, np.inf, np.maximum(util_scale, 1)))
            total = float(demand[c].sum()) + think[c]
            guess[c] = min(
                pop[c] / total if total > 0 else np.inf, 1 / bott if bott > 0 else np.inf
            )

    i8 = lambda a: np.ascontiguousarray(a, dtype=np.int64)  # noqa: E731
    f8 = lambda a: np.ascontiguousarray(a, dtype=np.float64)  # noqa: E731
    levels = np.unique(np.asarray(cm.priority, dtype=np.int64), return_inverse=True)[1]
    model = CompiledModel(
        C=C, K=K, P=P,
        node_kind=i8(node_kind), node_first=i8(node_first), node_count=i8(node_count),
        node_k=i8(node_k), node_fan=i8(node_fan),
        st_kind=i8(st_kind), st_servers=i8(st_servers), st_ld_off=i8(ld_off),
        st_ld_len=i8(ld_len), ld_rates=f8(ld_rates), st_cap=i8(st_cap),
        cls_open=i8(is_open), cls_pop=i8(pop), cls_think=f8(think), cls_rate=f8(rate),
        route_off=i8(route_off), route_len=i8(route_len), routes=i8(routes or [0]),
        cls_level=i8(np.broadcast_to(levels.ravel(), (C,))), levels=int(levels.max()) + 1,
        svc_kind=svc_kind, svc_mean=f8(smean.ravel()), svc_p1=p1, svc_p2=p2,
        svc_tab_off=tab_off, svc_tab_len=tab_len,
        svc_tab=f8(np.concatenate(tabs).ravel() if tabs else np.zeros(3)),
        **rows,
    )  # fmt: skip
    info = ModelInfo(
        class_names=cnames,
        station_names=tuple(node_names),
        branch_names=tuple(branch_names),
        is_open=is_open,
        population=pop,
        arrival_rate=rate,
        think_time=think,
        node_station=np.array(node_station, np.int64),
        branch_station=np.array(branch_station, np.int64),
        util_scale=util_scale,
        finite=bool(np.any(np.array(st_cap) > 0)),
        node_is_delay=np.array(node_is_delay, bool),
        demand=demand,
        throughput_guess=guess,
        events_per_cycle=events,
        chains=np.array(cm.chains) if routed else None,
    )
    return model, info


def routing_rows(M: np.ndarray) -> dict[str, np.ndarray]:
    """The routing matrix M (C, K + 1, C, K + 1) as the event loop's rows (``qnsim.h``).

    State s = c (K + 1) + k (node K: the outside); row s lists the states M[c, k] reaches
    with probability > 0, in index order, with the row's cumulative probabilities, the last
    set to 1 (the row sums to 1 within rounding, :func:`~qnmodel.model.routing.
    compile_routing`). A row nothing reaches is empty.
    """
    C, K1 = M.shape[0], M.shape[1]
    flat = M.reshape(C * K1, C * K1)
    off, dst, cum = [0], [], []
    for row in flat:
        nz = np.flatnonzero(row > 0)
        if nz.size:
            cs = np.cumsum(row[nz])
            cs[-1] = 1.0
            dst.extend(nz.tolist())
            cum.extend(cs.tolist())
        off.append(len(dst))
    return {
        "rt_off": np.array(off, dtype=np.int64),
        "rt_dst": np.array(dst or [0], dtype=np.int64),
        "rt_cum": np.array(cum or [1.0], dtype=np.float64),
    }


def _chain_population(pop, chains, rt_off, K, cnames) -> np.ndarray:
    """Closed populations moved, where needed, to a class whose jobs can leave the outside.

    A routed job starts its first cycle at the outside node as its class. A class of a chain
    may have no row there (its jobs reach the outside only as another class of the chain);
    its jobs then start as the chain's first class that has one -- only the population per
    chain matters to the chain's law ([BGMT] sec. 7.3.6).
    """
    pop = np.array(pop, dtype=np.int64)
    has_row = np.array([rt_off[c * (K + 1) + K + 1] > rt_off[c * (K + 1) + K]
                        for c in range(len(pop))])  # fmt: skip
    for c in np.flatnonzero((pop > 0) & ~has_row):
        mates = np.flatnonzero((chains == chains[c]) & has_row)
        if chains[c] < 0 or mates.size == 0:  # pragma: no cover - the description refuses it
            raise InvalidModelError(
                f"simulate: class {cnames[c]!r} has jobs but its chain never leaves the outside"
            )
        pop[mates[0]] += pop[c]
        pop[c] = 0
    return pop


def _check_stable(lam, dem, stations, nodes, route) -> None:
    """Refuse open classes that saturate a station: offered utilisation >= 1.

    The offered load of open class c at a physical station p is lambda_c D_cp times the share
    of the class's requests that reach p: 1 at a plain station, fanout / n at a branch of a
    fork-join that forks each request to fanout of its n branches. A finite-capacity station
    never saturates (it loses arrivals); a class that meets one on its route is not counted at
    the stations after it, where its carried rate is below lambda_c.
    """
    st_kind, st_cap, st_rates, st_servers, st_label = stations
    node_kind, node_first, node_count, node_fan = nodes
    routes, route_off, route_len = route
    P, C = len(st_kind), lam.size
    share, node_of = np.ones(P), np.zeros(P, np.int64)
    for k, kind in enumerate(node_kind):
        first, n = node_first[k], node_count[k]
        node_of[first : first + n] = k
        if kind == 1:
            share[first : first + n] = node_fan[k] / n
    load = np.zeros(P)
    for c in range(C):
        if not lam[c] > 0:
            continue
        stop = len(node_kind)  # the first finite-capacity node on the class's route
        for k in routes[route_off[c] : route_off[c] + route_len[c]]:
            if node_kind[k] == 0 and st_cap[node_first[k]] > 0:
                stop = k
                break
        upto = node_of <= stop
        load[upto] += lam[c] * dem[c, upto] * share[upto]
    for p in range(P):
        if st_kind[p] == ST_DELAY or st_cap[p] > 0:
            continue
        speed = float(st_rates[p].max()) if st_rates[p] is not None else float(st_servers[p])
        rho = load[p] / speed
        if rho >= 1.0:
            raise UnstableModelError(
                f"simulate: station {st_label[p][0]!r} is saturated by the open classes "
                f"(utilisation {rho:.4g} >= 1); lower arrival_rate"
            )


def _service_specs(service: Any, cnames: tuple[str, ...], st_label: list[tuple[str, ...]],
                   st_law: list[list]):  # fmt: skip
    """Per (class, physical station) distribution: the stations' own laws, overridden by
    ``service``.

    ``service`` (None: the stations' laws) is one specification for every station, or a
    mapping whose keys are station names (a fork-join branch as ``"fj/branch"`` or its own
    name), ``(class, station)`` pairs, or ``"*"`` for the rest; stations not named keep
    their own law.
    """
    P = len(st_label)
    own = [[st_law[p][c] or dist.Exponential() for p in range(P)] for c in range(len(cnames))]
    if service is None:
        return own
    if not isinstance(service, Mapping) or "schema" in service or "latency_s" in service:
        d = dist.as_distribution(service, "service")
        return [[d] * P for _ in cnames]
    default = None
    if "*" in service:
        default = dist.as_distribution(service["*"], "service['*']")
    known = {lab for labs in st_label for lab in labs}
    for key in service:
        if key == "*":
            continue
        st = key[1] if isinstance(key, tuple) and len(key) == 2 else key
        cl = key[0] if isinstance(key, tuple) and len(key) == 2 else None
        if st not in known or (cl is not None and cl not in cnames):
            raise InvalidModelError(
                f"service: key {key!r} names no station (or class) of the network; stations are "
                f"{sorted(known)}, classes {list(cnames)}"
            )
    out = []
    for c, cname in enumerate(cnames):
        row = []
        for p, labs in enumerate(st_label):
            spec = None
            for lab in labs:
                if (cname, lab) in service:
                    spec, where = service[(cname, lab)], f"service[{(cname, lab)!r}]"
                    break
            if spec is None:
                for lab in labs:
                    if lab in service:
                        spec, where = service[lab], f"service[{lab!r}]"
                        break
            if spec is None:
                row.append(default if default is not None else own[c][p])
            else:
                row.append(dist.as_distribution(spec, where))
        out.append(row)
    return out
