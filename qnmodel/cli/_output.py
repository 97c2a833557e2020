"""What the ``qnmodel`` command prints: aligned text tables, progress, and its exit codes."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Sequence

import numpy as np

from ..io import modelfile
from ..reporting.report import (
    column_widths,
    comparison_columns,
    fmt_g,
    fmt_time,
    solution_rows,
    thin_rows,
    time_unit,
    write_csv,
    write_json,
)
from ._base import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, PROG, UsageError, _Parser  # noqa: F401


def _text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = column_widths(headers, rows)
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines) + "\n"


class _Progress:
    """Progress on stderr: a live counter on a terminal, a few lines otherwise."""

    def __init__(self, total: int, label: str, stream=None, quiet: bool = False) -> None:
        self.total, self.label = max(int(total), 1), label
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.monotonic()
        self.last_decile = -1

    def update(self, done: int) -> None:
        if self.quiet:
            return
        frac = done / self.total
        elapsed = time.monotonic() - self.start
        if self.tty:
            self.stream.write(
                f"\r{self.label}: {done}/{self.total} ({100 * frac:3.0f}%) {elapsed:5.1f} s"
            )
            if done >= self.total:
                self.stream.write("\n")
            self.stream.flush()
        else:
            decile = int(10 * frac)
            if decile != self.last_decile and (decile % 5 == 0 or done >= self.total):
                self.last_decile = decile
                self.stream.write(f"{self.label}: {done}/{self.total} ({100 * frac:.0f}%)\n")


def _info(args: argparse.Namespace, message: str) -> None:
    """A message for the person at the terminal (progress, ``wrote <file>``): on stderr, so
    stdout holds only data, and silenced by ``-q``."""
    if not getattr(args, "quiet", False):
        print(message, file=sys.stderr)


def _model_text(sol: modelfile.ModelSolution) -> str:
    spec, summ = sol.spec, sol.summary()
    net = spec.network
    lines = [f"model {spec.name!r} ({spec.source})"]
    if spec.description:
        lines.append(f"  {spec.description}")
    st_rows = [[s.name, s.kind, str(s.servers), fmt_time(s.demand)] for s in net.stations]
    lines.append("")
    lines.append(_text_table(["station", "kind", "servers", "demand"], st_rows).rstrip())
    lines.append("")
    lines.append(
        f"think time Z = {fmt_time(net.think_time)}, "
        f"total demand D = {fmt_time(summ['total_demand'])}, "
        f"bottleneck = {summ['bottleneck']}, "
        f"saturation X = {fmt_g(summ['saturation_throughput'])} jobs/s, "
        f"N* = {fmt_g(summ['n_star'], 4)}"
    )
    return "\n".join(lines) + "\n"


def _multiclass_text(sol: modelfile.MultiClassSolution) -> str:
    spec, r, mc = sol.spec, sol.result, sol.spec.multiclass
    lines = [f"model {spec.name!r} ({spec.source}), {len(mc.class_names)} classes"]
    if spec.description:
        lines.append(f"  {spec.description}")
    headers = ["station", "discipline", "servers"] + [f"D {c}" for c in mc.class_names]
    rows = [
        [s.name, s.discipline, str(s.servers)]
        + [fmt_time(float(mc.demands[i, k])) for i in range(len(mc.class_names))]
        for k, s in enumerate(mc.stations)
    ]
    lines += ["", _text_table(headers, rows).rstrip(), ""]
    summ = sol.summary()
    lines.append(
        f"bottleneck = {summ['bottleneck']} (utilisation {summ['bottleneck_utilization']:.4g}), "
        f"total throughput = {fmt_g(summ['total_throughput'])} jobs/s"
    )
    lines.append(f"method = {r.method}")
    lines.append("")
    factor, unit = time_unit(r.response_time)
    f = sol.to_frame()
    if spec.is_open:  # open classes: the arrival rate in place of N and Z
        headers = ["class", "lambda [jobs/s]", "X [jobs/s]", f"R [{unit}]"]
        given = [[fmt_g(float(v))] for v in f["arrival_rate"]]
    else:
        headers = ["class", "N", "Z", "X [jobs/s]", f"R [{unit}]"]
        given = [
            [str(int(n)), fmt_time(float(z))] for n, z in zip(mc.N, mc.think_time, strict=True)
        ]
    rows = [
        [
            c,
            *given[i],
            fmt_g(float(f["throughput"][i])),
            fmt_g(float(f["response_time"][i]) * factor),
        ]  # fmt: skip
        for i, c in enumerate(mc.class_names)
    ]
    lines.append(_text_table(headers, rows).rstrip())
    return "\n".join(lines) + "\n"


def _single_class(spec: modelfile.ModelSpec, command: str) -> None:
    if spec.is_multiclass:
        raise modelfile.ModelFileError(
            spec.source,
            "class",
            None,
            f"'qnmodel {command}' draws single-class models (bounds vs n); this model has "
            f"classes {list(spec.multiclass.class_names)}: use 'qnmodel solve'",
        )


def _closed(spec: modelfile.ModelSpec, command: str) -> None:
    if spec.is_open:
        raise modelfile.ModelFileError(
            spec.source,
            "model.arrival_rate",
            None,
            f"'qnmodel {command}' draws closed models (bounds vs n); this model is open "
            "(arrival_rate): use 'qnmodel solve'",
        )


def _open_text(sol) -> str:
    spec, summ, r = sol.spec, sol.summary(), sol.result
    lines = [f"model {spec.name!r} ({spec.source}), open"]
    if spec.description:
        lines.append(f"  {spec.description}")
    st_rows = [[s.name, s.kind, str(s.servers), fmt_time(s.demand)] for s in spec.network.stations]
    lines += ["", _text_table(["station", "kind", "servers", "demand"], st_rows).rstrip(), ""]
    lines.append(
        f"total demand D = {fmt_time(summ['total_demand'])}, bottleneck = {summ['bottleneck']}, "
        f"saturation arrival rate = {fmt_g(summ['saturation_arrival_rate'])} jobs/s"
    )
    lines.append("")
    finite = r.response_time[np.isfinite(r.response_time)]
    factor, unit = time_unit(float(finite.max()) if finite.size else 1.0)
    rows = [
        [fmt_g(float(lam)), fmt_g(float(R) * factor) if np.isfinite(R) else "inf (unstable)",
         fmt_g(float(np.max(u)))]
        for lam, R, u in zip(r.arrival_rate, r.response_time, r.utilization, strict=True)
    ]  # fmt: skip
    lines.append(_text_table(["lambda [jobs/s]", f"R [{unit}]", "max U"], rows).rstrip())
    return "\n".join(lines) + "\n"


def _emit_solution(sol, fmt: str, stream) -> None:
    if fmt == "json":
        write_json(sol.to_dict(), stream)
    elif fmt == "csv":
        write_csv(sol.to_frame(), stream)
    elif isinstance(sol, modelfile.MultiClassSolution):
        stream.write(_multiclass_text(sol))
    elif isinstance(sol, modelfile.OpenModelSolution):
        stream.write(_open_text(sol))
    else:
        count = sol.spec.populations.size
        shown = thin_rows(sol.spec.populations)
        headers, rows, _ = solution_rows(sol, shown)
        stream.write(_model_text(sol))
        stream.write("\n")
        stream.write(_text_table(headers, rows))
        if shown.size < count:
            stream.write(
                f"({shown.size} of {count} populations shown; choose others with "
                "--populations, e.g. --populations 1,10,100,1000 or START:STOP:STEP; "
                "--format csv or --format json prints every one)\n"
            )


def _unit_table(frame) -> str:
    """An aligned table whose throughput and time columns carry their unit in the header.

    Throughputs are jobs/s; every column of times (``response_time``, ``think_time``,
    and their bounds and errors) is drawn in one unit, ms or s, chosen from the largest.
    """
    times = [
        c
        for c in frame.columns
        if ("response_time" in c and not c.endswith("_pct")) or c == "think_time"
    ]
    top = max((float(np.nanmax(np.abs(frame[c]))) for c in times), default=0.0)
    factor, unit = time_unit(top)
    headers, cols = [], []
    for c in frame.columns:
        if c in times:
            headers.append(f"{c} [{unit}]")
            cols.append(frame[c] * factor)
        elif c.endswith("_pct"):
            headers.append(f"{c} [%]")
            cols.append(frame[c])
        elif "throughput" in c:
            headers.append(f"{c} [jobs/s]")
            cols.append(frame[c])
        else:
            headers.append(str(c))
            cols.append(frame[c])
    rows = [
        [fmt_g(v) if isinstance(v, float) else str(v) for v in rec]
        for rec in zip(*(col.tolist() for col in cols), strict=True)
    ]
    return _text_table(headers, rows)


def _fitting_table(cols: dict[str, list[str]], keys: list[str], optional: list[str],
                   width: int) -> str:  # fmt: skip
    """The aligned table of ``keys`` (those present), leaving out the ``optional`` ones when
    the table would be wider than ``width`` characters."""
    keys = [k for k in keys if k in cols]
    text = _text_table(keys, [list(r) for r in zip(*(cols[k] for k in keys), strict=True)])
    if max(len(line) for line in text.splitlines()) <= width:
        return text
    keys = [k for k in keys if k not in optional]
    return _text_table(keys, [list(r) for r in zip(*(cols[k] for k in keys), strict=True)])


def _calibration_text(cmp) -> str:
    """``qnmodel calibrate``'s table output: the fitted parameters with their standard errors
    and intervals, the model, and the comparison as two tables no wider than the terminal
    (every column: ``--format csv``/``json``, or the report with ``--out``)."""
    width = shutil.get_terminal_size((100, 24)).columns
    levels = sorted({f"{fit.ci_level:.0%}" for fit in cmp.calibration.values()})
    lines = [f"{cmp!r}", "", f"fitted: value +/- standard error [{', '.join(levels)} interval]"]
    for name, fit in cmp.calibration.items():
        head = "device, t = a + B/r" if name == "device" else name
        facts = [f"{fit.extra[k]} latency" for k in ("latency_statistic",) if k in fit.extra]
        if "size_range_text" in fit.extra:
            facts.append(f"sizes {fit.extra['size_range_text']}")
        lines.append(f"  {head}" + (f" ({', '.join(facts)})" if facts else "") + ":")
        lines += [f"    {line}" for line in fit.parameter_lines()]
    lines += [f"model: {cmp.network!r}", ""]
    cols = comparison_columns(cmp)
    B = cmp.band.upper()
    bounds = [f"X {B} lower", f"X {B} upper"]
    x_keys = ["n", "X meas [jobs/s]", "+/-", "X MVA", *bounds, "X err %", f"in {B}",
              f"bar meets {B}"]  # fmt: skip
    r_keys = ["n"] + [k for k in cols if k.startswith("R ")]
    parts = ["\n".join(lines) + "\n"]
    if len(x_keys) > 1 and x_keys[1] in cols:
        parts.append(_fitting_table(cols, x_keys, bounds, width))
    if len(r_keys) > 1:
        parts.append("\n" + _fitting_table(cols, r_keys, [], width))
    parts.append(
        "\n(errors are (model - measured) / measured; every column: --format csv or json;\n"
        " a report with the figure: --out DIR)\n"
    )
    return "".join(parts)
