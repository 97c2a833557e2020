"""Known answers of the emulated-device engine under the closed-loop driver.

A device serves one request at a time in S = a + B/r seconds. With constant service and constant
think time Z, a closed loop of N clients on one device has the deterministic throughput
X(N) = min(N / (S + Z), 1 / S); with exponential service and think times it is a product-form
network whose exact throughput comes from mean value analysis.
"""

from __future__ import annotations

import pytest

import qnmodel
from qnmodel.bench import schema

# Measures this machine's timing: run alone, after the parallel suite (see Makefile).
pytestmark = pytest.mark.alone


def emu(qnb, *args):
    rc, doc, _, err = qnb("--engine", "emu", "--warmup", "50ms", *args)
    assert rc == 0, err
    schema.validate(doc)
    return doc["results"]


def edge_ops(n, s, z):
    """Whole requests a window can gain or lose at its two edges in a constant closed loop.

    Below the knee (n S < S + Z) each of the n clients completes every S + Z seconds, so a window
    of T seconds holds floor or ceil of T / (S + Z) of its requests: the count is within n of
    X T. At and past the knee the device completes one request every S: within one.
    """
    return n if n * s < s + z else 1


def check_constant_loop(points, s, z, n, rt):
    """The constant closed loop against its closed form X = min(n / (S + Z), 1 / S).

    Each repeat, whatever the load: (1) nothing makes the loop faster than the closed form, up to
    the window edges; (2) every request the clients counted is one the device served in the
    window (utilisation law on the device's exact schedule, within the edges); (3) with one client
    the loop is a renewal process whose cycle is S plus the client's measured time away from the
    device (think time as slept plus wake-up lateness after the service), so X = 1 / (S + Z_eff)
    within the edges even when a wake-up is stalled for milliseconds. With real-time clients the
    best of the repeats also reaches the nominal closed form within the edges plus 0.5 % (a wake-up
    lateness of 20 us per 4 ms sleep; measured: 2-3 us median).
    """
    x = min(n / (s + z), 1 / s)
    e = edge_ops(n, s, z)
    for p in points:
        el, ops, st = p["elapsed_s"], p["ops"], p["engine_stats"]
        assert ops <= x * el + e
        assert abs(ops - st["utilization"][0] * el / s) <= e
        if n == 1:
            z_eff = p["think_s_mean"] + st["wakeup_late_s_mean"]
            assert ops >= el / (s + z_eff) - e
    best = max(p["ops"] - x * p["elapsed_s"] for p in points)
    if rt:
        assert best >= -e - 0.005 * x * points[0]["elapsed_s"]
    else:
        assert best >= -0.4 * x * points[0]["elapsed_s"]


def test_service_time_is_a_plus_b_over_r_per_request_size(qnb, rt):
    a, r = 2e-3, 100e6
    res = emu(
        qnb,
        "--runtime",
        "300ms",
        "--dev-latency",
        "2ms",
        "--dev-rate",
        "100MB/s",
        "--bs",
        "4KiB,1MiB",
        *rt,
    )
    for point in res:
        s = a + point["bs_bytes"] / r
        st = point["engine_stats"]
        assert st["service_s"] == pytest.approx(s, rel=1e-9)
        # the device's own schedule: every completed request took exactly S on the device
        assert st["service_s_mean"] == pytest.approx(s, rel=1e-6)
        assert st["device_busy_s"][0] / point["elapsed_s"] == pytest.approx(
            st["utilization"][0], rel=1e-9
        )
        # a client can never see less than S; wake-up lateness is reported, not hidden
        assert point["latency_s"]["min"] >= s * (1 - 1e-6)
        assert point["latency_s"]["mean"] == pytest.approx(s + st["wakeup_late_s_mean"], rel=0.02)
        # the client's wake-up: microseconds with SCHED_FIFO, up to milliseconds without on a
        # loaded machine (then only the one-sided bound above is asserted)
        if rt:
            assert point["latency_s"]["p50"] == pytest.approx(s, rel=0.03)


def test_closed_loop_constant_service_and_think_is_deterministic(qnb, rt):
    s, z = 4e-3, 4e-3
    res = emu(
        qnb,
        "--runtime",
        "400ms",
        "--dev-latency",
        "4ms",
        "--dev-rate",
        "0",
        "--think",
        "4ms",
        "--jobs",
        "1,2,4",
        "--repeat",
        "3",
        *rt,
    )
    assert sorted(p["jobs"] for p in res) == [1, 1, 1, 2, 2, 2, 4, 4, 4]
    for n in (1, 2, 4):
        # tolerances in whole requests, see check_constant_loop: 1 in 50 (N = 1) and 1 in 100
        # (N = 2, 4) of the window's requests, where a relative 5 % was allowed before
        check_constant_loop([p for p in res if p["jobs"] == n], s, z, n, rt)
    for point in res:
        n = point["jobs"]
        # Little's law over the whole loop: N = X (R + Z)
        lhs = point["throughput_ops_s"] * (point["latency_s"]["mean"] + point["think_s_mean"])
        assert lhs == pytest.approx(n, rel=0.05)
    sat = max((p for p in res if p["jobs"] == 4), key=lambda p: p["throughput_ops_s"])
    # utilisation law on the device's exact schedule, whatever the clients' lateness
    assert sat["engine_stats"]["utilization"][0] == pytest.approx(
        sat["throughput_ops_s"] * s, rel=0.02
    )
    if rt:
        assert sat["engine_stats"]["utilization"][0] == pytest.approx(1.0, abs=0.05)
        assert sat["latency_s"]["mean"] == pytest.approx(4 * s - z, rel=0.05)


