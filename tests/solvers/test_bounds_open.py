"""Open-network bounds: Octave's qnosaba, qnosbsb and qnomaba blocks translated by hand,
enclosure of the exact open product-form solution, Octave's qnosbsb defect, a peer batch."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from qnmodel.errors import InvalidModelError, InvalidTypeError, UnstableModelError
from qnmodel.results.network import OpenBoundsResult
from qnmodel.solvers import bounds_open_aba, bounds_open_bsb
from tests._tol import closed_form

sys.path.insert(0, str(Path(__file__).parent))
from _octave_batch import EXACT, max_rel, octave_array, run_batch  # noqa: E402

ABA, BSB = bounds_open_aba, bounds_open_bsb


@pytest.mark.parametrize("fn", [ABA, BSB])
def test_qnosaba_qnosbsb_block1_errors(fn):
    with pytest.raises(InvalidModelError, match="demands is empty"):
        fn(0.1, [])
    with pytest.raises(InvalidModelError, match=r"demands\[1\] must be >= 0"):
        fn(0.1, [0, -1])
    with pytest.raises(InvalidModelError, match=r"arrival_rate\[0\] must be > 0"):
        fn(0, [1, 2])
    with pytest.raises(InvalidModelError, match="arrival_rate must be >= 0, got -1"):
        fn(-1, [1, 2])
    if fn is ABA:  # qnosaba's last two fail()s: V of another size, V negative
        with pytest.raises(InvalidModelError, match="size mismatch"):
            fn(1, [1, 2, 3], visits=[1, 2])
        with pytest.raises(InvalidModelError, match=r"visits\[0\] must be finite and >= 0"):
            fn(1, [1, 2, 3], visits=[-1, 2, 3])


def test_qnosaba_block2():
    b = ABA(1, [1, 1])
    assert b.throughput_lower[0] == 0 and b.response_time_upper[0] == np.inf
    assert b.throughput_upper[0] == 1.0 and b.response_time_lower[0] == 2.0


def test_qnosbsb_block2_and_octave_defect():
    b = BSB(0.1, [1, 2, 3])
    assert b.throughput_lower[0] == 0
    # exact open R = sum D_k / (1 - lambda D_k) = 7.897; ours 6 / (1 - 0.1 * 2) = 7.5 and
    # 6 / (1 - 0.3) = 8.571. Octave's lower bound D / (1 - lambda mean(D_tot)) = 15 (its
    # D_avg is the mean of the scalar total) is above the exact value and the upper bound.
    exact = sum(d / (1 - 0.1 * d) for d in (1, 2, 3))
    assert b.response_time_lower[0] == pytest.approx(7.5, rel=closed_form(4))
    assert b.response_time_upper[0] == pytest.approx(6 / 0.7, rel=closed_form(4))
    assert b.response_time_lower[0] <= exact <= b.response_time_upper[0]
    assert 6 / (1 - 0.1 * 6) > b.response_time_upper[0]


def test_qnomaba_block1_error():
    with pytest.raises(
        InvalidModelError, match="arrival_rate has 2 entries but demands has 3 rows"
    ):
        ABA([1, 1], np.ones((3, 3)))


def _exact_open(lam, D, delay):
    """R_c = sum_k D_ck / (1 - U_k) at queueing stations, D_ck at delays (BCMP)."""
    U = lam @ D
    return np.where(delay[None, :], D, D / (1 - U[None, :])).sum(axis=1), U


@pytest.mark.parametrize("seed", range(40))
def test_random_open_networks_enclosed(seed):
    rng = np.random.default_rng(seed)
    C, K = int(rng.integers(1, 4)), int(rng.integers(1, 6))
    D = rng.uniform(0.01, 1.0, (C, K))
    delay = rng.random(K) < 0.25
    delay[0] = False
    lam = rng.uniform(0.1, 1.0, C)
    lam *= rng.uniform(0.1, 0.95) / (lam @ np.where(delay[None, :], 0, D)).max()
    R, U = _exact_open(lam, D, delay)
    b = ABA(lam, D, delay=delay)
    assert np.all(b.response_time_lower <= R * (1 + 1e-14))
    assert np.all(lam <= b.throughput_upper)
    if C == 1:
        s = BSB(lam[0], D[0], delay=delay)
        assert (
            s.response_time_lower[0] <= R[0] * (1 + 1e-14) <= s.response_time_upper[0] * (1 + 2e-14)
        )


def test_multi_server_and_refusals():
    b = ABA([0.5, 1.0], [[1.0, 0.4], [0.5, 0.2]], servers=[2, 1])
    np.testing.assert_allclose(b.throughput_upper, [2.0, 4.0], rtol=1e-15)
    with pytest.raises(
        UnstableModelError, match="saturates station 1 .demand 0.5 s: utilisation 1 >= 1"
    ):
        BSB(2.0, [0.1, 0.5])
    with pytest.raises(InvalidTypeError, match="bounds single-class networks"):
        BSB(1.0, [[0.1, 0.5]])
    with pytest.raises(InvalidModelError, match=r"arrival_rate\[1\] must be > 0"):
        ABA([1.0, 0.0], [[0.1], [0.2]])
    b = BSB("40 Hz", [0.001, 0.002], delay=[False, True])
    assert b.arrival_rate[0] == 40.0 and b.response_time_lower[0] == pytest.approx(
        0.001 / 0.96 + 0.002
    )
    assert isinstance(b, OpenBoundsResult) and len(b.to_frame()) == 1 and "open.bsb" in repr(b)


# ---------------------------------------------------------------------------------------
# Peer batch: 50 random cases for each of qnosaba, qnosbsb, qnomaba
# ---------------------------------------------------------------------------------------

N_PEER = 50


def _case(i):
    rng = np.random.default_rng(81_000 + i)
    C, K = int(rng.integers(1, 4)), int(rng.integers(1, 7))
    D = rng.uniform(0.01, 1.0, (C, K))
    lam = rng.uniform(0.1, 1.0, C)
    lam *= rng.uniform(0.05, 0.95) / (lam @ D).max()
    return {"D": D, "lam": lam}


CASES = [_case(i) for i in range(N_PEER)]


@pytest.fixture(scope="module")
def octave_open():
    lines = []
    for i, c in enumerate(CASES):
        d0, l0 = octave_array(c["D"][0]), f"{c['lam'][0]:.17g}"
        lines.append(f"[a b c d] = qnosaba({l0}, {d0}); emit('sa{i}', [a b c d]);")
        lines.append(f"[a b c d] = qnosbsb({l0}, {d0}); emit('sb{i}', [a b c d]);")
        lines.append(
            f"[a b c d] = qnomaba({octave_array(c['lam'])}, {octave_array(c['D'])}); "
            f"emit('ma{i}', [a b c d]);"
        )
    return run_batch(lines)


def _four(b):
    return np.concatenate(
        [b.throughput_lower, b.throughput_upper, b.response_time_lower, b.response_time_upper]
    )


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
def test_peer_qnosaba_qnomaba(octave_open):
    worst = 0.0
    for i, c in enumerate(CASES):
        worst = max(worst, max_rel(_four(ABA(c["lam"][0], c["D"][0])), octave_open[f"sa{i}"]))
        worst = max(worst, max_rel(_four(ABA(c["lam"], c["D"])), octave_open[f"ma{i}"]))
    print(f"qnosaba/qnomaba worst relative difference {worst:.3g}")
    assert worst <= EXACT, worst


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
def test_peer_qnosbsb(octave_open):
    """X and the upper response-time bound equal Octave's; Octave's lower bound is
    D / (1 - lambda D) (its defect, module docstring of qnmodel.solvers.bounds_open)."""
    worst = defect = 0.0
    for i, c in enumerate(CASES):
        lam, D = c["lam"][0], c["D"][0]
        b = BSB(lam, D)
        xl, xu, rl, ru = octave_open[f"sb{i}"]
        worst = max(
            worst,
            max_rel(
                [b.throughput_lower[0], b.throughput_upper[0], b.response_time_upper[0]],
                [xl, xu, ru],
            ),
        )
        defect = max(defect, max_rel(rl, D.sum() / (1 - lam * D.sum())))
    print(f"qnosbsb worst relative difference {worst:.3g}")
    assert worst <= EXACT and defect <= EXACT, (worst, defect)
