"""Measured points on a figure: drawn with their error bars, kept in view, never under the legend.

The one home for what every figure that shows measurements owes its reader
(:func:`~qnmodel.reporting.plotting.bounds_vs_measured`,
:func:`~qnmodel.reporting.plotting.validation_curves`,
:func:`~qnmodel.reporting.plotting.sensitivity`):

* the axes grow until every measured point and both ends of its error bar lie
  inside them, whatever range the model's curves needed (the points that matter
  most are the ones the model gets wrong);
* a point that no scale can show (a value <= 0 on a logarithmic axis) is marked at
  the edge of the axes with an open triangle pointing off-scale and a legend entry,
  never silently dropped;
* the legend goes to the corner that covers no measured point or error bar (and as
  few model curves as possible), or beside the axes when every corner would cover one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._style import _OUTSIDE_LEGEND

__all__ = ["MeasuredPoints", "draw_measured", "include", "mark_off_scale", "place_legends"]

#: Corners tried for the legend, in matplotlib's order for loc="best".
_LOCS = (
    "upper right",
    "upper left",
    "lower left",
    "lower right",
    "center left",
    "center right",
    "lower center",
    "upper center",
    "center",
)
#: Share of the axis span added beyond a point the limits had to grow for.
_MARGIN = 0.05
#: Style of the marker standing in for a point off a logarithmic scale.
_OFF_SCALE_STYLE = {"marker": "v", "mfc": "none", "ms": 7, "ls": "none", "clip_on": False}


class MeasuredPoints:
    """The measured points of one Axes in data coordinates: x, y and the error-bar ends.

    ``lo`` and ``hi`` are the ends of the error bars (``y`` itself without one); ``size`` is
    the marker size in points, used to give each point its box on the screen.
    """

    def __init__(self, x: Any, y: Any, err: Any = None, size: float = 4.0) -> None:
        x = np.asarray(x, dtype=np.float64).ravel()
        y = np.asarray(y, dtype=np.float64).ravel()
        e = np.zeros_like(y) if err is None else np.asarray(err, dtype=np.float64).ravel()
        e = np.where(np.isfinite(e), np.abs(e), 0.0)
        keep = np.isfinite(x) & np.isfinite(y)
        self.x, self.y = x[keep], y[keep]
        self.lo, self.hi = self.y - e[keep], self.y + e[keep]
        self.size = float(size)

    def __len__(self) -> int:
        return int(self.x.size)

    def display_boxes(self, ax) -> np.ndarray:
        """(M, 4) boxes ``x0, y0, x1, y1`` in display pixels: the marker, stretched over its
        error bar. A coordinate off a logarithmic scale is put at the edge of the axes."""
        if not len(self):
            return np.zeros((0, 4))
        x, lo, hi = self.x, self.lo, self.hi
        x0, x1 = ax.get_xlim()
        y0, y1 = ax.get_ylim()
        if ax.get_xscale() == "log":
            x = np.where(x > 0, x, min(x0, x1))
        if ax.get_yscale() == "log":
            lo = np.where(lo > 0, lo, min(y0, y1))
            hi = np.where(hi > 0, hi, min(y0, y1))
        trans = ax.transData
        a = trans.transform(np.column_stack([x, lo]))
        b = trans.transform(np.column_stack([x, hi]))
        half = 0.5 * self.size * ax.figure.dpi / 72.0 + 1.0
        return np.column_stack(
            [
                a[:, 0] - half,
                np.minimum(a[:, 1], b[:, 1]) - half,
                a[:, 0] + half,
                np.maximum(a[:, 1], b[:, 1]) + half,
            ]
        )


def include(ax, axis: str, values: Any, margin: float = _MARGIN) -> None:
    """Widen the ``axis`` ("x" or "y") limits of ``ax`` so every finite value lies inside.

    The limits only grow, on the side a value overflows, by ``margin`` of the new span
    beyond the farthest value (in log10 on a logarithmic axis, where only positive
    values count: the others are marked by :func:`mark_off_scale`).
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    log = (ax.get_xscale() if axis == "x" else ax.get_yscale()) == "log"
    if log:
        v = v[v > 0]
    if not v.size:
        return
    get, set_ = (ax.get_xlim, ax.set_xlim) if axis == "x" else (ax.get_ylim, ax.set_ylim)
    lo, hi = sorted(get())
    vmin, vmax = float(v.min()), float(v.max())
    if lo <= vmin and vmax <= hi:
        return
    f = (lambda t: np.log10(t)) if log else (lambda t: t)
    g = (lambda t: 10.0**t) if log else (lambda t: t)
    span = f(max(hi, vmax)) - f(min(lo, vmin))
    pad = margin * span if span > 0 else 0.5
    new_lo = lo if vmin >= lo else float(g(f(vmin) - pad))
    new_hi = hi if vmax <= hi else float(g(f(vmax) + pad))
    set_(new_lo, new_hi)


