"""Plots of bounds, mean values, measurements and what-if studies.

Every function draws on the Axes it is given (or on new ones), returns the
Axes and never calls ``plt.show()``: the caller decides whether to show,
save or embed. matplotlib is imported only when a function is called.

Conventions
-----------
* Throughput is drawn in jobs/s; times in ms, or s when they reach seconds.
* A bounds band is a shaded region between the lower and the upper bound;
  ABA (asymptotic) is lighter and wider, BJB (balanced job) darker and
  narrower, and the exact MVA curve runs inside both.
* An axis turns logarithmic by itself when its positive data span at least
  two decades (``log="auto"``); pass ``True`` or ``False`` to decide.

Example
-------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import qnmodel as qn
>>> from qnmodel import plotting
>>> net = qn.Network.from_demands(["5 ms", "8 ms", "2 ms"], think_time="100 ms")
>>> axes = plotting.bounds_vs_measured(net, 30)
>>> [ax.get_ylabel() for ax in axes]
['throughput X(n) [jobs/s]', 'response time R(n) [ms]']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import InvalidModelError, InvalidTypeError
from .network import Network
from .results import BoundsResult, MVAResult
from .solvers import bounds as _bounds
from .solvers import mva as _mva

__all__ = [
    "bounds_band",
    "bounds_vs_measured",
    "utilization",
    "sensitivity",
    "heatmap",
    "bottleneck_map",
    "time_scale",
    "BAND_STYLE",
]

#: Fill colour and opacity of each bounds method's band.
BAND_STYLE = {
    "aba": {"color": "tab:blue", "alpha": 0.15, "label": "ABA bounds"},
    "bjb": {"color": "tab:orange", "alpha": 0.35, "label": "BJB bounds"},
}
#: A population axis turns logarithmic from 1..1000 on (n = 1..200 stays linear).
_POPULATION_DECADES = 3.0
_TIME_UNITS = {"s": 1.0, "ms": 1e3, "us": 1e6}
_MVA_STYLE = {"color": "black", "lw": 1.8, "label": "exact MVA"}
#: A legend to the right of the Axes (a constrained-layout figure makes room for it).
_OUTSIDE_LEGEND = {
    "loc": "upper left",
    "bbox_to_anchor": (1.02, 1.0),
    "borderaxespad": 0.0,
    "fontsize": "small",
}
_MEASURED_STYLE = {
    "color": "tab:red",
    "fmt": "o",
    "ms": 4,
    "capsize": 3,
    "label": "measured",
    "clip_on": False,  # points at the first and last population stay whole
}


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - matplotlib is in the plot extra
        raise ImportError("qnmodel.plotting needs matplotlib: pip install 'qnmodel[plot]'") from exc
    return plt


def _new_axes(ncols: int = 1, figsize: tuple[float, float] | None = None):
    plt = _pyplot()
    fig, axes = plt.subplots(1, ncols, figsize=figsize or (5.0 * ncols, 3.8), squeeze=False)
    fig.set_layout_engine("constrained")
    return axes[0] if ncols > 1 else axes[0, 0]


def time_scale(values: Any) -> tuple[float, str]:
    """The factor and unit to draw times (seconds) with: ``(1e3, "ms")`` below one second.

    >>> time_scale([0.002, 0.5])
    (1000.0, 'ms')
    >>> time_scale([0.2, 3.0])
    (1.0, 's')
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    top = float(np.max(np.abs(v))) if v.size else 0.0
    if top >= 1.0:
        return 1.0, "s"
    if top >= 1e-3 or top == 0.0:
        return 1e3, "ms"
    return 1e6, "us"


def _spans_decades(values: Any, decades: float = 2.0) -> bool:
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v) & (v > 0)]
    if v.size < 2:
        return False
    return bool(np.log10(v.max() / v.min()) >= decades)


def _resolve_log(axis: str, log: bool | str, values: Any, decades: float = 2.0) -> bool:
    if log == "auto":
        return _spans_decades(values, decades)
    if not isinstance(log, bool):
        raise InvalidModelError(f"log{axis} must be True, False or 'auto', got {log!r}")
    return log


def _apply_log(ax, axis: str, log: bool | str, values: Any, decades: float = 2.0) -> bool:
    log = _resolve_log(axis, log, values, decades)
    if log:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    return log


