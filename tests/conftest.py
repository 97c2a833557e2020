"""Suite-wide test policy.

* Peer cross-checks (marker ``peer``) may skip locally, with a visible reason,
  when the peer tool is missing; under CI (``CI=true``) a skipped peer test is
  turned into a failure: the cross-checks must really run there.
* Matplotlib always uses the non-interactive Agg backend.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and item.get_closest_marker("peer") is not None:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"peer cross-check skipped under CI (must run there): {reason}"
