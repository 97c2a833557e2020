"""Black-box tests of qnbench's core: options, JSON document, sweeps, timing, exit codes."""

from __future__ import annotations

import json
import math
import os

import pytest

from qnmodel.bench import _runner, schema


@pytest.fixture(scope="module")
def engine_names(qnbench_exe):
    """The engine names, from qnbench's own engine table (never a copy kept here)."""
    return [e["name"] for e in _runner.engines(qnbench_exe)]


def test_list_engines_is_the_one_table(qnb, engine_names):
    rc, doc, _, err = qnb("--list-engines")
    assert rc == 0 and err == ""
    assert doc["schema"] == "qnbench-engines" and doc["schema_version"] == 1
    # the engines the models and docs rely on are there (more may be added)
    assert {"null", "emu", "file", "mem", "cpu", "tcp", "stripe"} <= set(engine_names)
    assert len(set(engine_names)) == len(engine_names)
    by_name = {e["name"]: e for e in doc["engines"]}
    assert by_name["file"]["needs_dir"] and by_name["file"]["process_workers"]
    assert by_name["mem"]["sweeps_ops"] and not by_name["mem"]["sweeps_bs"]
    assert by_name["tcp"]["standalone_role"] and not by_name["emu"]["standalone_role"]
    # --engine accepts exactly these names, in this order
    rc, _, out, err = qnb("--engine", "nosuch")
    assert rc == 2 and err.strip().endswith("not one of " + ",".join(engine_names))


def test_every_listed_engine_runs(qnb, engine_names, qnbench_exe, tmp_path):
    # engines that measure a server started elsewhere (nfs) run in tests/testbed against one;
    # those of the MPI build (mpilink) in tests/bench/test_mpi.py under mpirun
    server = {
        e["name"]
        for e in _runner.engines(qnbench_exe)
        if e.get("needs_server") or e.get("needs_mpi")
    }
    for name in [n for n in engine_names if n not in server]:
        rc, doc, _, err = qnb("--engine", name, "--dir", tmp_path, "--ops", 3, "--runtime", "20s",
                              "--warmup", "0", "--size", "256KiB")  # fmt: skip
        assert rc == 0, (name, err)
        doc = schema.validate(doc)
        assert doc["engine"] == name and all(r["ops"] > 0 for r in doc["results"])
    assert list(tmp_path.iterdir()) == []


def test_help_lists_every_engine_and_option(qnb, engine_names):
    rc, _, out, err = qnb("--help")
    assert rc == 0 and err == ""
    for engine in engine_names:
        assert f"  {engine} " in out
    for opt in ("--jobs", "--bs", "--rw", "--size", "--runtime", "--dir", "--dev-latency"):
        assert opt in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--engine", "nosuch"], "not one of"),
        (["--bs", "4KB"], "ambiguous"),
        (["--bs", "4k"], "ambiguous"),
        (["--runtime", "5 parsecs"], "unknown or ambiguous unit"),
        (["--jobs", "0"], "must be >= 1"),
        (["--frobnicate", "1"], "unknown option"),
        (["--rw", "sideways"], "not one of"),
        (["--runtime"], "needs a value"),
        (["--engine", "file", "--runtime", "0.1"], "--dir"),
        (["--engine", "emu", "--workers", "process"], "file engine only"),
    ],
)
def test_usage_errors_exit_2_with_nothing_on_stdout(qnb, args, message):
    rc, _, out, err = qnb(*args)
    assert rc == 2
    assert out == ""
    assert message in err


def test_null_document_validates_and_echoes_options(qnb):
    rc, doc, _, err = qnb(
        "--engine",
        "null",
        "--runtime",
        "50ms",
        "--warmup",
        "10ms",
        "--jobs",
        "1,2",
        "--bs",
        "4KiB,1MiB",
        "--interval",
        "10ms",
    )
    assert rc == 0, err
    schema.validate(doc)
    assert doc["complete"] is True and doc["errors"] == []
    assert "mpi" not in doc  # only a multi-rank MPI run adds it
    assert doc["engine"] == "null"
    assert doc["options"]["jobs"] == [1, 2]
    assert doc["options"]["bs_bytes"] == [4096, 1048576]
    assert doc["options"]["runtime_s"] == 0.05
    assert doc["host"]["cpus"] >= 1 and doc["host"]["mem_total_bytes"] > 0
    assert doc["timestamp"].endswith("Z") and doc["timestamp"][10] == "T"
    # jobs varies slowest, then bs
    points = [(r["point"], r["jobs"], r["bs_bytes"]) for r in doc["results"]]
    assert points == [(0, 1, 4096), (1, 1, 1048576), (2, 2, 4096), (3, 2, 1048576)]
    for r in doc["results"]:
        assert r["ops"] > 1000
        assert r["bytes"] == r["ops"] * r["bs_bytes"]
        # samples partition the measured interval
        assert sum(s["ops"] for s in r["samples"]) == r["ops"]
        assert sum(s["bytes"] for s in r["samples"]) == r["bytes"]
        assert 0.05 <= r["elapsed_s"] < 0.2  # the main thread may be scheduled late
        assert r["warmup_s"] >= 0.01
        assert r["throughput_ops_s"] == pytest.approx(r["ops"] / r["elapsed_s"], rel=1e-12)
        lat = r["latency_s"]
        assert lat["count"] == r["ops"]
        assert lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]
        assert lat["min"] <= lat["mean"] <= lat["max"]


