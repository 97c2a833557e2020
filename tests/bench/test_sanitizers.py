"""qnbench built with AddressSanitizer + UndefinedBehaviorSanitizer runs every engine cleanly.

Configures and builds the standalone CMake project in a temporary directory (so this also tests
the standalone build), with QNBENCH_SANITIZE=ON and QNBENCH_WERROR=ON, then runs short workloads
of each engine; any sanitizer report makes the process exit non-zero and prints to stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from qnmodel.bench import schema

from .._ci import IN_CI

CSRC = Path(__file__).resolve().parents[2] / "qnmodel" / "bench" / "csrc"


@pytest.fixture(scope="module")
def sanitized(tmp_path_factory):
    missing = [t for t in ("cmake", "cc") if shutil.which(t) is None]
    if missing:
        if IN_CI:
            pytest.fail(f"sanitizer build needs {missing} under CI")
        pytest.skip(f"sanitizer build needs {missing}, not installed here")
    if not (CSRC / "CMakeLists.txt").exists():
        pytest.skip("qnbench C sources are not available (installed package without sources)")
    build = tmp_path_factory.mktemp("qnbench-asan")
    cfg = subprocess.run(
        ["cmake", "-S", str(CSRC), "-B", str(build), "-DQNBENCH_SANITIZE=ON",
         "-DQNBENCH_WERROR=ON", "-DCMAKE_BUILD_TYPE=Debug", "-DQNBENCH_MPI_EXTRA=OFF"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    b = subprocess.run(["cmake", "--build", str(build), "-j", "2"], capture_output=True, text=True)
    assert b.returncode == 0, b.stdout + b.stderr
    return build / "qnbench"


CASES = [
    ["--engine", "null", "--jobs", "1,2", "--bs", "4KiB,1MiB"],
    ["--engine", "emu", "--jobs", "1,3", "--devices", "2", "--dev-latency", "1ms",
     "--think", "1ms", "--think-dist", "exp", "--dev-dist", "exp"],
    ["--engine", "file", "--access", "sync", "--rw", "randwrite", "--size", "256KiB"],
    ["--engine", "file", "--access", "stdio", "--rw", "write", "--size", "256KiB"],
    ["--engine", "file", "--access", "mmap", "--rw", "randread", "--size", "256KiB"],
    ["--engine", "file", "--workers", "process", "--jobs", "2", "--size", "256KiB"],
    ["--engine", "mem", "--size", "256KiB", "--jobs", "2"],
    ["--engine", "cpu", "--bs", "1000,4KiB"],
    ["--engine", "tcp", "--rw", "write", "--jobs", "2", "--bs", "100,64KiB"],
    ["--engine", "tcp", "--serve", "file", "--size", "256KiB"],
    ["--engine", "tcp", "--serve", "emu", "--rw", "write", "--jobs", "1,3", "--dev-latency",
     "100us", "--dev-dist", "exp", "--dev-servers", "2", "--bs", "4KiB,64KiB"],
    ["--engine", "stripe", "--raid", "0", "--member", "tcp", "--serve", "emu", "--members", "3",
     "--dev-latency", "100us", "--bs", "48KiB", "--chunk", "16KiB", "--jobs", "2"],
    ["--engine", "stripe", "--raid", "5", "--rw", "randwrite", "--bs", "4KiB,200KiB",
     "--size", "1MiB", "--chunk", "16KiB", "--dev-latency", "100us", "--jobs", "2"],
    ["--engine", "stripe", "--raid", "5", "--member", "tcp", "--rw", "randwrite",
     "--bs", "4KiB,40KiB", "--members", "3", "--size", "256KiB", "--chunk", "8KiB", "--jobs", "2"],
    ["--engine", "stripe", "--raid", "5", "--member", "file", "--rw", "write", "--bs", "24KiB",
     "--members", "3", "--size", "256KiB", "--chunk", "8KiB", "--verify"],
    ["--engine", "meta", "--jobs", "1,2", "--meta-bytes", "100"],
    ["--engine", "meta", "--meta-tree", "hard", "--jobs", "3"],
    ["--engine", "file", "--rwmix", "70", "--rw", "randread", "--size", "256KiB", "--jobs", "2"],
    ["--engine", "file", "--file-layout", "shared", "--bs", "47008", "--rw", "write",
     "--size", "1MiB", "--jobs", "2"],
    ["--engine", "emu", "--rate", "2000/s", "--arrivals", "poisson", "--dev-dist", "exp",
     "--jobs", "1,2"],
    ["--engine", "file", "--rate", "5000/s", "--arrivals", "constant", "--rwmix", "50",
     "--size", "256KiB"],
]  # fmt: skip


def test_every_engine_has_a_sanitizer_case(sanitized):
    p = subprocess.run([str(sanitized), "--list-engines"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # engines that need a server started elsewhere (nfs) run in tests/testbed against one;
    # those of the MPI build (mpilink) in tests/bench/test_mpi.py under mpirun
    names = {
        e["name"]
        for e in json.loads(p.stdout)["engines"]
        if not e.get("needs_server") and not e.get("needs_mpi")
    }
    assert names == {args[1] for args in CASES}


@pytest.mark.parametrize("args", CASES, ids=lambda a: "-".join(a[1:4]))
def test_engine_is_clean_under_asan_ubsan(sanitized, tmp_path, args):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=99",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=98")  # fmt: skip
    p = subprocess.run(
        # a count of operations per point (not a time): ops > 0 however loaded the machine is
        [str(sanitized), *args, "--dir", str(tmp_path), "--ops", "20", "--runtime", "60s",
         "--warmup", "10ms"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert "runtime error" not in p.stderr and "Sanitizer" not in p.stderr, p.stderr
    assert p.returncode == 0, p.stderr
    doc = schema.validate(json.loads(p.stdout))
    assert doc["complete"] and all(r["ops"] > 0 for r in doc["results"])
    assert list(tmp_path.iterdir()) == []
