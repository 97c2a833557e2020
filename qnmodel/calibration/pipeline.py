"""Calibrate -> predict -> compare: from bottom-up traces to a bound-vs-measured report.

The workflow (SPEC §7):

1. **Calibrate** the components from *bottom-up* traces: a request-size sweep
   of a device at one outstanding request gives its positioning time ``a``
   and transfer rate ``r`` (:func:`calibrate_device`, on median latency).
2. **Build** the closed network the measured system is: K device stations
   with demand ``(a + B/r) / K`` each (requests spread uniformly over K
   devices, visit ratio 1/K) and the clients' think time Z
   (:func:`build_device_network`).
3. **Predict** balanced job bounds and the exact MVA curve X(n), R(n).
4. **Compare** with an *end-to-end* closed-loop trace measured separately
   (:func:`measured_curve`, :func:`compare`): MAPE of MVA against measured
   X(N) and R(N), and the share of measured points inside the BJB band.
5. **Report**: Markdown plus a PNG of the bounds band with the measured
   points and their error bars (:func:`write_report`).

:func:`run_demo` does all of it on this machine with qnbench's emulated
devices in well under two minutes.

Model assumptions to keep in mind
---------------------------------
Exact MVA is exact for product-form networks: FCFS stations with
exponentially distributed service, any distribution at delay stations (think
time). The demo's end-to-end run therefore uses emulated devices with
exponential service of mean a + B/r (``dev_dist="exp"``) and constant think
time; with deterministic service (``dev_dist="const"``) queues are shorter
than MVA predicts and the measured throughput sits above the MVA curve
between the knee and saturation (still inside the bounds).

Plotting
--------
This module is in layer L3 and does not import :mod:`qnmodel.plotting`.
:func:`write_report` takes a ``plot`` callable with the signature of
:func:`qnmodel.plotting.bounds_vs_measured` (``plot(net, N, measured) ->
axes``); without one it draws a minimal figure with matplotlib (Agg) itself.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._validate import as_choice, as_positive_int, as_quantity
from ..errors import InvalidModelError, TraceError
from ..network import Network
from ..results import BoundsResult, MVAResult
from ..solvers import bounds as solve_bounds
from ..solvers import mva as solve_mva
from ..units import format_quantity
from .demand_estimation import service_demand_law
from .device import fit_cpu_per_packet, fit_cpu_per_unit, fit_device, fit_link
from .fit import CalibrationResult
from .steady import steady_state
from .traces import Trace, load_trace

__all__ = [
    "Comparison",
    "device_points",
    "calibrate_device",
    "calibrate_link",
    "calibrate_cpu_per_unit",
    "calibrate_cpu_per_packet",
    "calibrate_report",
    "build_device_network",
    "measured_curve",
    "compare",
    "write_report",
    "run_demo",
    "DEMO_DEVICE",
    "DEMO_SIZES",
]

#: The emulated device of the demo: positioning 4 ms (a plausible disk), 80 MB/s.
DEMO_DEVICE = {"dev_latency": 4e-3, "dev_rate": 80e6}
#: Request sizes of the demo's bottom-up sweep, 4 KiB .. 1 MiB: both sides of the
#: crossover a*r = 320 kB, and at least ~18 requests per size in 0.3 s.
DEMO_SIZES = [4096 * 2**k for k in range(9)]

_LATENCY_COLUMNS = {"p50": "latency_p50_s", "mean": "latency_mean_s"}


def _as_trace(trace: Any) -> Trace:
    return trace if isinstance(trace, Trace) else load_trace(trace)


def device_points(
    trace: Any, *, latency: str = "p50", jobs: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Request sizes (bytes) and latencies (s) of the points of a sweep run with ``jobs`` clients.

    ``latency="p50"`` (median, default) or ``"mean"``.
    """
    as_choice(latency, "latency", tuple(_LATENCY_COLUMNS))
    t = _as_trace(trace)
    pts = t.points[t.points["jobs"] == jobs]
    if pts.empty:
        raise TraceError(
            f"{t.source}: no point with jobs = {jobs}; a device sweep needs one outstanding "
            f"request per point (found jobs {sorted(set(t.points['jobs']))})"
        )
    col = _LATENCY_COLUMNS[latency]
    pts = pts[np.isfinite(pts[col]) & (pts[col] > 0)]
    return pts["bs_bytes"].to_numpy(dtype=np.float64), pts[col].to_numpy(dtype=np.float64)


