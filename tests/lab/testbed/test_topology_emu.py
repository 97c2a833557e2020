"""The ``emu`` disk kind of a topology: parsed into SI values, turned into qnbench's options.

No root needed: nothing is brought up here (tests/testbed/test_emu_disk.py does that).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from qnmodel import bench
from qnmodel.errors import InvalidModelError
from qnmodel.lab.testbed import load_topology, parse_topology
from qnmodel.lab.testbed.services import emu_options

pytestmark = pytest.mark.testbed

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "testbed" / "raid_emu.toml"


def _doc(disk, service="tcp"):
    return {
        "testbed": {"name": "emu"},
        "clients": [{"name": "c1"}],
        "servers": [{"name": "s1", "service": service, "disk": disk}],
    }


def test_emu_disk_values_are_si_and_its_service_time_is_a_plus_b_over_r():
    topo = parse_topology(
        _doc(
            {
                "kind": "emu",
                "latency": "1.5 ms",
                "rate": "100 MB/s",
                "dist": "exponential",
                "servers": 2,
            }
        )  # fmt: skip
    )
    d = topo.servers[0].disk
    assert (d.kind, d.latency, d.rate, d.dist, d.servers) == ("emu", 1.5e-3, 1e8, "exp", 2)
    assert d.service_time(65536) == pytest.approx(1.5e-3 + 65536 / 1e8, rel=1e-15)
    # defaults: constant service, one server; a rate alone is a pure transfer time
    d = parse_topology(_doc({"kind": "emu", "rate": "1 GB/s"})).servers[0].disk
    assert (d.latency, d.dist, d.servers) == (0.0, "const", 1)
    assert d.service_time(1e6) == pytest.approx(1e-3, rel=1e-15)
    with pytest.raises(InvalidModelError, match="tmpfs disk has no configured service time"):
        parse_topology(_doc({"kind": "tmpfs"}, "nfs")).servers[0].disk.service_time(1)


def test_emu_options_are_what_qnbench_parses_back():
    d = (
        parse_topology(
            _doc(
                {
                    "kind": "emu",
                    "latency": "250 us",
                    "rate": "1 Gbit/s",
                    "dist": "const",
                    "servers": 3,
                }
            )  # fmt: skip
        )
        .servers[0]
        .disk
    )
    opts = emu_options(d)
    # qnbench echoes its effective options: the same SI values (parsed, not re-typed)
    p = subprocess.run(
        [str(bench.executable()), "--engine", "tcp", *opts, "--ops", "1", "--warmup", "0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    echo = json.loads(p.stdout)["options"]
    assert p.returncode == 0, p.stderr
    assert echo["serve"] == "emu" and echo["dev_dist"] == "const" and echo["dev_servers"] == 3
    assert echo["dev_latency_s"] == 250e-6 and echo["dev_rate_B_s"] == 125e6


def test_the_example_topology_parses():
    topo = load_topology(EXAMPLE)
    assert [s.disk.kind for s in topo.servers] == ["emu"] * 4  # the grid's 2-4 servers
    assert [s.port for s in topo.servers] == [5300, 5301, 5302, 5303]
    # a faithful link at 1 Gbit/s: ten frames, the least with which htb reaches the rate
    assert {n.link.burst for n in [*topo.clients, *topo.servers]} == {15140}
    assert all(s.disk.service_time(65536) == pytest.approx(2.15536e-3) for s in topo.servers)
