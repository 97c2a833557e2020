"""The USL has one home (qnmodel.models.usl) used by the fit: one peak, one name, counts as N."""

import math

import numpy as np
import pytest

import qnmodel
from qnmodel.calibration import fit_usl
from qnmodel.errors import InvalidTypeError
from qnmodel.models import nfs, usl

from .._tol import closed_form


def _x(n, lam, sigma, kappa):
    n = np.asarray(n, dtype=float)
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))  # [Gun07] eq. 4.31


def test_max_throughput_is_the_real_valued_peak():
    # N* = sqrt(0.9 / 0.04) = 4.743...: X(N*) = 2.27545 > X(5) = 2.27273 > X(4) = 2.24719
    u = usl.USL(1.0, 0.1, 0.04)
    n_star = math.sqrt(0.9 / 0.04)
    assert u.peak_concurrency == pytest.approx(n_star, rel=1e-15)
    assert u.max_throughput == pytest.approx(float(_x(n_star, 1.0, 0.1, 0.04)), rel=1e-14)
    assert u.peak_clients == 5
    assert u.peak_clients_throughput == pytest.approx(5 / 2.2, rel=1e-14)
    assert u.peak_clients_throughput < u.max_throughput
    assert usl.usl_max_throughput(1.0, 0.1, 0.04) == u.max_throughput
    # N* < 1 (sigma near 1): the largest X over N >= 1 is X(1) = lam
    assert usl.USL(3.0, 0.99, 0.5).max_throughput == pytest.approx(3.0, rel=1e-15)


def test_fit_peak_throughput_is_the_usl_max_throughput():
    n = np.array([1, 2, 3, 4, 6, 8, 12])
    r = fit_usl(n, _x(n, 1.0, 0.1, 0.04))
    u = usl.USL(r.values["lam"], r.values["sigma"], r.values["kappa"])
    # the same fitted values through two codings of N* = sqrt((1 - sigma) / kappa) (3 roundings)
    # and of X(N*) (about 10)
    assert r.values["peak"] == pytest.approx(u.peak_concurrency, rel=closed_form(3))
    assert r.values["peak_throughput"] == pytest.approx(u.max_throughput, rel=closed_form(13))
    assert r.values["peak_throughput"] == pytest.approx(2.2754510, rel=1e-6)


def test_fit_usl_refuses_a_frequency_as_a_client_count():
    n = [1, 2, 4, "8 Hz", 16, 32]
    x = _x([1, 2, 4, 8, 16, 32], 100.0, 0.05, 0.001)
    with pytest.raises(InvalidTypeError, match=r"n\[3\] = '8 Hz' is not a plain number"):
        fit_usl(n, x)


def test_one_usl_throughput_function():
    assert qnmodel.calibration.usl_throughput is usl.usl_throughput
    assert not hasattr(nfs, "USL")  # one home: qnmodel.models.usl (no re-export)
    assert qnmodel.USL is usl.USL
    assert usl.usl_throughput(8, 100.0, 0.05, 0.001) == pytest.approx(
        float(_x(8, 100.0, 0.05, 0.001)), rel=1e-15
    )
