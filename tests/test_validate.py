"""The shared input checkers: one test per message, every branch of every checker.

Each error must be a ValueError (InvalidModelError) or TypeError (InvalidTypeError) whose
message names the argument and shows the offending value (Marzolla's ``fail(...)`` blocks,
and the lesson of the ``qncschkparam`` slip: validators need their own per-branch tests).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from qnmodel import _validate as v
from qnmodel.errors import InvalidModelError, InvalidTypeError, UnitError

# ---------------------------------------------------------------------------------------
# as_quantity
# ---------------------------------------------------------------------------------------


def test_as_quantity_accepts_numbers_and_unit_strings():
    assert v.as_quantity(0.0049, "demand", "time") == 0.0049
    assert v.as_quantity("4.9 ms", "demand", "time") == 0.0049
    assert v.as_quantity(3, "size", "size") == 3.0 and isinstance(
        v.as_quantity(3, "s", "size"), float
    )
    assert v.as_quantity(np.float32(0.5), "x", "time") == 0.5
    assert v.as_quantity(0, "x", "time") == 0.0
    assert v.as_quantity(math.inf, "x", "rate", allow_inf=True) == math.inf


def test_as_quantity_unit_error_is_prefixed_with_the_argument_name():
    with pytest.raises(UnitError, match=r"^demand: '4.9' has no unit"):
        v.as_quantity("4.9", "demand", "time")


def test_as_quantity_wrong_dimension_names_argument_and_both_dimensions():
    with pytest.raises(UnitError, match=r"^demand: '4 KiB' is a size \(bytes\), but a time \(s\)"):
        v.as_quantity("4 KiB", "demand", "time")


@pytest.mark.parametrize("bad", [[1.0], None, True, np.bool_(False), b"4 ms"])
def test_as_quantity_wrong_type(bad):
    with pytest.raises(
        InvalidTypeError, match=r"^demand must be a number in s or a string with a unit, got"
    ):
        v.as_quantity(bad, "demand", "time")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float64("nan")])
def test_as_quantity_not_finite(bad):
    with pytest.raises(InvalidModelError, match=r"^demand must be finite, got .*(nan|inf)"):
        v.as_quantity(bad, "demand", "time")


def test_as_quantity_negative_number_and_string():
    with pytest.raises(InvalidModelError, match=r"^demand must be >= 0, got -0.1$"):
        v.as_quantity(-0.1, "demand", "time")
    with pytest.raises(InvalidModelError, match=r"^demand must be >= 0, got '-3 ms'$"):
        v.as_quantity("-3 ms", "demand", "time")


def test_as_quantity_positive_rejects_zero_only_when_asked():
    with pytest.raises(InvalidModelError, match=r"^rate must be > 0, got 0$"):
        v.as_quantity(0, "rate", "rate", positive=True)
    # a negative value of a positive quantity states the rule that applies, > 0
    with pytest.raises(InvalidModelError, match=r"^rate must be > 0, got -5$"):
        v.as_quantity(-5, "rate", "rate", positive=True)
    assert v.as_quantity("1 B/s", "rate", "rate", positive=True) == 1.0


# ---------------------------------------------------------------------------------------
# as_quantities / as_demands
# ---------------------------------------------------------------------------------------


def test_as_quantities_list_of_mixed_numbers_and_strings():
    out = v.as_quantities([0.001, "2 ms", 3], "demands", "time")
    assert out.dtype == np.float64 and out.shape == (3,)
    np.testing.assert_array_equal(out, [0.001, 0.002, 3.0])


def test_as_quantities_array_path_copies():
    a = np.array([1, 2, 3])
    out = v.as_quantities(a, "demands", "time")
    assert out.dtype == np.float64
    out[0] = 99.0
    assert a[0] == 1


@pytest.mark.parametrize("bad", [0.1, "4 ms"])
def test_as_quantities_single_value(bad):
    with pytest.raises(
        InvalidTypeError,
        match=r"^demands must be a sequence of times, got the single value .*wrap it in a list",
    ):
        v.as_quantities(bad, "demands", "time")


def test_as_quantities_two_dimensional_array():
    with pytest.raises(
        InvalidModelError, match=r"^demands must be 1-D, got an array of shape \(2, 2\)"
    ):
        v.as_quantities(np.ones((2, 2)), "demands", "time")


def test_as_quantities_array_with_nan_names_index():
    with pytest.raises(InvalidModelError, match=r"^demands\[1\] must be finite, got nan$"):
        v.as_quantities(np.array([0.1, np.nan]), "demands", "time")


def test_as_quantities_array_with_negative_names_index():
    with pytest.raises(InvalidModelError, match=r"^demands\[2\] must be >= 0, got -1.0$"):
        v.as_quantities(np.array([0.1, 0.2, -1.0]), "demands", "time")


def test_as_quantities_list_with_bad_element_names_index():
    with pytest.raises(InvalidModelError, match=r"^demands\[1\] must be finite, got inf"):
        v.as_quantities([0.1, math.inf], "demands", "time")
    with pytest.raises(UnitError, match=r"^demands\[0\]: unknown unit 'parsec'"):
        v.as_quantities(["3 parsec"], "demands", "time")


def test_as_quantities_not_iterable():
    with pytest.raises(InvalidTypeError, match=r"^demands must be a sequence of times, got object"):
        v.as_quantities(object(), "demands", "time")


def test_as_demands_empty():
    with pytest.raises(
        InvalidModelError, match=r"^demands is empty: a network needs at least one station"
    ):
        v.as_demands([])
    assert v.as_demands(["1 ms"]).tolist() == [0.001]


# ---------------------------------------------------------------------------------------
# as_population / as_populations
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("ok", [1, 7, 3.0, np.int64(12), np.float64(4.0)])
def test_as_population_accepts_integers_and_integral_floats(ok):
    out = v.as_population(ok)
    assert out == int(ok) and type(out) is int


@pytest.mark.parametrize("bad", [True, np.bool_(True)])
def test_as_population_boolean(bad):
    with pytest.raises(
        InvalidTypeError, match=r"^N must be an integer >= 1, got the boolean (np\.)?True_?$"
    ):
        v.as_population(bad)


@pytest.mark.parametrize("bad", [2.5, math.nan, math.inf])
def test_as_population_non_integral_float(bad):
    with pytest.raises(InvalidModelError, match=r"^N must be an integer >= 1, got (2.5|nan|inf)$"):
        v.as_population(bad)


@pytest.mark.parametrize("bad", ["3", None, [3]])
def test_as_population_wrong_type(bad):
    with pytest.raises(InvalidTypeError, match=r"^N must be an integer >= 1, got .* of type"):
        v.as_population(bad)


@pytest.mark.parametrize("bad", [0, -3, 0.0])
def test_as_population_below_one(bad):
    with pytest.raises(InvalidModelError, match=rf"^N must be an integer >= 1, got {bad}$"):
        v.as_population(bad)


def test_as_population_uses_the_given_name():
    with pytest.raises(InvalidModelError, match=r"^clients must be an integer >= 1, got 0"):
        v.as_population(0, "clients")


def test_as_populations_normalises():
    out = v.as_populations([3, 0, 2.0])
    assert out.dtype == np.int64 and out.tolist() == [3, 0, 2]
    assert v.as_populations(4).tolist() == [4]


@pytest.mark.parametrize("bad", [[], [[1, 2]]])
def test_as_populations_shape(bad):
    with pytest.raises(
        InvalidModelError, match=r"^population must be a non-empty 1-D sequence, got shape"
    ):
        v.as_populations(bad)


@pytest.mark.parametrize("bad", [["a", "b"], [True, False]])
def test_as_populations_dtype(bad):
    with pytest.raises(InvalidTypeError, match=r"^population must hold integers, got dtype"):
        v.as_populations(bad)


def test_as_populations_element():
    with pytest.raises(
        InvalidModelError, match=r"^population\[1\] must be an integer >= 0, got -1$"
    ):
        v.as_populations([2, -1])
    with pytest.raises(
        InvalidModelError, match=r"^population\[0\] must be an integer >= 0, got 1.5$"
    ):
        v.as_populations([1.5, 2])
    with pytest.raises(
        InvalidModelError, match=r"^population\[1\] must be an integer >= 1, got 0$"
    ):
        v.as_populations([2, 0], allow_zero=False)


# ---------------------------------------------------------------------------------------
# as_positive_int / as_servers
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [True, "2", None])
def test_as_positive_int_type(bad):
    with pytest.raises(InvalidTypeError, match=r"^workers must be an integer >= 1, got"):
        v.as_positive_int(bad, "workers")


@pytest.mark.parametrize("bad", [1.5, math.nan, math.inf])
def test_as_positive_int_non_integral(bad):
    with pytest.raises(
        InvalidModelError, match=r"^workers must be an integer >= 1, got (1.5|nan|inf)$"
    ):
        v.as_positive_int(bad, "workers")


def test_as_positive_int_minimum():
    with pytest.raises(InvalidModelError, match=r"^stripe_units must be an integer >= 2, got 1$"):
        v.as_positive_int(1, "stripe_units", minimum=2)
    assert v.as_positive_int(2.0, "stripe_units", minimum=2) == 2


@pytest.mark.parametrize("bad", [0, -2])
def test_as_servers_below_one(bad):
    with pytest.raises(InvalidModelError, match=rf"^servers must be an integer >= 1, got {bad}$"):
        v.as_servers(bad)


# ---------------------------------------------------------------------------------------
# as_probability / as_choice / check_same_length
# ---------------------------------------------------------------------------------------


def test_as_probability_accepts_the_closed_interval():
    assert v.as_probability(0, "hit") == 0.0
    assert v.as_probability(1, "hit") == 1.0


@pytest.mark.parametrize("bad", ["0.5", None, True])
def test_as_probability_type(bad):
    with pytest.raises(InvalidTypeError, match=r"^hit_rate must be a number in \[0, 1\], got"):
        v.as_probability(bad, "hit_rate")


@pytest.mark.parametrize("bad", [1.5, -0.01, math.nan])
def test_as_probability_range(bad):
    with pytest.raises(
        InvalidModelError, match=r"^hit_rate must be in \[0, 1\], got (1.5|-0.01|nan)$"
    ):
        v.as_probability(bad, "hit_rate")


@pytest.mark.parametrize("bad", ["ABA", "ab", "", None, 1])
def test_as_choice_exact_match_only(bad):
    with pytest.raises(InvalidModelError, match=r"^method must be one of 'aba', 'bjb'; got"):
        v.as_choice(bad, "method", ("aba", "bjb"))
    assert v.as_choice("aba", "method", ("aba", "bjb")) == "aba"


def test_check_same_length():
    v.check_same_length("demands", [1, 2], "names", ["a", "b"])
    with pytest.raises(
        InvalidModelError, match=r"^names has 1 entries but demands has 2: give one per station$"
    ):
        v.check_same_length("demands", [1, 2], "names", ["a"])


def test_as_populations_refuses_a_count_with_a_unit():
    with pytest.raises(InvalidTypeError, match=r"n\[1\] = '8 Hz' is not a plain number"):
        v.as_populations([4, "8 Hz"], "n")
    with pytest.raises(InvalidTypeError, match=r"n\[0\] = '8 Hz' is not a plain number"):
        v.as_populations("8 Hz", "n")


def test_as_hit_ratio():
    assert v.as_hit_ratio(True, "h") == 1.0 and v.as_hit_ratio(0.25, "h") == 0.25
    assert v.as_hit_ratio([[0.0, 1.0]], "h").tolist() == [[0.0, 1.0]]
    with pytest.raises(InvalidModelError, match=r"^h\[1\] must be a hit ratio in \[0, 1\], got 90"):
        v.as_hit_ratio([0.5, 90], "h")
    with pytest.raises(InvalidTypeError, match=r"^h must be a boolean or a hit ratio"):
        v.as_hit_ratio("90 %", "h")


def test_fit_nfs_checks_hit_ratios_with_the_shared_checker():
    from qnmodel.calibration import fit_nfs

    with pytest.raises(InvalidModelError, match=r"^server_hit\[2\] must be a hit ratio in"):
        fit_nfs([1e8, 1e8, 1e8], [1.0, 0.0, 0.0], [0.0, 1.0, math.nan])
