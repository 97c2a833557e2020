"""The link probe's and the alone link calibration's refusals (no testbed, no root needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qnmodel.lab import testbed
from qnmodel.lab.testbed.services import link_probe
from qnmodel.lab.testbed.system import TestbedError
from qnmodel.lab.validation.bottomup import link_rate

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "testbed"


def test_probe_needs_a_server_node(tmp_path):
    topo = testbed.load_topology(EXAMPLES / "raid_100mbit.toml")
    with pytest.raises(TestbedError, match="a link probe runs in a server node; 'master' is a "):
        with link_probe(topo, "master", state_root=tmp_path):
            pass


def test_probe_needs_the_testbed_up(tmp_path):
    topo = testbed.load_topology(EXAMPLES / "raid_100mbit.toml")
    with pytest.raises(TestbedError, match="testbed 'trraid' is not up: no link probe without it"):
        with link_probe(topo, "m1", state_root=tmp_path):
            pass


def test_link_of_an_nfs_server_is_measured_alone_only():
    topo = testbed.load_topology(EXAMPLES / "nfs_100mbit.toml")
    with pytest.raises(TestbedError, match="alone=False needs a tcp server, 's1' runs nfs: use"):
        link_rate(topo, "c1", "s1", alone=False)
