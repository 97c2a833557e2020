"""The ``qnmodel`` command.

Sub-commands
------------
``demo``       the main job: measure -> calibrate -> compare with qnbench on this machine,
               then solve the networked-RAID test bed of Cui et al. (2006) and the demo model
``solve``      bounds and exact MVA of a TOML model file
``sweep``      what-if grid over model-file values (tidy table)
``plot``       bounds band + exact MVA (+ measured points) and utilisation, as PNG/SVG/PDF
``report``     a Markdown report: model, bottleneck, table, plots
``bench``      run the bundled qnbench microbenchmark (over :func:`qnmodel.bench.run`)
``calibrate``  fit a model from qnbench traces and compare it with the measured curve

Conventions: data (table, CSV or JSON) goes to stdout and JSON output is
alone there; progress and diagnostics go to stderr. Exit status 0 on
success, 1 when the work fails (a bad model file, a solver error, an I/O
error), 2 for a command-line usage error. Errors are one line on stderr;
``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import modelfile
from .errors import BenchError, InvalidModelError, InvalidTypeError, QNModelError
from .units import format_quantity

__all__ = ["main", "run_offline_demo", "build_parser"]

PROG = "qnmodel"
EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A command-line mistake: exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")


# -- output helpers --------------------------------------------------------------------------
def _finite_or_none(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite_or_none(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_finite_or_none(x) for x in v]
    return v


def _float_or_none(v: Any) -> float | None:
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _write_json(doc: dict, stream) -> None:
    json.dump(_finite_or_none(doc), stream, indent=2, allow_nan=False)
    stream.write("\n")


def _write_csv(frame, stream) -> None:
    frame.to_csv(stream, index=False, lineterminator="\n")


def _markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"]
    out.append("|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|")
    for r in rows:
        out.append("| " + " | ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + " |")
    return "\n".join(out) + "\n"


def _text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines) + "\n"


def _time(v: float) -> str:
    return "0 s" if v == 0 else format_quantity(v, "time")


def _g(v: float, digits: int = 5) -> str:
    return "inf" if not math.isfinite(v) else f"{v:.{digits}g}"


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
    if not getattr(args, "quiet", False):
        print(message, file=sys.stderr)


# -- solution rendering ----------------------------------------------------------------------
def _solution_rows(sol: modelfile.ModelSolution) -> tuple[list[str], list[list[str]], str]:
    frame = sol.to_frame()
    factor, unit = 1e3, "ms"
    if float(np.nanmax(frame["response_time"])) >= 1.0:
        factor, unit = 1.0, "s"
    has_bjb = sol.bjb is not None
    b = "bjb" if has_bjb else "aba"
    headers = [
        "n",
        "X [jobs/s]",
        f"X {b.upper()} lower",
        f"X {b.upper()} upper",
        f"R [{unit}]",
        f"R {b.upper()} lower",
        f"R {b.upper()} upper",
    ]
    rows = []
    for rec in frame.to_dict(orient="records"):
        rows.append(
            [
                str(int(rec["n"])),
                _g(rec["throughput"]),
                _g(rec[f"throughput_{b}_lower"]),
                _g(rec[f"throughput_{b}_upper"]),
                _g(rec["response_time"] * factor),
                _g(rec[f"response_time_{b}_lower"] * factor),
                _g(rec[f"response_time_{b}_upper"] * factor),
            ]
        )
    return headers, rows, unit


def _model_text(sol: modelfile.ModelSolution) -> str:
    spec, summ = sol.spec, sol.summary()
    net = spec.network
    lines = [f"model {spec.name!r} ({spec.source})"]
    if spec.description:
        lines.append(f"  {spec.description}")
    st_rows = [[s.name, s.kind, str(s.servers), _time(s.demand)] for s in net.stations]
    lines.append("")
    lines.append(_text_table(["station", "kind", "servers", "demand"], st_rows).rstrip())
    lines.append("")
    lines.append(
        f"think time Z = {_time(net.think_time)}, "
        f"total demand D = {_time(summ['total_demand'])}, "
        f"bottleneck = {summ['bottleneck']}, "
        f"saturation X = {_g(summ['saturation_throughput'])} jobs/s, "
        f"N* = {_g(summ['n_star'], 4)}"
    )
    return "\n".join(lines) + "\n"


def _multiclass_text(sol: modelfile.MultiClassSolution) -> str:
    spec, r, mc = sol.spec, sol.result, sol.spec.multiclass
    lines = [f"model {spec.name!r} ({spec.source}), {len(mc.classes)} classes"]
    if spec.description:
        lines.append(f"  {spec.description}")
    headers = ["station", "kind", "servers"] + [f"D {c}" for c in mc.classes]
    rows = [
        [s.name, s.kind, str(s.servers)]
        + [_time(float(mc.demands[i, k])) for i in range(len(mc.classes))]
        for k, s in enumerate(spec.network.stations)
    ]
    lines += ["", _text_table(headers, rows).rstrip(), ""]
    summ = sol.summary()
    lines.append(
        f"bottleneck = {summ['bottleneck']} (utilisation {summ['bottleneck_utilization']:.4g}), "
        f"total throughput = {_g(summ['total_throughput'])} jobs/s"
    )
    lines.append("")
    factor, unit = (1.0, "s") if float(np.max(r.response_time)) >= 1.0 else (1e3, "ms")
    headers = ["class", "N", "Z", "X [jobs/s]", f"R [{unit}]"]
    rows = [
        [
            c,
            str(int(mc.population[i])),
            _time(float(mc.think_time[i])),
            _g(float(r.throughput[i])),
            _g(float(r.response_time[i]) * factor),
        ]
        for i, c in enumerate(mc.classes)
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
            f"classes {list(spec.multiclass.classes)}: use 'qnmodel solve'",
        )


def _emit_solution(sol, fmt: str, stream) -> None:
    if fmt == "json":
        _write_json(sol.to_dict(), stream)
    elif fmt == "csv":
        _write_csv(sol.to_frame(), stream)
    elif isinstance(sol, modelfile.MultiClassSolution):
        stream.write(_multiclass_text(sol))
    else:
        headers, rows, _ = _solution_rows(sol)
        stream.write(_model_text(sol))
        stream.write("\n")
        stream.write(_text_table(headers, rows))


# -- figures -----------------------------------------------------------------------------------
def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig


def _save_bounds_figure(
    spec: modelfile.ModelSpec, path: Path, measured: Any = None, dpi: int = 120
) -> Path:
    from . import plotting
    from .solvers import bounds

    b = bounds(spec.network, spec.max_population, method="aba")
    fig = _figure(10.0, 4.0)
    axes = fig.subplots(1, 2)
    # The title names the model: a saved image is read without the command that made it.
    title = (
        f"{spec.name}: bottleneck {b.bottleneck}, N* = {b.n_star:.3g}, "
        f"X_max = {b.saturation_throughput:.4g} jobs/s"
    )
    plotting.bounds_vs_measured(spec.network, spec.max_population, measured, axes=axes, title=title)
    fig.savefig(path, dpi=dpi)
    return path


def _save_utilization_figure(sol: modelfile.ModelSolution, path: Path, dpi: int = 120) -> Path:
    from . import plotting

    fig = _figure(7.5, 4.0)  # room for the legend beside the axes
    ax = fig.subplots()
    plotting.utilization(sol.mva, network=sol.spec.network, ax=ax, n_star=sol.aba.n_star)
    ax.set_title(f"{sol.spec.name}: {ax.get_title()}")
    fig.savefig(path, dpi=dpi)
    return path


# -- demo ---------------------------------------------------------------------------------------
def run_offline_demo(
    out_dir: str | os.PathLike,
    model: str | os.PathLike | None = None,
    *,
    model_text: str | None = None,
) -> dict:
    """Solve a storage model and write its table and plots (no measurement).

    Parameters
    ----------
    out_dir : path
        Directory to write into (created if needed).
    model : path, optional
        A TOML model file; the bundled demo storage system when omitted
        (:data:`qnmodel.modelfile.DEMO_MODEL_TOML`, also shipped as
        ``examples/demo_storage.toml``).
    model_text : str, optional
        The TOML text of a model, instead of a file (e.g.
        :data:`qnmodel.modelfile.PAPER_MODEL_TOML`).

    Returns
    -------
    dict
        Paths written: ``model``, ``csv``, ``markdown``, ``json``, ``plot``,
        ``utilization``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if model_text is not None:
        spec = modelfile.loads(model_text, source="<model text>", default_name="model")
        text = model_text
    elif model is None:
        spec = modelfile.loads(
            modelfile.DEMO_MODEL_TOML, source="demo_storage.toml", default_name="demo-storage"
        )
        text = modelfile.DEMO_MODEL_TOML
    else:
        spec = modelfile.load(model)
        text = Path(model).read_text(encoding="utf-8")
    sol = spec.solve()
    stem = spec.name.replace(" ", "_")
    paths = {
        "model": out / f"{stem}.toml",
        "csv": out / f"{stem}.csv",
        "markdown": out / f"{stem}.md",
        "json": out / f"{stem}.json",
        "plot": out / f"{stem}_bounds.png",
        "utilization": out / f"{stem}_utilization.png",
    }
    paths["model"].write_text(text, encoding="utf-8")
    with paths["csv"].open("w", encoding="utf-8", newline="") as fh:
        _write_csv(sol.to_frame(), fh)
    with paths["json"].open("w", encoding="utf-8") as fh:
        _write_json(sol.to_dict(), fh)
    paths["markdown"].write_text(_markdown_report(sol, paths), encoding="utf-8")
    _save_bounds_figure(spec, paths["plot"])
    _save_utilization_figure(sol, paths["utilization"])
    return {k: str(v) for k, v in paths.items()}


