"""Benchmark: solver breadth and speed against Octave ``queueing`` and line-solver.

Every peer is measured in the same run, on the same inputs, and each row prints the
ratio peer time / qnmodel time (> 1: qnmodel faster) next to the issue's target:

1. single-class exact MVA, K = 100, N = 10,000: qnmodel's **whole curve** n = 1..N
   against line-solver ``pfqn_mva`` and Octave ``qncsmva`` on the **last point alone**
   (targets: ratio >= 5 against line-solver, >= 50 against Octave);
2. exact multi-class MVA, C = 3, N = (20, 20, 20), K = 10, against line-solver
   ``pfqn_mva`` (target >= 20) and Octave ``qncmmva`` (target >= 50);
3. Schweitzer AMVA, C = 4, 10^4 jobs per class, K = 100: absolute target <= 50 ms;
   Octave ``qncmmvabs`` and line-solver ``pfqn_bs`` at the same tolerance for reference;
4. load-dependent MVA with one 32-server station: the complement recursion at
   N = 300 .. 10^5, the log-space convolution at N = 4000 and Octave ``qncscmva`` (conditional
   MVA) at N = 300, for reference (no target); and with a 32- and an 8-server station;
5. N = 10^6, K = 1000 single-class exact MVA (``keep="last"``): finite results, and the
   time per N*K job-station step fitted over a sweep of N and K (linear: constant slope).

Octave is timed **inside Octave** with tic/toc (median of the repeats), which excludes its
start-up and ``pkg load``; line-solver and qnmodel are timed with ``time.perf_counter``
(median of the repeats; qnmodel and line-solver called in turn for the single-class case),
imports excluded. Ratios are ratios of medians. Results of every tool are compared; the
exit status is 1 if a peer disagrees (exact: 1e-9 relative; Schweitzer: 1e-6).

qnmodel uses its compiled kernels when available (the header says which); if they are
not installed and ``cmake`` is on PATH, they are built into ``build/kernels-bench``.
``--numpy`` forces the pure-numpy paths instead.

Run: ``python tests/benchmarks/bench_solvers.py [--repeats 5] [--numpy]`` or
``python tests/benchmarks/run.py solvers``.
"""

from __future__ import annotations

import argparse
import contextlib
import platform
import shutil
import subprocess
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

from qnmodel.model import Network  # noqa: E402
from qnmodel.solvers import _kernels, amva, mva, mva_multiclass  # noqa: E402
from tests._nets import pf_net  # noqa: E402
from tests.octave import octave_missing_reason, octave_vec, parse_tagged, run_octave  # noqa: E402

SEED = 0
EXACT_RTOL = 1e-9
AMVA_RTOL = 1e-6
AMVA_TOL = 1e-8


