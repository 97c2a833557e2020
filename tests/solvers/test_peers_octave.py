"""Peer cross-check against GNU Octave's ``queueing`` package (M. Marzolla).

60 random seeded networks (single-server queues, multi-server stations, delay stations,
think time), every population n = 1..N, compared to 1e-9 relative:

* ``qncsmva(n, D, 1, m, Z)`` (m = 1 queue, m > 1 multi-server, m = -1 delay) against
  :func:`qnmodel.mva`: X, R_k, Q_k, U_k;
* ``qncsmvald(N, S_ld, 1, Z)`` with S_ld(k, j) = D_k / min(j, m_k) against
  :func:`qnmodel.solvers.mva.mva_load_dependent` for networks with multi-server stations
  at moderate load (the peer's p_k(0) = 1 - sum loses digits near saturation; see
  ``test_mva_ld.py`` for that regime);
* ``qncsbsb`` (Octave's name for balanced job bounds) and ``qncsaba`` against
  :func:`qnmodel.bounds`: all four bound arrays.

Octave's ``qncsbsb`` accepts single-server stations only and ``qncsaba`` no multi-server
stations. Delay stations enter ``qncsbsb`` as extra think time (their product-form
equivalent, which is how qnmodel treats them) with their demand added back to R.
``qncsaba`` takes delay stations natively but uses max(D) over *all* stations for the
saturation bound, delay stations included; that is only a bound when the largest demand is
at a queueing station, so ABA is compared on such networks only.

One Octave process runs every case (a few seconds in all).
"""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.solvers.mva import mva_load_dependent
from tests.octave import octave_missing_reason, octave_vec, parse_tagged, run_octave

from .._ci import IN_CI

# One Octave run serves every test here: keep them on one xdist worker (--dist loadgroup).
pytestmark = [pytest.mark.peer, pytest.mark.xdist_group("octave_queueing")]

N_CASES = 60
# Two double-precision implementations of the same exact recursions, in different operation
# orders: each is within a few ulps per step of the exact value, and the steps damp earlier
# errors. Measured at most 4.9e-15 (22 ulp, the linearizer-free exact curves up to N = 60);
# bound 256 ulp = 5.7e-14 (it was 1e-9, which a 10^5-fold regression passed).
RTOL = 256 * np.finfo(float).eps


def _random_case(i: int) -> dict:
    rng = np.random.default_rng(20_260_000 + i)
    K = int(rng.integers(1, 7))
    N = int(rng.integers(1, 26))
    mix = i % 3  # 0: queues + delays, 1: queues only, 2: anything (multi-servers)
    kinds, servers = [], []
    for _ in range(K):
        u = rng.random()
        if mix == 2 and u < 0.35:
            kinds.append("queue")
            servers.append(int(rng.integers(2, 7)))
        elif mix != 1 and u > 0.8:
            kinds.append("delay")
            servers.append(1)
        else:
            kinds.append("queue")
            servers.append(1)
    if mix == 2 and all(m == 1 for m in servers):
        servers[0] = int(rng.integers(2, 5))
        kinds[0] = "queue"
    demands = 10.0 ** rng.uniform(-2.0, 0.5, size=K)
    Z = 0.0 if rng.random() < 0.4 else float(rng.uniform(0.0, 5.0))
    return {"i": i, "D": demands, "kinds": kinds, "servers": servers, "Z": Z, "N": N}


CASES = [_random_case(i) for i in range(N_CASES)]


def _large_case(i: int) -> dict:
    """Larger networks and populations (single-server queues and delays), last n only."""
    rng = np.random.default_rng(20_261_000 + i)
    K = int(rng.integers(2, 21))
    kinds = ["delay" if rng.random() < 0.15 else "queue" for _ in range(K)]
    kinds[0] = "queue"
    return {
        "i": i,
        "D": 10.0 ** rng.uniform(-3.0, -1.0, size=K),
        "kinds": kinds,
        "servers": [1] * K,
        "Z": float(rng.uniform(0.0, 2.0)),
        "N": int(rng.integers(100, 3001)),
    }


LARGE_CASES = [_large_case(i) for i in range(8)]


def _net(c) -> qn.Network:
    return qn.Network.from_demands(
        c["D"], think_time=c["Z"], kinds=c["kinds"], servers=c["servers"]
    )


def _has_multi(c) -> bool:
    return any(m > 1 for m in c["servers"])


