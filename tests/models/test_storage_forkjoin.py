"""Storage models with fork-join stations: NetworkedRAID(structure="forkjoin"), RAID arrays."""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.models.raid import disk_array_forkjoin
from qnmodel.solvers.forkjoin import harmonic

from .._tol import closed_form


def test_paper_structure_is_the_default_and_unchanged():
    sys = qn.NetworkedRAID.cui2006(form="paper")
    assert sys.network().names == sys.network(structure="paper").names
    assert sys.network().names == (
        "cpu_master", "nic_master", "network", "nic_server", "cpu_server", "disk",
    )  # fmt: skip
    # the default (corrected) form: the same structure over its own stations
    corrected = qn.NetworkedRAID.cui2006()
    assert corrected.network().names == corrected.network(structure="paper").names == (
        "cpu_master", "link_out", "link_in", "cpu_server", "disk",
    )  # fmt: skip


def test_forkjoin_structure_forks_over_every_storage_server():
    sys = qn.NetworkedRAID.cui2006(form="paper")
    net = sys.network(structure="forkjoin", think_time="10 ms")
    assert net.names == ("cpu_master", "nic_master", "network", "storage_servers")
    fj = net.stations[-1]
    assert fj.n == sys.stripe_width == 3 and fj.k == 3
    one = sys.replace(server_terms="one_server").demands()
    member = one["nic_server"] + one["cpu_server"] + one["disk"]
    # each branch sums the same three demands as `member`, perhaps in another order
    assert [b.demand for b in fj.branches] == pytest.approx([member] * 3, rel=closed_form(3))
    d = sys.demands()
    # one request: master stations in series, then the mean of the maximum of 3 members
    r = sys.fork_join(1)
    expected = d["cpu_master"] + d["nic_master"] + d["network"] + member * harmonic(3)
    # N = 1: no queueing, so the fork-join MVA sums the same terms (H_3: 3 more operations)
    assert r.response_time[0] == pytest.approx(expected, rel=closed_form(8))
    assert "approximate" in r.method


def test_forkjoin_structure_of_the_default_corrected_form():
    sys = qn.NetworkedRAID.cui2006(op="read")  # form="corrected"
    net = sys.network(structure="forkjoin")
    assert net.names == ("cpu_master", "link_out", "link_in", "storage_servers")
    one = sys.replace(server_terms="one_server").demands()
    member = one["cpu_server"] + one["disk"]  # the servers' NICs are pipelined away
    assert [b.demand for b in net.stations[-1].branches] == pytest.approx(
        [member] * 3, rel=closed_form(2)
    )
    d = sys.demands()
    r = sys.fork_join(1)
    master = d["cpu_master"] + d["link_out"] + d["link_in"]
    assert r.response_time[0] == pytest.approx(master + member * harmonic(3), rel=closed_form(8))


def test_forkjoin_structure_saturates_at_the_bottleneck():
    sys = qn.NetworkedRAID.cui2006()
    net = sys.network(structure="forkjoin")
    r = sys.fork_join(64)
    assert np.all(r.throughput <= 1 / net.demands.max() * (1 + 1e-12))
    # Little's law with Z = 0: X = n / R, then X R: two roundings
    np.testing.assert_allclose(
        r.throughput * r.response_time, np.arange(1, 65), rtol=closed_form(2)
    )


def test_forkjoin_structure_refuses_other_options_and_old_solvers():
    sys = qn.NetworkedRAID.cui2006()
    with pytest.raises(qn.InvalidModelError, match="expand_servers"):
        sys.network(structure="forkjoin", expand_servers=True)
    with pytest.raises(qn.InvalidModelError, match="disk_array"):
        sys.network(structure="forkjoin", disk_array=("raid5", 4, "sequential"))
    with pytest.raises(qn.InvalidModelError, match="structure must be one of"):
        sys.network(structure="stripe")
    with pytest.raises(qn.InvalidModelError, match="storage_servers.*fork_join"):
        qn.mva(sys.network(structure="forkjoin"), 4)


@pytest.mark.parametrize("level, op, T", [("raid0", "read", 4), ("raid5", "write", 3)])
def test_disk_array_forkjoin_keeps_the_speedup_table(level, op, T):
    d = 0.008
    fj = disk_array_forkjoin("array", d, level, 4, op)
    assert fj.n == 4 and fj.k == 4
    assert [b.demand for b in fj.branches] == pytest.approx([d / T] * 4, rel=closed_form(1))
    r = qn.fork_join(qn.Network([fj]), 200)
    assert r.throughput[-1] == pytest.approx(T / d, rel=0.02)  # saturates at T x one disk
    assert r.response_time[0] == pytest.approx(
        d / T * harmonic(4), rel=closed_form(6)
    )  # one request: the max


@pytest.mark.parametrize("disks", [3, 4, 8])
def test_raid5_read_modify_write_forks_to_two_random_members(disks):
    from qnmodel.models.raid import raid5_read_modify_write, theoretical_speedup

    d = 0.004
    fj = raid5_read_modify_write(d, disks)
    assert fj.name == "rmw" and fj.n == disks and fj.fanout == 2 and fj.k == 2
    # read + write
    assert [b.demand for b in fj.branches] == pytest.approx([2 * d] * disks, rel=closed_form(1))
    r = qn.fork_join(qn.Network([fj]), 1000)
    # one write alone: two joins of two exponential members, 2 d H_2 = 3 d
    assert r.response_time[0] == pytest.approx(2 * d * harmonic(2), rel=closed_form(3))
    # each disk is busy 4 d / N per write: the speedup table's N / 4 random-write speedup
    T = theoretical_speedup("raid5", disks, "write", "random")
    assert T == pytest.approx(disks / 4, rel=closed_form(1))
    assert r.throughput[-1] == pytest.approx(T / d, rel=0.01)
    assert np.all(r.throughput <= T / d * (1 + closed_form(4)))
