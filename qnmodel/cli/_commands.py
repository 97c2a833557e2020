"""The sub-commands of ``qnmodel``: read the arguments, call the library, print."""

from __future__ import annotations

import argparse
import math
import socket
import sys
import tomllib
import warnings
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._files import check_output, check_output_dir, check_outputs, output_dir, output_directory
from .._validate import MAX_MEMORY_ENV
from ..calibration.comparison import read_measured
from ..errors import (
    BenchError,
    BenchUsageError,
    InvalidModelError,
    InvalidTypeError,
    LatticeTooLargeError,
    QNModelWarning,
)
from ..io import modelfile
from ..reporting.report import finite_or_none, fmt_g, write_csv, write_json
from ..units import bare_number_fix
from ._output import (
    EXIT_OK,
    PROG,
    UsageError,
    _calibration_text,
    _closed,
    _emit_solution,
    _info,
    _Progress,
    _single_class,
    _text_table,
    _unit_table,
)


def _float_or_none(v: Any) -> float | None:
    return None if v is None else float(v)  # NaN becomes null in write_json


# -- demo -----------------------------------------------------------------------------------------
def _cmd_demo(args: argparse.Namespace) -> int:
    from ..lab.demo import run_main_demo, run_offline_demo

    out = Path(args.out)
    if args.offline or args.model is not None:
        _info(args, "solving the demo storage model (bounds and exact MVA) ...")
        paths = run_offline_demo(out, model=args.model)
    else:
        paths = run_main_demo(out, progress=not args.quiet, say=lambda msg: _info(args, msg))
    for key, p in paths.items():
        _info(args, f"wrote {key:18s} {p}")
    return EXIT_OK


# -- solve ----------------------------------------------------------------------------------------
def _override(spec: modelfile.ModelSpec, values: dict[str, Any], given: str):
    """``with_values``, with a bad value reported as the command-line mistake it is."""
    try:
        return modelfile.with_values(spec, values, units_required=True)
    except modelfile.ModelFileError as exc:
        raise UsageError(f"{given}: {exc.key}: {exc.reason}") from exc
    except (InvalidModelError, TypeError) as exc:
        raise UsageError(f"{given}: {exc}") from exc


def _parse_populations(text: str) -> list[int] | dict[str, int]:
    """``--populations``: ``1,10,100`` (a list) or ``START:STOP[:STEP]`` (a range), integers."""
    t = text.strip()
    try:
        if ":" in t:
            parts = [int(v) for v in t.split(":")]
            if len(parts) not in (2, 3):
                raise ValueError
            return dict(zip(("start", "stop", "step"), parts, strict=False))
        return [int(v) for v in t.split(",") if v.strip()]
    except ValueError:
        raise UsageError(
            f"--populations expects integers N1,N2,... (e.g. 1,10,100,1000) or "
            f"START:STOP[:STEP] (e.g. 10:200:10), got {text!r}"
        ) from None


def _load_with_overrides(args: argparse.Namespace) -> modelfile.ModelSpec:
    spec = modelfile.load(args.model)
    values: dict[str, Any] = {}
    given = []
    chosen = [
        (opt, v)
        for opt, v in (("-N", getattr(args, "N", None)),
                       ("--populations", getattr(args, "populations", None)))
        if v is not None
    ]  # fmt: skip
    if len(chosen) > 1:
        raise UsageError("give -N (n = 1..N) or --populations (chosen ones), not both")
    if chosen and spec.is_multiclass:
        first = spec.multiclass.class_names[0]
        raise UsageError(
            f"{chosen[0][0]} sets the population{'s' if chosen[0][0] != '-N' else ''} of a "
            "single-class model; this one has classes "
            f"{list(spec.multiclass.class_names)}: use --set class.{first}.N=..."
        )
    if getattr(args, "N", None) is not None:
        values["N"] = args.N
        given.append(f"-N {args.N}")
    if getattr(args, "populations", None) is not None:
        values["populations"] = _parse_populations(args.populations)
        given.append(f"--populations {args.populations}")
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


@contextmanager
def _warnings_on_stderr():
    """qnmodel's warnings (traces that do not fit, artefacts) as ``qnmodel: warning: ...``
    lines on stderr, not Python's file:line form; other warnings pass through."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", QNModelWarning)
        yield
    for w in caught:
        if issubclass(w.category, QNModelWarning):
            print(f"{PROG}: warning: {' '.join(str(w.message).split())}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


@contextmanager
def _memory_in_cli_terms(spec: modelfile.ModelSpec):
    """A refusal for memory while solving a single-class closed model, told in the
    command's terms (its options and environment variable, not Python arguments)."""
    try:
        yield
    except LatticeTooLargeError as exc:
        if exc.needed is None or spec.is_multiclass or spec.is_open:
            raise
        raise LatticeTooLargeError(
            f"{exc.what} would need about {exc.needed / 2**20:.4g} MiB, more than the allowed "
            f"{exc.limit / 2**20:.4g} MiB: the exact curve is solved for every n up to the "
            f"largest population ({spec.max_population}); give a smaller -N (or a smaller "
            "largest --populations), or raise the limit with the environment variable "
            f"{MAX_MEMORY_ENV} (e.g. {MAX_MEMORY_ENV}='8 GiB')",
            what=exc.what,
            needed=exc.needed,
            limit=exc.limit,
        ) from None


