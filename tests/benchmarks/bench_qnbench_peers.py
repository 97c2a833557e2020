"""Accuracy of qnbench against peer tools measured in the same run (run on demand).

Workloads and targets (issue: qnbench accuracy against peers):

* ``fio`` (psync engine: pread/pwrite, the system calls of qnbench's ``sync`` and ``direct``
  access paths) on files of the same size, block size, access pattern and page-cache state:
  sequential 1 MiB read and write on tmpfs and with O_DIRECT on disk, random 4 KiB reads from the
  page cache and with O_DIRECT, 1 and 2 jobs: bandwidth and IOPS within +-10 %, median latency
  within +-15 %;
* an independent STREAM-style reference (a few lines of C written and compiled here: same array
  size, same byte counting, -O3 like qnbench's Release build): qnbench ``mem`` triad within 10 %,
  copy/scale/add shown beside it;
* ``iperf3`` on loopback (one-way stream of 1 MiB writes): qnbench ``tcp`` 1 MiB write requests
  within 10 %; an independent blocking one-way stream (C, written here) is shown beside it,
  because iperf3 writes from a non-blocking select() loop while qnbench's requests block;
* qnbench ``null``: harness overhead per operation, target < 100 ns, with fio's ``null`` ioengine
  beside it (the per-request cost of each tool's own bookkeeping);
* qnbench's workloads (``_workload_peers.py``): ``meta`` against fio's ``filecreate``,
  ``filestat`` and ``filedelete`` ioengines (rates within 15 %), ``--rwmix 70`` against
  ``--rwmixread=70`` (IOPS within 10 %, read median latency within 15 %), the open loop
  ``--rate 2000/s --arrivals poisson`` against ``--rate_iops=2000 --rate_process=poisson``
  (achieved IOPS within 5 %, median latency within 25 %).

Every comparison is *paired*: repetition i runs both tools back to back (the order alternates,
so neither tool always runs first after the other has warmed or disturbed the machine), the ratio
qnbench / peer is taken per pair, and the table reports the median ratio with the smallest and
largest pair ratio. On a shared machine that spread is the honest error bar.

Usage::

    QNMODEL_QNBENCH=build/qnbench-dev/qnbench PYTHONPATH=. \\
        python tests/benchmarks/bench_qnbench_peers.py --runtime 1 --repeat 7 \\
        --doc docs/explanation/qnbench-accuracy.md

A peer that is not installed is reported as missing (with CI=true that is an error).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
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
CC = shutil.which("cc") or shutil.which("gcc")

MEM_REF_C = r"""
/* independent STREAM-style reference: 4 kernels over 3 arrays of doubles, STREAM byte counting
 * (copy, scale: 2 arrays; add, triad: 3 arrays). Usage: memref ARRAY_BYTES WARMUP_S RUNTIME_S.
 * Prints one line per kernel: name mean_rate_B_s best_rate_B_s passes. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + t.tv_nsec * 1e-9; }
static double *x, *y, *z; static size_t n;
static void pass(int k) {
    size_t i;
    if (k == 0) for (i = 0; i < n; i++) z[i] = x[i];
    else if (k == 1) for (i = 0; i < n; i++) y[i] = 3.0 * z[i];
    else if (k == 2) for (i = 0; i < n; i++) z[i] = x[i] + y[i];
    else for (i = 0; i < n; i++) x[i] = y[i] + 3.0 * z[i];
}
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    size_t bytes = (size_t)atoll(argv[1]); double warm = atof(argv[2]), run = atof(argv[3]);
    n = bytes / sizeof(double);
    if (posix_memalign((void **)&x, 64, n * 8) || posix_memalign((void **)&y, 64, n * 8) ||
        posix_memalign((void **)&z, 64, n * 8)) return 1;
    for (size_t i = 0; i < n; i++) { x[i] = 1.0; y[i] = 2.0; z[i] = 0.0; }
    const char *names[4] = {"copy", "scale", "add", "triad"};
    const double arrays[4] = {2, 2, 3, 3};
    for (int k = 0; k < 4; k++) {
        double t0 = now();
        while (now() - t0 < warm) pass(k);
        double best = 1e30, start = now(), t = start; long passes = 0;
        while (t - start < run) {
            double a = now(); pass(k); t = now();
            if (t - a < best) best = t - a;
            passes++;
        }
        double per = arrays[k] * (double)n * 8.0;
        printf("%s %.6e %.6e %ld\n", names[k], per * passes / (t - start), per / best, passes);
    }
    return x[n / 2] < 0;  /* keep the result live */
}
"""

TCP_REF_C = r"""
/* independent TCP loopback reference with blocking writes and reads of MSG_BYTES messages:
 * MODE "stream" is a one-way stream (iperf3's shape); "rr" waits after each message for a
 * 16-byte acknowledgement from the receiver (qnbench's write requests' shape); a "-hdr" suffix
 * sends a 16-byte header with MSG_MORE before each message, which the receiver reads first and
 * does not count (qnbench's framing).
 * Usage: tcpref MODE MSG_BYTES WARMUP_S RUNTIME_S.
 * Prints: received_rate_B_s (payload, measured by the receiver after the warm-up). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    if (argc != 5) return 2;
    int rr = strncmp(argv[1], "rr", 2) == 0, hdr = strstr(argv[1], "-hdr") != NULL;
    size_t msg = (size_t)atoll(argv[2]); double warm = atof(argv[3]), run = atof(argv[4]);
    char ack[16] = {0};
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a; memset(&a, 0, sizeof a);
    a.sin_family = AF_INET; a.sin_addr.s_addr = htonl(INADDR_LOOPBACK); a.sin_port = 0;
    socklen_t al = sizeof a;
    if (bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
        getsockname(l, (struct sockaddr *)&a, &al)) return 1;
    char *buf = malloc(msg); memset(buf, 0x5a, msg);
    pid_t pid = fork();
    if (pid == 0) {  /* sender */
        int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        if (connect(s, (struct sockaddr *)&a, sizeof a)) _exit(1);
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        double end = now() + warm + run + 0.05;
        while (now() < end) {
            size_t off = 0;
            if (hdr && send(s, ack, sizeof ack, MSG_MORE) != (ssize_t)sizeof ack) _exit(1);
            while (off < msg) {
                ssize_t k = write(s, buf + off, msg - off);
                if (k <= 0) _exit(1);
                off += (size_t)k;
            }
            for (size_t got = 0; rr && got < sizeof ack;) {
                ssize_t k = read(s, ack + got, sizeof ack - got);
                if (k <= 0) _exit(1);
                got += (size_t)k;
            }
        }
        close(s); _exit(0);
    }
    int c = accept(l, NULL, NULL);
    double t0 = now(), tw = 0, tl = 0; unsigned long long got = 0, at_w = 0;
    size_t inmsg = 0;
    for (;;) {
        for (size_t h = 0; hdr && inmsg == 0 && h < sizeof ack;) {
            ssize_t k = read(c, ack + h, sizeof ack - h);
            if (k <= 0) goto done;
            h += (size_t)k;
        }
        ssize_t k = read(c, buf, msg - inmsg);
        if (k <= 0) break;
        got += (unsigned long long)k; tl = now();
        inmsg += (size_t)k;
        if (inmsg == msg) {
            inmsg = 0;
            if (rr && write(c, ack, sizeof ack) != (ssize_t)sizeof ack) break;
        }
        if (tw == 0 && tl - t0 >= warm) { tw = tl; at_w = got; }
        if (tw > 0 && tl - tw >= run) break;
    }
