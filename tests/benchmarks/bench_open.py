"""Benchmark: open, mixed and general load-dependent solvers against Octave ``queueing``
and line-solver.

Each row prints qnmodel's median time, the peer's (Octave: timed inside Octave with
tic/toc, start-up and ``pkg load`` excluded; line-solver: in this process) and the ratio
peer / qnmodel (> 1: qnmodel faster):

1. open single class, K = 1000 single-server stations, a sweep of 10^4 arrival rates
   in one call against ``qnos`` called once per rate (100 rates timed, scaled to 10^4);
2. open multi-class, K = 1000 stations, C = 100 classes, 10^4 rate vectors (the base
   vector scaled) in one call (issue 12 target: <= 50 ms) against ``qnom`` (formerly
   ``qnopenmulti``) called once per rate vector (2 vectors timed, scaled to 10^4);
3. mixed: 3 closed classes of 20 jobs and 10 open classes, K = 10, against ``qnmix``
   and line-solver's ``pfqn_mvamx`` (its pure-Python MVA for mixed networks);
4. exact MVA with 8 general load-dependent stations (rate tables) and 2 queues, at
   N = 10^4 (qnmodel's log-space convolution, O(L N^2) in the compiled kernels) against
   ``qncsmvald`` (O(K N^2) m-code; 30 to 100 s at N = 10^4 on this machine);
5. one general load-dependent station (the complement recursion, O(N (K + L))) at
   N = 1000 against ``qncsmvald`` and at N = 10^4 alone.

Results are compared (1e-9 relative); the exit status is 1 if a peer disagrees.
Run: ``python tests/benchmarks/bench_open.py`` or ``python tests/benchmarks/run.py open``.
"""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, "") and "tests" not in sys.modules:
    sys.path.append(str(ROOT))
    _tests = types.ModuleType("tests")  # this repository's tests/ (ciw ships a "tests" too)
    _tests.__path__ = [str(ROOT / "tests")]
    sys.modules["tests"] = _tests

import qnmodel as qn  # noqa: E402
from qnmodel.solvers.mva_ld_general import mva_ld_general  # noqa: E402
from tests._nets import mixed_net  # noqa: E402
from tests.octave import octave_missing_reason, octave_vec, parse_tagged, run_octave  # noqa: E402

PRELUDE = "1;\npkg load queueing\nwarning('off', 'all');\n"


def _median_time(fn, repeats: int = 5) -> float:
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def _row(case: str, t_q: float, t_o: float) -> None:
    print(f"{case:52s} {t_q * 1e3:9.1f}ms {t_o * 1e3:9.1f}ms {t_o / t_q:8.1f}")


def _mat(M) -> str:
    return "[" + "; ".join(octave_vec(r)[1:-1] for r in np.atleast_2d(M)) + "]"


