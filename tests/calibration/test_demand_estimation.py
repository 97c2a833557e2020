"""Service demands from utilisation and throughput."""

import numpy as np
import pytest

from qnmodel.calibration import service_demand_law, utilization_regression
from qnmodel.errors import InvalidModelError

from .._tol import closed_form


def test_service_demand_law_single_interval_is_the_exact_ratio():
    r = service_demand_law([0.5, 0.2], 25.0, stations=["cpu", "disk"])
    # D = U / X, one division, against the decimal literal (one rounding)
    assert r.values == pytest.approx({"cpu": 0.02, "disk": 0.008}, rel=closed_form(1))
    assert r.stderr == {"cpu": None, "disk": None}
    assert "single interval" in r.uncertainty_message


def test_service_demand_law_over_intervals_covers_the_truth():
    rng = np.random.default_rng(1)
    X = rng.uniform(5, 40, 30)
    D = np.array([0.02, 0.008])
    U = np.outer(X, D) + rng.normal(0, 0.005, (30, 2))
    r = service_demand_law(U, X, stations=["cpu", "disk"])
    for name, d in zip(["cpu", "disk"], D, strict=True):
        lo, hi = r.confidence_intervals[name]
        assert lo <= d <= hi


def test_utilization_regression_two_classes_with_background():
    rng = np.random.default_rng(4)
    T = 40
    X = rng.uniform(0, 30, (T, 2))
    D = np.array([[0.010, 0.004], [0.002, 0.015]])  # (K stations, C classes)
    U0 = np.array([0.05, 0.0])
    U = U0 + X @ D.T + rng.normal(0, 0.003, (T, 2))
    r = utilization_regression(
        np.clip(U, 0, 1), X, stations=["cpu", "disk"], classes=["read", "write"], background=True
    )
    assert r.values["cpu__read"] == pytest.approx(0.010, rel=0.05)
    assert r.values["disk__write"] == pytest.approx(0.015, rel=0.05)
    assert r.values["cpu__U0"] == pytest.approx(0.05, abs=0.01)
    assert r.values["disk__U0"] >= 0.0  # non-negative even where the truth is 0
    assert r.uncertainty_method == "bootstrap"
    for k, v in (("cpu__read", 0.010), ("cpu__write", 0.004), ("disk__read", 0.002)):
        lo, hi = r.confidence_intervals[k]
        assert lo <= v <= hi, (k, lo, hi)


def test_utilization_regression_refuses_unidentifiable_designs():
    X = np.column_stack([np.arange(1.0, 6.0), 2 * np.arange(1.0, 6.0)])
    with pytest.raises(InvalidModelError, match="collinear"):
        utilization_regression(np.full((5, 1), 0.3), X)
    with pytest.raises(InvalidModelError, match="more intervals than unknowns"):
        utilization_regression([[0.1], [0.2]], [[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(InvalidModelError, match=r"utilization\[0, 0\] must be finite and in"):
        service_demand_law([[1.5]], [1.0])


def test_service_demand_law_coverage_at_nominal_rate_over_seeds():
    M = 300
    hits = 0
    D = 0.02
    for seed in range(M):
        rng = np.random.default_rng(seed)
        X = rng.uniform(5, 40, 8)
        U = (D * X + rng.normal(0, 0.01, 8))[:, None]
        lo, hi = service_demand_law(np.clip(U, 0, 1), X).confidence_intervals["s0"]
        hits += lo <= D <= hi
    sd = np.sqrt(M * 0.95 * 0.05)
    assert M * 0.95 - 3.5 * sd <= hits <= M * 0.95 + 3.5 * sd, hits
