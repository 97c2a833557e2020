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
   (:func:`~qnmodel.calibration.comparison.measured_curve`,
   :func:`~qnmodel.calibration.comparison.compare`, re-exported here): MAPE of
   MVA against measured X(N) and R(N), errors (model - measured) / measured,
   and the share of measured points inside the BJB band.
5. **Report**: Markdown plus a PNG of the bounds band with the measured
   points and their error bars (:func:`qnmodel.reporting.report.write_report`;
   :func:`qnmodel.reporting.report.calibrate_report` does steps 1-5 from two trace files).

:func:`qnmodel.lab.demo.run_demo` does all of it on this machine with qnbench's emulated
devices in well under two minutes.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._validate import as_choice, as_positive_int, as_quantity
from ..errors import TraceError, TraceMismatchWarning
from ..model import Network
from ..units import format_quantity
from .comparison import Comparison, compare, measured_curve, sample_interval
from .demand_estimation import service_demand_law
from .device import fit_cpu_per_packet, fit_cpu_per_unit, fit_device, fit_link
from .fit import CalibrationResult
from .traces import Trace, load_trace

__all__ = [
    "Comparison",
    "device_points",
    "calibrate_device",
    "calibrate_link",
    "calibrate_cpu_per_unit",
    "calibrate_cpu_per_packet",
    "build_device_network",
    "check_traces_fit",
    "measured_curve",
    "compare",
    "parallel_device_hint",
    "DEMO_DEVICE",
    "DEMO_SIZES",
]

#: The emulated device of the demo: positioning 4 ms (a plausible disk), 80 MB/s.
DEMO_DEVICE = {"dev_latency": 4e-3, "dev_rate": 80e6}
#: Request sizes of the demo's bottom-up sweep, 4 KiB .. 1 MiB: both sides of the
#: crossover a*r = 320 kB, and at least ~18 requests per size in 0.3 s.
DEMO_SIZES = [4096 * 2**k for k in range(9)]

_LATENCY_COLUMNS = {"p50": "latency_p50_s", "mean": "latency_mean_s", "min": "latency_min_s"}


def _as_trace(trace: Any) -> Trace:
    return trace if isinstance(trace, Trace) else load_trace(trace)


def _with_extra(res: CalibrationResult, **facts: Any) -> CalibrationResult:
    """A copy of a fit result with more ``extra`` facts (the result itself stays untouched)."""
    return dataclasses.replace(res, extra={**res.extra, **facts})


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
    return _with_extra(fit_device(sizes, times, **fit_options), latency_statistic=latency)


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

    ``latency="min"`` takes each point's fastest message: the cost of the path
    with no interference, since other work on the host can only add to a
    message's time. Measured on loopback on a shared 2-core host: the median
    of a whole 0.2 s point moved for seconds at a time (40 us against 13 us at
    64 B at load average 4; up to 3.5 ms against 51 us at 256 KiB at 16), while
    the minima stayed at 13-14 us (64 B) and 44-64 us (256 KiB).
    """
    as_choice(latency, "latency", tuple(_LATENCY_COLUMNS))
    t = _as_trace(trace)
    pts = _jobs1(t)
    col = _LATENCY_COLUMNS[latency]
    res = fit_link(pts["bs_bytes"], pts[col], mss=mss, frame=frame, **fit_options)
    return _with_extra(res, latency_statistic=latency)


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
    return _with_extra(res, kernel=op)


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
    return _with_extra(res, cpu_accounting="(user + sys) / ops per point")


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
    from ``device_trace``. Traces that do not fit this calibration are refused
    or warned about first (:func:`check_traces_fit`).
    """
    dev = _as_trace(device_trace)
    e2e = _as_trace(closed_trace)
    check_traces_fit(dev, e2e)
    fit = calibrate_device(dev, latency=latency, seek_floor=None)
    bs = sorted(set(e2e.points["bs_bytes"]))
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
        f"interval of the mean of the {_interval_text(e2e)} throughput samples.",
    )
    calibration = {"device": fit}
    util = _device_utilization(e2e, K)
    if util is not None:
        U, X = util
        law = service_demand_law(U, X, stations=[f"dev{k}" for k in range(K)])
        law = _with_extra(law, model_demand_s=float(net.demands[0]))
        calibration["service demands from utilisation (cross-check)"] = law
    cmp = compare(net, measured, calibration=calibration, notes=notes)
    hint = parallel_device_hint(cmp, servers=e2e.options.get("dev_servers"))
    return dataclasses.replace(cmp, hints=(hint,)) if hint else cmp


#: MAPE of X (%) above which a single-queue model is called a poor fit.
POOR_FIT_MAPE = 10.0


