"""Benchmark: a what-if sweep of 10^7 grid points in process and on a Dask LocalCluster.

Grid: a three-station network (cpu, disk, net demands, 216 values each: 10,077,696 points),
population N = 16, ABA bounds and exact MVA. Each path runs in its own fresh Python process
while this one samples the resident memory of that process and all its children (the Dask
scheduler and workers) every 50 ms:

* ``in-process``: :func:`qnmodel.whatif.sweep` (one vectorised call over the whole grid);
* ``dask``: :func:`qnmodel.whatif.distributed.sweep_distributed` on a ``LocalCluster`` of
  ``--workers`` single-threaded processes, chunks of ``--chunk`` points, at most two tasks per
  worker in flight.

Printed per path: wall time (cluster start-up included for Dask, printed apart), throughput in
grid points per second, peak resident memory of the process tree, and a hash of the frame;
the exit status is 1 if the hashes differ (the frames must be identical). Speed and memory
are reported, never asserted.

Run: ``python tests/benchmarks/bench_sweep_distributed.py [--side 216] [--workers 2]``
(or ``python tests/benchmarks/run.py sweep_distributed``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time
import numpy as np
import pandas as pd
import qnmodel as qn
side, path, workers, chunk = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
net = qn.Network.from_demands([0.01, 0.02, 0.005], think_time=0.1, names=["cpu", "disk", "net"])
grid = dict(cpu=np.linspace(1e-3, 2e-2, side), disk=np.linspace(5e-3, 5e-2, side),
            net=np.linspace(1e-3, 1e-2, side))
startup = 0.0
if path == "dask":
    from distributed import Client, LocalCluster
    from qnmodel.whatif.distributed import sweep_distributed
    t = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=":0",
                           memory_limit="4GiB")
    client = Client(cluster)
    startup = time.perf_counter() - t
    t = time.perf_counter()
    df = sweep_distributed(net, [16], client=client, methods=("aba", "mva"), chunk_size=chunk,
                           progress=True, **grid)
else:
    from qnmodel.whatif import sweep
    t = time.perf_counter()
    df = sweep(net, [16], methods=("aba", "mva"), **grid)
wall = time.perf_counter() - t
h = int(pd.util.hash_pandas_object(df, index=False).sum())
print(json.dumps({"rows": len(df), "wall": wall, "startup": startup, "hash": h}))
"""


def tree_rss(pid: int) -> int:
    import psutil

    try:
        p = psutil.Process(pid)
        procs = [p, *p.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for q in procs:
        try:
            total += q.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def run_path(path: str, side: int, workers: int, chunk: int) -> dict:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(side), path, str(workers), str(chunk)],
        stdout=subprocess.PIPE,
        text=True,
    )
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.05)
    out = proc.stdout.read()
    if proc.returncode != 0:
        raise SystemExit(f"{path} failed with status {proc.returncode}")
    res = json.loads(out.strip().splitlines()[-1])
    res["peak_rss"] = peak
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--side", type=int, default=216, help="values per axis (points = side^3)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=250_000)
    args = ap.parse_args(argv)
    points = args.side**3
    print(f"grid: {points:,} points (3 axes of {args.side}), N = 16, ABA + exact MVA")
    print(f"{'path':<12}{'wall s':>9}{'start-up s':>12}{'points/s':>14}{'peak RSS MB':>14}")
    res = {}
    for path in ("in-process", "dask"):
        r = run_path(path, args.side, args.workers, args.chunk)
        res[path] = r
        print(
            f"{path:<12}{r['wall']:>9.1f}{r['startup']:>12.1f}{points / r['wall']:>14,.0f}"
            f"{r['peak_rss'] / 2**20:>14,.0f}"
        )
    same = res["in-process"]["hash"] == res["dask"]["hash"]
    print(f"frames identical: {same} ({res['dask']['rows']:,} rows)")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
