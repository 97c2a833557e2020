"""Steady-state detection in a series of per-interval samples (throughput, bandwidth).

Two rules, each reporting *where* steady state began, or that it never did:

``"seed003"``
    The rule of Chen et al. (seed 003, sec. 2, test method): a run is steady
    once three consecutive samples each deviate by less than 10% (in absolute
    value) from the sliding mean of those three samples ("连续3次带宽距平百分率
    绝对值全部小于10%, 平均值采用连续3次的滑动平均值"); the reported value is
    the **largest** of those three samples. The first such window wins.
``"mser5"``
    MSER-5 truncation (White, 1997; White, Cobb and Spratt, 2000): average the
    series in batches of 5, choose the truncation point d (in batches) that
    minimises ``MSER(d) = sum_{i>d} (Y_i - Ybar_d)^2 / (m - d)^2`` over the
    first half of the m batches; steady state begins at sample 5 d and the
    value is the mean of the samples from there on. A minimum in the second
    half means the run is too short or still drifting: not steady.

References
----------
.. [Chen] Chen et al., NVMe RAID performance analysis with Intel VROC (seed 003).
.. [White97] K. P. White Jr., "An effective truncation heuristic for bias
   reduction in simulation output", Simulation 69(6), 1997, 323-334.
.. [WCS00] K. P. White Jr., M. J. Cobb, S. C. Spratt, "A comparison of five
   steady-state truncation heuristics for simulation", Proc. WSC 2000.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_choice, as_quantities, as_reals
from ..errors import InvalidModelError

__all__ = ["SteadyStateResult", "steady_state", "STEADY_METHODS"]

STEADY_METHODS = ("seed003", "mser5")


@dataclass(frozen=True, repr=False)
class SteadyStateResult:
    """Where a series became steady, and the value to report.

    Attributes
    ----------
    method : str
        ``"seed003"`` or ``"mser5"``.
    steady : bool
        Whether steady state was reached.
    start_index : int or None
        Index of the first steady sample (None when never steady).
    start_time : float or None
        Its time stamp in seconds, when the samples carried times.
    value : float
        seed003: the largest of the three samples of the first steady window;
        mser5: the mean of the samples from ``start_index`` on. NaN when never
        steady.
    mean : float
        Mean of the samples from ``start_index`` on (NaN when never steady).
    n_samples : int
        Length of the series.
    message : str
        What was found, or why steady state was never reached.
    """

    method: str
    steady: bool
    start_index: int | None
    start_time: float | None
    value: float
    mean: float
    n_samples: int
    message: str

    def __bool__(self) -> bool:
        return self.steady

    def __repr__(self) -> str:
        return (
            f"SteadyStateResult(method={self.method!r}, steady={self.steady}, "
            f"start_index={self.start_index}, value={self.value:.6g}: {self.message})"
        )


def _series(samples: Any, column: str, time_column: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Values and optional times from an array, a Series, a DataFrame or a list of dicts."""
    times = None
    if hasattr(samples, "columns"):  # DataFrame
        if column not in samples.columns:
            raise InvalidModelError(
                f"samples has no column {column!r}; columns are {list(samples.columns)}; "
                "pass column=..."
            )
        vals = samples[column].to_numpy(dtype=np.float64)
        if time_column in samples.columns:
            times = samples[time_column].to_numpy(dtype=np.float64)
    elif (
        isinstance(samples, Sequence)
        and not isinstance(samples, str)
        and samples
        and isinstance(samples[0], Mapping)
    ):
        try:
            vals = np.array([float(s[column]) for s in samples])
        except KeyError:
            raise InvalidModelError(
                f"samples are records without a {column!r} field; fields are "
                f"{sorted(samples[0])}; pass column=..."
            ) from None
        if all(time_column in s for s in samples):
            times = np.array([float(s[time_column]) for s in samples])
    else:
        vals = as_reals(samples, "samples")
    # the samples are rates (ops/s or B/s): finite and >= 0
    return as_quantities(vals, "samples", "frequency"), times