def _measured_section(spec: modelfile.ModelSpec, measured) -> str:
    """Markdown: the measured points against exact MVA and the bounds, point by point."""
    from .solvers import bounds, mva

    net = spec.network
    n = np.asarray(measured["n"], dtype=np.int64)
    if n.size == 0 or np.any(n < 1) or np.any(n != np.asarray(measured["n"], dtype=float)):
        raise InvalidModelError(
            f"measured populations n must be integers >= 1, got {list(measured['n'])}"
        )
    N = int(n.max())
    method = "aba" if net.has_multiserver else "bjb"
    b, r = bounds(net, N, method=method), mva(net, N)
    i = n - 1
    cols = set(measured.columns)
    has_x, has_r = "throughput" in cols, "response_time" in cols
    r_all = [r.response_time[i]] + ([measured["response_time"].to_numpy()] if has_r else [])
    factor, unit = (1.0, "s") if float(np.nanmax(np.concatenate(r_all))) >= 1.0 else (1e3, "ms")
    m = method.upper()
    headers = ["n"]
    if has_x:
        headers += ["X meas [jobs/s]", "+/-", "X MVA", f"X {m} lower", f"X {m} upper", "X err %"]
        headers += [f"in {m}"]
    if has_r:
        headers += [f"R meas [{unit}]", f"R MVA [{unit}]", "R err %"]
    rows, inside, ex, er = [], 0, [], []
    for j, k in enumerate(i):
        row = [str(int(n[j]))]
        if has_x:
            x = float(measured["throughput"].iloc[j])
            err = float(measured["throughput_err"].iloc[j]) if "throughput_err" in cols else 0.0
            err = 0.0 if not math.isfinite(err) else err
            lo, hi = float(b.throughput_lower[k]), float(b.throughput_upper[k])
            ok = lo <= x + err and x - err <= hi
            inside += ok
            e = (x / float(r.throughput[k]) - 1.0) * 100.0
            ex.append(abs(e))
            row += [_g(x), _g(err, 2), _g(float(r.throughput[k])), _g(lo), _g(hi)]
            row += [f"{e:+.1f}", "yes" if ok else "no"]
        if has_r:
            rm = float(measured["response_time"].iloc[j])
            e = (rm / float(r.response_time[k]) - 1.0) * 100.0
            er.append(abs(e))
            row += [_g(rm * factor), _g(float(r.response_time[k]) * factor), f"{e:+.1f}"]
        rows.append(row)
    lines = ["\n## Measured against the model\n\n"]
    summary = []
    if has_x:
        summary.append(f"mean absolute error of X: {np.mean(ex):.1f}%")
        summary.append(
            f"{inside} of {n.size} measured throughputs inside the {m} band "
            "(within their error bar)"
        )
    if has_r:
        summary.append(f"mean absolute error of R: {np.mean(er):.1f}%")
    lines.append("; ".join(summary) + ".\n\n")
    lines.append(_markdown_table(headers, rows))
    return "".join(lines)


