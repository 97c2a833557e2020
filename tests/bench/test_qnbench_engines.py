"""Black-box tests of the mem, cpu, tcp and stripe engines."""

from __future__ import annotations

import json
import re
import signal
import subprocess

import numpy as np
import pytest

from qnmodel.bench import schema


def run_ok(qnb, *args):
    rc, doc, _, err = qnb(*args)
    assert rc == 0, err
    schema.validate(doc)
    assert doc["complete"] is True
    return doc["results"]


def test_mem_stream_kernels_count_bytes_like_stream(qnb):
    size = 1 << 20
    res = run_ok(
        qnb,
        "--engine",
        "mem",
        "--size",
        "1MiB",
        "--ops",  # a count, not 50 ms: a loaded machine may not schedule a client in 50 ms
        "50",
        "--runtime",
        "20s",
        "--warmup",
        "10ms",
        "--jobs",
        "1,2",
    )
    assert [(r["jobs"], r["op"]) for r in res] == [
        (j, op) for j in (1, 2) for op in ("copy", "scale", "add", "triad")
    ]
    for r in res:
        arrays = 2 if r["op"] in ("copy", "scale") else 3
        assert r["bytes"] == r["ops"] * arrays * size
        assert "bs_bytes" not in r
        assert r["engine_stats"]["array_bytes"] == size
        assert r["throughput_B_s"] > 1e8  # any machine moves more than 100 MB/s


def test_cpu_kernels_cost_per_unit(qnb):
    res = run_ok(
        qnb,
        "--engine",
        "cpu",
        "--bs",
        "4KiB,64KiB",
        "--runtime",
        "50ms",
        "--warmup",
        "0",
        "--stripe-width",
        "3",
    )
    assert [(r["bs_bytes"], r["op"]) for r in res] == [
        (b, op) for b in (4096, 65536) for op in ("memcpy", "xor", "checksum")
    ]
    for r in res:
        per_op = 3 * r["bs_bytes"] if r["op"] == "xor" else r["bs_bytes"]
        assert r["bytes"] == r["ops"] * per_op
        st = r["engine_stats"]
        assert st["cost_s_per_unit"] == pytest.approx(r["latency_s"]["mean"], rel=1e-6)
        assert st["cost_s_per_byte"] == pytest.approx(st["cost_s_per_unit"] / per_op, rel=1e-6)
    # a 64 KiB unit costs more than a 4 KiB one, for every kernel
    cost = {(r["bs_bytes"], r["op"]): r["engine_stats"]["cost_s_per_unit"] for r in res}
    for op in ("memcpy", "xor", "checksum"):
        assert cost[(65536, op)] > cost[(4096, op)]


def test_cpu_cachehit_moves_every_byte_twice(qnb):
    """A hit in a user-space page cache: a lookup and age check per 4 KiB page, the page copied
    into a reassembly buffer, the buffer into the caller's. bytes count what the caller gets."""

    def fastest():
        res = run_ok(
            qnb, "--engine", "cpu", "--cpu-op", "cachehit,memcpy", "--bs", "1MiB,3MiB",
            "--size", "8MiB", "--runtime", "100ms", "--warmup", "50ms",
        )  # fmt: skip
        assert [(r["bs_bytes"], r["op"]) for r in res] == [
            (b, op) for b in (2**20, 3 * 2**20) for op in ("cachehit", "memcpy")
        ]
        for r in res:
            assert r["complete"] and r["bytes"] == r["ops"] * r["bs_bytes"] and r["ops"] > 10
        return {(r["bs_bytes"], r["op"]): r["latency_s"]["min"] for r in res}

    # two copies (one of them gathered from an 8 MiB cache) cost more than one copy of a hot
    # buffer: the fastest unit 4.2-4.5 x at 1 MiB, 2.8-3.1 x at 3 MiB on the 2-core development
    # machine. The fastest, not the mean: another process sharing the caches and the memory bus
    # slows whichever kernel it overlaps (a mean of 1.44 x was seen beside the parallel suite),
    # never below the work of one unit. A neighbour can still spoil one whole run: up to 3 runs.
    for attempt in range(3):
        best = fastest()
        ratios = [best[(b, "cachehit")] / best[(b, "memcpy")] for b in (2**20, 3 * 2**20)]
        print(f"attempt {attempt + 1}: fastest cachehit / memcpy = {ratios}")
        if min(ratios) > 1.5:
            break
    assert min(ratios) > 1.5


@pytest.mark.parametrize("rw", ["read", "write"])
def test_tcp_loopback_request_response(qnb, rw):
    res = run_ok(
        qnb,
        "--engine",
        "tcp",
        "--rw",
        rw,
        "--bs",
        "64,256KiB",
        "--runtime",
        "100ms",
        "--jobs",
        "1,2",
    )
    assert len(res) == 4
    for r in res:
        assert r["ops"] > 10
        assert r["bytes"] == r["ops"] * r["bs_bytes"]
        assert r["engine_stats"]["connections"] == r["jobs"]
        assert r["engine_stats"]["port"] > 0


