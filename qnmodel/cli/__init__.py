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
``check``      bottom-up check: component figures against their peaks and across nodes
``testbed``    bring a namespace testbed (shaped links, NFS and block servers) up or down
``validate``   run a validation study on a testbed: calibrate bottom-up, measure, compare

Conventions: data (table, CSV or JSON) goes to stdout and JSON output is
alone there; progress and diagnostics go to stderr. Exit status 0 on
success, 1 when the work fails (a bad model file, a solver error, an I/O
error), 2 for a command-line usage error. Errors are one line on stderr;
``--debug`` shows the traceback.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from ..errors import QNModelError
from ._base import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, PROG, UsageError

__all__ = ["main", "run_offline_demo", "build_parser"]

# Loaded on first use (PEP 562): `qnmodel --version` and usage errors load no numpy.
_LAZY = {
    "build_parser": ("._parser", "build_parser"),
    "_EPILOGS": ("._parser", "_EPILOGS"),  # read by the docs tests
    "run_offline_demo": ("..lab.demo", "run_offline_demo"),
}


def __getattr__(name: str) -> Any:
    from importlib import import_module

    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'qnmodel.cli' has no attribute {name!r}") from None
    value = getattr(import_module(module, __name__), attr)
    globals()[name] = value
    return value


def _asks_version(argv: Sequence[str]) -> bool:
    """Whether ``--version`` is among the options before the command, where the parser takes
    it: answered before the parser is built, since building it registers the testbed and
    validation commands, whose modules load numpy."""
    for arg in argv:
        if arg == "--version":
            return True
        if not arg.startswith("-") or arg == "--":
            return False
    return False


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is, so it unwinds as Ctrl-C does (testbeds taken
    down, child processes stopped, partial files removed) instead of dying in place."""


def _terminate(signum, frame) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``qnmodel`` command; returns the exit status (0 ok, 1 failure, 2 usage,
    130 interrupted by Ctrl-C, 143 by SIGTERM)."""
    catch = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    )
    previous = signal.signal(signal.SIGTERM, _terminate) if catch else None
    try:
        return _main(argv)
    finally:
        if catch:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if _asks_version(argv):
        from .. import __version__

        print(f"{PROG} {__version__}")
        return EXIT_OK
    debug = "--debug" in argv
    try:
        from ._parser import build_parser

        args = build_parser().parse_args(argv)
        if args.command is None:
            raise UsageError("a command is required (see 'qnmodel --help')")
        return int(args.func(args))
    except UsageError as exc:
        if debug:
            raise
        print(f"{PROG}: usage error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        if isinstance(exc, Terminated):
            print(f"{PROG}: terminated", file=sys.stderr)
            return 143
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
