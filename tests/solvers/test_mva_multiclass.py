"""Exact multi-class MVA: textbook values, invariants, reduction to one class, errors.

Demand matrices become networks through :func:`tests._nets.pf_net` (processor sharing where
the classes' demands differ: the product-form model the textbooks solve)."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qnmodel.errors import InvalidModelError, InvalidTypeError, LatticeTooLargeError
from qnmodel.model import Network
from qnmodel.results.closed import MultiClassResult
from qnmodel.solvers import _kernels, mva, mva_load_dependent, mva_multiclass
from qnmodel.solvers._lattice import _lattice_numpy
from qnmodel.solvers.mva_multiclass import lattice_memory_bytes, seidmann_split
from tests._nets import pf_net
from tests._tol import COPY, closed_form, recursion

# ---------------------------------------------------------------------------------------
# Textbook values
# ---------------------------------------------------------------------------------------


def test_lazowska_p142_two_classes_exact_fractions():
    # QSP (Lazowska et al. 1984) sec. 7.4.2.1, p. 142: D = S V with
    # S = [1/10 1/3; 2/5 1], V = [10 9; 5 4]; N = (1, 1).
    D = np.array([[1.0, 3.0], [2.0, 4.0]])
    r = mva_multiclass(pf_net(D, [1, 1]))
    np.testing.assert_allclose(r.throughput, [3 / 19, 2 / 19], rtol=1e-14)
    np.testing.assert_allclose(r.residence_time, [[4 / 3, 5.0], [5 / 2, 7.0]], rtol=1e-14)
    np.testing.assert_allclose(r.queue_length, [[4 / 19, 15 / 19], [5 / 19, 14 / 19]], rtol=1e-14)
    np.testing.assert_allclose(r.response_time, [19 / 3, 19 / 2], rtol=1e-14)


def test_schwetman_1982_table3_with_delay_stations():
    # H. Schwetman, "Implementing the mean value algorithm ...", Purdue CSD-TR-355,
    # 1982, table 3 (also Octave queueing's qncmmva test): two terminal classes.
    D = np.array([[1.0, 0.0, 0.025], [0.0, 15.0, 0.5]])
    r = mva_multiclass(pf_net(D, [2, 1], kinds=["delay", "delay", "queue"]))
    # a delay station's residence time is its demand itself
    assert r.residence_time[0, 0] == pytest.approx(1.0, rel=COPY)
    assert r.residence_time[1, 1] == pytest.approx(15.0, rel=COPY)
    assert r.residence_time[0, 2] == pytest.approx(0.027, abs=1e-3)
    assert r.residence_time[1, 2] == pytest.approx(0.525, abs=1e-3)
    assert r.throughput[0] == pytest.approx(1.949, abs=1e-3)


def test_bolch_example_8_3_single_class_through_multiclass_solver():
    # Bolch et al., Queueing Networks and Markov Chains, 2nd ed., example 8.3:
    # S = (0.02, 0.2, 0.4, 0.6), V = (1, 0.4, 0.2, 0.1), N = 6.
    D = np.array([[0.02, 0.2 * 0.4, 0.4 * 0.2, 0.6 * 0.1]])
    r = mva_multiclass(pf_net(D, [6]))
    assert r.throughput[0] == pytest.approx(9.920, abs=1e-3)
    np.testing.assert_allclose(r.queue_length[0], [0.244, 2.261, 2.261, 1.234], atol=1e-3)
    np.testing.assert_allclose(r.utilization[0], [0.198, 0.794, 0.794, 0.595], atol=1e-3)


# ---------------------------------------------------------------------------------------
# One class equals the single-class solver
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("N", [1, 7, 150])
def test_one_class_equals_single_class_mva(N):
    net = Network.from_demands(
        [0.012, 0.05, 0.3, 0.021], think_time=1.5, kinds=["queue", "queue", "delay", "queue"]
    )
    single = mva(net, N, keep="last")
    multi = mva_multiclass(
        pf_net(net.demands[None, :], [N], 1.5, kinds=["queue", "queue", "delay", "queue"])
    )
    np.testing.assert_allclose(multi.throughput, single.throughput, rtol=1e-13)
    np.testing.assert_allclose(multi.response_time, single.response_time, rtol=1e-13)
    np.testing.assert_allclose(multi.queue_length, single.queue_length, rtol=1e-13)
    np.testing.assert_allclose(multi.utilization, single.utilization, rtol=1e-13)
    np.testing.assert_allclose(multi.residence_time, single.residence_time, rtol=1e-13)


def test_network_input_is_a_one_class_model():
    net = Network.from_demands([0.01, 0.02], think_time=0.5, names=["cpu", "disk"])
    r = mva_multiclass(net, 12)
    assert isinstance(r, MultiClassResult)
    assert r.station_names == ("cpu", "disk")
    assert r.throughput[0] == pytest.approx(mva(net, 12).throughput[-1], rel=1e-13)


def test_identical_classes_merge_into_one_class():
    # Classes with equal demands and think times are indistinguishable: the
    # network behaves as one class of N1 + N2 jobs, shared in proportion.
    d = np.array([0.03, 0.011, 0.07])
    r = mva_multiclass(pf_net(np.vstack([d, d]), [4, 9], 0.2))
    one = mva(Network.from_demands(list(d), think_time=0.2), 13, keep="last")
    assert r.throughput.sum() == pytest.approx(one.throughput[0], rel=1e-13)
    np.testing.assert_allclose(r.throughput, one.throughput[0] * np.array([4, 9]) / 13, rtol=1e-13)
    np.testing.assert_allclose(r.station_queue_length, one.queue_length[0], rtol=1e-13)


def test_empty_class_does_not_change_the_others_and_sees_arrival_queues():
    D = np.array([[0.02, 0.05, 0.01], [0.1, 0.01, 0.03]])
    with_empty = mva_multiclass(pf_net(D, [5, 0], [0.1, 0.7]))
    alone = mva_multiclass(pf_net(D[:1], [5], 0.1))
    np.testing.assert_allclose(with_empty.throughput, [alone.throughput[0], 0.0], rtol=1e-14)
    np.testing.assert_allclose(with_empty.queue_length[0], alone.queue_length[0], rtol=1e-14)
    assert not with_empty.queue_length[1].any()
    # arrival theorem: a class-1 job added to population (5, 0) sees Q(5, 0)
    np.testing.assert_allclose(
        with_empty.residence_time[1], D[1] * (1 + alone.queue_length[0]), rtol=1e-14
    )


# ---------------------------------------------------------------------------------------
# Invariants on random networks
# ---------------------------------------------------------------------------------------


def _random_model(seed: int):
    rng = np.random.default_rng(seed)
    C = int(rng.integers(1, 4))
    K = int(rng.integers(1, 6))
    D = rng.uniform(0.001, 0.1, (C, K))
    D[rng.random((C, K)) < 0.15] = 0.0
    D[:, 0] += 0.001
    N = rng.integers(0, 7, C)
    N[0] = max(N[0], 1)
    Z = np.where(rng.random(C) < 0.5, rng.uniform(0.0, 1.0, C), 0.0)
    kinds = ["delay" if rng.random() < 0.25 else "queue" for _ in range(K)]
    return D, N, Z, kinds


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_littles_law_utilisation_law_and_bounds(seed):
    D, N, Z, kinds = _random_model(seed)
    r = mva_multiclass(pf_net(D, N, Z, kinds=kinds))
    X, R = r.throughput, r.response_time
    live = N > 0
    C, K = D.shape
    # Little's law on the whole cycle of each class (X_c = N_c / (Z_c + sum_k R_ck): 2 K + 4
    # operations), and at each station (one product a side)
    np.testing.assert_allclose(X[live] * (Z[live] + R[live]), N[live], rtol=closed_form(2 * K + 4))
    np.testing.assert_allclose(r.queue_length, X[:, None] * r.residence_time, rtol=closed_form(2))
    np.testing.assert_allclose(r.utilization, X[:, None] * D, rtol=closed_form(2))
    # a queueing station is never more than fully busy (a sum of C products); residence >=
    # demand (R = D (1 + A), A >= 0: two roundings)
    q = np.array([k == "queue" for k in kinds])
    assert np.all(r.station_utilization[q] <= 1 + closed_form(2 * C))
    assert np.all(r.residence_time >= D * (1 - closed_form(2)))
    np.testing.assert_allclose(r.residence_time[:, ~q], D[:, ~q], rtol=1e-14)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_class_permutation_permutes_the_results(seed):
    D, N, Z, kinds = _random_model(seed)
    p = np.random.default_rng(seed).permutation(D.shape[0])
    a = mva_multiclass(pf_net(D, N, Z, kinds=kinds))
    b = mva_multiclass(pf_net(D[p], N[p], Z[p], kinds=kinds))
    # the same exact recursion with the classes' sums in another order: errors add along a
    # lattice path of sum(N) steps of (4 K + 2) C operations
    C, K = D.shape
    tol = recursion(max(int(N.sum()), 1), (4 * K + 2) * C)
    np.testing.assert_allclose(b.throughput, a.throughput[p], rtol=tol)
    np.testing.assert_allclose(b.queue_length, a.queue_length[p], rtol=tol, atol=1e-300)


def test_adding_a_job_raises_own_throughput_and_lowers_the_others():
    D = np.array([[0.02, 0.05, 0.01], [0.1, 0.01, 0.03], [0.01, 0.01, 0.08]])
    base = mva_multiclass(pf_net(D, [3, 3, 3], 0.05))
    more = mva_multiclass(pf_net(D, [4, 3, 3], 0.05))
    assert more.throughput[0] > base.throughput[0]
    assert np.all(more.throughput[1:] < base.throughput[1:])


# ---------------------------------------------------------------------------------------
# Memory: the frontier, never the whole lattice; LatticeTooLargeError up front
# ---------------------------------------------------------------------------------------


def test_lattice_memory_estimate_uses_the_slice_without_the_largest_class():
    # S = (3 + 1) * (5 + 1) without the largest class (N = 40); K = 10, C = 3
    assert lattice_memory_bytes([3, 40, 5], 10) == 8 * 24 * (4 * 10 + 4 * 9 + 16) + 65536


def test_numpy_path_keeps_only_a_frontier_of_the_lattice():
    D = np.random.default_rng(3).uniform(0.01, 0.1, (2, 4))
    N = np.array([400, 400])
    whole_lattice = math.prod(N + 1) * D.shape[1] * 8  # 5.1 MB of queue lengths
    tracemalloc.start()
    try:
        _lattice_numpy(D, D.copy(), np.zeros(2), N)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 0.05 * whole_lattice
    assert peak < lattice_memory_bytes(N, D.shape[1])


def test_lattice_too_large_is_refused_before_starting_with_the_estimate():
    D = np.full((6, 50), 0.01)
    with pytest.raises(LatticeTooLargeError) as exc:
        mva_multiclass(pf_net(D, [100] * 6))
    msg = str(exc.value)
    assert "MiB" in msg and "amva" in msg and "max_memory" in msg
    est = lattice_memory_bytes([100] * 6, 50) / 2**20
    assert f"{est:.4g}" in msg


def test_max_memory_accepts_a_size_string():
    D = np.full((2, 3), 0.01)
    mva_multiclass(pf_net(D, [10, 10]), max_memory="1 MiB")
    with pytest.raises(LatticeTooLargeError, match="max_memory=0.0009766 MiB"):
        mva_multiclass(pf_net(D, [10, 10]), max_memory="1 KiB")


# ---------------------------------------------------------------------------------------
# Seidmann's multi-server approximation (documented accuracy)
# ---------------------------------------------------------------------------------------

# Measured on the seeded family below (40 networks, n = 1..60, 2400 points):
# max |X/X_exact - 1| = 0.132, mean 0.0123; max |R/R_exact - 1| = 0.152, mean 0.0226.
SEIDMANN_X_MAX, SEIDMANN_X_MEAN = 0.14, 0.015
SEIDMANN_R_MAX, SEIDMANN_R_MEAN = 0.16, 0.025


def test_seidmann_accuracy_against_exact_load_dependent_mva():
    rng = np.random.default_rng(7)
    ex, er = [], []
    for _ in range(40):
        K = int(rng.integers(2, 6))
        D = rng.uniform(0.01, 0.1, K)
        m = rng.integers(1, 9, K)
        m[0] = int(rng.integers(2, 9))
        Z = float(rng.choice([0.0, rng.uniform(0, 1)]))
        net = Network.from_demands(list(D), think_time=Z, servers=list(m))
        exact = mva_load_dependent(net, 60)
        # the whole Seidmann curve: single-class MVA of the split network ...
        D2, delay2, _ = seidmann_split(D[None, :], np.zeros(K, bool), m)
        split = Network.from_demands(
            list(D2[0]), think_time=Z, kinds=["delay" if d else "queue" for d in delay2]
        )
        curve = mva(split, 60)
        # ... while mva_multiclass is exact (it was this split), checked at a few populations
        for n in (1, 17, 60):
            s = mva_multiclass(pf_net(D[None, :], [n], Z, servers=m))
            assert s.throughput[0] == pytest.approx(exact.throughput[n - 1], rel=1e-12)
        ex.extend(np.abs(curve.throughput / exact.throughput - 1))
        er.extend(np.abs(curve.response_time / exact.response_time - 1))
    assert max(ex) < SEIDMANN_X_MAX and np.mean(ex) < SEIDMANN_X_MEAN
    assert max(er) < SEIDMANN_R_MAX and np.mean(er) < SEIDMANN_R_MEAN
    assert max(ex) > 0.05  # it is an approximation: the bound is not vacuous


def test_seidmann_is_exact_for_one_job_and_keeps_the_asymptote():
    D = np.array([[0.04, 0.01]])
    D2, delay2, _ = seidmann_split(D, np.zeros(2, bool), np.array([4, 1]))
    split = mva(
        Network.from_demands(list(D2[0]), kinds=["delay" if d else "queue" for d in delay2]), 600
    )
    np.testing.assert_allclose(split.response_time[0], 0.05, rtol=1e-14)
    assert split.throughput[-1] == pytest.approx(4 / 0.04, rel=5e-3)
    assert split.utilization[-1, 0] == pytest.approx(1.0, rel=5e-3)  # per server: D / 4
    exact = mva_load_dependent(Network.from_demands([0.04, 0.01], servers=[4, 1]), 600, "last")
    assert split.throughput[-1] == pytest.approx(exact.throughput[0], rel=1e-3)
    # mva_multiclass is the exact load-dependent recursion at both ends
    for n in (1, 600):
        m = mva_multiclass(pf_net(D, [n], servers=[4, 1]))
        assert m.method == "mva.multiclass.ld"
        ref = mva_load_dependent(Network.from_demands([0.04, 0.01], servers=[4, 1]), n, "last")
        assert m.throughput[0] == pytest.approx(ref.throughput[0], rel=1e-12)


# ---------------------------------------------------------------------------------------
# Result object and bad input
# ---------------------------------------------------------------------------------------


def test_result_fields_repr_and_frames():
    r = mva_multiclass(pf_net([[0.01, 0.02], [0.03, 0.01]], [2, 3], names=["cpu", "disk"]))
    assert r.queue_length.shape == (2, 2) and r.throughput.shape == (2,)
    assert not r.throughput.flags.writeable
    assert r.bottleneck in ("cpu", "disk")
    d = mva_multiclass(pf_net([[0.01, 0.5]], [2], kinds=["queue", "delay"]))
    assert d.is_delay.tolist() == [False, True] and d.bottleneck == "s0"
    assert d.servers.tolist() == [1, 1]  # 1 at a delay station; is_delay says which
    assert "MultiClassResult" in repr(r) and "c1: N=3" in repr(r)
    assert list(r.to_frame().columns) == ["class", "population", "throughput", "response_time"]
    assert len(r.to_frame("station")) == 4
    with pytest.raises(InvalidModelError, match="level"):
        r.to_frame("nope")


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"demands": [[0.1, -1.0]], "N": [1]}, InvalidModelError, r"demands\[0, 1\]"),
        ({"demands": [[0.1, np.nan]], "N": [1]}, InvalidModelError, "finite"),
        ({"demands": [[0.1, 0.2]], "N": [1, 2]}, InvalidModelError, "one population"),
        ({"demands": [[0.1, 0.2]], "N": [1.5]}, InvalidModelError, r"N\[0\]"),
        (
            {"demands": [[0.1, 0.2]], "N": [1], "kinds": ["queue"]},
            InvalidModelError,
            "kinds has 1",
        ),
        (
            {"demands": [[0.1, 0.2]], "N": [1], "kinds": ["queue", "Delay"]},
            InvalidModelError,
            r"kinds\[1\]",
        ),
        (
            {"demands": [[0.1, 0.2]], "N": [1], "servers": [1, 0]},
            InvalidModelError,
            r"servers\[1\]",
        ),
        (
            {"demands": [[0.1, 0.2]], "N": [1], "think_time": [0.1, 0.2]},
            InvalidModelError,
            "think_time has 2",
        ),
        (
            {"demands": [[0.0, 0.0], [0.1, 0.1]], "N": [1, 1]},
            InvalidModelError,
            "class 'c0'",
        ),
    ],
)
def test_bad_input_names_the_argument(kwargs, exc, match):
    # the matrix form is validated once, where the network is built
    with pytest.raises(exc, match=match):
        Network.from_demands(**kwargs)


@pytest.mark.parametrize(
    ("net", "N", "exc", "match"),
    [
        (
            0.1,
            [1],
            InvalidTypeError,
            r"^mva_multiclass takes a Network, got float; a C x K demand matrix is "
            r"qnmodel.Network.from_demands\(D, N=\[\.\.\.\], think_time=\.\.\.\)$",
        ),
        ([[0.1, 0.2]], [1], InvalidTypeError, "mva_multiclass takes a Network, got list"),
        (pf_net([[0.1, 0.2]], [0]), None, InvalidModelError, "at least one job"),
        (pf_net([[0.1, 0.2]], [1]), [1, 2], InvalidModelError, "one population per class"),
        (pf_net([[0.1, 0.2]], [1]), [1.5], InvalidModelError, r"N\[0\]"),
    ],
)
def test_bad_call_names_the_argument(net, N, exc, match):
    with pytest.raises(exc, match=match):
        mva_multiclass(net, N)


def test_unit_strings_are_accepted():
    r = mva_multiclass(Network.from_demands([["10 ms", "20 ms"]], N=[3], think_time="1 s"))
    ref = mva_multiclass(Network.from_demands([[0.01, 0.02]], N=[3], think_time=1.0))
    np.testing.assert_allclose(r.throughput, ref.throughput, rtol=1e-15)


def test_kernel_status_is_queryable():
    assert isinstance(_kernels.available(), bool)
    assert isinstance(_kernels.status(), str) and _kernels.status()
