"""CalibrationResult is frozen: fits build a new result for what they learn late."""

import warnings

import numpy as np
import pytest

from qnmodel.calibration import device, fit, nfs, usl
from qnmodel.errors import MeasurementArtefactWarning

from .._tol import closed_form, exact_fit


def _snapshot(res):
    return (res.warnings, dict(res.extra), dict(res.values))


@pytest.fixture
def spy(monkeypatch):
    """Wrap fit_model in each fit module; remember every result it built and its state."""
    built = []

    def wrapped(*args, **kwargs):
        res = fit.fit_model(*args, **kwargs)
        built.append((res, _snapshot(res)))
        return res

    for mod in (device, nfs, usl):
        monkeypatch.setattr(mod, "fit_model", wrapped)
    return built


def _unchanged(built):
    return all(_snapshot(res) == snap for res, snap in built)


def test_fit_device_does_not_mutate_the_engine_result(spy):
    sizes = 4096.0 * 2.0 ** np.arange(4)  # all below the crossover: a note is added late
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeasurementArtefactWarning)
        res = device.fit_device(sizes, 5e-3 + sizes / 50e6, seek_floor=None)
    # a r from the fitted a and r: both within the fit's rounding floor, one product
    tol = exact_fit(lambda s, a, r: a + s / r, sizes, {"a": 5e-3, "r": 50e6}, ops=2)
    assert res.extra["crossover_size"] == pytest.approx(5e-3 * 50e6, rel=2 * tol + closed_form(1))
    assert any("crossover" in w for w in res.warnings)
    assert spy and _unchanged(spy)


def test_fit_nfs_does_not_mutate_the_engine_result(spy):
    hc = np.array([1.0, 0.0, 0.0, 0.5, 0.0])
    hs = np.array([0.0, 1.0, 0.0, 0.5, 0.5])
    b1, b2, b4 = 5e9, 100e6, 100e6  # b4 = b2: the note that b4 is not distinguishable
    B = 1 / (hc / b1 + (1 - hc) * hs / b2 + (1 - hc) * (1 - hs) / b4)
    B = B * (1 + 0.01 * np.random.default_rng(3).standard_normal(B.size))
    res = nfs.fit_nfs(B, hc, hs)
    assert res.warnings
    assert spy and _unchanged(spy)


def test_fit_usl_does_not_mutate_the_engine_result(spy):
    n = np.array([1, 2, 3, 4, 5, 6])  # peak N* = 31.6, beyond twice 6: extrapolation note
    x = 100.0 * n / (1 + 0.01 * (n - 1) + 0.00099 * n * (n - 1))
    with pytest.warns(MeasurementArtefactWarning, match="extrapolation"):
        res = usl.fit_usl(n, x)
    assert any("extrapolation" in w for w in res.warnings)
    assert spy and _unchanged(spy)


def test_with_notes_and_replace_return_new_results():
    res = device.fit_device([4096, 65536, 1 << 20], [5.1e-3, 6.3e-3, 26e-3], seek_floor=None)
    before = _snapshot(res)
    new = res.with_notes("late caveat", fact=1.0)
    assert new is not res and _snapshot(res) == before
    assert new.warnings == res.warnings + ("late caveat",) and new.extra["fact"] == 1.0
    other = res.replace(model="renamed")
    assert other.model == "renamed" and res.model == "device t = a + B/r"
