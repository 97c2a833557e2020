"""qnbench under valgrind's memcheck: no invalid reads or writes, no use of uninitialised
values, no definitely lost memory, for each engine (threads and process workers).

The installed binary (a release build) is checked, i.e. what users run; the sanitizer build
(test_sanitizers.py) covers what memcheck cannot see (undefined behaviour).
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from qnmodel.bench import schema
from tests._parts import need

CASES = [
    ["--engine", "null", "--jobs", "1,2", "--bs", "4KiB,1MiB"],
    ["--engine", "emu", "--jobs", "2", "--dev-latency", "200us", "--dev-dist", "exp"],
    ["--engine", "file", "--rw", "randwrite", "--size", "256KiB", "--jobs", "2"],
    ["--engine", "file", "--workers", "process", "--jobs", "2", "--size", "256KiB"],
    ["--engine", "mem", "--size", "256KiB"],
    ["--engine", "tcp", "--rw", "write", "--jobs", "2", "--bs", "64KiB"],
    ["--engine", "tcp", "--serve", "emu", "--jobs", "1,3", "--dev-latency", "200us",
     "--dev-dist", "exp", "--dev-servers", "2", "--bs", "4KiB"],
    ["--engine", "stripe", "--raid", "5", "--rw", "randwrite", "--size", "256KiB",
     "--chunk", "16KiB", "--dev-latency", "100us", "--jobs", "2"],
]  # fmt: skip

pytestmark = pytest.mark.xdist_group("fuzz")


@pytest.fixture(scope="module")
def valgrind():
    need("valgrind")
    return shutil.which("valgrind") or "/usr/bin/valgrind"


@pytest.mark.parametrize("args", CASES, ids=lambda a: "-".join(a[1:6:2]))
def test_memcheck_is_clean(valgrind, qnbench_exe, tmp_path, args):
    p = subprocess.run(
        [valgrind, "--quiet", "--error-exitcode=99", "--leak-check=full",
         "--errors-for-leak-kinds=definite", "--trace-children=yes", "--child-silent-after-fork=no",
         str(qnbench_exe), *args, "--dir", str(tmp_path), "--ops", "40", "--runtime", "60s",
         "--warmup", "0"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    # a point ends after 40 measured requests (a time window could see none under valgrind's
    # serialised threads on a loaded machine)
    assert p.returncode == 0, p.stderr[-6000:]
    doc = json.loads(p.stdout)
    schema.validate(doc)
    assert doc["complete"] is True and all(r["ops"] > 0 for r in doc["results"])
    assert list(tmp_path.iterdir()) == []
