"""Open multi-class networks swept over arrival-rate vectors in one call
(qnmodel.open_network with a 2-D array of rates: one OpenResult, one row per point;
qnmodel.solvers.open.common_direction)."""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError, UnstableModelError
from qnmodel.solvers.open import common_direction
from tests._nets import pf_disciplines


def _net(D, kinds=None, servers=None, rm=None):
    """Open classes "c0", "c1", ... of demands D (C, K): PS where the classes' demands differ
    (product form), a rate curve where ``rm`` gives one."""
    C, K = D.shape
    kinds = kinds or ["queue"] * K
    servers = servers or [1] * K
    rm = rm or [None] * K
    disc = pf_disciplines(D, kinds)
    stations = [
        qn.Station(
            f"s{k}",
            {f"c{c}": float(D[c, k]) for c in range(C)},
            discipline=disc[k],
            servers=servers[k],
            rate_multipliers=rm[k],
        )
        for k in range(K)
    ]
    return qn.Network(stations, classes=[qn.OpenClass(f"c{c}", 1.0) for c in range(C)])


def _check_rows(net, rates, res):
    for p in range(rates.shape[0]):
        one = qn.open_network(net, rates[p])
        np.testing.assert_allclose(res.response_time[p], one.response_time[0], rtol=1e-13)
        np.testing.assert_allclose(
            res.station_queue_length[p], one.station_queue_length[0], rtol=1e-13
        )
        np.testing.assert_allclose(
            res.station_utilization[p], one.station_utilization[0], rtol=1e-13
        )
        np.testing.assert_allclose(
            res.class_residence_time("c1")[p], one.residence_time[0, 1], rtol=1e-13
        )
        assert res.saturation_scale[p] == pytest.approx(one.saturation_scale[0], rel=1e-13)
        assert res.bottleneck_index[p] == one.bottleneck_index[0]


def test_scaled_sweep_equals_one_call_per_point():
    rng = np.random.default_rng(1)
    D = rng.uniform(1e-3, 1e-2, size=(3, 6))
    lam = np.array([10.0, 20.0, 5.0])
    s = np.linspace(0.05, 0.95 / (lam @ D).max(), 7)
    rates = s[:, None] * lam[None, :]
    assert common_direction(rates) is not None
    # the usual sweep of a benchmark: rows are multiples of the first only to rounding
    big = np.linspace(0.01, 0.99, 10_000)[:, None] * np.linspace(0.5, 1.0, 100)[None, :]
    assert not np.array_equal(big[:, :1] / big[0, 0] * big[0], big)
    assert common_direction(big) is not None
    assert common_direction(big + np.eye(10_000, 100) * 1e-9) is None
    net = _net(D)
    res = qn.open_network(net, rates)
    assert isinstance(res, qn.OpenResult) and res.method == "open"
    np.testing.assert_allclose(res.offered_load, rates @ D, rtol=1e-14)
    assert res.response_time.shape == (7, 3) and res.stretch.shape == (7, 6)
    assert res.residence_time.shape == (7, 3, 6)
    _check_rows(net, rates, res)
    np.testing.assert_array_equal(res.throughput, rates)
    # Little's law per station over all classes, and the utilisation law
    np.testing.assert_allclose(res.station_queue_length, (rates @ D) * res.stretch, rtol=1e-13)
    assert len(res.to_frame()) == 21


def test_general_sweep_with_multiserver_delay_and_load_dependent_stations():
    rng = np.random.default_rng(2)
    D = rng.uniform(1e-3, 1e-2, size=(2, 5))
    kinds = ["queue", "queue", "delay", "queue", "queue"]
    rm = [None, None, None, [1.0, 1.7, 2.2], None]
    net = _net(D, kinds=kinds, servers=[1, 3, 1, 1, 1], rm=rm)
    rates = rng.uniform(5.0, 40.0, size=(6, 2))  # rows not multiples of one vector
    assert common_direction(rates) is None
    res = qn.open_network(net, rates)
    _check_rows(net, rates, res)


def test_unstable_rows_raise_or_become_inf():
    D = np.array([[0.01, 0.002], [0.005, 0.001]])
    lam = np.array([40.0, 60.0])  # U_s0 = 0.7 at scale 1
    rates = np.array([0.5, 1.0, 1.5]).reshape(-1, 1) * lam
    net = _net(D)
    with pytest.raises(
        UnstableModelError,
        match=r"^station 's0' is saturated: utilisation U = 1\.05 >= 1 under the arrival rates "
        r"c0=60/s, c1=90/s; scale the rates by less than 0\.952381 to keep the network stable$",
    ):
        qn.open_network(net, rates)
    res = qn.open_network(net, rates, unstable="inf")
    assert np.isinf(res.response_time[2]).all() and np.isfinite(res.response_time[:2]).all()
    assert res.saturation_scale[1] == pytest.approx(1 / 0.7, rel=1e-14)


def test_bad_sweeps_are_named():
    net = _net(np.full((2, 3), 0.001))
    with pytest.raises(InvalidModelError, match=r"arrival_rate\[1, 0\] must be finite"):
        qn.open_network(net, np.array([[1.0, 2.0], [-1.0, 2.0]]))
    with pytest.raises(
        InvalidModelError,
        match=r"^arrival_rate sweep must have shape \(P, 2\) \(one row per point, one column "
        r"per class\), got \(4, 3\)$",
    ):
        qn.open_network(net, np.ones((4, 3)))
