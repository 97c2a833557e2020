"""Response-time laws of multi-server and non-exponential stations (issue 27): the closed
m-server sojourn from the arrival theorem with the convolution marginals, the open M/G/1
and M/G/m two-moment fits, and the capacity questions that rank by them.

Measured errors (``tests/accuracy/percentiles.py``, docs/how-to/capacity.md): closed
m-server networks p99 median 0.2 %, worst 2.0 %; open M/M/m tandems worst 2.9 %; open
M/G/m (SCV 0-10) p99 median 8.8 %, worst 36.6 %.
"""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError
from qnmodel.solvers.percentiles import PhaseType, hypoexponential_quantile, two_moment_chain
from qnmodel.solvers.response_laws import EXACT_CLOSED_ONE, response_time_law


def _issue_net() -> qn.Network:
    return qn.Network([qn.Station("d", "5 ms", servers=2)])


def test_closed_two_server_station_alone_is_the_hypoexponential_law():
    # N = 5, no think time: an arriving job sees the 4 others at the station (2 in service,
    # 2 waiting), waits for 3 departures at rate 2/5 ms, then is served (5 ms, exponential).
    law = response_time_law(_issue_net(), N=5)
    assert law.exact and law.method == EXACT_CLOSED_ONE
    p99 = hypoexponential_quantile(0.99, [400.0, 400.0, 400.0, 200.0])
    assert law.quantile(0.99) == pytest.approx(p99, rel=1e-8)
    assert p99 == pytest.approx(33.3e-3, abs=0.05e-3)  # issue 27's simulated 33.3 ms
    assert law.mean == pytest.approx(0.0125, rel=1e-10)  # N / X = 5 / 400


def test_issue_27_case_against_simulation():
    # measured: law 33.31 ms, simulated 33.33 ms (seed 27; the old law said 57.6 ms)
    sim = qn.simulate(
        _issue_net(), 5, seed=27, replications=10, run_length=100.0, quantiles=(0.9, 0.99)
    )
    law = response_time_law(_issue_net(), N=5)
    for q in (0.9, 0.99):
        assert law.quantile(q) == pytest.approx(sim.response_time_quantile(q), rel=0.02)


@pytest.mark.parametrize(
    ("servers", "Z", "N"), [((2, 1, 3), 0.0, 7), ((1, 4, 2), 0.03, 12), ((3, 3, 1), 0.01, 1)]
)
def test_closed_multiserver_law_mean_is_exact_mva(servers, Z, N):
    net = qn.Network(
        [qn.Station(f"s{k}", d, servers=m) for k, (d, m) in enumerate(zip((4e-3, 6e-3, 3e-3),
                                                                          servers, strict=True))],
        think_time=Z,
    )  # fmt: skip
    law = response_time_law(net, N=N)
    assert not law.exact and law.method.startswith("approximate")
    assert law.mean == pytest.approx(float(qn.mva(net, N).response_time[-1]), rel=1e-9)


# A fixed-seed subset of tests/accuracy/percentiles.py (errors of p90 / p99 measured there)
@pytest.mark.parametrize(
    ("net", "load", "tol"),
    [
        (  # closed, 3 stations, measured +0.4 / +0.4 %
            qn.Network([qn.Station("a", 4e-3, servers=2), qn.Station("b", 6e-3),
                        qn.Station("c", 9e-3, servers=3)]),
            {"N": 8}, 0.03,
        ),
        (qn.Network([qn.Station("d", 5.9e-3, scv=0.0)]), {"arrival_rate": 100.0}, 0.12),
        (qn.Network([qn.Station("d", 0.0112, servers=2, scv=4.0)]), {"arrival_rate": 100.0},
         0.25),
    ],
)  # fmt: skip
def test_laws_against_simulation_fixed_seed(net, load, tol):
    law = response_time_law(net, **load)
    sim = qn.simulate(
        net, N=load.get("N"), arrival_rate=load.get("arrival_rate"), seed=5,
        replications=10, run_length=200.0, quantiles=(0.9, 0.99),
    )  # fmt: skip
    for q in (0.9, 0.99):
        assert law.quantile(q) == pytest.approx(sim.response_time_quantile(q), rel=tol)


def test_open_mg1_law_keeps_the_open_solvers_mean_and_says_approximate():
    net = qn.Network([qn.Station("d", "5 ms", scv=0.0)])
    law = response_time_law(net, arrival_rate=120)
    assert not law.exact and "M/G/1 sojourn, two-moment fit" in law.method
    # Pollaczek-Khinchine: R = S + lambda S^2 / (2 (1 - rho)), rho = 0.6
    assert law.mean == pytest.approx(5e-3 + 120 * 25e-6 / (2 * 0.4), rel=1e-9)


@pytest.mark.parametrize("scv", [0.05, 0.3, 0.7, 1.0, 2.0, 10.0])
def test_two_moment_chain_matches_mean_and_scv(scv):
    alpha, rates = two_moment_chain(2.0, scv)
    T = np.diag(-rates) + np.diag(rates[:-1], 1)
    ph = PhaseType(alpha, T)
    assert alpha.sum() == pytest.approx(1.0, rel=1e-12)
    assert ph.mean == pytest.approx(2.0, rel=1e-10)
    assert ph.variance / 4.0 == pytest.approx(scv, rel=1e-9)


def test_closed_network_with_non_exponential_service_is_refused():
    net = qn.Network([qn.Station("d", "5 ms", scv=0.0)])
    with pytest.raises(InvalidModelError, match="closed network with non-exponential FCFS"):
        response_time_law(net, N=3)


def test_best_upgrade_ranks_the_two_server_station_by_its_real_tail():
    # Simulated p99 (seed 3, 10 x 200 s): a 2x faster 50.6 ms, a 2 servers 52.2 ms,
    # b 2x faster 75.2 ms, b 3 servers 77.2 ms. The old law (an m-server station's sojourn
    # exponential with its mean) put "b: 2x faster" first. The new law: +12 %, +10 %,
    # +0.9 %, +1.0 % (two queues, no think time: the independence approximation is
    # conservative there), in the simulator's order.
    net = qn.Network([qn.Station("a", "4 ms"), qn.Station("b", "5 ms", servers=2)])
    up = qn.best_upgrade(net, N=10, target="p99 <= 60 ms")
    assert up.options == ("a: 2x faster", "a: 2 servers", "b: 2x faster", "b: 3 servers")
    sim = np.array([50.6e-3, 52.2e-3, 75.2e-3, 77.2e-3])
    assert np.all(up.response_time / sim - 1 < 0.15)
    assert np.all(up.response_time / sim - 1 > -0.02)
    assert list(up.meets_target) == [True, True, False, False]