def _cell_edges(centres: np.ndarray, log: bool) -> np.ndarray:
    """Edges of grid cells around sorted centres: midway between neighbours, on the axis'
    own scale (geometric means on a log axis), so every cell is drawn the width it owns.
    """
    c = np.log10(centres) if log else np.asarray(centres, dtype=np.float64)
    if c.size == 1:
        half = 0.5 if (log or c[0] == 0.0) else 0.5 * abs(c[0])
        e = np.array([c[0] - half, c[0] + half])
    else:
        mid = 0.5 * (c[:-1] + c[1:])
        e = np.concatenate([[c[0] - (mid[0] - c[0])], mid, [c[-1] + (c[-1] - mid[-1])]])
    return 10.0**e if log else e


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
            if c in ("n", "throughput", "response_time", "throughput_err", "response_time_err")
        }
    elif isinstance(measured, Mapping):
        cols = {k: np.asarray(v, dtype=np.float64) for k, v in measured.items()}
    else:
        raise InvalidTypeError(
            "measured must be a DataFrame or a mapping with columns n, throughput, "
            f"response_time (optionally throughput_err, response_time_err), got "
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
        ``response_time`` (seconds), and optionally ``throughput_err`` and
        ``response_time_err`` (half-widths of the error bars, same units), as
        produced by a closed-loop qnbench run.
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
        if m == "bjb" and net.has_multiserver:
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
    for ax, q in zip(axes, ("throughput", "response_time"), strict=True):
        bounds_band(results, quantity=q, mva=mres, ax=ax, time_unit=(factor, unit), logx=logx)
        if cols is not None and q in cols:
            scale = factor if q == "response_time" else 1.0
            err = cols.get(f"{q}_err")
            ax.errorbar(
                cols["n"],
                cols[q] * scale,
                yerr=None if err is None else err * scale,
                **_MEASURED_STYLE,
            )
            lo, hi = ax.get_xlim()
            ax.set_xlim(min(lo, float(cols["n"].min())), max(hi, float(cols["n"].max())))
            ax.legend(loc="best", fontsize="small")
    b = results[0]
    fig = axes[0].figure
    fig.suptitle(
        title
        if title is not None
        else f"bottleneck {b.bottleneck}, N* = {b.n_star:.3g}, "
        f"X_max = {b.saturation_throughput:.4g} jobs/s"
    )
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
        Draw the knee N* (e.g. ``qn.bounds(net, N).n_star``) as a dotted line.
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
    ax.set_title(f"utilisation per station; bottleneck: {bottleneck}")
    ax.grid(True, alpha=0.3)
    # Beside the axes: the curves fill the whole plot area (a saturating bottleneck
    # at the top, idle stations at the bottom), so no corner inside is free.
    ax.legend(**_OUTSIDE_LEGEND)
    return ax


def _frame_column(frame: Any, name: str, what: str) -> np.ndarray:
    try:
        cols = list(frame.columns)
    except AttributeError:
        raise InvalidTypeError(
            f"frame must be a pandas DataFrame (e.g. from a what-if sweep), got "
            f"{type(frame).__name__}"
        ) from None
    if name not in cols:
        raise InvalidModelError(f"{what} column {name!r} is not in the frame; columns are {cols}")
    return np.asarray(frame[name])


_SCALED_TIME_UNITS = {1.0: "s", 1e3: "ms", 1e6: "us"}
_PARAMETER_UNITS = {"size": "B", "rate": "B/s", "time": "s"}


def _default_label(column: str, scale: float = 1.0) -> str:
    """A column name with its unit, for the columns whose unit is known.

    What-if frames hold SI values: a networked-RAID parameter carries the unit of
    its dimension (``link_rate [B/s]``), a response or think time seconds (or ms,
    us after ``scale`` 1e3, 1e6), a throughput jobs/s. Other columns keep their name.
    """
    from .models.storage import PARAMETERS

    name = str(column)
    unit = None
    if name in PARAMETERS:
        unit = _PARAMETER_UNITS.get(PARAMETERS[name][1]) if scale == 1.0 else None
    elif "response_time" in name or "think_time" in name or name.endswith("_s"):
        unit = _SCALED_TIME_UNITS.get(float(scale))
    elif "throughput" in name and scale == 1.0:
        unit = "jobs/s"
    return f"{name} [{unit}]" if unit else name


def sensitivity(
    frame: Any,
    x: str,
    y: str,
    *,
    hue: str | None = None,
    ax: Any = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    logx: bool | str = "auto",
    logy: bool | str = "auto",
    yscale: float = 1.0,
) -> Any:
    """Curves of one output against one parameter, one curve per value of ``hue``.

    Parameters
    ----------
    frame : DataFrame
        Tidy what-if results, one row per grid point.
    x, y : str
        Columns for the horizontal and vertical axes.
    hue : str, optional
        Column whose distinct values give one curve each (legend titled by it).
    ax : Axes, optional
    xlabel, ylabel : str, optional
        Axis labels with units; default to the column names, with the unit
        when it is known (a networked-RAID parameter, a time, a throughput).
    logx, logy : bool or "auto"
        Logarithmic axes; "auto" when the data span two decades.
    yscale : float
        Multiply y by this before drawing (e.g. 1e3 to draw seconds as ms).

    Returns
    -------
    Axes
    """
    xs = _frame_column(frame, x, "x")
    ys = _frame_column(frame, y, "y").astype(np.float64) * yscale
    if ax is None:
        ax = _new_axes()
    if hue is None:
        order = np.argsort(xs, kind="stable")
        ax.plot(xs[order], ys[order], marker="o", ms=3)
    else:
        hs = _frame_column(frame, hue, "hue")
        for h in dict.fromkeys(hs.tolist()):
            sel = hs == h
            order = np.argsort(xs[sel], kind="stable")
            ax.plot(
                xs[sel][order],
                ys[sel][order],
                marker="o",
                ms=3,
                label=f"{h:g}" if isinstance(h, float) else str(h),
            )
        ax.legend(title=hue, fontsize="small")
    ax.set_xlabel(xlabel or _default_label(x))
    ax.set_ylabel(ylabel or _default_label(y, yscale))
    _apply_log(ax, "x", logx, xs)
    _apply_log(ax, "y", logy, ys)
    ax.grid(True, alpha=0.3)
    return ax


def heatmap(
    frame: Any,
    x: str,
    y: str,
    value: str,
    *,
    ax: Any = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    label: str | None = None,
    scale: float = 1.0,
    contour: float | None = None,
    logx: bool | str = "auto",
    logy: bool | str = "auto",
    cmap: str = "viridis",
    annotate: bool | str = False,
) -> Any:
    """A what-if grid as a colour map of ``value`` over ``x`` and ``y``.

    Parameters
    ----------
    frame : DataFrame
        Tidy results with exactly one row per (x, y) pair.
    x, y, value : str
        Column names.
    ax : Axes, optional
    xlabel, ylabel, label : str, optional
        Axis and colour-bar labels with units; default to the column names, with
        the unit when it is known (see :func:`sensitivity`).
    scale : float
        Multiply ``value`` by this before drawing (1e3: seconds to ms).
    contour : float, optional
        Draw the iso-line ``value * scale == contour`` (e.g. an SLA of 50 ms),
        labelled with its level, and mark the level on the colour bar.
    logx, logy : bool or "auto"
    cmap : str
    annotate : bool or str
        Write each cell's value (after ``scale``) in the cell: ``True`` for
        three significant digits, or a format string such as ``"{:.0f}"``. The
        text is white on dark cells and black on light ones.

    Returns
    -------
    Axes
        The colour bar is attached to the same figure.
    """
    xs = _frame_column(frame, x, "x").astype(np.float64)
    ys = _frame_column(frame, y, "y").astype(np.float64)
    vs = _frame_column(frame, value, "value").astype(np.float64) * scale
    ux, uy = np.unique(xs), np.unique(ys)
    if ux.size * uy.size != xs.size:
        raise InvalidModelError(
            f"heatmap needs one row per ({x}, {y}) pair: {xs.size} rows for "
            f"{ux.size} x {uy.size} distinct values"
        )
    grid = np.full((uy.size, ux.size), np.nan)
    grid[np.searchsorted(uy, ys), np.searchsorted(ux, xs)] = vs
    if np.isnan(grid).any():
        raise InvalidModelError(f"heatmap: some ({x}, {y}) pairs are repeated or missing")
    lx, ly = _grid_log_axes(ux, uy, logx, logy)
    if ax is None:
        ax = _new_axes()
    mesh = ax.pcolormesh(_cell_edges(ux, lx), _cell_edges(uy, ly), grid, shading="flat", cmap=cmap)
    cbar = ax.figure.colorbar(mesh, ax=ax)
    cbar.set_label(label or _default_label(value, scale))
    if contour is not None and ux.size > 1 and uy.size > 1:
        if np.nanmin(grid) <= contour <= np.nanmax(grid):
            # Cell labels would collide with an in-plot level label: then the colour
            # bar alone carries the level (it is marked there in any case).
            _iso_line(ax, ux, uy, grid, float(contour), lx, ly, label=annotate is False)
            cbar.ax.axhline(float(contour), color="white", lw=2)
    if annotate is not False:
        _annotate_cells(ax, mesh, ux, uy, grid, annotate)
    ax.set_xlabel(xlabel or _default_label(x))
    ax.set_ylabel(ylabel or _default_label(y))
    _apply_log(ax, "x", lx, ux)
    _apply_log(ax, "y", ly, uy)
    return ax


def _iso_line(ax, ux, uy, grid, level: float, lx: bool, ly: bool, label: bool = True) -> None:
    """The iso-line ``grid == level``, interpolated on the axes' own scales.

    On a log axis the interpolation runs in log10 of the coordinate, as the eye
    reads the axis (matplotlib's contour interpolates linearly in data units,
    which puts the line in the wrong place between cells a decade apart).
    """
    import contourpy
    from matplotlib.collections import LineCollection

    cx = np.log10(ux) if lx else ux
    cy = np.log10(uy) if ly else uy
    segments = []
    for seg in contourpy.contour_generator(cx, cy, grid).lines(level):
        seg = np.array(seg, dtype=np.float64)
        if lx:
            seg[:, 0] = 10.0 ** seg[:, 0]
        if ly:
            seg[:, 1] = 10.0 ** seg[:, 1]
        segments.append(seg)
    if not segments:
        return
    ax.add_collection(LineCollection(segments, colors="white", linewidths=1.5))
    if not label:
        return
    longest = max(segments, key=len)
    x, y = longest[len(longest) // 2]
    ax.text(
        x, y, f"{level:g}", color="white", fontsize="small", ha="left", va="bottom",
        fontweight="bold",
    )  # fmt: skip


def _grid_log_axes(ux, uy, logx, logy) -> tuple[bool, bool]:
    lx, ly = _resolve_log("x", logx, ux), _resolve_log("y", logy, uy)
    for axis, log, u in (("x", lx, ux), ("y", ly, uy)):
        if log and np.any(u <= 0):
            raise InvalidModelError(
                f"log{axis}=True needs positive {axis} values, got {u[u <= 0].tolist()}"
            )
    return lx, ly


def _annotate_cells(ax, mesh, ux, uy, grid, annotate) -> None:
    if annotate is True:
        fmt = "{:.3g}"
    elif isinstance(annotate, str):
        fmt = annotate
        try:
            fmt.format(1.0)
        except (IndexError, KeyError, ValueError) as exc:
            raise InvalidModelError(
                f"annotate must be True or a format string such as '{{:.0f}}', got "
                f"{annotate!r} ({exc})"
            ) from None
    else:
        raise InvalidTypeError(f"annotate must be a bool or a format string, got {annotate!r}")
    colours = mesh.cmap(mesh.norm(grid))
    for i, yv in enumerate(uy):
        for j, xv in enumerate(ux):
            r, g, b, _ = colours[i, j]
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
            ax.text(
                xv,
                yv,
                fmt.format(grid[i, j]),
                ha="center",
                va="center",
                fontsize="small",
                color="white" if dark else "black",
            )


def bottleneck_map(
    frame: Any,
    x: str,
    y: str,
    station: str = "bottleneck",
    *,
    ax: Any = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    logx: bool | str = "auto",
    logy: bool | str = "auto",
) -> Any:
    """Which station is the bottleneck at each point of a two-parameter grid.

    Parameters
    ----------
    frame : DataFrame
        One row per (x, y) pair (select one population first, e.g.
        ``df[df.n == 32]`` of a :func:`qnmodel.whatif.sweep` result).
    x, y : str
        Parameter columns.
    station : str
        Column holding the bottleneck station's name (default ``"bottleneck"``).
    ax : Axes, optional
    xlabel, ylabel : str, optional
    logx, logy : bool or "auto"

    Returns
    -------
    Axes
        A categorical colour map, one colour per station, with a legend naming
        them in order of first appearance; where the colour changes the
        bottleneck shifts.
    """
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    xs = _frame_column(frame, x, "x").astype(np.float64)
    ys = _frame_column(frame, y, "y").astype(np.float64)
    names = [str(v) for v in _frame_column(frame, station, "station")]
    ux, uy = np.unique(xs), np.unique(ys)
    if ux.size * uy.size != xs.size:
        raise InvalidModelError(
            f"bottleneck_map needs one row per ({x}, {y}) pair: {xs.size} rows for "
            f"{ux.size} x {uy.size} distinct values (select one population first)"
        )
    order = list(dict.fromkeys(names))
    codes = np.full((uy.size, ux.size), -1)
    codes[np.searchsorted(uy, ys), np.searchsorted(ux, xs)] = [order.index(n) for n in names]
    if (codes < 0).any():
        raise InvalidModelError(f"bottleneck_map: some ({x}, {y}) pairs are repeated or missing")
    palette = [f"C{i % 10}" for i in range(len(order))]
    lx, ly = _grid_log_axes(ux, uy, logx, logy)
    if ax is None:
        ax = _new_axes()
    ax.pcolormesh(
        _cell_edges(ux, lx), _cell_edges(uy, ly), codes, shading="flat",
        cmap=ListedColormap(palette), vmin=-0.5, vmax=len(order) - 0.5,
    )  # fmt: skip
    ax.legend(
        handles=[Patch(color=c, label=n) for c, n in zip(palette, order, strict=True)],
        title="bottleneck",
        **_OUTSIDE_LEGEND,
    )
    ax.set_xlabel(xlabel or _default_label(x))
    ax.set_ylabel(ylabel or _default_label(y))
    _apply_log(ax, "x", lx, ux)
    _apply_log(ax, "y", ly, uy)
    return ax
