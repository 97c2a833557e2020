"""Error of the residual-life correction for closed networks with non-exponential FCFS service.

Prints Markdown tables: for random closed networks whose single-server FCFS stations have
service-time SCVs in {0 (constant), 0.25, 1, 4, 10} (deterministic, lognormal of that SCV,
exponential), the throughput X and response time R of

* single class: ``qnmodel.mva`` (the corrected recursion, :mod:`qnmodel.solvers.mva_residual`)
  and ``qnmodel.amva(method="schweitzer")``;
* two classes: ``qnmodel.amva`` with ``method="schweitzer"`` and ``"linearizer"``;

against ``qnmodel.simulate`` (10 replications, run length about 4000 completions of the slowest
class per replication, warm-up a tenth of it; seed fixed per case).

Family (seed 2027): K = 2..5 stations, service times uniform in [1, 10] ms, an SCV per
station drawn from the five values; think time 0 or uniform in [0, 50] ms (per class); one
class: N = 1..30; two classes: class c's service time at station k is S_k f_ck, f_ck
uniform in [0.5, 2], one visit each (the simulator runs a class's demand as one visit, so
the FCFS stations are class-dependent as well: ``amva``'s ``+fcfs`` heuristic is part of the
measured error), N_c = 1..15 each. Relative errors are |model / simulation - 1| per case
and class.

Run: ``.venv/bin/python tests/accuracy/amva_scv.py [cases]`` (default 40 cases of each
family; about 2 minutes).
"""

from __future__ import annotations

import sys

import numpy as np

import qnmodel as qn

SCVS = (0.0, 0.25, 1.0, 4.0, 10.0)


def single_case(rng: np.random.Generator) -> tuple[qn.Network, int]:
    K = int(rng.integers(2, 6))
    S = rng.uniform(1e-3, 10e-3, size=K)
    c2 = rng.choice(SCVS, size=K)
    Z = 0.0 if rng.random() < 0.5 else float(rng.uniform(0, 50e-3))
    st = [qn.Station(f"s{k}", float(S[k]), scv=float(c2[k])) for k in range(K)]
    return qn.Network(st, think_time=Z), int(rng.integers(1, 31))


def two_class_case(rng: np.random.Generator) -> qn.Network:
    K = int(rng.integers(2, 6))
    S = rng.uniform(1e-3, 10e-3, size=K)
    c2 = rng.choice(SCVS, size=K)
    f = rng.uniform(0.5, 2.0, size=(2, K))  # class b's service time differs: S_k f_ck
    st = [
        qn.Station(f"s{k}", {"a": float(S[k] * f[0, k]), "b": float(S[k] * f[1, k])},
                   scv=float(c2[k]))
        for k in range(K)
    ]  # fmt: skip
    cls = [
        qn.ClosedClass(c, int(rng.integers(1, 16)),
                       think_time=0.0 if rng.random() < 0.5 else float(rng.uniform(0, 50e-3)))
        for c in ("a", "b")
    ]  # fmt: skip
    return qn.Network(st, classes=cls)


def _exponential(net: qn.Network) -> qn.Network:
    """The same network with exponential service (what MVA answered before the correction)."""
    st = [s.replace(scv=1.0) for s in net.stations]
    return (
        qn.Network(st, think_time=net.think_time)
        if net.single
        else qn.Network(st, classes=net.classes)
    )


def _sim(net: qn.Network, N, X_model: np.ndarray, seed: int):
    run = 4000.0 / float(np.min(X_model))
    return qn.simulate(net, N=N, seed=seed, replications=10, run_length=run, warmup=run / 10)


def _rel(a, b) -> np.ndarray:
    return np.abs(np.asarray(a, dtype=float) / np.asarray(b, dtype=float) - 1.0)


