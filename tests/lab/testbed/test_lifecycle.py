"""up -> measure through the shaped link -> down, on real namespaces (root).

Known value: TCP goodput through a tc-shaped veth at MTU 1500 is ``rate x 1448 / 1514``
(payload per Ethernet frame with TCP timestamps; htb counts the 14-byte Ethernet header):
0.956 x rate. One closed-loop client without think time has throughput 1 / R (Little's law),
so goodput = bs / mean response time; that avoids the +-1 request edge effect of counting
requests in a 2 s window (about 20 requests of 1 MiB at 100 Mbit/s).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import pytest

from qnmodel.bench import executable
from qnmodel.cli import main
from qnmodel.lab import testbed
from qnmodel.lab.testbed.state import STATE_ROOT
from tests.lab.testbed.helpers import host_links, leftovers, needs_root, write_topology

pytestmark = [pytest.mark.testbed, pytest.mark.alone, pytest.mark.xdist_group("testbed")]

RATE = 12.5e6  # 100 Mbit/s in bytes/s
# Measured on a quiet machine: 5 repeats of 2 s, mean 0.9543, CV 0.2 % (0.2 % below 0.9564: the
# request turnaround once per 1 MiB). On the 2 shared cores at load average 10-17 (a full test
# run beside other work) repeats ranged 0.34..0.96 and the best of 5 reached 0.940 (1.7 % low):
# the link caps every repeat, so the test asserts the best repeat within 3 % and no repeat above.
GOODPUT_REL_TOL = 0.03

TCP_TOPOLOGY = """
[testbed]
name = "{name}"
[[clients]]
name = "c1"
link = {{ rate = "100 Mbit/s" }}
[[servers]]
name = "s1"
service = "tcp"
link = {{ rate = "100 Mbit/s" }}
[[servers]]
name = "s2"
service = "tcp"
port = 5301
disk = {{ kind = "throttled", path = "{tmp}", read_rate = "6 MB/s", write_rate = "6 MB/s" }}
file_size = "4 MiB"
"""


@pytest.fixture
def disk_parent():
    """A directory on a real disk (blkio throttles block devices; /tmp may be a tmpfs)."""
    d = tempfile.mkdtemp(prefix="qnmodel-testbed-test-", dir="/var/tmp")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def qnbench_in(topo, node, *args):
    cp = subprocess.run(
        testbed.exec_argv(topo, node, [str(executable()), *map(str, args)]),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert cp.returncode == 0, cp.stderr
    return json.loads(cp.stdout)


def server_pids(doc):
    return [(n["pid"], None) for n in doc["nodes"].values() if "pid" in n]


@needs_root
def test_up_goodput_through_shaped_link_then_down_leaves_nothing(tmp_path, disk_parent):
    links_before = host_links()
    path = write_topology(tmp_path, TCP_TOPOLOGY.format(name="tgood", tmp=disk_parent))
    topo = testbed.load_topology(path)
    t0 = time.monotonic()
    doc = testbed.up(topo)
    took = time.monotonic() - t0
    pids = server_pids(doc)
    try:
        assert doc["up"] and doc["complete"] and took < 20.0
        assert set(doc["namespaces"]) == {"qnm-tgood-switch", "qnm-tgood-c1", "qnm-tgood-s1",
                                          "qnm-tgood-s2"}  # fmt: skip
        assert doc["nodes"]["s1"]["address"] == "10.213.2.2"
        # blkio throttle on the throttled server's process
        cg = "/sys/fs/cgroup/blkio/qnm-tgood-s2"
        assert str(doc["nodes"]["s2"]["pid"]) in open(f"{cg}/cgroup.procs").read().split()
        assert open(f"{cg}/blkio.throttle.read_bps_device").read().split()[1] == "6000000"
        # priority "high" (the default): every server and every run inside a node in one cpu
        # group of the kernel's largest weight
        cpu = "/sys/fs/cgroup/cpu/qnm-tgood-testbed"
        assert doc["priority"] == "high" and open(f"{cpu}/cpu.shares").read().strip() == "262144"
        members = open(f"{cpu}/cgroup.procs").read().split()
        assert all(str(p) in members for p, _ in pids) and len(pids) == 2
        # with real-time group scheduling the group holds real-time time: --realtime works in it
        if os.path.exists(f"{cpu}/cpu.rt_runtime_us"):
            assert int(open(f"{cpu}/cpu.rt_runtime_us").read()) > 0
        probe = subprocess.run(testbed.exec_argv(topo, "c1", ["cat", "/proc/self/cgroup"]),
                               capture_output=True, text=True, timeout=30, check=True)  # fmt: skip
        assert ":cpu:/qnm-tgood-testbed" in probe.stdout.replace("cpu,cpuacct", "cpu")
        # addresses only inside our namespaces: the host gained no interface
        assert host_links() == links_before
        res = qnbench_in(topo, "c1", "--engine", "tcp", "--tcp-role", "client", "--host",
                         topo.address("s1"), "--port", 5300, "--bs", "1MiB", "--jobs", 1,
                         "--runtime", "1500ms", "--warmup", "200ms", "--repeat", 5)  # fmt: skip
        ratios = [r["bs_bytes"] / r["latency_s"]["mean"] / RATE for r in res["results"]]
        best = max(ratios)
        print(f"goodput / rate at 100 Mbit/s: {[round(x, 4) for x in ratios]} best {best:.4f} "
              f"median {statistics.median(ratios):.4f}")  # fmt: skip
        # the shaper caps every repeat; CPU contention can only lower one
        assert all(x <= testbed.GOODPUT_FACTOR * 1.02 for x in ratios)
        assert best == pytest.approx(testbed.GOODPUT_FACTOR, rel=GOODPUT_REL_TOL)
        # the unshaped server is reached too, through the client's 100 Mbit/s link
        res = qnbench_in(topo, "c1", "--engine", "tcp", "--tcp-role", "client", "--host",
                         topo.address("s2"), "--port", 5301, "--bs", "256KiB", "--runtime",
                         "300ms", "--warmup", "50ms")  # fmt: skip
        assert res["results"][0]["ops"] > 0
        st = testbed.status(topo)
        assert st["up"] and all(n.get("running", True) for n in st["nodes"].values())
    finally:
        testbed.down(topo)
    assert leftovers("tgood", pids) == []
    assert os.listdir(disk_parent) == []
    assert testbed.status(topo)["up"] is False


@needs_root
def test_down_after_a_crashed_up_cleans_everything(tmp_path, disk_parent):
    path = write_topology(tmp_path, TCP_TOPOLOGY.format(name="tcrash", tmp=disk_parent))
    env = dict(os.environ, QNMODEL_TESTBED_CRASH_AFTER="s1")  # SIGKILL after s1 started
    cp = subprocess.run([sys.executable, "-m", "qnmodel.cli", "testbed", "up", str(path)],
                        capture_output=True, text=True, env=env, timeout=120,
                        cwd=tmp_path)  # fmt: skip
    assert cp.returncode == -9, cp.stderr
    state = json.loads((STATE_ROOT / "tcrash" / "state.json").read_text())
    assert state["complete"] is False
    pids = [(p["pid"], p["start"]) for p in state["processes"]]
    assert len(pids) == 1  # s1's server, orphaned and still running
    left = leftovers("tcrash", pids)
    assert any(x.startswith("netns") for x in left) and any(x.startswith("process") for x in left)
    # 'up' again refuses: the crashed one must be cleaned first
    with pytest.raises(testbed.TestbedError, match="already up.*down"):
        testbed.up(testbed.load_topology(path))
    assert main(["testbed", "down", str(path)]) == 0
    assert leftovers("tcrash", pids) == []
    assert main(["testbed", "down", str(path)]) == 0  # down again is harmless


@needs_root
def test_down_without_state_file_finds_our_names(tmp_path, disk_parent):
    """A lost state file: down still removes namespaces, cgroups, processes by their prefix."""
    path = write_topology(tmp_path, TCP_TOPOLOGY.format(name="tlost", tmp=disk_parent))
    topo = testbed.load_topology(path)
    pids = server_pids(testbed.up(topo))
    (STATE_ROOT / "tlost" / "state.json").unlink()
    assert testbed.status(topo)["leftovers"] is True
    testbed.down(topo)
    assert leftovers("tlost", pids) == []
    assert os.listdir(disk_parent) == []


@needs_root
def test_failed_up_tears_down_and_says_why(tmp_path, disk_parent):
    bad = TCP_TOPOLOGY.format(name="tfail", tmp=disk_parent + "/missing")
    topo = testbed.load_topology(write_topology(tmp_path, bad))
    with pytest.raises(testbed.TestbedError, match="missing is not a directory"):
        testbed.up(topo)
    assert leftovers("tfail") == []


def test_not_root_is_a_clear_error(tmp_path, disk_parent, monkeypatch, capsys):
    path = write_topology(tmp_path, TCP_TOPOLOGY.format(name="tuser", tmp=disk_parent))
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    for action in ("up", "down"):
        assert main(["testbed", action, str(path)]) == 1
        err = capsys.readouterr().err
        assert f"qnmodel testbed {action} needs root" in err and "sudo" in err
    with pytest.raises(testbed.TestbedError, match="needs root"):
        testbed.up(testbed.load_topology(path))


def test_cli_reports_a_bad_topology_naming_the_field(tmp_path, disk_parent, capsys):
    text = TCP_TOPOLOGY.format(name="tbad", tmp=disk_parent).replace(
        '"100 Mbit/s"', '"0 Mbit/s"', 1
    )
    assert main(["testbed", "status", str(write_topology(tmp_path, text))]) == 1
    assert "clients[0].link.rate must be > 0" in capsys.readouterr().err


def test_missing_packages_without_apt_get_is_a_clear_error(monkeypatch):
    from qnmodel.lab.testbed import system

    monkeypatch.setattr(system.shutil, "which", lambda cmd: None)  # nothing installed, no apt
    with pytest.raises(testbed.TestbedError) as exc:
        system.ensure_commands(["ip", "rpcbind", "ganesha.nfsd"])
    msg = str(exc.value)
    assert "missing Debian packages iproute2, rpcbind, nfs-ganesha" in msg
    assert "apt-get install -y iproute2 rpcbind nfs-ganesha" in msg


def test_apt_get_failure_is_a_clear_error(monkeypatch):
    from qnmodel.lab.testbed import system

    monkeypatch.setattr(system.shutil, "which", lambda cmd: "/usr/bin/apt-get" if cmd ==
                        "apt-get" else None)  # fmt: skip

    def fail(cmd, **kw):
        return subprocess.CompletedProcess(cmd, 100, "", "E: Unable to locate package")

    monkeypatch.setattr(system.subprocess, "run", fail)
    with pytest.raises(testbed.TestbedError, match="cannot install rpcbind.*Unable to locate"):
        system.ensure_commands(["rpcbind"])


@needs_root
def test_server_that_cannot_start_is_a_clear_error_and_up_cleans(tmp_path):
    """qnbench's tcp server cannot lay out a 64 MiB file on a 1 MiB tmpfs and exits."""
    text = """
[testbed]
name = "tnospc"
[[clients]]
name = "c1"
[[servers]]
name = "s1"
service = "tcp"
disk = { kind = "tmpfs", size = "1 MiB" }
file_size = "64 MiB"
"""
    topo = testbed.load_topology(write_topology(tmp_path, text))
    with pytest.raises(
        testbed.TestbedError,
        match=r"tcp server of .s1. exited .* before listening: .*No space left on device",
    ):
        testbed.up(topo)
    assert leftovers("tnospc") == []


@needs_root
def test_cli_up_status_down(tmp_path, capsys):
    path = write_topology(
        tmp_path,
        '[testbed]\nname = "tcli"\npriority = "normal"\n'
        '[[clients]]\nname = "c1"\nlink = { rate = "1 Gbit/s" }\n'
        '[[servers]]\nname = "s1"\nservice = "tcp"\n',
    )
    try:
        assert main(["testbed", "up", str(path)]) == 0
        out = capsys.readouterr().out
        assert "testbed tcli: up" in out and "qnm-tcli-s1" in out and "1000 Mbit/s" in out
        assert main(["testbed", "status", "--json", str(path)]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert (
            doc["up"] and doc["nodes"]["s1"]["running"] and doc["nodes"]["c1"]["rate_B_s"] == 125e6
        )
        assert doc["stripe"]["address"] == "10.213.255.1"
        # priority "normal": no cpu group
        assert doc["priority"] == "normal" and not os.path.exists(
            "/sys/fs/cgroup/cpu/qnm-tcli-testbed"
        )
    finally:
        assert main(["testbed", "down", str(path)]) == 0
    assert main(["testbed", "status", str(path)]) == 0
    assert "testbed tcli: down" in capsys.readouterr().out
    assert leftovers("tcli") == []
