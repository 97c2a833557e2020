"""Benchmark: vectorised what-if sweeps against a per-point Python loop.

Grid: the networked RAID of Cui et al. (2006), link rate x master cache hit rate, N = 1..64.

1. ABA + BJB over 10^5 grid points (1000 link rates x 100 hit rates): ``qnmodel.whatif.sweep``
   end to end (demands, bounds, tidy DataFrame of 6.4 million rows) and the kernel
   ``solve_grid`` alone. Target: <= 1 s for the sweep.
2. Exact MVA over 10^4 grid points (100 x 100), N = 1..64.

The peer is the obvious per-point loop measured in the same run: build the system with
``NetworkedRAID.replace``, its ``Network``, then ``qnmodel.bounds(net, 64, "aba")`` and
``"bjb"`` (or ``qnmodel.mva(net, 64)``). The loop runs on a sample of grid points and its
time per point is scaled to the whole grid. Ratios are loop time / sweep time (> 1: the
sweep is faster). Every sampled point is also compared with the sweep's row; the exit
status is 1 if any differs by more than 1e-12 relative. Speed is reported, never asserted.

Run: ``python tests/benchmarks/bench_sweep.py [--repeats 3]``
(or ``python tests/benchmarks/run.py sweep``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.append(str(Path(__file__).resolve().parents[2]))

import qnmodel as qn  # noqa: E402
from qnmodel.models.storage import NetworkedRAID  # noqa: E402
from qnmodel.whatif import solve_grid, sweep  # noqa: E402

NMAX = 64
RTOL = 1e-12


def best_of(fn, repeats: int):
    best, out = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def loop_per_point(base, rates, hits, sample, what):
    """Seconds per point of the per-point loop, and its results for the sampled points."""
    results = {}
    t = time.perf_counter()
    for i, j in sample:
        net = base.replace(link_rate=rates[i], master_cache_hit=hits[j]).network()
        if what == "bounds":
            results[(i, j)] = (qn.bounds(net, NMAX, "aba"), qn.bounds(net, NMAX, "bjb"))
        else:
            results[(i, j)] = qn.mva(net, NMAX)
    return (time.perf_counter() - t) / len(sample), results


def check(df, n_hits, results, what) -> float:
    worst = 0.0
    for (i, j), res in results.items():
        row = (i * n_hits + j) * NMAX
        part = df.iloc[row : row + NMAX]
        if what == "bounds":
            pairs = [
                (part[f"{m}_{f}"].to_numpy(), getattr(b, f))
                for m, b in zip(("aba", "bjb"), res, strict=True)
                for f in (
                    "throughput_lower",
                    "throughput_upper",
                    "response_time_lower",
                    "response_time_upper",
                )
            ]
        else:
            pairs = [
                (part.throughput_mva.to_numpy(), res.throughput),
                (part.response_time_mva.to_numpy(), res.response_time),
            ]
        for a, b in pairs:
            worst = max(worst, float(np.max(np.abs(a - b) / np.abs(b))))
    return worst


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sample", type=int, default=400, help="grid points timed in the loop")
    args = ap.parse_args(argv)
    base = NetworkedRAID.cui2006()
    rng = np.random.default_rng(0)
    status = 0
    print(f"{'case':<46}{'sweep':>10}{'loop (scaled)':>16}{'ratio':>9}  target")
    for what, n_rates, n_hits in (("bounds", 1000, 100), ("mva", 100, 100)):
        rates = np.linspace(1e6, 1.25e9, n_rates)
        hits = np.linspace(0.0, 0.95, n_hits)
        methods = ("aba", "bjb") if what == "bounds" else ("mva",)
        t_sweep, df = best_of(
            lambda r=rates, h=hits, m=methods: sweep(
                base, N=NMAX, link_rate=r, master_cache_hit=h, methods=m
            ),
            args.repeats,
        )
        P = n_rates * n_hits
        sample = [
            (int(rng.integers(n_rates)), int(rng.integers(n_hits))) for _ in range(args.sample)
        ]
        per_point, results = loop_per_point(base, rates, hits, sample, what)
        t_loop = per_point * P
        label = f"{'ABA+BJB' if what == 'bounds' else 'exact MVA'}, {P:.0e} points x N=1..{NMAX}"
        target = "<= 1 s" if what == "bounds" else "(report)"
        print(f"{label:<46}{t_sweep:>9.3f}s{t_loop:>15.1f}s{t_loop / t_sweep:>9.0f}  {target}")
        if what == "bounds":
            D = np.array(list(base.demands().values()))[None, :].repeat(P, axis=0)
            t_kernel, _ = best_of(
                lambda D=D, m=methods: solve_grid(D, np.arange(1, NMAX + 1), methods=m),
                args.repeats,
            )
            print(f"{'  of which the kernel solve_grid alone':<46}{t_kernel:>9.3f}s")
        worst = check(df, n_hits, results, what)
        print(f"{'  worst relative difference, sampled points':<46}{worst:>10.1e}")
        if worst > RTOL:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
