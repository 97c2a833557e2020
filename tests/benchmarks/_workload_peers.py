"""Peer rows of qnbench's workloads against fio (a part of ``bench_qnbench_peers.py``).

* metadata: qnbench ``meta`` (create, stat, unlink of N files in its own directory, one job)
  against fio's ``filecreate``, ``filestat`` and ``filedelete`` ioengines over the same number
  of files: rates (files/s) and the mean latency of the call (fio's completion latency) as
  ratios qnbench / fio. fio spends far more per file than the call itself (its file
  bookkeeping between files), so its stat and unlink *rates* are much lower; the call
  latencies are the like-for-like comparison;
* read/write mix: qnbench ``file --rw randread --rwmix 70`` against fio ``--rw=randrw
  --rwmixread=70`` (psync, 4 KiB): total IOPS and the read and write median
  latencies;
* open loop: qnbench ``--rate R --arrivals poisson`` against fio ``--rate_iops=R
  --rate_process=poisson`` (psync, 4 KiB random reads): achieved IOPS, and median
  latency (fio's completion latency counts from issue, qnbench's from the scheduled arrival: on
  an idle page cache the two agree; under a backlog only qnbench counts the queueing).

All on tmpfs (``--tmpfs-dir``): the file-system call itself, not a disk other work shares.
Every comparison is paired and alternates which tool goes first (``paired`` of the caller).
"""

from __future__ import annotations

import json
import subprocess
import tempfile

from qnmodel import bench


def _fio_json(cmd: list[str]) -> dict:
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out[out.index("{") :])["jobs"][0]


def _fio_meta(base: str, files: int) -> dict:
    """Create, stat and delete `files` files with fio's file ioengines; rates in files/s."""
    rates, cmds = {}, []
    with tempfile.TemporaryDirectory(dir=base) as d:
        for op, engine in (("create", "filecreate"), ("stat", "filestat"),
                           ("unlink", "filedelete")):  # fmt: skip
            cmd = ["fio", "--name=md", f"--directory={d}", f"--ioengine={engine}",
                   f"--nrfiles={files}", "--filesize=4k", "--bs=4k", "--openfiles=1",
                   "--fallocate=none",
                   "--rw=read", "--output-format=json"]  # fmt: skip
            side = _fio_json(cmd)["read"]
            rates[op] = side["iops"]
            # the engine's call alone (create, stat, unlink), without fio's per-file work
            rates[f"{op}_lat"] = side["clat_ns"]["mean"] * 1e-9
            cmds.append(" ".join(cmd))
    return {**rates, "cmd": " && ".join(cmds)}


def _q_meta(base: str, files: int) -> dict:
    """fio's filecreate makes empty files; filestat then lays them out to --filesize (4 KiB)
    before it stats them, so filestat and filedelete work on 4 KiB files: qnbench creates
    empty files for the create row and 4 KiB files (--meta-bytes) for the stat and unlink rows."""
    out, cmds = {}, []
    for nbytes, ops in ((0, ("create",)), (4096, ("stat", "unlink"))):
        with tempfile.TemporaryDirectory(dir=base) as d:
            t = bench.run("meta", dir=d, files=files, meta_op=["create", "stat", "unlink"],
                          meta_bytes=nbytes, progress=False)  # fmt: skip
        for r in t.results:
            if r["op"] in ops:
                out[r["op"]] = r["throughput_ops_s"]
                out[f"{r['op']}_lat"] = r["latency_s"]["mean"]
        cmds.append(" ".join(t.command))
    return {**out, "cmd": " && ".join(cmds)}


