"""Launching qnbench's MPI build: the ``mpirun`` command line and environment, in one place.

Used by :func:`qnmodel.lab.check.measure_ranks` (the bottom-up check on every rank) and by
:func:`qnmodel.lab.testbed.mpi_argv` (one rank per client namespace of a testbed).
"""

from __future__ import annotations

import os
import shutil
import subprocess

from ..errors import BenchNotFoundError

__all__ = ["mpi_env", "mpirun_command"]


def _open_mpi(mpirun: str) -> bool:
    try:
        p = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in p.stdout or "OpenRTE" in p.stdout


def mpirun_command(ranks: int, mpirun: str | None = None) -> list[str]:
    """``mpirun -np RANKS`` with the options a qnbench run needs (the launcher on ``PATH``).

    With Open MPI: ``--oversubscribe`` (more ranks than cores on a small machine), a rank that
    exits non-zero does not abort the others, and ``--allow-run-as-root`` when run as root.
    """
    exe = mpirun or shutil.which("mpirun") or shutil.which("mpiexec")
    if not exe:
        raise BenchNotFoundError(
            "no MPI launcher (mpirun or mpiexec) on PATH: install Open MPI (e.g. Debian's "
            "openmpi-bin) to run qnbench on several ranks"
        )
    cmd = [exe, "-np", str(ranks)]
    if _open_mpi(exe):
        cmd += ["--oversubscribe", "--mca", "orte_abort_on_non_zero_status", "0"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
    return cmd


def mpi_env() -> dict[str, str]:
    """The environment for ``mpirun``: Open MPI refuses root without these two variables
    (harmless for any other launcher)."""
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