def _markdown_report(sol: modelfile.ModelSolution, paths: dict | None = None, measured=None) -> str:
    spec, summ = sol.spec, sol.summary()
    net = spec.network
    parts = [f"# {spec.name}\n\n"]
    if spec.description:
        parts.append(f"{spec.description}\n\n")
    parts.append(f"Model file: `{spec.source}`\n\n")
    parts.append("## Stations\n\n")
    parts.append(
        _markdown_table(
            ["station", "kind", "servers", "demand"],
            [[s.name, s.kind, str(s.servers), _time(s.demand)] for s in net.stations],
        )
    )
    parts.append(
        f"\nThink time Z = {_time(net.think_time)}; total demand "
        f"D = {_time(summ['total_demand'])}; bottleneck "
        f"**{summ['bottleneck']}**; saturation throughput 1/D_max = "
        f"{_g(summ['saturation_throughput'])} jobs/s; knee N* = {_g(summ['n_star'], 4)}.\n"
    )
    parts.append("\n## Bounds and exact MVA\n\n")
    parts.append(
        "X: throughput (jobs/s); R: response time, think time excluded. Lower and upper are "
        "the balanced job bounds (BJB; asymptotic bounds, ABA, when a station has several "
        "servers); the CSV holds both.\n\n"
    )
    headers, rows, _ = _solution_rows(sol)
    parts.append(_markdown_table(headers, rows))
    if measured is not None:
        parts.append(_measured_section(spec, measured))
    if paths:
        parts.append("\n## Plots\n")
        for key in ("plot", "utilization"):
            if key in paths:
                name = Path(paths[key]).name
                parts.append(f"\n![{key}]({name})\n")
    return "".join(parts)


