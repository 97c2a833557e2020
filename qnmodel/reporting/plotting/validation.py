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


#: The error measures :func:`regime_errors` draws, one panel each: (row key of the
#: overlapped structure, row key of exact MVA, panel title); MAPEs in percent, R(1) errors as
#: fractions (drawn in percent, signed).
_REGIME_MEASURES = (
    ("mape_x_overlap", "mape_x", "MAPE X"),
    ("mape_r_overlap", "mape_r", "MAPE R"),
    ("r1_error_overlap", "r1_error", "R(1) error (signed)"),
)
#: (model key, marker, size, legend text): the overlapped structure in the case's colour,
#: exact MVA as a small grey cross at the same place
_REGIME_MODELS = (("overlap", "o", 7, "overlapped structure"), ("mva", "x", 5, "exact MVA"))
#: horizontal spread of a study's cases around its d/c, in octaves
_REGIME_SPREAD = 0.3


def regime_error_values(row: Mapping[str, Any]) -> dict[tuple[str, str], float]:
    """The values (percent) :func:`regime_errors` draws for one row, by (model, measure)."""
    out = {}
    for k_ov, k_mva, name in _REGIME_MEASURES:
        scale = 100.0 if k_ov.startswith("r1_") else 1.0
        out["overlap", name] = float(row[k_ov]) * scale
        out["mva", name] = float(row[k_mva]) * scale
    return out


def regime_x(rows: Sequence[Mapping[str, Any]]) -> list[float]:
    """Where :func:`regime_errors` draws each row: its d/c, moved sideways by its case.

    The cases (distinct ``label``) are spread over :data:`_REGIME_SPREAD` octaves around each
    study's ratio, in the order they first appear, so the cases of one study stand apart.
    """
    kinds = list(dict.fromkeys(str(r["label"]) for r in rows))
    m = len(kinds)
    step = _REGIME_SPREAD / max(m - 1, 1)
    return [float(r["ratio"]) * 2.0 ** (step * (kinds.index(str(r["label"])) - (m - 1) / 2))
            for r in rows]  # fmt: skip


def regime_errors(rows: Sequence[Mapping[str, Any]], *, axes: Any = None,
                  target: float = 10.0) -> Any:  # fmt: skip
    """Error of the overlapped structure and of exact MVA against the disk/link ratio.

    Three panels, MAPE of X, MAPE of R and the signed error of R(1); in each, one marker per
    case and model: the overlapped structure in the case's colour (hollow for constant
    disks), exact MVA a grey cross beside it. The y axes are linear within the target band
    and logarithmic beyond (``symlog``), so the band is readable next to MVA's errors.

    Parameters
    ----------
    rows : sequence of mappings
        One per recorded case, as :func:`qnmodel.lab.validation.raid.regime_rows` gives them:
        ``label`` (the case), ``ratio`` (disk time per chunk over the chunk's link time,
        > 0), ``disk_scv`` (0 for constant disks), ``mape_x``, ``mape_r``,
        ``mape_x_overlap``, ``mape_r_overlap`` (percent) and ``r1_error``,
        ``r1_error_overlap`` (fractions, drawn in percent, signed).
    axes : three Axes, optional
        Where to draw; a new 1x3 figure when omitted.
    target : float
        The target, percent: shaded from 0 to ``target`` for the MAPEs, from -``target`` to
        ``target`` for R(1).

    Returns
    -------
    array of Axes
        Each marker is a Line2D whose ``gid`` is ``"model:measure:i"`` (i the row's index;
        its x is :func:`regime_x`) for checks.
    """
    from matplotlib.lines import Line2D

    if not rows:
        raise InvalidModelError(
            "regime_errors: rows is empty; pass at least one row, such as "
            "qnmodel.lab.validation.raid.regime_rows(summary) of a recorded RAID study"
        )
    if axes is None:
        axes = _new_axes(3, figsize=(14.0, 4.2))
    if len(axes) != len(_REGIME_MEASURES):
        raise InvalidModelError(f"regime_errors: axes must be 3 Axes, got {len(axes)}")
    kinds = list(dict.fromkeys(str(r["label"]) for r in rows))
    colors = {k: f"C{i % 10}" for i, k in enumerate(kinds)}
    xs = regime_x(rows)
    ratios = np.array([float(r["ratio"]) for r in rows])
    lo, hi = np.round(np.log2(ratios.min())), np.round(np.log2(ratios.max()))
    ticks = 2.0 ** np.arange(lo, hi + 1)
    for ax, (k_ov, _k_mva, name) in zip(axes, _REGIME_MEASURES, strict=True):
        signed = k_ov.startswith("r1_")
        ax.axhspan(-target if signed else 0.0, target, color="tab:green", alpha=0.15, lw=0,
                   label=f"target {'+-' if signed else '<= '}{target:g} %")  # fmt: skip
        ax.axhline(0.0, color="0.5", lw=0.8)
        for i, row in enumerate(rows):
            values = regime_error_values(row)
            color = colors[str(row["label"])]
            hollow = float(row["disk_scv"]) == 0.0
            for model, marker, ms, _text in _REGIME_MODELS:
                own = model == "overlap"
                ax.plot([xs[i]], [values[model, name]], marker=marker, ls="none", ms=ms,
                        color=color if own else "0.45",
                        mfc=("white" if hollow else color) if own else "0.45",
                        gid=f"{model}:{name}:{i}", clip_on=False,
                        zorder=3 if own else 2)  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_yscale("symlog", linthresh=target, linscale=1.5)
        shown = [regime_error_values(r)[m, name] for r in rows for m in ("overlap", "mva")]
        top = max(max(shown), target) * 1.25
        low = min(min(shown), -target if signed else 0.0) * 1.25
        ax.set_ylim(low if signed else -0.05 * target, top)
        marks = [v * target / 10.0 for v in (-500, -200, -100, -50, -20, -10, -5, 0,
                                              2, 5, 10, 20, 50, 100, 200, 500)]  # fmt: skip
        marks = [v for v in marks if (low if signed else 0.0) <= v <= top and (signed or v >= 0)]
        ax.set_yticks(marks, [f"{v:g}" for v in marks])
        ax.set_yticks([], minor=True)
        ax.set_xticks(ticks, [f"1/{1 / t:g}" if t < 1 else f"{t:g}" for t in ticks])
        ax.set_xticks([], minor=True)
        ax.set_xlim(ticks[0] / 2**0.5, ticks[-1] * 2**0.5)
        ax.set_xlabel("d/c: disk time per chunk / chunk time on the link")
        ax.set_ylabel(f"{name} [%]")
        ax.set_title(name, fontsize="medium")
        ax.grid(True, alpha=0.3)
    handles = [Line2D([], [], ls="none", marker="o", ms=7, color=colors[k], label=k)
               for k in kinds]  # fmt: skip
    handles += [Line2D([], [], ls="none", marker="o", ms=7, color="0.2", mfc="white",
                       label="constant disks (hollow)"),
                Line2D([], [], ls="none", marker="x", ms=5, color="0.45", label="exact MVA"),
                axes[0].get_legend_handles_labels()[0][0]]  # fmt: skip
    axes[-1].legend(handles=handles, fontsize="small", loc="upper left",
                    bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)  # fmt: skip
    return axes


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