def median_of(fn, repeats: int):
    """(median seconds, result) of ``repeats`` calls; the median is what the table reports."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def interleaved(fns, repeats: int):
    """Median seconds and last result of each function, called in turn ``repeats`` times,
    so that a change of load on the host affects every tool alike."""
    times = [[] for _ in fns]
    outs = [None] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            outs[i] = fn()
            times[i].append(time.perf_counter() - t0)
    return [float(np.median(t)) for t in times], outs


def ensure_kernels() -> None:
    if _kernels.available():
        return
    cmake = shutil.which("cmake")
    if cmake is None:
        return
    build = ROOT / "build" / "kernels-bench"
    src = ROOT / "qnmodel" / "solvers" / "_csrc"
    for cmd in (
        [cmake, "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
        [cmake, "--build", str(build)],
    ):
        if subprocess.run(cmd, capture_output=True, check=False).returncode != 0:
            return
    for p in build.glob("*qnkernels*"):
        if p.suffix in (".so", ".dylib", ".dll") and _kernels.load(p):
            return


def line_solver():
    try:
        t0 = time.perf_counter()
        from line_solver.api.pfqn.mva import pfqn_bs, pfqn_mva
    except Exception as exc:  # noqa: BLE001 - any failure means the peer is missing
        return None, f"line-solver not importable: {exc}"
    return (pfqn_mva, pfqn_bs, time.perf_counter() - t0), None


def octave_matrix(A) -> str:
    return "[" + ";".join(octave_vec(r)[1:-1] for r in np.atleast_2d(A)) + "]"


def octave_timed(setup: str, call: str, outputs: dict[str, str], repeats: int):
    """Time ``call`` inside Octave (tic/toc, median of repeats); print named outputs."""
    reason = octave_missing_reason("queueing")
    if reason is not None:
        return None, reason
    lines = ["pkg load queueing", "warning('off', 'all');", setup, f"ts = zeros(1, {repeats});"]
    lines += [f"for r = 1:{repeats}", f"  tic; {call} ts(r) = toc;", "end"]
    lines.append("printf('median %.17g\\n', median(ts));")
    for tag, expr in outputs.items():
        lines.append(f"printf('{tag} '); printf('%.17g ', {expr}); printf('\\n');")
    out = parse_tagged(run_octave("\n".join(lines) + "\n", timeout=3600))
    return out, None


class Table:
    def __init__(self):
        self.rows = []
        self.bad = []

    def add(self, case, tool, seconds, ratio="", target="", note=""):
        self.rows.append((case, tool, seconds, ratio, target, note))

    def check(self, what, a, b, rtol):
        err = float(np.max(np.abs(np.asarray(a) / np.asarray(b) - 1)))
        if not err <= rtol:
            self.bad.append(f"{what}: max relative difference {err:.3g} > {rtol:g}")
        return err

    def print(self):
        head = ("case", "tool", "time", "peer/qnmodel", "target", "note")
        cells = [
            (c, t, "-" if s is None else f"{s * 1e3:.3f} ms", r, g, n)
            for c, t, s, r, g, n in self.rows
        ]
        widths = [max(len(str(x[i])) for x in [head, *cells]) for i in range(6)]
        line = " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))
        print(line)
        print("-+-".join("-" * w for w in widths))
        for row in cells:
            print(" | ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)))


def ratio(peer, ours):
    return f"{peer / ours:.1f}x" if peer is not None and ours else ""


def bench_single(tab: Table, repeats: int, ls):
    K, N, Z = 100, 10_000, 0.5
    D = np.random.default_rng(SEED).uniform(0.001, 0.010, K)
    net = Network.from_demands(list(D), think_time=Z)
    case = "1-class exact K=100 N=1e4"
    reps = max(21, repeats)
    fns = [lambda: mva(net, N)]
    if ls is not None:
        pfqn_mva = ls[0]
        fns.append(lambda: pfqn_mva(D.reshape(-1, 1), np.array([N]), np.array([Z])))
    secs, outs = interleaved(fns, reps)
    t_all, res = secs[0], outs[0]
    tab.add(case, "qnmodel mva, whole curve", t_all, note=f"median of {reps}")
    x = res.throughput[-1]
    if ls is not None:
        t_ls = secs[1]
        tab.check("line-solver pfqn_mva X(N)", x, np.ravel(outs[1][0])[0], EXACT_RTOL)
        tab.add(case, "line-solver pfqn_mva, last point", t_ls, ratio(t_ls, t_all), ">= 5x")
    o, why = octave_timed(
        f"D = {octave_vec(D)};",
        f"[U R Q X] = qncsmva({N}, D, ones(size(D)), ones(size(D)), {Z!r});",
        {"X": "X(1)"},
        max(11, repeats),
    )
    if o is None:
        tab.add(case, "octave qncsmva", None, note=why)
    else:
        tab.check("octave qncsmva X(N)", x, o["X"][0], EXACT_RTOL)
        t = float(o["median"][0])
        tab.add(case, "octave qncsmva, last point", t, ratio(t, t_all), ">= 50x", "tic/toc")


def bench_load_dependent(tab: Table, repeats: int, quick: bool):
    """One 32-server station (the bottleneck) and three single-server queues, think time 1 s:
    the O(N (K + m)) complement recursion against the O(N^2) log-space convolution, and
    Octave's conditional MVA ``qncscmva`` (the multi-server station given as its rate
    table; it costs O(N^2) too: 2.4 s at N = 300, 440 s at N = 4000 on the reference host)."""
    from qnmodel.solvers import mva_load_dependent

    D, m, Z = [3.2, 0.05, 0.01, 0.04], 32, 1.0
    net = Network.from_demands(D, servers=[m, 1, 1, 1], think_time=Z)
    case = "1-class, one 32-server station"
    n_oct, n_conv = 300, (1_000 if quick else 4_000)
    for N in (n_oct, n_conv, 10_000, 100_000):
        t, r = median_of(lambda N=N: mva_load_dependent(net, N), max(5, repeats))
        jobs = float(r.queue_length[-1].sum() + r.throughput[-1] * Z)
        tab.add(
            case, f"qnmodel complement N={N:.0e}", t, "", "", f"sum Q + XZ - N = {jobs - N:.1e}"
        )
        if N == n_conv:
            t_c, rc = median_of(
                lambda N=N: mva_load_dependent(net, N, algorithm="convolution"), 1 if quick else 3
            )
            tab.check("complement vs convolution Q", r.queue_length, rc.queue_length, 1e-9)
            tab.add(case, f"qnmodel convolution N={N:.0e}", t_c, ratio(t_c, t), "", "log space")
        if N == n_oct:
            o, why = octave_timed(
                f"N = {N}; S = {octave_vec(D[1:])}; Sld = {D[0]!r} ./ min(1:N, {m});",
                f"[U R Q X] = qncscmva(N, S, Sld, ones(1, 4), {Z!r});",
                {"X": "X(end)"},
                1 if quick else 3,
            )
            if o is None:
                tab.add(case, "octave qncscmva", None, note=why)
            else:
                tab.check("octave qncscmva X(N)", r.throughput[-1], o["X"][0], EXACT_RTOL)
                t_o = float(o["median"][0])
                tab.add(case, f"octave qncscmva N={N:.0e}", t_o, ratio(t_o, t), "", "tic/toc")


def bench_two_multiserver(tab: Table, repeats: int, quick: bool):
    """A 32-server and an 8-server station: the complement recursion runs one pass per
    subset of the two (four passes), against the log-space convolution."""
    from qnmodel.solvers import mva_load_dependent

    net = Network.from_demands([3.2, 0.4, 0.05, 0.01], servers=[32, 8, 1, 1], think_time=1.0)
    case = "1-class, 32- and 8-server stations"
    n_conv = 1_000 if quick else 4_000
    for N in (n_conv, 10_000, 100_000):
        t, r = median_of(lambda N=N: mva_load_dependent(net, N), max(5, repeats))
        jobs = float(r.queue_length[-1].sum() + r.throughput[-1] * 1.0)
        tab.add(
            case, f"qnmodel complement N={N:.0e}", t, "", "", f"sum Q + XZ - N = {jobs - N:.1e}"
        )
        if N == n_conv:
            t_c, rc = median_of(
                lambda N=N: mva_load_dependent(net, N, algorithm="convolution"), 1 if quick else 3
            )
            tab.check(
                "2 stations: complement vs convolution Q", r.queue_length, rc.queue_length, 1e-9
            )
            tab.add(case, f"qnmodel convolution N={N:.0e}", t_c, ratio(t_c, t), "", "log space")


def bench_multiclass(tab: Table, repeats: int, ls):
    pop = np.array([20, 20, 20])
    D = np.random.default_rng(SEED + 1).uniform(0.001, 0.010, (3, 10))
    case = "3-class exact (20,20,20) K=10"
    net = pf_net(D, pop)  # PS where the classes' demands differ: the peers' product form
    t_q, res = median_of(lambda: mva_multiclass(net), repeats)
    tab.add(case, "qnmodel mva_multiclass", t_q)
    if ls is not None:
        pfqn_mva = ls[0]
        t_ls, out = median_of(lambda: pfqn_mva(D.T, pop, np.zeros(3)), 3)
        tab.check("line-solver pfqn_mva X", res.throughput, np.ravel(out[0]), EXACT_RTOL)
        tab.add(case, "line-solver pfqn_mva", t_ls, ratio(t_ls, t_q), ">= 20x")
    o, why = octave_timed(
        f"D = {octave_matrix(D)};",
        "[U R Q X] = qncmmva([20 20 20], D);",
        {"X": "X(:,1)'"},
        3,
    )
    if o is None:
        tab.add(case, "octave qncmmva", None, note=why)
    else:
        tab.check("octave qncmmva X", res.throughput, o["X"], EXACT_RTOL)
        t = float(o["median"][0])
        tab.add(case, "octave qncmmva", t, ratio(t, t_q), ">= 50x", "tic/toc")


def bench_schweitzer(tab: Table, repeats: int, ls):
    pop = np.full(4, 10_000)
    D = np.random.default_rng(SEED + 2).uniform(0.001, 0.010, (4, 100))
    case = "Schweitzer C=4 N=1e4/class K=100"
    net = pf_net(D, pop)
    t_q, res = median_of(lambda: amva(net, tol=AMVA_TOL), repeats)
    tab.add(case, "qnmodel amva", t_q, "", "<= 50 ms", f"{res.iterations[0]} iterations")
    if ls is not None:
        pfqn_bs = ls[1]
        t_ls, out = median_of(
            lambda: pfqn_bs(D.T, pop, np.zeros(4), tol=AMVA_TOL, maxiter=1_000_000), 1
        )
        tab.check("line-solver pfqn_bs X", res.throughput, np.ravel(out[0]), AMVA_RTOL)
        tab.add(case, "line-solver pfqn_bs", t_ls, ratio(t_ls, t_q), "", f"{out[4]} iterations")
    o, why = octave_timed(
        f"D = {octave_matrix(D)};",
        f"[U R Q X] = qncmmvabs([1e4 1e4 1e4 1e4], D, ones(4,100), ones(1,100), "
        f"zeros(1,4), {AMVA_TOL!r}, 1000000);",
        {"X": "X(:,1)'"},
        1,
    )
    if o is None:
        tab.add(case, "octave qncmmvabs", None, note=why)
    else:
        tab.check("octave qncmmvabs X", res.throughput, o["X"], AMVA_RTOL)
        t = float(o["median"][0])
        tab.add(case, "octave qncmmvabs", t, ratio(t, t_q), "", "tic/toc")


def bench_large(tab: Table, repeats: int, quick: bool):
    rng = np.random.default_rng(SEED + 3)
    D = rng.uniform(0.001, 0.010, 1000)
    case = "1-class exact keep=last"
    sizes = [(250_000, 1000), (500_000, 1000), (1_000_000, 1000), (1_000_000, 250)]
    sizes += [(1_000_000, 500)]
    if quick:
        sizes = [(s[0] // 10, s[1]) for s in sizes]
    nk, secs = [], []
    for N, K in sizes:
        net = Network.from_demands(list(D[:K]))
        t, r = median_of(lambda net=net, N=N: mva(net, N, keep="last"), max(1, repeats // 3))
        finite = bool(np.all(np.isfinite(r.queue_length)) and np.isfinite(r.throughput).all())
        if not finite:
            tab.bad.append(f"N={N} K={K}: non-finite results")
        xs = float(r.throughput[0] * D[:K].max())
        tab.add(case, f"qnmodel N={N:.0e} K={K}", t, "", "", f"finite={finite} X*Dmax={xs:.6f}")
        nk.append(N * K)
        secs.append(t)
    slope, icpt = np.polyfit(np.array(nk, float), np.array(secs), 1)
    pred = slope * np.array(nk, float) + icpt
    r2 = 1 - np.sum((np.array(secs) - pred) ** 2) / np.sum((secs - np.mean(secs)) ** 2)
    tab.add(
        case,
        "fit t = a + b N K",
        None,
        "",
        "linear",
        f"b = {slope * 1e9:.3f} ns per N*K, a = {icpt * 1e3:.1f} ms, R^2 = {r2:.4f}",
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--numpy", action="store_true", help="force the pure-numpy paths")
    p.add_argument("--quick", action="store_true", help="a tenth of the large-N sizes")
    args = p.parse_args(argv)
    ctx = _kernels.force_numpy() if args.numpy else contextlib.nullcontext()
    if not args.numpy:
        ensure_kernels()
    ls, why = line_solver()
    with ctx:
        print(f"qnmodel kernels: {_kernels.status()}")
        print(f"host: {platform.node()} {platform.machine()} python {platform.python_version()}")
        if ls is None:
            print(f"line-solver: {why}")
        else:
            print(f"line-solver import: {ls[2]:.2f} s (excluded)")
        tab = Table()
        bench_single(tab, args.repeats, ls)
        bench_load_dependent(tab, args.repeats, args.quick)
        bench_two_multiserver(tab, args.repeats, args.quick)
        bench_multiclass(tab, args.repeats, ls)
        bench_schweitzer(tab, args.repeats, ls)
        bench_large(tab, args.repeats, args.quick)
        tab.print()
    for b in tab.bad:
        print(f"DISAGREEMENT: {b}", file=sys.stderr)
    return 1 if tab.bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
