"""Benchmark: the discrete-event simulator's speed against Ciw, and its event rate.

1. Customer visits per second on the same open network (Poisson arrivals, 40/s, into a tandem
   M/M/1 -> M/M/2 -> M/M/1, as in ``tests/simulation/test_peer_ciw.py``), qnmodel against Ciw
   measured in the same run (target: ratio >= 100). A visit is one customer's passage through one
   station. Both are run for the same simulated time; their mean response times are compared with
   the exact Jackson-network value (exit status 1 if either is off by more than 5 %).
2. Events per second on a closed network of 10 FCFS stations, N = 20, think time 0
   (target >= 10^7 events/s). An event is an arrival, a think completion or a service completion.

Times are medians of the repeats, measured both as wall-clock time (``time.perf_counter``) and as
CPU time of this process (``time.process_time``): both tools are single-threaded, and on a shared
machine the CPU time is what the code costs. Ratios are given for both.

Run: ``python tests/benchmarks/bench_simulate.py [--repeats 3]`` or
``python tests/benchmarks/run.py simulate``.
"""

from __future__ import annotations

import argparse
import math
import statistics
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


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ciw-time", type=float, default=500.0, help="simulated seconds for Ciw")
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
    rng = np.random.default_rng(0)
    demands = rng.uniform(0.002, 0.01, size=10)
    cnet = qn.Network.from_demands(demands.tolist())
    N = 20
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
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