def _run_default_demo(out_dir: Path, args: argparse.Namespace) -> dict:
    """What ``qnmodel demo`` does without ``--offline``: the main job.

    1. measure this machine with qnbench (bottom-up device sweep and a separate
       end-to-end closed loop), calibrate, predict bounds and the MVA curve, and
       compare with the measured curve (:func:`_run_calibration_demo`);
    2. solve the networked-RAID test bed of Cui et al. (2006) and the bundled
       demo storage model, writing their tables and bounds-and-MVA plots.
    """
    paths = {}
    _info(args, "[1/3] measure -> calibrate -> predict -> compare (qnbench on this machine)")
    paths.update(_run_calibration_demo(out_dir, args))
    _info(args, "[2/3] solving the networked-RAID test bed of Cui et al. (2006)")
    paper = run_offline_demo(out_dir, model_text=modelfile.PAPER_MODEL_TOML)
    paths.update({f"paper_{k}": v for k, v in paper.items()})
    _info(args, "[3/3] solving the bundled demo storage model")
    demo = run_offline_demo(out_dir)
    paths.update({f"model_{k}": v for k, v in demo.items()})
    return paths


def _cmd_demo(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if args.offline or args.model is not None:
        _info(args, "solving the demo storage model (bounds and exact MVA) ...")
        paths = run_offline_demo(out, model=args.model)
    else:
        paths = _run_default_demo(out, args)
    for key, p in paths.items():
        print(f"wrote {key:18s} {p}")
    return EXIT_OK


# -- solve ----------------------------------------------------------------------------------------
def _override(spec: modelfile.ModelSpec, values: dict[str, Any], given: str):
    """``with_values``, with a bad value reported as the command-line mistake it is."""
    try:
        return modelfile.with_values(spec, values)
    except modelfile.ModelFileError as exc:
        raise UsageError(f"{given}: {exc.key}: {exc.reason}") from exc
    except (InvalidModelError, TypeError) as exc:
        raise UsageError(f"{given}: {exc}") from exc


def _load_with_overrides(args: argparse.Namespace) -> modelfile.ModelSpec:
    spec = modelfile.load(args.model)
    values: dict[str, Any] = {}
    given = []
    if getattr(args, "population", None) is not None:
        if spec.is_multiclass:
            first = spec.multiclass.classes[0]
            raise UsageError(
                f"-N sets the population of a single-class model; this one has classes "
                f"{list(spec.multiclass.classes)}: use --set class.{first}.population=N"
            )
        values["population"] = args.population
        given.append(f"-N {args.population}")
    for item in getattr(args, "set", None) or []:
        key, value = _parse_assignment(item, "--set")
        values[key] = value
        given.append(f"--set {item}")
    return _override(spec, values, ", ".join(given)) if values else spec


def _parse_scalar(text: str) -> Any:
    """A command-line value as the model file would hold it.

    Read as a TOML value first (``3``, ``0.25``, ``true``, ``[1, 10, 100]``,
    ``{ read = 0.4, write = 1 }``, ``"4.9 ms"``); anything else is a bare
    string (``4.9 ms``, ``100 Mbit/s``).
    """
    t = text.strip()
    try:
        return tomllib.loads(f"v = {t}")["v"]
    except tomllib.TOMLDecodeError:
        return t


def _parse_assignment(item: str, option: str) -> tuple[str, Any]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise UsageError(
            f"{option} expects KEY=VALUE (e.g. disk.service_time='5 ms'), got {item!r}"
        )
    return key.strip(), _parse_scalar(value)


def _cmd_solve(args: argparse.Namespace) -> int:
    sol = _load_with_overrides(args).solve()
    _emit_solution(sol, args.format, sys.stdout)
    return EXIT_OK


# -- sweep ----------------------------------------------------------------------------------------
def _parse_vary(item: str) -> tuple[str, list[Any]]:
    key, sep, values = item.partition("=")
    if not sep or not key.strip() or not values.strip():
        raise UsageError(
            f"--vary expects KEY=V1,V2,... (e.g. network.rate='100 Mbit/s,1 Gbit/s'), got {item!r}"
        )
    vals = [_parse_scalar(v) for v in values.split(",") if v.strip()]
    if not vals:
        raise UsageError(f"--vary {key}: no values given")
    return key.strip(), vals


def sweep_model(
    spec: modelfile.ModelSpec,
    grid: dict[str, list[Any]],
    progress: Callable[[int], None] | None = None,
):
    """Solve a model at every point of a grid of model-file values.

    Returns a tidy DataFrame: one column per varied key (as given), then
    ``bottleneck, n, throughput, response_time`` (exact MVA at the model's
    populations), one row per grid point and population; for a multi-class
    model ``class, population`` replace ``n``, one row per grid point and class.
    """
    import pandas as pd

    keys = list(grid)
    frames = []
    combos = list(itertools.product(*(grid[k] for k in keys)))
    for i, combo in enumerate(combos, start=1):
        point = dict(zip(keys, combo, strict=True))
        s = modelfile.with_values(spec, point)
        res = s.solve()
        if isinstance(res, modelfile.MultiClassSolution):
            f = res.to_frame()[["class", "population", "throughput", "response_time"]]
        else:
            f = res.to_frame()[["n", "throughput", "response_time"]]
        f.insert(0, "bottleneck", res.summary()["bottleneck"])
        for k in reversed(keys):
            f.insert(0, k, [point[k]] * len(f))
        frames.append(f)
        if progress is not None:
            progress(i)
    return pd.concat(frames, ignore_index=True)


def _cmd_sweep(args: argparse.Namespace) -> int:
    spec = _load_with_overrides(args)
    grid = dict(_parse_vary(v) for v in args.vary)
    for key, values in grid.items():  # every value valid before the first solve
        for v in values:
            _override(spec, {key: v}, f"--vary {key}={v}")
    total = math.prod(len(v) for v in grid.values())
    bar = _Progress(total, "sweep", quiet=args.quiet or total < 20)
    frame = sweep_model(spec, grid, progress=bar.update)
    if args.format == "json":
        _write_json(
            {
                "schema": "qnmodel.sweep",
                "schema_version": 1,
                "model": spec.name,
                "source": spec.source,
                "vary": grid,
                "results": _finite_or_none(frame.to_dict(orient="records")),
            },
            sys.stdout,
        )
    elif args.format == "csv":
        _write_csv(frame, sys.stdout)
    else:
        sys.stdout.write(_unit_table(frame))
    return EXIT_OK


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
    factor, unit = (1.0, "s") if top >= 1.0 else (1e3, "ms")
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
        [_g(v) if isinstance(v, float) else str(v) for v in rec]
        for rec in zip(*(col.tolist() for col in cols), strict=True)
    ]
    return _text_table(headers, rows)


