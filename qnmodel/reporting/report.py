"""Reports: the one Markdown writer (tables, figures, model against measurement).

Used by ``qnmodel report``, ``qnmodel calibrate --out``, ``qnmodel demo`` and
:func:`qnmodel.lab.demo.run_demo`:

* :func:`write_model_report` - a model file's stations, bottleneck, bounds and
  exact MVA table, plots, and (given measured points) the comparison;
* :func:`write_report` - a calibrated model against a measured closed loop
  (:class:`~qnmodel.calibration.comparison.Comparison`); :func:`calibrate_report` calibrates
  from two trace files and writes it;
* :func:`markdown_table`, :func:`comparison_table` - the table writers both use.

Every relative error is (model - measured) / measured, in percent
(:mod:`qnmodel.calibration.comparison`). Figures are drawn by
:mod:`qnmodel.reporting.plotting` on pyplot-free matplotlib figures, so writing a report
never touches the user's pyplot state or backend.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._files import check_outputs, open_output, output_dir, save_figure, write_output
from ..calibration.comparison import Comparison, compare
from ..calibration.pipeline import calibrate_and_compare
from ..io import modelfile
from ..units import format_quantity
from .html import write_html

__all__ = [
    "calibrate_report",
    "markdown_cell",
    "comparison_columns",
    "comparison_table",
    "coverage_text",
    "markdown_table",
    "measured_section",
    "model_report",
    "save_bounds_figure",
    "save_utilization_figure",
    "solution_rows",
    "thin_rows",
    "write_model_report",
    "write_report",
]


# -- formatting ---------------------------------------------------------------------------------
def fmt_g(v: float, digits: int = 5) -> str:
    """A number with ``digits`` significant digits; ``inf`` for a non-finite one."""
    return "inf" if not math.isfinite(v) else f"{v:.{digits}g}"


def fmt_time(v: float) -> str:
    """A time in seconds with its unit (``4.9 ms``; ``0 s`` for zero):
    :func:`qnmodel.units.format_quantity`, as the reprs print it."""
    return format_quantity(v, "time")


def time_unit(values: Any) -> tuple[float, str]:
    """``(1.0, "s")`` when the largest time reaches a second, else ``(1e3, "ms")``."""
    return (1.0, "s") if float(np.nanmax(values)) >= 1.0 else (1e3, "ms")


def finite_or_none(v: Any) -> Any:
    """A JSON-ready copy: non-finite floats become ``None`` (JSON has no NaN)."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: finite_or_none(x) for k, x in v.items()}
    if isinstance(v, list):
        return [finite_or_none(x) for x in v]
    return v


def write_json(doc: dict, stream) -> None:
    """Indented JSON with NaN/inf as null."""
    json.dump(finite_or_none(doc), stream, indent=2, allow_nan=False)
    stream.write("\n")


def write_csv(frame, stream) -> None:
    """A DataFrame as CSV without its index."""
    frame.to_csv(stream, index=False, lineterminator="\n")


