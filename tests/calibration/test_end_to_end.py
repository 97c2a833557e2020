"""Real end-to-end known-answer test on this machine with qnbench's emulated devices.

Bottom-up: one client, request sizes 4 KiB .. 1 MiB on an emulated device with
a = 4 ms and r = 80 MB/s (constant service time); the fit must recover a within 2 %
and r within 1 %. End-to-end: K = 4 such devices chosen at random with exponential
service of the same mean (the product-form case), 64 KiB requests, think time
10 ms, N = 1..32 closed-loop clients; the model built from the fitted a and r
alone must predict each measured X(N) within its 99.9 % Student-t interval (plus 1 % for
the fit) and within 6 % MAPE. About 15 s.
"""

import statistics
import subprocess

import pytest
from scipy import stats

from qnmodel import bench
from qnmodel.calibration.pipeline import DEMO_DEVICE, DEMO_SIZES, calibrate_and_compare

JOBS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]


# Measures this machine's timing: run alone, after the parallel suite (see Makefile).
pytestmark = pytest.mark.alone


def _realtime_permitted(qnbench) -> bool:
    """SCHED_FIFO clients (root or CAP_SYS_NICE) wake within microseconds on a loaded machine."""
    p = subprocess.run(
        [str(qnbench), "--engine", "emu", "--ops", "3", "--runtime", "5s", "--warmup", "0",
         "--dev-latency", "1ms", "--realtime", "1"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return p.returncode == 0


def test_calibrated_model_predicts_the_measured_closed_loop(qnbench, tmp_path):
    # The client sees a + B/r plus its own wake-up lateness; with real-time clients that is a few
    # microseconds, without (a container without CAP_SYS_NICE) it is what the scheduler of a
    # loaded machine makes it: qnbench reports it per point, so the known answer for a is then
    # a + the measured lateness (never a tolerance widened to hide it).
    rt = _realtime_permitted(qnbench)
    dev = bench.run(
        "emu",
        jobs=[1],
        bs=DEMO_SIZES,
        dev_dist="const",
        runtime=0.3,
        warmup=0.05,
        realtime=rt,
        executable_path=qnbench,
        **DEMO_DEVICE,
    )
    late = statistics.median(r["engine_stats"]["wakeup_late_s_mean"] for r in dev.results)
    # the device itself served every request in exactly a + B/r (device-side, exact)
    for r in dev.results:
        s = DEMO_DEVICE["dev_latency"] + r["bs_bytes"] / DEMO_DEVICE["dev_rate"]
        assert r["engine_stats"]["service_s_mean"] == pytest.approx(s, rel=1e-6)
    e2e = bench.run(
        "emu",
        jobs=JOBS,
        bs=65536,
        devices=4,
        dev_select="random",
        dev_dist="exp",
        think=0.010,
        think_dist="const",
        runtime=1.0,
        warmup=0.1,
        realtime=rt,  # 32 clients on 2 cores: otherwise the scheduler is measured too
        executable_path=qnbench,
        **DEMO_DEVICE,
    )
    c = calibrate_and_compare(dev, e2e)
    fit = c.calibration["device"]
    print(f"\nfitted a = {fit.values['a']:.6g} s, r = {fit.values['r']:.6g} B/s; {c!r}")
    print(c.table.to_string())
    why = f"\n{fit.report()}\n{dev.to_frame().to_string()}"
    why += f"\nmedian client wake-up lateness {late * 1e6:.1f} us (real-time clients: {rt})"
    # Tolerances from what the method achieves (docs/how-to/calibrate.md): the device serves
    # exactly a + B/r (checked above), so the fit sees it plus the client's own per-request
    # path (a few us, wake-up lateness reported separately): a +0.06 to +0.6 % and r -0.1 to
    # -0.3 % over five runs, two of them beside CPU hogs. Bounds: a 2 %, r 1 % (about 3x the
    # largest seen; they were 5 % each).
    # With real-time clients the fit sees the device's a (a clean CI run had wake-ups 141 us
    # late and still fitted a within 0.07 %: lateness falls between requests, not inside one);
    # without, the client's lateness joins a.
    expected_a = DEMO_DEVICE["dev_latency"] + (0.0 if rt else late)
    assert fit.values["a"] == pytest.approx(expected_a, rel=0.02), why
    assert fit.values["r"] == pytest.approx(DEMO_DEVICE["dev_rate"], rel=0.01), why
    assert list(c.table["n"]) == JOBS
    # Random device choice with exponential service is product form: exact MVA of the fitted
    # model differs from the measured X(N) only by the fit (<= 1 %) and sampling. Each point
    # must lie inside its own Student-t interval at 99.9 % (the 95 % half-width of the
    # per-interval samples, rescaled by t_0.9995 / t_0.975) widened by the 1 % of the fit.
    m = c.measured
    for row, mva in zip(m.itertuples(), c.table["throughput_mva"], strict=True):
        k = int(row.samples)
        scale = stats.t.ppf(0.9995, k - 1) / stats.t.ppf(0.975, k - 1)
        bound = scale * row.throughput_halfwidth + 0.01 * mva
        assert abs(mva - row.throughput) <= bound, (row.n, mva, row.throughput, bound, why)
    # The MAPE summary: the per-point standard errors here are 3-5 % of X (1 s points split
    # into interval samples), so pure sampling noise gives E[MAPE] = sqrt(2/pi) * 3.8 % = 3 %
    # with a standard deviation of about 0.7 % over 10 points; measured 2.8-4.2 % over five
    # runs. Bound 6 % = 3 % + 3 sd + the 1 % of the fit (it was 10 %).
    assert c.mape_throughput < 6.0
    # Little's law holds in the measurement itself: N = X (R + Z) within 5%
    assert (
        (m["throughput"] * (m["response_time"] + m["think_time"]) / m["n"] - 1).abs() < 0.05
    ).all()


def test_run_demo_writes_a_report_and_a_plot(qnbench, tmp_path):
    from qnmodel.lab.demo import run_demo

    md = run_demo(
        tmp_path / "demo",
        progress=False,
        runtime=0.3,
        jobs=(1, 4, 16),
        executable_path=qnbench,
        constant_service_check=False,
    )
    text = md.read_text()
    assert md.name == "report.md"
    assert "MAPE of exact MVA vs measured X(N)" in text
    assert "N = 1..16" in text and "## Known answer" in text
    png = md.parent / "report.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    for name in ("device_sweep.json", "closed_loop.json"):
        assert (md.parent / name).stat().st_size > 1000


def test_link_and_cpu_costs_from_real_tcp_and_cpu_sweeps(qnbench, rt):
    from qnmodel.calibration.pipeline import (
        calibrate_cpu_per_packet,
        calibrate_cpu_per_unit,
        calibrate_link,
    )

    sizes = [64, 1024, 16384, 65536, 262144]
    # The median message of each point (the default). Loopback is not linear in size, and how
    # far the line misses its ends depends on the statistic and the load: on an idle machine
    # (4 sweeps, this run's clean-clone conditions) the medians' line is within 8.0 % at 64 B
    # and 3.7 % at 256 KiB, while the fastest messages' line (latency="min") missed by up to
    # 18 % and 23 % (and 41 % at 64 B in one clean-clone run). Under load the medians move for
    # whole points (43-745 % misses in 3 of 6 sweeps at load average 16), where "min" held
    # within 8.1 %: this test runs in the alone pass, its client and server threads real-time
    # (``rt``) so other work on the machine cannot delay them (3.16e-05 s against 4.10e-06 s
    # at 64 B once beside another suite without). Three repeats, median per size; both ends
    # within 20 %.
    tcp = bench.run("tcp", jobs=[1], bs=sizes, runtime=0.2, warmup=0.05, repeat=3,
                    realtime=bool(rt), executable_path=qnbench)  # fmt: skip
    link = calibrate_link(tcp)
    assert link.success and link.values["rate"] > 0 and link.values["overhead"] > 0
    assert link.fitted[0] == pytest.approx(link.y[0], rel=0.2)
    assert link.fitted[-1] == pytest.approx(link.y[-1], rel=0.2)
    pkt = calibrate_cpu_per_packet(tcp)
    assert pkt.success and pkt.values["t_packet"] >= 0 and pkt.ndata == len(sizes)

    cpu = bench.run(
        "cpu",
        jobs=[1],
        cpu_op=["memcpy"],
        bs=[4096 * 2**k for k in range(6)],
        runtime=0.2,
        warmup=0.05,
        realtime=bool(rt),
        executable_path=qnbench,
    )
    unit = calibrate_cpu_per_unit(cpu, op="memcpy", unit="16 KiB")
    assert unit.success and unit.values["t_unit"] > 0
    # a 16 KiB memcpy costs more than 100 ns and less than 1 ms on any machine that runs this
    assert 1e-7 < unit.values["t_unit"] + unit.values["t_fixed"] < 1e-3
