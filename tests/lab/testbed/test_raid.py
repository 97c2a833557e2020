"""ENBD-style networked RAID on the testbed: qnbench stripe over K tcp servers in K namespaces.

Known values: full-stripe RAID0 reads of K x 64 KiB through the master's 100 Mbit/s link
saturate at the TCP goodput, rate x 1448 / 1514, which is also the bottleneck law of today's
NetworkedRAID model, X_max = 1 / D_nic_master (its demand counts 1514-byte frames of 1448 B);
each member sends one chunk per stripe, so each server's link carries 1/K of the bytes.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from qnmodel.lab import testbed
from tests.lab.testbed.helpers import leftovers, needs_root, write_topology

pytestmark = [pytest.mark.testbed, pytest.mark.alone, pytest.mark.xdist_group("testbed")]

RATE = 12.5e6
K = 3
CHUNK = 65536
TOPOLOGY = (
    '[testbed]\nname = "traid"\n[[clients]]\nname = "master"\nlink = { rate = "100 Mbit/s" }\n'
)
TOPOLOGY += "".join(
    f'[[servers]]\nname = "m{i}"\nservice = "tcp"\nport = {5300 + i}\n'
    'link = { rate = "100 Mbit/s" }\n'
    for i in range(K)
)


def sent_bytes(ns: str) -> int:
    out = subprocess.run(["tc", "-n", ns, "-s", "qdisc", "show", "dev", "eth0"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return int(re.search(r"Sent (\d+) bytes", out)[1])


@needs_root
def test_stripe_over_three_namespaces_saturates_the_master_link(tmp_path):
    topo = testbed.load_topology(write_topology(tmp_path, TOPOLOGY))
    doc = testbed.up(topo)
    try:
        assert doc["stripe"]["address"] == "10.213.255.1"
        assert [m["port"] for m in doc["stripe"]["members"]] == [5300, 5301, 5302]
        opts = testbed.stripe_options(topo, raid=0, chunk=CHUNK)
        before = [sent_bytes(topo.namespace(f"m{i}")) for i in range(K)]
        trace = testbed.bench_in(topo, "master", "stripe", rw="read", bs=K * CHUNK, jobs=6,
                                 runtime="3 s", warmup="500 ms", repeat=3, **opts)  # fmt: skip
        sent = [sent_bytes(topo.namespace(f"m{i}")) - b for i, b in enumerate(before)]
        # X = N / R (Little's law, no think time): free of the +-N requests edge effect of
        # counting completions in a window. R still leaves out the requests in flight at the
        # window's end (the longest): with 1 s windows (about 10 requests per client) the best
        # repeat read 0.983-0.984 of the rate in 2 of 4 idle runs, 3 % above TCP goodput, so
        # the windows are 3 s. The link caps X from above and CPU contention
        # (4 processes on 2 shared cores) can only lower it: the best of 3 repeats is the
        # link-limited value (seen under load: 0.79, 0.88, 0.95)
        little = sorted(6 * K * CHUNK / x["latency_s"]["mean"] / RATE for x in trace.results)
        ratio = little[-1]
        print(f"RAID0 full-stripe reads, N=6, 100 Mbit/s: N*bs/R/rate "
              f"{[round(x, 4) for x in little]}, bytes per member {sent}")  # fmt: skip
        # the master's link is the bottleneck: TCP goodput within 3 %
        assert ratio == pytest.approx(testbed.GOODPUT_FACTOR, rel=0.03)
        # every member served its share: one chunk per stripe each (within 5 %)
        assert all(s == pytest.approx(sum(sent) / K, rel=0.05) for s in sent)
        # the model has the same bottleneck and asymptote: in the paper's form the master NIC
        paper = testbed.raid_model(topo, "master", chunk=CHUNK, form="paper")
        d = paper.demands()
        assert max(d, key=d.get) == "nic_master"
        x_max = 1.0 / d["nic_master"]
        # (its NIC demand also counts the request packets: 0.2 % above the pure frame ratio)
        assert x_max * K * CHUNK / RATE == pytest.approx(1448 / 1514, rel=0.005)
        assert ratio * RATE / (K * CHUNK) == pytest.approx(x_max, rel=0.03)
        # in the default, corrected form the master's incoming link, the same frames
        d = testbed.raid_model(topo, "master", chunk=CHUNK).demands()
        assert max(d, key=d.get) == "link_in"
        assert 1.0 / d["link_in"] == pytest.approx(x_max, rel=1e-12)
        assert ratio * RATE / (K * CHUNK) == pytest.approx(1.0 / d["link_in"], rel=0.03)
    finally:
        testbed.down(topo)
    assert leftovers("traid") == []


def test_stripe_options_need_a_running_testbed(tmp_path):
    topo = testbed.load_topology(write_topology(tmp_path, TOPOLOGY.replace("traid", "tnone")))
    with pytest.raises(testbed.TestbedError, match="not up"):
        testbed.stripe_options(topo)
