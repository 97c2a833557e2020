"""Numerical robustness at the edges: demands over 15 decades, N to 10^6, K to 10^4, nearly
balanced and extremely unbalanced networks, open stations at U = 1 - 1e-12, ill-conditioned
calibration data.

Every result is finite, probabilities and queue lengths are >= 0, the operational laws hold
(Little's law on the whole network, the utilisation law, X <= 1 / D_max), and where the
numbers cannot be trusted the solver says so (a warning or an error) instead of returning them
silently.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.calibration import fit_device
from qnmodel.errors import (
    InvalidModelError,
    MeasurementArtefactWarning,
    NumericalInstabilityWarning,
)
from tests._nets import pf_net
from tests._tol import closed_form

EPS = np.finfo(float).eps


def laws_hold(res, net, rtol):
    """Finite, non-negative, Little's law N = X (R + Z), utilisation law, X <= 1 / D_max."""
    X, Q, U = res.throughput, res.queue_length, res.utilization
    for a in (X, res.response_time, Q, U, res.residence_time):
        assert np.all(np.isfinite(a)) and np.all(a >= 0)
    n = res.n
    np.testing.assert_allclose(Q.sum(axis=1) + X * net.think_time, n, rtol=rtol)
    np.testing.assert_allclose(X * (res.response_time + net.think_time), n, rtol=rtol)
    per_server = net.demands / net.servers
    # X D_k / m_k <= 1 up to the rounding of the product (a couple of ulps)
    assert np.all(X[:, None] * per_server[None, :] <= 1 + 4 * EPS)


def test_demands_spanning_fifteen_decades():
    D = np.logspace(-9, 6, 16)  # 1 ns .. 1e6 s (11.6 days) in one network
    net = qn.Network.from_demands(D, think_time=1.0)
    res = qn.mva(net, 1000)
    # Exact recursion: each n adds a few roundings that the next step damps; K = 16.
    laws_hold(res, net, rtol=4 * 16 * EPS)
    # The 1e6 s station is the bottleneck from n = 2 on: X -> 1 / D_max.
    assert res.throughput[-1] == pytest.approx(1e-6, rel=4 * EPS)
    # The 1 ns station still has its tiny, positive queue: Q_0 = X D_0 (1 + Q_0(n-1)) ~ 1e-15.
    assert 0 < res.queue_length[-1, 0] < 1e-14


def test_population_of_a_million_keeping_the_last_point():
    net = qn.Network.from_demands([0.01, 0.02, 0.005, 0.001], think_time=1.0)
    res = qn.mva(net, 10**6, keep="last")
    laws_hold(res, net, rtol=1e-12)
    # Deep in saturation: X = 1 / D_max to the last bit, the bottleneck holds every job the
    # others do not (their queues are the open M/M/1 ones at U_k = D_k / D_max).
    assert res.throughput[0] == pytest.approx(50.0, rel=4 * EPS)
    others = [(0.01 / 0.02), (0.005 / 0.02), (0.001 / 0.02)]
    expected_q = [u / (1 - u) for u in others]
    np.testing.assert_allclose(res.queue_length[0, [0, 2, 3]], expected_q, rtol=1e-9)


def test_population_of_a_million_approximate_mva():
    net = qn.Network.from_demands([0.01, 0.02])
    res = qn.amva(net, 10**6, keep="last")
    assert np.all(np.isfinite(res.queue_length)) and np.all(res.queue_length >= 0)
    assert res.throughput[0] == pytest.approx(50.0, rel=1e-9)


@pytest.mark.parametrize("solver", ["mva", "amva"])
def test_ten_thousand_stations(solver):
    K = 10_000
    net = qn.Network.from_demands(np.full(K, 1e-3), think_time=1.0)
    res = getattr(qn, solver)(net, 100, keep="last")
    assert np.all(np.isfinite(res.queue_length)) and np.all(res.queue_length >= 0)
    # a balanced network: every station holds the same share
    assert np.ptp(res.queue_length) <= 1e-12 * res.queue_length.max()
    assert res.queue_length.sum() + res.throughput[0] * 1.0 == pytest.approx(100, rel=K * EPS)


def test_nearly_balanced_network_agrees_with_the_balanced_closed_form():
    # D_k = 1 + 1e-12 k: within rounding of the balanced network, whose exact solution is
    # X(N) = N / (D (K + N - 1)) (Zahorjan's balanced job formula, [LZGS] sec. 5.3).
    K, N = 8, 500
    net = qn.Network.from_demands(1 + 1e-12 * np.arange(K))
    res = qn.mva(net, N, keep="last")
    laws_hold(res, net, rtol=1e-12)
    assert res.throughput[0] == pytest.approx(N / (K + N - 1), rel=1e-10)


