"""SIGINT and SIGTERM end a qnbench run at once, whatever its clients are waiting for.

A client sleeping in a think time, an emulated device's service, an open-loop arrival or the
warm-up, and the main thread laying out a file, each wakes on the signal: the run prints its
document with the points measured so far (``complete: false``, the interruption in
``errors``), exits with status 1 and leaves nothing it created behind. Each case sleeps for
1000 s (or lays out gigabytes), so a run that ignored the signal would outlive the test's
generous bound on the exit (3 s after the signal) by far; ``timeout``, which sends SIGTERM,
relies on this.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from qnmodel.bench import schema
from tests._parts import need

#: seconds from the signal to the exit that any of these runs may take on a busy machine
EXIT_BOUND_S = 3.0

SLEEPS = {
    # clients thinking for 1000 s after their first request
    "think": ["--engine", "emu", "--dev-latency", "1ms", "--think", "1000s", "--jobs", "2",
              "--warmup", "0"],
    # clients waiting 1000 s for an emulated device
    "device": ["--engine", "emu", "--dev-latency", "1000s", "--dev-rate", "0", "--jobs", "2",
               "--warmup", "0"],
    # an open loop whose next arrival is 1000 s away
    "open-loop": ["--engine", "emu", "--dev-latency", "1ms", "--rate", "0.001/s",
                  "--arrivals", "constant", "--warmup", "0"],
    # the main thread in a 1000 s warm-up, the clients' files laid out, the clients thinking
    # for 1000 s after their first (warm-up) request
    "warm-up": ["--engine", "file", "--size", "1MiB", "--jobs", "2", "--warmup", "1000s",
                "--think", "1000s"],
    # process clients thinking for 1000 s (the signal reaches only the main process)
    "process-think": ["--engine", "file", "--workers", "process", "--jobs", "2",
                      "--size", "1MiB", "--think", "1000s", "--warmup", "0"],
    # clients waiting on a TCP reply from this process's server, itself waiting 1000 s on
    # its emulated device
    "tcp-device": ["--engine", "tcp", "--serve", "emu", "--dev-latency", "1000s",
                   "--dev-rate", "0", "--warmup", "0"],
    # a RAID5 read-modify-write between its two phases, on 1000 s emulated members
    "stripe-rmw": ["--engine", "stripe", "--raid", "5", "--rw", "randwrite",
                   "--dev-latency", "1000s", "--dev-rate", "0", "--warmup", "0"],
}  # fmt: skip


def _clients_started(pid: int) -> bool:
    """qnbench runs a point: a client thread or a client process exists beside main()."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            children = f.read().split()
        return len(os.listdir(f"/proc/{pid}/task")) >= 2 or len(children) >= 1
    except FileNotFoundError:
        return False


def _start(args: list[str]) -> subprocess.Popen:
    # its own session: a run that ignores the signal is killed with its client processes
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip


def _stop(p: subprocess.Popen, sig: int) -> tuple[float, str, str]:
    """Send `sig`; return the seconds to the exit, stdout and stderr (kill after 20 s)."""
    t0 = time.monotonic()
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"qnbench ignored signal {sig} for 20 s\nstderr: {err[-2000:]}")
    return time.monotonic() - t0, out, err


def _check_document(out: str, rc: int, err: str) -> dict:
    assert rc == 1, err
    doc = schema.validate(json.loads(out))
    assert doc["complete"] is False
    assert any("interrupted" in e for e in doc["errors"]), doc["errors"]
    return doc


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("kind", sorted(SLEEPS))
def test_a_signal_wakes_every_sleeping_client(qnbench_exe, tmp_path, kind, sig):
    p = _start([str(qnbench_exe), *SLEEPS[kind], "--runtime", "600s", "--interval", "1s",
                "--dir", str(tmp_path)])  # fmt: skip
    # the point has started once the clients exist; then they go to sleep
    deadline = time.monotonic() + 20
    while not _clients_started(p.pid) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.01)
    time.sleep(0.4)
    assert p.poll() is None, p.communicate()[1]
    took, out, err = _stop(p, sig)
    doc = _check_document(out, p.returncode, err)
    # the point being measured is kept, marked incomplete
    (res,) = doc["results"]
    assert res["complete"] is False and res["jobs"] >= 1
    assert took < EXIT_BOUND_S, f"{took:.2f} s from the signal to the exit"
    assert list(tmp_path.iterdir()) == []


LAYOUTS = {
    "file": (["--engine", "file"], "qnbench-*/job0.dat"),
    "stripe": (["--engine", "stripe", "--member", "file", "--members", "2"],
               "qnbench-*/member0.dat"),
    "tcp-serve-file": (["--engine", "tcp", "--serve", "file"], "qnbench-*/serve.dat"),
}  # fmt: skip


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("engine", sorted(LAYOUTS))
def test_a_signal_stops_the_layout_of_a_file_at_once(qnbench_exe, tmp_path, engine, sig):
    # a file far larger than what is written before the signal, within the free space (the
    # layout refuses more than the file system holds)
    free = shutil.disk_usage(tmp_path).free
    size = min(16 << 30, free // 4) >> 20 << 20
    if size < 256 << 20:
        pytest.skip(f"{tmp_path} has {free} bytes free; the test lays out more than 1 GiB")
    args, pattern = LAYOUTS[engine]
    p = _start([str(qnbench_exe), *args, "--size", str(size), "--chunk", "1MiB",
                "--runtime", "60s", "--dir", str(tmp_path)])  # fmt: skip
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and p.poll() is None:
        found = list(tmp_path.glob(pattern))
        if found and found[0].stat().st_size > 0:
            break
        time.sleep(0.005)
    assert p.poll() is None, p.communicate()[1]
    took, out, err = _stop(p, sig)
    doc = _check_document(out, p.returncode, err)
    assert doc["results"] == []
    assert any("laying out" in e and f"signal {int(sig)}" in e for e in doc["errors"])
    assert took < EXIT_BOUND_S, f"{took:.2f} s from the signal to the exit"
    assert list(tmp_path.iterdir()) == [], [str(x) for x in Path(tmp_path).rglob("*")]


@pytest.mark.xdist_group("fuzz")
@pytest.mark.parametrize("kind", ["tcp-device", "process-think", "stripe-rmw"])
def test_a_stopped_run_is_clean_under_memcheck(qnbench_exe, tmp_path, kind):
    """The stop path (clients cut in their sleep, servers closing, workers reaped, files
    removed) reads and frees memory cleanly: valgrind's memcheck finds no error or leak."""
    need("valgrind")
    p = _start(["valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full",
                "--errors-for-leak-kinds=definite", "--trace-children=yes",
                str(qnbench_exe), *SLEEPS[kind], "--runtime", "600s", "--interval", "1s",
                "--dir", str(tmp_path)])  # fmt: skip
    deadline = time.monotonic() + 60
    while not _clients_started(p.pid) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    time.sleep(2.0)  # valgrind runs the clients slowly: let them reach their sleep
    assert p.poll() is None, p.communicate()[1]
    took, out, err = _stop(p, signal.SIGTERM)
    assert p.returncode == 1, err[-6000:]  # 99: a memcheck error
    doc = _check_document(out, p.returncode, err)
    assert len(doc["results"]) == 1
    assert list(tmp_path.iterdir()) == []