# -- plot -----------------------------------------------------------------------------------------
def _read_measured(path: str):
    """Measured points from a CSV, or from a qnbench closed-loop trace (JSON)."""
    import pandas as pd

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such measurement file")
    if p.suffix.lower() == ".json":
        # A `qnmodel bench ... --out FILE.json` closed loop: one point per client count,
        # X with its confidence half-width from the per-interval samples, R = mean latency.
        from .calibration.pipeline import measured_curve

        return measured_curve(p)
    try:
        frame = pd.read_csv(p)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InvalidModelError(
            f"{p}: not a CSV of measured points (columns n, throughput, response_time) "
            f"nor a qnbench .json trace: {exc}"
        ) from None
    cols = set(frame.columns)
    if "n" not in cols or not ({"throughput", "response_time"} & cols):
        raise InvalidModelError(
            f"{p}: a measurement CSV needs columns n and throughput and/or response_time "
            f"(optionally throughput_err, response_time_err); it has {list(frame.columns)}"
        )
    return frame


def _cmd_plot(args: argparse.Namespace) -> int:
    spec = _load_with_overrides(args)
    _single_class(spec, "plot")
    out = Path(args.out)
    if out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise UsageError(f"--out must end in .png, .svg or .pdf, got {str(out)!r}")
    out.parent.mkdir(parents=True, exist_ok=True)
    measured = _read_measured(args.measured) if args.measured else None
    written = [_save_bounds_figure(spec, out, measured=measured)]
    if args.utilization:
        u_path = out.with_name(out.stem + "_utilization" + out.suffix)
        written.append(_save_utilization_figure(spec.solve(), u_path))
    for p in written:
        print(f"wrote {p}")
    return EXIT_OK


