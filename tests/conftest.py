"""Suite-wide test policy.

* Peer cross-checks (marker ``peer``) may skip locally, with a visible reason,
  when the peer tool is missing; under CI (``CI=true``) a skipped peer test is
  turned into a failure: the cross-checks must really run there.
* Matplotlib always uses the non-interactive Agg backend.
* The suite tests what users install: it refuses to run against the source tree
  (``PYTHONPATH=.`` or ``python -m pytest`` from the repository root would import
  ``./qnmodel`` without its compiled kernels and qnbench) and against an
  installation that lacks its compiled parts. ``make install`` (or ``make test``)
  installs the package; subprocesses, notebooks and examples get the same
  environment without the source tree (:mod:`tests._user_env`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
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


def pytest_configure(config):
    problem = installed_package_problem()
    if problem is not None:
        raise pytest.UsageError(problem)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and item.get_closest_marker("peer") is not None:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"peer cross-check skipped under CI (must run there): {reason}"
