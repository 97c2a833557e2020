"""MPI ranks placed in client namespaces (qnbench --netns): the aggregate crosses real links.

Known values: two clients, each behind its own 100 Mbit/s link, read from one tcp server behind
1 Gbit/s. Each rank's traffic is capped by its own link at the TCP goodput (rate x 1448 / 1514,
GOODPUT_FACTOR), so the aggregate rank 0 reports is twice that; were both ranks behind one link
it would be once, and in the host's namespace they could not reach the server at all.
"""

from __future__ import annotations

import subprocess

import pytest

from qnmodel.bench import executable
from qnmodel.lab import testbed
from qnmodel.lab.testbed import TestbedError
from tests.lab.testbed.helpers import leftovers, needs_root, write_topology

pytestmark = [pytest.mark.testbed, pytest.mark.alone, pytest.mark.xdist_group("testbed")]

RATE = 12.5e6
TOPOLOGY = """
[testbed]
name = "tmpi"
[[clients]]
name = "c1"
link = { rate = "100 Mbit/s" }
[[clients]]
name = "c2"
link = { rate = "100 Mbit/s" }
[[servers]]
name = "s1"
service = "tcp"
port = 5400
link = { rate = "1 Gbit/s" }
"""


@needs_root
def test_one_rank_per_client_namespace_doubles_the_aggregate(tmp_path):
    topo = testbed.load_topology(write_topology(tmp_path, TOPOLOGY))
    doc = testbed.up(topo)
    pids = [(n["pid"], None) for n in doc["nodes"].values() if "pid" in n]
    try:
        opts = dict(tcp_role="client", host=topo.address("s1"), port=5400, rw="read",
                    bs="256 KiB", jobs=[2], runtime="1 s", warmup="300 ms", repeat=3)  # fmt: skip
        trace = testbed.bench_ranks_in(topo, ["c1", "c2"], "tcp", **opts)
        agg = trace.document["mpi"]["aggregate"]
        assert trace.document["mpi"]["ranks"] == 2 and all(a["complete"] for a in agg)
        # the links cap every repeat from above; CPU contention (4 processes, 2 cores) can only
        # lower one: the best repeat is the link-limited value. 256 KiB requests counted in a
        # 1 s window: +-1 request of ~46 per rank (2 %).
        best = max(agg, key=lambda a: a["throughput_B_s"])
        goodput = testbed.GOODPUT_FACTOR * RATE
        ratio = best["throughput_B_s"] / (2 * goodput)
        per_rank = [r["throughput_B_s"] / goodput for r in best["per_rank"]]
        print(f"aggregate / (2 x goodput) = {ratio:.4f}, per rank / goodput = {per_rank}")
        assert ratio == pytest.approx(1.0, abs=0.05)
        assert all(x == pytest.approx(1.0, abs=0.07) for x in per_rank)
    finally:
        testbed.down(topo)
    assert leftovers("tmpi", pids) == []


def test_mpi_argv_refuses_nodes_that_are_not_distinct_clients(tmp_path):
    topo = testbed.load_topology(write_topology(tmp_path, TOPOLOGY))
    with pytest.raises(TestbedError, match="'s1' is not a client of testbed 'tmpi'"):
        testbed.mpi_argv(topo, ["c1", "s1"], [])
    with pytest.raises(TestbedError, match="name a node twice"):
        testbed.mpi_argv(topo, ["c1", "c1"], [])
    with pytest.raises(TestbedError, match="at least one client"):
        testbed.mpi_argv(topo, [], [])


@pytest.mark.parametrize(
    "value, message",
    [
        ("a,b", "--netns names 2 namespace(s) for 1 rank(s): give one per rank"),
        ("../etc", "'../etc' (rank 0) is not a namespace name"),
        ("qnm-no-such-namespace", "cannot open /run/netns/qnm-no-such-namespace"),
    ],
)
def test_netns_option_errors_name_the_value(value, message):
    p = subprocess.run([str(executable()), "--engine", "null", "--netns", value],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    assert p.returncode == 2 and p.stdout == "" and message in p.stderr, p.stderr
