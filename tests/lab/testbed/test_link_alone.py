"""A server's link calibrated alone (issue 28): a memory-served probe beside an emulated disk.

One block server whose emulated disk moves 30 MB/s behind a 100 Mbit/s link. The link sweep
of :func:`qnmodel.lab.validation.bottomup.link_rate` against the server's own block server
(``alone=False``) times each 4 MiB request through the disk too and reads the link low; the
default (``alone=True``) sweeps a memory-served qnbench server in the same namespace, through
the same shaped link (:func:`qnmodel.lab.testbed.services.link_probe`), and recovers the
configured rate; the study's cross-check flags the first and not the second. About 40 s.
"""

from __future__ import annotations

import pytest

from qnmodel.lab import testbed
from qnmodel.lab.testbed.services import PROBE_PORT_OFFSET
from qnmodel.lab.validation.bottomup import link_rate
from qnmodel.lab.validation.crosscheck import TOLERANCE, cross_checks, flags
from tests.lab.testbed.helpers import leftovers, needs_root, write_topology

pytestmark = [pytest.mark.testbed, pytest.mark.alone, pytest.mark.xdist_group("testbed")]

DISK = '{ kind = "emu", latency = "0.1 ms", rate = "30 MB/s", dist = "const", servers = 1 }'
TOPOLOGY = (
    '[testbed]\nname = "ti28"\n[[clients]]\nname = "master"\nlink = { rate = "100 Mbit/s" }\n'
    '[[servers]]\nname = "s0"\nservice = "tcp"\nport = 5300\n'
    f'link = {{ rate = "100 Mbit/s" }}\ndisk = {DISK}\n'
)


@needs_root
def test_link_alone_recovers_the_configured_rate_where_the_disk_hides_it(tmp_path):
    topo = testbed.load_topology(write_topology(tmp_path, TOPOLOGY))
    testbed.up(topo)
    try:
        alone = link_rate(topo, "master", "s0", op="read", repeat=2)
        through = link_rate(topo, "master", "s0", op="read", repeat=2, alone=False)
        # the probe is gone and off the record: the testbed is still up for the study
        assert testbed.status(topo)["up"]
    finally:
        testbed.down(topo)
    assert leftovers("ti28") == []
    conf = topo.node("s0").link.rate
    print(f"alone {alone['rate']:.5g} B/s ({alone['rate'] / conf - 1:+.2%}), through the disk "
          f"{through['rate']:.5g} B/s ({through['rate'] / conf - 1:+.2%})")  # fmt: skip
    assert alone["path"] == f"memory probe in s0 (port {5300 + PROBE_PORT_OFFSET}), no device"
    assert "through its device" in through["path"]
    # 100 Mbit/s links calibrate within 0.5 % alone at load ~1 (bottomup.link_rate); a 4 MiB
    # request spends ~0.14 s on the 30 MB/s disk beside ~0.35 s on the link: ~29 % low
    assert abs(alone["rate"] / conf - 1) < TOLERANCE
    assert through["rate"] / conf - 1 < -0.15
    cal = {"links": {"s0": {"read": alone}}, "disks": {}}
    assert flags(cross_checks(cal, [], [])) == []
    bad = flags(cross_checks({"links": {"s0": {"read": through}}, "disks": {}}, [], []))
    assert [r["component"] for r in bad] == ["link s0 (read)"]
