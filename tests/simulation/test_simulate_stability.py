"""Which open models the simulator refuses as unstable, and which it must not.

An open class saturates a station when its offered utilisation is 1 or more. At a fork-join
branch that utilisation counts only the requests that reach the branch: a request forks to
``fanout`` of the ``n`` branches, so a branch of demand d sees lambda d fanout / n (the
``busy_demand`` of :class:`qnmodel.ForkJoin`). A finite-capacity station never saturates.
"""

from __future__ import annotations

import pytest

import qnmodel as qn
from qnmodel.models.raid import raid5_read_modify_write


def test_fork_join_fanout_counts_the_share_of_requests_a_branch_gets():
    # six 5 ms members, each request to one of them: 300/s loads each member 0.25, not 1.5
    fj = qn.ForkJoin("fj", [qn.Station(f"m{i}", "5 ms") for i in range(6)], fanout=1)
    r = qn.simulate(qn.Network([fj]), arrival_rate=300.0, seed=1, replications=5,
                    run_length=100.0)  # fmt: skip
    assert r.branch_utilization == pytest.approx([0.25] * 6, abs=0.02)
    # one of six M/M/1 queues at 50/s, 5 ms: R = 5 ms / (1 - 0.25)
    assert abs(r.response_time[0] - 0.005 / 0.75) <= 3 * r.response_time_halfwidth[0] + 1e-5


def test_raid5_read_modify_write_is_stable_below_saturation():
    # each write forks to 2 of 6 disks with 10 ms each: a disk is busy 100 * 10 ms * 2/6 = 1/3
    fj = raid5_read_modify_write("5 ms", 6)
    r = qn.simulate(qn.Network([fj]), arrival_rate=100.0, seed=2, replications=5,
                    run_length=100.0)  # fmt: skip
    assert r.branch_utilization == pytest.approx([1 / 3] * 6, abs=0.02)


def test_fork_join_beyond_its_branch_capacity_is_refused():
    # at 1300/s a member of the six gets 1300/6 * 5 ms = 1.083 of its capacity
    fj = qn.ForkJoin("fj", [qn.Station(f"m{i}", "5 ms") for i in range(6)], fanout=1)
    with pytest.raises(qn.UnstableModelError, match=r"'fj/m0' is saturated .*utilisation 1.083"):
        qn.simulate(qn.Network([fj]), arrival_rate=1300.0, seed=1)


def test_station_after_a_finite_one_is_not_refused_for_the_offered_load():
    # 150/s offered, at most 100/s carried past the 1-place buffer of a 10 ms server: the
    # 8 ms station after it is loaded at most 0.8 (it would be 1.2 at the offered rate)
    net = qn.Network([qn.Station("gate", "10 ms", capacity=1), qn.Station("disk", "8 ms")])
    r = qn.simulate(net, arrival_rate=150.0, seed=3, replications=5, run_length=50.0)
    assert r.utilization[0, 1] < 0.8
    # without the limit the same load is refused
    with pytest.raises(qn.UnstableModelError, match="'gate' is saturated"):
        qn.simulate(qn.Network([qn.Station("gate", "10 ms"), qn.Station("disk", "8 ms")]),
                    arrival_rate=150.0, seed=3)  # fmt: skip