def parallel_device_hint(cmp: Comparison, *, servers: Any = None) -> str | None:
    """A hint naming :func:`~qnmodel.calibration.rate_curve.fit_rate_multipliers` when a
    single-queue model misses a device that serves several requests at once, else None.

    Given when the MAPE of X exceeds :data:`POOR_FIT_MAPE` (10 %) and some measured
    throughput exceeds the model's saturation throughput 1/D_max by more than 10 %: no
    network of single-server queues with these demands can reach it (the asymptotic
    bound X(N) <= 1/D_max, [LZGS] sec. 5.2), so the device works on several requests at
    once. ``servers`` (e.g. the trace's ``dev_servers``) is quoted when it is above 1.
    """
    mape = float(cmp.mape_throughput)
    if not (math.isfinite(mape) and mape > POOR_FIT_MAPE):
        return None
    x = cmp.table["throughput_measured"].to_numpy(dtype=np.float64)
    x_sat = float(cmp.bounds.saturation_throughput)
    if not (np.isfinite(x).any() and np.nanmax(x) > 1.1 * x_sat):
        return None
    m = int(servers) if servers is not None and float(servers) > 1 else None
    said = f" (the trace says {m} servers per device)" if m else ""
    return (
        f"the single-queue model misses X by MAPE {mape:.1f} % (> {POOR_FIT_MAPE:g} %), and "
        f"the device reached {np.nanmax(x) / x_sat:.1f}x its one-queue limit 1/D_max = "
        f"{x_sat:.4g}/s: it serves several requests at once{said}. Measure a queue-depth "
        "sweep (jobs = 1, 2, 4, ..., no think time) and fit its rate curve with "
        "qnmodel.fit_rate_multipliers (from a trace: qnmodel.calibration."
        "rate_multipliers_from_curve(measured_curve(trace))); its .station(name) is a "
        "Station with rate_multipliers"
    )


#: qnbench engines that measure a device serving requests of B bytes in about a + B/r seconds.
DEVICE_ENGINES = ("emu", "file", "stripe", "nfs")
#: What the other engines measure, for the refusal.
_NOT_A_DEVICE = {
    "null": "the harness's own overhead",
    "mem": "memory bandwidth",
    "cpu": "CPU time per unit of data",
    "tcp": "a network link (calibrate_link fits it)",
    "meta": "file-system metadata operations",
    "mpilink": "links between MPI ranks",
}
#: Options that define the device measured: two traces with different values measured
#: different devices (the sweep's device is not the closed loop's). The service-time
#: distribution (``dev_dist``) is not one: the sweep measures the mean, whatever the law.
_DEVICE_OPTIONS = ("dev_latency_s", "dev_rate_B_s", "access", "dir", "raid", "members",
                   "member", "chunk_bytes")  # fmt: skip


def _direction(rw: Any) -> str | None:
    return None if not isinstance(rw, str) else ("write" if "write" in rw else "read")


def check_traces_fit(device_trace: Any, closed_trace: Any) -> None:
    """Refuse (or warn about) two traces that do not make a device calibration and its check.

    :func:`calibrate_and_compare` fits t = a + B/r to ``device_trace`` and compares the model
    with ``closed_trace``; that means something only when both measured one kind of device.

    Raises
    ------
    TraceError
        Naming the trace and why: an engine that measures no device (``mem``, ``cpu``,
        ``tcp``, ...); the two traces from different engines; a device trace without two
        request sizes at one client (no sweep to fit); a closed loop with several request
        sizes (a sweep given as the closed loop).

    Warns
    -----
    TraceMismatchWarning
        The traces' device options differ (emulated latency or rate, access mode, directory,
        RAID layout, reads against writes): the comparison is between two devices.
    """
    dev, e2e = _as_trace(device_trace), _as_trace(closed_trace)
    for t, role in ((dev, "DEVICE_TRACE (the request-size sweep)"),
                    (e2e, "CLOSED_TRACE (the closed loop)")):  # fmt: skip
        if t.engine in _NOT_A_DEVICE:
            raise TraceError(
                f"{t.source}: a qnbench `{t.engine}` trace measures {_NOT_A_DEVICE[t.engine]}, "
                f"not a device; {role} must be a run of a device engine "
                f"({', '.join(DEVICE_ENGINES)})"
            )
    if dev.engine in DEVICE_ENGINES and e2e.engine in DEVICE_ENGINES and dev.engine != e2e.engine:
        raise TraceError(
            f"{e2e.source}: a qnbench `{e2e.engine}` closed loop does not check a device "
            f"calibrated from {dev.source}, a `{dev.engine}` sweep: measure both with one engine"
        )
    ones = dev.points[dev.points["jobs"] == 1]
    sizes = sorted({float(b) for b in ones["bs_bytes"] if np.isfinite(b)})
    if len(sizes) < 2:
        raise TraceError(
            f"{dev.source}: DEVICE_TRACE must sweep request sizes at one client (e.g. "
            f"bs=4KiB,64KiB,1MiB jobs=1) to fit t = a + B/r; it has "
            f"{len(sizes)} size(s) at jobs = 1 (jobs {sorted(set(dev.points['jobs']))})"
            + (": is it the closed loop? give the size sweep first" if len(sizes) == 1 else "")
        )
    bs = sorted(set(e2e.points["bs_bytes"]))
    if len(bs) != 1:
        raise TraceError(
            f"{e2e.source}: CLOSED_TRACE must be a closed loop at one request size, got {bs}"
            + (": is it the size sweep? give it first" if len(bs) > 1 else "")
        )
    differ = [
        f"{k} {dev.options.get(k)!r} against {e2e.options.get(k)!r}"
        for k in _DEVICE_OPTIONS
        if k in dev.options and k in e2e.options and dev.options[k] != e2e.options[k]
    ]
    a, b = _direction(dev.options.get("rw")), _direction(e2e.options.get("rw"))
    if a and b and a != b:
        differ.insert(0, f"{a}s against {b}s")
    if differ:
        warnings.warn(
            f"{dev.source} and {e2e.source} measured different devices ({'; '.join(differ)}): "
            "the model calibrated from the first is compared with the second",
            TraceMismatchWarning,
            stacklevel=3,
        )


def _interval_text(trace: Trace) -> str:
    """The trace's sampling interval as text (``0.5 s``), from the trace itself."""
    dt = sample_interval(trace)
    return "per-interval" if not math.isfinite(dt) else format_quantity(dt, "time")


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
