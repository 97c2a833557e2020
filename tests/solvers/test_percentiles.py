"""Response-time distributions and quantiles (qnmodel.solvers.percentiles, result quantiles).

Exact: open M/M/1 tandems (hypoexponential; Erlang for equal rates), one request through
a fork-join (maximum of exponentials). Approximate (closed networks, fork-join under
load): against the seeded reference simulation in ``fj_sim.py``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import qnmodel as qn
from qnmodel.solvers.percentiles import (
    erlang_mixture,
    hypoexponential_cdf,
    hypoexponential_quantile,
    order_statistic_ph,
    series,
)

sys.path.insert(0, str(Path(__file__).parent))
from fj_sim import simulate_net  # noqa: E402

from tests._tol import PH_QUANTILE, closed_form  # noqa: E402

S = qn.Station


def closed_form_hypo_cdf(t, rates):
    """1 - sum_i prod_{j != i} r_j / (r_j - r_i) exp(-r_i t), distinct rates."""
    total = 0.0
    for i, ri in enumerate(rates):
        c = 1.0
        for j, rj in enumerate(rates):
            if j != i:
                c *= rj / (rj - ri)
        total += c * math.exp(-ri * t)
    return 1.0 - total


@pytest.mark.parametrize("q", [0.5, 0.9, 0.95, 0.99, 0.999])
def test_mm1_quantile_is_exponential(q):
    d, lam = 0.004, 150.0
    r = qn.fork_join(qn.Network.from_demands([d]), arrival_rate=lam)
    expected = -math.log(1 - q) * d / (1 - lam * d)
    assert r.response_time_quantile(q) == pytest.approx(expected, rel=PH_QUANTILE)


@pytest.mark.parametrize("q", [0.5, 0.95, 0.99])
def test_equal_rate_tandem_is_erlang(q):
    d, lam, m = 0.01, 60.0, 4
    r = qn.fork_join(qn.Network.from_demands([d] * m), arrival_rate=lam)
    law, label = r.response_time_distribution()
    assert label.startswith("exact")
    rate = 1 / d - lam  # M/M/1 sojourn ~ Exp(mu - lambda)
    expected = stats.gamma.ppf(q, a=m, scale=1 / rate)
    assert r.response_time_quantile(q) == pytest.approx(expected, rel=PH_QUANTILE)


@pytest.mark.parametrize("q", [0.5, 0.95, 0.99])
def test_unequal_rate_tandem_matches_closed_form(q):
    demands, lam = [0.01, 0.02, 0.005], 30.0
    rates = [1 / d - lam for d in demands]
    t = qn.fork_join(qn.Network.from_demands(demands), arrival_rate=lam).response_time_quantile(q)
    # t is within PH_QUANTILE / 10 (Brent's stop) relative, which moves F by t f(t) (< 1) times
    # that; the alternating closed form loses a few more ulps
    assert closed_form_hypo_cdf(t, rates) == pytest.approx(q, abs=PH_QUANTILE / 10)
    assert hypoexponential_quantile(q, rates) == pytest.approx(t, rel=1e-12)


def test_hypoexponential_cdf_on_a_grid():
    rates = [3.0, 1.0, 7.5, 0.4]
    ts = np.linspace(0.01, 20, 25)
    expected = [closed_form_hypo_cdf(t, rates) for t in ts]
    # expm of ||T t|| <= 150 errs by ~||T t|| eps (3e-14) absolute on a probability
    np.testing.assert_allclose(hypoexponential_cdf(ts, rates), expected, rtol=0, atol=1e-12)
    assert hypoexponential_cdf(0.0, rates) == 0.0


@pytest.mark.parametrize("n, q", [(1, 0.9), (4, 0.95), (4, 0.99), (8, 0.99)])
def test_single_request_fork_join_quantile_is_maximum_of_exponentials(n, q):
    d = 0.003
    fj = qn.ForkJoin("stripe", [S(f"m{i}", d) for i in range(n)])
    r = qn.fork_join(qn.Network([fj]), 1)
    # P(max <= t) = (1 - e^{-t/d})^n
    expected = -d * math.log(1 - q ** (1 / n))
    assert r.response_time_quantile(q) == pytest.approx(expected, rel=PH_QUANTILE)


def test_order_statistic_cdf_and_erlang_mixture_moments():
    law = order_statistic_ph([2.0] * 3, 2)
    assert law.mean == pytest.approx(2.0 * (1 / 3 + 1 / 2), rel=closed_form(16))  # 2-phase solve
    t = 1.7  # 2nd of 3: P(at least 2 done) = 3 p^2 (1 - p) + p^3
    p = 1 - math.exp(-t / 2)
    assert law.cdf(t) == pytest.approx(3 * p**2 * (1 - p) + p**3, abs=1e-12)
    for scv in (1.0, 0.7, 0.5, 0.33, 0.1, 0.013):
        e = erlang_mixture(3.0, scv)
        # a solve on m <= 1/scv + 1 bidiagonal phases (~4 m operations); the variance
        # m2 - mean^2 cancels, amplifying by m2 / var = (1 + scv) / scv
        m = math.ceil(1 / scv) + 1
        assert e.mean == pytest.approx(3.0, rel=closed_form(4 * m))
        assert e.variance / 9.0 == pytest.approx(scv, rel=closed_form(8 * m) * (1 + scv) / scv)
    both = series(erlang_mixture(1.0, 0.5), order_statistic_ph([1.0, 2.0]))
    assert both.mean == pytest.approx(1.0 + (1 + 2 - 1 / 1.5), rel=closed_form(32))


@pytest.mark.parametrize("q", [0.0, 1.0, 1.5, -0.1])
def test_bad_quantile_is_refused(q):
    r = qn.fork_join(qn.Network.from_demands([0.01]), 2)
    with pytest.raises(qn.InvalidModelError, match="q must"):
        r.response_time_quantile(q)


def test_quantile_at_a_population_not_solved_is_refused():
    r = qn.fork_join(qn.Network.from_demands([0.01]), 2)
    with pytest.raises(
        qn.InvalidModelError, match=r"n=5 was not solved; this result holds n = 1\.\."
    ):
        r.response_time_quantile(0.9, n=5)
    assert r.response_time_quantile(0.9, n=1) < r.response_time_quantile(0.9, n=2)


# Approximations against the reference simulation (20 000 requests, seeded). Long-run errors
# measured with python tests/solvers/fj_sim.py are quoted in docs/explanation/fork-join.md;
# the tolerances add the sampling error of a p99 from 20 000 samples (about 3 %).
@pytest.mark.parametrize(
    "net",
    [
        qn.Network([qn.ForkJoin("fj", [S(f"m{i}", 1.0) for i in range(4)])]),
        qn.Network([S("cpu", 0.3), qn.ForkJoin("fj", [S(f"m{i}", 1.0) for i in range(4)])], 2.0),
        qn.Network.from_demands([0.5, 1.0], think_time=1.0),
    ],
)
def test_closed_percentiles_vs_reference_simulation(net):
    N = 4
    sim = simulate_net(net, N=N, jobs=20_000, warmup=2_000, seed=5)
    model = qn.fork_join(net, N)
    p95, p99 = np.quantile(sim["R"], [0.95, 0.99])
    assert model.response_time_quantile(0.95) == pytest.approx(p95, rel=0.10)
    assert model.response_time_quantile(0.99) == pytest.approx(p99, rel=0.12)


@pytest.mark.parametrize("branches", [[1.0] * 4, [0.5, 1.0, 0.8]])
def test_open_fork_join_percentiles_vs_reference_simulation(branches):
    net = qn.Network([qn.ForkJoin("fj", [S(f"b{i}", d) for i, d in enumerate(branches)])])
    sim = simulate_net(net, arrival_rate=0.6, jobs=40_000, warmup=4_000, seed=5)
    model = qn.fork_join(net, arrival_rate=0.6)
    p95, p99 = np.quantile(sim["R"], [0.95, 0.99])
    assert model.response_time_quantile(0.95) == pytest.approx(p95, rel=0.08)
    assert model.response_time_quantile(0.99) == pytest.approx(p99, rel=0.10)