def test_tcp_server_replies_from_a_file_it_created(qnb, tmp_path):
    res = run_ok(
        qnb,
        "--engine",
        "tcp",
        "--serve",
        "file",
        "--dir",
        tmp_path,
        "--size",
        "1MiB",
        "--bs",
        "64KiB",
        "--runtime",
        "50ms",
    )
    assert res[0]["ops"] > 0
    assert list(tmp_path.iterdir()) == []


def test_tcp_separate_server_and_client_processes(qnbench_exe):
    server = subprocess.Popen(
        [str(qnbench_exe), "--engine", "tcp", "--tcp-role", "server", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stderr.readline()
        m = re.search(r"port (\d+)", line)
        assert m, line
        port = m.group(1)
        client = subprocess.run(
            [
                str(qnbench_exe),
                "--engine",
                "tcp",
                "--tcp-role",
                "client",
                "--port",
                port,
                "--bs",
                "4KiB",
                "--runtime",
                "100ms",
                "--jobs",
                "2",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert client.returncode == 0, client.stderr
        doc = json.loads(client.stdout)
        assert doc["results"][0]["ops"] > 10
    finally:
        server.send_signal(signal.SIGTERM)
        out, _ = server.communicate(timeout=10)
    assert server.returncode == 0
    sdoc = json.loads(out)
    assert sdoc["results"] == [] and sdoc["complete"] is True


def test_tcp_client_without_server_is_a_clear_runtime_error(qnb):
    rc, doc, _, err = qnb(
        "--engine", "tcp", "--tcp-role", "client", "--port", "1", "--runtime", "50ms"
    )
    assert rc == 1
    assert doc["complete"] is False and "ECONNREFUSED" in doc["errors"][0]


STRIPE = (
    "--engine",
    "stripe",
    "--members",
    "4",
    "--chunk",
    "64KiB",
    "--size",
    "4MiB",
    "--dev-latency",
    "2ms",
    "--dev-rate",
    "100MB/s",
    "--runtime",
    "300ms",
    "--warmup",
    "50ms",
)


def test_raid0_full_stripe_read_uses_all_members_in_parallel(qnb, rt):
    (r,) = run_ok(qnb, *STRIPE, "--raid", "0", "--bs", "256KiB", "--rw", "read", *rt)
    s = 2e-3 + 65536 / 100e6  # each member serves one 64 KiB chunk
    st = r["engine_stats"]
    assert st["data_members"] == 4
    assert len(set(st["member_ops"])) == 1  # every request touches every member once
    assert st["service_s_mean"] == pytest.approx(s, rel=1e-6)
    # one client, no think: X = 1 / R (Little), up to one request at the window's edges
    assert r["throughput_B_s"] == pytest.approx(4 * 65536 / r["latency_s"]["mean"], rel=0.03)
    assert r["latency_s"]["min"] >= s * (1 - 1e-6)  # the four chunks were served in parallel
    if rt:  # precise client wake-ups: the median is S itself, not 4 S
        assert r["latency_s"]["p50"] == pytest.approx(s, rel=0.03)
    else:
        assert r["latency_s"]["p50"] < 2 * s


def test_raid5_full_stripe_writes_compute_parity_without_reads(qnb):
    (r,) = run_ok(qnb, *STRIPE, "--raid", "5", "--bs", "192KiB", "--rw", "write", "--jobs", "2")
    st = r["engine_stats"]
    assert st["data_members"] == 3
    assert st["rmw_ops"] == 0
    # requests started in the window against requests completed in it: two clients, each
    # with at most one request across each edge of the window
    assert r["ops"] - 2 <= st["full_stripe_writes"] <= r["ops"] + 2
    assert sum(st["member_ops"]) == 4 * st["full_stripe_writes"]


def test_raid5_small_writes_read_modify_write(qnb, rt):
    (r,) = run_ok(qnb, *STRIPE, "--raid", "5", "--bs", "4KiB", "--rw", "randwrite", *rt)
    st = r["engine_stats"]
    assert st["full_stripe_writes"] == 0
    # engine stats count the requests *started* in the measured window (the client's flag is
    # set as a request starts), ops the requests *completed* in it: with one client they
    # differ by at most the request in flight at each edge of the window (71 against 72 once)
    assert r["ops"] - 1 <= st["rmw_ops"] <= r["ops"] + 1
    # read old data + old parity, then write both: 4 member requests per small write (and 2
    # more when the window's end cuts the last request between its two phases)
    assert 4 * st["rmw_ops"] <= sum(st["member_ops"]) <= 4 * st["rmw_ops"] + 2
    # two dependent phases of one member request each
    s = 2e-3 + 4096 / 100e6
    assert r["latency_s"]["min"] >= 2 * s * (1 - 1e-6)
    if rt:
        assert r["latency_s"]["p50"] == pytest.approx(2 * s, rel=0.05)


@pytest.mark.parametrize("bs", ["4KiB", "24KiB", "40KiB"])
def test_raid5_over_files_keeps_parity_consistent(qnb, tmp_path, bs):
    # chunk 8 KiB, 4 members: 24 KiB is exactly one stripe (3 data chunks); 4 KiB writes are
    # read-modify-write; 40 KiB writes mix a full stripe and a partial one. Four concurrent
    # clients; afterwards every stripe's four chunks must XOR to zero. A fixed count of writes,
    # not a time: under load average 20 a 100 ms window once held no write at all (ops == 0).
    (r,) = run_ok(qnb, "--engine", "stripe", "--raid", "5", "--member", "file", "--dir", tmp_path,
                  "--members", "4", "--chunk", "8KiB", "--size", "256KiB", "--bs", bs,
                  "--rw", "randwrite", "--jobs", "4", "--ops", "200", "--runtime", "30s",
                  "--verify")  # fmt: skip
    st = r["engine_stats"]
    assert r["ops"] == 200
    assert st["stripes_verified"] == 32
    assert st["parity_errors"] == 0
    if bs == "24KiB":
        assert st["rmw_ops"] == 0 and st["full_stripe_writes"] > 0
    if bs == "4KiB":
        assert st["full_stripe_writes"] == 0 and st["rmw_ops"] > 0
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("raid", ["0", "5"])
def test_stripe_over_tcp_block_servers(qnb, raid):
    # four loopback servers of this process, one connection per member and client
    res = run_ok(qnb, "--engine", "stripe", "--member", "tcp", "--raid", raid, "--members", "4",
                 "--chunk", "16KiB", "--size", "1MiB", "--bs", "4KiB,48KiB", "--rw", "randwrite",
                 "--jobs", "2", "--runtime", "100ms", "--warmup", "20ms")  # fmt: skip
    for r in res:
        st = r["engine_stats"]
        assert r["ops"] > 0 and len(st["member_ops"]) == 4
        if raid == "5" and r["bs_bytes"] == 4096:
            assert sum(st["member_ops"]) == 4 * st["rmw_ops"]
        if raid == "5" and r["bs_bytes"] == 48 * 1024:  # exactly one stripe of 3 data chunks
            assert st["rmw_ops"] == 0
            assert sum(st["member_ops"]) == 4 * st["full_stripe_writes"]


def test_stripe_over_files(qnb, tmp_path):
    for raid in ("0", "5"):
        for rw in ("randread", "randwrite", "write"):
            (r,) = run_ok(
                qnb,
                "--engine",
                "stripe",
                "--member",
                "file",
                "--dir",
                tmp_path,
                "--members",
                "3",
                "--chunk",
                "16KiB",
                "--size",
                "256KiB",
                "--raid",
                raid,
                "--bs",
                "8KiB",
                "--rw",
                rw,
                "--ops",  # a count, not a time: ops > 0 even on a loaded machine
                "20",
                "--runtime",
                "10s",
                "--warmup",
                "0",
            )
            assert r["ops"] > 0
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args, message",
    [
        (["--raid", "5", "--members", "2"], "RAID5 needs"),
        (["--raid", "6"], "not one of"),
        (["--members", "17"], "between 2 and 16"),
        (["--chunk", "100KiB"], "divide"),
        (["--member", "file"], "needs --dir"),
        (["--member", "tcp", "--tcp-role", "client"], "needs --port"),
        (["--member", "tcp", "--tcp-role", "server"], "uses --tcp-role self"),
    ],
)
def test_stripe_usage_errors(qnb, args, message):
    rc, _, out, err = qnb("--engine", "stripe", "--size", "4MiB", *args)
    assert rc == 2 and out == "" and message in err


def test_raid5_rmw_writes_wait_for_the_reads_on_emulated_members(qnb, rt):
    # Regression: the write phase was queued on the members at once, at the future instant
    # the read phase would end, ahead of other clients' earlier requests, leaving the members
    # idle meanwhile. With 16 clients on 4 members of constant 2 ms service a work-conserving
    # FCFS member is nearly always busy: measured 0.88-0.97 per member (mean 0.92) after the
    # fix, 0.55-0.63 before.
    (r,) = run_ok(qnb, "--engine", "stripe", "--members", "4", "--chunk", "64KiB", "--size", "4MiB",
                  "--dev-latency", "2ms", "--runtime", "1s", "--warmup", "100ms", "--raid", "5",
                  "--bs", "4KiB", "--rw", "randwrite", "--jobs", "16", *rt)  # fmt: skip
    st = r["engine_stats"]
    assert np.mean(st["utilization"]) > 0.8
    # utilisation law: every small write costs each member 4 x 2 ms / 4 on average
    assert np.mean(st["utilization"]) == pytest.approx(r["throughput_ops_s"] * 2e-3, rel=0.03)