def test_round_robin_over_k_devices_multiplies_saturation_throughput(qnb, rt):
    res = emu(
        qnb,
        "--runtime",
        "300ms",
        "--dev-latency",
        "3ms",
        "--dev-rate",
        "0",
        "--devices",
        "3",
        "--dev-select",
        "roundrobin",
        "--jobs",
        "6",
        "--repeat",
        "3",
        *rt,
    )
    # constant service: stalls only lower X, so the best of three repeats is compared
    point = max(res, key=lambda p: p["throughput_ops_s"])
    assert len(res) == 3 and all(p["throughput_ops_s"] <= 1000 * 1.02 for p in res)
    if rt:
        assert point["throughput_ops_s"] == pytest.approx(3 / 3e-3, rel=0.03)
        for u in point["engine_stats"]["utilization"]:
            assert u == pytest.approx(1.0, abs=0.03)
    else:
        assert 0.6 * 1000 < point["throughput_ops_s"] <= 1000 * 1.02
    # utilisation law: sum U = X * S
    total_u = sum(point["engine_stats"]["utilization"])
    assert total_u == pytest.approx(point["throughput_ops_s"] * 3e-3, rel=0.02)


def test_random_device_choice_is_seeded_and_reproducible(qnb):
    args = (
        "--runtime",
        "10s",
        "--warmup",
        "0",
        "--dev-latency",
        "1ms",
        "--dev-rate",
        "0",
        "--devices",
        "4",
        "--jobs",
        "1",
        "--ops",
        "200",
        "--seed",
        "7",
    )
    pa, pb = emu(qnb, *args)[0], emu(qnb, *args)[0]
    a, b = pa["engine_stats"]["device_ops"], pb["engine_stats"]["device_ops"]
    # With no warm-up the client starts with the measured interval, so every request it issues
    # is counted, the device sees exactly --ops requests inside the window, and the seeded
    # sequence is the same run to run: exact equality. (Before, a client issued uncounted
    # requests while the interval opened: 3 runs in 25 counted 199 with both cores loaded, and
    # the per-device counts moved by one or two.) An unseeded choice would differ by ~9 per device.
    assert pa["ops"] == pb["ops"] == 200
    assert sum(a) == 200 and a == b
    assert min(a) > 25  # uniform over 4 devices: 50 each on average


def test_exponential_closed_network_matches_exact_mva(qnb, rt):
    # one queueing station (S = 2 ms, exponential) and a delay (Z = 2 ms, exponential)
    s, z, n = 2e-3, 2e-3, 3
    res = emu(
        qnb,
        "--runtime",
        "2s",
        "--dev-latency",
        "2ms",
        "--dev-rate",
        "0",
        "--dev-dist",
        "exp",
        "--think",
        "2ms",
        "--think-dist",
        "exp",
        "--jobs",
        str(n),
        *rt,
    )
    point = res[0]
    st = point["engine_stats"]
    # The sample means of the draws (exact device times; think times as slept) differ from
    # the configured 2 ms by sampling error; a client's wake-up lateness after its service
    # is time outside the device, i.e. part of the delay station.
    s_meas = st["service_s_mean"]
    z_eff = point["think_s_mean"] + st["wakeup_late_s_mean"]
    assert s_meas == pytest.approx(s, rel=0.1) and point["think_s_mean"] >= z * 0.9
    exact = qnmodel.mva(qnmodel.Network.from_demands([s_meas], think_time=z_eff), n)
    x_model = float(exact.throughput[-1])
    r_model = float(exact.response_time[-1])
    assert point["throughput_ops_s"] == pytest.approx(x_model, rel=0.08)
    r_device = point["latency_s"]["mean"] - st["wakeup_late_s_mean"]
    assert r_device == pytest.approx(r_model, rel=0.12)


def test_realtime_clients_reach_the_closed_form(qnb):
    args = ("--engine", "emu", "--warmup", "50ms", "--runtime", "500ms", "--dev-latency", "5ms",
            "--dev-rate", "50MB/s", "--bs", "64KiB", "--think", "5ms", "--jobs", "1,4",
            "--repeat", "3", "--realtime")  # fmt: skip
    rc, doc, _, err = qnb(*args)
    if rc == 1 and "SCHED_FIFO" in err:
        assert doc["complete"] is False and "CAP_SYS_NICE" in doc["errors"][0]
        pytest.skip("no permission for SCHED_FIFO here: the refusal is clear, accuracy untested")
    assert rc == 0, err
    s, z = 5e-3 + 65536 / 50e6, 5e-3
    for n in (1, 4):
        runs = [p for p in doc["results"] if p["jobs"] == n]
        assert len(runs) == 3
        # whole requests: 1 of 44 (N = 1) and 1 of 79 (N = 4) in a 0.5 s window, where a relative
        # 4 % was allowed before (the count's own quantization was 2.3 % of it at N = 1)
        check_constant_loop(runs, s, z, n, rt=True)
    # SCHED_FIFO clients wake within microseconds: the median one-client latency is S plus the
    # histogram's resolution plus 50 us (measured: 2-5 us). The median, not the mean: one wake-up
    # stalled for tens of milliseconds (vCPU steal, RT throttling) moves the mean of a 0.5 s run by
    # a millisecond, which is what this test tripped on under load when it bounded the mean.
    for p in doc["results"]:
        if p["jobs"] == 1:
            assert p["latency_s"]["p50"] <= s * (1 + p["latency_s"]["quantile_rel_error"]) + 50e-6