def main(argv: list[str]) -> int:
    rng = np.random.default_rng(7)
    status = 0
    have_octave = octave_missing_reason("queueing") is None
    print(f"{'case':52s} {'qnmodel':>10s} {'Octave':>10s} {'ratio':>8s}")

    # 1. open sweep
    K, P = 1000, 10_000
    D = rng.uniform(1e-5, 1e-4, size=K)
    net = qn.Network.from_demands(D)
    lam = np.linspace(0.001 / D.max(), 0.99 / D.max(), P)
    t_q = _median_time(lambda: qn.open_network(net, lam))
    res = qn.open_network(net, lam)
    idx = np.linspace(0, P - 1, 100).astype(int)
    t_o = float("nan")
    if have_octave:
        script = PRELUDE + f"S = {octave_vec(D)}; V = ones(size(S)); L = {octave_vec(lam[idx])};\n"
        script += "tic; for i = 1:numel(L); [U R Q X] = qnos(L(i), S, V); end; t = toc;\n"
        script += "printf('t %.17g\\n', t * 100);\n"
        script += "for i = [1 50 100]; [U R Q X] = qnos(L(i), S, V);\n"
        script += "  printf('R%d', i); printf(' %.17g', R); printf('\\n'); end\n"
        out = parse_tagged(run_octave(script))
        t_o = float(out["t"][0])
        for i in (1, 50, 100):
            ours = res.residence_time[idx[i - 1]]
            if not np.allclose(ours, out[f"R{i}"], rtol=1e-9, atol=0):
                print(f"   MISMATCH qnos at rate index {i}")
                status = 1
    _row("open, K=1000, 10^4 rates (one call vs qnos per rate)", t_q, t_o)

    # 2. open multi-class sweep
    C, K, P = 100, 1000, 10_000
    Dc = rng.uniform(1e-6, 1e-5, size=(C, K))
    lam1 = rng.uniform(0.5, 1.0, size=C)
    s = np.linspace(0.01, 0.99, P) / (lam1 @ Dc).max()
    rates = s[:, None] * lam1[None, :]
    # product form (PS where the classes' demands differ), as qnom computes
    open_mc = mixed_net(Dc, np.ones(C, dtype=bool), lam1, np.zeros(C, dtype=int))
    t_q = _median_time(lambda: qn.open_network(open_mc, rates))
    res = qn.open_network(open_mc, rates)
    t_o = float("nan")
    if have_octave:
        rows = (0, P // 2, P - 1)
        script = PRELUDE + f"S = {_mat(Dc)};\n"
        for i, p in enumerate(rows):
            lp = rates[p]
            script += f"l{i} = {octave_vec(lp)}; V{i} = repmat((l{i} / sum(l{i})).', 1, {K});\n"
        script += "tic; for i = 0:1; [U R Q X] = qnom(l0, S, V0, ones(1, columns(S))); end;\n"
        script += f"t = toc / 2 * {P}; printf('t %.17g\\n', t);\n"
        for i in range(len(rows)):
            script += f"[U R Q X] = qnom(l{i}, S, V{i}, ones(1, columns(S)));\n"
            script += f"printf('R{i}'); printf(' %.17g', sum(R, 2)); printf('\\n');\n"
        out = parse_tagged(run_octave(script, timeout=1200))
        t_o = float(out["t"][0])
        for i, p in enumerate(rows):
            if not np.allclose(res.response_time[p], out[f"R{i}"], rtol=1e-9, atol=0):
                print(f"   MISMATCH qnom at sweep row {p}")
                status = 1
    _row("open, K=1000, C=100, 10^4 rate vectors (qnom x 10^4)", t_q, t_o)

    # 3. mixed
    C, K = 13, 10
    Dm = rng.uniform(1e-3, 1e-2, size=(C, K))
    is_open = np.array([False] * 3 + [True] * 10)
    N = np.where(is_open, 0, 20)
    lam = np.where(is_open, 1.0, 0.0)
    lam = lam * 0.6 / (lam @ Dm).max()
    mixed = mixed_net(Dm, is_open, lam, N)
    t_q = _median_time(lambda: qn.mixed_network(mixed))
    res = qn.mixed_network(mixed)
    t_o = float("nan")
    if have_octave:
        script = (
            PRELUDE
            + f"l = {octave_vec(lam)}; N = {octave_vec(N)}; S = {_mat(Dm)}; V = ones(size(S));\n"
        )
        script += "tic; for i = 1:3; [U R Q X] = qnmix(l, N, S, V); end; t = toc / 3;\n"
        script += "printf('t %.17g\\n', t); printf('R');\n"
        script += "printf(' %.17g', reshape(R.', 1, [])); printf('\\n');\n"
        out = parse_tagged(run_octave(script))
        t_o = float(out["t"][0])
        if not np.allclose(res.residence_time.ravel(), out["R"], rtol=1e-9, atol=0):
            print("   MISMATCH qnmix")
            status = 1
    _row("mixed, 3 closed x 20 jobs + 10 open, K=10 (qnmix)", t_q, t_o)
    t_l = float("nan")
    try:
        from line_solver.api.pfqn.mixed import pfqn_mvamx
    except Exception as exc:  # noqa: BLE001 - report any import failure and go on
        print(f"   line-solver not importable: {exc}")
    else:
        Ninf = np.where(is_open, np.inf, N).astype(float)
        Z0 = np.zeros(C)
        t_l = _median_time(lambda: pfqn_mvamx(lam, Dm.T, Ninf, Z0), 3)
        Xl, _Ql, _Ul, Rl, _lG = pfqn_mvamx(lam, Dm.T, Ninf, Z0)
        if not np.allclose(res.residence_time, np.asarray(Rl).T, rtol=1e-9, atol=0):
            print("   MISMATCH line-solver pfqn_mvamx")
            status = 1
    _row("mixed, same model (line-solver pfqn_mvamx)", t_q, t_l)

    # 4. general load-dependent exact MVA
    Nld = 10_000
    Dl = rng.uniform(0.002, 0.01, size=10)
    rm = [np.cumsum(rng.uniform(0.3, 1.0, size=6)) if k < 8 else None for k in range(10)]
    base = qn.Network.from_demands(Dl, think_time=1.0)
    t_q = _median_time(lambda: mva_ld_general(base, Nld, keep="last", rate_multipliers=rm), 3)
    res = mva_ld_general(base, Nld, keep="last", rate_multipliers=rm)
    t_o = float("nan")
    if have_octave:
        j = np.arange(1, Nld + 1)
        rows = [
            np.full(Nld, d) if r is None else d / r[np.minimum(j, r.size) - 1]
            for d, r in zip(Dl, rm, strict=True)
        ]
        script = PRELUDE + f"S = {_mat(np.array(rows))};\n"
        script += f"tic; [U R Q X] = qncsmvald({Nld}, S, ones(1, 10), 1.0); t = toc;\n"
        script += "printf('t %.17g\\nX %.17g\\n', t, X(1));\n"
        out = parse_tagged(run_octave(script, timeout=1800))
        t_o = float(out["t"][0])
        if not out["X"][0] > 0:  # qncsmvald's p(0) = 1 - sum cancels near saturation
            print(
                f"   qncsmvald unstable at N = {Nld}: X = {out['X'][0]:.6g} "
                f"(ours {res.throughput[0]:.6g})"
            )
        elif not np.isclose(res.throughput[0], out["X"][0], rtol=1e-9, atol=0):
            print(f"   MISMATCH qncsmvald: X {res.throughput[0]!r} vs {out['X'][0]!r}")
            status = 1
    _row(f"exact MVA, 8 general LD stations, N={Nld} (qncsmvald)", t_q, t_o)
    # 5. one general load-dependent station (the complement recursion)
    for Nld in (1000, 10_000):
        rm1 = [rm[0]] + [None] * 9
        t0 = time.perf_counter()
        res = mva_ld_general(base, Nld, keep="last", rate_multipliers=rm1)
        t_q = time.perf_counter() - t0
        t_o = float("nan")
        if have_octave and Nld <= 1000:
            j = np.arange(1, Nld + 1)
            rows = [
                np.full(Nld, d) if r is None else d / r[np.minimum(j, r.size) - 1]
                for d, r in zip(Dl, rm1, strict=True)
            ]
            script = PRELUDE + f"S = {_mat(np.array(rows))};\n"
            script += f"tic; [U R Q X] = qncsmvald({Nld}, S, ones(1, 10), 1.0); t = toc;\n"
            script += "printf('t %.17g\\nX %.17g\\n', t, X(1));\n"
            out = parse_tagged(run_octave(script))
            t_o = float(out["t"][0])
            if out["X"][0] > 0 and not np.isclose(res.throughput[0], out["X"][0], rtol=1e-9):
                print(f"   MISMATCH qncsmvald (1 LD): {res.throughput[0]:.17g}, {out['X'][0]:.17g}")
                status = 1
            elif not out["X"][0] > 0:
                print(f"   qncsmvald unstable at N = {Nld}: X = {out['X'][0]:.6g}")
        _row(f"exact MVA, 1 general LD station, N={Nld} (qncsmvald)", t_q, t_o)
    if not have_octave:
        print("   (Octave queueing not installed: peer columns are NaN)")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