def steady_state(
    samples: Any,
    method: str = "seed003",
    *,
    threshold: float = 0.10,
    window: int = 3,
    column: str = "throughput_ops_s",
    time_column: str = "t_s",
) -> SteadyStateResult:
    """Detect steady state in per-interval samples.

    Parameters
    ----------
    samples : array_like, pandas DataFrame/Series, or list of dicts
        Per-interval rates in time order (e.g. ops/s or bytes/s). A DataFrame
        or a list of qnbench sample records is read from ``column`` (times
        from ``time_column``, seconds, when present).
    method : {"seed003", "mser5"}
        See the module docstring.
    threshold : float
        seed003 only: the largest relative deviation from the window mean that
        still counts as steady (0.10 in the paper), in (0, 1).
    window : int
        seed003 only: consecutive samples that must agree (3 in the paper), >= 2.
    column, time_column : str
        Field names for DataFrame/record input.

    Returns
    -------
    SteadyStateResult
    """
    as_choice(method, "method", STEADY_METHODS)
    vals, times = _series(samples, column, time_column)
    if method == "seed003":
        if not (isinstance(threshold, float | int) and 0.0 < threshold < 1.0):
            raise InvalidModelError(f"threshold must be in (0, 1), got {threshold!r}")
        if isinstance(window, bool) or not isinstance(window, int) or window < 2:
            raise InvalidModelError(f"window must be an integer >= 2, got {window!r}")
        return _seed003(vals, times, float(threshold), window)
    return _mser5(vals, times)


def _never(method, vals, msg) -> SteadyStateResult:
    """The run never became steady by `method`; `msg` says why and what to do."""
    return SteadyStateResult(method, False, None, None, math.nan, math.nan, vals.size, msg)


def _result(method, vals, times, start, value, msg) -> SteadyStateResult:
    t0 = None if times is None else float(times[start])
    return SteadyStateResult(
        method, True, int(start), t0, float(value), float(vals[start:].mean()), vals.size, msg
    )


def _seed003(vals, times, threshold, window) -> SteadyStateResult:
    n = vals.size
    if n < window:
        return _never(
            "seed003",
            vals,
            f"never steady: {n} sample(s), the rule needs {window} consecutive ones; "
            "run longer or sample more often",
        )
    w = np.lib.stride_tricks.sliding_window_view(vals, window)
    m = w.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = np.where(m > 0, np.abs(w - m[:, None]).max(axis=1) / np.where(m > 0, m, 1), np.inf)
    ok = np.flatnonzero(dev < threshold)
    if ok.size == 0:
        best = int(np.argmin(dev))
        return _never(
            "seed003",
            vals,
            f"never steady: no {window} consecutive samples all within {threshold:.0%} of their "
            f"mean (closest: samples {best}..{best + window - 1}, largest deviation "
            f"{dev[best]:.1%}); run longer",
        )
    i = int(ok[0])
    value = float(w[i].max())
    return _result(
        "seed003",
        vals,
        times,
        i,
        value,
        f"steady from sample {i} ({window} samples within {threshold:.0%} of their mean, "
        f"largest deviation {dev[i]:.1%}); value = largest of the {window} = {value:.6g}",
    )


def _mser5(vals, times) -> SteadyStateResult:
    b = 5
    m = vals.size // b
    if m < 4:
        return _never(
            "mser5",
            vals,
            f"never steady: MSER-5 needs at least 20 samples (4 batches of 5), got {vals.size}; "
            "run longer or sample more often",
        )
    batches = vals[: m * b].reshape(m, b).mean(axis=1)
    # MSER(d) for d = 0..m-2 via suffix sums
    suffix_sum = np.cumsum(batches[::-1])[::-1]
    suffix_sq = np.cumsum((batches**2)[::-1])[::-1]
    d = np.arange(m - 1)
    k = m - d
    mean_d = suffix_sum[d] / k
    sse = suffix_sq[d] - k * mean_d**2
    mser = np.maximum(sse, 0.0) / k**2
    dstar = int(np.argmin(mser))
    if dstar > m // 2:
        return _never(
            "mser5",
            vals,
            f"never steady: the MSER-5 minimum lies at batch {dstar} of {m}, in the second half "
            "of the run, so the series is still drifting; run longer",
        )
    start = dstar * b
    value = float(vals[start:].mean())
    return _result(
        "mser5",
        vals,
        times,
        start,
        value,
        f"steady from sample {start} (MSER-5 truncation of {dstar} batch(es) of 5); "
        f"value = mean of the remaining {vals.size - start} samples = {value:.6g}",
    )
