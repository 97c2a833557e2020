"""Locate and run the qnbench executable (layer L3: subprocess is allowed here)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._validate import as_quantity
from ..errors import (
    BenchError,
    BenchNotFoundError,
    BenchUsageError,
    InvalidModelError,
    InvalidTypeError,
)
from .trace import BenchTrace

__all__ = [
    "executable",
    "engines",
    "build_command",
    "run",
    "selftest",
    "build_info",
    "ENV_VAR",
    "MPI_ENV_VAR",
    "LIST_OPTIONS",
]

ENV_VAR = "QNMODEL_QNBENCH"
#: environment variable naming the MPI build (``qnbench-mpi``) instead of the installed one
MPI_ENV_VAR = "QNMODEL_QNBENCH_MPI"
_PROGRESS = re.compile(r"qnbench: point (\d+)/(\d+): (.*)")
#: seconds qnbench gets, after the SIGTERM of a timeout, to print its document and exit (it
#: stops at once: every sleeping client wakes on the signal) before it is killed
STOP_GRACE_S = 10.0

# Dimension of every option that takes a quantity; the runner converts unit strings to SI here,
# so "4 KiB" and 4096 mean the same and a wrong dimension fails before qnbench starts.
_DIMENSIONS = {
    "bs": "size",
    "size": "size",
    "chunk": "size",
    "io_size": "size",
    "runtime": "time",
    "warmup": "time",
    "interval": "time",
    "think": "time",
    "spin": "time",
    "dev_latency": "time",
    "dev_rate": "rate",
    "rsize": "size",
    "wsize": "size",
    "rate": "frequency",
    "meta_bytes": "size",
}
#: the options that take a list (a sweep): qnbench's list-typed options (T_INTLIST, T_SIZELIST,
#: T_STRLIST of csrc/options.c; a test checks the two agree through the document's echo)
LIST_OPTIONS = frozenset({"jobs", "bs", "mem_op", "cpu_op", "meta_op"})
_BUILD_HINT = (
    "install qnmodel from source with a C compiler (pip install . builds qnbench into the "
    "package), build it alone with `cmake -S qnmodel/bench/csrc -B build/qnbench && cmake --build "
    f"build/qnbench`, or set {ENV_VAR}=/path/to/qnbench"
)


_BIN = Path(__file__).resolve().parent.parent / "_bin"


def build_info() -> dict[str, dict[str, Any]]:
    """What the installed package's build made of qnbench's optional parts, and why not.

    The package build records, in ``qnmodel/_bin/qnbench-build.json``, for each optional part
    whether it was built and a detail (a version, or why it is absent and what to install):

    ``nfs``
        the nfs engine, built against libnfs (Debian's ``libnfs-dev``) when it was found;
    ``mpi``
        ``qnbench-mpi``, the MPI build, made when an MPI C compiler (``mpicc``) was found;
    ``fuzz``
        whether this machine's clang links the libFuzzer targets of ``csrc/fuzz`` (they are
        built by the tests, never installed).

    ``make install`` rebuilds the package when one of those system parts appears or goes.

    Returns
    -------
    dict
        ``{"nfs": {"built": bool, "detail": str}, "mpi": {...}, "fuzz": {...}}``; a part an
        older installation did not record reads ``{"built": False, "detail": "not recorded"}``.
    """
    try:
        doc = json.loads((_BIN / "qnbench-build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = {}
    out = {}
    for part in ("nfs", "mpi", "fuzz"):
        entry = doc.get(part) if isinstance(doc.get(part), dict) else {}
        out[part] = {
            "built": entry.get("built") is True,
            "detail": str(entry.get("detail", "not recorded by this installation's build")),
        }
    return out


def executable(mpi: bool = False) -> Path:
    """Path of the qnbench executable, or of its MPI build with ``mpi=True``.

    Looked up, in order: the environment variable ``QNMODEL_QNBENCH`` (``QNMODEL_QNBENCH_MPI``
    for the MPI build); the binary installed in the package (``qnmodel/_bin/qnbench``,
    ``qnmodel/_bin/qnbench-mpi``); ``qnbench`` (``qnbench-mpi``) on ``PATH``.

    The MPI build is made and installed with the package whenever an MPI C compiler was found
    at install time (nobody runs CMake by hand); run it under ``mpirun``. Its JSON document
    carries ``mpi.aggregate`` (the sums over the ranks per point, with ``per_rank`` figures).

    Raises
    ------
    BenchNotFoundError
        None of those exists (the message says how to build it, and for the MPI build why the
        installation did not make it: :func:`build_info`), or the environment variable names
        a file that is missing or not executable.
    """
    if mpi:
        return _mpi_executable()
    env = os.environ.get(ENV_VAR)
    if env:
        p = Path(env)
        if p.is_file() and os.access(p, os.X_OK):
            return p
        raise BenchNotFoundError(
            f"{ENV_VAR}={env!r} is not an executable file; point it at a built qnbench or unset it"
        )
    bundled = Path(__file__).resolve().parent.parent / "_bin" / "qnbench"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return bundled
    found = shutil.which("qnbench")
    if found:
        return Path(found)
    raise BenchNotFoundError(f"qnbench executable not found; {_BUILD_HINT}")


def _mpi_executable() -> Path:
    env = os.environ.get(MPI_ENV_VAR)
    if env:
        p = Path(env)
        if p.is_file() and os.access(p, os.X_OK):
            return p
        raise BenchNotFoundError(
            f"{MPI_ENV_VAR}={env!r} is not an executable file; point it at qnbench-mpi or unset it"
        )
    bundled = _BIN / "qnbench-mpi"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return bundled
    found = shutil.which("qnbench-mpi")
    if found:
        return Path(found)
    why = build_info()["mpi"]["detail"]
    raise BenchNotFoundError(
        f"the MPI build of qnbench (qnbench-mpi) is not installed: {why}. Install an MPI C "
        "compiler and library (e.g. Debian's libopenmpi-dev and openmpi-bin) and reinstall "
        f"qnmodel, or set {MPI_ENV_VAR}=/path/to/qnbench-mpi"
    )


def engines(executable_path: str | os.PathLike | None = None) -> tuple[dict[str, Any], ...]:
    """The engines qnbench offers, from its one engine table (``qnbench --list-engines``).

    Each entry is a dict with ``name``, ``help`` and the engine's traits as bools:
    ``sweeps_bs`` (sweeps over ``bs``), ``sweeps_ops`` (sweeps over an operation list),
    ``needs_dir``, ``process_workers``, ``standalone_role``.

    Raises
    ------
    BenchNotFoundError
        No qnbench executable.
    BenchError
        qnbench failed or printed something other than its engine list.
    """
    exe = Path(executable_path) if executable_path is not None else executable()
    p = subprocess.run(
        [str(exe), "--list-engines"], capture_output=True, text=True, timeout=60, check=False
    )
    try:
        doc = json.loads(p.stdout)
        ok = p.returncode == 0 and doc["schema"] == "qnbench-engines"
        listed = tuple(dict(e) for e in doc["engines"])
    except (ValueError, KeyError, TypeError):
        ok = False
    if not ok or not listed:
        raise BenchError(
            f"{exe} --list-engines did not print the engine list (exit status {p.returncode}): "
            f"{p.stderr.strip() or p.stdout[:200]!r}"
        )
    return listed


def _format_number(value: float, name: str, dimension: str | None) -> str:
    if dimension == "size" or dimension is None:
        if value != math.floor(value):
            raise InvalidModelError(
                f"{name} must be a whole number of {'bytes' if dimension else 'units'}, "
                f"got {value!r}"
            )
        return str(int(value))
    return repr(float(value))


def _one_value(name: str, value: Any) -> str:
    dim = _DIMENSIONS.get(name)
    if isinstance(value, bool):
        return "1" if value else "0"
    if dim is not None:
        return _format_number(as_quantity(value, name, dim), name, dim)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _format_number(value, name, None)
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise InvalidTypeError(
        f"option {name}: expected a number, a string, a path or a bool, got {value!r} "
        f"of type {type(value).__name__}"
    )


def build_command(engine: str, options: Mapping[str, Any], exe: str | os.PathLike) -> list[str]:
    """The argument vector for ``qnbench --engine ENGINE`` with `options`.

    Keyword names use ``_`` for the option's ``-`` (``dev_latency`` -> ``--dev-latency``);
    quantities may be SI numbers or unit strings (``"4 KiB"``, ``"5 ms"``, ``"50 MB/s"``);
    sweeps (``jobs``, ``bs``, ``mem_op``, ``cpu_op``) accept a list; bools become 1/0.
    """
    if not isinstance(engine, str) or not engine:
        raise InvalidTypeError(f"engine must be a non-empty string, got {engine!r}")
    argv = [str(exe), "--engine", engine]
    for name, value in options.items():
        if value is None:
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, Sequence) and not isinstance(value, str):
            if name not in LIST_OPTIONS:
                raise InvalidTypeError(
                    f"option {name} takes one value, got the sequence {value!r} "
                    f"(sweeps are possible over {sorted(LIST_OPTIONS)})"
                )
            if len(value) == 0:
                raise InvalidModelError(f"option {name}: the list is empty")
            text = ",".join(_one_value(name, v) for v in value)
        else:
            text = _one_value(name, value)
        argv += [flag, text]
    return argv


def _estimate_timeout(options: Mapping[str, Any]) -> float:
    def count(name: str) -> int:
        v = options.get(name)
        if isinstance(v, Sequence) and not isinstance(v, str):
            return len(v)
        return 1

    runtime = as_quantity(options.get("runtime", 1.0), "runtime", "time")
    warmup = as_quantity(options.get("warmup", 0.1), "warmup", "time")
    points = count("jobs") * count("bs") * max(count("mem_op"), count("cpu_op"), 4)
    return 60.0 + 3.0 * points * (runtime + warmup + 1.0)


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM ``proc`` (qnbench stops at once), then SIGKILL after :data:`STOP_GRACE_S`."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run(
    engine: str,
    *,
    progress: bool | None = None,
    timeout: float | None = None,
    check: bool = True,
    executable_path: str | os.PathLike | None = None,
    **options: Any,
) -> BenchTrace:
    """Run qnbench and return its validated trace.

    Parameters
    ----------
    engine : str
        The name of one of qnbench's engines (:func:`engines` lists them: ``"null"``,
        ``"emu"``, ``"file"``, ...).
    progress : bool, optional
        Relay qnbench's per-point progress lines to stderr. Default: only when stderr is a
        terminal.
    timeout : float, optional
        Seconds before the run is stopped. qnbench then gets SIGTERM, on which it stops at once
        (clients sleeping in a think time, an emulated device or an open-loop wait wake up),
        prints the points measured so far (``complete`` false, ``errors`` saying it was
        interrupted) and exits; that partial trace is returned with ``check=False``, or
        attached to the :class:`~qnmodel.errors.BenchError` as ``exc.trace`` and summarised in
        its message. qnbench is killed only if it has not exited 10 s after the SIGTERM
        (then there is no trace). Default: generous, from the number of points
        and ``runtime``.
    check : bool
        Raise :class:`~qnmodel.errors.BenchError` when qnbench exits non-zero or times out (the
        partial trace, if any, is attached as ``exc.trace``). With ``check=False`` a partial
        trace (``trace.complete`` false) is returned instead; usage errors always raise.
    executable_path : path, optional
        Use this binary instead of :func:`executable`.
    **options
        qnbench options by name with ``_`` for ``-``: e.g. ``jobs=[1, 2, 4]``,
        ``bs=["4 KiB", "1 MiB"]``, ``runtime="2 s"``, ``dev_latency="5 ms"``,
        ``dev_rate="50 MB/s"``, ``dir="/tmp"``. Quantities are SI numbers (seconds, bytes,
        bytes/s) or unit strings. See ``qnbench --help`` and ``docs/reference/qnbench-schema.md``.

    Returns
    -------
    BenchTrace
        ``.to_frame()`` gives one row per measured point; ``.save(path)`` writes the JSON.

    Raises
    ------
    BenchNotFoundError
        No qnbench executable.
    BenchError
        qnbench rejected the options (exit 2), failed (exit 1, with its stderr), timed out
        (with ``check=True``; the message lists the points measured before the timeout), or
        printed a document that does not validate.
    """
    exe = Path(executable_path) if executable_path is not None else executable()
    argv = build_command(engine, options, exe)
    if progress is None:
        progress = sys.stderr.isatty()
    if progress:
        argv.append("--progress")
    if timeout is None:
        timeout = _estimate_timeout(options)

    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    try:  # from here on, Ctrl-C or SIGTERM of our own process stops qnbench with us
        err_lines: list[str] = []
        out_chunks: list[str] = []

        bar = progress and sys.stderr.isatty()

        def pump_err() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                err_lines.append(line)
                if not progress:
                    continue
                m = _PROGRESS.match(line)
                if bar and m:
                    done, total = int(m.group(1)), int(m.group(2))
                    filled = round(30 * done / total)
                    sys.stderr.write(
                        f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} {m.group(3)[:60]}"
                    )
                    if done == total:
                        sys.stderr.write("\n")
                else:
                    sys.stderr.write(line)
                sys.stderr.flush()

        def pump_out() -> None:
            assert proc.stdout is not None
            out_chunks.append(proc.stdout.read())

        threads = [threading.Thread(target=pump_err, daemon=True)]
        threads.append(threading.Thread(target=pump_out, daemon=True))
        for t in threads:
            t.start()
        timed_out = killed = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            # SIGTERM: qnbench stops at once and prints the points measured so far
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                killed = True
                proc.kill()
                proc.wait()
    except BaseException:
        _stop(proc)
        raise
    for t in threads:
        t.join(timeout=10.0)
    stderr = "".join(err_lines)
    stdout = "".join(out_chunks)
    command = " ".join(argv)

    if proc.returncode == 2:
        raise BenchUsageError(f"qnbench rejected the options (exit status 2): {stderr.strip()}")
    trace = None
    if stdout.strip():
        trace = BenchTrace.from_json(stdout, error=BenchError)
        trace = BenchTrace(trace.document, tuple(argv), stderr)
    if timed_out:
        if trace is not None and not check:
            return trace
        if trace is not None:
            kept = (
                f"it had measured {_points_summary(trace)} (the partial trace: exc.trace, or "
                "what run(..., check=False) returns)"
            )
        elif killed:
            kept = f"it did not exit {STOP_GRACE_S:g} s after SIGTERM and was killed: no results"
        else:
            kept = "it printed no document"
        exc = BenchError(
            f"qnbench timed out after {timeout:g} s and was stopped with SIGTERM; {kept}\n"
            f"command: {command}\nstderr:\n{stderr.strip()}"
        )
        exc.trace = trace  # type: ignore[attr-defined]
        raise exc
    if proc.returncode != 0:
        if trace is not None and not check:
            return trace
        errors = "; ".join(trace.errors) if trace is not None else ""
        exc = BenchError(
            f"qnbench failed (exit status {proc.returncode}): {errors or stderr.strip()}\n"
            f"command: {command}\nstderr:\n{stderr.strip()}"
        )
        exc.trace = trace  # type: ignore[attr-defined]
        raise exc
    if trace is None:
        raise BenchError(f"qnbench printed no JSON document: {command}\n{stderr.strip()}")
    return trace


def _points_summary(trace: BenchTrace, most: int = 8) -> str:
    """The points of a (partial) trace, one after the other: jobs, bs, op, ops/s, complete."""
    results = trace.results
    done = sum(1 for r in results if r["complete"])
    lines = [f"{len(results)} point(s), {done} complete"]
    for r in results[:most]:
        bs = f" bs={r['bs_bytes']}" if "bs_bytes" in r else ""
        rate = r["throughput_ops_s"]
        lines.append(
            f"point {r['point']}: jobs={r['jobs']}{bs} op={r['op']}: {r['ops']} ops, "
            f"{rate if rate is None else format(rate, '.6g')} ops/s"
            f"{'' if r['complete'] else ' (incomplete)'}"
        )
    if len(results) > most:
        lines.append(f"... and {len(results) - most} more")
    return "; ".join(lines)


def selftest(executable_path: str | os.PathLike | None = None) -> BenchTrace:
    """Run the ``null`` and ``emu`` engines briefly and check the document and a known answer.

    Returns the ``emu`` trace. Raises :class:`~qnmodel.errors.BenchNotFoundError` without a
    binary and :class:`~qnmodel.errors.BenchError` when the output is invalid or the emulated
    device (2 ms per request) is served faster than it must be.
    """
    run("null", runtime=0.05, warmup=0.0, executable_path=executable_path, progress=False)
    trace = run(
        "emu",
        dev_latency=2e-3,
        dev_rate=0,
        runtime=0.1,
        warmup=0.0,
        executable_path=executable_path,
        progress=False,
    )
    res = trace.results[0]
    if res["ops"] < 1 or res["latency_s"]["min"] < 2e-3 * (1 - 1e-6):
        raise BenchError(
            f"qnbench self-test: a 2 ms emulated request took {res['latency_s']['min']!r} s"
        )
    return trace
