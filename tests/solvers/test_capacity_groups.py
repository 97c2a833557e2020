"""Symmetric groups (issue 26 item 5): best_upgrade and min_servers act on an array of
identical members (qnmodel.solvers.groups)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError, InvalidTypeError
from qnmodel.solvers.capacity import best_upgrade, min_servers
from qnmodel.solvers.groups import StationGroup, find_groups, spread_group
from tests._tol import closed_form

DISKS = [f"disk{i}" for i in range(1, 7)]


def array(service="5 ms", servers=1, lam_cpu="0.5 ms"):
    """A cpu and six identical disks; a read visits ONE disk (visits 1/6, 5 ms each)."""
    disks = [qn.Station(d, service_time=service, visits=1 / 6, servers=servers) for d in DISKS]
    return qn.Network((qn.Station("cpu", lam_cpu), *disks))


def mm1(d, lam):
    """Residence time of an M/M/1 station of demand d at rate lam (inf if saturated)."""
    return d / (1 - lam * d) if lam * d < 1 else math.inf


def test_the_six_disk_array_is_one_group():
    net = array()
    groups = find_groups(net)
    assert groups == (
        StationGroup("cpu", ("cpu",)),
        StationGroup("disk1..disk6", tuple(DISKS)),
    )
    assert groups[1].label == "disk1..disk6 (6 identical)"
    # equal demands under different names are two devices, not an array
    two = qn.Network.from_demands(["1 ms", "1 ms"], names=["cpu", "nic"])
    assert [g.size for g in find_groups(two)] == [1, 1]
    # numbered but not consecutive: the names are listed
    gap = qn.Network.from_demands(["1 ms", "1 ms"], names=["d1", "d3"])
    assert find_groups(gap)[0].name == "d1, d3"
    # one member differs: it is left alone
    odd = qn.Network.from_demands(["1 ms", "1 ms", "2 ms"], names=["d1", "d2", "d3"])
    assert [g.name for g in find_groups(odd)] == ["d1..d2", "d3"]
    assert [g.size for g in find_groups(net, None)] == [1] * 7


def test_best_upgrade_of_an_unstable_array_offers_the_array_upgrades_first():
    """Issue 26 item 5: at 1300 reads/s each disk gets 1300/6 x 5 ms = 1.083 Erlang. Making one
    disk faster leaves five saturated (twelve inf rows); the array upgrades help."""
    lam = 1300.0
    net = array()
    up = best_upgrade(net, arrival_rate=lam)
    assert math.isinf(up.baseline_response_time)
    label = "disk1..disk6 (6 identical)"
    assert set(up.options) == {
        f"{label}: all 6 members 2x faster",
        f"{label}: one more member (7)",
        f"{label}: 2 servers each",
        "cpu: 2x faster",
        "cpu: 2 servers",
    }
    finite = np.isfinite(up.response_time)
    assert finite.tolist() == [True, True, True, False, False]  # the stable ones first
    assert not any(o.startswith("disk1:") for o in up.options)
    cpu = mm1(0.5e-3, lam)
    by_option = dict(zip(up.options, up.response_time, strict=True))
    # all 6 members 2x faster: six M/M/1 of demand 2.5 ms / 6
    faster = cpu + 6 * mm1(2.5e-3 / 6, lam)
    assert by_option[f"{label}: all 6 members 2x faster"] == pytest.approx(
        faster, rel=closed_form(16) / (1 - lam * 2.5e-3 / 6)
    )
    # one more member: seven M/M/1 of demand 5 ms / 7 (the load spread over 7)
    seven = cpu + 7 * mm1(5e-3 / 7, lam)
    assert by_option[f"{label}: one more member (7)"] == pytest.approx(
        seven, rel=closed_form(16) / (1 - lam * 5e-3 / 7)
    )
    # the same network written out by hand
    by_hand = qn.Network(
        (qn.Station("cpu", "0.5 ms"),
         *[qn.Station(f"disk{i}", service_time="5 ms", visits=1 / 7) for i in range(1, 8)])
    )  # fmt: skip
    assert spread_group(net, find_groups(net)[1], 7) == by_hand
    R = qn.open_network(by_hand, lam).response_time[0]
    assert by_option[f"{label}: one more member (7)"] == pytest.approx(R, rel=1e-12)
    # the ratio of response times, not the device speedup: inf when it makes it stable
    assert up.speedup == 2.0
    assert up.response_time_ratio.tolist() == [math.inf] * 3 + [0.0, 0.0]


def test_best_upgrade_of_a_stable_array_and_without_groups():
    net = array()
    up = best_upgrade(net, arrival_rate=600.0, speedup=3)
    assert up.options[0] == "disk1..disk6 (6 identical): all 6 members 3x faster"
    base = mm1(0.5e-3, 600) + 6 * mm1(5e-3 / 6, 600)
    assert up.baseline_response_time == pytest.approx(base, rel=closed_form(16) / 0.5)
    frame = up.to_frame()
    assert list(frame.columns) == ["option", "response_time", "response_time_ratio"]
    assert frame["response_time_ratio"].iloc[0] == pytest.approx(
        base / up.response_time[0], rel=1e-15
    )
    alone = best_upgrade(net, arrival_rate=600.0, groups=None, speedup=3)
    assert "disk1: 3x faster" in alone.options and len(alone.options) == 14


def test_named_groups_and_their_errors():
    net = qn.Network.from_demands(["1 ms", "4 ms", "4 ms", "4 ms", "9 ms"],
                                  names=["cpu", "a", "b", "c", "z"])  # fmt: skip
    groups = find_groups(net, {"shelf": ["c", "a", "b"]})
    assert groups[1] == StationGroup("shelf", ("a", "b", "c"), explicit=True)
    assert groups[1].label == "shelf (3 identical)"
    up = best_upgrade(net, N=10, groups={"shelf": ["a", "b", "c"]})
    assert "shelf (3 identical): one more member (4)" in up.options
    four = spread_group(net, groups[1], 4)
    assert four.names == ("cpu", "a", "b", "c", "c#2", "z")
    assert four.demands[1:5].tolist() == pytest.approx([3e-3] * 4, rel=1e-15)
    cases = [
        (
            {"shelf": ["a", "z"]},
            "station 'z' differs from 'a' in demand (0.009, while 'a' has 0.004)",
        ),  # fmt: skip
        ({"shelf": ["a", "q"]}, "groups['shelf']: no station 'q'; the stations are"),
        ({"shelf": ["a"]}, "groups['shelf'] has 1 member(s): a group has at least two"),
        ({"s": ["a", "b"], "t": ["b", "c"]}, "station 'b' is already in group 's'"),
    ]
    for groups_arg, message in cases:
        with pytest.raises(InvalidModelError) as exc:
            find_groups(net, groups_arg)
        assert message in str(exc.value)
    delay = qn.Network.from_demands(["1 ms", "1 ms"], names=["a", "b"], kinds=["queue", "delay"])
    with pytest.raises(InvalidModelError, match="station 'b' is a delay station or has no demand"):
        find_groups(delay, {"g": ["a", "b"]})
    with pytest.raises(InvalidTypeError, match="groups must be 'auto', None or a mapping"):
        find_groups(net, ["a", "b"])
    with pytest.raises(InvalidTypeError, match=r"groups\['g'\] must be a list of station names"):
        find_groups(net, {"g": "ab"})


# -- min_servers: devices with a rate curve ------------------------------------------------
CURVE = [1.0, 1.8, 2.4, 2.8]


def nvme_net(n):
    """A cpu and n NVMe drives with CURVE, sharing 80 us of demand per request evenly."""
    d = 80e-6 / n
    drives = [qn.Station(f"nvme{i}", d, rate_multipliers=CURVE) for i in range(1, n + 1)]
    return qn.Network((qn.Station("cpu", "10 us"), *drives))


def test_how_many_nvme_drives_for_a_target():
    """One drive serves at most 2.8 / 80 us = 35000/s; at 60000/s the question is how many."""
    lam, target = 60000.0, 200e-6
    net = qn.Network((qn.Station("cpu", "10 us"),
                      qn.Station("nvme", "80 us", rate_multipliers=CURVE)))  # fmt: skip
    n = min_servers(net, "nvme", "R <= 200 us", arrival_rate=lam)

    def R(k):
        try:
            return qn.open_network(nvme_net(k), lam).response_time[0]
        except qn.UnstableModelError:
            return math.inf

    assert R(n) <= target < R(n - 1)
    assert n == 3  # two drives: U = 60000 x 40 us / 2.8 = 0.86 per drive, R = 247 us
    # an array of such drives: the number of members, the same answer
    assert min_servers(nvme_net(2), "nvme1", "R <= 200 us", arrival_rate=lam) == n
    assert min_servers(nvme_net(2), "nvme1..nvme2", "R <= 200 us", arrival_rate=lam) == n
    with pytest.raises(InvalidModelError, match="ask how many such devices: .*count='devices'"):
        min_servers(net, "nvme", "R <= 200 us", arrival_rate=lam, count="servers")
    with pytest.raises(InvalidModelError, match="nor with unlimited devices"):
        min_servers(net, "nvme", "R <= 85 us", arrival_rate=lam)  # 10 + 80 us alone


def test_min_servers_of_a_group_of_plain_members():
    net = array()
    lam = 1300.0
    # servers in each member: two each make the 1.083-Erlang members stable
    m = min_servers(net, "disk3", "R <= 20 ms", arrival_rate=lam)
    members = min_servers(net, "disk1..disk6", "R <= 20 ms", arrival_rate=lam, count="devices")
    for k, ok in ((m, True), (m - 1, False)):
        n = qn.Network((qn.Station("cpu", "0.5 ms"),
                        *[qn.Station(d, service_time="5 ms", visits=1 / 6, servers=k)
                          for d in DISKS]))  # fmt: skip
        try:
            r = qn.open_network(n, lam).response_time[0]
        except qn.UnstableModelError:
            r = math.inf
        assert (r <= 0.02) == ok
    # members: n M/M/1 of demand 5 ms / n: R = 5 ms / (1 - lam 5 ms / n) + cpu <= 20 ms
    need = math.ceil(lam * 5e-3 / (1 - 5e-3 / (0.02 - mm1(0.5e-3, lam))))
    assert members == need
    with pytest.raises(InvalidModelError, match="count must be 'servers' or 'devices'"):
        min_servers(net, "disk1", "R <= 20 ms", arrival_rate=lam, count="drives")
    with pytest.raises(InvalidModelError, match="'z' is a delay station"):
        min_servers(
            qn.Network.from_demands(
                ["1 ms", "1 ms"], names=["a", "z"], kinds=["queue", "delay"]
            ),  # fmt: skip
            "z",
            "R <= 5 ms",
            arrival_rate=1.0,
        )


def test_how_many_nvme_drives_for_closed_clients():
    """40 clients thinking 1 ms: the drives for R <= 110 us, checked by exact MVA."""
    net = qn.Network((qn.Station("cpu", "10 us"),
                      qn.Station("nvme", "80 us", rate_multipliers=CURVE)),
                     think_time="1 ms")  # fmt: skip
    n = min_servers(net, "nvme", "R <= 110 us", N=40)

    def R(k):
        closed = qn.Network(nvme_net(k).stations, think_time="1 ms")
        return qn.mva(closed, 40).response_time[-1]

    assert R(n) <= 110e-6 < R(n - 1)
    assert n == 3  # 117.9 us with two drives, 107.0 us with three


def test_min_servers_of_a_fork_join_element_is_refused():
    from qnmodel.model import ForkJoin

    fj = ForkJoin("arr", tuple(qn.Station(f"d{i}", "5 ms") for i in range(3)))
    net = qn.Network((qn.Station("cpu", "1 ms"), fj))
    assert find_groups(net) == (StationGroup("cpu", ("cpu",)),)
    with pytest.raises(
        InvalidModelError, match="'arr' is a fork-join element: .*qnmodel.fork_join"
    ):
        min_servers(net, "arr", "R <= 1 s", N=5)
