"""What-if studies on a grid: sensitivity curves, heat maps, bottleneck maps."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ...errors import InvalidModelError, InvalidTypeError
from ...units import format_quantity
from ._points import MeasuredPoints, mark_off_scale, place_legends
from ._style import _OUTSIDE_LEGEND, _apply_log, _new_axes, _resolve_log, time_scale

__all__ = ["sensitivity", "heatmap", "bottleneck_map"]


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
_METHODS = {"mva": "exact MVA", "aba": "ABA", "bjb": "BJB", "amva": "approximate MVA",
            "measured": "measured"}  # fmt: skip
_QUANTITIES = {
    "throughput": ("throughput X", "throughput"),
    "response_time": ("response time R", "time"),
}
_RESULT = re.compile(  # <quantity>[_<method>][_<side>] (docs/reference/names.md)
    r"^(?P<q>throughput|response_time)(?:_(?P<method>(?!lower$|upper$)[a-z]+))?"
    r"(?:_(?P<side>lower|upper))?$"
)


def _describe(column: Any) -> tuple[str, str | None]:
    """A column's name for a reader and the kind of its unit (``"time"``, ``"size"``,
    ``"rate"``, ``"throughput"``, ``"jobs"`` or None).

    What-if frames hold SI values: a networked-RAID parameter has the dimension of its
    entry in :data:`~qnmodel.models.storage.PARAMETERS` (``link_rate``: "Ethernet link
    rate", a rate), a result column names its quantity and method
    (``response_time_mva``: "response time R, exact MVA", a time), ``n`` is the population.
    Other columns keep their name; one ending in ``_s`` or holding ``think_time`` is a time.
    """
    from ...models.storage import PARAMETERS

    name = str(column)
    if name in PARAMETERS:
        kind = PARAMETERS[name][1]
        return PARAMETERS[name][3], kind if kind in _PARAMETER_UNITS else None
    if name == "n":
        return "population n", "jobs"
    m = _RESULT.match(name)
    if m and (m["method"] is None or m["method"] in _METHODS):
        text, kind = _QUANTITIES[m["q"]]
        if m["method"] is not None:
            text += f", {_METHODS[m['method']]}"
        if m["side"] is not None:
            text += f" {m['side']} bound"
        return text, kind
    if name == "think_time":
        return "think time Z", "time"
    if "response_time" in name or "think_time" in name or name.endswith("_s"):
        return name, "time"
    if "throughput" in name:
        return name, "throughput"
    return name, None


def _default_label(column: str, scale: float = 1.0) -> str:
    """A column's name for a reader with its unit, when the unit is known.

    Times are drawn in s, ms or us after ``scale`` 1, 1e3, 1e6; the other quantities only
    unscaled (an unknown scale gives no unit rather than a wrong one). See
    :func:`_describe`.
    """
    text, kind = _describe(column)
    unit = None
    if kind == "time":
        unit = _SCALED_TIME_UNITS.get(float(scale))
    elif scale == 1.0:
        unit = {"size": "B", "rate": "B/s", "throughput": "jobs/s", "jobs": "jobs"}.get(kind or "")
    return f"{text} [{unit}]" if unit else text


def _value_label(column: str, value: Any) -> str:
    """One value of a column as a legend entry, in readable units: ``12.5 MB/s``, ``4.9 ms``."""
    _, kind = _describe(column)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value_f = float(value)
    elif isinstance(value, (float, np.floating)):
        value_f = float(value)
    else:
        return str(value)
    if kind in ("time", "size", "rate") and np.isfinite(value_f):
        return format_quantity(value_f, kind, digits=4)
    if kind == "throughput":
        return f"{value_f:.4g} jobs/s"
    return f"{value_f:.4g}"


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
    yscale: float | None = None,
) -> Any:
    """Curves of one output against one parameter, one curve per value of ``hue``.

    Parameters
    ----------
    frame : DataFrame
        Tidy what-if results (or measurements), one row per grid point.
    x, y : str
        Columns for the horizontal and vertical axes.
    hue : str, optional
        Column whose distinct values give one curve each; the legend is titled with the
        column's name and gives each value in readable units (``12.5 MB/s``).
    ax : Axes, optional
    xlabel, ylabel : str, optional
        Axis labels with units; default to a readable name of the column with its unit
        when it is known (a networked-RAID parameter, a result column of
        :func:`qnmodel.sweep`, a time, a throughput).
    logx, logy : bool or "auto"
        Logarithmic axes; "auto" when the data are positive and span two decades. A point
        a logarithmic axis cannot show (<= 0) is marked at the edge, not dropped.
    yscale : float, optional
        Multiply y by this before drawing (e.g. 1e3 to draw seconds as ms). By default a
        time column is drawn in s, ms or us, chosen from its values, others as they are.

    Returns
    -------
    Axes
        Every point inside the axes; the legend covers none of them.
    """
    xs = _frame_column(frame, x, "x")
    ys = _frame_column(frame, y, "y").astype(np.float64)
    if yscale is None:
        yscale = time_scale(ys)[0] if _describe(y)[1] == "time" else 1.0
    ys = ys * yscale
    if ax is None:
        ax = _new_axes()
    _apply_log(ax, "x", logx, xs)
    _apply_log(ax, "y", logy, ys)
    groups: list[tuple[str | None, np.ndarray]] = []
    if hue is None:
        groups.append((None, np.ones(xs.shape, dtype=bool)))
    else:
        hs = _frame_column(frame, hue, "hue")
        groups += [(_value_label(hue, h), hs == h) for h in dict.fromkeys(hs.tolist())]
    points = []
    for label, sel in groups:
        order = np.argsort(xs[sel], kind="stable")
        gx, gy = xs[sel][order], ys[sel][order]
        (ln,) = ax.plot(gx, gy, marker="o", ms=3, label=label or "_nolegend_")
        mark_off_scale(ax, gx, gy, color=ln.get_color(), label=f"{label or y}: <= 0, off scale")
        points.append(MeasuredPoints(gx, gy, size=3.0))
    ax.set_xlabel(xlabel or _default_label(x))
    ax.set_ylabel(ylabel or _default_label(y, yscale))
    ax.grid(True, alpha=0.3)
    if hue is not None or ax.get_legend_handles_labels()[0]:
        place_legends([(ax, points)], title=_describe(hue)[0] if hue is not None else None)
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