def calibrate_device(trace: Any, *, latency: str = "p50", **fit_options: Any) -> CalibrationResult:
    """Fit ``t = a + B/r`` to a request-size sweep at one outstanding request.

    ``fit_options`` go to :func:`~qnmodel.calibration.fit_device`.
    """
    sizes, times = device_points(trace, latency=latency)
    res = fit_device(sizes, times, **fit_options)
    res.extra["latency_statistic"] = latency
    return res


def _jobs1(trace: Trace, op: str | None = None) -> pd.DataFrame:
    pts = trace.points[trace.points["jobs"] == 1]
    if op is not None:
        pts = pts[pts["op"] == op]
    if pts.empty:
        what = f"jobs = 1 and op = {op!r}" if op is not None else "jobs = 1"
        raise TraceError(
            f"{trace.source}: no point with {what} (points have jobs "
            f"{sorted(set(trace.points['jobs']))}, ops {sorted(set(trace.points['op']))})"
        )
    return pts


def calibrate_link(
    trace: Any,
    *,
    latency: str = "p50",
    mss: float | str | None = None,
    frame: float | str | None = None,
    **fit_options: Any,
) -> CalibrationResult:
    """Per-message overhead and rate of a link from a qnbench ``tcp`` size sweep.

    Uses the ``latency`` (median by default) of the one-client points: the
    request/response time of one message of ``bs`` payload bytes, fitted as
    ``overhead + W / rate`` (:func:`~qnmodel.calibration.fit_link`; give
    ``mss`` and ``frame`` to count wire bytes). On loopback (``tcp_role=self``)
    the "link" is the host's TCP stack and memory.
    """
    as_choice(latency, "latency", tuple(_LATENCY_COLUMNS))
    t = _as_trace(trace)
    pts = _jobs1(t)
    col = _LATENCY_COLUMNS[latency]
    res = fit_link(pts["bs_bytes"], pts[col], mss=mss, frame=frame, **fit_options)
    res.extra["latency_statistic"] = latency
    return res


def calibrate_cpu_per_unit(
    trace: Any,
    *,
    op: str = "memcpy",
    unit: float | str = "16 KiB",
    latency: str = "p50",
    **fit_options: Any,
) -> CalibrationResult:
    """CPU time per processed unit from a qnbench ``cpu`` engine size sweep.

    The ``latency`` (median by default) of the one-client points of kernel
    ``op`` is the time to process one ``bs``-byte unit; fitted as
    ``t_fixed + t_unit * bs / unit`` (:func:`~qnmodel.calibration.fit_cpu_per_unit`).
    """
    as_choice(latency, "latency", tuple(_LATENCY_COLUMNS))
    t = _as_trace(trace)
    pts = _jobs1(t, op)
    res = fit_cpu_per_unit(
        pts["bs_bytes"], pts[_LATENCY_COLUMNS[latency]], unit=unit, **fit_options
    )
    res.extra["kernel"] = op
    return res


def calibrate_cpu_per_packet(
    trace: Any, *, mss: float | str = 1460, **fit_options: Any
) -> CalibrationResult:
    """Protocol CPU time per packet from a qnbench ``tcp`` size sweep and CPU-time accounting.

    The CPU seconds per message of each one-client point, ``(cpu.user_s +
    cpu.sys_s) / ops``, fitted as ``t_fixed + t_packet * ceil(bs / mss)``
    (:func:`~qnmodel.calibration.fit_cpu_per_packet`). With ``tcp_role=self``
    both ends run in the measured process, so the cost is client plus server.
    """
    t = _as_trace(trace)
    pts = _jobs1(t)
    pts = pts[pts["ops"] > 0]
    per_op = (pts["cpu_user_s"] + pts["cpu_sys_s"]) / pts["ops"]
    res = fit_cpu_per_packet(pts["bs_bytes"], per_op, mss=mss, **fit_options)
    res.extra["cpu_accounting"] = "(user + sys) / ops per point"
    return res


