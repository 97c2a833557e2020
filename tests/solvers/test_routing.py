"""Visit ratios and chains from routing matrices: Octave's qncsvisits, qncmvisits, qnosvisits
and qnomvisits blocks translated by hand, refusals, invariants and a peer batch.

Octave indexes from 1 and we from 0: an Octave reference station r is our r - 1. Octave
normalises a closed chain by V[first class, r] = 1, we by sum_{c in chain} V[c, r] = 1
(the chain visits its reference once per cycle); the two differ by one factor per chain,
so comparisons rescale Octave's visits per chain.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from qnmodel.errors import InvalidModelError, InvalidTypeError
from qnmodel.model import Network
from qnmodel.model.routing import stationary_gth
from qnmodel.results.network import VisitsResult
from qnmodel.solvers import open_network, visits_closed, visits_open
from tests._tol import closed_form

sys.path.insert(0, str(Path(__file__).parent))
from _octave_batch import EXACT, max_rel, octave_array, run_batch  # noqa: E402

# one Gaussian elimination (or GTH reduction) of n states: a few ulps per step, n steps
GTH = closed_form(64)

# ---------------------------------------------------------------------------------------
# qncsvisits
# ---------------------------------------------------------------------------------------


def test_qncsvisits_block1_errors():
    # %!test fail(...) "invalid", "invalid", "square", "range", "range"
    with pytest.raises(InvalidModelError, match=r"routing\[0, 0\] must be a probability"):
        visits_closed([[-1, 0], [0, 0]])
    with pytest.raises(InvalidModelError, match="row of station 1 sums to 0.5"):
        visits_closed([[1, 0], [0.5, 0]])
    with pytest.raises(InvalidModelError, match="square"):
        visits_closed([[1, 2, 3], [1, 2, 3]])
    P = [[0, 1], [1, 0]]
    with pytest.raises(InvalidModelError, match=r"range \[0, 1\]"):
        visits_closed(P, -1)  # Octave's r = 0
    with pytest.raises(InvalidModelError, match=r"range \[0, 1\]"):
        visits_closed(P, 2)  # Octave's r = 3


def test_qncsvisits_block2_closed_single_class():
    P = np.array([[0, 0.3, 0.7], [1, 0, 0], [1, 0, 0]])
    V = visits_closed(P).visits[0]
    np.testing.assert_allclose(V @ P, V, rtol=GTH)
    np.testing.assert_allclose(V, [1, 0.3, 0.7], rtol=GTH)


@pytest.mark.parametrize("k", [5, 10, 20, 50])
def test_qncsvisits_block3_tolerance(k):
    # P = reshape(1:k^2, k, k) (column-major), rows normalised
    P = np.arange(1, k * k + 1, dtype=float).reshape(k, k, order="F")
    P = P / P.sum(axis=1, keepdims=True)
    V = visits_closed(P).visits[0]
    np.testing.assert_allclose(V @ P, V, rtol=closed_form(4 * k))
    assert V[0] == 1.0


def test_qncsvisits_demo():
    V = visits_closed([[0, 0.3, 0.7], [1, 0, 0], [1, 0, 0]]).visits
    np.testing.assert_allclose(V, [[1, 0.3, 0.7]], rtol=GTH)


# ---------------------------------------------------------------------------------------
# qncmvisits
# ---------------------------------------------------------------------------------------


def _traffic_holds(V, P):
    C, K = V.shape
    for c in range(C):
        for k in range(K):
            assert V[c, k] == pytest.approx((V * P[:, :, c, k]).sum(), rel=GTH, abs=1e-300)


def test_qncmvisits_block1_two_chains():
    C, K = 2, 3
    P = np.zeros((C, K, C, K))
    P[0, 0, 0, 1] = P[0, 1, 0, 0] = P[1, 0, 1, 2] = P[1, 2, 1, 0] = 1
    V = visits_closed(P).visits
    _traffic_holds(V, P)


def _schwetman_fig7():
    C, K = 2, 4
    P = np.zeros((C, K, C, K))
    P[0, 0, 0, 0], P[0, 0, 0, 1], P[0, 0, 0, 2] = 0.05, 0.45, 0.5
    P[0, 1, 0, 0] = P[0, 2, 0, 0] = 1
    P[1, 0, 1, 0], P[1, 0, 1, 2], P[1, 0, 1, 3] = 0.01, 0.5, 0.49
    P[1, 2, 1, 0] = P[1, 3, 1, 0] = 1
    return P


def test_qncmvisits_block2_schwetman_fig7():
    # Schwetman, "Testing network-of-queues software", Purdue CSD-TR-330, fig. 7
    P = _schwetman_fig7()
    V = visits_closed(P).visits
    _traffic_holds(V, P)
    np.testing.assert_allclose(V, [[1, 0.45, 0.5, 0], [1, 0, 0.5, 0.49]], rtol=GTH)


def _schwetman_fig9():
    C, K = 2, 3
    P = np.zeros((C, K, C, K))
    P[0, 0, 0, 1], P[0, 0, 0, 2], P[0, 0, 1, 0] = 0.7, 0.2, 0.1
    P[1, 0, 1, 1], P[1, 0, 1, 2], P[1, 0, 0, 0] = 0.3, 0.5, 0.2
    P[0, 1, 0, 0] = P[0, 2, 0, 0] = P[1, 1, 1, 0] = P[1, 2, 1, 0] = 1
    return P


def test_qncmvisits_block3_class_switching_schwetman_fig9():
    # Schwetman CSD-TR-355 fig. 9: VV = [10 7 2; 5 1.5 2.5], compared as ratios V / V(:, 1)
    r = visits_closed(_schwetman_fig9())
    VV = np.array([[10, 7, 2], [5, 1.5, 2.5]])
    np.testing.assert_allclose(r.visits / r.visits[:, :1], VV / VV[:, :1], rtol=GTH)
    # ours: one chain, the two classes visit station 0 once per cycle together (10 + 5)
    assert r.chains.tolist() == [0, 0]
    np.testing.assert_allclose(r.visits, VV / 15, rtol=GTH)


def test_qncmvisits_block4_two_disjoint_classes_two_chains():
    P = np.zeros((2, 3, 2, 3))
    P[0, 0, 0, 1] = P[0, 1, 0, 0] = P[1, 0, 1, 2] = P[1, 2, 1, 0] = 1
    ch = visits_closed(P).chains
    assert ch[0] != ch[1]


def test_qncmvisits_block5_two_classes_one_chain():
    P = np.zeros((2, 3, 2, 3))
    P[0, 0, 0, 1] = 0.5
    P[0, 1, 1, 0] = 1
    P[1, 0, 1, 2] = 0.5
    P[1, 2, 0, 0] = 1
    # rows (0, 0) and (1, 0) sum to 0.5 in Octave's block (it does not check rows): give
    # the other half a self-loop-free complement so that the closed rows sum to 1
    P[0, 0, 0, 2] = 0.5
    P[0, 2, 0, 0] = 1
    P[1, 0, 1, 1] = 0.5
    P[1, 1, 1, 0] = 1
    ch = visits_closed(P).chains
    assert ch[0] == ch[1]


def test_qncmvisits_block5_as_written_is_refused():
    # Octave's block 5 as written: rows (class 0, station 0) and (class 1, station 0) sum to
    # 0.5 -- half of the jobs vanish; Octave accepts it, we refuse it naming the row.
    P = np.zeros((2, 3, 2, 3))
    P[0, 0, 0, 1] = 0.5
    P[0, 1, 1, 0] = 1
    P[1, 0, 1, 2] = 0.5
    P[1, 2, 0, 0] = 1
    with pytest.raises(InvalidModelError, match="class 0 at station 0 sums to 0.5"):
        visits_closed(P)


def test_qncmvisits_block6_moebius_strip_refused():
    P = np.zeros((2, 2, 2, 2))
    P[0, 0, 1, 1] = P[1, 1, 0, 0] = P[1, 0, 0, 1] = P[0, 1, 1, 0] = 1
    with pytest.raises(InvalidModelError, match="class 0 belongs to different chains"):
        visits_closed(P)


def test_qncmvisits_block7_schwetman_fig8_independent_chains():
    # Octave writes P(1,1,1,3) into a 2x2x2x2 array, which grows it to K = 3.
    P = np.zeros((2, 3, 2, 3))
    P[0, 0, 0, 2] = P[0, 2, 0, 0] = 1
    P[1, 1, 1, 2] = P[1, 2, 1, 1] = 1
    V = visits_closed(P, [0, 1]).visits
    np.testing.assert_array_equal(V, [[1, 0, 1], [0, 1, 1]])


def test_qncmvisits_block8_one_chain():
    P = np.zeros((2, 3, 2, 3))
    P[0, 0, 0, 1] = P[0, 1, 0, 2] = P[0, 2, 1, 1] = P[1, 1, 0, 0] = 1
    assert visits_closed(P).chains.tolist() == [0, 0]


def test_qncmvisits_block9_transient_state():
    # (class 0, station 0) has no incoming transition: transient, visit ratio 0
    P = np.zeros((2, 3, 2, 3))
    P[0, 0, 0, 1] = P[0, 1, 0, 2] = P[0, 2, 1, 1] = P[1, 1, 1, 0] = P[1, 0, 0, 1] = 1
    r = visits_closed(P)
    assert r.chains.tolist() == [0, 0]
    assert r.visits[0, 0] == 0.0
    assert r.visits[1, 0] == 1.0  # the chain's visit to its reference, as class 1


# ---------------------------------------------------------------------------------------
# qnosvisits, qnomvisits
# ---------------------------------------------------------------------------------------


def test_qnosvisits_block1_errors():
    with pytest.raises(
        InvalidModelError, match=r"arrival_rate of station 1 must be finite and >= 0"
    ):
        visits_open([[0, 0.5], [0.5, 0]], [0, -1])
    with pytest.raises(InvalidModelError, match="square"):
        visits_open([[1, 1, 1], [1, 1, 1]], [1, 1])


def test_qnosvisits_block2_traffic_equations():
    P = np.array([[0, 0.2, 0.5], [1, 0, 0], [1, 0, 0]])
    lam = np.array([0.1, 0.3, 0.2])
    V = visits_open(P, lam).visits[0]
    np.testing.assert_allclose(V @ P + lam / lam.sum(), V, rtol=GTH)


def test_qnosvisits_demo1():
    V = visits_open([[0, 0.3, 0.5], [1, 0, 0], [1, 0, 0]], [1.2, 0, 0]).visits[0]
    # V0 = 1 + V1 + V2, V1 = 0.3 V0, V2 = 0.5 V0: V0 = 5
    np.testing.assert_allclose(V, [5, 1.5, 2.5], rtol=GTH)


def test_qnosvisits_demo2_then_open_solution():
    P = [[0, 0.4, 0.6, 0], [0.2, 0, 0.2, 0.6], [0, 0, 0, 1], [0, 0, 0, 0]]
    lam = np.array([0.1, 0, 0, 0.3])
    V = visits_open(P, lam).visits[0]
    # by hand: V0 = 0.25 + 0.2 V1, V1 = 0.4 V0, V2 = 0.6 V0 + 0.2 V1, V3 = 0.75 + 0.6 V1 + V2
    v0 = 0.25 / 0.92
    np.testing.assert_allclose(V, [v0, 0.4 * v0, 0.68 * v0, 1.0], rtol=GTH)
    # the demo then solves qnos(sum(lambda), S, V, m): the open network of demands S V
    S = np.array([2, 1, 2, 1.8])
    net = Network.from_demands(S * V, servers=[3, 1, 1, 2])
    res = open_network(net, arrival_rate=lam.sum())
    np.testing.assert_allclose(res.utilization[0], lam.sum() * S * V / [3, 1, 1, 2], rtol=1e-14)


def test_qnomvisits_block1_error():
    with pytest.raises(InvalidModelError, match=r"\(C, K, C, K\)"):
        visits_open(np.zeros((3, 3, 3)), [1, 1, 1])


def test_qnomvisits_block2_traffic_equations():
    C, K = 2, 4
    P = np.zeros((C, K, C, K))
    P[0, 0, 0, 0], P[0, 0, 0, 1], P[0, 0, 0, 2] = 0.05, 0.45, 0.5
    P[0, 1, 0, 0], P[0, 2, 0, 0] = 0.1, 0.2
    P[1, 0, 1, 0], P[1, 0, 1, 2], P[1, 0, 1, 3] = 0.01, 0.5, 0.49
    P[1, 2, 1, 0], P[1, 3, 1, 0] = 0.2, 0.16
    lam = np.array([[0.1, 0, 0, 0.1], [0, 0, 0.2, 0.1]])
    V = visits_open(P, lam).visits
    assert (V >= 0).all()
    for c in range(C):
        for k in range(K):
            rhs = lam[c, k] / lam.sum() + (V * P[:, :, c, k]).sum()
            assert V[c, k] == pytest.approx(rhs, rel=GTH)


def test_qnomvisits_block3_bolch_example_7_7():
    # Bolch et al. 1998, example 7.7 p. 304 (the book's visits / 2, see Octave's comment)
    P = np.zeros((2, 3, 2, 3))
    P[0, 0, 0, 1], P[0, 0, 0, 2] = 0.4, 0.3
    P[0, 1, 0, 0], P[0, 1, 0, 2] = 0.6, 0.4
    P[0, 2, 0, 0], P[0, 2, 0, 1] = 0.5, 0.5
    P[1, 0, 1, 1], P[1, 0, 1, 2] = 0.3, 0.6
    P[1, 1, 1, 0], P[1, 1, 1, 2] = 0.7, 0.3
    P[1, 2, 1, 0], P[1, 2, 1, 1] = 0.4, 0.6
    lam = np.zeros((2, 3))
    lam[0, 0] = lam[1, 0] = 1
    V = visits_open(P, lam).visits
    np.testing.assert_allclose(
        V, np.array([[3.333, 2.292, 1.917], [10, 8.049, 8.415]]) / 2, atol=1e-3
    )


# ---------------------------------------------------------------------------------------
# Our refusals (every message), invariants
# ---------------------------------------------------------------------------------------


def test_refusals_closed():
    with pytest.raises(InvalidModelError, match=r"routing\[0, 1\] must be a probability.*nan"):
        visits_closed([[0, np.nan], [1, 0]])
    with pytest.raises(InvalidModelError, match=r"routing\[0, 1\].*inf"):
        visits_closed([[0, np.inf], [1, 0]])
    P = np.zeros((2, 2, 2, 2))
    P[0, 0, 0, 1] = 0.9
    P[0, 1, 0, 0] = 1
    P[1, 0, 1, 1] = P[1, 1, 1, 0] = 1
    with pytest.raises(InvalidModelError, match="row of class 0 at station 0 sums to 0.9"):
        visits_closed(P)
    with pytest.raises(InvalidModelError, match="station 1 receives jobs .from station 0. but"):
        visits_closed([[0, 1], [0, 0]])
    Q = np.zeros((1, 3, 1, 3))
    Q[0, 1, 0, 2] = Q[0, 2, 0, 1] = 1
    with pytest.raises(
        InvalidModelError,
        match=r"chain 0 .classes \[0\]. never visits its "
        r"reference station 0: choose one of the stations it visits, \[1, 2\]",
    ):
        visits_closed(Q)
    S = np.zeros((2, 2, 2, 2))
    S[0, 0, 1, 1] = S[1, 1, 0, 0] = 1
    with pytest.raises(InvalidModelError, match=r"give different reference stations \[0, 1\]"):
        visits_closed(S, [0, 1])
    with pytest.raises(InvalidModelError, match="one station index or one per class"):
        visits_closed(S, [0, 1, 1])
    with pytest.raises(InvalidTypeError, match="numeric matrix"):
        visits_closed("P")
    with pytest.raises(InvalidTypeError, match="numeric matrix"):
        visits_closed([["a", 1], [1, 0]])


def test_refusals_open():
    with pytest.raises(InvalidModelError, match="row of station 0 sums to 1.2 > 1"):
        visits_open([[0.6, 0.6], [0, 0]], [1, 0])
    with pytest.raises(InvalidModelError, match="never leave the network"):
        visits_open([[0, 1, 0], [0, 0, 1], [0, 1, 0]], [1, 0, 0])
    with pytest.raises(InvalidModelError, match="all zero"):
        visits_open([[0, 0.5], [0, 0]], [0, 0])
    with pytest.raises(InvalidModelError, match=r"shape \(2,\)"):
        visits_open([[0, 0.5], [0, 0]], [1, 0, 0])
    with pytest.raises(InvalidTypeError, match="numbers"):
        visits_open([[0, 0.5], [0, 0]], ["a", 0])


def test_result_frame_and_repr():
    r = visits_closed(_schwetman_fig9())
    assert isinstance(r, VisitsResult) and r.n_chains == 1
    assert r.chain_classes(0) == (0, 1)
    df = r.to_frame()
    assert list(df.columns) == ["class", "station", "visits", "chain"] and len(df) == 6
    assert "chains=[0, 0]" in repr(r)
    with pytest.raises(ValueError):
        r.visits[0, 0] = 2.0
    o = visits_open([[0, 0.5], [0, 0]], [1, 0])
    assert o.n_chains == 0 and "chain" not in o.to_frame().columns
    with pytest.raises(InvalidModelError, match="open network has no chains"):
        o.chain_classes(0)


def test_gth_full_precision_on_ill_conditioned_chain():
    # a birth-death chain whose stationary probabilities span 1e-150: pi_k ∝ (eps)^k exactly
    eps = 1e-30
    n = 6
    P = np.zeros((n, n))
    for k in range(n):
        if k + 1 < n:
            P[k, k + 1] = eps / (1 + eps) if k else 1.0
        if k > 0:
            P[k, k - 1] = 1 / (1 + eps) if k + 1 < n else 1.0
    pi = stationary_gth(P)
    ratio = pi[1:] / pi[:-1]
    # detailed balance: pi_k P[k, k+1] = pi_{k+1} P[k+1, k]
    np.testing.assert_allclose(pi[:-1] * np.diag(P, 1), pi[1:] * np.diag(P, -1), rtol=GTH)
    assert ratio[-1] < 1e-29


# ---------------------------------------------------------------------------------------
# Peer batch: >= 50 random cases per function against Octave
# ---------------------------------------------------------------------------------------

N_CASES = 50


def _random_stochastic(rng, n, leak=0.0):
    """An irreducible (n, n) routing among n states (a random cycle plus random extras)."""
    A = rng.random((n, n)) * (rng.random((n, n)) < 0.5)
    perm = rng.permutation(n)
    for a, b in zip(perm, np.roll(perm, -1), strict=True):
        A[a, b] += rng.random() + 0.1
    if n == 1:
        A[0, 0] = 1.0
    A = A / A.sum(axis=1, keepdims=True)
    return A * (1.0 - leak)


def _closed_single(i):
    rng = np.random.default_rng(31_000 + i)
    K = int(rng.integers(2, 9))
    return {"P": _random_stochastic(rng, K), "r": int(rng.integers(0, K))}


def _closed_multi(i):
    """Classes split into chains; each chain routes among (its classes x some stations)."""
    rng = np.random.default_rng(32_000 + i)
    C, K = int(rng.integers(1, 4)), int(rng.integers(2, 6))
    P = np.zeros((C, K, C, K))
    groups = np.array_split(rng.permutation(C), int(rng.integers(1, C + 1)))
    refs = np.zeros(C, dtype=int)
    for g in groups:
        stations = rng.choice(K, size=int(rng.integers(1, K + 1)), replace=False)
        states = [(c, k) for c in g for k in stations]
        A = _random_stochastic(rng, len(states))
        for a, (c, k) in enumerate(states):
            for b, (s, j) in enumerate(states):
                P[c, k, s, j] = A[a, b]
        refs[g] = stations[0]
    return {"P": P, "r": refs}


def _open_single(i):
    rng = np.random.default_rng(33_000 + i)
    K = int(rng.integers(2, 9))
    lam = rng.random(K) * (rng.random(K) < 0.6)
    lam[0] += 0.5
    return {"P": _random_stochastic(rng, K, leak=float(rng.uniform(0.05, 0.6))), "lam": lam}


def _open_multi(i):
    rng = np.random.default_rng(34_000 + i)
    C, K = int(rng.integers(1, 4)), int(rng.integers(2, 6))
    A = _random_stochastic(rng, C * K, leak=float(rng.uniform(0.05, 0.6)))
    lam = rng.random((C, K)) * (rng.random((C, K)) < 0.5)
    lam[0, 0] += 0.5
    return {"P": A.reshape(C, K, C, K), "lam": lam}


CS = [_closed_single(i) for i in range(N_CASES)]
CM = [_closed_multi(i) for i in range(N_CASES)]
OS = [_open_single(i) for i in range(N_CASES)]
OM = [_open_multi(i) for i in range(N_CASES)]


@pytest.fixture(scope="module")
def octave_visits():
    lines = []
    for i, c in enumerate(CS):
        lines.append(f'emit("cs{i}", qncsvisits({octave_array(c["P"])}, {c["r"] + 1}));')
    for i, c in enumerate(CM):
        lines.append(f"[V ch] = qncmvisits({octave_array(c['P'])}, {octave_array(c['r'] + 1)});")
        lines.append(f'emit("cm{i}_V", V(:)); emit("cm{i}_ch", ch);')
    for i, c in enumerate(OS):
        lines.append(
            f'emit("os{i}", qnosvisits({octave_array(c["P"])}, {octave_array(c["lam"])}));'
        )
    for i, c in enumerate(OM):
        lines.append(f"V = qnomvisits({octave_array(c['P'])}, {octave_array(c['lam'])});")
        lines.append(f'emit("om{i}", V(:));')
    return run_batch(lines)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
def test_peer_qncsvisits(octave_visits):
    worst = max(
        max_rel(visits_closed(c["P"], c["r"]).visits[0], octave_visits[f"cs{i}"])
        for i, c in enumerate(CS)
    )
    print(f"qncsvisits worst relative difference {worst:.3g}")
    assert worst <= EXACT, worst


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
def test_peer_qncmvisits(octave_visits):
    worst = 0.0
    for i, c in enumerate(CM):
        r = visits_closed(c["P"], c["r"])
        C, K = r.visits.shape
        Vo = octave_visits[f"cm{i}_V"].reshape(C, K, order="F")
        cho = octave_visits[f"cm{i}_ch"].astype(int)
        # same partition of the classes into chains
        assert len(set(zip(r.chains.tolist(), cho.tolist(), strict=True))) == r.n_chains
        for q in range(r.n_chains):
            members = np.flatnonzero(r.chains == q)
            ref = r.reference[q]
            Vq = Vo[members] / Vo[members, ref].sum()
            worst = max(worst, max_rel(r.visits[members], Vq, floor=1e-300))
    print(f"qncmvisits worst relative difference {worst:.3g}")
    assert worst <= EXACT, worst


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
def test_peer_qnosvisits(octave_visits):
    worst = max(
        max_rel(visits_open(c["P"], c["lam"]).visits[0], octave_visits[f"os{i}"])
        for i, c in enumerate(OS)
    )
    print(f"qnosvisits worst relative difference {worst:.3g}")
    assert worst <= EXACT, worst


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
def test_peer_qnomvisits(octave_visits):
    worst = 0.0
    for i, c in enumerate(OM):
        V = visits_open(c["P"], c["lam"]).visits
        worst = max(worst, max_rel(V, octave_visits[f"om{i}"].reshape(V.shape, order="F")))
    print(f"qnomvisits worst relative difference {worst:.3g}")
    assert worst <= EXACT, worst