# -- report ---------------------------------------------------------------------------------------
def _cmd_report(args: argparse.Namespace) -> int:
    spec = _load_with_overrides(args)
    _single_class(spec, "report")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sol = spec.solve()
    stem = spec.name.replace(" ", "_")
    measured = _read_measured(args.measured) if args.measured else None
    paths = {
        "plot": out / f"{stem}_bounds.png",
        "utilization": out / f"{stem}_utilization.png",
        "csv": out / f"{stem}.csv",
    }
    _save_bounds_figure(spec, paths["plot"], measured=measured)
    _save_utilization_figure(sol, paths["utilization"])
    with paths["csv"].open("w", encoding="utf-8", newline="") as fh:
        _write_csv(sol.to_frame(), fh)
    report = out / f"{stem}.md"
    report.write_text(_markdown_report(sol, paths, measured), encoding="utf-8")
    print(f"wrote {report}")
    return EXIT_OK


# -- bench --------------------------------------------------------------------------------------
_BENCH_COLUMNS = (
    "point",
    "jobs",
    "bs_bytes",
    "op",
    "throughput_ops_s",
    "throughput_B_s",
    "latency_mean_s",
    "latency_p99_s",
)
_BENCH_LISTS = {"jobs", "bs", "mem_op", "cpu_op"}