def _summary(name: str, eX: list, eR: list, load: list, band: tuple[float, float]) -> str:
    u = np.concatenate(load)
    keep = (u >= band[0]) & (u < band[1])
    x, r = np.concatenate(eX)[keep] * 100, np.concatenate(eR)[keep] * 100
    if not x.size:
        return f"| {name} | 0 | | | | |"
    return (f"| {name} | {x.size} | {np.median(x):.2f} | {x.max():.2f} | {np.median(r):.2f} "
            f"| {r.max():.2f} |")  # fmt: skip


def main(cases: int = 40) -> None:
    rng = np.random.default_rng(2027)
    errs: dict[str, tuple[list, list, list]] = {
        k: ([], [], []) for k in ("mva (recursion)", "amva schweitzer, 1 class",
                              "mva ignoring the SCV (scv=1)", "amva schweitzer, 2 classes",
                              "amva linearizer, 2 classes", "amva ignoring the SCV (scv=1)")
    }  # fmt: skip
    print("| case | K | SCVs | N | sim X | err X mva / amva (%) | err R mva / amva (%) |")
    print("|---|--:|---|--:|--:|--:|--:|")
    for i in range(cases):
        net, N = single_case(rng)
        m = qn.mva(net, N, keep="last")
        a = qn.amva(net, N, keep="last")
        e = qn.mva(_exponential(net), N, keep="last")
        sim = _sim(net, N, m.throughput, 500 + i)
        for key, res in (("mva (recursion)", m), ("amva schweitzer, 1 class", a),
                         ("mva ignoring the SCV (scv=1)", e)):  # fmt: skip
            errs[key][0].append(_rel(res.throughput[-1:], sim.throughput))
            errs[key][1].append(_rel(res.response_time[-1:], sim.response_time))
            errs[key][2].append(np.full(1, sim.utilization.sum(axis=0).max()))
        scvs = ",".join(f"{s.scv:g}" for s in net.stations)
        print(f"| 1-class {i} | {len(net.stations)} | {scvs} | {N} | {sim.throughput[0]:.1f} "
              f"| {errs['mva (recursion)'][0][-1][0] * 100:.2f} / "
              f"{errs['amva schweitzer, 1 class'][0][-1][0] * 100:.2f} "
              f"| {errs['mva (recursion)'][1][-1][0] * 100:.2f} / "
              f"{errs['amva schweitzer, 1 class'][1][-1][0] * 100:.2f} |")  # fmt: skip
    for i in range(cases):
        net = two_class_case(rng)
        s = qn.amva(net, method="schweitzer")
        li = qn.amva(net, method="linearizer")
        e = qn.amva(_exponential(net), method="schweitzer")
        sim = _sim(net, None, s.throughput, 900 + i)
        for key, res in (("amva schweitzer, 2 classes", s), ("amva linearizer, 2 classes", li),
                         ("amva ignoring the SCV (scv=1)", e)):  # fmt: skip
            errs[key][0].append(_rel(res.throughput, sim.throughput))
            errs[key][1].append(_rel(res.response_time, sim.response_time))
            errs[key][2].append(np.full(2, sim.utilization.sum(axis=0).max()))
        scvs = ",".join(f"{st.scv:g}" for st in net.stations)
        ex = errs["amva schweitzer, 2 classes"][0][-1] * 100
        er = errs["amva schweitzer, 2 classes"][1][-1] * 100
        print(f"| 2-class {i} | {len(net.stations)} | {scvs} | {s.population.tolist()} "
              f"| {sim.throughput[0]:.1f} | {ex.max():.2f} | {er.max():.2f} |")  # fmt: skip
    for title, band in (
        ("All cases", (0.0, 2.0)),
        ("Cases whose busiest station's utilisation (simulated) is below 0.9", (0.0, 0.9)),
        ("Cases at utilisation 0.9 and above", (0.9, 2.0)),
    ):
        print(f"\n{title}:\n")
        print("| method | class results | X median (%) | X worst (%) | R median (%) "
              "| R worst (%) |")  # fmt: skip
        print("|---|--:|--:|--:|--:|--:|")
        for key, (eX, eR, load) in errs.items():
            print(_summary(key, eX, eR, load, band))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
