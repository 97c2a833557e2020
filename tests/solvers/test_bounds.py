"""ABA and BJB bounds: cited cases, hand-computed values, asymptotics and broadcasting."""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.solvers.bounds import aba_from_aggregates, bjb_from_aggregates
from tests._tol import COPY, closed_form
from tests.reference import actual_values, case_network, load_cases

BOUNDS_CASES = load_cases("bounds")


@pytest.mark.parametrize("case", BOUNDS_CASES, ids=[c["id"] for c in BOUNDS_CASES])
def test_reference_case(case):
    res = qn.bounds(case_network(case), case["inputs"]["N"], method=case["method"])
    tol = case["tolerance"]
    for key, expected in case.get("expected", {}).items():
        np.testing.assert_allclose(
            actual_values(case, res, key), expected, rtol=tol["rel"], atol=tol["abs"], err_msg=key
        )
    for key, expected in case.get("expected_curve", {}).items():
        np.testing.assert_allclose(
            getattr(res, key), expected, rtol=tol["rel"], atol=tol["abs"], err_msg=key
        )


def test_bjb_zero_think_time_is_seed_002_eq_1():
    """max(N Dmax, D + (N-1) Davg) <= R(N) <= D + (N-1) Dmax, by hand for D = (1, 2, 3)."""
    res = qn.bounds(qn.Network.from_demands([1.0, 2.0, 3.0]), 4, method="bjb")
    n = np.arange(1, 5)
    # small integers throughout (D = 6, Dmax = 3, Davg = 2): every operation is exact
    np.testing.assert_allclose(res.response_time_lower, np.maximum(3 * n, 6 + (n - 1) * 2), rtol=0)
    np.testing.assert_allclose(res.response_time_upper, 6 + (n - 1) * 3, rtol=0)
    # n = 4: R in [max(12, 12), 15] = [12, 15] and X = n / R.
    assert (res.response_time_lower[-1], res.response_time_upper[-1]) == (12.0, 15.0)
    np.testing.assert_allclose(res.throughput_upper, n / res.response_time_lower, rtol=1e-15)
    np.testing.assert_allclose(res.throughput_lower, n / res.response_time_upper, rtol=1e-15)


def test_bjb_with_think_time_by_hand():
    """D = (1, 2, 3), Z = 6, N = 3 ([LZGS] sec. 5.3, terminal workload).

    X_hi = min(1/3, 3 / (6 + 6 + 2*2/(1 + 6/6))) = min(1/3, 3/14) = 3/14
    X_lo = 3 / (6 + 6 + 2*3/(1 + 6/18)) = 3 / (12 + 4.5) = 2/11
    """
    res = qn.bounds(qn.Network.from_demands([1.0, 2.0, 3.0], think_time=6.0), 3, method="bjb")
    assert res.throughput_upper[-1] == pytest.approx(3 / 14, rel=1e-15)
    assert res.throughput_lower[-1] == pytest.approx(2 / 11, rel=1e-15)
    assert res.response_time_lower[-1] == pytest.approx(14 - 6, rel=1e-15)
    assert res.response_time_upper[-1] == pytest.approx(16.5 - 6, rel=1e-15)


def test_aba_by_hand_with_think_time():
    """D = (1, 2, 3), Z = 6: X(n) <= min(n/12, 1/3), X(n) >= n/(6n + 6), R >= max(6, 3n - 6)."""
    res = qn.bounds(qn.Network.from_demands([1.0, 2.0, 3.0], think_time=6.0), 8, method="aba")
    n = np.arange(1, 9)
    np.testing.assert_allclose(res.throughput_upper, np.minimum(n / 12, 1 / 3), rtol=1e-15)
    np.testing.assert_allclose(res.throughput_lower, n / (6 * n + 6), rtol=1e-15)
    np.testing.assert_allclose(res.response_time_lower, np.maximum(6, 3 * n - 6), rtol=1e-15)
    np.testing.assert_allclose(res.response_time_upper, 6 * n, rtol=1e-15)


def test_asymptotic_quantities():
    net = qn.Network.from_demands(
        [0.2, 0.5, 0.1, 1.0], kinds=["queue"] * 3 + ["delay"], think_time=2
    )
    res = qn.bounds(net, 10, method="aba")
    assert res.bottleneck == "s1"
    # closed forms of a few operations each: 1/Dmax, max, a sum of 4, (D + Z)/Dmax
    assert res.saturation_throughput == pytest.approx(2.0, rel=closed_form(1))
    assert res.max_demand == pytest.approx(0.5, rel=COPY)
    assert res.total_demand == pytest.approx(1.8, rel=closed_form(4))
    assert res.n_star == pytest.approx((1.8 + 2) / 0.5, rel=closed_form(6))
    # Delay demand enters R bounds additively and never the saturation bound.
    assert res.response_time_lower[0] == pytest.approx(1.8, rel=closed_form(4))


