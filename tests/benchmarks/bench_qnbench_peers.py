"""Accuracy of qnbench against peer tools measured in the same run (run on demand).

Workloads and targets (issue: qnbench accuracy against peers):

* ``fio`` (psync engine) on the same files: sequential 1 MiB read and write on tmpfs and with
  O_DIRECT on disk, random 4 KiB reads from the page cache and with O_DIRECT, 1 and 2 jobs:
  bandwidth and IOPS within +-10 %, median latency within +-15 %;
* ``stress-ng --stream`` (a STREAM-style kernel loop): the combined read+write rate of qnbench's
  copy/scale/add/triad within 10 %, triad shown beside it;
* ``iperf3`` on loopback: qnbench ``tcp`` write throughput within 10 %;
* qnbench ``null``: harness overhead per operation, target < 100 ns.

Usage::

    QNMODEL_QNBENCH=build/qnbench-dev/qnbench PYTHONPATH=. \\
        python tests/benchmarks/bench_qnbench_peers.py --runtime 2 \\
        --doc docs/explanation/qnbench-accuracy.md

A peer that is not installed is reported as missing (with CI=true that is an error).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from qnmodel import bench

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def need(tool: str) -> bool:
    if shutil.which(tool):
        return True
    if IN_CI:
        raise SystemExit(f"peer tool {tool!r} is missing under CI")
    print(f"# {tool} not installed: its rows are skipped", file=sys.stderr)
    return False


def run_fio(directory: str, rw: str, bs: str, jobs: int, runtime: float, direct: bool,
            size: str) -> dict:  # fmt: skip
    cmd = [
        "fio", "--name=peer", f"--directory={directory}", f"--rw={rw}", f"--bs={bs}",
        f"--size={size}", f"--numjobs={jobs}", "--ioengine=psync", "--time_based",
        f"--runtime={runtime}", "--ramp_time=0.3", "--group_reporting", "--lat_percentiles=1",
        "--output-format=json", f"--direct={int(direct)}", "--invalidate=0",
    ]  # fmt: skip
    if "write" in rw:
        cmd.append("--end_fsync=1")
    elif not direct:
        # fio drops the page cache of a file it has just laid out; qnbench keeps it (its layout
        # is the last writer). Read the file once so both tools start from a warm cache.
        cmd.append("--pre_read=1")
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    job = json.loads(out[out.index("{") :])["jobs"][0]
    side = job["write" if "write" in rw else "read"]
    pct = side["lat_ns"]["percentile"]
    return {
        "bw": side["bw_bytes"],
        "iops": side["iops"],
        "p50": pct["50.000000"] * 1e-9,
        "cmd": " ".join(cmd),
    }


def run_qnbench_file(directory, rw, bs, jobs, runtime, direct, size) -> dict:
    t = bench.run(
        "file", dir=directory, rw=rw, bs=bs, size=size, jobs=jobs, runtime=runtime,
        warmup=0.3, access="direct" if direct else "sync", progress=False,
    )  # fmt: skip
    r = t.results[0]
    return {
        "bw": r["throughput_B_s"],
        "iops": r["throughput_ops_s"],
        "p50": r["latency_s"]["p50"],
        "cmd": " ".join(t.command),
    }


def median_of(runs: list[dict]) -> dict:
    """Per-key median over repeated runs (the command of the first run)."""
    out = {"cmd": runs[0]["cmd"]}
    for key in runs[0]:
        if key != "cmd":
            out[key] = statistics.median(r[key] for r in runs)
    return out


def ratio_cell(q: float, p: float, tol: float) -> tuple[str, bool]:
    ratio = q / p if p else float("nan")
    ok = abs(ratio - 1.0) <= tol
    return f"{ratio:.3f}", ok


def fmt_rate(v: float) -> str:
    return f"{v / 1e6:,.1f} MB/s"


def file_rows(args, rows, commands):
    cases = [
        ("seq read 1 MiB, tmpfs", args.tmpfs_dir, "read", "1MiB", False, "128MiB"),
        ("seq write 1 MiB, tmpfs", args.tmpfs_dir, "write", "1MiB", False, "128MiB"),
        ("seq read 1 MiB, disk O_DIRECT", args.disk_dir, "read", "1MiB", True, "128MiB"),
        ("seq write 1 MiB, disk O_DIRECT", args.disk_dir, "write", "1MiB", True, "128MiB"),
        ("rand read 4 KiB, page cache", args.disk_dir, "randread", "4KiB", False, "64MiB"),
        ("rand read 4 KiB, disk O_DIRECT", args.disk_dir, "randread", "4KiB", True, "64MiB"),
    ]
    for label, base, rw, bs, direct, size in cases:
        for jobs in (1, 2):
            fs, qs = [], []
            for _ in range(args.repeat):  # interleaved, so both tools see the same load
                with tempfile.TemporaryDirectory(dir=base) as d:
                    fio_bs = bs.replace("iB", "").lower()
                    fio_size = size.replace("iB", "")
                    fs.append(run_fio(d, rw, fio_bs, jobs, args.runtime, direct, fio_size))
                with tempfile.TemporaryDirectory(dir=base) as d:
                    qs.append(run_qnbench_file(d, rw, bs, jobs, args.runtime, direct, size))
            f, q = median_of(fs), median_of(qs)
            commands.append(f.pop("cmd"))
            commands.append(q.pop("cmd"))
            bw, ok_bw = ratio_cell(q["bw"], f["bw"], 0.10)
            lat, ok_lat = ratio_cell(q["p50"], f["p50"], 0.15)
            rows.append(
                [f"{label}, {jobs} job{'s' if jobs > 1 else ''}", "fio",
                 f"{fmt_rate(q['bw'])} / {q['iops']:,.0f} IOPS",
                 f"{fmt_rate(f['bw'])} / {f['iops']:,.0f} IOPS", bw,
                 f"{q['p50'] * 1e6:,.1f} / {f['p50'] * 1e6:,.1f} us", lat,
                 "yes" if ok_bw and ok_lat else "no"]
            )  # fmt: skip
            print(" | ".join(rows[-1]), file=sys.stderr)


def stream_rows(args, rows, commands):
    seconds = str(int(max(8, args.runtime * 4)))  # stress-ng needs a few seconds for a rate
    cmd = ["stress-ng", "--stream", "1", "--stream-l3-size", "8M", "-t", seconds, "--metrics"]
    per_pass = {"copy": 2, "scale": 2, "add": 3, "triad": 3}
    peers, combos, triads = [], [], []
    for _ in range(args.repeat):
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
        rd = float(re.search(r"([\d.]+) MB read/sec", out).group(1)) * 1e6
        wr = float(re.search(r"([\d.]+) MB write/sec", out).group(1)) * 1e6
        peers.append(rd + wr)
        t = bench.run("mem", size="32 MiB", runtime=args.runtime, warmup=0.3, progress=False)
        rate = {r["op"]: r["throughput_B_s"] for r in t.results}
        combos.append(sum(per_pass.values()) / sum(per_pass[k] / rate[k] for k in per_pass))
        triads.append(rate["triad"])
    peer = statistics.median(peers)
    combined = statistics.median(combos)
    rate = {"triad": statistics.median(triads)}
    commands += [" ".join(cmd), " ".join(t.command)]
    cell, ok = ratio_cell(combined, peer, 0.10)
    rows.append(["mem copy+scale+add+triad, 1 thread", "stress-ng --stream", fmt_rate(combined),
                 fmt_rate(peer), cell, "-", "-", "yes" if ok else "no"])  # fmt: skip
    rows.append(["mem triad alone, 1 thread", "(same)", fmt_rate(rate["triad"]), fmt_rate(peer),
                 f"{rate['triad'] / peer:.3f}", "-", "-", "info"])  # fmt: skip
    print(" | ".join(rows[-2]), file=sys.stderr)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tcp_rows(args, rows, commands):
    port = free_port()
    server = subprocess.Popen(["iperf3", "-s", "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(0.5)
    sizes = {"128 KiB": "128K", "1 MiB": "1M"}  # qnbench request size: iperf3 write size (-l)
    peers: dict[str, list[float]] = {bs: [] for bs in sizes}
    ours: dict[str, list[float]] = {bs: [] for bs in sizes}
    cmds: dict[str, list[str]] = {}
    try:
        for _ in range(args.repeat):  # interleaved, so both tools see the same load
            for bs, length in sizes.items():
                cmd = ["iperf3", "-c", "127.0.0.1", "-p", str(port), "-t", str(args.runtime),
                       "-l", length, "-J"]  # fmt: skip
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                peers[bs].append(json.loads(out)["end"]["sum_received"]["bits_per_second"] / 8)
                t = bench.run(
                    "tcp", rw="write", bs=bs, runtime=args.runtime, warmup=0.3, progress=False
                )
                ours[bs].append(t.results[0]["throughput_B_s"])
                cmds[bs] = [" ".join(cmd), " ".join(t.command)]
    finally:
        server.terminate()
        server.wait(timeout=10)
    for bs, values in ours.items():
        q = statistics.median(values)
        peer = statistics.median(peers[bs])
        commands.extend(cmds[bs])
        cell, ok = ratio_cell(q, peer, 0.10)
        rows.append([f"tcp loopback, 1 connection, {bs} writes", "iperf3", fmt_rate(q),
                     fmt_rate(peer), cell, "-", "-", "yes" if ok else "no"])  # fmt: skip
        print(" | ".join(rows[-1]), file=sys.stderr)


def null_rows(args, rows, commands):
    t = bench.run("null", runtime=args.runtime, warmup=0.3, progress=False)
    per_op = t.results[0]["engine_stats"]["overhead_s_per_op"]
    commands.append(" ".join(t.command))
    rows.append(["null engine overhead per operation", "target < 100 ns",
                 f"{per_op * 1e9:.1f} ns", "100 ns", f"{per_op / 100e-9:.3f}", "-", "-",
                 "yes" if per_op < 100e-9 else "no"])  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtime", type=float, default=2.0, help="seconds per measurement")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved repetitions (median)")
    ap.add_argument("--tmpfs-dir", default="/dev/shm")
    ap.add_argument("--disk-dir", default="/var/tmp")
    ap.add_argument("--doc", help="write the markdown table to this file")
    args = ap.parse_args(argv)

    rows: list[list[str]] = []
    commands: list[str] = []
    if need("fio"):
        file_rows(args, rows, commands)
    if need("stress-ng"):
        stream_rows(args, rows, commands)
    if need("iperf3"):
        tcp_rows(args, rows, commands)
    null_rows(args, rows, commands)

    host = bench.run("null", runtime=0.01, warmup=0, progress=False).host
    header = ["workload", "peer", "qnbench", "peer value", "ratio", "median latency q / peer",
              "ratio", "within target"]  # fmt: skip
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    table = "\n".join(lines)
    print(table)
    if args.doc:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        text = Path(args.doc).read_text() if Path(args.doc).exists() else ""
        start, end = "<!-- peer-table:start -->", "<!-- peer-table:end -->"
        block = (
            f"{start}\nMeasured {stamp} on {host['hostname']} ({host['cpu_model']}, "
            f"{host['cpus']} CPUs, {host['mem_total_bytes'] / 2**30:.1f} GiB, "
            f"{host['sysname']} {host['release']}), {args.runtime:g} s per measurement.\n\n"
            f"{table}\n\nCommands:\n\n```\n" + "\n".join(commands) + f"\n```\n{end}"
        )
        if start in text and end in text:
            text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
        else:
            text = text + "\n" + block + "\n"
        Path(args.doc).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