def _cmd_solve(args: argparse.Namespace) -> int:
    spec = _load_with_overrides(args)
    with _memory_in_cli_terms(spec):
        sol = spec.solve()
    target = getattr(args, "target", None) or spec.target
    if target is None:
        _emit_solution(sol, args.format, sys.stdout)
        return EXIT_OK
    from ._capacity import capacity_answers, capacity_text

    answers = capacity_answers(spec, target)
    if args.format == "json":
        write_json({**sol.to_dict(), "capacity": answers}, sys.stdout)
    elif args.format == "csv":
        raise UsageError("--target prints a table and a ranking: use --format table or json")
    else:
        _emit_solution(sol, args.format, sys.stdout)
        sys.stdout.write("\n" + capacity_text(answers))
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


# -- sweep ----------------------------------------------------------------------------------------
def _cmd_sweep(args: argparse.Namespace) -> int:
    spec = _load_with_overrides(args)
    grid = dict(_parse_vary(v) for v in args.vary)
    for key, values in grid.items():  # every value valid before the first solve
        for v in values:
            _override(spec, {key: v}, f"--vary {key}={v}")
    total = math.prod(len(v) for v in grid.values())
    bar = _Progress(total, "sweep", quiet=args.quiet or total < 20)
    frame = modelfile.sweep_model(spec, grid, progress=bar.update)
    if args.format == "json":
        write_json(
            {
                "schema": "qnmodel.sweep",
                "schema_version": 1,
                "model": spec.name,
                "source": spec.source,
                "vary": grid,
                "results": frame.to_dict(orient="records"),
            },
            sys.stdout,
        )
    elif args.format == "csv":
        write_csv(frame, sys.stdout)
    else:
        sys.stdout.write(_unit_table(frame))
    return EXIT_OK


# -- plot -----------------------------------------------------------------------------------------
def _cmd_plot(args: argparse.Namespace) -> int:
    from ..reporting.report import model_figure_title, save_bounds_figure, save_utilization_figure

    spec = _load_with_overrides(args)
    _single_class(spec, "plot")
    _closed(spec, "plot")
    out = Path(args.out)
    if out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise UsageError(f"--out must end in .png, .svg or .pdf, got {str(out)!r}")
    u_path = out.with_name(out.stem + "_utilization" + out.suffix)
    check_outputs([out, u_path] if args.utilization else [out])  # before any work
    output_directory(out.parent, "--out")  # the last level at most: a typo grows no tree
    measured = read_measured(args.measured) if args.measured else None
    with _memory_in_cli_terms(spec):
        title = model_figure_title(spec)
        N = spec.max_population
        written = [save_bounds_figure(spec.network, N, out, measured, title=title)]
        if args.utilization:
            written.append(save_utilization_figure(spec.solve(), u_path))
    for p in written:
        _info(args, f"wrote {p}")
    return EXIT_OK


# -- report ---------------------------------------------------------------------------------------
def _cmd_report(args: argparse.Namespace) -> int:
    from ..reporting.report import write_model_report

    spec = _load_with_overrides(args)
    _single_class(spec, "report")
    _closed(spec, "report")
    measured = read_measured(args.measured) if args.measured else None
    output_directory(args.out, "--out")
    with _memory_in_cli_terms(spec):
        paths = write_model_report(spec, args.out, measured=measured)
    _info(args, f"wrote {paths['markdown']}")
    _info(args, f"wrote {paths['html']}")
    return EXIT_OK


# -- bench ----------------------------------------------------------------------------------------
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


#: quantities of ``qnmodel bench plan`` beside qnbench's own (``a``, ``r``: the device)
_PLAN_DIMENSIONS = {"a": "time", "r": "rate", "sizes": "size", "budget": "time"}