def test_multiserver_station_in_aba_counts_per_server_demand():
    net = qn.Network.from_demands([0.8, 0.3], servers=[4, 1])
    res = qn.bounds(net, 50, method="aba")
    assert res.bottleneck == "s1"  # 0.8/4 = 0.2 < 0.3
    assert res.saturation_throughput == pytest.approx(1 / 0.3, rel=closed_form(2))
    # The bound still brackets exact load-dependent MVA.
    ex = qn.mva(net, 50)
    assert np.all(res.throughput_lower <= ex.throughput * (1 + 1e-12))
    assert np.all(ex.throughput <= res.throughput_upper * (1 + 1e-12))


def test_bjb_rejects_multiserver_and_names_station_and_fix():
    net = qn.Network.from_demands([0.8, 0.3], servers=[4, 1], names=["raid", "cpu"])
    with pytest.raises(
        qn.InvalidModelError,
        match=r"^bounds_bjb cannot solve multi-server stations \(station 'raid'\): use qnmodel.mva "
        r"or qnmodel.mva_multiclass \(or bounds\(\.\.\., method='aba'\)\)$",
    ):
        qn.bounds(net, 5, method="bjb")


def test_pure_delay_network_is_exact():
    net = qn.Network.from_demands([0.5, 1.5], kinds=["delay", "delay"], think_time=2.0)
    for method in ("aba", "bjb"):
        res = qn.bounds(net, 6, method=method)
        n = np.arange(1, 7)
        np.testing.assert_allclose(res.throughput_lower, n / 4.0, rtol=1e-15)
        np.testing.assert_allclose(res.throughput_upper, n / 4.0, rtol=1e-15)
        np.testing.assert_allclose(res.response_time_lower, 2.0, rtol=1e-15)
        np.testing.assert_allclose(res.response_time_upper, 2.0, rtol=1e-15)


def test_default_method_is_bjb_and_unknown_method_is_rejected():
    net = qn.Network.from_demands([0.1, 0.2])
    assert qn.bounds(net, 3).method == "bjb"
    with pytest.raises(ValueError, match=r"method must be one of 'aba', 'bjb'; got 'BJB'"):
        qn.bounds(net, 3, method="BJB")


def test_kernels_broadcast_over_a_grid():
    """A (N, P) grid of populations x demand sets equals P separate solver calls."""
    n = np.arange(1, 21, dtype=float)[:, None]
    sets = [[0.1, 0.3, 0.2], [0.05, 0.05, 0.4], [1.0, 1.0, 1.0]]
    D = np.array([sum(s) for s in sets])[None, :]
    Dmax = np.array([max(s) for s in sets])[None, :]
    Davg = D / 3
    Z = 0.7
    aba = aba_from_aggregates(n, D, Dmax, Z)
    bjb = bjb_from_aggregates(n, D, Dmax, Davg, Z)
    for p, s in enumerate(sets):
        net = qn.Network.from_demands(s, think_time=Z)
        for arrays, method in ((aba, "aba"), (bjb, "bjb")):
            res = qn.bounds(net, 20, method=method)
            assert arrays[0].shape == (20, 3)
            np.testing.assert_allclose(arrays[0][:, p], res.throughput_lower, rtol=1e-15)
            np.testing.assert_allclose(arrays[1][:, p], res.throughput_upper, rtol=1e-15)
            np.testing.assert_allclose(arrays[2][:, p], res.response_time_lower, rtol=1e-15)
            np.testing.assert_allclose(arrays[3][:, p], res.response_time_upper, rtol=1e-15)


def test_bjb_is_tighter_than_aba():
    net = qn.Network.from_demands([0.3, 0.2, 0.25, 0.1], think_time=1.0)
    aba, bjb = qn.bounds(net, 40, method="aba"), qn.bounds(net, 40, method="bjb")
    assert np.all(bjb.throughput_upper <= aba.throughput_upper * (1 + 1e-15))
    assert np.all(bjb.throughput_lower >= aba.throughput_lower * (1 - 1e-15))


def test_bounds_validation():
    net = qn.Network.from_demands([0.1, 0.2])
    with pytest.raises(ValueError, match=r"N must be an integer >= 1, got 0"):
        qn.bounds(net, 0)
    with pytest.raises(TypeError, match=r"net must be a Network, got list"):
        qn.bounds([0.1, 0.2], 3)
    with pytest.raises(ValueError, match=r"all demands and the think time are zero"):
        qn.bounds(qn.Network.from_demands([0.0]), 3, method="aba")
