"""Steady-state detection: seed 003's three-sample rule and MSER-5."""

import numpy as np
import pandas as pd
import pytest

from qnmodel.calibration import steady_state
from qnmodel.errors import InvalidModelError

from .._tol import closed_form


def test_seed003_first_window_within_ten_percent_and_largest_of_three():
    # windows: (50,80,95) dev 37%; (80,95,100) mean 91.67 dev 12.7%; (95,100,98) ok
    r = steady_state([50, 80, 95, 100, 98, 102, 101])
    assert r.steady and r.start_index == 2
    assert r.value == 100.0
    # integers: both means are an exact sum divided once
    assert r.mean == pytest.approx(np.mean([95, 100, 98, 102, 101]), rel=closed_form(1))


def test_seed003_boundary_is_strictly_less_than_ten_percent():
    # (90, 100, 110): mean 100, largest deviation exactly 10% -> not steady
    assert not steady_state([90, 100, 110]).steady
    assert steady_state([90.5, 100, 109.5]).steady


def test_seed003_never_steady_says_so_and_where_it_came_closest():
    r = steady_state([10, 30, 10, 30, 10, 30])
    assert not r.steady and r.start_index is None and np.isnan(r.value)
    assert "never steady" in r.message and "closest" in r.message
    short = steady_state([100, 100])
    assert not short.steady and "2 sample" in short.message


def test_seed003_reads_qnbench_sample_records_and_frames():
    recs = [{"t_s": 0.1 * (i + 1), "throughput_ops_s": v} for i, v in enumerate([5, 100, 99, 101])]
    r = steady_state(recs)
    assert r.start_index == 1 and r.start_time == pytest.approx(0.2, rel=closed_form(1))
    assert r.value == 101
    df = pd.DataFrame(recs)
    assert steady_state(df).start_index == 1
    with pytest.raises(InvalidModelError, match="no column 'bw'"):
        steady_state(df, column="bw")


def test_mser5_truncates_a_warmup_ramp():
    rng = np.random.default_rng(3)
    ramp = np.linspace(10, 100, 20)
    flat = 100 + rng.normal(0, 2, 80)
    r = steady_state(np.concatenate([ramp, flat]), method="mser5")
    assert r.steady
    assert 10 <= r.start_index <= 30
    assert r.value == pytest.approx(100, rel=0.01)


def test_mser5_drifting_series_is_not_steady_and_short_series_says_so():
    r = steady_state(np.linspace(1, 100, 100), method="mser5")
    assert not r.steady and "second half" in r.message
    r = steady_state([1.0] * 12, method="mser5")
    assert not r.steady and "20 samples" in r.message


def test_bad_input_is_named():
    with pytest.raises(InvalidModelError, match=r"samples\[1\] must be finite"):
        steady_state([1.0, float("nan"), 2.0])
    with pytest.raises(InvalidModelError, match="method must be one of"):
        steady_state([1.0, 2.0, 3.0], method="seed3")
    with pytest.raises(InvalidModelError, match=r"samples\[0\] must be >= 0"):
        steady_state([-1.0, 2.0, 3.0])
