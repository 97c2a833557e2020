"""Testbed tests: real namespaces, tc shapers, nfs-ganesha (root).

Tests that bring a testbed up need root; they skip elsewhere with that reason, and under CI
(``CI=true``, which runs as root) a skipped testbed test is a failure. They share one xdist
group so two of them never compete for the machine's two cores at the same time.
"""

from __future__ import annotations

import pytest

from tests._ci import IN_CI


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and item.get_closest_marker("testbed") is not None:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"testbed test skipped under CI (must run there, as root): {reason}"
