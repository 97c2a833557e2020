"""qnbench's arithmetic and output stay within bounds, whatever the options say.

Times are kept in 64-bit nanoseconds: a time option is 0 or between 1 ns and 1e6 s, and what
qnbench derives from options (an emulated request's service time, an open-loop client's time
between arrivals) is held to the same range; a value outside is a usage error (exit 2) naming
the option, the value and the limit. Sizes are read exactly. A run's document keeps at most
200 000 samples and 100 000 points; a file is laid out only when the file system has room for
it; buffers are allocated only when the machine's memory holds them; a byte count never wraps.
Before these checks, ``--dev-latency 1e10s`` measured 148 ns requests and called the point
complete, ``--interval 1ns`` wrote 224 MB of JSON with wrong sample times, and ``--size 1EiB``
started filling the disk.
"""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qnmodel.bench import schema

from ..fuzz._strategies import FUZZ, numbers_text

# option values whose arithmetic would overflow, and words the usage error must hold
OVERFLOWS = [
    # times beyond 1e6 s (11.6 days): their nanoseconds would overflow int64 arithmetic
    (["--engine", "emu", "--dev-latency", "1e10s"], ["--dev-latency", "'1e10s'", "1e+06 s"]),
    (["--engine", "emu", "--runtime", "1e10s"], ["--runtime", "'1e10s'", "1e+06 s"]),
    (["--engine", "emu", "--warmup", "1e10s"], ["--warmup", "'1e10s'", "1e+06 s"]),
    (["--engine", "emu", "--think", "1e10s"], ["--think", "'1e10s'", "1e+06 s"]),
    (["--engine", "emu", "--think", "20000min"], ["--think", "'20000min'", "1e+06 s"]),
    # a time that is not 0 but below the clock's resolution would read 0 ns
    (["--engine", "emu", "--dev-latency", "1e-12s"], ["--dev-latency", "1e-12", "1 ns"]),
    # derived times: the service of the largest request, an open-loop interarrival time
    (["--engine", "emu", "--bs", "9e18"],
     ["--bs", "9000000000000000000", "9e+10 s", "1e+06 s"]),
    (["--engine", "emu", "--dev-rate", "1e-300"], ["--dev-rate", "1e-300", "1e+06 s"]),
    (["--engine", "stripe", "--dev-rate", "1e-3", "--chunk", "64KiB", "--bs", "1MiB"],
     ["--bs", "65536", "1e+06 s"]),
    (["--engine", "tcp", "--serve", "emu", "--dev-rate", "1", "--bs", "4MiB"],
     ["--bs", "4194304", "1e+06 s"]),
    (["--engine", "emu", "--rate", "1e-300/s"], ["--rate", "1e-300", "1e+06 s"]),
    (["--engine", "emu", "--rate", "1e12/s"], ["--rate", "1e+12", "1 ns"]),
    (["--engine", "emu", "--rate", "1e-6/s", "--jobs", "1,2"],
     ["--rate", "--jobs 2", "1e+06 s"]),
    # the document: samples and points
    (["--engine", "null", "--interval", "1ns"], ["--interval", "1e-09", "200000"]),
    (["--engine", "null", "--interval", "1ms", "--runtime", "60s", "--jobs", "1,2,3,4"],
     ["--interval", "0.001", "60001", "200000", "--interval >= 0.00120"]),
    (["--engine", "null", "--jobs", ",".join(map(str, range(1, 65))),
      "--bs", ",".join(f"{k}KiB" for k in range(1, 65)), "--repeat", "30"],
     ["122880 points", "100000"]),
    # sizes: exact, and products of sizes that fit 64 bits
    (["--engine", "null", "--bs", "9000000000000000001"],
     ["--bs", "9000000000000000001", "below 9e18"]),
    (["--engine", "null", "--bs", "1.00000000000000000001KiB"],
     ["--bs", "more than 20 significant digits"]),
    (["--engine", "stripe", "--members", "16", "--size", "1EiB"],
     ["--members 16", "--size 1152921504606846976", "largest byte count"]),
    # buffers beyond the machine's memory
    (["--engine", "mem", "--size", "1EiB"], ["mem: three arrays of --size", "MemTotal"]),
    (["--engine", "tcp", "--bs", "1EiB", "--jobs", "8"], ["--bs", "--jobs 8", "MemTotal"]),
    (["--engine", "cpu", "--cpu-op", "cachehit", "--bs", "4KiB", "--size", "4GiB",
      "--jobs", "1024"], ["cpu: the buffers", "--jobs 1024", "MemTotal"]),
]  # fmt: skip


