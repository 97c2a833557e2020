"""Error of ``open_network``'s approximation for FCFS stations outside product form.

Prints a Markdown table: for random open networks whose FCFS stations give the classes
different service times (or non-exponential laws), the per-class response time of
``qnmodel.open_network`` (M/G/1 waits with Poisson arrivals at every station, the module
docstring of :mod:`qnmodel.solvers.open`) against ``qnmodel.simulate`` (10 replications of
2000 s after 5 s warm-up, seed fixed per case). Also the case of a 6-disk array written as
six stations in series (reads 0.833 ms, writes 3.333 ms per disk, 280/s and 120/s).

Run: ``.venv/bin/python tests/accuracy/open_fcfs.py [cases]`` (default 30 random cases).
"""

from __future__ import annotations

import sys

import numpy as np

import qnmodel as qn


def _random_case(rng: np.random.Generator) -> qn.Network:
    K = int(rng.integers(2, 7))
    rho = rng.uniform(0.3, 0.8, size=K)  # target utilisation per station
    lam = {"a": float(rng.uniform(20, 200)), "b": float(rng.uniform(20, 200))}
    law = rng.choice(["exp", "det", "scv4"])
    scv = {"exp": 1.0, "det": 0.0, "scv4": 4.0}[law]
    stations = []
    for k in range(K):
        share = rng.uniform(0.1, 0.9)  # share of station k's load from class a
        Sa = rho[k] * share / lam["a"]
        Sb = rho[k] * (1 - share) / lam["b"]
        stations.append(qn.Station(f"s{k}", {"a": Sa, "b": Sb}, scv=scv))
    return qn.Network(stations, classes=[qn.OpenClass(c, r) for c, r in lam.items()]), str(law)


def _row(name: str, net: qn.Network, seed: int) -> tuple[str, list[float]]:
    res = qn.open_network(net)
    sim = qn.simulate(net, seed=seed, replications=10, run_length=2000.0, warmup=5.0)
    err = (res.response_time[0] / sim.response_time - 1) * 100
    hw = sim.response_time_halfwidth / sim.response_time * 100
    U = np.max(res.utilization.sum(axis=0)) if res.utilization.ndim > 1 else np.nan
    cells = " | ".join(f"{e:+.1f} (±{h:.1f})" for e, h in zip(err, hw, strict=True))
    return f"| {name} | {len(net.stations)} | {U:.2f} | {cells} |", list(np.abs(err))


def main(cases: int = 30) -> None:
    print("| case | stations | max U | error of R, class a (% ± sim. half-width) | class b |")
    print("|---|--:|--:|--:|--:|")
    errs: list[float] = []
    disks = [qn.Station(f"disk{i}", {"read": 0.833e-3, "write": 3.333e-3}) for i in range(6)]
    array = qn.Network(disks, classes=[qn.OpenClass("read", 280.0), qn.OpenClass("write", 120.0)])
    line, e = _row("6 disks in series, exp.", array, 1)
    print(line)
    errs += e
    rng = np.random.default_rng(2026)
    for i in range(cases):
        net, law = _random_case(rng)
        line, e = _row(f"random {i} ({law})", net, 100 + i)
        print(line)
        errs += e
    a = np.array(errs)
    print(
        f"\n|error| over {a.size} class responses: median {np.median(a):.1f} %, "
        f"90th percentile {np.percentile(a, 90):.1f} %, worst {a.max():.1f} %"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
