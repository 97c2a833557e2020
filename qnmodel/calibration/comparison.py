"""Model against measurement: the measured closed-loop curve and its comparison with the model.

The one home of the measured-vs-model comparison, used by ``qnmodel
calibrate``, ``qnmodel report --measured``, ``qnmodel plot --measured`` and
the demo.

Sign convention
---------------
Every relative error here is **(model - measured) / measured**, in percent:
a positive error means the model predicts more than was measured (a higher
throughput, a longer response time). The mean absolute percentage error
(MAPE) is ``100/P sum_i |model_i - measured_i| / measured_i`` over the P
measured points.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._validate import as_populations
from ..errors import InvalidModelError, InvalidTypeError, TraceError, UnitError
from ..model import Network
from ..results.closed import BoundsResult, MVAResult
from ..solvers import bounds as solve_bounds
from ..solvers import mva as solve_mva
from ..units import split_header
from .fit import CalibrationResult
from .steady import steady_state
from .traces import Trace, load_trace

__all__ = [
    "Comparison",
    "compare",
    "measured_curve",
    "read_measured",
    "relative_error_pct",
    "sample_interval",
]

_MEASURED_COLUMNS = (
    "n",
    "throughput",
    "response_time",
    "throughput_halfwidth",
    "response_time_halfwidth",
)


def _as_trace(trace: Any) -> Trace:
    return trace if isinstance(trace, Trace) else load_trace(trace)


def relative_error_pct(model: Any, measured: Any) -> np.ndarray:
    """``100 (model - measured) / measured``: the sign convention of every comparison."""
    model = np.asarray(model, dtype=np.float64)
    measured = np.asarray(measured, dtype=np.float64)
    return 100.0 * (model - measured) / measured


def sample_interval(trace: Any) -> float:
    """The sampling interval (s) of a trace's per-interval samples, NaN when it has none.

    The run's own ``interval_s`` option when the trace records it, else the
    median spacing of the sample times.
    """
    t = _as_trace(trace)
    value = t.options.get("interval_s")
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    steps = []
    for _, s in t.samples.groupby("point"):
        ts = np.sort(s["t_s"].to_numpy(dtype=np.float64))
        steps.extend(np.diff(ts).tolist())
    steps = [v for v in steps if math.isfinite(v) and v > 0]
    return float(np.median(steps)) if steps else math.nan


def measured_curve(
    trace: Any, *, steady_method: str = "seed003", ci_level: float = 0.95
) -> pd.DataFrame:
    """The measured closed-loop curve, one row per population N.

    Columns: ``n``, ``throughput`` (X, jobs/s, over the whole measured
    interval), ``throughput_halfwidth`` (half-width of the ``ci_level`` interval of
    the mean of the per-interval samples, Student t), ``response_time``
    (``latency_mean_s``, s), ``response_time_halfwidth`` (propagated from X by
    Little's law, ``N / X^2 * err_X``), ``think_time`` (measured mean, s),
    ``steady`` and ``steady_from_s`` (steady-state detection on the samples),
    ``samples``.
    """
    t = _as_trace(trace)
    pts = t.points.sort_values("jobs")
    if pts["jobs"].duplicated().any():
        raise TraceError(
            f"{t.source}: several points share a population (jobs); a closed-loop curve needs "
            "one point per N (one request size)"
        )
    rows = []
    for _, p in pts.iterrows():
        s = t.samples[t.samples["point"] == p["point"]]["throughput_ops_s"].to_numpy()
        m = s.size
        if m >= 2:
            tq = float(stats.t.ppf(0.5 + ci_level / 2, m - 1))
            xerr = tq * float(np.std(s, ddof=1)) / math.sqrt(m)
        else:
            xerr = math.nan
        X = float(p["throughput_ops_s"])
        N = int(p["jobs"])
        st = steady_state(s, method=steady_method) if m else None
        rows.append(
            {
                "n": N,
                "throughput": X,
                "throughput_halfwidth": xerr,
                "response_time": float(p["latency_mean_s"]),
                "response_time_halfwidth": N / X**2 * xerr if X > 0 else math.nan,
                "think_time": float(p.get("think_s_mean", 0.0)),
                "steady": bool(st.steady) if st is not None else False,
                "steady_from_s": st.start_time if st is not None else None,
                "samples": m,
            }
        )
    return pd.DataFrame(rows)


#: names a measured-points CSV may give its quantities (before the unit): canonical -> aliases
_MEASURED_NAMES = {
    "throughput": ("throughput", "X"),
    "response_time": ("response_time", "R", "latency_mean", "latency"),
}


def _measured_column(p: Path, header: Any, first: Any) -> tuple[str, float] | None:
    """The canonical column and the factor to SI of one header of a measured CSV, or None
    for a column that is not a measured quantity (kept as it is)."""
    try:
        base, factor, dim = split_header(str(header))
    except UnitError as exc:
        raise InvalidModelError(f"{p}: {exc}") from None
    err = base.endswith(("_halfwidth", "_err"))  # R_err_ms: the short form of a CSV header
    stem = base.removesuffix("_halfwidth").removesuffix("_err")
    for canon, names in _MEASURED_NAMES.items():
        if stem not in names:
            continue
        want = "frequency" if canon == "throughput" else "time"
        name = canon + ("_halfwidth" if err else "")
        if factor is None:
            if canon == "throughput":
                return name, 1.0  # throughput: completions per second, by definition
            raise InvalidModelError(
                f"{p}: column {header!r} holds times without a unit (first value "
                f"{first!r}): name it with its unit, e.g. '{base}_ms', '{base}_s' or "
                f"'{base} [ms]'"
            )
        if dim != want:
            raise InvalidModelError(
                f"{p}: column {header!r} has a unit of {dim}, but {canon} is a "
                f"{'rate (e.g. [1/s], _per_s, _ops_s)' if want == 'frequency' else 'time'}"
            )
        return name, factor
    return None


def read_measured(path: str | Path) -> pd.DataFrame:
    """Measured points from a CSV, or from a qnbench closed-loop trace (JSON).

    A CSV has a column ``n`` and a throughput and/or a response-time column, each
    optionally with its error-bar half-width (``<name>_halfwidth``, or ``<name>_err``). Times
    carry their unit in the column name -- ``response_time_ms``, ``R_s``, ``latency_mean_ms``,
    ``"R [ms]"``, ``"response_time_halfwidth [ms]"`` -- and a time column without one is
    refused: a measured
    ``12.5`` may be milliseconds as well as seconds. Throughput is per second (``X``,
    ``throughput``, or with a unit: ``"X [kIOPS]"``, ``throughput_ops_s``). The names:
    ``R``, ``response_time``, ``latency_mean``, ``latency`` (mean response time); ``X``,
    ``throughput``. The frame returned has ``n``, ``throughput``, ``response_time`` (and
    their ``_halfwidth``) in SI (jobs/s, s), other columns as read. A ``.json`` file is a qnbench
    closed loop read by :func:`measured_curve`.

    Raises
    ------
    InvalidModelError
        Not a CSV; no ``n`` or no measured column; a time column without a unit, or with a
        unit of another dimension; two columns for one quantity.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such measurement file")
    if p.suffix.lower() == ".json":
        return measured_curve(p)
    try:
        frame = pd.read_csv(p, encoding="utf-8-sig")  # a byte-order mark is not in a name
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InvalidModelError(
            f"{p}: not a CSV of measured points (columns n, throughput, response_time_ms) "
            f"nor a qnbench .json trace: {exc}"
        ) from None
    out: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for col in frame.columns:
        first = frame[col].iloc[0] if len(frame) else None
        found = _measured_column(p, col, first.item() if hasattr(first, "item") else first)
        if found is None:
            out[col] = frame[col]  # not a measured quantity: kept as it is
            continue
        name, factor = found
        if name in out:
            raise InvalidModelError(
                f"{p}: two columns for {name}: {origin[name]!r} and {col!r}; keep one"
            )
        try:
            out[name] = pd.to_numeric(frame[col], errors="raise") * factor
        except (ValueError, TypeError):
            raise InvalidModelError(
                f"{p}: column {col!r} must hold numbers (the unit goes in the column name), "
                f"got {first!r}"
            ) from None
        origin[name] = col
    if "n" not in out or not ({"throughput", "response_time"} & set(out)):
        raise InvalidModelError(
            f"{p}: a measurement CSV needs columns n and a throughput (X, throughput) and/or a "
            "response time with its unit (R_ms, response_time_s, latency_mean_ms, 'R [ms]'), "
            f"optionally their _halfwidth; it has {list(frame.columns)}"
        )
    frame = pd.DataFrame(out)
    check_measured(frame, str(p))
    return frame


#: measured columns: may a value be missing (NaN)?
_MEASURED = {"throughput": False, "response_time": False, "throughput_halfwidth": True,
             "response_time_halfwidth": True}  # fmt: skip


def check_measured(frame: pd.DataFrame, source: str = "measured") -> None:
    """The one check of measured points (a CSV, a mapping, a frame): ``n`` whole numbers
    >= 1, each measured column finite numbers >= 0 (error bars may be missing)."""
    as_populations(frame["n"].to_numpy(), f"{source} n", allow_zero=False)
    for col in _MEASURED:
        if col not in frame.columns:
            continue
        for i, v in enumerate(frame[col].tolist()):
            where = f"{source}: row {i + 1}, column {col!r}"
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise InvalidModelError(f"{where}: {v!r} is not a number")
            f = float(v)
            if math.isnan(f) and _MEASURED[col]:
                continue
            elif not math.isfinite(f) or f < 0:
                raise InvalidModelError(
                    f"{where} must be a finite number >= 0 (a measured value), got {v!r}"
                )


@dataclass(frozen=True, repr=False)
class Comparison:
    """Model predictions against a measured closed-loop curve.

    Relative errors are ``(model - measured) / measured`` in percent
    (:func:`relative_error_pct`).

    Attributes
    ----------
    network : Network
        The model.
    bounds : BoundsResult
        The bounds of the band the measured points are checked against
        (:attr:`band`), for n = 1..max measured N.
    mva : MVAResult
        Exact MVA for n = 1..max measured N.
    measured : pandas.DataFrame
        The measured points (e.g. :func:`measured_curve` output).
    table : pandas.DataFrame
        One row per measured N: ``n``, ``throughput_measured``,
        ``throughput_halfwidth``, ``throughput_mva``, ``throughput_<band>_lower``,
        ``throughput_<band>_upper``, ``throughput_error_pct``,
        ``response_time_measured``, ``response_time_mva``,
        ``response_time_error_pct``, ``inside_bounds``, ``inside_aba``,
        ``inside_bounds_with_error`` (the error bar overlaps the band). A
        quantity that was not measured is NaN.
    mape_throughput, mape_response_time : float
        Mean absolute percentage error of MVA against measurement,
        ``100/P sum |model - measured| / measured`` over the P measured points
        (NaN when that quantity was not measured).
    coverage : float
        Share of measured X(N) inside the :attr:`band` throughput band.
    coverage_with_errors : float
        Share whose error bar overlaps the band.
    coverage_aba : float
        Share of measured X(N) inside the asymptotic (ABA) band, which holds
        for any service-time distribution (BJB assume product form).
    calibration : dict name -> CalibrationResult
        The fits the network was built from.
    notes : tuple of str
        How the model was built and what was measured.
    band : {"bjb", "aba"}
        The bounds of :attr:`bounds`: balanced job bounds, or asymptotic
        bounds when a station has several servers (BJB assume single servers).
    hints : tuple of str
        What to try when the model misses the measurement (e.g. a rate curve
        for a device that serves several requests at once); empty when none.
    """

    network: Network
    bounds: BoundsResult
    mva: MVAResult
    measured: pd.DataFrame
    table: pd.DataFrame
    mape_throughput: float
    mape_response_time: float
    coverage: float
    coverage_with_errors: float
    coverage_aba: float = math.nan
    calibration: dict[str, CalibrationResult] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    band: str = "bjb"
    hints: tuple[str, ...] = ()

    @property
    def n_max(self) -> int:
        """Largest measured population."""
        return int(self.measured["n"].max())

    def to_frame(self) -> pd.DataFrame:
        """The per-N comparison table (a copy)."""
        return self.table.copy()

    def __repr__(self) -> str:
        return (
            f"Comparison(N=1..{self.n_max}, MAPE X = {self.mape_throughput:.2f}%, "
            f"MAPE R = {self.mape_response_time:.2f}%, "
            f"inside {self.band.upper()} = {self.coverage:.0%})"
        )


def _measured_frame(measured: Any) -> pd.DataFrame:
    if isinstance(measured, pd.DataFrame):
        frame = measured
    elif isinstance(measured, Mapping):
        frame = pd.DataFrame({k: np.asarray(v) for k, v in measured.items()})
    else:
        raise InvalidTypeError(
            "measured must be a DataFrame or a mapping with columns n and throughput and/or "
            f"response_time, got {type(measured).__name__}"
        )
    if "n" not in frame.columns:
        raise InvalidModelError(
            f"measured has no 'n' column (the population of each point); columns: {list(frame)}"
        )
    if not ({"throughput", "response_time"} & set(frame.columns)):
        raise InvalidModelError(
            f"measured needs a 'throughput' or a 'response_time' column; columns: {list(frame)}"
        )
    if frame.empty:
        raise InvalidModelError("measured is empty: nothing to compare")
    check_measured(frame)
    return frame


def _column(frame: pd.DataFrame, name: str) -> np.ndarray:
    if name not in frame.columns:
        return np.full(len(frame), np.nan)
    return frame[name].to_numpy(dtype=np.float64)


def _mean_abs(values: np.ndarray) -> float:
    v = np.abs(values[np.isfinite(values)])
    return float(np.mean(v)) if v.size else math.nan


def compare(
    net: Network,
    measured: Any,
    *,
    calibration: Mapping[str, CalibrationResult] | None = None,
    notes: tuple[str, ...] = (),
) -> Comparison:
    """Predict the bounds and the exact MVA curve of ``net`` and compare them with ``measured``.

    Parameters
    ----------
    net : Network
        The model (closed, single class).
    measured : DataFrame or mapping
        Columns ``n`` (the population of each point: integers >= 1),
        ``throughput`` (jobs/s) and/or ``response_time`` (s), optionally
        ``throughput_halfwidth`` (error-bar half-width), e.g. from
        :func:`measured_curve` or :func:`read_measured`.
    calibration : mapping, optional
        Fits the network was built from (carried into the report).
    notes : tuple of str
        How the model was built and what was measured.

    Returns
    -------
    Comparison
        Relative errors ``(model - measured) / measured`` in percent.

    Raises
    ------
    InvalidModelError
        A column is missing, or a population ``n`` is not an integer >= 1
        (the message names the value).

    Notes
    -----
    The band is the balanced job bounds ([LZGS]_ sec. 5.3), or the asymptotic
    bounds ([LZGS]_ sec. 5.2) when a station has several servers; the curve is
    exact MVA ([LZGS]_ Algorithm 6.1, the Reiser-Lavenberg recursion).

    References
    ----------
    .. [LZGS] E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik,
       *Quantitative System Performance*, Prentice-Hall, 1984.
    """
    if not isinstance(net, Network):
        raise InvalidTypeError(f"net must be a Network, got {type(net).__name__}")
    frame = _measured_frame(measured)
    n = as_populations(frame["n"].to_numpy(), "measured n", allow_zero=False)
    N = int(n.max())
    band = "aba" if net.has_multiserver or net.is_load_dependent.any() else "bjb"
    b = solve_bounds(net, N, method=band)
    aba = b if band == "aba" else solve_bounds(net, N, method="aba")
    m = solve_mva(net, N)
    idx = n - 1
    X = _column(frame, "throughput")
    R = _column(frame, "response_time")
    xe = _column(frame, "throughput_halfwidth")
    xe = np.where(np.isfinite(xe), xe, 0.0)
    Xm, Rm = m.throughput[idx], m.response_time[idx]
    lo, hi = b.throughput_lower[idx], b.throughput_upper[idx]
    inside = (X >= lo) & (X <= hi)
    inside_err = (X + xe >= lo) & (X - xe <= hi)
    inside_aba = (X >= aba.throughput_lower[idx]) & (X <= aba.throughput_upper[idx])
    errX = relative_error_pct(Xm, X)
    errR = relative_error_pct(Rm, R)
    table = pd.DataFrame(
        {
            "n": n,
            "throughput_measured": X,
            "throughput_halfwidth": xe,
            "throughput_mva": Xm,
            f"throughput_{band}_lower": lo,
            f"throughput_{band}_upper": hi,
            "throughput_error_pct": errX,
            "response_time_measured": R,
            "response_time_mva": Rm,
            "response_time_error_pct": errR,
            "inside_bounds": inside,
            "inside_aba": inside_aba,
            "inside_bounds_with_error": inside_err,
        }
    )
    has_x = bool(np.any(np.isfinite(X)))
    share = (lambda v: float(np.mean(v))) if has_x else (lambda v: math.nan)
    return Comparison(
        network=net,
        bounds=b,
        mva=m,
        measured=frame.copy(),
        table=table,
        mape_throughput=_mean_abs(errX),
        mape_response_time=_mean_abs(errR),
        coverage=share(inside),
        coverage_with_errors=share(inside_err),
        coverage_aba=share(inside_aba),
        calibration=dict(calibration or {}),
        notes=tuple(notes),
        band=band,
    )