def build_device_network(
    device: CalibrationResult | Mapping[str, float],
    bs: float | str,
    *,
    devices: int = 1,
    think_time: float | str = 0.0,
    extra_delay: float | str = 0.0,
) -> Network:
    """The closed network of N clients using K identical devices.

    Parameters
    ----------
    device : CalibrationResult or mapping
        Values ``a`` (s) and ``r`` (bytes/s).
    bs : float or str
        Request size B in bytes.
    devices : int
        K; each request goes to one device chosen uniformly (visit ratio 1/K),
        so each device station has demand ``(a + B/r) / K``.
    think_time : float or str
        Z, seconds.
    extra_delay : float or str
        A per-request client-side overhead (s) modelled as a delay station
        ``"client"``; 0 (default) omits it.
    """
    vals = device.values if isinstance(device, CalibrationResult) else dict(device)
    a = as_quantity(vals["a"], "a", "time")
    r = as_quantity(vals["r"], "r", "rate", positive=True)
    B = as_quantity(bs, "bs", "size")
    K = as_positive_int(devices, "devices")
    S = a + B / r
    names = [f"dev{k}" for k in range(K)]
    demands = [S / K] * K
    kinds = ["queue"] * K
    d = as_quantity(extra_delay, "extra_delay", "time")
    if d > 0:
        names.append("client")
        demands.append(d)
        kinds.append("delay")
    return Network.from_demands(demands, think_time=think_time, names=names, kinds=kinds)


def measured_curve(
    trace: Any, *, steady_method: str = "seed003", ci_level: float = 0.95
) -> pd.DataFrame:
    """The measured closed-loop curve, one row per population N.

    Columns: ``n``, ``throughput`` (X, jobs/s, over the whole measured
    interval), ``throughput_err`` (half-width of the ``ci_level`` interval of
    the mean of the per-interval samples, Student t), ``response_time``
    (``latency_mean_s``, s), ``response_time_err`` (propagated from X by
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
                "throughput_err": xerr,
                "response_time": float(p["latency_mean_s"]),
                "response_time_err": N / X**2 * xerr if X > 0 else math.nan,
                "think_time": float(p.get("think_s_mean", 0.0)),
                "steady": bool(st.steady) if st is not None else False,
                "steady_from_s": st.start_time if st is not None else None,
                "samples": m,
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True, repr=False)
class Comparison:
    """Model predictions against a measured closed-loop curve.

    Attributes
    ----------
    network : Network
        The calibrated model.
    bounds : BoundsResult
        Balanced job bounds for n = 1..max measured N.
    mva : MVAResult
        Exact MVA for n = 1..max measured N.
    measured : pandas.DataFrame
        :func:`measured_curve` output.
    table : pandas.DataFrame
        One row per measured N: measured X, R with error bars, MVA X, R, BJB
        X bounds, relative errors (%), ``inside_bounds``.
    mape_throughput, mape_response_time : float
        Mean absolute percentage error of MVA against measurement,
        ``100/P sum |model - measured| / measured`` over the P measured points.
    coverage : float
        Share of measured X(N) inside the BJB throughput band.
    coverage_with_errors : float
        Share whose error bar overlaps the band.
    coverage_aba : float
        Share of measured X(N) inside the asymptotic (ABA) band, which holds
        for any service-time distribution (BJB assume product form).
    calibration : dict name -> CalibrationResult
        The fits the network was built from.
    notes : tuple of str
        How the model was built and what was measured.
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
            f"MAPE R = {self.mape_response_time:.2f}%, inside BJB = {self.coverage:.0%})"
        )


