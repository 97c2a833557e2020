"""Suite-wide test policy.

* Any test may skip locally, with a visible reason, when a tool it needs is
  missing; under CI (``CI`` set to a truthy value, see :mod:`tests._ci`) every
  skip is turned into a failure, collection-time ones (module-level
  ``importorskip``) included: peer cross-checks, MPI, fio and iperf3 must really
  run there.
* Matplotlib always uses the non-interactive Agg backend.
* The suite tests what users install: it refuses to run against the source tree
  (``PYTHONPATH=.`` or ``python -m pytest`` from the repository root would import
  ``./qnmodel`` without its compiled kernels and qnbench) and against an
  installation that lacks its compiled parts. ``make install`` (or ``make test``)
  installs the package; subprocesses, notebooks and examples get the same
  environment without the source tree (:mod:`tests._user_env`).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

from ._ci import IN_CI

ROOT = Path(__file__).resolve().parents[1]


def installed_package_problem() -> str | None:
    """Why the imported qnmodel is not a complete installation, or None if it is."""
    import qnmodel
    from qnmodel.bench import _runner
    from qnmodel.solvers import _kernels

    where = Path(qnmodel.__file__).resolve().parent
    if where == (ROOT / "qnmodel").resolve():
        return (
            f"qnmodel was imported from the source tree ({where}), not from the installed "
            "package: the compiled kernels and qnbench are not there. Run `make install` and "
            "the suite with the venv's pytest (`.venv/bin/pytest`), without PYTHONPATH=. and "
            "not as `python -m pytest` from the repository root"
        )
    if not _kernels.available():
        return f"the installed qnmodel at {where} has no compiled kernels: {_kernels.status()}"
    try:
        _runner.executable()
    except Exception as exc:  # BenchNotFoundError and friends
        return f"the installed qnmodel at {where} has no qnbench executable: {exc}"
    return None


# -- qnbench, for every test that runs it ----------------------------------------------------
@pytest.fixture(scope="session")
def qnbench_exe():
    """Path of qnbench (``qnmodel.bench.executable()``)."""
    from qnmodel import bench
    from qnmodel.errors import BenchNotFoundError

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


#: fixtures that run or build something real on this machine (qnbench, MPI, clang's fuzzers,
#: sanitizer builds, valgrind)
LIVE_FIXTURES = {
    "qnbench_exe", "qnb", "qnbench", "rt", "fuzzers", "sanitized", "histcheck", "valgrind",
    "mpi_qnbench", "mpi",
}  # fmt: skip
#: test files that execute documentation pages, examples and notebooks as a user would
DOCS_FILES = ("test_docs.py", "test_examples.py", "test_example_", "test_notebook")


def pytest_collection_modifyitems(config, items):
    """A test that measures this machine or runs the real tools (it takes one of
    :data:`LIVE_FIXTURES`, or runs a testbed) is ``live``; one that executes the documentation,
    the examples or a notebook is ``docs``. ``make test-fast`` leaves both out."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & LIVE_FIXTURES or item.get_closest_marker("testbed") is not None:
            item.add_marker(pytest.mark.live)
        # Tests that time real-time clients (the ``rt`` fixture) run alone, after the parallel
        # suite: a busy second worker (SCHED_FIFO clients of its own, a site build) delays
        # wake-ups by a large fraction of their millisecond tolerances.
        if "rt" in names:
            item.add_marker(pytest.mark.alone)
        if item.path.name.startswith(DOCS_FILES):
            item.add_marker(pytest.mark.docs)


def pytest_configure(config):
    problem = installed_package_problem()
    if problem is not None:
        raise pytest.UsageError(problem)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        what = "peer cross-check" if item.get_closest_marker("peer") is not None else "test"
        report.outcome = "failed"
        report.longrepr = f"{what} skipped under CI (must run there): {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A module skipped at collection (``pytest.importorskip`` at module level) fails under CI."""
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = (
            f"{collector.nodeid} skipped at collection under CI (must run there): {reason}"
        )
