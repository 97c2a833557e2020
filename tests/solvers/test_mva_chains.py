"""Exact MVA with class switching by chains: Octave's ``qncmmva(N, S, P, r, m)`` blocks
translated by hand, invariants, the multi-server extension and a peer batch.

Octave's outputs are per station: X(r, k) = class-r throughput at k, R(r, k) per visit;
ours X_c per chain cycle with D_ck = V_ck S_ck, so X(r, k) = X_c V_ck and R = R_ck / V_ck.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from qnmodel.errors import InvalidModelError, InvalidTypeError
from qnmodel.results.network import ChainMVAResult
from qnmodel.solvers import mva_chains, mva_multiclass_ld_exact, visits_closed

sys.path.insert(0, str(Path(__file__).parent))
from _octave_batch import EXACT, max_rel, octave_array, run_batch  # noqa: E402

LATTICE = 1e-13


def solve(S, P, N, reference=0, **kw):
    """Octave's qncmmva(N, S, P, r, m): visits from P, then the chain kernel."""
    v = visits_closed(P, reference)
    return mva_chains(S, N, v.chains, visits=v.visits, **kw), v.visits


def per_visit(r, V):
    return np.where(V > 0, r.residence_time / np.where(V > 0, V, 1), 0.0)


def test_qncmmva_block12_no_class_switching_equals_plain_mva():
    C, K = 2, 4
    P = np.zeros((C, K, C, K))
    P[0, 0, 0, 0], P[0, 0, 0, 1], P[0, 0, 0, 2] = 0.05, 0.45, 0.5
    P[0, 1, 0, 0] = P[0, 2, 0, 0] = 1
    P[1, 0, 1, 0], P[1, 0, 1, 2], P[1, 0, 1, 3] = 0.01, 0.5, 0.49
    P[1, 2, 1, 0] = P[1, 3, 1, 0] = 1
    S = np.array([[0.01, 0.09, 0.10, 0.08], [0.05, 0.09, 0.10, 0.08]])
    r2, V = solve(S, P, [3, 2])
    r1 = mva_multiclass_ld_exact(S, [3, 2], visits=V)
    for a in ("utilization", "residence_time", "queue_length", "throughput"):
        np.testing.assert_allclose(getattr(r2, a), getattr(r1, a), rtol=LATTICE)
    assert r2.chains.tolist() == [0, 1]


def test_qncmmva_block14_schwetman_table5_by_routing():
    S = np.array([[0.025, 1, 15], [0.5, 1, 15]])
    P = np.zeros((2, 3, 2, 3))
    P[0, 0, 0, 1] = P[0, 1, 0, 0] = 1
    P[1, 0, 1, 2] = P[1, 2, 1, 0] = 1
    r, V = solve(S, P, [15, 5], reference=[0, 0], delay=[0, 1, 1])
    np.testing.assert_allclose(r.utilization, [[0.358, 14.323, 0], [0.156, 0, 4.707]], atol=1e-3)
    np.testing.assert_allclose(
        r.throughput[:, None] * V, [[14.323, 14.323, 0], [0.314, 0, 0.314]], atol=1e-3
    )
    np.testing.assert_allclose(r.queue_length, [[0.677, 14.323, 0], [0.293, 0, 4.707]], atol=1e-3)
    # Octave's R(1,3), R(2,2) (stations the class never visits) are S: a per-visit time
    # with no visit; ours 0. Compare where the class goes.
    Rv = per_visit(r, V)
    np.testing.assert_allclose(
        Rv[V > 0], np.array([[0.047, 1, 15], [0.934, 1, 15]])[V > 0], atol=1e-3
    )


