"""Faults in the middle of a qnbench run: each ends with a clear error, a JSON document marked
incomplete that keeps the results so far, and nothing left behind that qnbench created (or, when
the file system forbids removing it, a document that says what was left where).

Covered elsewhere: SIGINT/SIGTERM and a full file system (test_qnbench_file.py), a planted
symlink and foreign files (test_qnbench_safety.py).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from qnmodel.bench import schema
from tests._ci import IN_CI


def _wait_for(pattern, root, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list(root.glob(pattern))
        if found:
            return found[0]
        time.sleep(0.005)
    raise AssertionError(f"qnbench did not create {pattern} within {timeout} s")


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(x) for x in f.read().split()]


def test_a_killed_worker_process_ends_the_point_incomplete(qnbench_exe, tmp_path):
    p = subprocess.Popen(
        [str(qnbench_exe), "--engine", "file", "--workers", "process", "--jobs", "2,4",
         "--dir", str(tmp_path), "--size", "1MiB", "--rw", "randwrite", "--runtime", "20s",
         "--warmup", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    _wait_for("qnbench-*/job1.dat", tmp_path)
    deadline = time.monotonic() + 10
    while len(_children(p.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    victim = _children(p.pid)[0]
    time.sleep(0.2)
    os.kill(victim, signal.SIGKILL)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 1, err
    doc = json.loads(out)
    schema.validate(doc)
    assert doc["complete"] is False
    assert any(f"worker process {victim}" in e and "killed by signal 9" in e
               for e in doc["errors"]), doc["errors"]  # fmt: skip
    # the point that lost a worker is kept, marked incomplete; the sweep stops there
    (r,) = doc["results"]
    assert r["jobs"] == 2 and r["complete"] is False and r["ops"] > 0
    assert list(tmp_path.iterdir()) == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("rw", ["read", "write"])
def test_a_tcp_server_that_disappears_mid_request_is_an_error(qnbench_exe, rw):
    port = _free_port()
    server = subprocess.Popen(
        [str(qnbench_exe), "--engine", "tcp", "--tcp-role", "server", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.01)
        client = subprocess.Popen(
            [str(qnbench_exe), "--engine", "tcp", "--tcp-role", "client", "--port", str(port),
             "--rw", rw, "--jobs", "2,4", "--bs", "64KiB", "--runtime", "20s", "--warmup", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        time.sleep(0.5)
        server.kill()
        out, err = client.communicate(timeout=30)
    finally:
        server.kill()
        server.wait()
    assert client.returncode == 1, err
    doc = json.loads(out)
    schema.validate(doc)
    assert doc["complete"] is False
    # the peer's end shows as a reset or a broken pipe, never as "Success"
    assert doc["errors"] and all(
        "tcp: request of 65536 bytes failed" in e and ("ECONNRESET" in e or "EPIPE" in e)
        for e in doc["errors"]
    ), doc["errors"]
    (r,) = doc["results"]
    assert r["jobs"] == 2 and r["complete"] is False and r["ops"] > 0


def test_a_directory_made_read_only_mid_run_is_reported_with_what_was_left(qnbench_exe):
    # root ignores directory permissions: the run is made as the unprivileged user nobody
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        if IN_CI:
            pytest.fail("CI runs as root with util-linux's setpriv")
        pytest.skip("needs root (to run qnbench as nobody) and setpriv")
    nobody = pwd.getpwnam("nobody")
    # pytest's tmp_path sits below a 0700 directory of root: nobody needs one it can reach
    parent = Path(tempfile.mkdtemp(prefix="qnbench-faults-", dir="/tmp"))
    os.chown(parent, nobody.pw_uid, nobody.pw_gid)
    p = subprocess.Popen(
        ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
         str(qnbench_exe), "--engine", "file", "--dir", str(parent), "--jobs", "1,2",
         "--size", "1MiB", "--rw", "randwrite", "--runtime", "1s", "--warmup", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    job0 = _wait_for("qnbench-*/job0.dat", parent)
    job0.parent.chmod(0o555)  # the second point cannot create job1.dat, nor remove job0.dat
    try:
        out, err = p.communicate(timeout=30)
        assert p.returncode == 1, err
        doc = json.loads(out)
        schema.validate(doc)
        assert doc["complete"] is False
        # the first point is kept; the error names the file and the reason, once
        assert [r["jobs"] for r in doc["results"]] == [1] and doc["results"][0]["complete"]
        creates = [e for e in doc["errors"] if "cannot create" in e]
        assert len(creates) == 1 and "job1.dat" in creates[0] and "EACCES" in creates[0]
        # what could not be removed is said, with its path
        assert any(f"cannot remove its file {job0}" in e for e in doc["errors"]), doc["errors"]
        assert any("left its directory" in e and "1 file(s)" in e for e in doc["errors"])
        assert sorted(x.name for x in parent.iterdir()) == [job0.parent.name]
        assert sorted(x.name for x in job0.parent.iterdir()) == ["job0.dat"]
    finally:
        job0.parent.chmod(0o700)
        shutil.rmtree(parent)


def test_a_directory_name_that_is_not_utf8_round_trips_through_the_document(qnb, tmp_path):
    # a file name may hold any byte but '/' and NUL; the document must stay valid UTF-8 JSON
    # and give the exact name back (PEP 383 surrogateescape, as os.fsdecode does)
    odd = os.fsencode(tmp_path) + b"/caf\xe9-\xff"
    os.mkdir(odd)
    rc, doc, out, err = qnb("--engine", "file", "--dir", os.fsdecode(odd), "--size", "64KiB",
                            "--runtime", "20ms", "--warmup", "0")  # fmt: skip
    assert rc == 0, err
    assert os.fsencode(doc["options"]["dir"]) == odd
    assert "\\udce9" in out and "\\udcff" in out
    assert os.listdir(odd) == []
