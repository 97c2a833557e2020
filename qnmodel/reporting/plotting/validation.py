"""Model against measurement from a validation study's points (``qnmodel validate``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...errors import InvalidModelError
from ._points import draw_measured, place_legends
from ._style import _MEASURED_STYLE, _MVA_STYLE, BAND_STYLE, _new_axes, time_scale

__all__ = ["validation_curves"]


def validation_curves(points: Sequence[Mapping[str, Any]], *, axes: Any = None,
                      title: str | None = None) -> Any:  # fmt: skip
    """X(n) and R(n) of a validation study: BJB band, exact MVA, fork-join, measured with CIs.

    Parameters
    ----------
    points : sequence of mappings
        As in a ``qnmodel validate`` summary: ``n``, ``x_measured``, ``x_ci``,
        ``r_measured``, ``r_ci``, ``x_model``, ``r_model``, ``x_lower``, ``x_upper``,
        ``r_lower``, ``r_upper`` and optionally ``x_forkjoin``, ``r_forkjoin`` (jobs/s, s;
        the ``*_ci`` are 95 % half-widths). Every measured point and error bar is
        inside the axes and outside the legends.
    axes : pair of Axes, optional
        Where to draw (throughput, response time); a new 1x2 figure when omitted.
    title : str, optional
        Figure title.

    Returns
    -------
    ndarray of 2 Axes
    """
    pts = sorted(points, key=lambda p: p["n"])
    if not pts:
        raise InvalidModelError("validation_curves needs at least one point")
    if axes is None:
        axes = _new_axes(2, figsize=(10.0, 4.0))
    axes = np.asarray(axes, dtype=object).ravel()
    n = np.array([p["n"] for p in pts], dtype=float)

    def col(k: str, scale: float = 1.0) -> np.ndarray:
        return np.array([p.get(k, np.nan) for p in pts], dtype=float) * scale

    factor, unit = time_scale(col("r_upper"))
    band = BAND_STYLE["bjb"]
    placements = []
    for ax, q, scale, label in (
        (axes[0], "x", 1.0, "throughput X(n) [jobs/s]"),
        (axes[1], "r", factor, f"response time R(n) [{unit}]"),
    ):
        ax.fill_between(n, col(f"{q}_lower", scale), col(f"{q}_upper", scale), lw=0, **band)
        ax.plot(n, col(f"{q}_model", scale), **_MVA_STYLE)
        if any(f"{q}_forkjoin" in p for p in pts):
            ax.plot(n, col(f"{q}_forkjoin", scale), "--", color="tab:green", lw=1.2,
                    label="fork-join MVA")  # fmt: skip
        ax.set_xlabel("concurrent jobs n")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0.0)
        ax.grid(True, alpha=0.3)
        style = dict(_MEASURED_STYLE, label="measured (95 % CI)")
        drawn = draw_measured(ax, n, col(f"{q}_measured", scale), col(f"{q}_ci", scale), **style)
        placements.append((ax, [drawn]))
    if title:
        axes[0].figure.suptitle(title)
    place_legends(placements)  # last: the title and the limits are final
    return axes
