"""Geometric and proportional bounds: Octave's qncsgb and qncspb blocks translated by hand
(its two ``xtest`` tables from the paper pass here), enclosure of exact MVA, a peer batch."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from qnmodel.errors import InvalidModelError, LatticeTooLargeError
from qnmodel.model import Network
from qnmodel.results.network import CurveBoundsResult
from qnmodel.solvers import bounds_geometric, bounds_proportional, mva, visits_closed

sys.path.insert(0, str(Path(__file__).parent))
from _octave_batch import EXACT, max_rel, octave_array, run_batch  # noqa: E402

GB, PB = bounds_geometric, bounds_proportional
SLACK = 1e-12

CMS_D = [0.1, 0.1, 0.09, 0.08]  # [CMS08] Tables IV and V


@pytest.mark.parametrize("fn", [GB, PB])
def test_block1_errors(fn):
    with pytest.raises(InvalidModelError, match="demands is empty"):
        fn([], 1)
    with pytest.raises(InvalidModelError, match=r"demands\[1\] must be >= 0"):
        fn([0, -1], 1)
    with pytest.raises(InvalidModelError, match="N must be an integer >= 1, got 0"):
        fn([1, 2], 0)
    with pytest.raises(InvalidModelError, match="N must be an integer >= 1, got -1"):
        fn([1, 2], -1)
    # Octave: qncsgb(1, [1 2], 1, [1 -1]) "single server" (m = -1 is a delay) and
    # qncspb(1, [1 2], [1 1], [2 2]) "single server". We bound delay stations (folded into
    # the think time) and refuse multiple servers:
    with pytest.raises(InvalidModelError, match="single-server stations only; station 0 has 2"):
        fn([1, 2], 1, servers=[2, 2])
    with pytest.raises(InvalidModelError, match="think_time must be >= 0, got -1"):
        fn([1, 2], 1, think_time=-1)


def test_delay_station_is_bounded_not_refused():
    for fn in (GB, PB):
        b = fn([1, 2], 5, delay=[False, True])
        x = mva(Network.from_demands([1, 2], kinds=["queue", "delay"]), 5).throughput
        assert np.all(b.throughput_lower <= x * (1 + SLACK)) and np.all(
            x <= b.throughput_upper * (1 + SLACK)
        )


TABLE_IV = [
    (2, 4.3040, 4.3174),
    (5, 6.6859, 6.7524),
    (10, 8.1521, 8.2690),
    (20, 9.0947, 9.2431),
    (80, 9.8233, 9.8765),
]
TABLE_V = [
    (2, 1.4319, 1.5195),
    (5, 3.3432, 3.5582),
    (10, 5.7569, 6.1410),
    (20, 8.0856, 8.6467),
    (80, 9.7147, 9.8594),
]


def test_qncsgb_xtest_table_iv():
    # Octave marks this block xtest (its upper bounds differ); ours reproduce the paper
    b = GB(CMS_D, 80)
    for n, lo, hi in TABLE_IV:
        assert b.throughput_lower[n - 1] == pytest.approx(lo, abs=1e-4)
        assert b.throughput_upper[n - 1] == pytest.approx(hi, abs=1e-4)


def test_qncsgb_xtest_table_v_think_time():
    b = GB(CMS_D, 80, think_time=1)
    for n, lo, hi in TABLE_V:
        assert b.throughput_lower[n - 1] == pytest.approx(lo, abs=1e-4)
        # N = 10: 6.1414 for the printed 6.1410 (bounds_geometric Notes)
        assert b.throughput_upper[n - 1] == pytest.approx(hi, abs=5e-4 if n == 10 else 1e-4)
    assert b.method == "geometric.sqrt"


@pytest.mark.parametrize("Z", [2, 0])
def test_qncsgb_blocks3_4_enclose_mva(Z):
    P = [[0, 0.3, 0.7], [1, 0, 0], [1, 0, 0]]
    S = np.array([1, 0.6, 0.2])
    V = visits_closed(P).visits[0]
    b = GB(S, 20, think_time=Z, visits=V)
    m = mva(Network.from_demands(S * V, think_time=Z), 20)
    assert np.all(b.throughput_lower <= m.throughput * (1 + SLACK))
    assert np.all(m.throughput <= b.throughput_upper * (1 + SLACK))
    assert np.all(b.queue_length_lower <= m.queue_length + 1e-12)
    assert np.all(m.queue_length <= b.queue_length_upper + 1e-12)


def test_qncspb_table_iv():
    b = PB(CMS_D, 80)
    expected = [
        (2, 4.3174, 4.3174),
        (5, 6.6600, 6.7297),
        (10, 8.0219, 8.2700),
        (20, 8.8672, 9.3387),
        (80, 9.6736, 10.000),
    ]
    for n, lo, hi in expected:
        assert b.throughput_lower[n - 1] == pytest.approx(lo, abs=1e-4)
        assert b.throughput_upper[n - 1] == pytest.approx(hi, abs=1e-4)


@pytest.mark.parametrize("seed", range(40))
def test_random_networks_enclosed(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 7))
    D = rng.uniform(0.01, 1.0, K)
    D[rng.random(K) < 0.2] = 0.0
    D[0] += 0.01
    delay = rng.random(K) < 0.2
    delay[0] = False
    Z = float(rng.uniform(0, 5)) if seed % 2 else 0.0
    N = int(rng.integers(1, 120))
    m = mva(
        Network.from_demands(D, think_time=Z, kinds=["delay" if d else "queue" for d in delay]), N
    )
    for fn in (GB, PB):
        b = fn(D, N, think_time=Z, delay=delay)
        assert np.all(b.throughput_lower <= m.throughput * (1 + SLACK)), fn
        assert np.all(m.throughput <= b.throughput_upper * (1 + SLACK)), fn
        assert np.all(b.response_time_lower <= m.response_time * (1 + SLACK))
        assert np.all(m.response_time <= b.response_time_upper * (1 + SLACK))
        if fn is GB:
            assert np.all(b.queue_length_lower <= m.queue_length * (1 + SLACK) + 1e-12)
            assert np.all(m.queue_length <= b.queue_length_upper * (1 + SLACK) + 1e-12)


def test_memory_limit(monkeypatch):
    monkeypatch.setenv("QNMODEL_MAX_MEMORY", "1 MiB")
    with pytest.raises(LatticeTooLargeError, match="bounds_geometric for n = 1..100000"):
        GB([0.1, 0.2], 100_000)


def test_large_population_and_result():
    b = PB([0.1, 0.1, 0.09], 100_000)  # sum D^N would underflow to 0/0 in Octave's form
    assert np.isfinite(b.throughput_lower).all() and b.throughput_lower[-1] > 9.99
    g = GB([0.1, 0.1, 0.09], 100_000, think_time=3.0)
    assert np.isfinite(g.throughput_upper).all()
    assert isinstance(g, CurveBoundsResult) and len(g.to_frame()) == 100_000
    assert "geometric.sqrt" in repr(g)
    pure = GB([0.0, 2.0], 3, think_time=1.0, delay=[False, True])
    np.testing.assert_allclose(pure.throughput_lower, np.arange(1, 4) / 3.0, rtol=1e-15)


# ---------------------------------------------------------------------------------------
# Peer batch: 50 random networks against qncsgb and qncspb
# ---------------------------------------------------------------------------------------

N_PEER = 50


def _case(i):
    rng = np.random.default_rng(91_000 + i)
    K = int(rng.integers(1, 7))
    D = rng.uniform(0.01, 1.0, K)
    if i % 3 == 0 and K > 1:
        D[1] = D[0]  # two bottlenecks
    return {"D": D, "N": int(rng.integers(1, 40)), "Z": float(rng.uniform(0, 5)) if i % 2 else 0.0}


CASES = [_case(i) for i in range(N_PEER)]


@pytest.fixture(scope="module")
def octave_gb():
    lines = []
    for i, c in enumerate(CASES):
        N, Z, D = c["N"], c["Z"], octave_array(c["D"])
        args = f"{N}, {D}, ones(size({D})), ones(size({D})), {Z:.17g}"
        lines.append(f"[a b c d e f] = qncsgb({args}); emit('gb{i}', [a b c d e(:)' f(:)']);")
        lines.append(f"[a b c d] = qncspb({args}); emit('pb{i}', [a b c d]);")
    return run_batch(lines)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
def test_peer_qncsgb(octave_gb):
    """X_lower, the R bound from it and the queue lower bounds of the non-bottleneck
    stations (eq. 8, independent of X^+-) equal qncsgb's. Its upper bounds use the
    asymptotic bound of N jobs at N - 1 (module docstring): never below ours. Octave's
    documented 7-argument form qncsgb(N, S, V, m, Z, X_minus, X_plus), which would take our
    X^+-, fails ("qncschkparam: called with too many inputs"). Its 3rd and 4th outputs
    are R_upper, R_lower (swapped against its documentation)."""
    worst, looser = 0.0, 0
    for i, c in enumerate(CASES):
        N, K = c["N"], len(c["D"])
        b = GB(c["D"], N, think_time=c["Z"])
        o = octave_gb[f"gb{i}"]
        xl, xu, ru, rl, qlo = o[0], o[1], o[2], o[3], o[4 : 4 + K]
        low = np.asarray(c["D"]) < max(c["D"])
        worst = max(worst, max_rel([b.throughput_lower[-1], b.response_time_upper[-1]], [xl, ru]))
        worst = max(worst, max_rel(b.queue_length_lower[-1][low], qlo[low], floor=1e-300))
        assert xu >= b.throughput_upper[-1] * (1 - 1e-13) and rl <= b.response_time_lower[-1] * (
            1 + 1e-13
        )
        looser += int(xu > b.throughput_upper[-1] * (1 + 1e-12))
    print(
        f"qncsgb worst relative difference {worst:.3g}; Octave's X_upper looser in {looser} of 50"
    )
    assert worst <= EXACT, worst


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
def test_peer_qncspb(octave_gb):
    worst = 0.0
    for i, c in enumerate(CASES):
        b = PB(c["D"], c["N"], think_time=c["Z"])
        ours = [
            b.throughput_lower[-1],
            b.throughput_upper[-1],
            b.response_time_lower[-1],
            b.response_time_upper[-1],
        ]
        worst = max(worst, max_rel(ours, octave_gb[f"pb{i}"]))
    print(f"qncspb worst relative difference {worst:.3g}")
    assert worst <= EXACT, worst