def mark_off_scale(ax, x: Any, y: Any, *, color: Any = "tab:red", label: str | None = None) -> int:
    """Mark the points that a logarithmic axis cannot show (a coordinate <= 0).

    Each is drawn as an open triangle on the edge of the axes it fell off (bottom for y,
    left for x), at its other coordinate; the legend entry says what the triangles are.
    Returns the number of points marked.
    """
    from matplotlib.transforms import blended_transform_factory

    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    ok = np.isfinite(x) & np.isfinite(y)
    logx, logy = ax.get_xscale() == "log", ax.get_yscale() == "log"
    off_x = ok & logx & (x <= 0)
    off_y = ok & logy & (y <= 0)
    marked = 0
    text = label or "value <= 0: off the log scale"
    if np.any(off_y & ~off_x):
        sel = off_y & ~off_x
        tr = blended_transform_factory(ax.transData, ax.transAxes)
        ax.plot(x[sel], np.zeros(int(sel.sum())), transform=tr, color=color, label=text,
                **_OFF_SCALE_STYLE)  # fmt: skip
        include(ax, "x", x[sel])
        marked += int(sel.sum())
        text = "_nolegend_"
    if np.any(off_x):
        tr = blended_transform_factory(ax.transAxes, ax.transData)
        yy = np.where(off_y[off_x], np.nan, y[off_x])
        style = dict(_OFF_SCALE_STYLE, marker="<")
        ax.plot(np.zeros(int(off_x.sum())), yy, transform=tr, color=color, label=text, **style)
        include(ax, "y", yy)
        marked += int(off_x.sum())
    return marked


def draw_measured(ax, x: Any, y: Any, err: Any = None, **style: Any) -> MeasuredPoints:
    """Draw measured points with their error bars (``ax.errorbar``) and keep them in view.

    ``err`` are half-widths (None: no bars). The axes widen so every point and both ends
    of every bar lie inside (:func:`include`); a point off a logarithmic scale is marked
    (:func:`mark_off_scale`). Returns the points, for :func:`place_legends`.
    """
    pts = MeasuredPoints(x, y, err, size=float(style.get("ms", 4.0)))
    ax.errorbar(x, y, yerr=err, **style)
    include(ax, "x", pts.x)
    include(ax, "y", np.concatenate([pts.lo, pts.hi]))
    mark_off_scale(ax, pts.x, pts.y, color=style.get("color", "tab:red"))
    return pts


def _overlaps(box, boxes: np.ndarray) -> bool:
    if not boxes.size:
        return False
    return bool(
        np.any(
            (boxes[:, 0] < box.x1)
            & (boxes[:, 2] > box.x0)
            & (boxes[:, 1] < box.y1)
            & (boxes[:, 3] > box.y0)
        )
    )


def _curves_under(ax, box) -> int:
    """How many drawn curves (lines with more than one vertex) cross the box."""
    count = 0
    for ln in ax.get_lines():
        xy = np.asarray(ln.get_xydata(), dtype=np.float64)
        if xy.shape[0] < 2 or ln.get_linestyle() in ("None", "none", " ", ""):
            continue
        path = ln.get_transform().transform_path(ln.get_path())
        count += bool(path.intersects_bbox(box, filled=False))
    return count


def _inside(box, outer) -> bool:
    return (
        box.x0 >= outer.x0 - 0.5
        and box.y0 >= outer.y0 - 0.5
        and box.x1 <= outer.x1 + 0.5
        and box.y1 <= outer.y1 + 0.5
    )


def _place(ax, points: Sequence[MeasuredPoints], kw: dict) -> bool:
    """Put ax's legend in the first corner covering no point and fewest curves; returns
    whether it found one (else it goes beside the axes)."""
    boxes = [p.display_boxes(ax) for p in points]
    avoid = np.concatenate(boxes) if boxes else np.zeros((0, 4))
    best, best_bad = None, None
    for loc in _LOCS:
        box = ax.legend(loc=loc, **kw).get_window_extent()
        if _overlaps(box, avoid) or not _inside(box, ax.bbox):
            continue
        bad = _curves_under(ax, box)
        if best_bad is None or bad < best_bad:
            best, best_bad = loc, bad
            if bad == 0:
                break
    if best is None:
        ax.legend(**{**_OUTSIDE_LEGEND, **kw})
        return False
    ax.legend(loc=best, **kw)
    return True


def place_legends(placements: Sequence[tuple[Any, Sequence[MeasuredPoints]]], **kw: Any) -> None:
    """Give each Axes a legend that covers none of its measured points.

    ``placements`` pairs each Axes with its :class:`MeasuredPoints`; ``kw`` goes to
    ``ax.legend`` (``fontsize``, ``title``). The figure is laid out first
    (``draw_without_rendering``), so the comparison happens in the display coordinates
    the saved image will have. A legend that fits in no corner goes beside its axes and
    stays there; that changes the layout, so the legends inside are placed again on the
    new one.
    """
    kw = {"fontsize": "small", **kw}
    if not placements:
        return
    fig = placements[0][0].figure
    beside: set[int] = set()
    for _ in range(len(placements) + 1):
        fig.draw_without_rendering()
        moved = False
        for i, (ax, pts) in enumerate(placements):
            if i not in beside and not _place(ax, pts, kw):
                beside.add(i)
                moved = True
        if not moved:
            return