def test_null_engine_overhead_is_reported_per_operation(qnb):
    rc, doc, _, err = qnb(
        "--engine", "null", "--runtime", "100ms", "--warmup", "0", "--repeat", "5"
    )
    assert rc == 0, err
    per_op = []
    for r in doc["results"]:
        p = r["engine_stats"]["overhead_s_per_op"]
        # the definition: wall-clock time of the point per operation (both are doubles
        # printed with 17 digits: the ratio agrees to a few ulps)
        assert p == pytest.approx(r["elapsed_s"] / r["ops"], rel=1e-12)
        per_op.append(p)
    # The claim (docs/explanation/qnbench-accuracy.md): 63 ns per request on this idle
    # 2-vCPU machine. The figure is wall-clock time per operation, so a client that shares its
    # core runs slower by the share it loses; the best of five 100 ms repeats rejects
    # preemption bursts. Measured under a load average of 7 on the 2 cores (other test runs):
    # best of five 103-160 ns. Bound: 1 us, 16x the idle figure (the client may lose up to
    # 15/16 of its core) -- a regression to microseconds per request fails, where the former
    # 20 us bound (300x) passed it.
    assert min(per_op) < 1e-6, per_op


def test_ops_limit_stops_the_point_after_exactly_that_many_operations(qnb):
    rc, doc, _, err = qnb(
        "--engine",
        "emu",
        "--ops",
        "25",
        "--runtime",
        "10s",
        "--warmup",
        "0",
        "--dev-latency",
        "1ms",
        "--dev-rate",
        "0",
        "--jobs",
        "1",
    )
    assert rc == 0, err
    (r,) = doc["results"]
    assert r["ops"] == 25 and r["complete"]
    # with no warm-up the client starts with the measured interval: all 25 requests of 1 ms run
    # inside it, one after another (before, the first could start before the interval when the
    # main thread was scheduled late, and 24 ms was allowed), and --ops stopped the point
    assert sum(r["engine_stats"]["device_ops"]) == 25
    assert 25e-3 <= r["elapsed_s"] < 1.0


def test_strings_are_escaped_in_json(qnb):
    nasty = 'a"b\\c\td\x01e'
    rc, doc, out, err = qnb("--engine", "null", "--runtime", "10ms", "--host", nasty)
    assert rc == 0, err
    assert doc["options"]["host"] == nasty
    assert "\\u0001" in out


def test_units_parse_to_si(qnb):
    rc, doc, _, err = qnb(
        "--engine",
        "emu",
        "--runtime",
        "20ms",
        "--warmup",
        "0",
        "--dev-latency",
        "250us",
        "--dev-rate",
        "1Gbit/s",
        "--bs",
        "1MB",
        "--size",
        "2MiB",
        "--think",
        "0.5ms",
    )
    assert rc == 0, err
    o = doc["options"]
    assert o["dev_latency_s"] == 250e-6
    assert o["dev_rate_B_s"] == 125e6
    assert o["bs_bytes"] == [1000000]
    assert o["size_bytes"] == 2 * 1048576
    assert o["think_s"] == 0.0005


def test_numbers_are_locale_independent(qnb, monkeypatch):
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    monkeypatch.setenv("LC_NUMERIC", "de_DE.UTF-8")
    rc, doc, out, err = qnb("--engine", "null", "--runtime", "10ms", "--think", "0")
    assert rc == 0, err
    json.loads(out)  # would fail with decimal commas
    assert doc["options"]["runtime_s"] == 0.01


def test_think_time_constant_and_exponential(qnb, rt):
    for dist in ("const", "exp"):
        rc, doc, _, err = qnb(
            "--engine",
            "null",
            "--runtime",
            "300ms",
            "--warmup",
            "0",
            "--think",
            "2ms",
            "--think-dist",
            dist,
            "--jobs",
            "2",
            *rt,
        )
        assert rc == 0, err
        (r,) = doc["results"]
        # exponential draws: about 300 per client, +-6 % sampling error (1 sigma)
        tol = 0.05 if dist == "const" else 0.25
        if rt:
            assert r["think_s_mean"] == pytest.approx(2e-3, rel=tol)
        else:  # late wake-ups on a loaded machine can only lengthen a think time
            assert 2e-3 * (1 - tol) < r["think_s_mean"] < 2e-3 * 1.5
        # closed loop with a null request: X = N / Z
        assert r["throughput_ops_s"] == pytest.approx(2 / r["think_s_mean"], rel=0.1)


