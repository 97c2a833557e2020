"""Fixtures for the qnbench tests: the binary (skip locally when missing, fail under CI)."""

from __future__ import annotations

import json
import subprocess

import pytest

from qnmodel import bench
from qnmodel.errors import BenchNotFoundError

from .._ci import IN_CI


@pytest.fixture(scope="session")
def qnbench_exe():
    """Path of qnbench (``qnmodel.bench.executable()``)."""
    try:
        return bench.executable()
    except BenchNotFoundError as exc:
        if IN_CI:
            pytest.fail(f"qnbench must be built under CI: {exc}")
        pytest.skip(f"qnbench not built here ({exc}); set QNMODEL_QNBENCH to run these tests")


@pytest.fixture(scope="session")
def qnb(qnbench_exe):
    """Run qnbench with arguments; return (exit status, parsed stdout or None, stdout, stderr)."""

    def call(*args, timeout=60):
        p = subprocess.run(
            [str(qnbench_exe), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        doc = json.loads(p.stdout) if p.stdout.strip().startswith("{") else None
        return p.returncode, doc, p.stdout, p.stderr

    return call


@pytest.fixture(scope="session")
def rt(qnb):
    """``["--realtime"]`` when SCHED_FIFO clients are permitted here, else ``[]``.

    Timing tests pass it to qnbench: real-time clients wake within microseconds even when the
    machine is loaded (e.g. by a parallel test run), so the tolerances can stay tight. Without it
    the tests widen the tolerances for client-side wake-up lateness (never for device-side
    quantities, which are exact by construction).
    """
    rc, _, _, err = qnb("--engine", "emu", "--ops", "3", "--runtime", "5s", "--warmup", "0",
                        "--dev-latency", "1ms", "--realtime")  # fmt: skip
    if rc != 0:
        print(f"SCHED_FIFO not available, timing tolerances widened: {err.strip()}")
    return ["--realtime"] if rc == 0 else []


def pytest_collection_modifyitems(config, items):
    """Tests that time real-time clients (they take the ``rt`` fixture) run alone, after the
    parallel suite: a busy second worker (SCHED_FIFO clients of its own, a site build) delays
    wake-ups by a large fraction of their millisecond tolerances."""
    for item in items:
        if "rt" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.alone)