@pytest.mark.parametrize("args, words", OVERFLOWS, ids=[" ".join(a[1:6]) for a, _ in OVERFLOWS])
def test_values_whose_arithmetic_would_overflow_are_usage_errors(qnb, tmp_path, args, words):
    rc, doc, out, err = qnb(*args, "--dir", tmp_path)
    assert rc == 2 and out == "", err
    assert err.startswith("qnbench: ") and err.count("\n") == 1, err
    for w in words:
        assert w in err, (w, err)
    assert list(tmp_path.iterdir()) == []


def test_a_size_is_the_exact_value_typed(qnb):
    """Read through a double, 8999999999999999999 bytes were 9000000000000000000."""
    rc, doc, _, err = qnb("--engine", "emu", "--dev-rate", "0", "--dev-latency", "1us",
                          "--bs", "8999999999999999999,1.5KiB,4.9MB,1e3KiB,0.25MiB",
                          "--ops", "1", "--runtime", "0", "--warmup", "0")  # fmt: skip
    assert rc == 0, err
    assert doc["options"]["bs_bytes"] == [8999999999999999999, 1536, 4900000, 1024000, 262144]
    assert [r["bytes"] for r in doc["results"]] == doc["options"]["bs_bytes"]


def test_the_largest_times_are_accepted_and_a_stop_ends_them(qnb):
    """1e6 s is a time qnbench keeps; clients sleeping that long wake when the point ends."""
    rc, doc, _, err = qnb("--engine", "emu", "--dev-latency", "1e6s", "--dev-rate", "0",
                          "--think", "1e6s", "--jobs", "2", "--runtime", "50ms", "--warmup", "0",
                          "--interval", "1e6s")  # fmt: skip
    assert rc == 0, err
    (r,) = doc["results"]
    assert r["complete"] is True and r["ops"] == 0
    assert doc["options"]["dev_latency_s"] == 1e6 and r["engine_stats"]["service_s"] == 1e6


def test_sample_times_are_the_times_the_counters_were_read(qnb):
    """With a 1 us interval the sampler cannot wake at every boundary: a sample ends when its
    counters were read and the boundaries it slept through are skipped. (Before, each wake-up
    was labelled with the next boundary: after 0.15 s the samples' times read a few ms.)"""
    rc, doc, _, err = qnb("--engine", "null", "--runtime", "150ms", "--interval", "1us",
                          "--warmup", "0")  # fmt: skip
    assert rc == 0, err
    (r,) = doc["results"]
    t = [s["t_s"] for s in r["samples"]]
    assert len(t) <= 150001
    assert all(a < b for a, b in zip(t, t[1:], strict=False))
    # sample i ends at or after boundary i + 1, the samples reach the end of the interval
    # (the last one up to elapsed_s: a tail without operations adds none)
    assert all(ti >= (i + 1) * 1e-6 * (1 - 1e-9) for i, ti in enumerate(t[:-1]))
    assert r["elapsed_s"] - 0.05 < t[-2] < t[-1] <= r["elapsed_s"]
    assert sum(s["ops"] for s in r["samples"]) == r["ops"]


def test_a_point_ended_by_a_count_coarsens_its_samples(qnb):
    """Without --runtime the number of samples is not known in advance: at the run's maximum
    the interval doubles and neighbouring samples merge, sums and times exact."""
    rc, doc, _, err = qnb("--engine", "null", "--ops", "10000000", "--runtime", "0",
                          "--interval", "100ns", "--warmup", "0")  # fmt: skip
    assert rc == 0, err
    (r,) = doc["results"]
    t = [s["t_s"] for s in r["samples"]]
    assert len(t) <= 200000
    assert sum(s["ops"] for s in r["samples"]) == r["ops"] == 10_000_000
    assert all(a < b for a, b in zip(t, t[1:], strict=False)) and t[-1] <= r["elapsed_s"]
    assert t[-2] > r["elapsed_s"] / 2
    if len(t) > 100000:  # coarsened (the sampler woke more than 200 000 times)
        assert "sampling interval doubles" in err


def test_a_byte_count_that_would_wrap_ends_the_point_with_an_error(qnb):
    """5 EB a request: the second one would take the 64-bit byte count past 2^63 (before, the
    document then showed a negative byte count)."""
    rc, doc, _, err = qnb("--engine", "null", "--bs", "5EB", "--runtime", "50ms",
                          "--warmup", "0")  # fmt: skip
    assert rc == 1
    schema.validate(doc)
    (r,) = doc["results"]
    assert r["complete"] is False and r["ops"] == 1 and r["bytes"] == 5 * 10**18
    assert any("64-bit count" in e and "--bs" in e for e in doc["errors"]), doc["errors"]


def test_a_file_larger_than_the_free_space_is_refused_before_anything_is_written(qnb, tmp_path):
    rc, doc, _, err = qnb("--engine", "file", "--size", "1EiB", "--dir", tmp_path)
    assert rc == 1
    schema.validate(doc)
    assert doc["complete"] is False and doc["results"] == []
    (e,) = doc["errors"]
    assert f"not enough free space in {tmp_path}" in e
    assert "1 file(s) of --size 1152921504606846976 bytes" in e and "bytes are free" in e
    assert "nothing was written" in e and "No space left on device" in err
    assert list(tmp_path.iterdir()) == []


