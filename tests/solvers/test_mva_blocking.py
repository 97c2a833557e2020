"""MVABLO (approximate MVA with finite capacities): Octave's qncsmvablo blocks translated by
hand, its error measured against the exact Markov chain (``_blocking_ctmc.py``), a peer batch.

Octave returns per-visit response times R (ours ``response_time_per_visit``) and station
throughputs X (ours ``station_throughput``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from qnmodel.errors import ConvergenceError, InvalidModelError
from qnmodel.model import Network
from qnmodel.results.network import BlockingMVAResult
from qnmodel.solvers import mva, visits_closed
from qnmodel.solvers.mva_blocking import mvablo

sys.path.insert(0, str(Path(__file__).parent))
from _blocking_ctmc import solve_blocking_ctmc  # noqa: E402
from _octave_batch import EXACT, max_rel, octave_array, run_batch  # noqa: E402

CYCLE3 = [[0, 1, 0], [0, 0, 1], [1, 0, 0]]


def test_qncsmvablo_block1_errors():
    with pytest.raises(InvalidModelError, match="N = 10 reaches the total capacity sum.M. = 9"):
        mvablo(10, [1, 1], [4, 5], [[0, 1], [1, 0]])
    with pytest.raises(InvalidModelError, match="row of station 1 sums to 2.0"):
        mvablo(6, [1, 1], [4, 5], [[0, 1], [1, 1]])
    with pytest.raises(InvalidModelError, match="capacity has 2 entries; give one per station .3."):
        mvablo(5, [1, 1, 1], [1, 1], [[0, 1], [1, 1]])


def test_qncsmvablo_block2_akyildiz_section_v():
    # [Aky88] sec. V, p. 422: cyclic, M = (12, 10, 14), S = (1, 1/2, 1/3), 27 jobs
    r = mvablo(27, [1, 1 / 2, 1 / 3], [12, 10, 14], CYCLE3)
    np.testing.assert_allclose(r.response_time_per_visit, [11.80, 1.66, 14.4], atol=1e-2)
    assert r.method == "mvablo (approximate)"


@pytest.mark.parametrize("N,R", [(10, [6.925, 8.061, 4.185]), (12, [7.967, 9.019, 8.011])])
def test_qncsmvablo_block3_akyildiz_example_2(N, R):
    r = mvablo(N, [1.5, 2, 1], [4, 5, 5], CYCLE3)
    np.testing.assert_allclose(r.response_time_per_visit, R, atol=1e-3)


@pytest.mark.parametrize("N,R", [(10, [1.674, 5.007, 7.639]), (12, [2.166, 5.372, 6.567])])
def test_qncsmvablo_block4_akyildiz_example_3(N, R):
    P = [[0, 0.5, 0.5], [1, 0, 0], [1, 0, 0]]
    r = mvablo(N, [0.2, 1.2, 1.4], [8, 7, 6], P)
    np.testing.assert_allclose(r.response_time_per_visit, R, atol=1e-3)


def test_qncsmvablo_block5_never_blocks_is_exact_mva():
    P = [[0, 0.7, 0.3], [1, 0, 0], [1, 0, 0]]
    S = np.array([1, 1 / 0.8, 1 / 0.4])
    r = mvablo(40, S, [50, 50, 50], P)
    V = visits_closed(P).visits[0]
    m = mva(Network.from_demands(S * V), 40, keep="last")
    np.testing.assert_allclose(r.utilization, m.throughput[0] * S * V, rtol=1e-13)
    np.testing.assert_allclose(r.residence_time, m.residence_time[0], rtol=1e-13)
    np.testing.assert_allclose(r.queue_length, m.queue_length[0], rtol=1e-13)
    assert not r.blocked.any()


# ---------------------------------------------------------------------------------------
# The exact chain, and MVABLO's error against it
# ---------------------------------------------------------------------------------------


def test_ctmc_without_blocking_is_product_form():
    # capacities that never bind: the chain is the product-form network, exact MVA
    P = [[0, 0.6, 0.4], [0.5, 0, 0.5], [1, 0, 0]]
    S = [0.5, 1.0, 0.7]
    c = solve_blocking_ctmc(5, S, [5, 5, 5], P)
    V = visits_closed(P).visits[0]
    m = mva(Network.from_demands(np.array(S) * V), 5, keep="last")
    np.testing.assert_allclose(c.X0, m.throughput[0], rtol=1e-12)
    np.testing.assert_allclose(c.Q, m.queue_length[0], rtol=1e-12)


def test_ctmc_finds_deadlock():
    # two stations of capacity 1 sending to each other, 2 jobs: both finish and block
    assert solve_blocking_ctmc(2, [1.0, 1.0], [1, 1], [[0, 1], [1, 0]]).deadlock


def _random_net(i):
    rng = np.random.default_rng(101_000 + i)
    K = int(rng.integers(2, 5))
    M = rng.integers(1, 5 if K < 4 else 4, K)
    S = rng.uniform(0.2, 2.0, K)
    A = rng.random((K, K)) * (rng.random((K, K)) < 0.5)
    np.fill_diagonal(A, 0)
    perm = rng.permutation(K)
    for a, b in zip(perm, np.roll(perm, -1), strict=True):
        A[a, b] += 0.3
    return S, M, A / A.sum(axis=1, keepdims=True)


def _cyclic_net(i):
    rng = np.random.default_rng(102_000 + i)
    K = int(rng.integers(2, 5))
    M = rng.integers(1, 6 if K < 4 else 5, K)
    return rng.uniform(0.2, 2.0, K), M, np.roll(np.eye(K), 1, axis=1)


def _errors(make, n_nets):
    """MVABLO against the chain at every N with min M < N < sum M (a station can fill).

    Returns the throughput and queue errors where the chain does not deadlock, the number
    of deadlocking points, and how many of those MVABLO does not settle on (every point
    where it does not settle deadlocks)."""
    eX, eQ, dead, unsettled = [], [], 0, 0
    for i in range(n_nets):
        S, M, P = make(i)
        for N in range(int(M.min()) + 1, int(M.sum())):
            c = solve_blocking_ctmc(N, S, list(M), P.tolist())
            try:  # settled points take at most K adjustments per population
                r = mvablo(N, S, M, P, max_iter=500)
            except ConvergenceError:
                assert c.deadlock
                unsettled += 1
                continue
            if c.deadlock:  # MVABLO does not notice, and answers
                dead += 1
                continue
            eX.append(abs(r.throughput / c.X0 - 1))
            eQ.append(np.abs(r.queue_length - c.Q).max() / N)
    return np.array(eX), np.array(eQ), dead, unsettled


def _stats(e):
    return float(np.median(e)), float(np.percentile(e, 90)), float(e.max())


def test_error_against_ctmc_random_routing():
    """100 random networks (2-4 stations, branching routing, capacities 1-4): 404
    populations where a station can fill, 215 of which deadlock in the exact chain: MVABLO
    answers on 161 of them without noticing, and on 54 never settles (ConvergenceError;
    Octave's qncsmvablo loops forever there). On the other 189: throughput relative error
    median 0.95 %, 90th percentile 16.5 %, worst 54 %; queue lengths,
    max_k |Q_k - Q_k(exact)| / N: median 6.9 %, worst 22 %. (Recorded in
    qnmodel.solvers.mva_blocking's docstring.)"""
    eX, eQ, dead, unsettled = _errors(_random_net, 100)
    assert (eX.size, dead, unsettled) == (189, 161, 54)
    np.testing.assert_allclose(_stats(eX), [0.00946, 0.165, 0.541], rtol=0.01)
    np.testing.assert_allclose(_stats(eQ)[::2], [0.0686, 0.224], rtol=0.01)


def test_error_against_ctmc_cyclic():
    """60 random cyclic networks (Akyildiz's setting; 2-4 stations, capacities 1-5), 324
    populations with min M < N < sum M, none deadlocks: throughput relative error median
    4.3 %, 90th percentile 22 %, worst 72 % (tight capacities); queue lengths median 6.3 %,
    worst 23 % of N."""
    eX, eQ, dead, unsettled = _errors(_cyclic_net, 60)
    assert (eX.size, dead, unsettled) == (324, 0, 0)
    np.testing.assert_allclose(_stats(eX), [0.0434, 0.222, 0.724], rtol=0.01)
    np.testing.assert_allclose(_stats(eQ)[::2], [0.0634, 0.233], rtol=0.01)


def test_exact_where_no_station_fills():
    S, M, P = _random_net(3)
    for N in range(1, int(M.min()) + 1):
        c = solve_blocking_ctmc(N, S, list(M), P.tolist())
        r = mvablo(N, S, M, P)
        assert r.throughput == pytest.approx(c.X0, rel=1e-12)


def test_refusals_and_result():
    with pytest.raises(InvalidModelError, match=r"service_times\[1\] must be > 0"):
        mvablo(2, [1, 0], [2, 2], [[0, 1], [1, 0]])
    with pytest.raises(InvalidModelError, match="routing must be a 2 x 2 matrix"):
        mvablo(2, [1, 1], [2, 2], [[0, 1, 0], [1, 0, 0], [1, 0, 0]])
    with pytest.raises(InvalidModelError, match=r"capacity\[0\] must be an integer >= 1"):
        mvablo(2, [1, 1], [0, 2], [[0, 1], [1, 0]])
    with pytest.raises(ConvergenceError, match="still holds more than its capacity"):
        mvablo(27, [1, 1 / 2, 1 / 3], [12, 10, 14], CYCLE3, max_iter=1)
    r = mvablo(12, [1.5, 2, 1], [4, 5, 5], CYCLE3)
    assert isinstance(r, BlockingMVAResult) and r.blocked.any()
    assert r.response_time == pytest.approx(12 / r.throughput, rel=1e-14)
    assert len(r.to_frame()) == 3 and "mvablo (approximate)" in repr(r)


# ---------------------------------------------------------------------------------------
# Peer batch: qncsmvablo on 60 random networks (every N with a station able to fill)
# ---------------------------------------------------------------------------------------


def _peer_points():
    """Every N with a station able to fill, on 30 networks; the 5 points of deadlocking
    networks where MVABLO does not settle are left out (Octave's qncsmvablo loops forever
    on them; ours raises ConvergenceError)."""
    pts = []
    for i in range(30):
        S, M, P = _random_net(200 + i) if i % 2 else _cyclic_net(200 + i)
        for N in range(int(M.min()) + 1, int(M.sum())):
            try:
                mvablo(N, S, M, P, max_iter=500)
            except ConvergenceError:
                continue
            pts.append((S, M, P, N))
    return pts


PEER = _peer_points()


@pytest.fixture(scope="module")
def octave_blo():
    lines = []
    for i, (S, M, P, N) in enumerate(PEER):
        lines.append(
            f"[U R Q X] = qncsmvablo({N}, {octave_array(S)}, {octave_array(M)}, {octave_array(P)});"
        )
        lines.append(f'emit("b{i}", [U R Q X]);')
    return run_batch(lines)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
def test_peer_qncsmvablo(octave_blo):
    assert len(PEER) >= 50
    worst = 0.0
    for i, (S, M, P, N) in enumerate(PEER):
        r = mvablo(N, S, M, P)
        ours = np.concatenate(
            [r.utilization, r.response_time_per_visit, r.queue_length, r.station_throughput]
        )
        worst = max(worst, max_rel(ours, octave_blo[f"b{i}"], floor=1e-300))
    print(f"qncsmvablo worst relative difference {worst:.3g} over {len(PEER)} points")
    assert worst <= EXACT, worst
