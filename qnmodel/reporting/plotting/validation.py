"""Model against measurement from a validation study's points (``qnmodel validate``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...errors import InvalidModelError
from ._points import draw_measured, place_legends
from ._style import _MEASURED_STYLE, _MVA_STYLE, BAND_STYLE, _new_axes, time_scale

__all__ = ["validation_curves", "regime_errors", "overlap_response"]


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


#: The error measures :func:`regime_errors` draws: (row key of the overlapped structure, row
#: key of exact MVA, marker, legend text); MAPEs in percent, R(1) errors as fractions.
_REGIME_MEASURES = (
    ("mape_x_overlap", "mape_x", "o", "MAPE X"),
    ("mape_r_overlap", "mape_r", "s", "MAPE R"),
    ("r1_error_overlap", "r1_error", "^", "R(1) error (signed)"),
)
_REGIME_MODELS = (("overlap", "tab:blue", "overlapped structure"), ("mva", "0.35", "exact MVA"))


def regime_error_values(row: Mapping[str, Any]) -> dict[tuple[str, str], float]:
    """The values (percent) :func:`regime_errors` draws for one row, by (model, measure)."""
    out = {}
    for k_ov, k_mva, _marker, name in _REGIME_MEASURES:
        scale = 100.0 if k_ov.startswith("r1_") else 1.0
        out["overlap", name] = float(row[k_ov]) * scale
        out["mva", name] = float(row[k_mva]) * scale
    return out


def regime_errors(rows: Sequence[Mapping[str, Any]], *, ax: Any = None,
                  target: float = 10.0) -> Any:  # fmt: skip
    """Error of the overlapped structure and of exact MVA against the disk/link ratio.

    Parameters
    ----------
    rows : sequence of mappings
        One per recorded case, as :func:`qnmodel.lab.validation.raid.regime_rows` gives them:
        ``ratio`` (disk time per chunk over the chunk's link time, > 0), ``disk_scv`` (0 for
        constant disks: hollow markers), ``mape_x``, ``mape_r``, ``mape_x_overlap``,
        ``mape_r_overlap`` (percent) and ``r1_error``, ``r1_error_overlap`` (fractions,
        drawn in percent, signed).
    ax : Axes, optional
        Where to draw; new Axes when omitted.
    target : float
        Half-width of the target band, percent (shaded from -target to +target).

    Returns
    -------
    Axes
        One marker per case, model (colour) and measure (shape); each marker is a Line2D
        whose ``gid`` is ``"model:measure:i"`` (i the row's index) for checks.
    """
    from matplotlib.lines import Line2D

    if not rows:
        raise InvalidModelError(
            "regime_errors: rows is empty; pass at least one row, such as "
            "qnmodel.lab.validation.raid.regime_rows(summary) of a recorded RAID study"
        )
    if ax is None:
        ax = _new_axes(1, figsize=(6.0, 4.0))
    ax.axhspan(-target, target, color="tab:green", alpha=0.15, lw=0,
               label=f"target +-{target:g} %")  # fmt: skip
    ax.axhline(0.0, color="0.5", lw=0.8)
    for i, row in enumerate(rows):
        values = regime_error_values(row)
        hollow = float(row["disk_scv"]) == 0.0
        for model, color, _text in _REGIME_MODELS:
            for _k, _m, marker, name in _REGIME_MEASURES:
                ax.plot([float(row["ratio"])], [values[model, name]], marker=marker, ls="none",
                        ms=7, color=color, mfc="white" if hollow else color,
                        gid=f"{model}:{name}:{i}", clip_on=False)  # fmt: skip
    ax.set_xscale("log", base=2)
    ratios = np.array([float(r["ratio"]) for r in rows])
    lo, hi = np.round(np.log2(ratios.min())), np.round(np.log2(ratios.max()))
    ticks = 2.0 ** np.arange(lo, hi + 1)
    ax.set_xticks(ticks, [f"1/{1 / t:g}" if t < 1 else f"{t:g}" for t in ticks])
    ax.set_xticks([], minor=True)
    ax.set_xlim(ticks[0] / 2**0.25, ticks[-1] * 2**0.25)
    ax.set_xlabel("disk time per chunk / chunk time on the link (d/c)")
    ax.set_ylabel("error [%]")
    ax.grid(True, alpha=0.3)
    handles = [Line2D([], [], ls="none", marker="o", ms=7, color=c, label=t)
               for _m, c, t in _REGIME_MODELS]  # fmt: skip
    handles += [Line2D([], [], ls="none", marker=mk, ms=7, color="0.2", mfc="none", label=t)
                for _a, _b, mk, t in _REGIME_MEASURES]  # fmt: skip
    handles += [Line2D([], [], ls="none", marker="o", ms=7, color="0.2", label="exponential disks"),
                Line2D([], [], ls="none", marker="o", ms=7, color="0.2", mfc="white",
                       label="constant disks")]  # fmt: skip
    handles.append(ax.get_legend_handles_labels()[0][0])
    ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0),
              borderaxespad=0.0)  # fmt: skip
    return ax


def overlap_response(points: Sequence[Mapping[str, Any]], *, ax: Any = None) -> Any:
    """Measured R(n) of a RAID study's case against the overlapped structure and exact MVA.

    Parameters
    ----------
    points : sequence of mappings
        One case's points of a ``qnmodel validate`` RAID summary: ``n``, ``r_measured``,
        ``r_ci`` (95 % half-width), ``r_model`` (exact MVA), ``r_overlap``,
        ``r_lower_overlap``, ``r_upper_overlap`` (s).
    ax : Axes, optional
        Where to draw; new Axes when omitted.

    Returns
    -------
    Axes
    """
    from matplotlib.ticker import FuncFormatter

    pts = sorted(points, key=lambda p: p["n"])
    if not pts or "r_overlap" not in pts[0]:
        raise InvalidModelError(
            "overlap_response needs points with the overlapped prediction (r_overlap): a RAID "
            "study of a case the overlapped structure covers"
        )
    if ax is None:
        ax = _new_axes(1, figsize=(5.0, 4.0))
    n = np.array([p["n"] for p in pts], dtype=float)

    def col(k: str, scale: float = 1.0) -> np.ndarray:
        return np.array([p[k] for p in pts], dtype=float) * scale

    factor, unit = time_scale(col("r_upper_overlap"))
    ax.fill_between(n, col("r_lower_overlap", factor), col("r_upper_overlap", factor), lw=0,
                    color="tab:blue", alpha=0.15, label="overlap bounds")  # fmt: skip
    ax.plot(n, col("r_overlap", factor), color="tab:blue", lw=1.8, label="overlapped structure")
    ax.plot(n, col("r_model", factor), **dict(_MVA_STYLE, color="0.35"))
    style = dict(_MEASURED_STYLE, label="measured (95 % CI)")
    drawn = draw_measured(ax, n, col("r_measured", factor), col("r_ci", factor), **style)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")  # the gap at n = 1, where the stages overlap most, stays visible
    plain = FuncFormatter(lambda v, _pos: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(
        FuncFormatter(lambda v, _pos: f"{v:g}" if f"{v:g}"[0] in "25" else "")
    )
    ax.set_xticks(n, [f"{v:g}" for v in n])
    ax.set_xticks([], minor=True)
    ax.set_xlabel("concurrent jobs n")
    ax.set_ylabel(f"response time R(n) [{unit}]")
    ax.grid(True, alpha=0.3)
    place_legends([(ax, [drawn])])
    return ax
