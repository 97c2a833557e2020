"""The argument parser of the ``qnmodel`` command: sub-commands, options, help and examples."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ._base import PROG, _Parser


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    """The sub-command ``name`` of :mod:`._commands`, imported when it runs: building the
    parser (``--help``, a usage error) loads no numpy, pandas or matplotlib."""

    def run(args: argparse.Namespace) -> int:
        from . import _commands

        return getattr(_commands, f"_cmd_{name}")(args)

    run.__name__ = f"_cmd_{name}"
    return run


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
  qnmodel solve examples/demo_storage.toml --target 'R <= 50 ms'
  qnmodel solve examples/demo_storage.toml --target 'p95 <= 80 ms' --format json

--target (or [model] target in the file) also answers the capacity questions: the
largest population (closed) or arrival rate (open) meeting it, the fewest servers at
the bottleneck, and the single upgrades ranked by the target's metric.
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
and, optionally, throughput_halfwidth and response_time_halfwidth (error-bar half-widths),
or the JSON trace of a qnbench closed loop (one point per client count).
""",
    "bench": """examples:
  qnmodel bench null jobs=1,2,4 runtime='0.2 s'
  qnmodel bench emu jobs=1,2,4,8 bs='64 KiB' dev_latency='5 ms' dev_rate='50 MB/s' \\
      runtime='1 s' --out closed_loop.json
  qnmodel bench file dir=/tmp bs=4KiB,1MiB jobs=1 --format csv
  qnmodel bench plan a='2 ms' r='100 MB/s' devices=4 think='4 ms' max_jobs=16
  qnmodel bench plan a='2 ms' r='100 MB/s' devices=4 think='4 ms' run=1 budget='10 s'
  qnmodel bench plan model=examples/demo_storage.toml max_jobs=64

'plan' instead of an engine prints a model-guided measurement plan (client counts
dense around the knee N*, three request sizes around the crossover a*r); run=1
measures it on emulated devices (see docs/how-to/measurement-plans.md).

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
        dest="N",
        type=int,
        metavar="N",
        help="solve n = 1..N instead of the file's populations",
    )
    p.add_argument(
        "--populations",
        metavar="LIST",
        help="solve these populations instead of the file's: N1,N2,... (e.g. 1,10,100,1000) "
        "or START:STOP[:STEP]",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a model value, e.g. think_time='10 ms' or disk.visits=0.3 (repeatable)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``qnmodel`` command (used by the docs and tests)."""
    from .. import __version__

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
    p.set_defaults(func=_command("demo"))

    p = add("solve", "bounds (ABA, BJB) and exact MVA of a model file")
    _add_model_args(p)
    p.add_argument(
        "--target",
        metavar="TARGET",
        help="answer the capacity questions for a target: 'R <= 50 ms' (mean), "
        "'p95 <= 80 ms' (percentile), 'X >= 2000/s' (throughput)",
    )
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help=_FORMAT_HELP)
    p.set_defaults(func=_command("solve"))

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
    p.set_defaults(func=_command("sweep"))

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
    p.set_defaults(func=_command("plot"))

    p = add("bench", "run the qnbench microbenchmark and print or save its trace")
    p.add_argument(
        "engine", help="qnbench engine (null, emu, file, mem, cpu, tcp, stripe), or plan"
    )
    p.add_argument("options", nargs="*", metavar="KEY=VALUE", help="qnbench options")
    p.add_argument("--out", help="save the JSON trace to this file")
    p.add_argument("--timeout", type=float, help="seconds before the run is interrupted")
    p.add_argument("--qnbench", help="path of the qnbench executable (default: the bundled one)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help=_FORMAT_HELP)
    p.set_defaults(func=_command("bench"))

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
    p.set_defaults(func=_command("calibrate"))

    p = add("report", "write a Markdown report (model, bottleneck, table, plots) to a directory")
    _add_model_args(p)
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument(
        "--measured",
        help="measured points: a CSV (n, throughput, response_time) or a qnbench JSON trace",
    )
    p.set_defaults(func=_command("report"))

    p = add(
        "check",
        "bottom-up check: measured component figures against their peaks and across nodes",
        "Measure this machine's memory, CPU, loopback link and a file write with qnbench (or\n"
        "read per-node figures from --measured), compare them with the theoretical peaks of\n"
        "a hardware description and with the other nodes, and name the suspect component\n"
        "(seeds 000 and 004).",
    )
    p.add_argument("--hardware", help="TOML hardware description (theoretical peaks)")
    p.add_argument(
        "--measured",
        help='JSON {"nodes": {NODE: {FIGURE: value}}, "pairs": [[A, B, value], ...]} '
        "instead of measuring this machine",
    )
    p.add_argument("--runtime", default="0.5 s", help="seconds per qnbench run (default 0.5 s)")
    p.add_argument(
        "--ranks",
        type=int,
        help="measure on this many MPI ranks (mpirun) and between random pairs of them",
    )
    p.add_argument(
        "--timeout", default="300 s", help="with --ranks: limit of each MPI run (default 300 s)"
    )
    p.add_argument(
        "--tolerance", type=float, default=0.1, help="shortfall below the others' median (0.1)"
    )
    p.add_argument("--out", help="write check.md and check.png into this directory")
    p.add_argument("--format", choices=("table", "json"), default="table", help=_FORMAT_HELP)
    p.set_defaults(func=_command("check"))

    from ..lab.testbed import command as testbed_command  # `qnmodel testbed up|down|status`

    testbed_command.register(add)
    from ..lab.validation import command as validate_command  # `qnmodel validate STUDY --out DIR`

    validate_command.register(add)
    return parser