@pytest.mark.parametrize("block", [15, "demo3"])
def test_qncmmva_block15_demo3_schwetman_fig9_class_switching(block):
    S = np.array([[0.01, 0.07, 0.10], [0.05, 0.07, 0.10]])
    P = np.zeros((2, 3, 2, 3))
    P[0, 0, 0, 1], P[0, 0, 0, 2], P[0, 0, 1, 0] = 0.7, 0.2, 0.1
    P[1, 0, 1, 1], P[1, 0, 1, 2], P[1, 0, 0, 0] = 0.3, 0.5, 0.2
    P[0, 1, 0, 0] = P[1, 1, 1, 0] = P[0, 2, 0, 0] = P[1, 2, 1, 0] = 1
    r, V = solve(S, P, [3, 0])
    np.testing.assert_allclose(
        per_visit(r, V), [[0.015, 0.133, 0.163], [0.073, 0.133, 0.163]], atol=1e-3
    )
    np.testing.assert_allclose(
        r.throughput[:, None] * V, [[12.609, 8.826, 2.522], [6.304, 1.891, 3.152]], atol=1e-3
    )
    np.testing.assert_allclose(
        r.queue_length, [[0.185, 1.175, 0.412], [0.462, 0.252, 0.515]], atol=1e-3
    )
    np.testing.assert_allclose(
        r.utilization, [[0.126, 0.618, 0.252], [0.315, 0.132, 0.315]], atol=1e-3
    )
    # the 3 jobs of the chain spread over both classes
    assert r.class_jobs.sum() == pytest.approx(3.0, rel=LATTICE)
    assert r.chain_population.tolist() == [3]


def test_chain_invariants_and_multi_server_stations():
    rng = np.random.default_rng(5)
    C, K = 3, 4
    P = np.zeros((C, K, C, K))
    states = [(c, k) for c in range(C) for k in range(K)]
    A = rng.random((C * K, C * K))
    A /= A.sum(axis=1, keepdims=True)
    for a, (c, k) in enumerate(states):
        for b, (s, j) in enumerate(states):
            P[c, k, s, j] = A[a, b]
    S = rng.uniform(0.1, 1.0, (C, K))
    S[:, 1] = S[0, 1]  # the 3-server FCFS station: class-independent service time
    r, V = solve(S, P, [2, 1, 3], servers=[1, 3, 1, 1], delay=[0, 0, 0, 1])
    assert r.chains.tolist() == [0, 0, 0]
    # the chain's jobs are all somewhere; Little's law per class and station
    assert r.class_jobs.sum() == pytest.approx(6.0, rel=LATTICE)
    np.testing.assert_allclose(r.queue_length, r.throughput[:, None] * r.residence_time, rtol=1e-15)
    # the classes of a chain share its stretch: per-visit times equal at the FCFS station
    Rv = per_visit(r, V)
    assert np.ptp(Rv[:, 1]) < 1e-12 * Rv[0, 1]
    # summed over the classes, the chain network itself
    agg = mva_multiclass_ld_exact(
        (S * V).sum(axis=0, keepdims=True), [6], servers=[1, 3, 1, 1], delay=[0, 0, 0, 1]
    )
    np.testing.assert_allclose(r.queue_length.sum(axis=0), agg.queue_length[0], rtol=LATTICE)
    np.testing.assert_allclose(r.chain_throughput, agg.throughput, rtol=LATTICE)


def test_refusals():
    D = np.ones((2, 2))
    with pytest.raises(InvalidModelError, match="class 1 has N = 2 jobs but belongs to no chain"):
        mva_chains(D, [1, 2], [0, -1])
    with pytest.raises(InvalidModelError, match="chains has 3 entries"):
        mva_chains(D, [1, 2], [0, 0, 1])
    with pytest.raises(InvalidTypeError, match="chains must be a sequence of 2 integers"):
        mva_chains(D, [1, 2], [0.0, 1.0])
    with pytest.raises(InvalidModelError, match=r"chains\[0\] must be a chain index"):
        mva_chains(D, [1, 2], [-3, 0])
    with pytest.raises(InvalidModelError, match="no class belongs to a chain"):
        mva_chains(D, [0, 0], [-1, -1])
    with pytest.raises(InvalidModelError, match="population has 3 entries"):
        mva_chains(D, [1, 2, 3], [0, 0])
    with pytest.raises(InvalidModelError, match="station 0 has 2 servers .FCFS. and class-dep"):
        mva_chains([[1, 1], [2, 1]], [1, 1], [0, 0], servers=[2, 1], visits=np.ones((2, 2)))


