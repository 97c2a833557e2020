"""Error of ``thread_pool`` / ``thread_pool_open`` where the flow-equivalent server is an
approximation (several stations inside the pool, the limit binding).

Against the exact Markov chain of the whole network (``tests/solvers/_threadpool_ctmc.py``):
random closed cases (2-3 single-server stations inside, random demands 0.1-1 s, think time
0.2-3 x the total demand, 1-3 threads, every population T < n <= 8; routing inside either
random -- first station by a Dirichlet draw, leave with probability e in 0.2-1 after each
service -- or in series, each station once) and random open cases with a capacity
(T <= C <= T + 6, offered load lambda sum D in 0.3-1.5). Prints the relative errors of X
and R (median, 90th percentile, worst, share of answers above the chain's) for each
family, and the closed X by thread count.

Run: ``.venv/bin/python tests/accuracy/thread_pool.py [closed_cases] [open_cases]``
(default 200 and 120).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import qnmodel as qn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "solvers"))
from _threadpool_ctmc import solve_pool_ctmc  # noqa: E402


def _routing(rng, K):
    if rng.random() < 0.3:
        return {"series": True}
    return {"a": rng.dirichlet(np.ones(K)), "e": float(rng.uniform(0.2, 1.0))}


def closed_errors(seed: int, cases: int) -> dict[str, np.ndarray]:
    """Relative errors (model / chain - 1) of X and R over every population T < n <= N."""
    rng = np.random.default_rng(seed)
    ex, er, ser, th = [], [], [], []
    for _ in range(cases):
        K = int(rng.integers(2, 4))
        D = rng.uniform(0.1, 1.0, size=K)
        Z = float(rng.uniform(0.2, 3.0) * D.sum())
        T = int(rng.integers(1, 4))
        N = int(rng.integers(T + 1, 9))
        route = _routing(rng, K)
        net = qn.Network([qn.Station(f"s{k}", float(d)) for k, d in enumerate(D)], think_time=Z)
        r = qn.thread_pool(net, N, threads=T)
        assert r.method.startswith("fes (approximate")
        for n in range(T + 1, N + 1):
            c = solve_pool_ctmc(D, T, N=n, Z=Z, **route)
            Rc = n / c.X - Z
            ex.append(r.throughput[n - 1] / c.X - 1)
            er.append(r.response_time[n - 1] / Rc - 1)
            ser.append("series" in route)
            th.append(T)
    return {"X": np.array(ex), "R": np.array(er), "series": np.array(ser), "T": np.array(th)}


def open_errors(seed: int, cases: int) -> dict[str, np.ndarray]:
    """Relative errors of X and R of the open pool with a capacity."""
    rng = np.random.default_rng(seed)
    ex, er, ser = [], [], []
    for _ in range(cases):
        K = int(rng.integers(2, 4))
        D = rng.uniform(0.1, 1.0, size=K)
        T = int(rng.integers(1, 4))
        C = T + int(rng.integers(0, 7))
        lam = float(rng.uniform(0.3, 1.5) / D.sum() * T**0.5)
        route = _routing(rng, K)
        net = qn.Network([qn.Station(f"s{k}", float(d)) for k, d in enumerate(D)])
        r = qn.thread_pool_open(net, lam, threads=T, capacity=C)
        c = solve_pool_ctmc(D, T, lam=lam, capacity=C, **route)
        ex.append(r.throughput / c.X - 1)
        er.append(r.response_time / ((c.busy + c.waiting) / c.X) - 1)
        ser.append("series" in route)
    return {"X": np.array(ex), "R": np.array(er), "series": np.array(ser)}


def _row(name: str, e: np.ndarray) -> str:
    a = np.abs(e) * 100
    return (
        f"| {name} | {a.size} | {np.median(a):.2f} % | {np.percentile(a, 90):.2f} % | "
        f"{a.max():.2f} % | {np.mean(e > 0) * 100:.0f} % |"
    )


def main(closed_cases: int = 200, open_cases: int = 120) -> None:
    c = closed_errors(2026, closed_cases)
    o = open_errors(2027, open_cases)
    print("| relative error | points | median | 90th pct | worst | share over |")
    print("|---|--:|--:|--:|--:|--:|")
    for fam, name in ((True, "in series"), (False, "random routing")):
        cs, os_ = c["series"] == fam, o["series"] == fam
        print(_row(f"closed X, {name}", c["X"][cs]))
        print(_row(f"closed R, {name}", c["R"][cs]))
        print(_row(f"open X (capacity), {name}", o["X"][os_]))
        print(_row(f"open R (capacity), {name}", o["R"][os_]))
    for fam, name in ((True, "in series"), (False, "random routing")):
        for T in (1, 2, 3):
            sel = (c["series"] == fam) & (c["T"] == T)
            print(_row(f"closed X, {name}, T = {T}", c["X"][sel]))


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
