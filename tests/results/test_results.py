"""Result objects: frozen, read-only arrays, tidy DataFrames, readable repr."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.results.closed import BoundsResult, MVAResult
from tests._tol import closed_form


@pytest.fixture
def net():
    return qn.Network.from_demands(
        ["5 ms", "8 ms", "2 ms"], think_time="100 ms", names=["cpu", "disk", "nic"]
    )


def test_mva_result_fields_and_shapes(net):
    res = qn.mva(net, 12)
    assert isinstance(res, MVAResult)
    assert res.method == "mva.exact"
    assert res.n.shape == res.throughput.shape == res.response_time.shape == (12,)
    for f in ("queue_length", "utilization", "residence_time"):
        assert getattr(res, f).shape == (12, 3)
    assert res.station_names == ("cpu", "disk", "nic")
    assert res.think_time == 0.1
    np.testing.assert_array_equal(res.demands, [0.005, 0.008, 0.002])
    assert res.bottleneck == "disk"


def test_mva_result_is_frozen_with_read_only_copies(net):
    res = qn.mva(net, 5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.throughput = np.zeros(5)  # type: ignore[misc]
    for f in (
        "n",
        "throughput",
        "response_time",
        "queue_length",
        "utilization",
        "residence_time",
        "demands",
    ):
        with pytest.raises(ValueError, match="read-only"):
            getattr(res, f)[0] = 1.0
    src = np.ones(2)
    r = MVAResult(
        "x", src, src, src, src[:, None], src[:, None], src[:, None], ("a",), 0.0, np.ones(1)
    )
    src[0] = 99.0
    assert r.throughput[0] == 1.0  # the result holds its own copy


def test_mva_to_frame_system(net):
    res = qn.mva(net, 12)
    df = res.to_frame()
    assert list(df.columns) == ["n", "throughput", "response_time", "system_queue_length"]
    assert len(df) == 12
    np.testing.assert_array_equal(df["throughput"].to_numpy(), res.throughput)
    # Jobs in the stations plus thinkers: n = Q_sys + X Z (3 K + 4 operations, K = 3).
    np.testing.assert_allclose(
        df["system_queue_length"] + df["throughput"] * 0.1, df["n"], rtol=closed_form(13)
    )


def test_mva_to_frame_station_is_tidy(net):
    res = qn.mva(net, 4)
    df = res.to_frame(level="station")
    assert list(df.columns) == [
        "n",
        "station",
        "queue_length",
        "utilization",
        "residence_time",
        "throughput",
    ]
    assert len(df) == 4 * 3
    row = df[(df["n"] == 4) & (df["station"] == "disk")].iloc[0]
    assert row["queue_length"] == res.queue_length[3, 1]
    assert row["utilization"] == res.utilization[3, 1]
    assert row["throughput"] == res.throughput[3]


def test_mva_to_frame_bad_level(net):
    with pytest.raises(ValueError, match=r"^level must be 'system' or 'station', got 'stations'$"):
        qn.mva(net, 3).to_frame(level="stations")


def test_mva_repr_names_the_key_numbers(net):
    res = qn.mva(net, 10)
    r = repr(res)
    assert r.startswith("MVAResult(method='mva.exact', n=1..10, Z=100 ms,")
    assert "X(10)=78.9168/s" in r  # exact value 78.91676... (rational oracle)
    assert "bottleneck='disk'" in r and "disk: U=" in r


def test_mva_repr_truncates_many_stations():
    big = qn.Network.from_demands([0.001] * 200)
    assert repr(qn.mva(big, 2)).endswith("...)")


def test_bounds_result_fields_frame_and_repr(net):
    res = qn.bounds(net, 30, method="aba")
    assert isinstance(res, BoundsResult)
    assert res.method == "aba" and res.bottleneck == "disk"
    assert res.n.tolist() == list(range(1, 31))
    assert res.saturation_throughput == pytest.approx(125.0, rel=closed_form(1))  # 1 / D_max
    assert res.n_star == pytest.approx(0.115 / 0.008, rel=closed_form(8))  # (sum D + Z) / D_max
    df = res.to_frame()
    assert list(df.columns) == [
        "n",
        "method",
        "throughput_lower",
        "throughput_upper",
        "response_time_lower",
        "response_time_upper",
    ]
    assert len(df) == 30 and set(df["method"]) == {"aba"}
    np.testing.assert_array_equal(df["throughput_upper"].to_numpy(), res.throughput_upper)
    r = repr(res)
    assert r.startswith("BoundsResult(method='aba', n=1..30, bottleneck='disk', N*=14.38")
    assert "X_sat=125/s" in r and "X(30) in [" in r and "R(30) in [" in r
    with pytest.raises(ValueError, match="read-only"):
        res.throughput_lower[0] = 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.method = "bjb"  # type: ignore[misc]


def test_bottleneck_skips_delay_stations():
    """A big delay station (mean busy servers X D >> 1) is never the bottleneck."""
    net = qn.Network.from_demands([0.1, 0.05, 5.0], kinds=["queue", "queue", "delay"])
    res = qn.mva(net, 20)
    assert res.utilization[-1, 2] > 1.0  # the delay's X D is large ...
    assert res.bottleneck == "s0"  # ... but the queue with the largest demand saturates
    assert res.bottleneck == qn.bounds(net, 20, method="aba").bottleneck
    np.testing.assert_array_equal(res.is_delay, [False, False, True])
    only_delays = qn.Network.from_demands([1.0, 2.0], kinds=["delay", "delay"])
    assert qn.mva(only_delays, 3).bottleneck == "s1"
