"""The suite's CI policy: one definition of "CI" (tests/_ci.py), and under CI every skip is a
failure, a module skipped at collection (``pytest.importorskip``) included."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ._ci import in_ci
from ._user_env import user_env

TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", True), ("1", True), ("yes", True), ("TRUE", True), ("gitlab", True),
     ("", False), ("0", False), ("false", False), ("no", False), ("off", False), (None, False)],
)  # fmt: skip
def test_ci_is_any_truthy_value(value, expected):
    env = {} if value is None else {"CI": value}
    assert in_ci(env) is expected


def test_no_test_decides_ci_on_its_own():
    """Every test module asks tests/_ci.py; none reads the CI variable itself."""
    offenders = [
        str(p.relative_to(TESTS))
        for p in TESTS.rglob("*.py")
        if p.name not in ("_ci.py", "test_ci_policy.py")
        and "benchmarks" not in p.parts
        and ('environ.get("CI"' in p.read_text() or "environ['CI']" in p.read_text())
    ]
    assert offenders == []


SKIPPING = """
import pytest
def test_skips():
    pytest.skip("a tool is missing")
@pytest.mark.xfail(reason="known", strict=True)
def test_xfails():
    assert False
"""
COLLECTION_SKIP = """
import pytest
pytest.importorskip("a_module_that_is_not_installed_anywhere")
def test_never_runs():
    pass
"""


def _run(tmp_path: Path, ci: str | None, *options: str) -> str:
    suite = tmp_path / "tests"
    suite.mkdir(exist_ok=True)
    for name in ("_ci.py", "conftest.py", "_user_env.py"):
        shutil.copy(TESTS / name, suite / name)
    (suite / "test_skipping.py").write_text(SKIPPING)
    (suite / "test_collection_skip.py").write_text(COLLECTION_SKIP)
    env = user_env()
    env.pop("CI", None)
    if ci is not None:
        env["CI"] = ci
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "--import-mode=importlib", "--rootdir", str(tmp_path),
         *options, str(suite)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )  # fmt: skip
    return p.stdout + p.stderr


def test_skips_are_failures_under_ci_and_skips_locally(tmp_path):
    local = _run(tmp_path, None)
    assert "2 skipped, 1 xfailed in" in local and " failed" not in local, local
    ci = _run(tmp_path, "true", "--continue-on-collection-errors")
    assert "skipped under CI (must run there): Skipped: a tool is missing" in ci, ci
    # a module skipped at collection is an error naming the missing module (without
    # --continue-on-collection-errors it stops the run); an expected failure stays one
    assert "skipped at collection under CI" in ci and "a_module_that_is_not_installed" in ci, ci
    assert "1 failed, 1 xfailed, 1 error in" in ci, ci