def test_extremely_unbalanced_network():
    net = qn.Network.from_demands([1e6] + [1e-9] * 7)
    res = qn.mva(net, 500)
    laws_hold(res, net, rtol=1e-12)
    assert res.throughput[-1] == pytest.approx(1e-6, rel=1e-12)
    assert res.queue_length[-1, 0] == pytest.approx(500, rel=1e-12)


def test_many_server_station_at_saturation_has_non_negative_figures():
    net = qn.Network.from_demands([200.0, 0.1], servers=[200, 1], think_time=0.0)
    res = qn.mva(net, 600, keep="last")
    laws_hold(res, net, rtol=1e-11)
    assert np.all(res.residence_time[0] >= net.demands * (1 - 1e-12))


def test_multiclass_extremes_stay_finite():
    res = qn.mva_multiclass(pf_net([[1e-9, 1e6], [1e6, 1e-9]], [50, 50]))
    assert np.all(np.isfinite(res.queue_length)) and np.all(res.queue_length >= 0)
    # per class X_c = N_c / sum_k R_ck and Q_ck = X_c R_ck summed: 3 K + 4 operations
    np.testing.assert_allclose(res.queue_length.sum(axis=1), [50, 50], rtol=closed_form(10))


def test_times_that_overflow_are_an_error_not_zero_throughput():
    net = qn.Network.from_demands([1e300, 1e300])
    with pytest.raises(InvalidModelError, match="overflows double precision"):
        qn.mva(net, 10**9, keep="last")
    with pytest.raises(InvalidModelError, match="overflows double precision"):
        qn.bounds(net, 10**9)


@pytest.mark.parametrize("slack", [1e-12, 1e-15])
def test_open_station_a_hair_below_saturation_warns(slack):
    D = 0.01
    net = qn.Network.from_demands([D])
    lam = (1 - slack) / D
    with pytest.warns(NumericalInstabilityWarning, match=r"U = 1 - .* about \d+ significant"):
        res = qn.open_network(net, lam)
    # The figure is still the exact one for the rates as given, to the digits the warning
    # promises: R = D / (1 - lam D) with lam D evaluated in double precision.
    u = lam * D
    assert np.isfinite(res.response_time).all() and res.response_time[0] > 0
    assert res.response_time[0] == pytest.approx(D / (1 - u), rel=1e-9)


def test_open_station_far_from_saturation_does_not_warn():
    net = qn.Network.from_demands([0.01])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = qn.open_network(net, (1 - 1e-6) / 0.01)
    assert res.response_time[0] == pytest.approx(0.01 / 1e-6, rel=1e-9)


def test_ill_conditioned_device_calibration_warns_instead_of_answering_quietly():
    # Sizes spanning a factor 1.003: positioning and transfer cannot be separated.
    B = np.array([4096, 4100, 4104, 4108])
    with pytest.warns(MeasurementArtefactWarning, match="poorly separated"):
        fit_device(B, 0.004 + B / 80e6)
    # Times that do not grow with the size: r runs away; the fit says it is extrapolated.
    B = np.array([4096, 65536, 1 << 20])
    with pytest.warns(MeasurementArtefactWarning, match="r is extrapolated"):
        res = fit_device(B, np.array([0.004, 0.003, 0.002]))
    assert np.isfinite(res.values["a"]) and np.isfinite(res.values["r"])
    # A single size is refused outright.
    with pytest.raises(InvalidModelError, match="at least 2 distinct values"):
        fit_device([4096] * 5, [0.004] * 5)


def test_open_station_with_a_billion_servers_is_solved_at_once():
    """Found by the fuzzer's long profile (servers = 6.5e9): the Erlang B recursion ran m
    steps (minutes for m = 10^9) and the bounds built an array of m rates (48 GiB, the
    machine's OOM killer); now B stops once it underflows and the bounds need no array."""
    net = qn.Network.from_demands([0.002, 0.01], servers=[10**9, 1], think_time=1.0)
    res = qn.open_network(net, 10.0)
    assert res.residence_time[0, 0] == pytest.approx(0.002, rel=1e-15)  # no wait: C ~ 0
    assert res.residence_time[0, 1] == pytest.approx(0.01 / (1 - 0.1), rel=1e-14)
    b = qn.bounds(net, 50, method="aba")
    assert np.all(np.isfinite(b.throughput_upper))
    # closed: 50 jobs cycling with Z = 1 s stay below N / (D + Z) = 49.4/s (ABA), queueing a
    # little at the single server
    X = qn.mva(net, 50).throughput[-1]
    assert 0.98 * 50 / 1.012 <= X <= 50 / 1.012