def _bench_options(items: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` options of ``qnmodel bench``; a quantity typed as a bare number
    (``dev_latency=5``: 5 ms or 5 s?) is refused, as in model files."""
    from ..bench._runner import _DIMENSIONS

    dimensions = {**_DIMENSIONS, **_PLAN_DIMENSIONS}
    options: dict[str, Any] = {}
    for item in items:
        key, value = _parse_assignment(item, "an option")
        key = key.replace("-", "_")
        if key in options:
            raise UsageError(f"option {key!r} given twice")
        if key in (*_list_options(), "sizes") and isinstance(value, str) and "," in value:
            value = [_parse_scalar(v) for v in value.split(",") if v.strip()]
        if key in dimensions:
            for v in value if isinstance(value, list) else [value]:
                bare = isinstance(v, int | float) and not isinstance(v, bool)
                if bare and math.isfinite(v) and v > 0:
                    raise UsageError(
                        f"{item}: got the bare number {v!r}: {bare_number_fix(v, dimensions[key])}"
                    )
        options[key] = value
    return options


def _list_options() -> frozenset:
    from ..bench._runner import LIST_OPTIONS  # qnbench's sweeps, in one place

    return LIST_OPTIONS


def _cmd_bench(args: argparse.Namespace) -> int:
    from .. import bench

    if args.engine == "plan":
        return _cmd_bench_plan(args)
    options = _bench_options(args.options)
    if args.out:  # before the run, whose measurement would be lost
        check_output(args.out)
        if str(Path(args.out).parent) not in ("", "."):
            output_dir(Path(args.out).parent)
    _info(args, f"running qnbench {args.engine} ...")
    try:
        trace = bench.run(
            args.engine,
            progress=not args.quiet,
            timeout=args.timeout,
            executable_path=args.qnbench,
            **options,
        )
    except BenchUsageError as exc:
        raise UsageError(str(exc)) from None
    except (InvalidModelError, InvalidTypeError) as exc:  # an option value (unit, domain)
        raise UsageError(str(exc)) from exc
    if args.out:
        path = trace.save(args.out)
        _info(args, f"wrote {path}")
    if args.format == "json":
        write_json(trace.document, sys.stdout)
        return EXIT_OK
    frame = trace.to_frame()
    if args.format == "csv":
        write_csv(frame, sys.stdout)
        return EXIT_OK
    cols = [c for c in _BENCH_COLUMNS if c in frame.columns]
    headers = [c for c in cols]
    rows = [
        [fmt_g(v) if isinstance(v, float) else str(v) for v in rec]
        for rec in frame[cols].itertuples(index=False)
    ]
    sys.stdout.write(
        f"qnbench {trace.engine} on {trace.host.get('hostname', '?')}"
        f"{'' if trace.complete else ' (INCOMPLETE)'}\n\n"
    )
    sys.stdout.write(_text_table(headers, rows))
    return EXIT_OK


def _cmd_bench_plan(args: argparse.Namespace) -> int:
    """``qnmodel bench plan``: the model-guided sweep, printed, and measured with run=1."""
    from ..lab.experiments import plan as planning

    opts = _bench_options(args.options)
    try:
        max_jobs = int(opts.pop("max_jobs", 16))
        if "model" in opts:
            jobs = planning.concurrency_plan(str(opts.pop("model")), max_jobs)
            sys.stdout.write(f"client counts (dense around the knee): {jobs}\n")
            return EXIT_OK
        device = {"a": opts.pop("a", "1 ms"), "r": opts.pop("r", "100 MB/s")}
        devices = int(opts.pop("devices", 1))
        think = opts.pop("think", 0.0)
        sizes = opts.pop("sizes", None)
        run = bool(opts.pop("run", False))
        budget = opts.pop("budget", None)
        if isinstance(sizes, str):
            sizes = [v for v in sizes.split(",") if v.strip()]
        kw = {} if sizes is None else {"sizes": sizes if isinstance(sizes, list) else [sizes]}
        plan = planning.plan_sweep(
            device, devices=devices, think_time=think, max_jobs=max_jobs, **kw
        )
    except (InvalidModelError, InvalidTypeError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    if not run:
        if args.format == "csv":
            write_csv(plan.to_frame(), sys.stdout)
            return EXIT_OK
        sys.stdout.write(f"{plan.runs} runs\n")
        for bs in plan.sizes:
            sys.stdout.write(
                f"bs {bs} B: knee N* = {plan.knees[bs]:.2f}, jobs {plan.jobs_for(bs)}\n"
            )
        return EXIT_OK
    opts.setdefault("dev_latency", device["a"])
    opts.setdefault("dev_rate", device["r"])
    _info(args, f"measuring the plan's {plan.runs} points with qnbench emu ...")
    try:
        frame = planning.run_plan(plan, "emu", budget=budget, devices=devices, think=think, **opts)
    except BenchError as exc:
        raise UsageError(str(exc)) from None
    cols = ["jobs", "bs_bytes", "throughput_ops_s", "latency_mean_s"]
    if args.format == "csv":
        write_csv(frame[cols], sys.stdout)
        return EXIT_OK
    rows = [
        [fmt_g(v) if isinstance(v, float) else str(v) for v in r]
        for r in frame[cols].itertuples(index=False)
    ]
    sys.stdout.write(_text_table(cols, rows))
    return EXIT_OK


# -- calibrate ------------------------------------------------------------------------------------
def _check_input(path: str) -> tuple[dict, dict | None]:
    """Per-node figures (and optional pairs) from a JSON file, checked field by field."""
    import json

    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a JSON document ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), dict):
        raise ValueError(f'{path}: expected {{"nodes": {{NODE: {{FIGURE: value}}}}}}')
    pairs = None
    if "pairs" in doc:
        items = doc["pairs"]
        if not isinstance(items, list) or not all(
            isinstance(t, list) and len(t) == 3 for t in items
        ):
            raise ValueError(f"{path}: pairs must be a list of [node, node, bandwidth]")
        pairs = {(a, b): v for a, b, v in items}
    return doc["nodes"], pairs


def _cmd_check(args: argparse.Namespace) -> int:
    from ..lab.check import analyse, load_hardware, measure_node
    from ..reporting.report import write_check_report

    if args.out:  # before the measurement
        check_output_dir(args.out, ("check.md", "check.png", "check.html"))
    hw = load_hardware(args.hardware) if args.hardware else None
    latency, extra = None, ()
    if args.measured:
        nodes, pairs = _check_input(args.measured)
    elif args.ranks:
        import dataclasses

        from ..lab.check import measure_ranks

        _info(args, f"measuring the bottom-up set on {args.ranks} MPI ranks and random pairs ...")
        m = measure_ranks(args.ranks, runtime=args.runtime, timeout=args.timeout)
        nodes, pairs, extra = m.nodes, m.pairs or None, m.incomplete
        latency = m.pair_latency or None
    else:
        _info(args, "measuring memory, CPU, loopback TCP, a file write and file creation ...")
        nodes, pairs = {socket.gethostname(): measure_node(runtime=args.runtime)}, None
    result = analyse(nodes, hw, pairs=pairs, tolerance=args.tolerance, pair_latency=latency)
    if extra:
        result = dataclasses.replace(result, incomplete=result.incomplete + tuple(extra))
    if args.out:
        _info(args, f"wrote {write_check_report(result, args.out)}")
    if args.format == "json":
        write_json(
            {
                "schema": "qnmodel.lab.check",
                "schema_version": 1,
                "ok": result.ok,
                "findings": [str(f) for f in result.findings],
                "incomplete": list(result.incomplete),
                "rows": [{k: finite_or_none(v) for k, v in r.items()} for r in result.rows],
                "pairs": [{k: finite_or_none(v) for k, v in r.items()} for r in result.pair_rows],
            },
            sys.stdout,
        )
    else:
        frame = result.to_frame()
        sys.stdout.write(frame.to_string(index=False) + "\n")
        for f in result.findings:
            sys.stdout.write(f"SUSPECT {f}\n")
        for i in result.incomplete:
            sys.stdout.write(f"INCOMPLETE {i}\n")
    return EXIT_OK


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from ..calibration import calibrate_and_compare
    from ..reporting.report import write_report

    if args.out:  # before the work
        check_output_dir(args.out, ("report.md", "report.png", "report.html"))
    if args.demo:
        if args.device_trace or args.closed_trace:
            raise UsageError("--demo measures by itself: give no trace files with it")
        if not args.out:
            raise UsageError("--demo needs --out DIR for its report")
        from ..lab.demo import run_demo

        report = run_demo(Path(args.out), progress=not args.quiet)
        _info(args, f"wrote {'report':18s} {report}")
        _info(args, f"wrote {'report (html)':18s} {report.with_suffix('.html')}")
        return EXIT_OK
    if not (args.device_trace and args.closed_trace):
        raise UsageError(
            "give DEVICE_TRACE and CLOSED_TRACE (qnbench JSON files), or --demo --out DIR"
        )
    for p in (args.device_trace, args.closed_trace):
        if not Path(p).exists():
            raise FileNotFoundError(f"{p}: no such trace file")
    _info(args, "calibrating the device from its size sweep, comparing with the closed loop ...")
    if args.out:
        output_directory(args.out, "--out")
    with _warnings_on_stderr():
        cmp = calibrate_and_compare(args.device_trace, args.closed_trace)
    if args.out:
        report = write_report(cmp, args.out)
        _info(args, f"wrote {report}")
    if args.format == "json":
        fit = cmp.calibration["device"]
        write_json(
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
                "hints": list(cmp.hints),
            },
            sys.stdout,
        )
    elif args.format == "csv":
        write_csv(cmp.to_frame(), sys.stdout)
    else:
        sys.stdout.write(_calibration_text(cmp))
        sys.stdout.write("".join(f"\nhint: {h}\n" for h in cmp.hints))
    return EXIT_OK