def _has_queue(c) -> bool:
    return any(k == "queue" for k in c["kinds"])


def _aba_comparable(c) -> bool:
    if _has_multi(c) or not _has_queue(c):
        return False
    dq = max(d for d, k in zip(c["D"], c["kinds"], strict=True) if k == "queue")
    dd = [d for d, k in zip(c["D"], c["kinds"], strict=True) if k == "delay"]
    return not dd or max(dd) <= dq


def _ld_comparable(c) -> bool:
    """Multi-server networks whose bottleneck stays below 90% utilisation at N."""
    if not _has_multi(c):
        return False
    res = qn.mva(_net(c), c["N"], keep="last")
    return float(res.utilization[0].max()) < 0.9


_OCTAVE_PRELUDE = r"""1;
function emit(tag, v)
  printf("%s", tag); printf(" %.17g", v); printf("\n");
end
pkg load queueing
warning("off", "qn:numerical-instability");
"""


def _octave_script() -> str:
    lines = [_OCTAVE_PRELUDE]
    for c in CASES:
        i, N = c["i"], c["N"]
        m_oct = [(-1 if k == "delay" else m) for k, m in zip(c["kinds"], c["servers"], strict=True)]
        lines.append(f"D = {octave_vec(c['D'])}; m = {octave_vec(m_oct)}; Z = {c['Z']:.17g};")
        lines.append(f"for n = 1:{N}")
        lines.append("  [U R Q X] = qncsmva(n, D, ones(size(D)), m, Z);")
        for name, expr in (("X", "X(1)"), ("R", "R"), ("Q", "Q"), ("U", "U")):
            lines.append(f'  emit(sprintf("c{i}_n%d_mva_{name}", n), {expr});')
        if not _has_multi(c) and _has_queue(c):
            q = [d for d, k in zip(c["D"], c["kinds"], strict=True) if k == "queue"]
            dd = sum(d for d, k in zip(c["D"], c["kinds"], strict=True) if k == "delay")
            lines.append(
                f"  [xl xu rl ru] = qncsbsb(n, {octave_vec(q)}, ones(1, {len(q)}), "
                f"ones(1, {len(q)}), Z + {dd:.17g});"
            )
            lines.append(f'  emit(sprintf("c{i}_n%d_bjb", n), [xl xu rl ru]);')
        if _aba_comparable(c):
            lines.append("  [xl xu rl ru] = qncsaba(n, D, ones(size(D)), m, Z);")
            lines.append(f'  emit(sprintf("c{i}_n%d_aba", n), [xl xu rl ru]);')
        lines.append("end")
        if _ld_comparable(c):
            rows = []
            for d, k, m in zip(c["D"], c["kinds"], c["servers"], strict=True):
                j = np.arange(1, N + 1)
                cap = j if k == "delay" else np.minimum(j, m)
                rows.append(octave_vec(d / cap))
            lines.append(f"Sld = [{'; '.join(rows)}];")
            lines.append(f"[U R Q X] = qncsmvald({N}, Sld, ones(1, {len(c['D'])}), Z);")
            lines.append(f'emit("c{i}_ld_X", X(1)); emit("c{i}_ld_Q", Q); emit("c{i}_ld_R", R);')
    for c in LARGE_CASES:
        i, N = c["i"], c["N"]
        m_oct = [(-1 if k == "delay" else 1) for k in c["kinds"]]
        lines.append(f"D = {octave_vec(c['D'])}; m = {octave_vec(m_oct)}; Z = {c['Z']:.17g};")
        lines.append(f"[U R Q X] = qncsmva({N}, D, ones(size(D)), m, Z);")
        lines.append(
            f'emit("L{i}_X", X(1)); emit("L{i}_R", R); emit("L{i}_Q", Q); emit("L{i}_U", U);'
        )
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def octave_out() -> dict[str, np.ndarray]:
    reason = octave_missing_reason("queueing")
    if reason is not None:
        msg = f"peer cross-check needs GNU Octave with 'queueing': {reason}"
        if IN_CI:
            pytest.fail(f"{msg} (CI=true: the peer must be installed, see .ci/run)")
        pytest.skip(msg)
    return parse_tagged(run_octave(_octave_script(), timeout=600))


def _stack(out, i, N, suffix):
    return np.array([out[f"c{i}_n{n}_{suffix}"] for n in range(1, N + 1)])


