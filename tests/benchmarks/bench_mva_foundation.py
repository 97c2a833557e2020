"""Benchmark: exact single-class MVA, K = 100 stations, N = 10,000 jobs.

qnmodel computes the **whole curve** n = 1..N in one call; the peers are timed on the
**last population only** (that is all they return):

* GNU Octave ``queueing``: ``qncsmva(N, D, 1, 1, Z)``, timed inside Octave with tic/toc
  (median of the repeats), and separately the whole ``octave-cli`` process (start-up,
  ``pkg load queueing``, one solve) timed from Python;
* line-solver (PyPI): ``line_solver.api.pfqn.mva.pfqn_mva(L, N, Z)``, median of the repeats
  (its import time is reported separately).

Ratios are printed as peer time / qnmodel time (> 1: qnmodel faster). The issue's target:
the whole curve no slower than the fastest peer's single point. X(N) of every tool is
compared, and the exit status is 1 if any peer disagrees beyond 1e-9 relative.

Run: ``python tests/benchmarks/bench_mva_foundation.py [--repeats 3]`` or, for every
benchmark, ``python tests/benchmarks/run.py`` (``make bench``).
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, "") and "tests" not in sys.modules:
    # run as a script: make the repository's tests/ importable (ciw ships a "tests" too)
    sys.path.append(str(ROOT))
    _tests = types.ModuleType("tests")
    _tests.__path__ = [str(ROOT / "tests")]
    sys.modules["tests"] = _tests

import qnmodel as qn  # noqa: E402
from tests.octave import octave_missing_reason, octave_vec, parse_tagged, run_octave  # noqa: E402

K = 100
N = 10_000
Z = 0.5
SEED = 0
AGREE_RTOL = 1e-9


def demands() -> np.ndarray:
    """100 demands, uniform in [1, 10] ms, seed 0."""
    return np.random.default_rng(SEED).uniform(0.001, 0.010, size=K)


def median_of(fn, repeats: int) -> tuple[float, object]:
    """Median seconds of ``repeats`` calls, and the last result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def time_qnmodel(D, repeats):
    net = qn.Network.from_demands(D, think_time=Z)
    t_all, res = median_of(lambda: qn.mva(net, N), repeats)
    t_last, res_last = median_of(lambda: qn.mva(net, N, keep="last"), repeats)
    assert res.n.size == N and res_last.n.size == 1
    return t_all, t_last, float(res.throughput[-1])


def time_octave(D, repeats):
    reason = octave_missing_reason("queueing")
    if reason is not None:
        return {"skipped": reason}
    vec = octave_vec(D)
    script = (
        "pkg load queueing\n"
        f"D = {vec}; ts = zeros(1, {repeats});\n"
        f"for r = 1:{repeats}\n"
        f"  tic; [U R Q X] = qncsmva({N}, D, ones(size(D)), ones(size(D)), {Z!r}); ts(r) = toc;\n"
        "end\n"
        'printf("median %.17g\\n", median(ts)); printf("X %.17g\\n", X(1));\n'
    )
    out = parse_tagged(run_octave(script))
    one = (
        f"pkg load queueing\nD = {vec};\n"
        f"[U R Q X] = qncsmva({N}, D, ones(size(D)), ones(size(D)), {Z!r});\n"
        'printf("X %.17g\\n", X(1));\n'
    )
    t0 = time.perf_counter()
    run_octave(one)
    whole = time.perf_counter() - t0
    return {"solve": float(out["median"][0]), "process": whole, "X": float(out["X"][0])}


def time_line_solver(D, repeats):
    t0 = time.perf_counter()
    try:
        from line_solver.api.pfqn.mva import pfqn_mva
    except ImportError as exc:
        return {"skipped": f"line-solver is not installed ({exc}); pip install line-solver"}
    t_import = time.perf_counter() - t0
    L = D.reshape(-1, 1)
    t, out = median_of(lambda: pfqn_mva(L, np.array([N]), np.array([Z])), repeats)
    return {"solve": t, "import": t_import, "X": float(np.asarray(out[0]).ravel()[0])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=11)
    args = ap.parse_args(argv)
    D = demands()

    t_all, t_last, X_ours = time_qnmodel(D, args.repeats)
    octave = time_octave(D, args.repeats)
    line = time_line_solver(D, args.repeats)

    print(f"exact single-class MVA: K={K}, N={N}, Z={Z} s, demands U[1, 10] ms (seed {SEED}),")
    print(f"median of {args.repeats}; ratio = peer time / qnmodel whole-curve time")
    print(f"  qnmodel mva, whole curve n=1..N       {t_all:9.4f} s   X(N) = {X_ours:.15g}")
    print(f"  qnmodel mva, keep='last'              {t_last:9.4f} s")
    status = 0
    peer_points = []
    for name, r in (("Octave qncsmva (tic/toc)", octave), ("line-solver pfqn_mva", line)):
        if "skipped" in r:
            print(f"  {name:<37} skipped: {r['skipped']}")
            continue
        rel = abs(r["X"] - X_ours) / X_ours
        ok = rel <= AGREE_RTOL
        status |= 0 if ok else 1
        peer_points.append(r["solve"])
        print(
            f"  {name:<37} {r['solve']:9.4f} s   ratio {r['solve'] / t_all:6.2f}   "
            f"X(N) rel. diff {rel:.1e}{'' if ok else '  DISAGREES'}"
        )
        if "process" in r:
            print(
                f"  {'  Octave whole process (start+load+1)':<37} {r['process']:9.4f} s   "
                f"ratio {r['process'] / t_all:6.2f}"
            )
        if "import" in r:
            print(f"  {'  line-solver import':<37} {r['import']:9.4f} s")
    if peer_points:
        fastest = min(peer_points)
        verdict = "met" if t_all <= fastest else "NOT met"
        print(
            f"  target (whole curve <= fastest peer's single point): {verdict} "
            f"({t_all:.4f} s vs {fastest:.4f} s, ratio {fastest / t_all:.2f})"
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
