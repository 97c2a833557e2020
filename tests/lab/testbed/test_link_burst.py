"""A link's shaper burst: parsed from the topology, the htb bucket the testbed uses (no root)."""

from __future__ import annotations

import pytest

from qnmodel.errors import InvalidModelError
from qnmodel.lab.testbed import parse_topology
from qnmodel.lab.testbed.lifecycle import shaper_burst


def topo(link):
    return parse_topology(
        {"testbed": {"name": "tburst"}, "clients": [{"name": "c1", "link": link}],
         "servers": [{"name": "s1", "service": "tcp"}]}
    )  # fmt: skip


def test_burst_is_parsed_in_bytes():
    assert topo({"rate": "100 Mbit/s", "burst": "1514 B"}).node("c1").link.burst == 1514.0
    assert topo({"rate": "1 Gbit/s", "burst": "15 KiB"}).node("c1").link.burst == 15360.0
    assert topo({"rate": "1 Gbit/s"}).node("c1").link.burst is None


def test_default_bucket_is_ten_frames_or_one_millisecond():
    assert shaper_burst(12.5e6) == 15140  # 100 Mbit/s: 10 x 1514 B > 1 ms (12 500 B)
    assert shaper_burst(125e6) == 125000  # 1 Gbit/s: 1 ms at the rate
    assert shaper_burst(125e6, 1514.0) == 1514  # the topology's own


@pytest.mark.parametrize(
    "link, match",
    [
        ({"rate": "100 Mbit/s", "burst": "1000 B"}, r"must hold one frame \(mtu \+ 14 = 1514 B\)"),
        ({"rate": "100 Mbit/s", "mtu": 9000, "burst": "1514 B"}, r"mtu \+ 14 = 9014 B"),
        ({"rate": "100 Mbit/s", "burst": "0 B"}, r"burst"),
        ({"rate": "100 Mbit/s", "burst": "4 GiB"}, r"at most 2 GiB"),
    ],
)  # fmt: skip
def test_bad_burst(link, match):
    with pytest.raises(InvalidModelError, match=match):
        topo(link)
