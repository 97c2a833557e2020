"""An NFS server that disappears mid-run (root): qnbench's nfs engine ends with a clear error and
a document marked incomplete that keeps the point so far and names the files it could not remove
from the dead server; `down` then leaves nothing of the testbed behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from qnmodel.bench import executable, schema
from qnmodel.lab import testbed
from tests._parts import need_built
from tests.lab.testbed.helpers import leftovers, needs_root, write_topology

pytestmark = [pytest.mark.testbed, pytest.mark.alone, pytest.mark.xdist_group("testbed")]

TOPOLOGY = """
[testbed]
name = "tnfsk"
[[clients]]
name = "c1"
link = { rate = "1 Gbit/s" }
[[servers]]
name = "s1"
service = "nfs"
link = { rate = "1 Gbit/s" }
disk = { kind = "tmpfs", size = "64 MiB" }
"""


@needs_root
def test_nfs_server_killed_mid_read_is_an_error_and_down_cleans_up(tmp_path):
    need_built("nfs")
    topo = testbed.load_topology(write_topology(tmp_path, TOPOLOGY))
    doc = testbed.up(topo)
    pids = [(n["pid"], None) for n in doc["nodes"].values() if "pid" in n]
    try:
        url = testbed.nfs_url(topo, "s1")
        client = subprocess.Popen(
            testbed.exec_argv(topo, "c1", [
                str(executable()), "--engine", "nfs", "--nfs-url", url, "--rw", "read",
                "--bs", "64KiB", "--size", "8MiB", "--runtime", "30s", "--warmup", "0",
                "--nfs-cache", "0", "--jobs", "1,2"]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        disk = doc["nodes"]["s1"]["disk"]["path"]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(
            n.endswith("-job0.dat") for n in os.listdir(disk)
        ):
            time.sleep(0.01)
        time.sleep(0.5)  # reading
        os.kill(doc["nodes"]["s1"]["pid"], signal.SIGKILL)
        out, err = client.communicate(timeout=120)
        assert client.returncode == 1, err
        run = json.loads(out)
        schema.validate(run)
        assert run["complete"] is False
        first, *rest = run["errors"]
        assert first.startswith("nfs: READ /qnbench-") and "(EIO)" in first
        # the read file it laid out is on the dead server: said, with its name and where
        assert any("cannot remove its files qnbench-" in e and url in e and "left on the server"
                   in e for e in rest), run["errors"]  # fmt: skip
        (r,) = run["results"]
        assert r["jobs"] == 1 and r["complete"] is False and r["ops"] > 0
    finally:
        testbed.down(topo)
    assert leftovers("tnfsk", pids) == []
