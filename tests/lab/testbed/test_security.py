"""``qnmodel testbed down`` touches only what the testbed created, even when its state file
says otherwise (a corrupt or forged file): a foreign namespace, a namespace of another
testbed whose name shares the prefix, a host process, a directory and a planted symlink
all survive, and nothing outside the testbed's state directory is unmounted."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from qnmodel.errors import InvalidModelError
from qnmodel.lab.testbed import lifecycle
from qnmodel.lab.testbed.state import State
from qnmodel.lab.testbed.system import process_start_time
from tests.lab.testbed.helpers import needs_root

pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("testbed"), needs_root]


def _netns(name: str) -> bool:
    return os.path.exists(f"/run/netns/{name}")


@pytest.fixture
def foreign(tmp_path):
    """Resources the testbed did not create: two namespaces, a host process, a directory with a
    file, and a symlink named like one of the testbed's own directories pointing at it."""
    tag = f"{os.getpid()}"
    names = [f"qnmsec{tag}", "qnm-tbsec2-c1"]  # a foreign one; one of testbed "tbsec2"
    for n in names:
        subprocess.run(["ip", "netns", "add", n], check=True)
    sleeper = subprocess.Popen(["sleep", "120"])
    time.sleep(0.05)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    link = tmp_path / "qnm-tbsec-s1"  # what a 'dir' disk of node s1 would be called
    link.symlink_to(victim, target_is_directory=True)
    try:
        yield {"namespaces": names, "sleeper": sleeper, "victim": victim, "link": link}
    finally:
        sleeper.kill()
        sleeper.wait()
        for n in names:
            subprocess.run(["ip", "netns", "delete", n], capture_output=True)


def test_down_with_a_forged_state_file_touches_nothing_it_did_not_create(tmp_path, foreign):
    root = tmp_path / "state"
    st = State("tbsec", root)
    st.create(source="forged", prefix="qnm-tbsec-", pid=1)
    for n in foreign["namespaces"]:
        st.record("namespaces", n)
    pid = foreign["sleeper"].pid
    st.record("processes", {"pid": pid, "start": process_start_time(pid), "node": "s1"})
    st.record("dirs", str(foreign["victim"]))
    st.record("dirs", str(foreign["link"]))
    st.record("dirs", "/etc")
    st.record("mounts", "/proc")
    st.record("cgroups", "/sys/fs/cgroup/blkio")

    lifecycle.down("tbsec", state_root=root)

    assert all(_netns(n) for n in foreign["namespaces"]), "a namespace it did not create is gone"
    assert foreign["sleeper"].poll() is None, "a host process it did not start was killed"
    assert (foreign["victim"] / "precious.txt").read_text() == "keep me"
    assert foreign["link"].is_symlink()
    assert os.path.isdir("/etc") and os.path.ismount("/proc")
    assert not (root / "tbsec").exists()  # its own state directory is gone


@pytest.mark.parametrize("name", ["../../etc", "/etc", "tb/../x", "tb;rm", "TB", ""])
def test_hostile_testbed_names_are_refused_before_any_path_is_built(tmp_path, name):
    from qnmodel.lab.testbed.topology import parse_topology

    doc = {
        "testbed": {"name": name},
        "clients": [{"name": "c1"}],
        "servers": [{"name": "s1", "service": "tcp"}],
    }
    with pytest.raises(InvalidModelError, match="testbed.name"):
        parse_topology(doc)


def test_down_refuses_a_hostile_name_given_directly(tmp_path):
    """Found here: down("../../etc") built the state directory root/../../etc and removed it
    (step 6 of down). Now every testbed name passes the topology file's rule first."""
    with pytest.raises(InvalidModelError, match=r"testbed\.name must be a lower-case name"):
        lifecycle.down("../../etc", state_root=tmp_path)
    assert os.path.isdir("/etc")
