"""The suite's CI policy: one definition of "CI" (tests/_ci.py), and under CI every skip is a
failure, a module skipped at collection (``pytest.importorskip``) included."""

from __future__ import annotations

import os
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


# -- the system parts: one table, one installer, build records --------------------------------
ROOT = TESTS.parent
SCRIPT = ROOT / ".ci" / "system-packages.sh"


def _table(tmp_path, rows):
    t = tmp_path / "parts.tsv"
    t.write_text("part\tgroup\tcheck\tpackages\tfor\n" + "".join("\t".join(r) + "\n" for r in rows))
    return t


def _script(table, *args):
    env = dict(os.environ, QNMODEL_SYSTEM_PARTS=str(table))
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env,
                          timeout=60)  # fmt: skip


def test_ci_and_make_install_every_part_through_the_one_script():
    from tests._parts import parts

    table = parts()
    # the parts a fresh machine lacked (clang's runtime: the fuzz targets failed to link)
    needed = [("clang-rt", "libclang-rt-14-dev"), ("libnfs", "libnfs-dev"),
              ("mpicc", "libopenmpi-dev"), ("ganesha-vfs", "nfs-ganesha-vfs"),
              ("octave-queueing", "octave-queueing"), ("chromium", "chromium")]  # fmt: skip
    for name, pkg in needed:
        assert pkg in table[name].packages, name
    assert {p.group for p in table.values()} == {"build", "fuzz", "test"}
    run = (ROOT / ".ci" / "run").read_text()
    assert ".ci/system-packages.sh all" in run and run.rstrip().endswith("make test")
    make = (ROOT / "Makefile").read_text()
    assert "$(STAMP)/installed: $(BIN)/python $(PKG_SRC) $(STAMP)/system" in make
    assert "--record $@ build" in make and "$(SYSPARTS) fuzz" in make


def test_missing_part_is_named_with_its_install_command(tmp_path):
    t = _table(tmp_path, [("ghost", "test", "cmd:qnmodel-no-such-command", "ghost-pkg", "haunting"),
                          ("sh", "test", "cmd:sh", "dash", "a shell")])  # fmt: skip
    p = _script(t, "--check", "test")
    assert p.returncode == 0, p.stderr
    assert "missing ghost (haunting)" in p.stderr and "sh (" not in p.stderr
    assert "apt-get update && apt-get install -y --no-install-recommends ghost-pkg" in p.stderr
    p = _script(t, "--check", "build")  # another group: nothing to say
    assert p.returncode == 0 and p.stderr == ""
    p = _script(t, "--bogus")
    assert p.returncode == 2 and "unknown argument '--bogus'" in p.stderr


def test_record_changes_only_when_a_build_part_appears(tmp_path):
    here = tmp_path / "here"
    rows = [("lib", "build", f"file:{here}", "libx-dev", "an engine"),
            ("tool", "test", "cmd:qnmodel-no-such-command", "t", "tests")]  # fmt: skip
    t = _table(tmp_path, rows)
    rec = tmp_path / "stamps" / "system"
    assert _script(t, "--check", "--record", str(rec), "build").returncode == 0
    assert rec.read_text() == "lib: missing (libx-dev)\n"  # test parts are not recorded
    before = rec.stat().st_mtime_ns
    os.utime(rec, ns=(before - 10**9, before - 10**9))
    assert _script(t, "--check", "--record", str(rec), "build").returncode == 0
    assert rec.stat().st_mtime_ns == before - 10**9  # unchanged: make does not reinstall
    here.touch()
    assert _script(t, "--check", "--record", str(rec), "build").returncode == 0
    assert rec.read_text() == "lib: present\n" and rec.stat().st_mtime_ns > before - 10**9


def test_need_skips_naming_the_part_and_fails_under_ci(monkeypatch, tmp_path):
    from tests import _ci, _parts

    t = _table(
        tmp_path, [("ghost", "test", "cmd:qnmodel-no-such-command", "ghost-pkg", "haunting")]
    )
    monkeypatch.setattr(_parts, "TABLE", t)
    _parts.parts.cache_clear()
    try:
        why = _parts.missing("ghost")
        assert why.startswith("ghost (haunting) is not installed: apt-get install -y ghost-pkg")
        monkeypatch.setattr(_ci, "IN_CI", False)
        with pytest.raises(pytest.skip.Exception, match="ghost-pkg"):
            _parts.need("ghost")
        monkeypatch.setattr(_ci, "IN_CI", True)
        with pytest.raises(pytest.fail.Exception, match="required under CI: ghost"):
            _parts.need("ghost")
        with pytest.raises(KeyError, match="not in"):
            _parts.missing("nobody")
    finally:
        _parts.parts.cache_clear()


def test_build_records_what_it_made():
    from qnmodel.bench import build_info

    info = build_info()
    assert set(info) == {"nfs", "mpi", "fuzz"}
    for part, entry in info.items():
        assert isinstance(entry["built"], bool) and entry["detail"], part
        if not entry["built"]:
            assert "apt-get install" in entry["detail"], entry  # says what to install
