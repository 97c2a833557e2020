"""Re-measure the qnbench traces of this folder (each a JSON document with its host info).

    QNMODEL_QNBENCH=/path/to/qnbench PYTHONPATH=. python data/traces/make_traces.py [NAME ...]

Every trace records its full command line in README.md; `--realtime` is used for the emulated
devices when the machine permits SCHED_FIFO (root), so the known answers hold on a loaded host.
"""

from __future__ import annotations

import sys
from pathlib import Path

from qnmodel import bench
from qnmodel.errors import BenchError

HERE = Path(__file__).resolve().parent
DISK = "/var/tmp"

TRACES = {
    # known-answer device: S(B) = 5 ms + B / (50 MB/s); fit a and r from the size sweep
    "emu-size-sweep": dict(
        engine="emu", dev_latency="5 ms", dev_rate="50 MB/s", jobs=[1],
        bs=["4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB", "4 MiB"], runtime=1.0, warmup=0.1,
        realtime=True,
    ),
    # closed loop on one known-answer device with exponential service and think time:
    # a product-form network (one queue, one delay) whose exact X(N), R(N) come from MVA
    "emu-closed-loop": dict(
        engine="emu", dev_latency="5 ms", dev_rate="50 MB/s", bs="64 KiB", dev_dist="exp",
        think="20 ms", think_dist="exp", jobs=[1, 2, 3, 4, 6, 8, 12, 16], runtime=10.0,
        warmup=0.3, interval=0.5, realtime=True,
    ),
    # the same with constant service and think time: X(N) = min(N / (S + Z), 1 / S) exactly
    "emu-closed-loop-const": dict(
        engine="emu", dev_latency="5 ms", dev_rate="50 MB/s", bs="64 KiB", think="20 ms",
        jobs=[1, 2, 3, 4, 6, 8, 12, 16], runtime=2.0, warmup=0.2, interval=0.25, realtime=True,
    ),
    # a device that serves 4 requests at once (constant service S = 6.31 ms per server), queue
    # depths 1..16 without think time: X(j) = min(j, 4) / S, rate curve r(j) = min(j, 4)
    "emu-queue-depth-4servers": dict(
        engine="emu", dev_latency="5 ms", dev_rate="50 MB/s", bs="64 KiB", dev_servers=4,
        jobs=[1, 2, 3, 4, 6, 8, 16], runtime=1.0, warmup=0.1, interval=0.25, realtime=True,
    ),
    # four known-answer devices behind RAID0 / RAID5 (chunk 64 KiB), and one device alone,
    # for RAID speedup and efficiency
    "stripe-raid0-emu": dict(
        engine="stripe", raid=0, members=4, chunk="64 KiB", size="64 MiB", dev_latency="2 ms",
        dev_rate="100 MB/s", rw="randread", bs=["4 KiB", "64 KiB", "256 KiB"], jobs=[1, 4, 16],
        runtime=1.0, warmup=0.1, realtime=True,
    ),
    "stripe-raid5-emu": dict(
        engine="stripe", raid=5, members=4, chunk="64 KiB", size="64 MiB", dev_latency="2 ms",
        dev_rate="100 MB/s", rw="randwrite", bs=["4 KiB", "64 KiB", "192 KiB"],
        jobs=[1, 4, 16], runtime=1.0, warmup=0.1, realtime=True,
    ),
    "emu-single-device": dict(
        engine="emu", dev_latency="2 ms", dev_rate="100 MB/s", rw="randread",
        bs=["4 KiB", "64 KiB", "256 KiB"], jobs=[1, 4, 16], runtime=1.0, warmup=0.1,
        realtime=True,
    ),
    # the real (virtual) disk of this machine: O_DIRECT random reads, size and concurrency sweeps
    "file-direct-randread-sizes": dict(
        engine="file", dir=DISK, access="direct", rw="randread", size="256 MiB",
        bs=["4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB"], jobs=[1], runtime=1.0, warmup=0.2,
    ),
    "file-direct-randread-closed-loop": dict(
        engine="file", dir=DISK, access="direct", rw="randread", size="256 MiB", bs="4 KiB",
        jobs=[1, 2, 4, 8, 16], runtime=1.0, warmup=0.2,
    ),
    # writes timed with fsync + close, sequential 1 MiB, 1 and 2 jobs
    "file-seqwrite-fsync": dict(
        engine="file", dir=DISK, rw="write", size="64 MiB", bs="1 MiB", jobs=[1, 2],
        runtime=1.0, warmup=0.2,
    ),
    "mem-stream": dict(engine="mem", size="32 MiB", jobs=[1, 2], runtime=0.5, warmup=0.1),
    "cpu-units": dict(
        engine="cpu", bs=["1460 B", "4 KiB", "16 KiB", "64 KiB"], stripe_width=3, jobs=[1],
        runtime=0.3, warmup=0.05,
    ),
    # request/response on loopback: time per request = a + B/r (per-packet and per-byte cost)
    "tcp-loopback-sizes": dict(
        engine="tcp", rw="read", bs=["64 B", "1460 B", "16 KiB", "64 KiB", "256 KiB", "1 MiB"],
        jobs=[1], runtime=0.5, warmup=0.1,
    ),
    "tcp-loopback-closed-loop": dict(
        engine="tcp", rw="write", bs="64 KiB", jobs=[1, 2, 4, 8], runtime=0.5, warmup=0.1,
    ),
}  # fmt: skip


def measure(name: str) -> Path:
    opts = dict(TRACES[name])
    engine = opts.pop("engine")
    try:
        trace = bench.run(engine, **opts)
    except BenchError as exc:
        if opts.get("realtime") and "SCHED_FIFO" in str(exc):
            opts.pop("realtime")
            trace = bench.run(engine, **opts)
        else:
            raise
    out = HERE / f"{name}.json"
    trace.save(out)
    print(" ".join(trace.command), file=sys.stderr)
    return out


def main(names: list[str]) -> int:
    for name in names or list(TRACES):
        if name not in TRACES:
            raise SystemExit(f"unknown trace {name!r}; known: {', '.join(TRACES)}")
        print(measure(name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
