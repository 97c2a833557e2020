"""Rate multipliers fitted from a queue-depth sweep (qnmodel.calibration.rate_curve)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import qnmodel as qn
from qnmodel.calibration.rate_curve import fit_rate_multipliers, rate_multipliers_from_curve
from qnmodel.errors import InvalidModelError

R_TRUE = np.array([1.0, 1.8, 2.4, 2.8, 3.0, 3.1, 3.15, 3.2])
D_TRUE = 0.004


def _x(j):
    return R_TRUE[np.minimum(j, R_TRUE.size) - 1] / D_TRUE


def test_exact_data_give_the_curve_and_reproduce_the_sweep():
    jobs = np.array([1, 2, 4, 8])
    fit = fit_rate_multipliers(jobs, _x(jobs))
    assert fit.demand == pytest.approx(D_TRUE, rel=1e-15)
    np.testing.assert_allclose(fit.rate_multipliers[[0, 1, 3, 7]], R_TRUE[[0, 1, 3, 7]], rtol=1e-14)
    # depth 3 interpolated between 1.8 and 2.8
    assert fit.rate_multipliers[2] == pytest.approx(2.3, rel=1e-14)
    # the fitted station, alone in a closed loop without think time, gives the measured X(j)
    res = qn.mva(qn.Network((fit.station("dev"),)), 8)
    np.testing.assert_allclose(res.throughput[jobs - 1], _x(jobs), rtol=1e-12)


def test_error_intervals_cover_the_true_curve():
    """95 % intervals from 10 samples of 3 % noise per depth: coverage over 400 seeded sweeps."""
    rng = np.random.default_rng(12)
    jobs = np.array([1, 2, 4, 8])
    tq = stats.t.ppf(0.975, 9)
    hits = 0
    for _ in range(400):
        s = _x(jobs)[:, None] * (1 + 0.03 * rng.standard_normal((jobs.size, 10)))
        X = s.mean(axis=1)
        err = tq * s.std(axis=1, ddof=1) / np.sqrt(10)
        fit = fit_rate_multipliers(jobs, X, err)
        hits += abs(fit.rate_multipliers[3] - R_TRUE[3]) <= fit.rate_multipliers_err[3]
    # the sum of two 95 % half-widths in quadrature covers at least ~95 %
    assert 0.93 <= hits / 400 <= 1.0


def test_from_a_measured_curve_and_refusals():
    curve = pd.DataFrame(
        {
            "n": [1, 2, 4],
            "throughput": _x(np.array([1, 2, 4])),
            "throughput_halfwidth": [1.0, 2.0, 3.0],
            "think_time": [0.0, 0.0, 0.0],
        }
    )
    fit = rate_multipliers_from_curve(curve)
    assert fit.demand_err == pytest.approx(1.0 * D_TRUE**2, rel=1e-12)
    curve["think_time"] = [0.0, 0.0, 0.01]
    with pytest.raises(InvalidModelError, match="at jobs = 4 the clients spend"):
        rate_multipliers_from_curve(curve)
    with pytest.raises(InvalidModelError, match="must include depth 1"):
        fit_rate_multipliers([2, 4], [1.0, 2.0])
    with pytest.raises(InvalidModelError, match="repeated depths"):
        fit_rate_multipliers([1, 1], [1.0, 2.0])
    with pytest.raises(InvalidModelError, match=r"throughput\[1\] must be finite and > 0"):
        fit_rate_multipliers([1, 2], [1.0, 0.0])
