"""Fork-join MVA against a recorded qnbench stripe run (full-stripe RAID0 reads, emu members).

Trace: data/traces/stripe-raid0-emu-exp-fullstripe.json.
RAID0 over 4 emulated members, exponential service of mean 5 ms, 256 KiB reads that fork
into one 64 KiB chunk per member, N = 1..8 closed-loop clients, no think time. Measured on
the recording machine: mean response time MAPE 3.2 %, worst point 5.1 %; p90 within 6.4 %.
Each point holds 460-910 requests, so the sampling error of a mean is about 3 %;
tolerances are set from that, not from the fit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import qnmodel as qn
from qnmodel import bench

TRACE = Path(__file__).resolve().parents[2] / "data/traces/stripe-raid0-emu-exp-fullstripe.json"


@pytest.fixture(scope="module")
def measured():
    return bench.load(TRACE).to_frame().sort_values("jobs")


def test_trace_is_the_documented_run(measured):
    assert list(measured["jobs"]) == list(range(1, 9))
    assert set(measured["bs_bytes"]) == {256 * 1024}


def test_fork_join_mva_matches_measured_stripe_means(measured):
    net = qn.Network([qn.ForkJoin("stripe", [qn.Station(f"m{i}", "5 ms") for i in range(4)])])
    model = qn.fork_join(net, 8)
    R = model.response_time[measured["jobs"].to_numpy() - 1]
    err = R / measured["latency_mean_s"].to_numpy() - 1
    assert np.mean(np.abs(err)) < 0.06
    assert np.max(np.abs(err)) < 0.10
    # the naive models miss by a factor of about two at one client
    one = measured["latency_mean_s"].iloc[0]
    assert 0.005 * 4 / one > 1.7 and 0.005 / one < 0.55


def test_fork_join_p90_matches_measured(measured):
    net = qn.Network([qn.ForkJoin("stripe", [qn.Station(f"m{i}", "5 ms") for i in range(4)])])
    model = qn.fork_join(net, 8)
    for _, row in measured.iterrows():
        p90 = model.response_time_quantile(0.90, n=int(row["jobs"]))
        assert p90 == pytest.approx(row["latency_p90_s"], rel=0.12)
