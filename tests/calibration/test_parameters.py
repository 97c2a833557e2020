"""Parameter objects: bounds are validated, never swapped or clamped."""

import math

import pytest

from qnmodel.calibration import Parameter, Parameters
from qnmodel.errors import InvalidModelError, InvalidTypeError, UnitError

from .._tol import EPS


def test_unit_string_value_is_parsed_to_si():
    # 4.9 x 1e-3: one rounding, against the literal's (EPS: two half-ulps)
    assert Parameter("a", "4.9 ms", unit="s").value == pytest.approx(0.0049, rel=EPS)
    assert Parameter("r", "35 MB/s", min="1 MB/s", unit="B/s").min == 1e6


def test_min_greater_than_max_raises_and_is_not_swapped():
    with pytest.raises(InvalidModelError, match=r"'r': min .* > max .*never\s+swapped"):
        Parameter("r", 1.0, min=2.0, max=1.0)


def test_value_outside_bounds_raises_and_is_not_clamped():
    with pytest.raises(InvalidModelError, match="outside"):
        Parameter("a", -1.0, min=0.0)


def test_min_equal_max_with_vary_raises_but_fixed_is_fine():
    with pytest.raises(InvalidModelError, match="vary=False"):
        Parameter("a", 1.0, min=1.0, max=1.0)
    assert Parameter("a", 1.0, min=1.0, max=1.0, vary=False).value == 1.0


def test_unbounded_defaults_and_bad_inputs():
    p = Parameter("x", 3)
    assert p.min == -math.inf and p.max == math.inf and p.vary
    with pytest.raises(InvalidModelError, match="identifier"):
        Parameter("not valid", 1.0)
    with pytest.raises(InvalidTypeError, match="number"):
        Parameter("x", [1.0])
    with pytest.raises(UnitError, match="dimensionless"):
        Parameter("x", "3 ms")
    with pytest.raises(UnitError):
        Parameter("x", "3 ms", unit="B")
    with pytest.raises(InvalidModelError, match="finite"):
        Parameter("x", math.nan)


def test_parameters_updated_applies_overrides_and_rejects_unknown_names():
    ps = Parameters([Parameter("a", 1e-3, min=0, unit="s"), Parameter("r", 1e8, min=0)])
    new = ps.updated({"a": {"value": 0.0, "vary": False}, "r": 5e7})
    assert new["a"].value == 0.0 and not new["a"].vary
    assert new["r"].value == 5e7
    assert ps["a"].value == 1e-3  # original untouched
    assert new.varying == ["r"]
    with pytest.raises(InvalidModelError, match="'b' is not a parameter"):
        ps.updated({"b": 1.0})
    with pytest.raises(InvalidModelError, match="unknown field"):
        ps.updated({"a": {"stderr": 1.0}})
    with pytest.raises(InvalidModelError, match="twice"):
        Parameters([Parameter("a", 1.0), Parameter("a", 2.0)])
