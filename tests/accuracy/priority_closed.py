"""Error of ``amva``'s priority MVA on closed networks with priority stations.

Prints a Markdown table: for random closed networks (2-3 classes, 1-4 single-server
stations, all ``"HOL"`` or all ``"PRIO-PR"``, levels distinct or partly equal, N_c = 1..10,
think times from none to 5 N_c D_c, exponential service), the relative error
of each class's throughput X and response time R from ``qnmodel.amva`` (Schweitzer and
Linearizer) against ``qnmodel.simulate`` (10 replications, seed fixed per case), then the
median and worst |error| over all class values per method and discipline.

Run: ``.venv/bin/python tests/accuracy/priority_closed.py [cases]`` (default 24).
``case(i)`` rebuilds random case i (tests/solvers/test_amva_priority.py asserts a few).
"""

from __future__ import annotations

import sys

import numpy as np

import qnmodel as qn

SEED = 2027


def case(i: int) -> tuple[qn.Network, str]:
    """Random case i of the family (the same network for the same i)."""
    rng = np.random.default_rng([SEED, i])
    C = int(rng.integers(2, 4))
    K = int(rng.integers(1, 5))
    disc = "HOL" if i % 2 == 0 else "PRIO-PR"
    names = [f"c{c}" for c in range(C)]
    if rng.random() < 0.75:
        prio = rng.permutation(C)  # distinct levels
    else:
        prio = rng.integers(0, C - 1, size=C)  # some classes share a level
    stations = []
    for k in range(K):
        D = {n: float(rng.uniform(1.0, 10.0)) * 1e-3 for n in names}
        stations.append(qn.Station(f"s{k}", D, discipline=disc))
    classes = []
    for c, n in enumerate(names):
        Nc = int(rng.integers(1, 11))
        Dc = sum(float(s.demand[n]) for s in stations)
        # no think time (a batch class) or one that spreads the class's load: each class
        # alone would keep its busiest station busy 1 / (1 + Z / (N D)) of the time or less
        Z = 0.0 if rng.random() < 0.25 else float(rng.uniform(0.2, 5.0)) * Nc * Dc
        classes.append(qn.ClosedClass(n, N=Nc, think_time=Z, priority=int(prio[c])))
    return qn.Network(stations, classes=classes), disc


def errors(net: qn.Network, seed: int, method: str = "schweitzer", sim=None):
    """(err X, err R) in per cent per class (NaN for a class the simulation starves: no
    completion), and the simulation (10 replications of 200 s)."""
    if sim is None:
        sim = qn.simulate(net, seed=seed, replications=10, run_length=200.0, warmup=5.0)
    r = qn.amva(net, method=method)
    fed = sim.throughput > 0
    ex = np.full(len(fed), np.nan)
    er = np.full(len(fed), np.nan)
    ex[fed] = (r.throughput[fed] / sim.throughput[fed] - 1) * 100
    er[fed] = (r.response_time[fed] / sim.response_time[fed] - 1) * 100
    return ex, er, sim


def _cell(errs) -> str:
    return " ".join("starved" if np.isnan(e) else f"{e:+.1f}" for e in errs)


def main(cases: int = 24) -> None:
    print("| case | disc. | N | levels | U max | X error, Schweitzer (%) | R error (%) "
          "| X error, Linearizer (%) | R error (%) |")  # fmt: skip
    print("|---|---|---|---|--:|---|---|---|---|")
    agg: dict[tuple[str, str, str], list[float]] = {}
    for i in range(cases):
        net, disc = case(i)
        cells = []
        sim = None
        for method in ("schweitzer", "linearizer"):
            ex, er, sim = errors(net, 100 + i, method, sim)
            cells += [_cell(ex), _cell(er)]
            light = float(np.max(sim.station_utilization)) < 0.9
            for key in [(disc, method)] + ([(disc, method, "light")] if light else []):
                agg.setdefault((*key, "X"), []).extend(np.abs(ex[~np.isnan(ex)]))
                agg.setdefault((*key, "R"), []).extend(np.abs(er[~np.isnan(er)]))
        cm = net.compiled
        N = ",".join(str(int(n)) for n in cm.N)
        lv = ",".join(str(int(p)) for p in cm.priority)
        U = float(np.max(sim.station_utilization))
        print(f"| {i} | {disc} | {N} | {lv} | {U:.2f} | " + " | ".join(cells) + " |")
    print("\n| cases | discipline | method | X median | X worst | R median | R worst |")
    print("|---|---|---|--:|--:|--:|--:|")
    for which in ("all", "U max < 0.9"):
        for disc in ("HOL", "PRIO-PR"):
            for method in ("schweitzer", "linearizer"):
                key = (disc, method) if which == "all" else (disc, method, "light")
                x = np.array(agg.get((*key, "X"), [np.nan]))
                r = np.array(agg.get((*key, "R"), [np.nan]))
                print(f"| {which} | {disc} | {method} | {np.median(x):.1f} % | {x.max():.1f} % "
                      f"| {np.median(r):.1f} % | {r.max():.1f} % |")  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 24)
