"""Station and Network: construction, compiled arrays, immutability and every input error."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.model import STATION_KINDS, Network, Station
from tests._tol import closed_form

# ---------------------------------------------------------------------------------------
# Station
# ---------------------------------------------------------------------------------------


def test_station_accepts_seconds_and_unit_strings():
    assert Station("disk", "4.9 ms").demand == 0.0049
    assert Station("disk", 0.0049).demand == 0.0049
    s = Station("raid", "12 ms", kind="queue", servers=4)
    assert (s.servers, s.kind, s.is_delay) == (4, "queue", False)
    assert Station("users", "1 s", kind="delay").is_delay
    assert STATION_KINDS == ("queue", "delay")


def test_station_is_frozen_and_hashable():
    s = Station("cpu", 0.1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.demand = 0.2  # type: ignore[misc]
    assert Station("cpu", "100 ms") == s and hash(Station("cpu", "100 ms")) == hash(s)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (
            dict(name="disk", demand=-0.1),
            ValueError,
            r"^Station 'disk': demand must be >= 0, got -0.1$",
        ),
        (
            dict(name="disk", demand=math.nan),
            ValueError,
            r"^Station 'disk': demand must be finite, got nan$",
        ),
        (
            dict(name="disk", demand=math.inf),
            ValueError,
            r"^Station 'disk': demand must be finite, got inf$",
        ),
        (
            dict(name="disk", demand="4.9"),
            ValueError,
            r"^Station 'disk': demand: '4.9' has no unit",
        ),
        (
            dict(name="disk", demand="4.9 parsec"),
            ValueError,
            r"^Station 'disk': demand: unknown unit 'parsec'",
        ),
        (
            dict(name="disk", demand="4 KiB"),
            ValueError,
            r"^Station 'disk': demand: '4 KiB' is a size",
        ),
        (
            dict(name="disk", demand=None),
            ValueError,
            r"^Station 'disk': give its demand \(D = V S, e.g. demand='4.9 ms'\) or its "
            r"service_time per visit \(with visits\)$",
        ),
        (
            dict(name="disk", demand=[0.1]),
            TypeError,
            r"^Station 'disk': demand must be a number in s",
        ),
        (
            dict(name="disk", demand=0.1, kind="Queue"),
            ValueError,
            r"^Station 'disk': kind must be one of 'queue', 'delay'; got 'Queue'$",
        ),
        (
            dict(name="disk", demand=0.1, kind="fcfs"),
            ValueError,
            r"kind must be one of .*got 'fcfs'",
        ),
        (
            dict(name="disk", demand=0.1, servers=0),
            ValueError,
            r"^Station 'disk': servers must be an integer >= 1, got 0$",
        ),
        (
            dict(name="disk", demand=0.1, servers=-2),
            ValueError,
            r"servers must be an integer >= 1, got -2$",
        ),
        (
            dict(name="disk", demand=0.1, servers=1.5),
            ValueError,
            r"servers must be an integer >= 1, got 1.5$",
        ),
        (
            dict(name="disk", demand=0.1, servers=True),
            TypeError,
            r"servers must be an integer >= 1, got True$",
        ),
        (
            dict(name="disk", demand=0.1, servers="2"),
            TypeError,
            r"servers must be an integer >= 1, got '2'$",
        ),
        (
            dict(name="think", demand=1.0, kind="delay", servers=3),
            ValueError,
            r"^Station 'think': servers must be 1 for a delay station .*got 3$",
        ),
        (dict(name=3, demand=0.1), TypeError, r"^Station name must be a string, got 3 \(int\)$"),
        (dict(name="  ", demand=0.1), ValueError, r"^Station name must be a non-empty string"),
    ],
)
def test_station_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Station(**kwargs)


def test_station_errors_are_the_package_classes():
    with pytest.raises(qn.InvalidModelError):
        Station("a", -1.0)
    with pytest.raises(qn.InvalidTypeError):
        Station("a", [1.0])
    with pytest.raises(qn.UnitError):
        Station("a", "1 KB")


# ---------------------------------------------------------------------------------------
# Network
# ---------------------------------------------------------------------------------------


def _net():
    return Network(
        [
            Station("cpu", "2 ms"),
            Station("raid", "12 ms", servers=4),
            Station("lan", "1 ms", kind="delay"),
        ],
        think_time="100 ms",
    )


def test_network_compiles_to_read_only_arrays():
    net = _net()
    np.testing.assert_array_equal(net.demands, [0.002, 0.012, 0.001])
    np.testing.assert_array_equal(net.servers, [1, 4, 1])
    np.testing.assert_array_equal(net.is_delay, [False, False, True])
    assert net.demands.dtype == np.float64 and net.servers.dtype == np.int64
    assert net.names == ("cpu", "raid", "lan")
    assert net.K == 3 and net.think_time == 0.1
    assert net.total_demand == pytest.approx(0.015, rel=closed_form(3))  # a sum of 3
    assert net.has_multiserver
    for a in (net.demands, net.servers, net.is_delay):
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 0


def test_network_is_frozen_and_compares_by_stations_and_think_time():
    net = _net()
    with pytest.raises(dataclasses.FrozenInstanceError):
        net.think_time = 1.0  # type: ignore[misc]
    assert net == _net() and hash(net) == hash(_net())
    assert net != net.with_think_time(0.2)
    assert net.with_think_time("200 ms").think_time == 0.2
    assert net.with_think_time(0.2).stations == net.stations


def test_network_station_lookup():
    net = _net()
    assert net.station("raid").servers == 4
    with pytest.raises(
        ValueError, match=r"^no station named 'disk'; stations are \['cpu', 'raid', 'lan'\]$"
    ):
        net.station("disk")


def test_network_repr_is_readable():
    r = repr(_net())
    assert r == (
        "Network(K=3, Z=100 ms: Station('cpu', 2 ms), Station('raid', 12 ms (x4)), "
        "Station('lan', 1 ms (delay)))"
    )


def test_single_station_is_accepted_as_a_network():
    net = Network(Station("disk", 0.01))
    assert net.K == 1 and not net.has_multiserver


@pytest.mark.parametrize(
    ("stations", "exc", "match"),
    [
        ([], ValueError, r"^stations is empty: a network needs at least one station$"),
        ((), ValueError, r"^stations is empty"),
        (
            [Station("a", 0.1), Station("a", 0.2)],
            ValueError,
            r"^station names must be unique; 'a' appears twice$",
        ),
        (
            [Station("a", 0.1), 0.2],
            TypeError,
            r"^stations\[1\] must be a Station or ForkJoin, got 0.2 \(float\)$",
        ),
        (
            (s for s in [Station("a", 0.1)]),
            TypeError,
            r"^stations must be a sequence of Station or ForkJoin, got generator$",
        ),
        ("abc", TypeError, r"^stations must be a sequence of Station or ForkJoin, got str$"),
        (None, TypeError, r"^stations must be a sequence of Station or ForkJoin, got NoneType$"),
    ],
)
def test_network_station_errors(stations, exc, match):
    with pytest.raises(exc, match=match):
        Network(stations)


@pytest.mark.parametrize(
    ("Z", "exc", "match"),
    [
        (-1.0, ValueError, r"^think_time must be >= 0, got -1.0$"),
        (math.nan, ValueError, r"^think_time must be finite, got nan$"),
        ("5", ValueError, r"^think_time: '5' has no unit"),
        ("5 MB", ValueError, r"^think_time: '5 MB' is a size"),
        ([5], TypeError, r"^think_time must be a number in s"),
    ],
)
def test_network_think_time_errors(Z, exc, match):
    with pytest.raises(exc, match=match):
        Network([Station("a", 0.1)], think_time=Z)


# ---------------------------------------------------------------------------------------
# Network.from_demands
# ---------------------------------------------------------------------------------------


def test_from_demands_defaults():
    net = Network.from_demands(["5 ms", 0.008, np.float64(0.002)], think_time="100 ms")
    assert net.names == ("s0", "s1", "s2")
    np.testing.assert_array_equal(net.demands, [0.005, 0.008, 0.002])
    assert not net.is_delay.any() and (net.servers == 1).all()
    assert net.think_time == 0.1


def test_from_demands_accepts_a_numpy_array_and_all_options():
    net = Network.from_demands(
        np.array([0.1, 0.2, 1.0]),
        names=["cpu", "disk", "users"],
        kinds=["queue", "queue", "delay"],
        servers=[2, 1, 1],
    )
    assert net.names == ("cpu", "disk", "users")
    np.testing.assert_array_equal(net.servers, [2, 1, 1])
    np.testing.assert_array_equal(net.is_delay, [False, False, True])


def test_from_demands_accepts_any_iterable_such_as_a_pandas_series():
    import pandas as pd

    demands = pd.Series({"cpu": 0.002, "disk": "12 ms"})
    net = Network.from_demands(demands, names=demands.index, servers=(s for s in [1, 4]))
    assert net.names == ("cpu", "disk")
    np.testing.assert_array_equal(net.demands, [0.002, 0.012])
    np.testing.assert_array_equal(net.servers, [1, 4])


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(demands=[]), ValueError, r"^demands is empty: a network needs at least one station$"),
        (dict(demands=np.array([])), ValueError, r"^demands is empty"),
        (
            dict(demands="5 ms"),
            TypeError,
            r"^demands must be a sequence with one entry per station, got str$",
        ),
        (
            dict(demands=0.1),
            TypeError,
            r"^demands must be a sequence with one entry per station, got float$",
        ),
        (dict(demands={"cpu": 0.1}), TypeError, r"^demands must be a sequence .* got dict$"),
        (
            dict(demands=[0.1, 0.2, 0.3], names="abc"),
            TypeError,
            r"^names must be a sequence with one entry per station, got str$",
        ),
        (dict(demands=[0.1], kinds="delay"), TypeError, r"^kinds must be a sequence .* got str$"),
        (dict(demands=[0.1], servers=2), TypeError, r"^servers must be a sequence .* got int$"),
        (
            dict(demands=[0.1, 0.2], names=["a"]),
            ValueError,
            r"^names has 1 entries but demands has 2: give one per station$",
        ),
        (
            dict(demands=[0.1, 0.2], kinds=["queue"]),
            ValueError,
            r"^kinds has 1 entries but demands has 2",
        ),
        (
            dict(demands=[0.1, 0.2], servers=[1, 1, 1]),
            ValueError,
            r"^servers has 3 entries but demands has 2",
        ),
        (dict(demands=[0.1, -0.2]), ValueError, r"^Station 's1': demand must be >= 0, got -0.2$"),
        (
            dict(demands=[0.1, math.nan]),
            ValueError,
            r"^Station 's1': demand must be finite, got nan$",
        ),
        (
            dict(demands=[0.1, 0.2], kinds=["queue", "ps"]),
            ValueError,
            r"^kinds\[1\] must be one of 'queue', 'delay'; got 'ps'$",
        ),
        (
            dict(demands=[0.1, 0.2], servers=[1, 0]),
            ValueError,
            r"^servers\[1\] must be an integer >= 1, got 0$",
        ),
        (dict(demands=[0.1], think_time=-2), ValueError, r"^think_time must be >= 0, got -2$"),
    ],
)
def test_from_demands_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Network.from_demands(**kwargs)