def compare(
    net: Network,
    measured: pd.DataFrame,
    *,
    calibration: Mapping[str, CalibrationResult] | None = None,
    notes: tuple[str, ...] = (),
) -> Comparison:
    """Predict BJB bounds and the MVA curve of ``net`` and compare them with ``measured``.

    ``measured`` has columns ``n``, ``throughput`` and ``response_time``
    (optionally ``throughput_err``), e.g. from :func:`measured_curve`.
    """
    for c in ("n", "throughput", "response_time"):
        if c not in measured.columns:
            raise InvalidModelError(f"measured has no {c!r} column; columns: {list(measured)}")
    if measured.empty:
        raise InvalidModelError("measured is empty: nothing to compare")
    n = measured["n"].to_numpy(dtype=np.int64)
    N = int(n.max())
    b = solve_bounds(net, N, method="bjb")
    m = solve_mva(net, N)
    idx = n - 1
    X = measured["throughput"].to_numpy(dtype=np.float64)
    R = measured["response_time"].to_numpy(dtype=np.float64)
    xe = (
        measured["throughput_err"].to_numpy(dtype=np.float64)
        if "throughput_err" in measured
        else np.zeros_like(X)
    )
    xe = np.where(np.isfinite(xe), xe, 0.0)
    Xm, Rm = m.throughput[idx], m.response_time[idx]
    lo, hi = b.throughput_lower[idx], b.throughput_upper[idx]
    aba = solve_bounds(net, N, method="aba")
    alo, ahi = aba.throughput_lower[idx], aba.throughput_upper[idx]
    inside_aba = (X >= alo) & (X <= ahi)
    inside = (X >= lo) & (X <= hi)
    inside_err = (X + xe >= lo) & (X - xe <= hi)
    errX = 100.0 * (Xm - X) / X
    errR = 100.0 * (Rm - R) / R
    table = pd.DataFrame(
        {
            "n": n,
            "measured_throughput": X,
            "throughput_err": xe,
            "mva_throughput": Xm,
            "bjb_throughput_lower": lo,
            "bjb_throughput_upper": hi,
            "throughput_error_pct": errX,
            "measured_response_time": R,
            "mva_response_time": Rm,
            "response_time_error_pct": errR,
            "inside_bounds": inside,
            "inside_aba": inside_aba,
        }
    )
    return Comparison(
        network=net,
        bounds=b,
        mva=m,
        measured=measured.copy(),
        table=table,
        mape_throughput=float(np.mean(np.abs(errX))),
        mape_response_time=float(np.mean(np.abs(errR))),
        coverage=float(np.mean(inside)),
        coverage_with_errors=float(np.mean(inside_err)),
        coverage_aba=float(np.mean(inside_aba)),
        calibration=dict(calibration or {}),
        notes=tuple(notes),
    )


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------


