"""Benchmark: the discrete-event simulator's speed against Ciw, and its event rate.

1. Customer visits per second on the same open network (Poisson arrivals, 40/s, into a tandem
   M/M/1 -> M/M/2 -> M/M/1, as in ``tests/simulation/test_peer_ciw.py``), qnmodel against Ciw
   measured in the same run (target: ratio >= 100). A visit is one customer's passage through one
   station. Both are run for the same simulated time; their mean response times are compared with
   the exact Jackson-network value (exit status 1 if either is off by more than 5 %).
2. Events per second on a closed network of 10 FCFS stations, N = 20, think time 0
   (target >= 10^7 events/s). An event is an arrival, a think completion or a service completion.
3. The same network with every station of one discipline (PS, LCFS-PR, HOL and PRIO-PR with two
   classes, FCFS with a finite capacity and blocking): events per second, reported only.

``--baseline DIR`` also measures (2) with another installation of qnmodel (a directory holding
its ``qnmodel`` package, e.g. a copy of an older ``site-packages/qnmodel``), alternating the two
in fresh interpreters, and prints the ratio of the medians: a before/after comparison measured
in one run on the same machine.

Times are medians of the repeats, measured both as wall-clock time (``time.perf_counter``) and as
CPU time of this process (``time.process_time``): both tools are single-threaded, and on a shared
machine the CPU time is what the code costs. Ratios are given for both.

Run: ``python tests/benchmarks/bench_simulate.py [--repeats 3]`` or
``python tests/benchmarks/run.py simulate``.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import qnmodel as qn

LAM = 40.0
S = (0.01, 1 / 30, 0.0125)
M = (1, 2, 1)


def exact_mean() -> float:
    total = 0.0
    for s, m in zip(S, M, strict=True):
        a = LAM * s
        top = a**m / math.factorial(m) / (1 - a / m)
        pw = top / (sum(a**j / math.factorial(j) for j in range(m)) + top)
        total += pw / (m / s - LAM) + s
    return total


def timed(fn, repeats):
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        cpus.append(time.process_time() - c)
        walls.append(time.perf_counter() - w)
    return statistics.median(walls), statistics.median(cpus), out


def run_ciw(t_end: float):
    import ciw

    net = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(rate=LAM), None, None],
        service_distributions=[ciw.dists.Exponential(rate=1 / s) for s in S],
        routing=[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]],
        number_of_servers=list(M),
    )
    ciw.seed(0)
    sim = ciw.Simulation(net)
    sim.simulate_until_max_time(t_end)
    recs = sim.get_all_records()
    first = {r.id_number: r.arrival_date for r in recs if r.node == 1}
    resp = [r.exit_date - first[r.id_number] for r in recs if r.node == 3 and r.id_number in first]
    return len(recs), float(np.mean(resp))


CLOSED_N = 20


def closed_network():
    rng = np.random.default_rng(0)
    return qn.Network.from_demands(rng.uniform(0.002, 0.01, size=10).tolist())


#: the closed benchmark (2) in a fresh interpreter: prints events per CPU second
_CHILD = """
import sys, time, numpy as np, qnmodel as qn
rng = np.random.default_rng(0)
net = qn.Network.from_demands(rng.uniform(0.002, 0.01, size=10).tolist())
x = float(qn.mva(net, 20).throughput[-1])
c = time.process_time()
r = qn.simulate(net, 20, seed=0, replications=2, run_length=2e6 / x, warmup=1.0)
print(r.events / (time.process_time() - c))
"""


def _child_rate(path: str | None) -> float:
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = path
    else:
        env.pop("PYTHONPATH", None)
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                         text=True, check=True)  # fmt: skip
    return float(out.stdout.split()[-1])


def compare(baseline: str, repeats: int) -> None:
    """Events/s CPU of (2) with the baseline installation and with this one, alternated."""
    base, this = [], []
    for _ in range(repeats):
        base.append(_child_rate(baseline))
        this.append(_child_rate(None))
    mb, mt = statistics.median(base), statistics.median(this)
    print(
        f"   baseline {baseline}: {mb:,.0f} events/s CPU; this installation: {mt:,.0f} "
        f"events/s CPU (medians of {repeats}, alternated): ratio this/baseline {mt / mb:.3f}"
    )


def disciplines(repeats: int) -> None:
    """Events per second of (2) with every station of one discipline."""
    demands = np.random.default_rng(0).uniform(0.002, 0.01, size=10)
    two = [qn.ClosedClass("a", N=CLOSED_N // 2, priority=0),
           qn.ClosedClass("b", N=CLOSED_N // 2, priority=1)]  # fmt: skip
    cases = {
        "PS": ({"discipline": "PS"}, None),
        "LCFS-PR": ({"discipline": "LCFS-PR"}, None),
        "HOL, 2 classes": ({"discipline": "HOL"}, two),
        "PRIO-PR, 2 classes": ({"discipline": "PRIO-PR"}, two),
        "FCFS, capacity 3": ({"capacity": 3}, None),
    }
    for label, (kw, classes) in cases.items():
        st = [qn.Station(f"s{k}", float(d), **kw) for k, d in enumerate(demands)]
        net = qn.Network(st, classes=classes) if classes else qn.Network(st)
        N = None if classes else CLOSED_N
        x = float(demands.max()) ** -1  # about the saturated throughput

        def run(net=net, N=N, x=x):
            return qn.simulate(net, N, seed=0, replications=2, run_length=5e5 / x, warmup=1.0)

        w, c, r = timed(run, repeats)
        print(f"   {label:<20}: {r.events / c:,.0f} events/s CPU ({r.events:,} events)")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ciw-time", type=float, default=500.0, help="simulated seconds for Ciw")
    ap.add_argument("--baseline", default=None, help="another qnmodel installation to compare")
    args = ap.parse_args(argv)
    status = 0
    exact = exact_mean()

    # 1. open network, visits per second
    try:
        import ciw  # noqa: F401

        have_ciw = True
    except ImportError:
        have_ciw = False
        print("   Ciw not installed (pip install ciw): ratio not measured")
    net = qn.Network.from_demands(list(S), servers=list(M))
    t_q = 100 * args.ciw_time  # qnmodel simulates 100x longer, so its timing is not noise

    def ours():
        return qn.simulate(
            net, arrival_rate=LAM, seed=0, replications=2, run_length=t_q / 2, warmup=1e-3
        )

    w_q, c_q, r = timed(ours, args.repeats)
    vq_w, vq_c = r.visits / w_q, r.visits / c_q
    err_q = abs(r.response_time[0] / exact - 1)
    print(f"   open tandem M/M/1 -> M/M/2 -> M/M/1, lambda = {LAM}/s; exact R = {exact:.6g} s")
    print(
        f"   qnmodel: {r.visits:,} visits in {w_q:.3f} s wall / {c_q:.3f} s CPU: "
        f"{vq_w:,.0f} visits/s wall, {vq_c:,.0f} visits/s CPU; R = {r.response_time[0]:.6g} s "
        f"({100 * err_q:.2f} % from exact)"
    )
    if err_q > 0.05:
        status = 1
    if have_ciw:
        w_c, c_c, (n_c, mean_c) = timed(lambda: run_ciw(args.ciw_time), args.repeats)
        vc_w, vc_c = n_c / w_c, n_c / c_c
        err_c = abs(mean_c / exact - 1)
        print(
            f"   Ciw    : {n_c:,} visits in {w_c:.3f} s wall / {c_c:.3f} s CPU: "
            f"{vc_w:,.0f} visits/s wall, {vc_c:,.0f} visits/s CPU; R = {mean_c:.6g} s "
            f"({100 * err_c:.2f} % from exact)"
        )
        print(
            f"   ratio qnmodel/Ciw visits per second: {vq_w / vc_w:,.0f}x wall, "
            f"{vq_c / vc_c:,.0f}x CPU (target >= 100x)"
        )
        if err_c > 0.05:
            status = 1

    # 2. closed network of 10 stations, events per second
    cnet = closed_network()
    N = CLOSED_N
    xmva = float(qn.mva(cnet, N).throughput[-1])
    run_length = 2e6 / xmva  # about 2e6 cycles (2e7 events) per replication

    def closed():
        return qn.simulate(cnet, N, seed=0, replications=2, run_length=run_length, warmup=1.0)

    w_e, c_e, rc = timed(closed, args.repeats)
    err_x = abs(rc.throughput[0] / xmva - 1)
    print(
        f"   closed, K = 10 FCFS stations, N = {N}, Z = 0: {rc.events:,} events in {w_e:.3f} s "
        f"wall / {c_e:.3f} s CPU: {rc.events / w_e:,.0f} events/s wall, "
        f"{rc.events / c_e:,.0f} events/s CPU (target >= 1e7); X = {rc.throughput[0]:.6g}/s, "
        f"exact MVA {xmva:.6g}/s ({100 * err_x:.3f} %)"
    )
    if err_x > 0.01:
        status = 1
    if args.baseline:
        compare(args.baseline, max(args.repeats, 3))

    # 3. the other disciplines on the same network
    disciplines(args.repeats)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
