"""Error of ``response_time_law``'s p90 and p99 against ``qnmodel.simulate``.

Prints a Markdown table: random single-class networks of three families --

* ``closed m-server``: closed networks of 1-3 FCFS exponential stations with 1-4 servers
  each, think time 0 or a few service times, N = 2..20 (arrival-theorem laws from the
  exact convolution marginals; exact when one station is alone in the response time);
* ``open M/M/m``: open tandems of 1-3 exponential stations with 1-4 servers, utilisation
  0.3-0.9 (exact for one station or all single-server ones, else approximate);
* ``open M/G/m``: open tandems of 1-2 stations with SCV in {0, 0.5, 2, 4, 10} and 1-3
  servers, utilisation 0.3-0.85 (two-moment fits: approximate);

-- the relative error of p90 and p99 of the law against the simulator's quantiles (10
replications, seed fixed per case), then the median and worst error per family. Also the
case of issue 27: a closed 2-server 5 ms station alone with N = 5.

Run: ``.venv/bin/python tests/accuracy/percentiles.py [cases per family]`` (default 12).
"""

from __future__ import annotations

import sys

import numpy as np

import qnmodel as qn
from qnmodel.solvers.response_laws import response_time_law

QS = (0.9, 0.99)


def closed_case(rng: np.random.Generator):
    K = int(rng.integers(1, 4))
    stations = [
        qn.Station(f"s{k}", float(rng.uniform(2e-3, 10e-3)), servers=int(rng.integers(1, 5)))
        for k in range(K)
    ]
    Z = float(rng.choice([0.0, rng.uniform(5e-3, 50e-3)]))
    N = int(rng.integers(2, 21))
    return qn.Network(stations, think_time=Z), {"N": N}, f"K={K} N={N} Z={Z * 1e3:.0f}ms"


def open_case(rng: np.random.Generator, scvs=(1.0,), kmax: int = 3, mmax: int = 4):
    K = int(rng.integers(1, kmax + 1))
    lam = 100.0
    stations = []
    desc = []
    for k in range(K):
        m = int(rng.integers(1, mmax + 1))
        rho = float(rng.uniform(0.3, 0.85))
        c2 = float(rng.choice(scvs))
        stations.append(qn.Station(f"s{k}", rho * m / lam, servers=m, scv=c2))
        desc.append(f"m={m} U={rho:.2f}" + ("" if c2 == 1.0 else f" scv={c2:g}"))
    return qn.Network(stations), {"arrival_rate": lam}, "; ".join(desc)


def row(net, load, seed):
    law = response_time_law(net, **load)
    sim = qn.simulate(
        net, N=load.get("N"), arrival_rate=load.get("arrival_rate"), seed=seed,
        replications=10, run_length=400.0 if "N" in load else 1000.0, warmup=5.0,
        quantiles=QS,
    )  # fmt: skip
    err = [(law.quantile(q) / float(sim.response_time_quantile(q)) - 1.0) * 100.0 for q in QS]
    return law, err


def main(cases: int = 12) -> None:
    fams = {
        "closed m-server": closed_case,
        "open M/M/m": lambda r: open_case(r),
        "open M/G/m": lambda r: open_case(r, (0.0, 0.5, 2.0, 4.0, 10.0), 2, 3),
    }
    print("| family | case | law | p90 error % | p99 error % |")
    print("|---|---|---|--:|--:|")
    issue = qn.Network([qn.Station("d", 0.005, servers=2)])
    law, e = row(issue, {"N": 5}, 27)
    print(f"| issue 27 | 2 servers, 5 ms, N=5 | {law.method.split(':')[0]} | {e[0]:+.1f} | "
          f"{e[1]:+.1f} |")  # fmt: skip
    summary = []
    for f, (name, make) in enumerate(fams.items()):
        rng = np.random.default_rng(2700 + f)
        errs = []
        for i in range(cases):
            net, load, desc = make(rng)
            law, e = row(net, load, 100 * f + i)
            errs.append(e)
            kind = law.method.split(":")[0]
            print(f"| {name} | {desc} | {kind} | {e[0]:+.1f} | {e[1]:+.1f} |")
        a = np.abs(np.array(errs))
        summary.append((name, a))
    print("\n| family | cases | median p90 | worst p90 | median p99 | worst p99 |")
    print("|---|--:|--:|--:|--:|--:|")
    for name, a in summary:
        print(
            f"| {name} | {len(a)} | {np.median(a[:, 0]):.1f} % | {a[:, 0].max():.1f} % | "
            f"{np.median(a[:, 1]):.1f} % | {a[:, 1].max():.1f} % |"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 12)
