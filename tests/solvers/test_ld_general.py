"""General load-dependent stations (rate multipliers): exact single-class MVA against
60-digit convolution and the multi-server solver, bounds, the multi-class split
approximation (:func:`ld_seidmann_split`, which ``amva`` uses) and bad input
(qnmodel.solvers.mva_ld_general)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qnmodel as qn
from qnmodel.errors import InvalidModelError
from qnmodel.solvers import mva_multiclass_ld_exact
from qnmodel.solvers.mva import mva_exact, mva_load_dependent
from qnmodel.solvers.mva_ld_general import (
    ld_least_stretch,
    ld_peak_capacity,
    ld_seidmann_split,
    mva_ld_general,
)
from tests._nets import pf_net
from tests._tol import EPS, LOG_CONV, closed_form

# Error budgets (derived in tests/solvers/test_mva_ld.py, where the same two paths meet a
# 60-digit oracle): the one-curve complement recursion is forward-stable, a few ulps independent
# of N (bound 4 K eps there, measured 1.2 ulp); the log-space convolution that several
# load-dependent curves take: LOG_CONV (tests/_tol.py). Measured here at most 6.8e-15 (31 ulp)
# on either path.


def complement(K):
    return 4 * K * EPS


class _LDNetwork:
    """Networks whose stations carry rate multipliers (L1 ``Station.rate_multipliers``)."""

    @staticmethod
    def make(demands, rm, think_time=0.0, kinds=None, servers=None):
        K = len(demands)
        kinds = kinds or ["queue"] * K
        servers = servers or [1] * K
        return qn.Network(
            tuple(
                qn.Station(
                    f"s{k}", demands[k], kind=kinds[k], servers=servers[k], rate_multipliers=rm[k]
                )
                for k in range(K)
            ),
            think_time=think_time,
        )


def _exact_mp(D, rm, Z, N):
    """X(N) and Q_k(N) by direct convolution of the station factors in 60 digits."""
    with mpmath.workdps(60):
        K = len(D)
        fs = []
        for k in range(K):
            f = [mpmath.mpf(1)]
            for j in range(1, N + 1):
                r = 1.0 if rm[k] is None else rm[k][min(j, len(rm[k])) - 1]
                f.append(f[-1] * mpmath.mpf(D[k]) / mpmath.mpf(r))
            fs.append(f)
        z = [mpmath.mpf(Z) ** j / mpmath.factorial(j) for j in range(N + 1)]

        def conv(a, b):
            return [mpmath.fsum(a[i] * b[n - i] for i in range(n + 1)) for n in range(N + 1)]

        G = z
        for f in fs:
            G = conv(G, f)
        X = G[N - 1] / G[N]
        Q = []
        for k in range(K):
            comp = z
            for i, f in enumerate(fs):
                if i != k:
                    comp = conv(comp, f)
            Q.append(float(mpmath.fsum(j * fs[k][j] * comp[N - j] for j in range(N + 1)) / G[N]))
        return float(X), np.array(Q)


@pytest.mark.parametrize("load", ["light", "saturated"])
def test_matches_60_digit_convolution(load):
    rm = [[1.0, 1.8, 2.4, 2.8], None, [0.7, 1.0, 1.2]]
    D = [0.03, 0.01, 0.02] if load == "light" else [0.08, 0.01, 0.05]
    N, Z = 60, (2.0 if load == "light" else 0.05)
    X, Q = _exact_mp(D, rm, Z, N)
    res = mva_ld_general(_LDNetwork.make(D, rm, think_time=Z), N)
    assert res.throughput[-1] == pytest.approx(X, rel=LOG_CONV)
    np.testing.assert_allclose(res.queue_length[-1], Q, rtol=LOG_CONV)
    if load == "saturated":  # the bottleneck (r_max = 1.2) is close to U = 1
        assert res.utilization[-1, 2] > 0.9999


def test_sound_at_large_population_near_saturation():
    net = _LDNetwork.make(
        [0.02, 0.004, 0.1],
        [[1.0, 1.8, 2.4, 2.8], None, None],
        think_time=0.5,
        kinds=["queue", "queue", "delay"],
    )
    N = 3000
    res = mva_ld_general(net, N)
    n = res.n
    jobs = res.queue_length.sum(axis=1) + res.throughput * net.think_time
    # X = n / (Z + sum_k R_k) and K = 3 products summed with X Z: 2 K + 4 operations
    np.testing.assert_allclose(jobs, n, rtol=closed_form(10))
    assert np.all(np.diff(res.throughput) >= -1e-11 * res.throughput[1:])
    # the asymptote r_L / D: at N = 3000 >> N* the gap is below 1e-300, leaving the complement
    # recursion's few ulps (and the division's)
    assert res.throughput[-1] == pytest.approx(2.8 / 0.02, rel=complement(3) + closed_form(1))
    assert np.all((res.queue_length >= 0) & np.isfinite(res.queue_length))


@st.composite
def _ms_nets(draw):
    K = draw(st.integers(1, 5))
    D = draw(st.lists(st.floats(1e-3, 1.0), min_size=K, max_size=K))
    kinds = draw(st.lists(st.sampled_from(["queue", "queue", "delay"]), min_size=K, max_size=K))
    servers = draw(st.lists(st.integers(1, 6), min_size=K, max_size=K))
    servers = [1 if k == "delay" else m for k, m in zip(kinds, servers, strict=True)]
    Z = draw(st.sampled_from([0.0, 0.5, 3.0]))
    if Z == 0 and all(k == "delay" for k in kinds):
        kinds[0] = "queue"
    return D, kinds, servers, Z, draw(st.integers(1, 80))


@settings(max_examples=60, deadline=None)
@given(_ms_nets())
def test_min_j_m_equals_the_multiserver_solver(case):
    D, kinds, servers, Z, N = case
    net = qn.Network.from_demands(D, think_time=Z, kinds=kinds, servers=servers)
    rm = [
        None if k == "delay" or m == 1 else np.arange(1.0, m + 1)
        for k, m in zip(kinds, servers, strict=True)
    ]
    a = mva_load_dependent(net, N) if net.has_multiserver else mva_exact(net, N)
    b = mva_ld_general(
        qn.Network.from_demands(D, think_time=Z, kinds=kinds), N, rate_multipliers=rm
    )
    np.testing.assert_allclose(b.throughput, a.throughput, rtol=LOG_CONV)
    np.testing.assert_allclose(b.queue_length, a.queue_length, rtol=LOG_CONV)
    np.testing.assert_allclose(b.utilization, a.utilization, rtol=LOG_CONV, atol=1e-300)


@settings(max_examples=40, deadline=None)
@given(_ms_nets(), st.integers(1, 5))
def test_all_multipliers_one_equals_a_queueing_station(case, L):
    D, kinds, _, Z, N = case
    net = qn.Network.from_demands(D, think_time=Z, kinds=kinds)
    rm = [None if k == "delay" else np.ones(L) for k in kinds]
    a = mva_exact(net, N)
    b = mva_ld_general(net, N, rate_multipliers=rm)
    np.testing.assert_allclose(b.throughput, a.throughput, rtol=LOG_CONV)
    np.testing.assert_allclose(b.residence_time, a.residence_time, rtol=LOG_CONV)


def test_dispatch_from_mva_and_bounds_enclose_exact():
    net = _LDNetwork.make(
        [0.04, 0.01, 0.2],
        [[1.0, 1.8, 2.4, 2.8], None, None],
        think_time=1.0,
        kinds=["queue", "queue", "delay"],
    )
    res = qn.mva(net, 200)
    assert res.method == "mva.ld_general"
    b = qn.bounds(net, 200, method="aba")
    assert b.saturation_throughput == pytest.approx(2.8 / 0.04, rel=1e-15)
    assert b.bottleneck == "s0"
    assert np.all(b.throughput_upper >= res.throughput * (1 - 1e-12))
    assert np.all(b.throughput_lower <= res.throughput * (1 + 1e-12))
    assert np.all(b.response_time_lower <= res.response_time * (1 + 1e-12))
    with pytest.raises(
        InvalidModelError,
        match=r"^bounds_bjb cannot solve load-dependent stations \(rate curves\) \(station 's0'\)",
    ):
        qn.bounds(net, 10, method="bjb")


def test_bounds_use_the_least_stretch_when_r1_exceeds_one():
    # r(1) = 2: a lone job spends D/2 there, so the ABA light-load bound must use D/2
    net = _LDNetwork.make([0.02, 0.01], [[2.0, 3.0], None])
    assert ld_least_stretch(net) == pytest.approx([0.5, 1.0], rel=closed_form(1))  # 1 / r(1)
    assert ld_peak_capacity(net) == pytest.approx([3.0, 1.0], rel=closed_form(1))
    res = qn.mva(net, 50)
    b = qn.bounds(net, 50, method="aba")
    assert res.response_time[0] == pytest.approx(0.02, rel=closed_form(4))  # 0.01 + 0.01
    assert np.all(b.response_time_lower <= res.response_time * (1 + 1e-12))
    assert np.all(b.throughput_upper >= res.throughput * (1 - 1e-12))


@pytest.mark.parametrize(
    ("rm", "match"),
    [
        ([[], None], r"rate_multipliers is empty"),
        (
            [[1.0, 0.0], None],
            r"^Station 's0': rate_multipliers\[1\] must be finite and > 0 \(a rate that falls "
            r"to zero never completes a job\), got 0.0$",
        ),
        ([[1.0, float("nan")], None], r"rate_multipliers\[1\] must be finite and > 0"),
        ([[-1.0], None], r"rate_multipliers\[0\] must be finite and > 0 .*got -1.0$"),
        ([None], r"rate_multipliers has 1 entries but the network has 2 stations"),
    ],
)
def test_bad_multipliers_are_named(rm, match):
    net = qn.Network.from_demands([0.1, 0.2])
    with pytest.raises(InvalidModelError, match=match):
        mva_ld_general(net, 3, rate_multipliers=rm)


def _split_exact(D, N, Z, rm):
    """Exact multi-class MVA of the Seidmann-like split of the load-dependent stations
    (:func:`ld_seidmann_split`), folded back onto them: X (C,)."""
    D = np.atleast_2d(np.asarray(D, dtype=np.float64))
    rates = tuple(None if r is None else np.asarray(r, dtype=np.float64) for r in rm)
    D2, delay2, _ = ld_seidmann_split(D, np.zeros(D.shape[1], dtype=bool), rates)
    kinds = ["delay" if d else "queue" for d in delay2]
    return qn.mva_multiclass(pf_net(D2, N, Z, kinds=kinds)).throughput


@pytest.mark.parametrize(
    ("D", "Z", "bound"),
    [([0.05, 0.02], 0.3, 0.008), ([0.05, 0.001], 0.0, 0.08)],
    ids=["with-think-time", "ld-station-alone"],
)
def test_multiclass_split_is_exact_at_one_job_and_close_in_between(D, Z, bound):
    """Seidmann-like split vs the exact single-class solution, N = 1..100: measured
    worst throughput error 0.71 % (N = 16) with think time, 7.3 % (N = 4) when the
    load-dependent station is nearly alone."""
    rm = [[1.0, 1.8, 2.4, 2.8], None]
    exact = mva_ld_general(qn.Network.from_demands(D, think_time=Z), 100, rate_multipliers=rm)
    errs = []
    for N in range(1, 101):
        approx = _split_exact([D], [N], Z, rm)
        errs.append(abs(approx[0] / exact.throughput[N - 1] - 1))
    assert errs[0] < 1e-14  # one job: D / r(1) exactly
    assert errs[-1] < 1e-3  # heavy traffic: the asymptote r_max / D
    assert bound / 2 < max(errs) < bound
    two = _split_exact([D, D], [5, 5], [Z, Z], rm)
    net = qn.Network(
        [qn.Station("s0", D[0], rate_multipliers=rm[0]), qn.Station("s1", D[1])],
        classes=[qn.ClosedClass("c0", 5, Z), qn.ClosedClass("c1", 5, Z)],
    )
    amva = qn.amva(net, method="schweitzer")  # the split, solved by Schweitzer-Bard
    assert amva.method == "amva.schweitzer+seidmann" and amva.converged.all()
    assert amva.throughput.sum() == pytest.approx(two.sum(), rel=0.05)


def test_l1_station_rate_multipliers_reach_every_solver():
    stations = (
        qn.Station("nvme", "4 ms", rate_multipliers=[1, 1.8, 2.4, 2.8]),
        qn.Station("cpu", "1 ms"),
    )
    net = qn.Network(stations, think_time="20 ms")
    res = qn.mva(net, 40)
    assert res.method == "mva.ld_general"
    ref = mva_ld_general(
        qn.Network.from_demands([0.004, 0.001], think_time=0.02),
        40,
        rate_multipliers=[[1, 1.8, 2.4, 2.8], None],
    )
    np.testing.assert_array_equal(res.throughput, ref.throughput)
    opened = qn.open_network(net, "500/s")
    assert opened.capacity.tolist() == [2.8, 1.0]
    assert opened.saturation_arrival_rate == pytest.approx(700.0, rel=1e-15)
    sat = qn.bounds(net, 40, method="aba").saturation_throughput
    assert sat == pytest.approx(700.0, rel=closed_form(2))  # r_L / D


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(1e-3, 0.1), min_size=1, max_size=5),
    st.lists(st.floats(0.1, 1.0), min_size=1, max_size=7),
    st.sampled_from([0.0, 0.01, 1.0]),
    st.integers(1, 150),
)
def test_one_station_complement_recursion_equals_the_convolution(D, inc, Z, N):
    """The O(N (K + L)) recursion for one non-decreasing curve vs the log-space convolution."""
    from qnmodel.solvers.mva_ld_general import _ld_convolution_general, ld_general_arrays

    D = np.array(D)
    delay = np.zeros(D.size, dtype=bool)
    rates = [np.cumsum(inc)] + [None] * (D.size - 1)
    fast = ld_general_arrays(D, delay, Z, N, rates)
    slow = _ld_convolution_general(D, delay, Z, N, rates, "all", D > 0, [0])
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_allclose(a, b, rtol=LOG_CONV)


def test_one_station_recursion_at_saturation_vs_60_digits():
    rm = [[1.0, 1.8, 2.4, 2.8], None, None]
    D, Z, N = [0.05, 0.01, 0.01], 0.05, 80
    X, Q = _exact_mp(D, rm, Z, N)
    res = mva_ld_general(_LDNetwork.make(D, rm, think_time=Z), N)
    assert res.utilization[-1, 0] > 0.9999  # X D / 2.8 -> 1
    assert res.throughput[-1] == pytest.approx(X, rel=complement(3))
    np.testing.assert_allclose(res.queue_length[-1], Q, rtol=complement(3))


def test_exact_multiclass_takes_a_network_with_rate_curves():
    stations = [
        qn.Station("nvme", {"a": 0.05, "b": 0.03}, rate_multipliers=[1.0, 1.8, 2.4, 2.8],
                   discipline="PS"),
        qn.Station("cpu", {"a": 0.02, "b": 0.01}, discipline="PS"),
    ]  # fmt: skip
    net = qn.Network(
        stations,
        classes=[qn.ClosedClass("a", 4, think_time=0.3), qn.ClosedClass("b", 3, think_time=0.1)],
    )
    res = qn.mva_multiclass(net)
    ref = mva_multiclass_ld_exact(
        [[0.05, 0.02], [0.03, 0.01]], [4, 3], [0.3, 0.1], rates=[[1, 1.8, 2.4, 2.8], None]
    )
    assert res.method == "mva.multiclass.ld"
    np.testing.assert_array_equal(res.throughput, ref.throughput)
    assert res.station_names == ("nvme", "cpu")
    # amva's split approximation: measured -0.77 % / -1.2 % (Schweitzer), -0.39 % / -0.55 %
    # (Linearizer) in throughput
    for method, tol in (("schweitzer", 0.015), ("linearizer", 0.007)):
        a = qn.amva(net, method=method)
        assert a.method == f"amva.{method}+seidmann"
        np.testing.assert_allclose(a.throughput, res.throughput, rtol=tol)
    with pytest.raises(InvalidModelError, match=r"mva_multiclass cannot solve open classes"):
        qn.mva_multiclass(
            qn.Network(stations, classes=[qn.OpenClass("a", 1.0), qn.ClosedClass("b", 1)])
        )
