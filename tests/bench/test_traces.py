"""The shipped traces in data/traces validate and keep their known answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import qnmodel
from qnmodel import bench

TRACES = Path(__file__).resolve().parents[2] / "data" / "traces"
FILES = sorted(TRACES.glob("*.json"))
S = 5e-3 + 65536 / 50e6  # the emulated device of the closed-loop traces
Z = 20e-3


def test_there_are_traces():
    assert len(FILES) >= 10


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_trace_validates_and_has_host_info(path):
    t = bench.load(path)
    assert t.complete and t.errors == []
    assert t.host["cpus"] >= 1 and t.host["mem_total_bytes"] > 0
    df = t.to_frame()
    assert len(df) == len(t.results) > 0
    assert (df["ops"] > 0).all()
    assert (t.samples_frame().groupby("point")["ops"].sum().values == df["ops"].values).all()


def test_size_sweep_recovers_a_and_r():
    df = bench.load(TRACES / "emu-size-sweep.json").to_frame()
    design = np.column_stack([np.ones(len(df)), df["bs_bytes"].to_numpy(float)])
    (a, inv_r), *_ = np.linalg.lstsq(design, df["latency_mean_s"].to_numpy(), rcond=None)
    assert a == pytest.approx(5e-3, rel=0.02)
    assert 1 / inv_r == pytest.approx(50e6, rel=0.01)


def test_constant_closed_loop_follows_the_deterministic_curve():
    df = bench.load(TRACES / "emu-closed-loop-const.json").to_frame()
    expected = np.minimum(df["jobs"] / (S + Z), 1 / S)
    np.testing.assert_allclose(df["throughput_ops_s"], expected, rtol=0.02)


def test_exponential_closed_loop_matches_exact_mva():
    df = bench.load(TRACES / "emu-closed-loop.json").to_frame()
    res = qnmodel.mva(qnmodel.Network.from_demands([S], think_time=Z), int(df["jobs"].max()))
    n = df["jobs"].to_numpy() - 1
    # 10 s windows of exponential service: about +-4 % one-sigma statistical error at N = 1
    np.testing.assert_allclose(df["throughput_ops_s"], res.throughput[n], rtol=0.10)
    np.testing.assert_allclose(df["latency_mean_s"], res.response_time[n], rtol=0.15)


def test_raid0_random_reads_speed_up_over_one_device():
    one = bench.load(TRACES / "emu-single-device.json").to_frame()
    raid = bench.load(TRACES / "stripe-raid0-emu.json").to_frame()
    key = ["jobs", "bs_bytes"]
    m = one.merge(raid, on=key, suffixes=("_one", "_raid"))
    speedup = m["throughput_ops_s_raid"] / m["throughput_ops_s_one"]
    # 16 clients of 4 KiB random reads keep 4 devices busy: the speedup approaches 4
    deep_small = speedup[(m["jobs"] == 16) & (m["bs_bytes"] == 4096)].item()
    assert 3.0 < deep_small <= 4.05
    # one client gains nothing from striping small requests
    single = speedup[(m["jobs"] == 1) & (m["bs_bytes"] == 4096)].item()
    assert single == pytest.approx(1.0, rel=0.05)