def _md_table(df: pd.DataFrame, formats: Mapping[str, str]) -> str:
    cols = list(df.columns)
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---:" for _ in cols) + "|"]
    for _, row in df.iterrows():
        cells = []
        for c in cols:
            v = row[c]
            fmt = formats.get(c)
            if isinstance(v, bool | np.bool_):
                cells.append("yes" if v else "no")
            elif fmt and isinstance(v, int | float | np.integer | np.floating):
                cells.append(format(v, fmt) if np.isfinite(v) else "n/a")
            else:
                cells.append(str(v))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def default_plot(net: Network, N: int, measured: pd.DataFrame) -> Any:
    """Bounds band, MVA curve and measured points with error bars (a pyplot-free Figure).

    The same signature as :func:`qnmodel.plotting.bounds_vs_measured`, which
    should be preferred where layer rules allow importing it.
    """
    from matplotlib.figure import Figure  # no pyplot: never touches the user's backend

    b = solve_bounds(net, N, method="bjb")
    a = solve_bounds(net, N, method="aba")
    m = solve_mva(net, N)
    fig = Figure(figsize=(11, 4.2))
    axes = fig.subplots(1, 2)
    ax = axes[0]
    ax.fill_between(a.n, a.throughput_lower, a.throughput_upper, color="0.9", label="ABA band")
    ax.fill_between(
        b.n, b.throughput_lower, b.throughput_upper, color="C0", alpha=0.25, label="BJB band"
    )
    ax.plot(m.n, m.throughput, color="C0", label="exact MVA")
    ax.errorbar(
        measured["n"],
        measured["throughput"],
        yerr=measured.get("throughput_err"),
        fmt="o",
        color="C3",
        capsize=3,
        label="measured",
    )
    ax.set_xlabel("clients N")
    ax.set_ylabel("throughput X (requests/s)")
    ax.legend(loc="lower right")
    ax = axes[1]
    ax.fill_between(
        b.n,
        1e3 * b.response_time_lower,
        1e3 * b.response_time_upper,
        color="C0",
        alpha=0.25,
        label="BJB band",
    )
    ax.plot(m.n, 1e3 * m.response_time, color="C0", label="exact MVA")
    err = measured.get("response_time_err")
    ax.errorbar(
        measured["n"],
        1e3 * measured["response_time"],
        yerr=None if err is None else 1e3 * err,
        fmt="o",
        color="C3",
        capsize=3,
        label="measured",
    )
    ax.set_xlabel("clients N")
    ax.set_ylabel("response time R (ms)")
    ax.legend(loc="upper left")
    fig.suptitle(f"bounds vs measured: bottleneck {b.bottleneck}, N* = {b.n_star:.3g}")
    fig.tight_layout()
    return axes