done:
    close(c);
    waitpid(pid, NULL, 0);
    printf("%.6e\n", tw > 0 && tl > tw ? (got - at_w) / (tl - tw) : 0.0);
    return 0;
}
"""


def need(tool: str | None, name: str) -> bool:
    if tool and shutil.which(tool):
        return True
    if IN_CI:
        raise SystemExit(f"peer tool {name!r} is missing under CI")
    print(f"# {name} not installed: its rows are skipped", file=sys.stderr)
    return False


def compile_c(source: str, name: str, workdir: str) -> str:
    """Compile a reference program with the flags of qnbench's Release build (-O3)."""
    src = Path(workdir) / f"{name}.c"
    exe = Path(workdir) / name
    src.write_text(source)
    subprocess.run([CC, "-std=c11", "-O3", "-o", str(exe), str(src)], check=True)
    return str(exe)


def paired(peer_fn, ours_fn, repeat: int) -> tuple[list[dict], list[dict]]:
    """Run both tools back to back `repeat` times, alternating which goes first (ABBA)."""
    ps, qs = [], []
    for i in range(repeat):
        if i % 2 == 0:
            ps.append(peer_fn())
            qs.append(ours_fn())
        else:
            qs.append(ours_fn())
            ps.append(peer_fn())
    return ps, qs