def test_stripe_member_files_are_checked_for_room_all_together(qnb, tmp_path):
    rc, doc, _, err = qnb("--engine", "stripe", "--member", "file", "--members", "4",
                          "--size", "1EiB", "--chunk", "1MiB", "--dir", tmp_path)  # fmt: skip
    assert rc == 1
    need = "4 file(s) of --size 1152921504606846976 bytes (4611686018427387904 bytes)"
    assert need in doc["errors"][0], doc["errors"]
    assert list(tmp_path.iterdir()) == []


def test_an_overloaded_open_loop_counts_its_backlog_without_a_long_loop(qnb):
    """10^8 arrivals a second at a 1 ms device: about 10^7 arrivals are still due at the end of
    the point. They are counted (drawn one by one up to 10^5, the rest as the expectation),
    not drawn one by one at the end of the point (before: capped at 10^7, 0.5 s per client)."""
    rc, doc, _, err = qnb("--engine", "emu", "--dev-latency", "1ms", "--dev-rate", "0",
                          "--rate", "1e8/s", "--runtime", "150ms", "--warmup", "0")  # fmt: skip
    assert rc == 0, err
    (r,) = doc["results"]
    ol = r["open_loop"]
    # the backlog is the arrivals due in the measured window and not issued. The window ends
    # when the main thread stops the point: 150 ms after its start on a quiet machine, later
    # on a busy one (37 ms later beside the parallel suite and six other workers, 3.7e6
    # arrivals), never after elapsed_s, which also counts the clients' finish. So the count
    # lies between 150 ms and elapsed_s of arrivals (the old cap of 10^7 is far below both).
    assert r["elapsed_s"] >= 0.150
    due = ol["backlog_end"] + ol["issued"]
    assert 0.99 * 1e8 * 0.150 <= due <= 1.01 * 1e8 * r["elapsed_s"], (due, r["elapsed_s"])


def test_a_block_server_refuses_a_request_it_could_not_serve_in_time(qnbench_exe):
    """A peer's header may ask for 2^64 - 1 bytes; at 100 MB/s its emulated service would take
    5800 years (before, the overflowing conversion let the server stream forever)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [str(qnbench_exe), "--engine", "tcp", "--tcp-role", "server", "--port", str(port),
         "--serve", "emu", "--dev-latency", "1ms"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=20)
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.02)
        with conn:
            huge = (1 << 64) - 1
            conn.sendall(b"QNB1" + struct.pack(">IQ", 1, huge))
            assert conn.recv(1 << 16) == b""  # closed, nothing sent
        with socket.create_connection(("127.0.0.1", port), timeout=20) as ok:
            ok.sendall(b"QNB1" + struct.pack(">IQ", 1, 100))
            got = b""
            while len(got) < 100:
                chunk = ok.recv(100 - len(got))
                assert chunk
                got += chunk
    finally:
        server.send_signal(2)
        out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert "a request of 18446744073709551615 bytes" in err and "connection closed" in err


DURATIONS = ["think", "dev-latency", "interval", "spin"]
SHORT = ["--engine", "emu", "--runtime", "20ms", "--warmup", "0", "--jobs", "1,3"]
_units = st.sampled_from(["", "s", "ms", "us", "ns", "min", " s", "KiB", "/s", "MB/s"])
values = st.one_of(
    st.builds(lambda n, u: f"{n}{u}", numbers_text, _units),
    st.builds(lambda e, u: f"1e{e}{u}", st.integers(-320, 320), _units),
)


@settings(FUZZ, max_examples=max(30, FUZZ.max_examples // 2), deadline=None)
@given(st.sampled_from([*DURATIONS, "bs", "dev-rate", "rate"]), values)
def test_any_value_runs_briefly_or_is_a_one_line_usage_error(qnbench_exe, option, value):
    """Whatever the value, a 20 ms point ends within seconds (sleeping clients wake at its
    end) with a valid document, or the value is refused on one line naming the option."""
    argv = [str(qnbench_exe), *SHORT, f"--{option}={value}"]
    p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=60)
    shown = f"{' '.join(argv)}: exit {p.returncode}\nstderr: {p.stderr[:500]}"
    if p.returncode == 0:
        doc = schema.validate(json.loads(p.stdout))
        assert doc["complete"] is True, shown
        for r in doc["results"]:
            assert all(s["t_s"] <= r["elapsed_s"] for s in r["samples"]), shown
        return
    assert p.returncode == 2 and p.stdout == "", shown
    line = p.stderr.removesuffix("\n")
    assert line.startswith("qnbench: ") and "\n" not in line, shown
    assert f"--{option}" in line, shown