def _fio_rw(base: str, runtime: float, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory(dir=base) as d:
        cmd = ["fio", "--name=peer", f"--directory={d}", "--rw=randrw", "--bs=4k",
               "--size=64M", "--ioengine=psync", "--time_based", f"--runtime={runtime}",
               "--ramp_time=0.3", "--lat_percentiles=1", "--norandommap", "--randrepeat=0",
               "--pre_read=1", "--invalidate=0", "--output-format=json", *extra]  # fmt: skip
        job = _fio_json(cmd)
    p50 = {s: job[s]["lat_ns"]["percentile"]["50.000000"] * 1e-9 for s in ("read", "write")
           if job[s]["total_ios"]}  # fmt: skip
    iops = job["read"]["iops"] + job["write"]["iops"]
    return {"iops": iops, "read_p50": p50.get("read", 0.0), "write_p50": p50.get("write", 0.0),
            "p50": p50.get("read", 0.0), "cmd": " ".join(cmd)}  # fmt: skip


def _q_rw(base: str, runtime: float, **extra) -> dict:
    with tempfile.TemporaryDirectory(dir=base) as d:
        t = bench.run("file", dir=d, rw="randread", bs="4KiB", size="64MiB", runtime=runtime,
                      warmup=0.3, progress=False, end_fsync=0, **extra)  # fmt: skip
    r = t.results[0]
    by = r.get("latency_by_op_s", {})
    return {"iops": r["throughput_ops_s"],
            "read_p50": by.get("read", r["latency_s"])["p50"] or 0.0,
            "write_p50": (by.get("write") or {}).get("p50") or 0.0,
            "p50": r["latency_s"]["p50"], "cmd": " ".join(t.command)}  # fmt: skip


def workload_rows(args, rows, commands, paired, ratios, ratio_cell, med) -> None:
    """Append the metadata, rwmix and open-loop rows (qnbench / fio) to `rows`."""
    files = 5000
    ps, qs = paired(lambda: _fio_meta(args.tmpfs_dir, files),
                    lambda: _q_meta(args.tmpfs_dir, files), args.repeat)  # fmt: skip
    commands += [ps[0]["cmd"], qs[0]["cmd"]]
    for op, engine in (("create", "filecreate"), ("stat", "filestat"), ("unlink", "filedelete")):
        cell, ok, _ = ratio_cell(ratios(qs, ps, op), 0.15)
        lat, ok_lat, _ = ratio_cell(ratios(qs, ps, f"{op}_lat"), 0.15)
        rows.append([f"meta {op}, {files} files, tmpfs, 1 job", f"fio {engine}",
                     f"{med(qs, op):,.0f} files/s", f"{med(ps, op):,.0f} files/s", cell,
                     f"mean {med(qs, f'{op}_lat') * 1e6:,.1f} / "
                     f"{med(ps, f'{op}_lat') * 1e6:,.1f} us", lat,
                     "yes" if ok_lat else "no (rate: fio's per-file work)" if not ok else "yes",
                     ])  # fmt: skip

    ps, qs = paired(lambda: _fio_rw(args.tmpfs_dir, args.runtime, ["--rwmixread=70"]),
                    lambda: _q_rw(args.tmpfs_dir, args.runtime, rwmix=70), args.repeat)  # fmt: skip
    commands += [ps[0]["cmd"], qs[0]["cmd"]]
    cell, ok_iops, _ = ratio_cell(ratios(qs, ps, "iops"), 0.10)
    rd, ok_rd, _ = ratio_cell(ratios(qs, ps, "read_p50"), 0.15)
    wr, _, _ = ratio_cell(ratios(qs, ps, "write_p50"), 0.15)
    rows.append(["randrw 4 KiB, 70 % reads, tmpfs, 1 job", "fio --rwmixread=70",
                 f"{med(qs, 'iops'):,.0f} IOPS", f"{med(ps, 'iops'):,.0f} IOPS", cell,
                 f"read {med(qs, 'read_p50') * 1e6:.1f} / {med(ps, 'read_p50') * 1e6:.1f} us; "
                 f"write {med(qs, 'write_p50') * 1e6:.1f} / {med(ps, 'write_p50') * 1e6:.1f} us",
                 f"read {rd}; write {wr}", "yes" if ok_iops and ok_rd else "no"])  # fmt: skip

    rate = 2000
    ps, qs = paired(
        lambda: _fio_rw(args.tmpfs_dir, args.runtime,
                        ["--rwmixread=100", f"--rate_iops={rate}", "--rate_process=poisson"]),
        lambda: _q_rw(args.tmpfs_dir, args.runtime, rate=f"{rate}/s", arrivals="poisson"),
        args.repeat,
    )  # fmt: skip
    commands += [ps[0]["cmd"], qs[0]["cmd"]]
    cell, ok_iops, _ = ratio_cell(ratios(qs, ps, "iops"), 0.05)
    lat, _, _ = ratio_cell(ratios(qs, ps, "p50"), 0.25)
    # the latency is information, not a target: qnbench counts from the scheduled arrival,
    # so its figure includes the client's wake-up after each idle gap; fio's starts at issue
    rows.append([f"open loop, Poisson {rate}/s, 4 KiB random reads, tmpfs",
                 "fio --rate_process=poisson", f"{med(qs, 'iops'):,.0f} IOPS",
                 f"{med(ps, 'iops'):,.0f} IOPS", cell,
                 f"{med(qs, 'p50') * 1e6:.1f} / {med(ps, 'p50') * 1e6:.1f} us (info)", lat,
                 "yes" if ok_iops else "no"])  # fmt: skip
