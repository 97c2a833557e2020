"""Multi-class bounds: Octave's qncmaba, qncmbsb and qncmcb blocks translated by hand,
enclosure of exact MVA on random networks, the defects of Octave's qncmaba, a peer batch.

Octave's m(k) < 1 (delay) is our ``delay``; its multiple-server refusal in ``qncmaba`` is a
feature here (bounds with the per-server demand D / m, checked against exact MVA). Octave's
``qncmcb`` fails with one class ("horizontal dimensions mismatch": the other classes'
``Xl(s) * D(s, :)`` is empty); ours returns the single-class composite bound.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from qnmodel.errors import InvalidModelError
from qnmodel.results.network import MultiClassBoundsResult
from qnmodel.solvers import (
    bounds_multiclass_aba,
    bounds_multiclass_bsb,
    bounds_multiclass_composite,
    mva_multiclass,
    mva_multiclass_ld_exact,
)
from tests._nets import pf_net
from tests._tol import closed_form

sys.path.insert(0, str(Path(__file__).parent))
from _octave_batch import EXACT, max_rel, octave_array, run_batch  # noqa: E402

ABA, BSB, CB = bounds_multiclass_aba, bounds_multiclass_bsb, bounds_multiclass_composite
SLACK = 1e-12  # an exact value computed by MVA may sit on a bound up to rounding

D2x3 = [[1, 2, 3], [1, 2, 3]]


@pytest.mark.parametrize("fn", [ABA, BSB])
def test_block1_errors(fn):
    # qncmaba / qncmbsb %!test fail(...) blocks, in order
    with pytest.raises(InvalidModelError, match="non-empty"):
        fn([], [])
    with pytest.raises(InvalidModelError, match="population has 2 entries but demands has 1 rows"):
        fn([[1, 2, 3]], [1, 0])
    with pytest.raises(InvalidModelError, match=r"demands\[1, 2\] must be >= 0, got -1.0"):
        fn([[1, 2, 3], [4, 5, -1]], [1, 0])
    with pytest.raises(InvalidModelError, match="size mismatch"):
        fn([[1, 2, 3], [4, 5, 6]], [1, 2], visits=[1, 2, 3])
    with pytest.raises(InvalidModelError, match=r"visits\[1, 2\] must be finite and >= 0"):
        fn([[1, 2, 3], [4, 5, 6]], [1, 2], visits=[[1, 2, 3], [4, 5, -1]])
    with pytest.raises(InvalidModelError, match="servers has 2 entries; give one per station"):
        fn(D2x3, [1, 2], servers=[1, 1])
    if fn is BSB:  # Octave: "not supported" for both; ABA bounds multi-server stations
        with pytest.raises(
            InvalidModelError, match="multiple-server station 2 .servers = 2. is not supported"
        ):
            fn(D2x3, [1, 2], servers=[1, 1, 2])
    with pytest.raises(InvalidModelError, match="think_time has 3 entries"):
        fn(D2x3, [1, 2], think_time=[1, 2, 3], delay=[0, 0, 1])
    with pytest.raises(InvalidModelError, match=r"think_time\[1\] must be >= 0, got -2"):
        fn(D2x3, [1, 2], think_time=[1, -2], delay=[0, 0, 1])
    if fn is BSB:  # qncmbsb's last fail: Z = [1 0] "only supports"
        with pytest.raises(InvalidModelError, match="only supports Z = 0"):
            fn(D2x3, [1, 2], think_time=[1, 0], delay=[0, 0, 1])


def test_qncmaba_multi_server_is_bounded_not_refused():
    # Octave: fail("qncmaba(..., [1 1 2])", "not supported"); we bound it
    S = np.array(D2x3, dtype=float)
    b = ABA(S, [1, 2], servers=[1, 1, 2])
    x = mva_multiclass_ld_exact(S, [1, 2], servers=[1, 1, 2]).throughput
    assert np.all(b.throughput_lower <= x * (1 + SLACK)) and np.all(
        x <= b.throughput_upper * (1 + SLACK)
    )


@pytest.mark.parametrize("fn", [ABA, BSB, CB])
def test_block2_empty_population(fn):
    b = fn(D2x3, [0, 0])
    for a in ("throughput_lower", "throughput_upper", "response_time_lower", "response_time_upper"):
        assert not getattr(b, a).any()


def _encloses(b, exact, slack=SLACK):
    X, R = exact.throughput, exact.response_time
    live = exact.population > 0
    assert np.all(b.throughput_lower[live] <= X[live] * (1 + slack))
    assert np.all(X[live] <= b.throughput_upper[live] * (1 + slack))
    assert np.all(b.response_time_lower[live] <= R[live] * (1 + slack))
    assert np.all(R[live] <= b.response_time_upper[live] * (1 + slack))


@pytest.mark.parametrize("fn", [ABA, BSB, CB])
def test_demo_bounds_enclose_mva(fn):
    # the three demos: S = [10 7 5 4; 5 2 4 6], N = [n 10], n = 1..20, against qncmmva
    S = np.array([[10, 7, 5, 4], [5, 2, 4, 6]], dtype=float)
    for n in range(1, 21):
        _encloses(fn(S, [n, 10]), mva_multiclass(pf_net(S, [n, 10])))


def test_octave_qncmaba_lower_bound_is_not_a_bound():
    # One station, D = (1, 0.01), N = (1, 5): the class-2 jobs never leave the station, class 1
    # gets a sixth of it, X_1 = 1/6. qncmaba: X_1 >= N_1 / (sum_s N_s D_s) = 1 / 1.05.
    D = np.array([[1.0], [0.01]])
    exact = mva_multiclass(pf_net(D, [1, 5]))
    assert exact.throughput[0] == pytest.approx(1 / 6, rel=1e-14)
    octave_xl = 1 / (1 * 1.0 + 5 * 0.01)
    assert octave_xl > exact.throughput[0]
    b = ABA(D, [1, 5])
    _encloses(b, exact)
    assert b.throughput_lower[0] == pytest.approx(1 / 6, rel=closed_form(4))  # tight here


def _random_case(seed, single_server=True):
    rng = np.random.default_rng(seed)
    C, K = int(rng.integers(1, 4)), int(rng.integers(1, 6))
    D = rng.uniform(0.01, 1.0, (C, K)) * (rng.random((C, K)) > 0.2)
    D[:, 0] += 0.01
    N = rng.integers(0, 6, C)
    N[0] = max(int(N[0]), 1)
    Z = rng.uniform(0, 3, C) * (rng.random(C) < 0.5)
    delay = rng.random(K) < 0.25
    delay[0] = False
    servers = np.where(delay | single_server, 1, rng.integers(1, 4, K))
    return D, N, Z, delay, servers


@pytest.mark.parametrize("seed", range(60))
def test_random_networks_enclosed(seed):
    D, N, Z, delay, servers = _random_case(seed, single_server=False)
    exact = mva_multiclass_ld_exact(D, N, think_time=Z, delay=delay, servers=servers)
    _encloses(ABA(D, N, think_time=Z, delay=delay, servers=servers), exact)
    exact0 = mva_multiclass(pf_net(D, N))  # BSB / CB: single-server queues, Z = 0
    _encloses(BSB(D, N), exact0)
    _encloses(CB(D, N), exact0)


def test_composite_is_at_least_as_tight_as_bsb_upper_when_loaded():
    S = np.array([[10, 7, 5, 4], [5, 2, 4, 6]], dtype=float)
    b, c = BSB(S, [20, 10]), CB(S, [20, 10])
    np.testing.assert_array_equal(c.throughput_lower, b.throughput_lower)
    assert np.all(c.throughput_upper <= b.throughput_upper + 1e-15)


def test_refusals_bsb_cb_and_result():
    with pytest.raises(InvalidModelError, match="station 1 is a delay station"):
        BSB(D2x3, [1, 2], delay=[0, 1, 0])
    with pytest.raises(InvalidModelError, match="bounds_multiclass_composite only supports Z = 0"):
        CB(D2x3, [1, 2], think_time=1.0)
    with pytest.raises(InvalidModelError, match="class 0 has N = 1 jobs but no demand"):
        ABA([[0, 0], [1, 1]], [1, 1])
    b = ABA(D2x3, [1, 2])
    assert isinstance(b, MultiClassBoundsResult) and b.method == "multiclass.aba"
    assert len(b.to_frame()) == 2 and "X in [" in repr(b)


# ---------------------------------------------------------------------------------------
# Peer batch: 60 random networks against qncmaba, qncmbsb, qncmcb
# ---------------------------------------------------------------------------------------

N_PEER = 60


def _peer_case(i):
    rng = np.random.default_rng(71_000 + i)
    # qncmcb fails for one class (its "Xl(s) * D(s, :)" is empty): one class in 10 of 60 only
    C, K = (int(rng.integers(2, 4)) if i % 6 else 1), int(rng.integers(1, 6))
    row = rng.uniform(0.05, 1.0, K)
    if i % 2 == 0:  # class-independent demands: every one of Octave's ABA formulas applies
        D = np.tile(row, (C, 1))
    else:
        D = rng.uniform(0.05, 1.0, (C, K))
    N = rng.integers(1, 8, C)
    Z = rng.uniform(0, 3, C) * (rng.random(C) < 0.5)
    delay = np.zeros(K, dtype=bool)
    if K > 1 and rng.random() < 0.5:  # a delay, smaller than every class's largest queue demand
        delay[-1] = True
        D[:, -1] = 0.5 * D[:, :-1].max(axis=1)
    return {"D": D, "N": N, "Z": Z, "delay": delay}


PEER = [_peer_case(i) for i in range(N_PEER)]


@pytest.fixture(scope="module")
def octave_bounds():
    lines = []
    for i, c in enumerate(PEER):
        D, N, Z = octave_array(c["D"]), octave_array(c["N"]), octave_array(c["Z"])
        m = octave_array(np.where(c["delay"], -1, 1))
        lines.append(f"[a b c d] = qncmaba({N}, {D}, ones(size({D})), {m}, {Z});")
        lines.append(f'emit("aba{i}", [a b c d]);')
        Dq = octave_array(c["D"][:, ~c["delay"]])  # BSB and CB: the queueing stations
        lines.append(f"[a b c d] = qncmbsb({N}, {Dq});")
        lines.append(f'emit("bsb{i}", [a b c d]);')
        if c["N"].size > 1:
            lines.append(f"[a b c d] = qncmcb({N}, {Dq});")
            lines.append(f'emit("cb{i}", [a b c d]);')
    return run_batch(lines)


def _four(b):
    return np.concatenate(
        [b.throughput_lower, b.throughput_upper, b.response_time_lower, b.response_time_upper]
    )


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
def test_peer_qncmaba(octave_bounds):
    """X_upper and R_lower on all 60 networks (the largest demand of each class is at a
    queueing station); X_lower and R_upper on the 30 with class-independent demands, where
    Octave's formula is the bound. On the others it is not always a bound: counted."""
    worst, invalid = 0.0, 0
    for i, c in enumerate(PEER):
        C = c["N"].size
        b = ABA(c["D"], c["N"], think_time=c["Z"], delay=c["delay"])
        o = octave_bounds[f"aba{i}"].reshape(4, C)
        worst = max(worst, max_rel(b.throughput_upper, o[1]), max_rel(b.response_time_lower, o[2]))
        if i % 2 == 0:
            worst = max(
                worst, max_rel(b.throughput_lower, o[0]), max_rel(b.response_time_upper, o[3])
            )
        else:
            kinds = ["delay" if d else "queue" for d in c["delay"]]
            x = mva_multiclass(pf_net(c["D"], c["N"], c["Z"], kinds=kinds)).throughput
            invalid += int(np.any(o[0] > x * (1 + SLACK)))
    print(
        f"qncmaba worst relative difference {worst:.3g}; "
        f"Octave's X_lower above exact MVA in {invalid} of 30"
    )
    assert worst <= EXACT, worst
    assert invalid > 0


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
@pytest.mark.parametrize("name,fn", [("bsb", BSB), ("cb", CB)])
def test_peer_qncmbsb_qncmcb(octave_bounds, name, fn):
    worst, compared = 0.0, 0
    for i, c in enumerate(PEER):
        if f"{name}{i}" in octave_bounds:
            b = fn(c["D"][:, ~c["delay"]], c["N"])
            worst = max(worst, max_rel(_four(b), octave_bounds[f"{name}{i}"]))
            compared += 1
    print(f"qncm{name} worst relative difference {worst:.3g} over {compared} networks")
    assert compared >= 50
    assert worst <= EXACT, worst