def test_case_mix_is_broad_enough():
    """The random set really covers every station kind, think time and >= 50 networks."""
    assert len(CASES) >= 50
    assert sum(_has_multi(c) for c in CASES) >= 15
    assert sum("delay" in c["kinds"] for c in CASES) >= 10
    assert sum(c["Z"] > 0 for c in CASES) >= 20
    assert sum(_ld_comparable(c) for c in CASES) >= 5


def test_mva_matches_octave_qncsmva(octave_out):
    """X, R_k, Q_k, U_k for every n = 1..N of all 60 networks, to 1e-9 relative."""
    for c in CASES:
        i, N = c["i"], c["N"]
        ours = qn.mva(_net(c), N)
        msg = f"case {i}: {_net(c)!r}"
        np.testing.assert_allclose(
            ours.throughput, _stack(octave_out, i, N, "mva_X")[:, 0], rtol=RTOL, err_msg=msg
        )
        np.testing.assert_allclose(
            ours.residence_time, _stack(octave_out, i, N, "mva_R"), rtol=RTOL, err_msg=msg
        )
        np.testing.assert_allclose(
            ours.queue_length, _stack(octave_out, i, N, "mva_Q"), rtol=RTOL, err_msg=msg
        )
        np.testing.assert_allclose(
            ours.utilization, _stack(octave_out, i, N, "mva_U"), rtol=RTOL, err_msg=msg
        )


def test_load_dependent_matches_octave_qncsmvald(octave_out):
    """The log-space load-dependent solver against the peer's load-dependent MVA."""
    compared = 0
    for c in CASES:
        if not _ld_comparable(c):
            continue
        i, N = c["i"], c["N"]
        ours = mva_load_dependent(_net(c), N, keep="last")
        msg = f"case {i}: {_net(c)!r}"
        np.testing.assert_allclose(
            ours.throughput, octave_out[f"c{i}_ld_X"], rtol=RTOL, err_msg=msg
        )
        np.testing.assert_allclose(
            ours.queue_length[0], octave_out[f"c{i}_ld_Q"], rtol=RTOL, err_msg=msg
        )
        np.testing.assert_allclose(
            ours.residence_time[0], octave_out[f"c{i}_ld_R"], rtol=RTOL, err_msg=msg
        )
        compared += 1
    assert compared >= 5


@pytest.mark.parametrize("method", ["bjb", "aba"])
def test_bounds_match_octave(octave_out, method):
    """All four bound arrays over n = 1..N (qncsbsb for BJB, qncsaba for ABA)."""
    compared = 0
    for c in CASES:
        i, N = c["i"], c["N"]
        if f"c{i}_n1_{method}" not in octave_out:
            continue
        ours = qn.bounds(_net(c), N, method=method)
        peer = _stack(octave_out, i, N, method)
        if method == "bjb":  # delay demands were passed as think time: add them back to R
            dd = sum(d for d, k in zip(c["D"], c["kinds"], strict=True) if k == "delay")
            peer[:, 2:] += dd
        msg = f"case {i}: {_net(c)!r}"
        for col, field in enumerate(
            ("throughput_lower", "throughput_upper", "response_time_lower", "response_time_upper")
        ):
            np.testing.assert_allclose(
                getattr(ours, field), peer[:, col], rtol=RTOL, err_msg=f"{field} {msg}"
            )
        compared += 1
    assert compared >= 20


def test_large_populations_match_octave_qncsmva(octave_out):
    """8 networks of up to 20 stations and 100..3000 jobs, at n = N, to 1e-9 relative."""
    for c in LARGE_CASES:
        i, N = c["i"], c["N"]
        ours = qn.mva(_net(c), N, keep="last")
        msg = f"large case {i}: N={N} {_net(c)!r}"
        np.testing.assert_allclose(ours.throughput, octave_out[f"L{i}_X"], rtol=RTOL, err_msg=msg)
        np.testing.assert_allclose(
            ours.residence_time[0], octave_out[f"L{i}_R"], rtol=RTOL, err_msg=msg
        )
        np.testing.assert_allclose(
            ours.queue_length[0], octave_out[f"L{i}_Q"], rtol=RTOL, err_msg=msg
        )
        np.testing.assert_allclose(
            ours.utilization[0], octave_out[f"L{i}_U"], rtol=RTOL, err_msg=msg
        )