def write_report(
    comparison: Comparison,
    out_dir: str | os.PathLike,
    *,
    plot: Callable[..., Any] | None = None,
    title: str = "Calibrated model vs measurement",
    name: str = "report",
    sections: tuple[str, ...] = (),
) -> Path:
    """Write ``<name>.md`` and ``<name>.png`` (bounds band with measured points) into ``out_dir``.

    ``plot(net, N, measured) -> axes`` draws the figure (e.g.
    :func:`qnmodel.plotting.bounds_vs_measured`); :func:`default_plot` otherwise.
    ``sections`` are extra Markdown blocks appended to the report.
    Returns the path of the Markdown file.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    png = out / f"{name}.png"
    draw = plot or default_plot
    axes = draw(comparison.network, comparison.n_max, comparison.measured)
    ax0 = np.asarray(axes, dtype=object).ravel()[0]
    fig = ax0.figure
    fig.savefig(png, dpi=110)
    if "matplotlib.pyplot" in sys.modules:  # a pyplot figure (e.g. from qnmodel.plotting)
        sys.modules["matplotlib.pyplot"].close(fig)

    c = comparison
    b = c.bounds
    lines = [f"# {title}", ""]
    lines += [
        f"* **MAPE of exact MVA vs measured X(N)**: {c.mape_throughput:.2f}% "
        f"(response time R(N): {c.mape_response_time:.2f}%) over {len(c.table)} "
        f"populations N = {int(c.table['n'].min())}..{c.n_max}",
        f"* **Measured points inside the BJB throughput band**: {c.coverage:.0%} "
        f"({int(c.table['inside_bounds'].sum())} of {len(c.table)}); with their error bars "
        f"overlapping it: {c.coverage_with_errors:.0%}; inside the ABA band: "
        f"{c.coverage_aba:.0%}",
        f"* Model: {c.network!r}",
        f"* Bottleneck {b.bottleneck}, D = {format_quantity(b.total_demand, 'time')}, "
        f"D_max = {format_quantity(b.max_demand, 'time')}, Z = "
        f"{format_quantity(b.think_time, 'time')}, knee N* = {b.n_star:.3g}, saturation "
        f"X = {b.saturation_throughput:.5g}/s",
        "",
        f"![bounds vs measured]({png.name})",
        "",
    ]
    if c.notes:
        lines += ["## How this was done", ""] + [f"* {n}" for n in c.notes] + [""]
    for nm, res in c.calibration.items():
        lines += [f"## Calibration: {nm}", "", "```", res.report(), "```", ""]
    lines += ["## Model vs measurement per population", ""]
    tbl = c.table.copy()
    tbl["measured_response_time"] *= 1e3
    tbl["mva_response_time"] *= 1e3
    tbl = tbl.rename(
        columns={
            "measured_throughput": "X meas (/s)",
            "throughput_err": "+/-",
            "mva_throughput": "X MVA",
            "bjb_throughput_lower": "X BJB lo",
            "bjb_throughput_upper": "X BJB hi",
            "throughput_error_pct": "X err %",
            "measured_response_time": "R meas (ms)",
            "mva_response_time": "R MVA (ms)",
            "response_time_error_pct": "R err %",
            "inside_bounds": "in BJB",
            "inside_aba": "in ABA",
        }
    )
    fmts = {k: ".4g" for k in tbl.columns}
    fmts.update({"X err %": "+.1f", "R err %": "+.1f", "n": "d"})
    lines += [_md_table(tbl, fmts), ""]
    steady = c.measured.get("steady")
    if steady is not None and not bool(np.all(steady)):
        bad = c.measured.loc[~c.measured["steady"].astype(bool), "n"].tolist()
        lines += [
            f"Not steady by seed 003's rule (3 samples within 10% of their mean): N = {bad}; "
            "their averages include transients.",
            "",
        ]
    lines += list(sections)
    md = out / f"{name}.md"
    md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return md


# ---------------------------------------------------------------------------------------
# the demo
# ---------------------------------------------------------------------------------------


def _say(progress: bool, msg: str) -> None:
    if progress:
        print(f"[calibrate] {msg}", file=sys.stderr, flush=True)


def calibrate_and_compare(
    device_trace: Any,
    closed_trace: Any,
    *,
    latency: str = "p50",
    steady_method: str = "seed003",
) -> Comparison:
    """Fit the device from a size sweep, build the network of the closed-loop run, compare.

    The closed-loop trace supplies the configuration of the end-to-end
    experiment (request size, number of devices K, think time Z: options
    ``bs_bytes``, ``devices``, ``think_s``); the model parameters come only
    from ``device_trace``.
    """
    dev = _as_trace(device_trace)
    e2e = _as_trace(closed_trace)
    fit = calibrate_device(dev, latency=latency, seek_floor=None)
    bs = sorted(set(e2e.points["bs_bytes"]))
    if len(bs) != 1:
        raise TraceError(f"{e2e.source}: the closed-loop run must use one request size, got {bs}")
    K = int(e2e.options.get("devices", 1))
    Z = float(e2e.options.get("think_s", 0.0))
    net = build_device_network(fit, bs[0], devices=K, think_time=Z)
    measured = measured_curve(e2e, steady_method=steady_method)
    opts = e2e.options
    notes = (
        f"Bottom-up: qnbench `{dev.engine}` engine, one client, request sizes "
        f"{fit.extra['size_range_text']} ({fit.extra['distinct_sizes']} sizes), "
        f"{latency} latency per size, fit t = a + B/r with relative-error weights.",
        f"End-to-end: qnbench `{e2e.engine}` engine, closed loop, N = "
        f"{', '.join(str(v) for v in measured['n'])} clients, request size "
        f"{format_quantity(bs[0], 'size')}, K = {K} device(s) "
        f"({opts.get('dev_select', '?')} selection, {opts.get('dev_dist', '?')} service time), "
        f"think time Z = {format_quantity(Z, 'time')} ({opts.get('think_dist', '?')}), "
        f"{opts.get('runtime_s', '?')} s per point after {opts.get('warmup_s', '?')} s warm-up.",
        f"Model: K queueing stations of demand (a + B/r)/K = "
        f"{format_quantity(net.demands[0], 'time')} each plus think time Z; exact MVA and "
        "balanced job bounds (Lazowska et al. 1984, ch. 5-6). Error bars: 95% Student t "
        "interval of the mean of the 0.1 s throughput samples.",
    )
    calibration = {"device": fit}
    util = _device_utilization(e2e, K)
    if util is not None:
        U, X = util
        law = service_demand_law(U, X, stations=[f"dev{k}" for k in range(K)])
        law.extra["model_demand_s"] = float(net.demands[0])
        calibration["service demands from utilisation (cross-check)"] = law
    return compare(net, measured, calibration=calibration, notes=notes)


def _device_utilization(trace: Trace, K: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Per-device utilisations (T, K) and throughputs (T,) from emu ``engine_stats``."""
    rows = []
    for es in trace.engine_stats:
        u = es.get("utilization") if isinstance(es, Mapping) else None
        if not isinstance(u, list) or len(u) != K:
            return None
        rows.append([float(v) for v in u])
    if not rows:
        return None
    U = np.clip(np.array(rows), 0.0, 1.0)
    X = trace.points["throughput_ops_s"].to_numpy(dtype=np.float64)
    if np.any(~np.isfinite(X)) or np.any(X <= 0):
        return None
    return U, X


