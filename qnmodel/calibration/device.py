"""Affine cost fits: device positioning + transfer, link overhead + rate, CPU per unit/packet.

All fits here share one model shape, a fixed cost plus a cost proportional to
an amount:

* device (disk) service time per request, seed 002 eq. (10):
  ``t(B) = a + B / r`` with ``a`` the positioning time (seek + rotational
  latency, seconds) and ``r`` the sustained transfer rate (bytes/s);
* link/NIC time per message, seed 002 eqs. (7)-(9):
  ``t(S) = o + W(S) / rate`` with ``o`` the per-message overhead, ``W`` the
  bytes on the wire (``S`` itself, or ``ceil(S/MSS) * frame`` when MSS and
  frame size are given) and ``rate`` the link rate (bytes/s);
* CPU time per request, seed 002 eqs. (2) and (6):
  ``t = t_fixed + t_unit * S/STU`` (per stripe unit processed) and
  ``t = t_fixed + t_packet * ceil(S/MSS)`` (per IP packet).

Repeated abscissae are reduced to their **median** (``aggregate="median"``)
before fitting, which makes the fit robust to the long right tail of latency
distributions, and the default weights are **relative** (errors proportional
to the value): a 10 us error matters for a 50 us request, not for a 50 ms one.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._validate import as_choice, as_quantities, as_quantity
from ..errors import InvalidModelError, MeasurementArtefactWarning
from ..units import format_quantity
from .fit import CalibrationResult, fit_model
from .parameters import Parameter, Parameters

__all__ = [
    "fit_device",
    "fit_link",
    "fit_cpu_per_unit",
    "fit_cpu_per_packet",
    "aggregate_points",
]


def aggregate_points(x: np.ndarray, y: np.ndarray, how: str = "median"):
    """Reduce repeated abscissae: ``how="median"`` or ``"mean"`` per distinct x, or ``"none"``.

    Returns (x_sorted_unique, y_reduced, counts) or the sorted input with counts of 1.
    """
    as_choice(how, "aggregate", ("median", "mean", "none"))
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    if how == "none":
        return x, y, np.ones(x.size, dtype=np.int64)
    ux, idx, counts = np.unique(x, return_inverse=True, return_counts=True)
    fn = np.median if how == "median" else np.mean
    uy = np.array([fn(y[idx == i]) for i in range(ux.size)])
    return ux, uy, counts


def _prepare(xs, ys, xname, yname, xdim, aggregate, x_range):
    x = as_quantities(xs, xname, xdim)
    y = as_quantities(ys, yname, "time")
    if x.size != y.size:
        raise InvalidModelError(
            f"{xname} has {x.size} values but {yname} has {y.size}: give one {yname[:-1]} "
            f"per {xname[:-1]}"
        )
    if x_range is not None:
        lo = as_quantity(x_range[0], f"{xname}_range[0]", xdim)
        hi = as_quantity(x_range[1], f"{xname}_range[1]", xdim)
        if lo > hi:
            raise InvalidModelError(f"{xname}_range must be (low, high), got ({lo}, {hi})")
        keep = (x >= lo) & (x <= hi)
        x, y = x[keep], y[keep]
    x, y, counts = aggregate_points(x, y, aggregate)
    if np.unique(x).size < 2:
        raise InvalidModelError(
            f"{xname} must hold at least 2 distinct values to separate the fixed cost from the "
            f"proportional one, got {np.unique(x).tolist()}"
        )
    if np.any(y <= 0):
        i = int(np.flatnonzero(y <= 0)[0])
        raise InvalidModelError(f"{yname} must be > 0, got {y[i]!r} at {xname} = {x[i]!r}")
    return x, y, counts


def _initial_affine(x, y):
    """Least-squares line y = c0 + c1 x with relative weights: starting values."""
    A = np.column_stack([np.ones_like(x), x]) / y[:, None]
    c, *_ = np.linalg.lstsq(A, np.ones_like(y), rcond=None)
    return float(c[0]), float(c[1])


def _fit_rate_model(
    x,
    y,
    counts,
    *,
    fixed_name,
    rate_name,
    rate_unit,
    model,
    params,
    weights,
    ci_level,
    uncertainty,
    extra,
    notes,
    n_boot=200,
):
    c0, c1 = _initial_affine(x, y)
    notes = list(notes)
    if c1 <= 0:
        notes.append(
            f"the times do not grow with size (slope {c1:.3g} s/B): the rate is poorly "
            "determined; check that the size range spans several multiples of the "
            "fixed cost times the rate"
        )
        c1 = max(np.ptp(y), 1e-12 * y.max()) / max(np.ptp(x), 1.0)
    a0 = min(max(c0, 0.0), float(y.min()))
    base = Parameters(
        [
            Parameter(fixed_name, a0, min=0.0, unit="s"),
            Parameter(rate_name, 1.0 / c1, min=1e-300, unit=rate_unit),
        ]
    ).updated(params)

    def func(xx, **v):
        return v[fixed_name] + xx / v[rate_name]

    return fit_model(
        func,
        base,
        x,
        y,
        weights=weights,
        ci_level=ci_level,
        uncertainty=uncertainty,
        n_boot=n_boot,
        model=model,
        extra={**extra, "points_per_x": counts.tolist() if counts.max() > 1 else 1},
        notes=tuple(notes),
    )


def fit_device(
    sizes: Any,
    times: Any,
    *,
    params: Any = None,
    size_range: tuple[Any, Any] | None = None,
    aggregate: str = "median",
    weights: str | Any = "relative",
    seek_floor: float | str | None = "1 ms",
    ci_level: float = 0.95,
    uncertainty: str = "auto",
    n_boot: int = 200,
) -> CalibrationResult:
    """Fit a device's positioning time and transfer rate, ``t = a + B / r``.

    Parameters
    ----------
    sizes : array_like
        Request sizes B in bytes (numbers or strings like ``"64 KiB"``), one per
        latency observation; repeated sizes are allowed.
    times : array_like
        Request service times (latencies at queue depth 1) in seconds, same length.
    params : dict or Parameters, optional
        Overrides of the starting values/bounds of ``a`` (s, min 0) and
        ``r`` (bytes/s, > 0), e.g. ``{"a": {"vary": False, "value": 0.0}}``.
    size_range : (low, high), optional
        Only sizes in [low, high] are used; the range actually used is
        reported in ``extra["size_range"]``.
    aggregate : {"median", "mean", "none"}
        Reduce repeated sizes to their median latency (default) before fitting.
    weights : {"relative", "absolute"} or array_like
        See :func:`qnmodel.calibration.fit.fit_model`; relative by default.
    seek_floor : float, str or None
        Warn (``MeasurementArtefactWarning``) when the fitted ``a`` is below
        this (default 1 ms): too small for a mechanical seek plus rotation, so
        the device is solid-state, cached or emulated and ``a`` must not be read
        as seek + latency. ``None`` disables the check.
    ci_level, uncertainty, n_boot
        See :func:`~qnmodel.calibration.fit.fit_model`.

    Returns
    -------
    CalibrationResult
        ``values["a"]`` (s) and ``values["r"]`` (bytes/s); ``extra["size_range"]``
        (bytes) and ``extra["transfer_share"]``, the share of the service time
        spent transferring at the largest size.

    Notes
    -----
    Seed 002 eq. (10) writes the disk demand per stripe unit as
    ``seek + latency + STU/TRate_d``; ``a`` estimates ``seek + latency``.
    The two terms separate only when the sizes span the crossover
    ``B* = a r`` where transfer equals positioning: sizes well below and well
    above ``B*`` are needed (a note is added when they are not).
    """
    x, y, counts = _prepare(sizes, times, "sizes", "times", "size", aggregate, size_range)
    floor = None if seek_floor is None else as_quantity(seek_floor, "seek_floor", "time")
    lo, hi = float(x.min()), float(x.max())
    notes = []
    if hi / max(lo, 1.0) < 4:
        notes.append(
            f"the sizes span only {format_quantity(lo, 'size')}..{format_quantity(hi, 'size')} "
            "(a factor < 4): positioning and transfer are poorly separated"
        )
    res = _fit_rate_model(
        x,
        y,
        counts,
        fixed_name="a",
        rate_name="r",
        rate_unit="B/s",
        model="device t = a + B/r",
        params=params,
        weights=weights,
        ci_level=ci_level,
        uncertainty=uncertainty,
        extra={
            "size_range": (lo, hi),
            "size_range_text": f"{format_quantity(lo, 'size')} .. {format_quantity(hi, 'size')}",
            "distinct_sizes": int(x.size),
        },
        notes=notes,
        n_boot=n_boot,
    )
    a, r = res.values["a"], res.values["r"]
    new_notes = []
    if a * r > hi:
        new_notes.append(
            f"all sizes lie below the crossover a*r = {format_quantity(a * r, 'size')} where "
            "transfer equals positioning: r is extrapolated; add larger sizes"
        )
    elif a * r < lo and a > 0:
        new_notes.append(
            f"all sizes lie above the crossover a*r = {format_quantity(a * r, 'size')}: a is "
            "extrapolated; add smaller sizes"
        )
    if floor is not None and a < floor:
        new_notes.append(
            f"a = {format_quantity(a, 'time')} is below {format_quantity(floor, 'time')}, too "
            "small for a mechanical seek plus rotation: the device is solid-state, cached or "
            "emulated; do not read a as seek + rotational latency"
        )
    for msg in new_notes:
        warnings.warn(f"fit_device: {msg}", MeasurementArtefactWarning, stacklevel=2)
    for msg in notes:
        warnings.warn(f"fit_device: {msg}", MeasurementArtefactWarning, stacklevel=2)
    return res.with_notes(
        *new_notes,
        crossover_size=a * r,
        transfer_share=(hi / r) / (a + hi / r) if (a + hi / r) > 0 else math.nan,
    )


def fit_link(
    sizes: Any,
    times: Any,
    *,
    mss: float | str | None = None,
    frame: float | str | None = None,
    params: Any = None,
    aggregate: str = "median",
    weights: str | Any = "relative",
    ci_level: float = 0.95,
    uncertainty: str = "auto",
) -> CalibrationResult:
    """Fit a link/NIC's per-message overhead and rate, ``t = overhead + W(S) / rate``.

    Parameters
    ----------
    sizes : array_like
        Message (request) payload sizes S in bytes.
    times : array_like
        One-way transfer time per message in seconds (e.g. half a TCP
        request/response round trip, or payload / measured throughput), same length.
    mss, frame : float or str, optional
        When both are given the bytes on the wire are
        ``W = ceil(S / mss) * frame`` (seed 002 eqs. (3), (7): IP packets times
        the Ethernet frame size, e.g. ``mss=1460, frame=1518``); otherwise W = S.
    params : dict or Parameters, optional
        Overrides for ``overhead`` (s, min 0) and ``rate`` (bytes/s, > 0).
    aggregate, weights, ci_level, uncertainty
        As in :func:`fit_device`.

    Returns
    -------
    CalibrationResult
        ``values["overhead"]`` (s per message), ``values["rate"]`` (bytes/s on
        the wire).
    """
    if (mss is None) != (frame is None):
        raise InvalidModelError("give both mss and frame (wire-byte model) or neither")
    x, y, counts = _prepare(sizes, times, "sizes", "times", "size", aggregate, None)
    extra: dict[str, Any] = {
        "size_range": (float(x.min()), float(x.max())),
    }
    if mss is not None:
        m = as_quantity(mss, "mss", "size", positive=True)
        f = as_quantity(frame, "frame", "size", positive=True)
        w = np.ceil(x / m) * f
        extra["wire_model"] = f"W = ceil(S / {m:g} B) * {f:g} B"
        if np.unique(w).size < 2:
            raise InvalidModelError(
                "all sizes fit in the same number of packets: give sizes spanning several MSS"
            )
    else:
        w = x
        extra["wire_model"] = "W = S (payload bytes)"
    return _fit_rate_model(
        w,
        y,
        counts,
        fixed_name="overhead",
        rate_name="rate",
        rate_unit="B/s",
        model="link t = overhead + W/rate",
        params=params,
        weights=weights,
        ci_level=ci_level,
        uncertainty=uncertainty,
        extra=extra,
        notes=(),
    )


def _fit_cpu(
    x, y, counts, per_name, per_what, params, intercept, weights, ci_level, uncertainty, extra
):
    c0, c1 = _initial_affine(x, y)
    base = Parameters(
        [
            Parameter("t_fixed", min(max(c0, 0.0), float(y.min())), min=0.0, unit="s"),
            Parameter(per_name, max(c1, 1e-15), min=0.0, unit="s"),
        ]
    )
    if not intercept:
        base = base.updated({"t_fixed": {"value": 0.0, "vary": False}})
    base = base.updated(params)

    def func(xx, **v):
        return v["t_fixed"] + v[per_name] * xx

    return fit_model(
        func,
        base,
        x,
        y,
        weights=weights,
        ci_level=ci_level,
        uncertainty=uncertainty,
        model=f"cpu t = t_fixed + {per_name} * {per_what}",
        extra=extra,
    )


def fit_cpu_per_unit(
    sizes: Any,
    cpu_times: Any,
    *,
    unit: float | str = "16 KiB",
    intercept: bool = True,
    params: Any = None,
    aggregate: str = "median",
    weights: str | Any = "relative",
    ci_level: float = 0.95,
    uncertainty: str = "auto",
) -> CalibrationResult:
    """Fit the CPU time per processed unit (stripe unit), ``t = t_fixed + t_unit * S/unit``.

    Parameters
    ----------
    sizes : array_like
        Bytes processed per request S (e.g. qnbench ``cpu`` engine block sizes).
    cpu_times : array_like
        CPU seconds (user + system) per request, same length: for qnbench,
        ``(cpu.user_s + cpu.sys_s) / ops`` of each point.
    unit : float or str
        The processing unit STU in bytes (seed 002: the stripe unit, 16 KB).
    intercept : bool
        Fit a fixed per-request cost ``t_fixed`` (default) or force it to 0.

    Returns
    -------
    CalibrationResult
        ``values["t_unit"]`` (s per unit: T_mpro / T_snpro of seed 002 eqs. (2), (6))
        and ``values["t_fixed"]`` (s per request).
    """
    stu = as_quantity(unit, "unit", "size", positive=True)
    x, y, counts = _prepare(sizes, cpu_times, "sizes", "cpu_times", "size", aggregate, None)
    return _fit_cpu(
        x / stu,
        y,
        counts,
        "t_unit",
        f"S/{format_quantity(stu, 'size')}",
        params,
        intercept,
        weights,
        ci_level,
        uncertainty,
        {"unit_bytes": stu, "size_range": (float(x.min()), float(x.max()))},
    )


def fit_cpu_per_packet(
    sizes: Any,
    cpu_times: Any,
    *,
    mss: float | str = 1460,
    intercept: bool = True,
    params: Any = None,
    aggregate: str = "median",
    weights: str | Any = "relative",
    ci_level: float = 0.95,
    uncertainty: str = "auto",
) -> CalibrationResult:
    """Fit the protocol CPU time per IP packet, ``t = t_fixed + t_packet * ceil(S/MSS)``.

    Parameters
    ----------
    sizes : array_like
        Message sizes S in bytes (e.g. qnbench ``tcp`` engine block sizes).
    cpu_times : array_like
        CPU seconds per message (user + system), same length.
    mss : float or str
        TCP maximum segment size in bytes (seed 002: 1460).

    Returns
    -------
    CalibrationResult
        ``values["t_packet"]`` (s per packet: T_mp / T_snp of seed 002 eqs.
        (2), (6)) and ``values["t_fixed"]`` (s per message).
    """
    m = as_quantity(mss, "mss", "size", positive=True)
    x, y, counts = _prepare(sizes, cpu_times, "sizes", "cpu_times", "size", aggregate, None)
    packets = np.ceil(x / m)
    if np.unique(packets).size < 2:
        raise InvalidModelError(
            "all sizes fit in the same number of packets: give sizes spanning several MSS"
        )
    return _fit_cpu(
        packets,
        y,
        counts,
        "t_packet",
        f"ceil(S/{m:g} B)",
        params,
        intercept,
        weights,
        ci_level,
        uncertainty,
        {"mss_bytes": m, "size_range": (float(x.min()), float(x.max()))},
    )