def ratios(qs: list[dict], ps: list[dict], key: str, invert: bool = False) -> list[float]:
    out = []
    for q, p in zip(qs, ps, strict=True):
        a, b = (p[key], q[key]) if invert else (q[key], p[key])
        out.append(a / b if b else float("nan"))
    return out


def ratio_cell(rs: list[float], tol: float) -> tuple[str, bool, float]:
    """Median pair ratio with the smallest and largest pair ratio; within tolerance or not."""
    med = statistics.median(rs)
    return f"{med:.3f} [{min(rs):.2f}-{max(rs):.2f}]", abs(med - 1.0) <= tol, med


def med(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def fmt_rate(v: float) -> str:
    return f"{v / 1e6:,.1f} MB/s"


def run_fio(directory: str, rw: str, bs: str, jobs: int, runtime: float, direct: bool,
            size: str) -> dict:  # fmt: skip
    cmd = [
        "fio", "--name=peer", f"--directory={directory}", f"--rw={rw}", f"--bs={bs}",
        f"--size={size}", f"--numjobs={jobs}", "--ioengine=psync", "--time_based",
        f"--runtime={runtime}", "--ramp_time=0.3", "--group_reporting", "--lat_percentiles=1",
        "--output-format=json", f"--direct={int(direct)}", "--invalidate=0",
    ]  # fmt: skip
    if rw.startswith("rand"):
        # qnbench draws every offset uniformly and independently (with replacement); fio by
        # default walks a random permutation kept in a bitmap (its "random map"), which is a
        # different access pattern and costs fio per-request work. Same pattern: no map.
        cmd += ["--norandommap", "--randrepeat=0"]
    if "write" in rw:
        cmd.append("--end_fsync=1")  # qnbench times the final fsync and close
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


def overheads(args) -> dict:
    """Per-request cost of each tool's own harness: fio's null ioengine, qnbench's null engine."""

    def fio_null():
        cmd = ["fio", "--name=null", "--ioengine=null", "--rw=randread", "--bs=4k",
               "--size=64M", "--norandommap", "--randrepeat=0", "--time_based",
               f"--runtime={args.runtime}", "--ramp_time=0.3", "--lat_percentiles=1",
               "--output-format=json"]  # fmt: skip
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        iops = json.loads(out[out.index("{") :])["jobs"][0]["read"]["iops"]
        return {"per_op": 1.0 / iops, "cmd": " ".join(cmd)}

    def q_null():
        t = bench.run("null", runtime=args.runtime, warmup=0.3, progress=False)
        return {"per_op": 1.0 / t.results[0]["throughput_ops_s"], "cmd": " ".join(t.command)}

    ps, qs = paired(fio_null, q_null, args.repeat)
    return {"fio": med(ps, "per_op"), "qnbench": med(qs, "per_op"),
            "cmds": [ps[0]["cmd"], qs[0]["cmd"]]}  # fmt: skip


def file_rows(args, rows, commands, notes, ovh):
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
            fio_bs = bs.replace("iB", "").lower()
            fio_size = size.replace("iB", "")

            def peer(base=base, rw=rw, fio_bs=fio_bs, jobs=jobs, direct=direct, fs=fio_size):
                with tempfile.TemporaryDirectory(dir=base) as d:
                    return run_fio(d, rw, fio_bs, jobs, args.runtime, direct, fs)

            def ours(base=base, rw=rw, bs=bs, jobs=jobs, direct=direct, size=size):
                with tempfile.TemporaryDirectory(dir=base) as d:
                    return run_qnbench_file(d, rw, bs, jobs, args.runtime, direct, size)

            ps, qs = paired(peer, ours, args.repeat)
            commands += [ps[0]["cmd"], qs[0]["cmd"]]
            bw, ok_bw, _ = ratio_cell(ratios(qs, ps, "bw"), 0.10)
            lat, ok_lat, _ = ratio_cell(ratios(qs, ps, "p50"), 0.15)
            name = f"{label}, {jobs} job{'s' if jobs > 1 else ''}"
            rows.append(
                [name, "fio", f"{fmt_rate(med(qs, 'bw'))} / {med(qs, 'iops'):,.0f} IOPS",
                 f"{fmt_rate(med(ps, 'bw'))} / {med(ps, 'iops'):,.0f} IOPS", bw,
                 f"{med(qs, 'p50') * 1e6:,.1f} / {med(ps, 'p50') * 1e6:,.1f} us", lat,
                 "yes" if ok_bw and ok_lat else "no"]
            )  # fmt: skip
            print(" | ".join(rows[-1]), file=sys.stderr)
            if bs == "4KiB" and not direct and ovh:
                # time per request per job, less each tool's own harness cost per request
                tq = [jobs / q["iops"] - ovh["qnbench"] for q in qs]
                tf = [jobs / p["iops"] - ovh["fio"] for p in ps]
                rs = [f / q for q, f in zip(tq, tf, strict=True)]
                cell, ok, _ = ratio_cell(rs, 0.10)
                notes.append(
                    [f"{name}, less harness cost", "fio",
                     f"{statistics.median(tq) * 1e9:.0f} ns/op",
                     f"{statistics.median(tf) * 1e9:.0f} ns/op", cell, "-", "-",
                     "info (yes)" if ok else "info (no)"]
                )  # fmt: skip


def stream_rows(args, rows, commands, workdir):
    exe = compile_c(MEM_REF_C, "memref", workdir)
    array = 32 * 2**20

    def peer():
        out = subprocess.run([exe, str(array), "0.3", str(args.runtime)], capture_output=True,
                             text=True, check=True).stdout  # fmt: skip
        res = {}
        for line in out.split("\n"):
            if line.strip():
                k, mean, best, _ = line.split()
                res[k] = float(mean)
                res[k + "_best"] = float(best)
        return res

    def ours():
        t = bench.run("mem", size=array, runtime=args.runtime, warmup=0.3, progress=False)
        res = {r["op"]: r["throughput_B_s"] for r in t.results}
        res["cmd"] = " ".join(t.command)
        return res

    ps, qs = paired(peer, ours, args.repeat)
    commands += [f"cc -std=c11 -O3 memref.c && ./memref {array} 0.3 {args.runtime}", qs[0]["cmd"]]
    for k in ("triad", "copy", "scale", "add"):
        cell, ok, _ = ratio_cell(ratios(qs, ps, k), 0.10)
        verdict = ("yes" if ok else "no") if k == "triad" else ("info (yes)" if ok else "info (no)")
        rows.append([f"mem {k}, 32 MiB arrays, 1 thread", "STREAM-style C reference",
                     fmt_rate(med(qs, k)), fmt_rate(med(ps, k)), cell, "-", "-",
                     verdict])  # fmt: skip
        print(" | ".join(rows[-1]), file=sys.stderr)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tcp_rows(args, rows, commands, workdir):
    ref = compile_c(TCP_REF_C, "tcpref", workdir) if CC else None
    port = free_port()
    server = subprocess.Popen(["iperf3", "-s", "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(0.5)
    # iperf3 takes whole seconds for -t and -O (-t 0 would run forever): all three tools get
    # the same whole-second window after a 1 s warm-up
    secs = max(1, round(args.runtime))
    icmd = ["iperf3", "-c", "127.0.0.1", "-p", str(port), "-t", str(secs), "-O", "1",
            "-l", "1M", "-J"]  # fmt: skip

    def peer():
        out = json.loads(subprocess.run(icmd, capture_output=True, text=True, check=True).stdout)
        end = out["end"]
        rate = end["sum_received"]["bits_per_second"] / 8
        refs = {
            mode: float(subprocess.run([ref, mode, str(2**20), "1", str(secs)],
                                       capture_output=True, text=True, check=True).stdout)
            for mode in ("stream", "rr", "stream-hdr", "rr-hdr")
        }  # fmt: skip
        cpu = end["cpu_utilization_percent"]["host_total"]
        return {"bw": rate, "cpu": cpu, **refs}

    def ours():
        t = bench.run("tcp", rw="write", bs="1 MiB", runtime=secs, warmup=1, progress=False)
        r = t.results[0]
        bw = r["throughput_B_s"]
        refs = {k: bw for k in ("stream", "rr", "stream-hdr", "rr-hdr")}
        return {"bw": bw, "cmd": " ".join(t.command), **refs}

    try:
        ps, qs = paired(peer, ours, args.repeat)
    finally:
        server.terminate()
        server.wait(timeout=10)
    ref_cmd = f"cc -std=c11 -O3 tcpref.c && ./tcpref stream|rr|stream-hdr|rr-hdr {2**20} 1 {secs}"
    commands += [" ".join(icmd), ref_cmd, qs[0]["cmd"]]
    cell, ok, _ = ratio_cell(ratios(qs, ps, "bw"), 0.10)
    rows.append(["tcp loopback, 1 connection, 1 MiB writes", "iperf3 (stream)",
                 fmt_rate(med(qs, "bw")), fmt_rate(med(ps, "bw")), cell, "-", "-",
                 "yes" if ok else "no"])  # fmt: skip
    for key, what in (
        ("stream", "C one-way stream (iperf3's framing)"),
        ("rr", "C 1 MiB + 16 B ack, no header"),
        ("stream-hdr", "C one-way stream, 16 B MSG_MORE header per 1 MiB"),
        ("rr-hdr", "C same framing and shape as qnbench"),
    ):
        cell, ok, _ = ratio_cell(ratios(qs, ps, key), 0.10)
        rows.append(["tcp loopback, 1 connection, 1 MiB writes", what,
                     fmt_rate(med(qs, "bw")), fmt_rate(med(ps, key)), cell, "-", "-",
                     "info (yes)" if ok else "info (no)"])  # fmt: skip
    print(" | ".join(rows[-5]), f"(iperf3 sender CPU {med(ps, 'cpu'):.0f} %)", file=sys.stderr)
    for row in rows[-4:]:
        print(" | ".join(row), file=sys.stderr)


def null_rows(args, rows, commands, ovh):
    commands += ovh["cmds"]
    per_op = ovh["qnbench"]
    rows.append(["null engine overhead per operation", "target < 100 ns (fio null ioengine)",
                 f"{per_op * 1e9:.1f} ns", f"100 ns ({ovh['fio'] * 1e9:.0f} ns)",
                 f"{per_op / 100e-9:.3f}", "-", "-",
                 "yes" if per_op < 100e-9 else "no"])  # fmt: skip


def _workload_peers():
    """The metadata, rwmix and open-loop rows (tests/benchmarks/_workload_peers.py)."""
    import importlib.util

    path = Path(__file__).with_name("_workload_peers.py")
    spec = importlib.util.spec_from_file_location("qnmodel_bench_workload_peers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtime", type=float, default=1.0, help="seconds per measurement")
    ap.add_argument("--repeat", type=int, default=7, help="paired ABBA repetitions")
    ap.add_argument("--tmpfs-dir", default="/dev/shm")
    ap.add_argument("--disk-dir", default="/var/tmp")
    ap.add_argument(
        "--only",
        nargs="*",
        choices=["file", "mem", "tcp", "null", "workloads"],
        help="run only these groups of rows",
    )
    ap.add_argument("--doc", help="write the markdown table to this file")
    args = ap.parse_args(argv)
    groups = set(args.only or ["file", "mem", "tcp", "null", "workloads"])

    rows: list[list[str]] = []
    notes: list[list[str]] = []
    commands: list[str] = []
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as workdir:
        ovh = overheads(args) if need("fio", "fio") and groups & {"file", "null"} else None
        if "file" in groups and need("fio", "fio"):
            file_rows(args, rows, commands, notes, ovh)
        if "mem" in groups and need(CC, "a C compiler"):
            stream_rows(args, rows, commands, workdir)
        if "tcp" in groups and need("iperf3", "iperf3") and need(CC, "a C compiler"):
            tcp_rows(args, rows, commands, workdir)
        if "null" in groups and ovh:
            null_rows(args, rows, commands, ovh)
        if "workloads" in groups and need("fio", "fio"):
            _workload_peers().workload_rows(args, rows, commands, paired, ratios, ratio_cell, med)
    load1 = os.getloadavg()

    host = bench.run("null", runtime=0.01, warmup=0, progress=False).host
    header = ["workload", "peer", "qnbench", "peer value", "ratio [min-max]",
              "median latency q / peer", "ratio [min-max]", "within target"]  # fmt: skip
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows + notes]
    table = "\n".join(lines)
    print(table)
    if args.doc:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        text = Path(args.doc).read_text() if Path(args.doc).exists() else ""
        start, end = "<!-- peer-table:start -->", "<!-- peer-table:end -->"
        block = (
            f"{start}\nMeasured {stamp} on {host['hostname']} ({host['cpu_model']}, "
            f"{host['cpus']} CPUs, {host['mem_total_bytes'] / 2**30:.1f} GiB, "
            f"{host['sysname']} {host['release']}), {args.runtime:g} s per measurement, "
            f"{args.repeat} paired repetitions (ABBA order), load average {load0[0]:.1f} at the "
            f"start and {load1[0]:.1f} at the end. Ratios are qnbench / peer: the median over "
            f"the pairs, in brackets the smallest and largest pair.\n\n"
            f"{table}\n\nCommands (first repetition; the temporary directories change):\n\n"
            f"```\n" + "\n".join(commands) + f"\n```\n{end}"
        )
        if start in text and end in text:
            text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
        else:
            text = text + "\n" + block + "\n"
        Path(args.doc).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