def calibrate_report(
    device_trace: Any,
    closed_trace: Any,
    out_dir: str | os.PathLike,
    *,
    plot: Callable[..., Any] | None = None,
    latency: str = "p50",
) -> Path:
    """:func:`calibrate_and_compare` then :func:`write_report`: the ``qnmodel calibrate`` job.

    ``device_trace`` and ``closed_trace`` are trace files (or loaded traces);
    returns the path of ``report.md`` in ``out_dir``.
    """
    cmp = calibrate_and_compare(device_trace, closed_trace, latency=latency)
    return write_report(cmp, out_dir, plot=plot)


def run_demo(
    out_dir: str | os.PathLike,
    *,
    progress: bool = True,
    plot: Callable[..., Any] | None = None,
    runtime: float = 1.0,
    jobs: tuple[int, ...] = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32),
    executable_path: str | os.PathLike | None = None,
    constant_service_check: bool = True,
) -> Path:
    """Measure, calibrate, solve and report on this machine (about 30-40 s).

    1. Bottom-up: qnbench's emulated device (a = 4 ms, r = 80 MB/s, constant
       service time) at one client, request sizes 4 KiB .. 1 MiB: fit a, r.
    2. End-to-end: the same device parameters, K = 4 devices chosen at random,
       exponential service (the product-form case), 64 KiB requests, constant
       think time 10 ms, closed loop over ``jobs`` clients, ``runtime`` s each.
    3. Build the network from the fitted a, r only; BJB bounds and exact MVA;
       compare; cross-check the demands with the service-demand law on the
       devices' measured utilisations; write ``report.md`` and ``report.png``
       (plus the traces as JSON) into ``out_dir``.
    4. Optionally (``constant_service_check``) repeat step 2 with constant
       service times and report the model error there too.

    Parameters
    ----------
    out_dir : path
        Created if needed.
    progress : bool
        Progress lines on stderr.
    plot : callable, optional
        ``plot(net, N, measured) -> axes``, e.g. :func:`qnmodel.plotting.bounds_vs_measured`.
    runtime : float
        Seconds per closed-loop point.
    jobs : tuple of int
        Closed-loop populations.
    executable_path : path, optional
        qnbench binary (default: :func:`qnmodel.bench.executable`).
    constant_service_check : bool
        Also run the closed loop with constant service times and report how
        far MVA (which assumes exponential service) is from it.

    Returns
    -------
    pathlib.Path
        The Markdown report.
    """
    from .. import bench

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    kw: dict[str, Any] = {}
    if executable_path is not None:
        kw["executable_path"] = executable_path
    sizes = DEMO_SIZES
    _say(progress, f"1/3 bottom-up device sweep: {len(sizes)} request sizes, one client ...")
    dev = bench.run(
        "emu",
        jobs=[1],
        bs=sizes,
        dev_dist="const",
        devices=1,
        runtime=0.3,
        warmup=0.05,
        progress=False,
        **DEMO_DEVICE,
        **kw,
    )
    dev.save(out / "device_sweep.json")
    _say(progress, f"    done in {time.monotonic() - t0:.1f} s")
    _say(
        progress,
        f"2/3 end-to-end closed loop: N = {list(jobs)}, {runtime:g} s per point "
        f"(about {len(jobs) * (runtime + 0.2):.0f} s) ...",
    )

    def closed_loop(dist: str):
        # The end-to-end run: K = 4 devices chosen at random, 64 KiB requests, Z = 10 ms.
        return bench.run(
            "emu",
            jobs=list(jobs),
            bs=65536,
            devices=4,
            dev_select="random",
            dev_dist=dist,
            think=0.010,
            think_dist="const",
            runtime=runtime,
            warmup=0.1,
            progress=progress,
            **DEMO_DEVICE,
            **kw,
        )

    e2e = closed_loop("exp")
    e2e.save(out / "closed_loop.json")
    const_cmp = None
    if constant_service_check:
        _say(progress, "    the same with constant (deterministic) service times ...")
        e2e_const = closed_loop("const")
        e2e_const.save(out / "closed_loop_const.json")
        const_cmp = calibrate_and_compare(dev, e2e_const)
    _say(progress, f"3/3 calibrating, solving, writing the report ({time.monotonic() - t0:.1f} s)")
    cmp = calibrate_and_compare(dev, e2e)
    fit = cmp.calibration["device"]
    truth = (
        "## Known answer\n\n"
        f"The emulated device was configured with a = "
        f"{format_quantity(DEMO_DEVICE['dev_latency'], 'time')} and r = "
        f"{format_quantity(DEMO_DEVICE['dev_rate'], 'rate')}; the fit found a = "
        f"{format_quantity(fit.values['a'], 'time')} "
        f"({100 * (fit.values['a'] / DEMO_DEVICE['dev_latency'] - 1):+.1f}%) and r = "
        f"{format_quantity(fit.values['r'], 'rate')} "
        f"({100 * (fit.values['r'] / DEMO_DEVICE['dev_rate'] - 1):+.1f}%). The measured "
        "latency includes the client's timer wake-up overhead (tens of microseconds), "
        "which the fit attributes to a.\n\n"
        f"Measured on {e2e.host.get('hostname', '?')} ({e2e.host.get('cpu_model', '?')}, "
        f"{e2e.host.get('cpus', '?')} CPUs); total time {time.monotonic() - t0:.1f} s.\n"
    )
    sections = [truth]
    if const_cmp is not None:
        t = const_cmp.table
        sections.append(
            "## Sensitivity to the service-time distribution\n\n"
            "The same closed loop with *constant* service times (not product form): MAPE of "
            f"MVA vs measured X(N) = {const_cmp.mape_throughput:.2f}%; "
            f"{const_cmp.coverage:.0%} of the points inside the BJB band and "
            f"{const_cmp.coverage_aba:.0%} inside the ABA band. Deterministic service queues "
            "less than exponential service, so the measured X(N) lies above the MVA curve "
            "between the knee and saturation (largest deviation "
            f"{t['throughput_error_pct'].abs().max():.1f}% at N = "
            f"{int(t.loc[t['throughput_error_pct'].abs().idxmax(), 'n'])}). The asymptotic "
            "bounds hold for any service-time distribution; the balanced job bounds, like "
            "MVA, assume product form, and points above their upper bound show it. "
            "Trace: `closed_loop_const.json`.\n"
        )
    path = write_report(
        cmp,
        out,
        plot=plot,
        title="qnmodel demo: calibrate -> predict -> compare",
        sections=tuple(sections),
    )
    _say(
        progress,
        f"MAPE(X) = {cmp.mape_throughput:.2f}%, inside BJB = {cmp.coverage:.0%}; report: {path}",
    )
    return path
