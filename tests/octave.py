"""Run GNU Octave and its ``queueing`` package from the tests, in one process per batch.

Peer cross-checks build one Octave script that loops over many cases and prints every
number with ``%.17g`` (round-trip exact for IEEE doubles) as tagged lines::

    <tag> <v1> <v2> ...

:func:`run_octave` runs the script with ``octave-cli`` and :func:`parse_tagged` turns the
output into ``{tag: float64 array}``. :func:`octave_vec` writes a Python sequence as an
Octave row-vector literal, again with 17 significant digits, so inputs travel without
rounding. :func:`octave_missing_reason` says why the peer cannot run (``None`` when it can);
peer tests use it to skip locally with that reason (the suite's conftest turns such a skip
into a failure under ``CI=true``).

Example
-------
>>> from tests.octave import octave_missing_reason, octave_vec, parse_tagged, run_octave
>>> if octave_missing_reason() is None:  # doctest: +SKIP
...     out = run_octave("pkg load queueing\\n[U R Q X] = qncsmva(3, %s);\\n"
...                      "printf('X %%.17g\\\\n', X(1));" % octave_vec([1.0, 2.0]))
...     parse_tagged(out)["X"]
"""

from __future__ import annotations

import functools
import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable

import numpy as np

__all__ = [
    "OCTAVE_FLAGS",
    "octave_executable",
    "octave_missing_reason",
    "octave_vec",
    "run_octave",
    "parse_tagged",
]

#: command-line flags: no GUI, no banner, no user start-up files, no history
OCTAVE_FLAGS = ("--no-gui", "--quiet", "--norc", "--no-history", "--no-window-system")


def octave_executable() -> str | None:
    """Path of ``octave-cli`` (or ``octave``), or None."""
    return shutil.which("octave-cli") or shutil.which("octave")


@functools.cache
def octave_missing_reason(package: str = "queueing") -> str | None:
    """Why the Octave peer cannot run here, or None when it can.

    Checks that an Octave executable exists and that ``pkg load <package>`` works.
    The answer is cached for the session.
    """
    from tests._parts import missing

    exe = octave_executable()
    absent = missing("octave", "octave-queueing") if package == "queueing" else None
    if exe is None or absent:
        return absent or missing("octave")
    try:
        run_octave(f"pkg load {package}\nprintf('ok\\n');", timeout=60)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        return f"Octave is installed at {exe} but 'pkg load {package}' fails: {exc}"
    return None


def run_octave(script: str, timeout: float = 300.0) -> str:
    """Run an Octave script in a fresh ``octave-cli`` process and return its stdout.

    Parameters
    ----------
    script : str
        Octave source; it is written to a temporary ``.m`` file that is removed afterwards.
    timeout : float
        Seconds before the process is killed (raises ``subprocess.TimeoutExpired``).

    Raises
    ------
    RuntimeError
        Octave is missing, or exits with a non-zero status (stderr is included).
    """
    exe = octave_executable()
    if exe is None:
        raise RuntimeError("octave-cli not found on PATH")
    fd, path = tempfile.mkstemp(suffix=".m", prefix="qnmodel_peer_")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(script)
        proc = subprocess.run(
            [exe, *OCTAVE_FLAGS, path],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        raise RuntimeError(
            f"octave exited with status {proc.returncode}:\n{proc.stderr.strip()[-2000:]}"
        )
    return proc.stdout


def octave_vec(values: Iterable[float]) -> str:
    """An Octave row-vector literal with 17 significant digits (exact for doubles)."""
    parts = []
    for v in np.asarray(list(values), dtype=np.float64).ravel():
        if math.isinf(v):
            parts.append("Inf" if v > 0 else "-Inf")
        else:
            parts.append(f"{v:.17g}")
    return "[" + " ".join(parts) + "]"


def parse_tagged(stdout: str) -> dict[str, np.ndarray]:
    """Parse ``<tag> <numbers...>`` lines into ``{tag: float64 array}``.

    Lines that do not start with a tag followed by numbers (warnings, blank lines) are
    ignored; a tag seen twice raises ``ValueError`` so a loop bug cannot hide.
    """
    out: dict[str, np.ndarray] = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        try:
            vals = np.array([float(p) for p in parts[1:]], dtype=np.float64)
        except ValueError:
            continue
        if parts[0] in out:
            raise ValueError(f"tag {parts[0]!r} printed twice by the Octave script")
        out[parts[0]] = vals
    return out
