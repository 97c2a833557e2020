"""Multi-client NFS bandwidth from the closed network of an NFSSystem."""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError, InvalidTypeError
from qnmodel.models.nfs import NFSBandwidth, NFSSystem
from qnmodel.models.nfs_network import NFSAggregateResult, aggregate_bandwidth

from .._tol import closed_form, exact_mva

GBE = NFSBandwidth("10 GB/s", "1 Gbit/s", "10 GB/s", "80 MB/s")


def test_asymptote_equals_the_papers_miss_bandwidth():
    res = aggregate_bandwidth(NFSSystem(GBE), 200, "10 MB", "read")
    assert isinstance(res, NFSAggregateResult)
    assert res.asymptote == pytest.approx(80e6, rel=1e-14)
    assert res.bottleneck == "server_disk"
    # MVA's rounding only: the gap to saturation, (D_network / D_disk)^N = 0.64^200 = 1e-39, is
    # far below it
    assert res.bandwidth[-1] == pytest.approx(80e6, rel=exact_mva(4))
    assert np.all(np.diff(res.bandwidth) >= -1e-6)
    assert np.all(res.bandwidth <= res.asymptote * (1 + exact_mva(4)))


def test_one_client_is_the_serial_sum_of_demands():
    s = NFSSystem(GBE, server_cpu_per_request="100 us", disk_access_time="4 ms")
    S = 10e6
    res = aggregate_bandwidth(s, 5, S, "read", client_hit=0.2, server_hit=0.3)
    D = s.demands(S, "read", 0.2, 0.3)
    assert res.bandwidth[0] == pytest.approx(S / sum(D.values()), rel=exact_mva(4) + closed_form(5))
    # and one client of the network never beats the streaming (pipelined) model
    assert res.bandwidth[0] <= s.bandwidth("read", 0.2, 0.3)


def test_bandwidth_is_mva_throughput_times_file_size():
    s = NFSSystem(GBE, client_link="100 Mbit/s", server_cpu_per_request="200 us")
    S = 10e6
    res = aggregate_bandwidth(s, 30, "10 MB", "write", think_time="0.5 s")
    ref = qn.mva(s.network(S, "write", think_time=0.5), 30)
    np.testing.assert_allclose(res.bandwidth, ref.throughput * S, rtol=1e-15)
    np.testing.assert_allclose(
        res.per_client_bandwidth, ref.throughput * S / np.arange(1, 31), rtol=closed_form(2)
    )
    assert np.all(res.bandwidth_lower <= res.bandwidth * (1 + exact_mva(5) + closed_form(10)))
    assert np.all(res.bandwidth <= res.bandwidth_upper * (1 + exact_mva(5) + closed_form(10)))
    # 100 Mbit/s clients in front of a 1 GbE server: a few clients fill the server's disk
    assert res.bandwidth[0] < 12.5e6
    assert res.asymptote == pytest.approx(
        S / s.demands(S, "write")["server_disk"], rel=closed_form(2)
    )


def test_paper_testbed_shape_100mbit_clients_gbe_server():
    """[Cao07] sec. 3: one 100 Mbit/s client cannot fill the GbE server; ~10 can."""
    s = NFSSystem(
        NFSBandwidth("3 GB/s", "1 Gbit/s", "3 GB/s", "150 MB/s"), client_link="100 Mbit/s"
    )
    res = aggregate_bandwidth(s, 22, "10 MB", "write")
    assert res.bandwidth[0] == pytest.approx(
        1 / (1 / 12.5e6 + 1 / 3e9 + 1 / 125e6 + 1 / 3e9 + 1 / 150e6),
        rel=exact_mva(5) + closed_form(10),
    )
    assert res.bottleneck == "network"
    assert res.bandwidth[-1] / res.asymptote > 0.95


def test_dual_cpu_server_helps_only_when_the_cpu_binds():
    slow_cpu = dict(server_cpu_per_request="1 ms", wsize="32 KiB")
    one = aggregate_bandwidth(NFSSystem(GBE, server_cpus=1, **slow_cpu), 40, "10 MB", "write")
    two = aggregate_bandwidth(NFSSystem(GBE, server_cpus=2, **slow_cpu), 40, "10 MB", "write")
    assert one.bottleneck == "server_cpu"
    assert two.asymptote > one.asymptote
    assert two.bandwidth[-1] > 1.5 * one.bandwidth[-1]
    assert two.bounds.method == "aba"  # BJB does not apply to multi-server stations
    # one client: the same, up to each run's rounding
    assert two.bandwidth[0] == pytest.approx(one.bandwidth[0], rel=2 * exact_mva(4))


def test_to_frame_and_repr():
    res = aggregate_bandwidth(NFSSystem(GBE), 4, "1 MB", "read", 0.5, 0.5)
    df = res.to_frame()
    assert list(df.columns) == [
        "clients",
        "bandwidth",
        "bandwidth_lower",
        "bandwidth_upper",
        "per_client_bandwidth",
        "response_time",
    ]
    assert df["clients"].tolist() == [1, 2, 3, 4]
    assert "asymptote" in repr(res)
    with pytest.raises(ValueError):
        res.bandwidth[0] = 1.0  # read-only


def test_all_reads_from_client_cache_have_no_shared_bottleneck():
    res = aggregate_bandwidth(NFSSystem(GBE), 3, "1 MB", "read", client_hit=1.0)
    assert res.asymptote == np.inf
    np.testing.assert_allclose(res.bandwidth, [10e9, 20e9, 30e9], rtol=closed_form(3))


def test_errors():
    with pytest.raises(InvalidTypeError, match="system must be an NFSSystem"):
        aggregate_bandwidth(GBE, 3, "1 MB")
    with pytest.raises(InvalidModelError, match=r"clients must be an integer >= 1, got 0"):
        aggregate_bandwidth(NFSSystem(GBE), 0, "1 MB")
    with pytest.raises(InvalidModelError, match=r"nbytes must be > 0, got 0"):
        aggregate_bandwidth(NFSSystem(GBE), 2, 0)
    with pytest.raises(InvalidModelError, match="scalar hit ratios"):
        aggregate_bandwidth(NFSSystem(GBE), 2, "1 MB", "read", [0.1, 0.2], 0.0)
