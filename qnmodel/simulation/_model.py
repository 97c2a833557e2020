"""Reading a network description into the flat arrays of the event loop.

This is the one place that looks at network objects. It reads

* a single-class :class:`~qnmodel.model.network.Network` (closed with population ``N``, or open with
  ``arrival_rate``), and
* a :class:`~qnmodel.model.multiclass.MultiClassNetwork` (read through its attributes
  ``class_names``, ``demands`` (C, K), ``is_open``, ``population``, ``think_time``,
  ``arrival_rate``, ``stations`` and, when present, ``population_vector`` /
  ``arrival_rate_vector`` to validate ``N`` and ``arrival_rate``),

whose ``stations`` are station-like elements (``kind``, ``servers``, optional
``rate_multipliers``, ``demand``) or fork-join elements duck-typed on ``branches`` / ``k``
(each branch a station-like ``"queue"`` element whose ``demand`` is a number or a mapping
class name -> demand).

Routing: each class visits the nodes where it has work, in station order, once per cycle
with the whole demand D = V S as one visit -- the view the analytic solvers take.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_quantity
from ..errors import InvalidModelError, InvalidTypeError, UnstableModelError
from ..model import laws as dist
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
    capacity: np.ndarray  # (P,) servers used to normalise utilisation (1 for delay/LD)
    node_is_delay: np.ndarray  # (K,)
    demand: np.ndarray  # (C, K) total demand per cycle (fork-join: the largest branch)
    throughput_guess: np.ndarray  # (C,) for default run lengths


def _is_forkjoin(el: Any) -> bool:
    return hasattr(el, "branches") and hasattr(el, "k")


def _branch_demand(br: Any, cname: str, label: str) -> float:
    d = br.demand
    if isinstance(d, Mapping):
        d = d.get(cname, 0.0)
    return as_quantity(d, f"{label}: demand", "time")


def _station_kind(el: Any, label: str) -> tuple[int, int, np.ndarray | None]:
    kind = getattr(el, "kind", "queue")
    rates = getattr(el, "rate_multipliers", None)
    if kind == "delay":
        return 1, 1, None
    if kind != "queue":
        raise InvalidModelError(f"{label}: kind {kind!r} cannot be simulated")
    if rates is not None:
        r = np.asarray(rates, dtype=np.float64).ravel()
        if r.size == 0 or not np.all(np.isfinite(r)) or np.any(r <= 0):
            raise InvalidModelError(f"{label}: rate_multipliers must be non-empty, finite, > 0")
        return 2, 1, r
    return 0, int(getattr(el, "servers", 1)), None


def _classes(net: Any, N: Any, arrival_rate: Any):
    """(names, is_open, population, think, rate, demands (C, K) of plain nodes or None)."""
    if hasattr(net, "class_names") and hasattr(net, "is_open"):
        names = tuple(net.class_names)
        C = len(names)
        is_open = np.asarray(net.is_open, dtype=bool).copy()
        pop = np.asarray(net.population, dtype=np.int64).copy()
        rate = np.asarray(net.arrival_rate, dtype=np.float64).copy()
        think = np.asarray(net.think_time, dtype=np.float64).copy()
        if hasattr(net, "population_vector"):  # MultiClassNetwork validates its own vectors
            pop = np.asarray(net.population_vector(N), dtype=np.int64).copy()
            rate = np.asarray(net.arrival_rate_vector(arrival_rate), dtype=np.float64).copy()
        else:
            if N is not None:
                pop = np.where(is_open, 0, np.broadcast_to(np.asarray(N), (C,))).astype(np.int64)
            if arrival_rate is not None:
                vals = (
                    list(arrival_rate)
                    if isinstance(arrival_rate, list | tuple | np.ndarray)
                    else [arrival_rate] * C
                )
                if len(vals) != C:
                    raise InvalidModelError(f"arrival_rate needs {C} values (one per class)")
                v = [as_quantity(a, f"arrival_rate[{i}]", "frequency") for i, a in enumerate(vals)]
                rate = np.where(is_open, np.array(v), 0.0)
        if np.any(~is_open & (pop < 0)):
            raise InvalidModelError(f"N must be non-negative integers, got {N!r}")
        return names, is_open, pop, think, rate, np.asarray(net.demands, dtype=np.float64)
    if not hasattr(net, "stations"):
        raise InvalidTypeError(
            f"simulate: net must be a Network or a multi-class network, got {type(net).__name__}"
        )
    if arrival_rate is not None:
        if N is not None:
            raise InvalidModelError(
                "simulate: give N (closed) or arrival_rate (open) for a single-class network, "
                "not both"
            )
        lam = as_quantity(arrival_rate, "arrival_rate", "frequency", positive=True)
        return (
            ("class0",),
            np.array([True]),
            np.zeros(1, np.int64),
            np.zeros(1),
            np.array([lam]),
            None,
        )
    if N is None:
        raise InvalidModelError("simulate: a closed network needs N (population) or arrival_rate")
    if isinstance(N, bool) or not float(N).is_integer() or int(N) < 1:
        raise InvalidModelError(f"N must be a positive integer population, got {N!r}")
    think = as_quantity(getattr(net, "think_time", 0.0), "think_time", "time")
    return ("class0",), np.array([False]), np.array([int(N)]), np.array([think]), np.zeros(1), None


def compile_model(
    net: Any, N: Any, arrival_rate: Any, service: Any
) -> tuple[CompiledModel, ModelInfo]:
    """Flat arrays for the event loop and the names to report them under."""
    cnames, is_open, pop, think, rate, D = _classes(net, N, arrival_rate)
    C = len(cnames)
    elements = tuple(net.stations) if not _is_forkjoin(net.stations) else (net.stations,)
    K = len(elements)
    node_kind, node_first, node_count, node_k, node_names = [], [], [], [], []
    node_fan: list[int] = []
    st_kind, st_servers, st_rates, st_label, st_dem = [], [], [], [], []
    branch_names, branch_station, node_station, node_is_delay = [], [], [], []
    demand = np.zeros((C, K))
    for k, el in enumerate(elements):
        name = str(getattr(el, "name", f"s{k}"))
        node_names.append(name)
        if _is_forkjoin(el):
            branches = tuple(el.branches)
            n = len(branches)
            fan = int(getattr(el, "fanout", None) or n)
            kj = fan if el.k is None else int(el.k)
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
            if kj < fan and getattr(el, "cancel", False):
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
            for b, br in enumerate(branches):
                label = f"ForkJoin {name!r} branch {getattr(br, 'name', b)!r}"
                kind, m, r = _station_kind(br, label)
                if kind == 1:
                    raise InvalidModelError(
                        f"{label}: a fork-join branch must be a queue, not a delay"
                    )
                bname = f"{name}/{getattr(br, 'name', f'b{b}')}"
                branch_names.append(bname)
                branch_station.append(len(st_kind))
                st_kind.append(kind)
                st_servers.append(m)
                st_rates.append(r)
                st_label.append((bname, str(getattr(br, "name", bname))))
                st_dem.append([_branch_demand(br, c, label) for c in cnames])
            demand[:, k] = np.max(np.array(st_dem[-n:]), axis=0) * fan / n
        else:
            label = f"Station {name!r}"
            kind, m, r = _station_kind(el, label)
            node_kind.append(0)
            node_first.append(len(st_kind))
            node_count.append(1)
            node_k.append(1)
            node_fan.append(1)
            node_station.append(len(st_kind))
            node_is_delay.append(kind == 1)
            st_kind.append(kind)
            st_servers.append(m)
            st_rates.append(r)
            st_label.append((name,))
            if D is not None:
                d = [float(D[c, k]) for c in range(C)]
            else:
                d = [as_quantity(el.demand, f"{label}: demand", "time")] * C
            st_dem.append(d)
            demand[:, k] = d
    P = len(st_kind)
    dem = np.array(st_dem, dtype=np.float64).T.copy()  # (C, P)

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
    svc = _service_specs(service, cnames, st_label)
    svc_kind = np.zeros(C * P, np.int64)
    p1, p2 = np.zeros(C * P), np.zeros(C * P)
    tab_off, tab_len, tabs, ntab = np.zeros(C * P, np.int64), np.zeros(C * P, np.int64), [], 0
    for c in range(C):
        for p in range(P):
            i, mean, d = c * P + p, dem[c, p], svc[c][p]
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

    # stability of the open classes (product-form condition: open utilisation < 1)
    ld_off, ld_len, ld_rates = np.zeros(P, np.int64), np.ones(P, np.int64), []
    cap = np.ones(P)
    for p in range(P):
        if st_kind[p] == 2:
            ld_off[p], ld_len[p] = len(ld_rates), st_rates[p].size
            ld_rates.extend(st_rates[p].tolist())
            speed = float(st_rates[p].max())
        else:
            ld_off[p], ld_len[p] = len(ld_rates), 1
            ld_rates.append(1.0)
            speed = float(st_servers[p])
            if st_kind[p] == 0:
                cap[p] = st_servers[p]
        if st_kind[p] != 1:
            rho = float(np.sum(rate * dem[:, p] * is_open)) / speed
            if rho >= 1.0:
                raise UnstableModelError(
                    f"simulate: station {st_label[p][0]!r} is saturated by the open classes "
                    f"(utilisation {rho:.4g} >= 1); lower arrival_rate"
                )

    guess = np.zeros(C)
    for c in range(C):
        if is_open[c]:
            guess[c] = rate[c]
        elif pop[c] > 0:
            bott = np.max(dem[c] / np.where(np.array(st_kind) == 1, np.inf, np.maximum(cap, 1)))
            total = float(demand[c].sum()) + think[c]
            guess[c] = min(
                pop[c] / total if total > 0 else np.inf, 1 / bott if bott > 0 else np.inf
            )

    i8 = lambda a: np.ascontiguousarray(a, dtype=np.int64)  # noqa: E731
    f8 = lambda a: np.ascontiguousarray(a, dtype=np.float64)  # noqa: E731
    model = CompiledModel(
        C=C, K=K, P=P,
        node_kind=i8(node_kind), node_first=i8(node_first), node_count=i8(node_count),
        node_k=i8(node_k), node_fan=i8(node_fan),
        st_kind=i8(st_kind), st_servers=i8(st_servers), st_ld_off=i8(ld_off),
        st_ld_len=i8(ld_len), ld_rates=f8(ld_rates),
        cls_open=i8(is_open), cls_pop=i8(pop), cls_think=f8(think), cls_rate=f8(rate),
        route_off=i8(route_off), route_len=i8(route_len), routes=i8(routes or [0]),
        svc_kind=svc_kind, svc_mean=f8(dem.ravel()), svc_p1=p1, svc_p2=p2,
        svc_tab_off=tab_off, svc_tab_len=tab_len,
        svc_tab=f8(np.concatenate(tabs).ravel() if tabs else np.zeros(3)),
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
        capacity=cap,
        node_is_delay=np.array(node_is_delay, bool),
        demand=demand,
        throughput_guess=guess,
    )
    return model, info


def _service_specs(service: Any, cnames: tuple[str, ...], st_label: list[tuple[str, ...]]):
    """Per (class, physical station) distribution from ``service``.

    ``service`` is one specification for every station, or a mapping whose keys are station
    names (a fork-join branch as ``"fj/branch"`` or its own name), ``(class, station)`` pairs,
    or ``"*"`` for the rest; stations not named are exponential.
    """
    P = len(st_label)
    if not isinstance(service, Mapping) or "schema" in service or "latency_s" in service:
        d = dist.as_distribution(service, "service")
        return [[d] * P for _ in cnames]
    default = dist.Exponential()
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
    for cname in cnames:
        row = []
        for labs in st_label:
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
            row.append(default if spec is None else dist.as_distribution(spec, where))
        out.append(row)
    return out