def test_document_is_alone_on_stdout_even_with_progress(qnb):
    rc, doc, out, err = qnb("--engine", "null", "--runtime", "10ms", "--jobs", "1,2", "--progress")
    assert rc == 0
    assert out.count("\n") == 1 and doc is not None
    assert err.count("point ") == 2


def test_histogram_percentiles_within_bucket_resolution(qnb, rt):
    # constant 3 ms service, one client: every latency is 3 ms plus a small wake-up delay
    rc, doc, _, err = qnb(
        "--engine",
        "emu",
        "--runtime",
        "200ms",
        "--warmup",
        "0",
        "--dev-latency",
        "3ms",
        "--dev-rate",
        "0",
        *rt,
    )
    assert rc == 0, err
    lat = doc["results"][0]["latency_s"]
    assert lat["min"] >= 3e-3
    # 64 sub-buckets per octave: the bucket holding 3 ms is 1/64 of 2.1 ms wide
    assert lat["p50"] >= 3e-3 * (1 - 1 / 128)
    if rt:
        assert lat["p50"] == pytest.approx(3e-3, rel=0.02)
    assert math.isfinite(lat["p99"])


def test_histogram_buckets_partition_the_latencies(qnb):
    rc, doc, _, err = qnb("--engine", "emu", "--runtime", "100ms", "--warmup", "0",
                          "--dev-latency", "1ms", "--dev-rate", "0", "--histogram")  # fmt: skip
    assert rc == 0, err
    lat = doc["results"][0]["latency_s"]
    hist = lat["histogram"]
    assert sum(n for _, _, n in hist) == lat["count"]
    assert all(lo < hi for lo, hi, _ in hist)
    assert all(a[1] <= b[0] for a, b in zip(hist, hist[1:], strict=False))
    assert hist[0][0] <= lat["min"] < hist[0][1] and hist[-1][0] <= lat["max"] < hist[-1][1]
    # 64 sub-buckets per power of two: width at most 1/64 of the lower edge
    assert all((hi - lo) / lo <= 1 / 64 + 1e-12 for lo, hi, _ in hist)


def test_without_warm_up_no_request_starts_before_the_interval(qnb):
    """--warmup 0: workers start together with the measured interval (a start barrier).

    Every counted request then lies inside the interval: its latency <= elapsed_s. Before the
    barrier, a worker that was ready first issued its request while the others were still
    setting up; it was counted with its whole latency, longer than the interval (seen on the
    testbed as NFS misses through a 6 MB/s disk throttle measured at up to 7.7 MB/s: the
    uncounted head start had the server read ahead).
    """
    rc, doc, _, err = qnb("--engine", "emu", "--dev-latency", "5ms", "--devices", "4",
                          "--jobs", "1,4", "--ops", "4", "--runtime", "10s", "--warmup", "0",
                          "--repeat", "10")  # fmt: skip
    assert rc == 0, err
    for r in doc["results"]:
        assert r["complete"] and r["ops"] == 4
        assert r["latency_s"]["max"] <= r["elapsed_s"], r


def _proc_stat_ticks():
    """(total, steal) of the whole machine in clock ticks, read as qnbench reads them."""
    with open("/proc/stat") as fh:
        v = [int(x) for x in fh.readline().split()[1:9]]
    return sum(v), v[7]


def test_host_cpu_times_cover_the_measured_interval(qnb):
    """cpu.host_*: the machine's CPU time over the interval, summed over all CPUs (/proc/stat).

    Busy loops on every CPU for 1 s: the machine's time is cpus x the interval (to a few
    10 ms ticks), almost none of it idle, and the process's own CPU time is part of the
    busy time; the steal over the interval is no more than over the whole process's life.
    """
    hz = os.sysconf("SC_CLK_TCK")
    cpus = os.cpu_count()
    t0, s0 = _proc_stat_ticks()
    rc, doc, _, err = qnb("--engine", "cpu", "--jobs", str(cpus), "--runtime", "1s",
                          "--warmup", "100ms")  # fmt: skip
    t1, s1 = _proc_stat_ticks()
    assert rc == 0, err
    schema.validate(doc)
    tick = 1.0 / hz
    for r in doc["results"]:
        c = r["cpu"]
        # each of the two readings is late by less than a tick per CPU
        assert c["host_total_s"] == pytest.approx(cpus * r["elapsed_s"], abs=4 * cpus * tick)
        assert 0 <= c["host_steal_s"] <= c["host_total_s"]
        assert c["host_idle_s"] < 0.25 * c["host_total_s"]  # every CPU ran a busy loop
        busy = c["host_total_s"] - c["host_idle_s"] - c["host_steal_s"]
        assert c["user_s"] + c["sys_s"] <= busy + 2 * cpus * tick
        assert c["host_steal_s"] <= (s1 - s0) * tick + 1e-9
    assert sum(r["cpu"]["host_total_s"] for r in doc["results"]) <= (t1 - t0) * tick + 1e-9
