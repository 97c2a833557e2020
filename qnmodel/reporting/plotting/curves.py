"""Curves against the population: bounds bands, exact MVA, measured points, utilisation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...errors import InvalidModelError, InvalidTypeError
from ...model import Network
from ...results.closed import BoundsResult, MVAResult
from ...solvers import bounds as _bounds
from ...solvers import mva as _mva
from ._points import draw_measured, include, place_legends
from ._style import (
    _MEASURED_STYLE,
    _MVA_STYLE,
    _OUTSIDE_LEGEND,
    _POPULATION_DECADES,
    _TIME_UNITS,
    BAND_STYLE,
    _apply_log,
    _new_axes,
    time_scale,
)

__all__ = ["bounds_band", "bounds_vs_measured", "utilization"]


def _check_quantity(quantity: str) -> None:
    if quantity not in ("throughput", "response_time"):
        raise InvalidModelError(
            f"quantity must be 'throughput' or 'response_time', got {quantity!r}"
        )


def bounds_band(
    bounds_results: BoundsResult | Sequence[BoundsResult],
    *,
    quantity: str = "throughput",
    mva: MVAResult | None = None,
    ax: Any = None,
    time_unit: tuple[float, str] | None = None,
    logx: bool | str = "auto",
) -> Any:
    """Shade the band between lower and upper bounds, with the exact MVA curve inside.

    Parameters
    ----------
    bounds_results : BoundsResult or sequence of BoundsResult
        From :func:`qnmodel.bounds`; each is drawn as one band (ABA, BJB).
    quantity : {"throughput", "response_time"}
        X(n) in jobs/s, or R(n) in ms/s.
    mva : MVAResult, optional
        Exact mean values drawn as a black line.
    ax : matplotlib Axes, optional
        Where to draw; new Axes when omitted.
    time_unit : (factor, unit), optional
        Scale for response times, e.g. ``(1e3, "ms")``; chosen from the data
        when omitted (see :func:`time_scale`).
    logx : bool or "auto"
        Logarithmic population axis; "auto" when n spans three decades.

    Returns
    -------
    matplotlib Axes
    """
    _check_quantity(quantity)
    if isinstance(bounds_results, BoundsResult):
        bounds_results = [bounds_results]
    for b in bounds_results:
        if not isinstance(b, BoundsResult):
            raise InvalidTypeError(
                f"bounds_results must hold BoundsResult objects, got {type(b).__name__}"
            )
    if mva is not None and not isinstance(mva, MVAResult):
        raise InvalidTypeError(f"mva must be an MVAResult, got {type(mva).__name__}")
    if ax is None:
        ax = _new_axes()
    if quantity == "response_time":
        every = [b.response_time_upper for b in bounds_results]
        if mva is not None:
            every.append(mva.response_time)
        factor, unit = time_unit or time_scale(np.concatenate([np.ravel(e) for e in every]))
        ylabel = f"response time R(n) [{unit}]"
    else:
        factor, ylabel = 1.0, "throughput X(n) [jobs/s]"
    ns = []
    for b in bounds_results:
        lo = getattr(b, f"{quantity}_lower") * factor
        hi = getattr(b, f"{quantity}_upper") * factor
        style = BAND_STYLE.get(b.method, {"color": "tab:gray", "alpha": 0.25, "label": b.method})
        ax.fill_between(
            b.n, lo, hi, color=style["color"], alpha=style["alpha"], label=style["label"], lw=0
        )
        ax.plot(b.n, lo, color=style["color"], lw=0.8)
        ax.plot(b.n, hi, color=style["color"], lw=0.8)
        ns.append(b.n)
    if mva is not None:
        ax.plot(mva.n, getattr(mva, quantity) * factor, **_MVA_STYLE)
        ns.append(mva.n)
    ax.set_xlabel("population n [jobs]")
    ax.set_ylabel(ylabel)
    if ns:
        allx = np.concatenate(ns)
        _apply_log(ax, "x", logx, allx, _POPULATION_DECADES)
        ax.set_xlim(float(allx.min()), float(allx.max()))
    ax.set_ylim(bottom=0.0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    return ax


def _measured_columns(measured: Any) -> dict[str, np.ndarray]:
    if hasattr(measured, "to_dict") and hasattr(measured, "columns"):
        cols = {
            c: np.asarray(measured[c], dtype=np.float64)
            for c in measured.columns
            if c
            in (
                "n",
                "throughput",
                "response_time",
                "throughput_halfwidth",
                "response_time_halfwidth",
            )
        }
    elif isinstance(measured, Mapping):
        cols = {k: np.asarray(v, dtype=np.float64) for k, v in measured.items()}
    else:
        raise InvalidTypeError(
            "measured must be a DataFrame or a mapping with columns n, throughput, "
            f"response_time (optionally throughput_halfwidth, response_time_halfwidth), got "
            f"{type(measured).__name__}"
        )
    if "n" not in cols:
        raise InvalidModelError("measured has no 'n' column (the population of each point)")
    if not ({"throughput", "response_time"} & set(cols)):
        raise InvalidModelError("measured needs a 'throughput' or a 'response_time' column")
    for k, v in cols.items():
        if v.shape != cols["n"].shape:
            raise InvalidModelError(
                f"measured column {k!r} has {v.size} values but 'n' has {cols['n'].size}"
            )
    return cols


def bounds_vs_measured(
    net: Network,
    N: int,
    measured: Any = None,
    *,
    methods: Sequence[str] = ("aba", "bjb"),
    exact: bool = True,
    axes: Any = None,
    logx: bool | str = "auto",
    time_unit: str | None = None,
    title: str | None = None,
) -> Any:
    """Throughput and response time side by side: bounds bands, exact MVA, measurements.

    Parameters
    ----------
    net : Network
        The model.
    N : int
        Largest population drawn (>= 1).
    measured : DataFrame or mapping, optional
        Measured points: columns ``n``, ``throughput`` (jobs/s) and/or
        ``response_time`` (seconds), and optionally ``throughput_halfwidth`` and
        ``response_time_halfwidth`` (half-widths of the error bars, same units), as
        produced by a closed-loop qnbench run. The axes always show every point
        and both ends of its error bar, and the legends cover none of them
        (:mod:`qnmodel.reporting.plotting._points`).
    methods : sequence of {"aba", "bjb"}
        Bounds to shade. BJB is skipped for networks with multi-server stations.
    exact : bool
        Draw the exact MVA curve.
    axes : pair of Axes, optional
        Where to draw (throughput, response time); a new 1x2 figure when omitted.
    logx : bool or "auto"
        Logarithmic population axis; "auto" from three decades (n = 1..1000) on.
    time_unit : {"s", "ms", "us"}, optional
        Unit of the response-time axis; chosen from the data when omitted.
    title : str, optional
        Figure title; by default names the bottleneck and N*.

    Returns
    -------
    ndarray of 2 Axes
        ``[throughput_axes, response_time_axes]``.
    """
    if not isinstance(net, Network):
        raise InvalidTypeError(f"net must be a Network, got {type(net).__name__}")
    results = []
    for m in methods:
        if m == "bjb" and (net.has_multiserver or net.is_load_dependent.any()):
            continue
        results.append(_bounds(net, N, method=m))
    if not results:
        results.append(_bounds(net, N, method="aba"))
    mres = _mva(net, N) if exact else None
    cols = _measured_columns(measured) if measured is not None else None
    if axes is None:
        axes = _new_axes(2, figsize=(10.0, 4.0))
    axes = np.asarray(axes, dtype=object).ravel()
    if axes.size != 2:
        raise InvalidModelError(
            f"axes must be two Axes (throughput, response time), got {axes.size}"
        )
    r_all = [results[0].response_time_upper]
    if cols is not None and "response_time" in cols:
        r_all.append(cols["response_time"])
    if time_unit is None:
        factor, unit = time_scale(np.concatenate(r_all))
    elif time_unit in _TIME_UNITS:
        factor, unit = _TIME_UNITS[time_unit], time_unit
    else:
        raise InvalidModelError(
            f"time_unit must be one of {list(_TIME_UNITS)} or None, got {time_unit!r}"
        )
    placements = []
    for ax, q in zip(axes, ("throughput", "response_time"), strict=True):
        bounds_band(results, quantity=q, mva=mres, ax=ax, time_unit=(factor, unit), logx=logx)
        points = []
        if cols is not None and q in cols:
            scale = factor if q == "response_time" else 1.0
            err = cols.get(f"{q}_halfwidth")
            # every point and error bar in view, whatever range the model needed
            points.append(
                draw_measured(
                    ax,
                    cols["n"],
                    cols[q] * scale,
                    None if err is None else err * scale,
                    **_MEASURED_STYLE,
                )
            )
        placements.append((ax, points))
    b = results[0]
    fig = axes[0].figure
    fig.suptitle(
        title
        if title is not None
        else f"bottleneck {b.bottleneck}, N* = {b.n_star:.3g}, "
        f"X_max = {b.saturation_throughput:.4g} jobs/s"
    )
    place_legends(placements)  # last: the title and the limits are final
    return axes


def utilization(
    result: MVAResult,
    *,
    network: Network | None = None,
    ax: Any = None,
    n_star: float | None = None,
    logx: bool | str = "auto",
) -> Any:
    """Utilisation of every queueing station against the population, bottleneck marked.

    Parameters
    ----------
    result : MVAResult
        From :func:`qnmodel.mva`.
    network : Network, optional
        The network solved. When given, its delay stations are left out: their
        "utilisation" X D_k is a mean number of busy servers, not a fraction
        <= 1, and they can never be the bottleneck. Without it every station
        is drawn and the bottleneck is the one with the highest utilisation.
    ax : Axes, optional
    n_star : float, optional
        Draw the knee N* (e.g. ``qn.bounds(net, N).n_star``) as a dotted line; the
        population axis reaches it when it lies beyond the largest n solved.
    logx : bool or "auto"

    Returns
    -------
    Axes
        One line per station labelled with its name; the bottleneck's line
        (highest utilisation at the largest n among the drawn stations) is
        thick and its label ends in ``"(bottleneck)"``.
    """
    if not isinstance(result, MVAResult):
        raise InvalidTypeError(f"result must be an MVAResult, got {type(result).__name__}")
    names = list(result.station_names)
    if network is not None:
        if not isinstance(network, Network):
            raise InvalidTypeError(f"network must be a Network, got {type(network).__name__}")
        if list(network.names) != names:
            raise InvalidModelError(
                f"network stations {list(network.names)} differ from the result's {names}"
            )
        keep = [k for k in range(len(names)) if not network.is_delay[k]]
    else:
        keep = list(range(len(names)))
    if not keep:
        raise InvalidModelError("the network has only delay stations: nothing queues")
    if ax is None:
        ax = _new_axes()
    last = result.utilization[-1]
    bottleneck = names[max(keep, key=lambda k: last[k])]
    for k in keep:
        name = names[k]
        is_bn = name == bottleneck
        ax.plot(
            result.n,
            result.utilization[:, k],
            lw=2.6 if is_bn else 1.2,
            label=f"{name} (bottleneck)" if is_bn else name,
        )
    ax.axhline(1.0, color="gray", lw=0.8, ls="--")
    if n_star is not None and np.isfinite(n_star):
        ax.axvline(n_star, color="gray", lw=0.8, ls=":", label=f"N* = {n_star:.3g}")
    ax.set_xlabel("population n [jobs]")
    ax.set_ylabel("utilisation U_k(n) [per server]")
    ax.set_ylim(0.0, 1.05)
    _apply_log(ax, "x", logx, result.n, _POPULATION_DECADES)
    ax.set_xlim(float(result.n.min()), float(result.n.max()))
    if n_star is not None and np.isfinite(n_star):
        include(ax, "x", [n_star])  # the knee drawn is a knee seen, also beyond the largest n
    ax.set_title(f"utilisation per station; bottleneck: {bottleneck}")
    ax.grid(True, alpha=0.3)
    # Beside the axes: the curves fill the whole plot area (a saturating bottleneck
    # at the top, idle stations at the bottom), so no corner inside is free.
    ax.legend(**_OUTSIDE_LEGEND)
    return ax
