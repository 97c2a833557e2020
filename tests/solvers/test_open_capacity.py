"""Capacity questions: largest rate or population meeting a response-time target, fewest
servers, best single upgrade (qnmodel.solvers.capacity)."""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError, UnitError
from qnmodel.solvers.capacity import best_upgrade, max_arrival_rate, max_population, min_servers
from tests._tol import closed_form


def test_max_arrival_rate_of_mm1_is_the_closed_form():
    D, t = 0.004, 0.010  # R = D / (1 - lambda D) = t  =>  lambda = (1 - D/t) / D
    lam = max_arrival_rate(qn.Network.from_demands([D]), "10 ms")
    assert lam == pytest.approx((1 - D / t) / D, rel=1e-11)


def test_max_arrival_rate_meets_the_target_exactly():
    net = qn.Network.from_demands([0.002, 0.005, 0.001], servers=[1, 3, 1])
    lam = max_arrival_rate(net, 0.02)
    R = qn.open_network(net, [lam, lam * (1 + 1e-9)]).response_time
    assert R[0] <= 0.02 < R[1]
    assert R[0] == pytest.approx(0.02, rel=1e-9)
    with pytest.raises(InvalidModelError, match="lone job already takes R = 0.008"):
        max_arrival_rate(net, "5 ms")
    with pytest.raises(UnitError, match="target"):
        max_arrival_rate(net, "5 MB")


def test_max_population_is_the_last_n_within_target():
    net = qn.Network.from_demands([0.01, 0.02, 0.005], think_time=1.0)
    n = max_population(net, "100 ms")
    R = qn.mva(net, n + 1).response_time
    assert R[n - 1] <= 0.1 < R[n]
    assert max_population(net, "30 ms") == 0  # one job needs 35 ms
    with pytest.raises(InvalidModelError, match="n_max = 100"):
        max_population(qn.Network.from_demands([0.01], kinds=["delay"]), 1.0, n_max=100)


@pytest.mark.parametrize("workload", [{"arrival_rate": 900.0}, {"N": 40}])
def test_min_servers_is_the_fewest_that_meet_the_target(workload):
    net = qn.Network.from_demands([0.0005, 0.01], names=["cpu", "disk"], think_time=0.05)
    m = min_servers(net, "disk", "15 ms", **workload)
    assert m > 1

    def R(servers):
        n = qn.Network.from_demands(
            [0.0005, 0.01], names=["cpu", "disk"], servers=[1, servers], think_time=0.05
        )
        if "arrival_rate" in workload:
            try:
                return qn.open_network(n, workload["arrival_rate"]).response_time[0]
            except qn.UnstableModelError:
                return np.inf
        return qn.mva(n, workload["N"]).response_time[-1]

    assert R(m) <= 0.015 < R(m - 1)
    with pytest.raises(InvalidModelError, match="not met even with 64 servers"):
        min_servers(net, "disk", "0.4 ms", max_servers=64, **workload)


def test_best_upgrade_ranks_the_bottleneck_first():
    net = qn.Network.from_demands([0.002, 0.009, 0.001], names=["cpu", "disk", "nic"])
    up = best_upgrade(net, arrival_rate=100.0)
    assert up.best == "disk: 2x faster"
    assert np.all(np.diff(up.response_time) >= 0)
    base = qn.open_network(net, 100.0).response_time[0]  # the same closed form
    assert up.baseline_response_time == pytest.approx(base, rel=closed_form(4))
    frame = up.to_frame()
    assert list(frame.columns) == ["option", "response_time", "response_time_ratio"]
    assert frame["response_time_ratio"].iloc[0] > 1.5
    assert up.speedup == 2.0  # the device speedup the options name
    closed = best_upgrade(net, N=30)
    assert closed.best.startswith("disk")
    with pytest.raises(InvalidModelError, match="exactly one of"):
        best_upgrade(net)
    with pytest.raises(InvalidModelError, match="speedup must be a number > 1"):
        best_upgrade(net, N=3, speedup=1.0)


def test_load_dependent_station_gets_the_faster_device_option_only():
    """Regression: adding a server to a station with rate_multipliers raised in L1."""
    st = (
        qn.Station("cpu", "15 us"),
        qn.Station("nvme", "80 us", rate_multipliers=[1, 1.8, 2.4, 2.8]),
    )
    net = qn.Network(st)
    up = best_upgrade(net, arrival_rate="30000/s")
    assert set(up.options) == {"cpu: 2x faster", "cpu: 2 servers", "nvme: 2x faster"}
    assert up.best == "nvme: 2x faster"
    # how many such drives: one is enough at 1000/s (issue 26 item 5: it refused)
    assert min_servers(net, "nvme", "1 ms", arrival_rate=1000.0) == 1
    with pytest.raises(InvalidModelError, match="'nvme' has rate_multipliers"):
        min_servers(net, "nvme", "1 ms", arrival_rate=1000.0, count="servers")