def test_result_frame():
    r = mva_chains(np.array([[0.1, 0.2], [0.3, 0.1]]), [2, 1], [0, 0])
    assert isinstance(r, ChainMVAResult) and r.method == "mva.chains"
    assert list(r.to_frame()["chain"]) == [0, 0]
    assert list(r.to_frame("station")["chain"]) == [0, 0, 0, 0]
    assert "chains=[0, 0]" in repr(r)


# ---------------------------------------------------------------------------------------
# Peer batch: qncmmva(N, S, P, r, m) with class switching, >= 50 random networks
# ---------------------------------------------------------------------------------------

N_PEER = 50


def _case(i):
    rng = np.random.default_rng(51_000 + i)
    C, K = int(rng.integers(1, 4)), int(rng.integers(2, 5))
    P = np.zeros((C, K, C, K))
    groups = np.array_split(rng.permutation(C), int(rng.integers(1, C + 1)))
    ref = np.zeros(C, dtype=int)
    for g in groups:
        stations = rng.choice(K, size=int(rng.integers(1, K + 1)), replace=False)
        states = [(c, k) for c in g for k in stations]
        A = rng.random((len(states), len(states))) * (rng.random((len(states),) * 2) < 0.6)
        perm = rng.permutation(len(states))
        for a, b in zip(perm, np.roll(perm, -1), strict=True):
            A[a, b] += 0.2
        if len(states) == 1:
            A[0, 0] = 1.0
        A /= A.sum(axis=1, keepdims=True)
        for a, (c, k) in enumerate(states):
            for b, (s, j) in enumerate(states):
                P[c, k, s, j] = A[a, b]
        ref[g] = stations[0]
    S = rng.uniform(0.05, 1.0, (C, K))
    m = np.where(rng.random(K) < 0.25, -1, 1)
    N = rng.integers(0, 4, C)
    N[0] = max(int(N[0]), 1)
    return {"P": P, "S": S, "m": m, "N": N, "r": ref}


CASES = [_case(i) for i in range(N_PEER)]


@pytest.fixture(scope="module")
def octave_cs():
    lines = []
    for i, c in enumerate(CASES):
        lines.append(
            f"[U R Q X] = qncmmva({octave_array(c['N'])}, {octave_array(c['S'])}, "
            f"{octave_array(c['P'])}, {octave_array(c['r'] + 1)}, {octave_array(c['m'])});"
        )
        lines.append(
            f'emit("c{i}_U", U(:)); emit("c{i}_R", R(:)); emit("c{i}_Q", Q(:)); '
            f'emit("c{i}_X", X(:));'
        )
    return run_batch(lines)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
def test_peer_qncmmva_class_switching(octave_cs):
    worst = {"U": 0.0, "R": 0.0, "Q": 0.0, "X": 0.0}
    for i, c in enumerate(CASES):
        r, V = solve(c["S"], c["P"], c["N"], reference=c["r"], delay=c["m"] < 1)
        ours = {
            "U": r.utilization,
            "R": per_visit(r, V),
            "Q": r.queue_length,
            "X": r.throughput[:, None] * V,
        }
        for key in worst:
            theirs = octave_cs[f"c{i}_{key}"].reshape(V.shape, order="F")
            if key == "R":
                # a chain without jobs: Octave's per-visit R is S (it never computes its
                # Q(N - e_q)); ours is what an added job would see, S (1 + Q_k(N)) at a
                # queue (the arrival theorem, as mva_multiclass). Compare chains with jobs.
                empty = r.chain_population[r.chains] == 0
                theirs = np.where((V > 0) & ~empty[:, None], theirs, 0.0)
                ours["R"] = np.where(empty[:, None], 0.0, ours["R"])
            worst[key] = max(worst[key], max_rel(ours[key], theirs, floor=1e-300))
    print("qncmmva (class switching) worst relative differences:", worst)
    assert max(worst.values()) <= EXACT, worst