def _bench_options(items: Sequence[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for item in items:
        key, value = _parse_assignment(item, "an option")
        key = key.replace("-", "_")
        if key in options:
            raise UsageError(f"option {key!r} given twice")
        if key in _BENCH_LISTS and isinstance(value, str) and "," in value:
            value = [_parse_scalar(v) for v in value.split(",") if v.strip()]
        options[key] = value
    return options


def _cmd_bench(args: argparse.Namespace) -> int:
    from . import bench

    options = _bench_options(args.options)
    _info(args, f"running qnbench {args.engine} ...")
    try:
        trace = bench.run(
            args.engine,
            progress=not args.quiet,
            timeout=args.timeout,
            executable_path=args.qnbench,
            **options,
        )
    except BenchError as exc:
        if str(exc).startswith("qnbench rejected the options"):
            raise UsageError(str(exc)) from None
        raise
    except (InvalidModelError, InvalidTypeError) as exc:  # an option value (unit, domain)
        raise UsageError(str(exc)) from exc
    if args.out:
        path = trace.save(args.out)
        _info(args, f"wrote {path}")
    if args.format == "json":
        _write_json(trace.document, sys.stdout)
        return EXIT_OK
    frame = trace.to_frame()
    if args.format == "csv":
        _write_csv(frame, sys.stdout)
        return EXIT_OK
    cols = [c for c in _BENCH_COLUMNS if c in frame.columns]
    headers = [c for c in cols]
    rows = [
        [_g(v) if isinstance(v, float) else str(v) for v in rec]
        for rec in frame[cols].itertuples(index=False)
    ]
    sys.stdout.write(
        f"qnbench {trace.engine} on {trace.host.get('hostname', '?')}"
        f"{'' if trace.complete else ' (INCOMPLETE)'}\n\n"
    )
    sys.stdout.write(_text_table(headers, rows))
    return EXIT_OK


# -- calibrate ------------------------------------------------------------------------------------
def _run_calibration_demo(out_dir: Path, args: argparse.Namespace) -> dict:
    """Measure this machine with qnbench, calibrate, predict, compare (the full demo)."""
    from . import plotting
    from .calibration import run_demo

    report = run_demo(out_dir, progress=not args.quiet, plot=plotting.bounds_vs_measured)
    return {"report": str(report)}


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from . import plotting
    from .calibration import calibrate_and_compare
    from .calibration.pipeline import write_report

    if args.demo:
        if args.device_trace or args.closed_trace:
            raise UsageError("--demo measures by itself: give no trace files with it")
        if not args.out:
            raise UsageError("--demo needs --out DIR for its report")
        paths = _run_calibration_demo(Path(args.out), args)
        for key, p in paths.items():
            print(f"wrote {key:18s} {p}")
        return EXIT_OK
    if not (args.device_trace and args.closed_trace):
        raise UsageError(
            "give DEVICE_TRACE and CLOSED_TRACE (qnbench JSON files), or --demo --out DIR"
        )
    for p in (args.device_trace, args.closed_trace):
        if not Path(p).exists():
            raise FileNotFoundError(f"{p}: no such trace file")
    _info(args, "calibrating the device from its size sweep, comparing with the closed loop ...")
    cmp = calibrate_and_compare(args.device_trace, args.closed_trace)
    if args.out:
        report = write_report(cmp, args.out, plot=plotting.bounds_vs_measured)
        _info(args, f"wrote {report}")
    if args.format == "json":
        fit = cmp.calibration["device"]
        _write_json(
            {
                "schema": "qnmodel.calibrate",
                "schema_version": 1,
                "device_trace": str(args.device_trace),
                "closed_trace": str(args.closed_trace),
                "parameters": {
                    k: {"value": float(v), "stderr": _float_or_none(fit.stderr.get(k))}
                    for k, v in fit.values.items()
                },
                "network": {
                    "stations": [
                        {"name": s.name, "demand": float(s.demand)} for s in cmp.network.stations
                    ],
                    "think_time": float(cmp.network.think_time),
                },
                "mape_throughput": cmp.mape_throughput,
                "mape_response_time": cmp.mape_response_time,
                "coverage_bjb": cmp.coverage,
                "results": cmp.to_frame().to_dict(orient="records"),
            },
            sys.stdout,
        )
    elif args.format == "csv":
        _write_csv(cmp.to_frame(), sys.stdout)
    else:
        sys.stdout.write(f"{cmp!r}\n\n")
        sys.stdout.write(_unit_table(cmp.to_frame()))
    return EXIT_OK


# -- parser ---------------------------------------------------------------------------------------
_FORMAT_HELP = "output format: an aligned table (default), csv, or json (alone on stdout)"

_EPILOGS = {
    "demo": """examples:
  qnmodel demo --out out/demo
  qnmodel demo --offline --out /tmp/demo
  qnmodel demo --model examples/networked_raid.toml --out /tmp/demo

Writes into --out: report.md and report.png (model against measurement), the
qnbench traces it measured (device_sweep.json, closed_loop.json), and for each
solved model <name>.toml/.csv/.json/.md, <name>_bounds.png, <name>_utilization.png.
""",
    "solve": """examples:
  qnmodel solve examples/demo_storage.toml
  qnmodel solve examples/demo_storage.toml -N 200 --format csv > curve.csv
  qnmodel solve examples/demo_storage.toml --set network.rate='1 Gbit/s' --format json
""",
    "sweep": """examples:
  qnmodel sweep examples/demo_storage.toml --vary network.rate='100 Mbit/s,1 Gbit/s'
  qnmodel sweep examples/demo_storage.toml -N 200 --vary think_time='10 ms,50 ms,1 s' \\
      --vary disk.visits=0.2,0.5,1 --format csv > grid.csv
""",
    "plot": """examples:
  qnmodel plot examples/demo_storage.toml --out bounds.png
  qnmodel plot examples/demo_storage.toml --measured closed_loop.csv --out vs_measured.png
  qnmodel plot examples/demo_storage.toml -N 100 --utilization --out demo.svg
  qnmodel bench emu jobs=1,2,4,8,16 bs='64 KiB' dev_latency='5 ms' dev_rate='50 MB/s' \
      think='10 ms' runtime='1 s' --out cl.json
  qnmodel plot model.toml --measured cl.json --out vs_measured.png

--measured takes a CSV with columns n, throughput (jobs/s), response_time (s)
and, optionally, throughput_err and response_time_err (error-bar half-widths),
or the JSON trace of a qnbench closed loop (one point per client count).
""",
    "bench": """examples:
  qnmodel bench null jobs=1,2,4 runtime='0.2 s'
  qnmodel bench emu jobs=1,2,4,8 bs='64 KiB' dev_latency='5 ms' dev_rate='50 MB/s' \\
      runtime='1 s' --out closed_loop.json
  qnmodel bench file dir=/tmp bs=4KiB,1MiB jobs=1 --format csv

Options are qnbench's, KEY=VALUE, with '_' or '-'; quantities take units; lists
(jobs, bs, mem_op, cpu_op) are comma-separated. See 'qnbench --help'.
""",
    "calibrate": """examples:
  qnmodel calibrate device_sweep.json closed_loop.json --out report/
  qnmodel calibrate device_sweep.json closed_loop.json --format json
  qnmodel calibrate --demo --out out/calibration

DEVICE_TRACE is a qnbench size sweep at one client (fits t = a + B/r);
CLOSED_TRACE a closed-loop run (its request size, devices and think time define
the model). --demo measures emulated devices on this machine (about 30 s).
""",
    "report": """examples:
  qnmodel report examples/demo_storage.toml --out report/
  qnmodel report examples/demo_storage.toml --measured closed_loop.csv --out report/
""",
}


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="TOML model file (see docs/reference/model-files.md)")
    p.add_argument(
        "-N",
        "--population",
        type=int,
        metavar="N",
        help="solve n = 1..N instead of the file's populations",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a model value, e.g. think_time='10 ms' or disk.visits=0.3 (repeatable)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``qnmodel`` command (used by the docs and tests)."""
    from . import __version__

    parser = _Parser(
        prog=PROG,
        description="Queueing-network models of storage systems: bounds, exact MVA, "
        "what-if sweeps, plots and reports.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  qnmodel demo --out out/demo\n"
        "  qnmodel solve examples/demo_storage.toml --format json\n"
        "  qnmodel <command> --help",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def add(name: str, help_text: str, description: str | None = None) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=help_text,
            description=description or help_text,
            epilog=_EPILOGS.get(name),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        # Also accepted after the command; SUPPRESS keeps the global value when absent.
        p.add_argument(
            "--debug",
            action="store_true",
            default=argparse.SUPPRESS,
            help="show tracebacks on errors",
        )
        p.add_argument(
            "-q",
            "--quiet",
            action="store_true",
            default=argparse.SUPPRESS,
            help="no progress on stderr",
        )
        return p

    p = add(
        "demo",
        "the main job: measure this machine, calibrate and compare; then solve the "
        "networked-RAID test bed of Cui et al. (2006) and the demo storage model",
        "The main job (about 30 s):\n"
        "  1. measure this machine with qnbench (a device size sweep, then a closed loop\n"
        "     of 1..32 clients), calibrate, and compare the predicted bounds and exact\n"
        "     MVA curve with the measured one (report.md, report.png);\n"
        "  2. solve the networked-RAID test bed of Cui et al. (2006);\n"
        "  3. solve the demo storage model (tables and bounds plots of both).",
    )
    p.add_argument("--out", default="out/demo", help="output directory (default: out/demo)")
    p.add_argument(
        "--offline",
        action="store_true",
        help="only solve the demo storage model: no measurement, no paper test bed",
    )
    p.add_argument(
        "--model",
        default=None,
        help="solve this TOML model file only (implies --offline)",
    )
    p.set_defaults(func=_cmd_demo)

    p = add("solve", "bounds (ABA, BJB) and exact MVA of a model file")
    _add_model_args(p)
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help=_FORMAT_HELP)
    p.set_defaults(func=_cmd_solve)

    p = add("sweep", "what-if grid: solve a model file over every combination of values")
    _add_model_args(p)
    p.add_argument(
        "--vary",
        action="append",
        required=True,
        metavar="KEY=V1,V2,...",
        help="a model key and its values, e.g. network.rate='100 Mbit/s,1 Gbit/s' "
        "(repeat for a grid)",
    )
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help=_FORMAT_HELP)
    p.set_defaults(func=_cmd_sweep)

    p = add("plot", "plot the bounds band and exact MVA curve (and measured points)")
    _add_model_args(p)
    p.add_argument("--out", required=True, help="image file: .png, .svg or .pdf")
    p.add_argument(
        "--measured",
        help="measured points: a CSV (n, throughput, response_time) or a qnbench JSON trace",
    )
    p.add_argument(
        "--utilization",
        action="store_true",
        help="also write <out>_utilization.<ext>: utilisation per station vs n",
    )
    p.set_defaults(func=_cmd_plot)

    p = add("bench", "run the qnbench microbenchmark and print or save its trace")
    p.add_argument("engine", help="qnbench engine: null, emu, file, mem, cpu, tcp, stripe")
    p.add_argument("options", nargs="*", metavar="KEY=VALUE", help="qnbench options")
    p.add_argument("--out", help="save the JSON trace to this file")
    p.add_argument("--timeout", type=float, help="seconds before the run is interrupted")
    p.add_argument("--qnbench", help="path of the qnbench executable (default: the bundled one)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help=_FORMAT_HELP)
    p.set_defaults(func=_cmd_bench)

    p = add("calibrate", "fit a model from qnbench traces and compare it with the measured curve")
    p.add_argument("device_trace", nargs="?", help="qnbench JSON: device size sweep")
    p.add_argument("closed_trace", nargs="?", help="qnbench JSON: closed-loop run")
    p.add_argument("--out", help="write report.md and report.png into this directory")
    p.add_argument(
        "--demo",
        action="store_true",
        help="measure emulated devices on this machine, then calibrate and compare",
    )
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help=_FORMAT_HELP)
    p.set_defaults(func=_cmd_calibrate)

    p = add("report", "write a Markdown report (model, bottleneck, table, plots) to a directory")
    _add_model_args(p)
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument(
        "--measured",
        help="measured points: a CSV (n, throughput, response_time) or a qnbench JSON trace",
    )
    p.set_defaults(func=_cmd_report)

    from .testbed import command as testbed_command  # `qnmodel testbed up|down|status`

    testbed_command.register(add)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``qnmodel`` command; returns the exit status (0 ok, 1 failure, 2 usage)."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise UsageError("a command is required (see 'qnmodel --help')")
        return int(args.func(args))
    except UsageError as exc:
        if debug:
            raise
        print(f"{PROG}: usage error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`qnmodel ... | head`): not an error; silence the final flush.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except (QNModelError, ValueError, TypeError, OSError, ImportError) as exc:
        if debug:
            raise
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"{PROG}: error: {msg}", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
