"""The one answer to "is this a CI run?" for the whole suite.

``CI`` set to any non-empty value other than ``0``, ``false``, ``no`` or ``off`` (any case)
means CI: GitHub Actions sets ``true``, GitLab ``true``, others ``1`` or ``yes``. Under CI a
skipped test is a failure (``tests/conftest.py`` turns every skip, collection-time ones
included, into a failure), so a missing peer tool, MPI, fio or iperf3 cannot pass silently.
"""

from __future__ import annotations

import os

import pytest

_NOT_CI = {"", "0", "false", "no", "off"}


def in_ci(environ=None) -> bool:
    """True when the ``CI`` environment variable is set to a truthy value."""
    env = os.environ if environ is None else environ
    return env.get("CI", "").strip().lower() not in _NOT_CI


IN_CI = in_ci()


def skip_or_fail(reason: str) -> None:
    """Skip locally with ``reason``; under CI fail with it (the check must run there)."""
    if IN_CI:
        pytest.fail(f"required under CI: {reason}", pytrace=False)
    pytest.skip(reason)
