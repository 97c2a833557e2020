"""Shared style and axis helpers of the figures: bands, units, log axes, new Axes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import InvalidModelError

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
        raise ImportError(
            "qnmodel.reporting.plotting needs matplotlib: pip install 'qnmodel[plot]'"
        ) from exc
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
        # never a log axis by itself for data it cannot show (a value <= 0)
        v = np.asarray(values, dtype=np.float64).ravel()
        return bool(np.all(v[np.isfinite(v)] > 0)) and _spans_decades(v, decades)
    if not isinstance(log, bool):
        raise InvalidModelError(f"log{axis} must be True, False or 'auto', got {log!r}")
    return log


def _apply_log(ax, axis: str, log: bool | str, values: Any, decades: float = 2.0) -> bool:
    log = _resolve_log(axis, log, values, decades)
    if log:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    return log