def column_widths(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    """The width of each column: its widest cell, header included."""
    return [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]


def markdown_cell(text: str) -> str:
    """A cell's text made safe inside a pipe table: ``|`` escaped, line breaks and other
    control characters shown as spaces (a name could otherwise split the row)."""
    clean = "".join(" " if ord(ch) < 32 or ord(ch) == 127 else ch for ch in str(text))
    return clean.replace("\\", "\\\\").replace("|", "\\|")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table with right-aligned columns padded to their widest cell; each cell's
    text is made safe for a pipe table (:func:`markdown_cell`)."""
    headers = [markdown_cell(h) for h in headers]
    rows = [[markdown_cell(c) for c in r] for r in rows]
    widths = column_widths(headers, rows)
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"]
    out.append("|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|")
    for r in rows:
        out.append("| " + " | ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + " |")
    return "\n".join(out) + "\n"


# -- tables ---------------------------------------------------------------------------------------
#: The most rows a table of one row per population shows (command line and Markdown); a longer
#: curve is thinned by :func:`thin_rows` (CSV and JSON always hold every row).
MAX_TABLE_ROWS = 50


def thin_rows(populations: Any, max_rows: int = MAX_TABLE_ROWS) -> np.ndarray:
    """Indices of the rows a table of a curve shows: every row up to ``max_rows``, else a few.

    A curve of ``max_rows`` populations or fewer is shown whole. A longer one spanning at
    most two decades shows ``max_rows`` rows evenly spaced; a longer one the populations
    at 1, 2, 5, 10, 20, 50, ... (the first at or above each), as the eye reads a curve of
    10^6 points on a log axis. The first and the last population are always shown.

    >>> thin_rows(range(1, 1_000_001)).size, [int(i) + 1 for i in thin_rows(range(1, 1001))]
    (19, [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000])
    """
    p = np.asarray(populations, dtype=np.float64).ravel()
    if p.size <= max_rows:
        return np.arange(p.size)
    lo, hi = max(float(p[0]), 1.0), float(p[-1])
    if hi <= 100.0 * lo:
        idx = np.linspace(0, p.size - 1, max_rows).round().astype(np.int64)
    else:
        decades = 10.0 ** np.arange(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
        nice = (decades[:, None] * np.array([1.0, 2.0, 5.0])).ravel()
        nice = nice[(nice >= lo) & (nice <= hi)]
        idx = np.minimum(np.searchsorted(p, nice), p.size - 1)
    return np.unique(np.concatenate([[0], idx, [p.size - 1]]))


def solution_rows(
    sol: modelfile.ModelSolution, rows: Any = None
) -> tuple[list[str], list[list[str]], str]:
    """Headers, rows and time unit of a model's bounds-and-MVA table (one row per population;
    ``rows``: the indices of the populations to show, e.g. :func:`thin_rows`; all by
    default)."""
    frame = sol.to_frame()
    if rows is not None:
        frame = frame.iloc[np.asarray(rows, dtype=np.int64)]
    factor, unit = time_unit(frame["response_time"])
    b = "bjb" if sol.bjb is not None else "aba"
    B = b.upper()
    headers = ["n", "X [jobs/s]", f"X {B} lower", f"X {B} upper"]
    headers += [f"R [{unit}]", f"R {B} lower", f"R {B} upper"]
    rows = []
    for rec in frame.to_dict(orient="records"):
        rows.append(
            [
                str(int(rec["n"])),
                fmt_g(rec["throughput"]),
                fmt_g(rec[f"throughput_{b}_lower"]),
                fmt_g(rec[f"throughput_{b}_upper"]),
                fmt_g(rec["response_time"] * factor),
                fmt_g(rec[f"response_time_{b}_lower"] * factor),
                fmt_g(rec[f"response_time_{b}_upper"] * factor),
            ]
        )
    return headers, rows, unit


def comparison_columns(c: Comparison) -> dict[str, list[str]]:
    """The per-population comparison, column by column (header -> cells), in table order.

    Columns: ``n``; measured X with its error bar (``+/-``), exact MVA, the band's bounds,
    ``X err %``; ``in BJB`` (the measured point inside the band: the headline's "inside"
    count) and ``bar meets BJB`` (its error bar overlaps the band: the headline's "with
    their error bars" count); measured and MVA response time and ``R err %``. Errors are
    (model - measured) / measured. A quantity that was not measured has no columns.
    """
    t = c.table
    has_x = bool(np.any(np.isfinite(t["throughput_measured"])))
    has_r = bool(np.any(np.isfinite(t["response_time_measured"])))
    r_all = [t["response_time_mva"]] + ([t["response_time_measured"]] if has_r else [])
    factor, unit = time_unit(np.concatenate([np.asarray(v) for v in r_all]))
    B = c.band.upper()
    recs = t.to_dict(orient="records")

    def yes(flag: Any) -> str:
        return "yes" if flag else "no"

    cols: dict[str, list[str]] = {"n": [str(int(r["n"])) for r in recs]}
    if has_x:
        cols["X meas [jobs/s]"] = [fmt_g(r["throughput_measured"]) for r in recs]
        cols["+/-"] = [fmt_g(r["throughput_halfwidth"], 2) for r in recs]
        cols["X MVA"] = [fmt_g(r["throughput_mva"]) for r in recs]
        cols[f"X {B} lower"] = [fmt_g(r[f"throughput_{c.band}_lower"]) for r in recs]
        cols[f"X {B} upper"] = [fmt_g(r[f"throughput_{c.band}_upper"]) for r in recs]
        cols["X err %"] = [f"{r['throughput_error_pct']:+.1f}" for r in recs]
        cols[f"in {B}"] = [yes(r["inside_bounds"]) for r in recs]
        cols[f"bar meets {B}"] = [yes(r["inside_bounds_with_error"]) for r in recs]
    if has_r:
        cols[f"R meas [{unit}]"] = [fmt_g(r["response_time_measured"] * factor) for r in recs]
        cols[f"R MVA [{unit}]"] = [fmt_g(r["response_time_mva"] * factor) for r in recs]
        cols["R err %"] = [f"{r['response_time_error_pct']:+.1f}" for r in recs]
    return cols


def comparison_table(c: Comparison) -> str:
    """The per-population Markdown table of a comparison (:func:`comparison_columns`)."""
    cols = comparison_columns(c)
    return markdown_table(list(cols), [list(r) for r in zip(*cols.values(), strict=True)])


def coverage_text(c: Comparison) -> str:
    """How many measured throughputs the band holds, in the words and counts of the table's
    ``in BJB`` and ``bar meets BJB`` columns (the headline and the table agree)."""
    t, B = c.table, c.band.upper()
    n, inside, met = len(t), int(t["inside_bounds"].sum()), int(t["inside_bounds_with_error"].sum())
    return (
        f"{inside} of {n} measured throughputs inside the {B} band (column `in {B}`); "
        f"{met} of {n} with their error bar overlapping it (column `bar meets {B}`)"
    )


def measured_section(c: Comparison) -> str:
    """Markdown: the measured points against exact MVA and the bounds, point by point."""
    summary = []
    if math.isfinite(c.mape_throughput):
        summary.append(f"mean absolute error of X: {c.mape_throughput:.1f}%")
        summary.append(coverage_text(c))
    if math.isfinite(c.mape_response_time):
        summary.append(f"mean absolute error of R: {c.mape_response_time:.1f}%")
    return (
        "\n## Measured against the model\n\n"
        "Errors are (model - measured) / measured.\n\n"
        + "; ".join(summary)
        + ".\n\n"
        + comparison_table(c)
    )


def model_report(
    sol: modelfile.ModelSolution,
    paths: Mapping[str, Any] | None = None,
    comparison: Comparison | None = None,
) -> str:
    """The Markdown report of a solved single-class model file (and its measurement)."""
    spec, summ = sol.spec, sol.summary()
    net = spec.network
    parts = [f"# {spec.name}\n\n"]
    if spec.description:
        parts.append(f"{spec.description}\n\n")
    parts.append(f"Model file: `{spec.source}`\n\n")
    parts.append("## Stations\n\n")
    parts.append(
        markdown_table(
            ["station", "kind", "servers", "demand"],
            [[s.name, s.kind, str(s.servers), fmt_time(s.demand)] for s in net.stations],
        )
    )
    parts.append(
        f"\nThink time Z = {fmt_time(net.think_time)}; total demand "
        f"D = {fmt_time(summ['total_demand'])}; bottleneck "
        f"**{summ['bottleneck']}**; saturation throughput 1/D_max = "
        f"{fmt_g(summ['saturation_throughput'])} jobs/s; knee N* = {fmt_g(summ['n_star'], 4)}.\n"
    )
    parts.append("\n## Bounds and exact MVA\n\n")
    parts.append(
        "X: throughput (jobs/s); R: response time, think time excluded. Lower and upper are "
        "the balanced job bounds (BJB; asymptotic bounds, ABA, when a station has several "
        "servers); the CSV holds both.\n\n"
    )
    shown = thin_rows(spec.populations)
    headers, rows, _ = solution_rows(sol, shown)
    parts.append(markdown_table(headers, rows))
    if shown.size < spec.populations.size:
        parts.append(
            f"\n{shown.size} of {spec.populations.size} populations shown; the CSV holds "
            "every one.\n"
        )
    if comparison is not None:
        parts.append(measured_section(comparison))
    if paths:
        parts.append("\n## Plots\n")
        for key in ("plot", "utilization"):
            if key in paths:
                parts.append(f"\n![{key}]({Path(paths[key]).name})\n")
    return "".join(parts)


# -- figures --------------------------------------------------------------------------------------
def _figure(width: float, height: float):
    from matplotlib.figure import Figure  # no pyplot: never touches the user's backend

    return Figure(figsize=(width, height), layout="constrained")


def save_bounds_figure(
    net,
    N: int,
    path: str | os.PathLike,
    measured: Any = None,
    *,
    title: str | None = None,
    dpi: int = 120,
) -> Path:
    """Save :func:`qnmodel.reporting.plotting.bounds_vs_measured` of ``net`` for n = 1..N to
    ``path``."""
    from . import plotting

    fig = _figure(10.0, 4.0)
    axes = fig.subplots(1, 2)
    plotting.bounds_vs_measured(net, N, measured, axes=axes, title=title)
    return save_figure(fig, path, dpi=dpi)


def model_figure_title(spec: modelfile.ModelSpec) -> str:
    """A figure title naming the model: a saved image is read without the command that made it."""
    from ..solvers import bounds

    b = bounds(spec.network, spec.max_population, method="aba")
    return (
        f"{spec.name}: bottleneck {b.bottleneck}, N* = {b.n_star:.3g}, "
        f"X_max = {b.saturation_throughput:.4g} jobs/s"
    )


def save_utilization_figure(
    sol: modelfile.ModelSolution, path: str | os.PathLike, dpi: int = 120
) -> Path:
    """Save :func:`qnmodel.reporting.plotting.utilization` of a solved model to ``path``."""
    from . import plotting

    fig = _figure(7.5, 4.0)  # room for the legend beside the axes
    ax = fig.subplots()
    plotting.utilization(sol.mva, network=sol.spec.network, ax=ax, n_star=sol.aba.n_star)
    ax.set_title(f"{sol.spec.name}: {ax.get_title()}")
    return save_figure(fig, path, dpi=dpi)


# -- whole reports --------------------------------------------------------------------------------
def output_stem(name: str) -> str:
    """A model's name as a file name inside the output directory.

    The name comes from a model file, so it may be anything (``"../../etc/x"``, ``"/tmp/y"``):
    every character but letters, digits, ``.``, ``_`` and ``-`` becomes ``_`` and leading dots
    go, so the files a report writes always land inside ``--out``.
    """
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)).lstrip(".")
    return stem or "model"


def refuse_symlinks(paths: Sequence[Path]) -> None:
    """Refuse to write through a symbolic link (or into anything but a regular file) planted
    where an output file goes: :func:`qnmodel._files.check_outputs`."""
    check_outputs(paths)


def write_model_report(
    spec: modelfile.ModelSpec,
    out_dir: str | os.PathLike,
    *,
    measured: Any = None,
    model_text: str | None = None,
) -> dict[str, Path]:
    """Solve a single-class model file and write its report into ``out_dir``.

    Writes ``<name>.csv`` and ``<name>.json`` (the solution), ``<name>_bounds.png``
    (bounds, exact MVA and the measured points), ``<name>_utilization.png``,
    ``<name>.md`` and, given ``model_text``, ``<name>.toml``. ``measured``
    (columns ``n``, ``throughput`` and/or ``response_time``) adds the
    point-by-point comparison (:func:`~qnmodel.calibration.comparison.compare`).

    Returns
    -------
    dict
        Paths written: ``model`` (with ``model_text``), ``csv``, ``markdown``,
        ``html`` (the same report as one self-contained page), ``json``, ``plot``,
        ``utilization``.
    """
    out = output_dir(out_dir)
    sol = spec.solve()
    comparison = compare(spec.network, measured) if measured is not None else None
    stem = output_stem(spec.name)
    paths: dict[str, Path] = {}
    if model_text is not None:
        paths["model"] = out / f"{stem}.toml"
        refuse_symlinks([paths["model"]])
    paths.update(
        {
            "csv": out / f"{stem}.csv",
            "markdown": out / f"{stem}.md",
            "json": out / f"{stem}.json",
            "plot": out / f"{stem}_bounds.png",
            "utilization": out / f"{stem}_utilization.png",
        }
    )
    refuse_symlinks([*paths.values(), out / f"{stem}.html"])
    if model_text is not None:
        write_output(paths["model"], model_text)
    with open_output(paths["csv"], newline="") as fh:
        write_csv(sol.to_frame(), fh)
    with open_output(paths["json"]) as fh:
        write_json(sol.to_dict(), fh)
    save_bounds_figure(
        spec.network,
        spec.max_population,
        paths["plot"],
        measured,
        title=model_figure_title(spec),
    )
    save_utilization_figure(sol, paths["utilization"])
    write_output(paths["markdown"], model_report(sol, paths, comparison))
    paths["html"] = write_html(paths["markdown"])
    return paths


def write_report(
    comparison: Comparison,
    out_dir: str | os.PathLike,
    *,
    plot: Callable[..., Any] | None = None,
    title: str = "Calibrated model vs measurement",
    name: str = "report",
    sections: tuple[str, ...] = (),
) -> Path:
    """Write ``<name>.md`` and ``<name>.png`` (bounds band with measured points) into ``out_dir``.

    ``plot(net, N, measured) -> axes`` draws the figure when given; by default
    :func:`qnmodel.reporting.plotting.bounds_vs_measured` on a pyplot-free figure.
    ``sections`` are extra Markdown blocks appended to the report.
    Returns the path of the Markdown file.
    """
    out = output_dir(out_dir)
    png = out / f"{name}.png"
    md = out / f"{name}.md"
    check_outputs([png, md, md.with_suffix(".html")])
    c = comparison
    if plot is None:
        save_bounds_figure(c.network, c.n_max, png, c.measured, dpi=110)
    else:
        axes = plot(c.network, c.n_max, c.measured)
        fig = np.asarray(axes, dtype=object).ravel()[0].figure
        save_figure(fig, png, dpi=110)
        if "matplotlib.pyplot" in sys.modules:  # a pyplot figure: do not leave it open
            sys.modules["matplotlib.pyplot"].close(fig)

    b, B = c.bounds, c.band.upper()
    lines = [f"# {title}", ""]
    lines += [
        f"* **MAPE of exact MVA vs measured X(N)**: {c.mape_throughput:.2f}% "
        f"(response time R(N): {c.mape_response_time:.2f}%) over {len(c.table)} "
        f"populations N = {int(c.table['n'].min())}..{c.n_max}; errors are "
        "(model - measured) / measured",
        f"* **Measured points inside the {B} throughput band**: {c.coverage:.0%}; "
        f"{coverage_text(c)}; inside the ABA band: {c.coverage_aba:.0%}",
        f"* Model: {c.network!r}",
        f"* Bottleneck {b.bottleneck}, D = {format_quantity(b.total_demand, 'time')}, "
        f"D_max = {format_quantity(b.max_demand, 'time')}, Z = "
        f"{format_quantity(b.think_time, 'time')}, knee N* = {b.n_star:.3g}, saturation "
        f"X = {b.saturation_throughput:.5g}/s",
        *(f"* **Hint**: {h}" for h in c.hints),
        "",
        f"![bounds vs measured]({png.name})",
        "",
    ]
    if c.notes:
        lines += ["## How this was done", ""] + [f"* {n}" for n in c.notes] + [""]
    for nm, res in c.calibration.items():
        lines += [f"## Calibration: {nm}", "", "```", res.report(), "```", ""]
    lines += ["## Model vs measurement per population", "", comparison_table(c)]
    steady = c.measured.get("steady")
    if steady is not None and not bool(np.all(steady)):
        bad = c.measured.loc[~c.measured["steady"].astype(bool), "n"].tolist()
        lines += [
            f"Not steady by seed 003's rule (3 samples within 10% of their mean): N = {bad}; "
            "their averages include transients.",
            "",
        ]
    lines += list(sections)
    write_output(md, "\n".join(lines) + "\n")
    write_html(md)
    return md


# -- bottom-up check ------------------------------------------------------------------------------
def write_check_report(result: Any, out: str | os.PathLike, name: str = "check") -> Path:
    """``<name>.md`` (findings, the table of figures) and ``<name>.png`` into ``out``."""
    from . import plotting

    out = output_dir(out)
    png, md = out / f"{name}.png", out / f"{name}.md"
    check_outputs([png, md, md.with_suffix(".html")])
    fig = _figure(8.0, 4.2)
    plotting.check_figures(result, ax=fig.subplots())
    save_figure(fig, png, dpi=110)
    lines = ["# Bottom-up check", ""]
    if result.findings:
        lines += ["## Suspects", ""] + [f"* {f}" for f in result.findings] + [""]
    else:
        lines += ["No figure below its peak share or its peers' median.", ""]
    if result.incomplete:
        lines += ["## Incomplete", ""] + [f"* {i}" for i in result.incomplete] + [""]
    lines += [f"![bottom-up check]({png.name})", "", "## Figures", ""]
    headers = ["node", "figure", "measured", "peak", "of peak", "others' median", "ratio", "flag"]
    rows = [
        [
            r["node"],
            r["key"],
            fmt_g(r["measured"], 4),
            fmt_g(r["peak"], 4) if np.isfinite(r["peak"]) else "",
            f"{r['fraction_of_peak']:.2f}" if np.isfinite(r["fraction_of_peak"]) else "",
            fmt_g(r["median_others"], 4) if np.isfinite(r["median_others"]) else "",
            f"{r['ratio_to_others']:.2f}" if np.isfinite(r["ratio_to_others"]) else "",
            r["flag"],
        ]
        for r in result.rows
    ]
    lines.append(markdown_table(headers, rows))
    if getattr(result, "pair_rows", ()):
        lines += ["", "## Pairs of nodes", ""]
        pair_rows = [
            [
                r["a"],
                r["b"],
                fmt_g(r["bandwidth_B_s"], 4) if np.isfinite(r["bandwidth_B_s"]) else "",
                f"{r['ratio_to_median']:.2f}" if np.isfinite(r["ratio_to_median"]) else "",
                fmt_g(r["latency_s"], 3) if np.isfinite(r["latency_s"]) else "",
            ]
            for r in result.pair_rows
        ]
        lines.append(
            markdown_table(["a", "b", "bandwidth B/s", "of median", "latency s"], pair_rows)
        )
    write_output(md, "\n".join(lines) + "\n")
    write_html(md)
    return md


def calibrate_report(
    device_trace: Any,
    closed_trace: Any,
    out_dir: str | os.PathLike,
    *,
    plot: Callable[..., Any] | None = None,
    latency: str = "p50",
) -> Path:
    """:func:`~qnmodel.calibration.pipeline.calibrate_and_compare` then :func:`write_report`:
    the ``qnmodel calibrate`` job.

    ``device_trace`` and ``closed_trace`` are trace files (or loaded traces); returns the path
    of ``report.md`` in ``out_dir``.
    """
    cmp = calibrate_and_compare(device_trace, closed_trace, latency=latency)
    return write_report(cmp, out_dir, plot=plot)
