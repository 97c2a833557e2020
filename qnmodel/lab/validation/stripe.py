"""Striping validation: qnbench ``stripe`` measured against fork-join models.

The study measures qnbench's ``stripe`` engine (user-space RAID0/RAID5, see
``qnmodel/bench/csrc/engines/stripe.c``) over ``emu`` members (emulated devices, one FCFS
server each, service time constant or exponential of mean d) and over ``file`` members on a
tmpfs, with N = 1..32 closed-loop clients and no think time, and sets every point beside

* the fork-join mean value technique, :func:`qnmodel.fork_join` (approximate, [Var99]), with
  its percentile approximation (``response_time_quantile``);
* the simulator, :func:`qnmodel.simulate` (means with 95 % confidence intervals, p95/p99);
* the two naive models a storage engineer would otherwise reach for: the members **in series**
  (exact MVA over the member stations one after another) and **one combined station** (exact
  MVA over one member: the request takes one member's time).

Workloads (chunk 64 KiB, ``--size 64 MiB`` per member, random offsets):

``raid0-read``
    full-stripe reads of ``width * chunk``: a fork over all ``width`` members.
``raid5-read``
    full-stripe reads of ``(width - 1) * chunk``: a fork over the stripe's ``width - 1`` data
    members, which rotate with the parity (a random ``width - 1`` of ``width`` members;
    ``ForkJoin(fanout=width - 1)``).
``raid5-rmw``
    4 KiB writes, read-modify-write ([CLGK94] sec. 3): read old data and old parity (a fork to
    2 of the ``width`` members, random), join, then write both (a second fork to the same 2);
    modelled as one ``ForkJoin(fanout=2)`` whose sub-requests read and write (demand 2 d,
    :func:`qnmodel.models.raid.raid5_read_modify_write`).

With ``file`` members the engine performs a request's member reads and writes one after the
other (``stripe.c``), so there is no fork: the study reports what the models make of it.

:func:`measure` runs the grid (best-of-3 in the sense of the median of three repeats, see
:func:`summarise_repeats`), :func:`predict` adds the model columns, :func:`run_study` does
both and :func:`record` writes ``data/validation/stripe.json`` with the machine and the date
(``python -m qnmodel.lab.validation.stripe --out data/validation/stripe.json``).

References
----------
.. [Var99] E. Varki, "Mean value technique for closed fork-join networks", Proc. ACM
   SIGMETRICS 1999, Perf. Eval. Review 27(1):103-112.
.. [CLGK94] P. M. Chen, E. K. Lee, G. A. Gibson, R. H. Katz, D. A. Patterson, "RAID:
   high-performance, reliable secondary storage", ACM Computing Surveys 26(2):145-185, 1994.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._common import machine_info, mean_ci
from ._stripe_spec import CHUNK, SERVICE, WORKLOADS, Case, _grid, parse_stripe

__all__ = [
    "WORKLOADS",
    "FULL_GRID",
    "LIVE_GRID",
    "Case",
    "measure",
    "predict",
    "run_study",
    "record",
    "load",
    "summary",
    "errors",
    "network",
    "naive_networks",
    "histogram_quantile",
    "main",
    "parse",
    "run",
]

MEMBER_SIZE = 64 * 1024 * 1024
QUANTILES = (0.95, 0.99)
POOL_WITHIN = 0.2  # repeats pooled for quantiles: mean within 20 % of the median repeat's


#: the recorded grid: widths 2, 4, 8 (RAID5: 4, 8), N in 1, 2, 4, 8, 16, 32
FULL_GRID = {
    "cases": _grid(
        WORKLOADS, (2, 4, 8), (("emu", "exp"), ("emu", "const"))
    ) + _grid(("raid0-read", "raid5-rmw"), (4, 8), (("file", "-"),)),
    "jobs": (1, 2, 4, 8, 16, 32),
}  # fmt: skip
#: the live test's subset
LIVE_GRID = {"cases": (Case("raid0-read", 4, "emu", "exp"),), "jobs": (1, 4, 16)}


def histogram_quantile(buckets: Sequence[Sequence[float]], q: float) -> float:
    """The q-quantile of a qnbench latency histogram (``[[lo, hi, count], ...]``), s.

    The rank ceil(q n) falls into one bucket; its midpoint is returned, as qnbench reports its
    own quantiles (``stats.c``: relative error <= 2^-9). Several histograms' buckets may be
    concatenated (a pooled quantile).
    """
    b = np.asarray(buckets, dtype=np.float64).reshape(-1, 3)
    if b.size == 0:
        return math.nan
    b = b[np.argsort(b[:, 0], kind="stable")]
    cum = np.cumsum(b[:, 2])
    rank = max(1.0, math.ceil(q * cum[-1] - 1e-9))
    i = int(np.searchsorted(cum, rank))
    return float(0.5 * (b[i, 0] + b[i, 1]))


@contextlib.contextmanager
def tmpfs_dir() -> Iterator[tuple[Path, str]]:
    """A fresh tmpfs for file members: mounted here when permitted, else a new /dev/shm dir.

    Yields the directory and how it was made; unmounts / removes it afterwards.
    """
    root = Path(tempfile.mkdtemp(prefix="qnmodel-stripe-"))
    mounted = False
    try:
        if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("mount"):
            p = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=1g", "qnmodel-stripe", str(root)],
                capture_output=True,
                check=False,
            )
            mounted = p.returncode == 0
        if mounted:
            yield root, "tmpfs mounted by the study"
        else:
            shm = Path(tempfile.mkdtemp(prefix="qnmodel-stripe-", dir="/dev/shm"))
            try:
                yield shm, "directory on the /dev/shm tmpfs"
            finally:
                shutil.rmtree(shm, ignore_errors=True)
    finally:
        if mounted:
            subprocess.run(["umount", str(root)], capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)


def summarise_repeats(results: Sequence[dict]) -> dict[str, float]:
    """One point from its repeats: the median repeat's means, pooled-histogram quantiles.

    The mean response time and throughput are those of the repeat with the median
    throughput (with one disturbed repeat out of three -- a late wake-up on the shared
    machine lowers X -- the median ignores it, and unlike the best repeat it does not pick
    the luckiest sample of an exponential service); quantiles pool the histograms of the
    repeats whose mean is within ``POOL_WITHIN`` (20 %) of the median repeat's (three times
    the samples of one repeat, without a stalled repeat's tail: one repeat of the first
    recording stalled at a 2.9 s mean against 0.15 s).
    """
    order = sorted(results, key=lambda r: r["throughput_ops_s"])
    mid = order[len(order) // 2]
    med = float(mid["latency_s"]["mean"])
    pool = [r for r in results if abs(float(r["latency_s"]["mean"]) / med - 1.0) <= POOL_WITHIN]
    buckets = [b for r in pool for b in r["latency_s"].get("histogram", [])]
    out = {
        "ops": float(sum(r["ops"] for r in pool)),
        "repeats_pooled": len(pool),
        "x_measured": float(mid["throughput_ops_s"]),
        "r_measured": float(mid["latency_s"]["mean"]),
        "r_measured_repeats": [float(r["latency_s"]["mean"]) for r in results],
        "x_measured_repeats": [float(r["throughput_ops_s"]) for r in results],
    }
    for q in QUANTILES:
        key = f"p{round(q * 100)}"
        out[f"{key}_measured"] = histogram_quantile(buckets, q)
        out[f"{key}_measured_repeats"] = [
            histogram_quantile(r["latency_s"].get("histogram", []), q) for r in results
        ]
    st = mid.get("engine_stats", {})
    if "service_s_mean" in st:
        out["member_service_measured"] = float(st["service_s_mean"])
    if "utilization" in st:
        out["member_utilization_measured"] = float(np.mean(st["utilization"]))
    return out


def _realtime_ok() -> bool:
    from ... import bench

    try:
        bench.run("emu", ops=3, runtime="5 s", warmup=0, dev_latency="1 ms", realtime=True)
    except Exception:  # noqa: BLE001 - any failure means: no SCHED_FIFO here
        return False
    return True


def measure(
    cases: Sequence[Case] = FULL_GRID["cases"],
    jobs: Sequence[int] = FULL_GRID["jobs"],
    *,
    service: float = SERVICE,
    runtime: float = 3.0,
    warmup: float = 0.5,
    repeats: int = 3,
    file_runtime: float = 1.0,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Measure every case at every population; one dict per (case, N).

    Emu members serve ``service`` seconds per request (mean; ``dev_rate`` 0, so every member
    request costs the same whatever its size: qnbench's default 100 MB/s would add 0.66 ms
    per 64 KiB chunk); clients run SCHED_FIFO when permitted.
    """
    from ... import bench

    rt = _realtime_ok()
    rows = []
    for case in cases:
        opts: dict[str, Any] = dict(
            members=case.width, raid=case.raid, chunk=CHUNK, size=MEMBER_SIZE, bs=case.bs,
            rw=case.rw, jobs=list(jobs), repeat=repeats, warmup=warmup, histogram=True,
            realtime=rt and case.member == "emu", member=case.member, progress=progress,
        )  # fmt: skip
        ctx: Any
        if case.member == "emu":  # dev_rate 0: every member request takes `service`
            opts.update(dev_latency=service, dev_rate=0, dev_dist=case.dist, runtime=runtime)
            ctx = contextlib.nullcontext((None, ""))
        else:
            opts.update(runtime=file_runtime, size=4 * 1024 * 1024)
            ctx = tmpfs_dir()
        with ctx as (where, how):
            if where is not None:
                opts["dir"] = str(where)
            trace = bench.run("stripe", **opts)
        for n in jobs:
            res = [r for r in trace.results if r["jobs"] == n]
            row = {
                "case": case.label,
                "workload": case.workload,
                "width": case.width,
                "member": case.member,
                "dist": case.dist if case.member == "emu" else "",
                "bs_bytes": case.bs,
                "n": int(n),
                "service_s": service if case.member == "emu" else math.nan,
                "realtime": rt and case.member == "emu",
                "storage": how,
                "cpus": os.cpu_count(),
            }
            row.update(summarise_repeats(res))
            rows.append(row)
    return rows


# ------------------------------------------------------------------------------ models
def _ops(workload: str) -> tuple[int, int]:
    """(member requests per phase, phases) of one request of the workload."""
    return {"raid0-read": (0, 1), "raid5-read": (-1, 1), "raid5-rmw": (2, 2)}[workload]


def network(workload: str, width: int, service: float):
    """The fork-join network of one workload over ``width`` members of mean service ``service``.

    ``raid0-read``: ``ForkJoin`` over all members; ``raid5-read``: ``fanout=width - 1``;
    ``raid5-rmw``: :func:`qnmodel.models.raid.raid5_read_modify_write`, a fork to the random
    data member and parity member (``fanout=2``), each reading then writing (demand 2 d).
    """
    import qnmodel as qn

    from ...models.raid import raid5_read_modify_write

    if workload == "raid5-rmw":
        return qn.Network([raid5_read_modify_write(service, width)])
    fan = width if workload == "raid0-read" else width - 1
    members = [qn.Station(f"m{i}", service) for i in range(width)]
    return qn.Network([qn.ForkJoin("stripe", members, fanout=fan)])


def naive_networks(workload: str, width: int, service: float):
    """(members in series, one combined station) for the same workload.

    In series: every member request of a request one after another, ``width`` stations of
    demand ``service * fan * phases / width`` (a request's member work spread over the
    members). One combined station: the array as one faster disk, a single queue of the
    busiest member's busy time per request (the right saturation throughput, no cost for the
    join).
    """
    import qnmodel as qn

    per, phases = _ops(workload)
    fan = width if per == 0 else (width - 1 if per < 0 else per)
    share = service * fan * phases / width
    series = qn.Network([qn.Station(f"m{i}", share) for i in range(width)])
    one = qn.Network([qn.Station("array", share)])
    return series, one


def predict(
    rows: Sequence[dict[str, Any]],
    *,
    simulate: bool = True,
    seed: int = 20261123,
    replications: int = 10,
) -> list[dict[str, Any]]:
    """Add the model columns to measured rows (returns new dicts).

    Emu members: ``fj_*`` (fork-join MVA: ``r``, ``x``, ``p95``, ``p99``), ``sim_*`` (the
    simulator with the members' service distribution, with ``sim_r_hw`` the 95 % half-width),
    ``series_r`` and ``one_r`` (exact MVA of the naive networks). File members: the same
    with the member service calibrated from the one-client point (the engine performs the
    member requests one after another: R(1) / member requests per request), and ``cpu_r``:
    the request as R(1) of CPU time on the machine's ``cpus`` processors (MVA, multi-server).
    """
    import qnmodel as qn

    out = []
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["case"], []).append(dict(r))
    for case_rows in groups.values():
        case_rows.sort(key=lambda r: r["n"])
        first = case_rows[0]
        wl, w = first["workload"], int(first["width"])
        per, phases = _ops(wl)
        fan = w if per == 0 else (w - 1 if per < 0 else per)
        if first["member"] == "emu":
            d = float(first["service_s"])
            dist = "deterministic" if first["dist"] == "const" else "exponential"
        else:
            one = [r for r in case_rows if r["n"] == 1]
            d = float(one[0]["r_measured"]) / (fan * phases) if one else math.nan
            dist = "exponential"
        nmax = max(int(r["n"]) for r in case_rows)
        net = network(wl, w, d)
        fj = qn.fork_join(net, nmax)
        series, single = naive_networks(wl, w, d)
        rs, r1 = qn.mva(series, nmax), qn.mva(single, nmax)
        cpu = None
        if first["member"] == "file":  # the client's CPU does the member I/O: R(1) per request
            cpus = int(first.get("cpus") or os.cpu_count() or 1)
            net_cpu = qn.Network([qn.Station("cpu", d * fan * phases, servers=cpus)])
            cpu = qn.mva(net_cpu, nmax)
        for r in case_rows:
            n = int(r["n"])
            r["model_service_s"] = d
            r["fj_r"] = float(fj.response_time[n - 1])
            r["fj_x"] = float(fj.throughput[n - 1])
            for q in QUANTILES:
                r[f"fj_p{round(q * 100)}"] = float(fj.response_time_quantile(q, n=n))
            r["series_r"] = float(rs.response_time[n - 1])
            r["one_r"] = float(r1.response_time[n - 1])
            if cpu is not None:
                r["cpu_r"] = float(cpu.response_time[n - 1])
            if simulate and r["member"] == "emu":
                s = qn.simulate(
                    net, n, service=dist, seed=seed + n, replications=replications,
                    quantiles=QUANTILES,
                )  # fmt: skip
                r["sim_r"] = float(s.response_time[0])
                r["sim_r_hw"] = float(s.response_time_halfwidth[0])
                r["sim_x"] = float(s.throughput[0])
                for q in QUANTILES:
                    r[f"sim_p{round(q * 100)}"] = s.response_time_quantile(q)
            out.append(r)
    return out


def run_study(
    cases: Sequence[Case] = FULL_GRID["cases"],
    jobs: Sequence[int] = FULL_GRID["jobs"],
    *,
    simulate: bool = True,
    **measure_options: Any,
):
    """Measure the grid and add the models: a ``pandas.DataFrame``, one row per (case, N)."""
    import pandas as pd

    rows = predict(measure(cases, jobs, **measure_options), simulate=simulate)
    return pd.DataFrame(rows)


def errors(frame):
    """Relative errors (model / measured - 1) per row: ``err_fj``, ``err_fj_sim`` (vs the
    simulator), ``err_series``, ``err_one``, ``err_sim``, ``err_fj_p95``, ``err_fj_p99``."""
    f = frame.copy()
    f["err_fj"] = f["fj_r"] / f["r_measured"] - 1
    f["err_series"] = f["series_r"] / f["r_measured"] - 1
    f["err_one"] = f["one_r"] / f["r_measured"] - 1
    if "cpu_r" in f:
        f["err_cpu"] = f["cpu_r"] / f["r_measured"] - 1
    if "sim_r" in f:
        f["err_sim"] = f["sim_r"] / f["r_measured"] - 1
        f["err_fj_sim"] = f["fj_r"] / f["sim_r"] - 1
    for q in ("p95", "p99"):
        f[f"err_fj_{q}"] = f[f"fj_{q}"] / f[f"{q}_measured"] - 1
    return f


def summary(frame):
    """Per case: MAPE (%) of the fork-join MVA vs measured and vs the simulator, of the
    simulator and the naive models vs measured, and the worst p95/p99 errors (%)."""
    import pandas as pd

    f = errors(frame)
    out = []
    for case, g in f.groupby("case", sort=False):
        row = {"case": case, "points": len(g)}
        for col, name in (
            ("err_fj", "mape_fj"), ("err_fj_sim", "mape_fj_vs_sim"), ("err_sim", "mape_sim"),
            ("err_series", "mape_series"), ("err_one", "mape_one"), ("err_cpu", "mape_cpu"),
        ):  # fmt: skip
            if col in g and g[col].notna().any():
                row[name] = float(100 * g[col].abs().mean())
        for q in ("p95", "p99"):
            e = g[f"err_fj_{q}"]
            row[f"worst_{q}"] = float(100 * e.iloc[int(e.abs().argmax())])
        out.append(row)
    return pd.DataFrame(out)


# ------------------------------------------------------------------------------ record
def record(
    path: str | os.PathLike,
    rows: Sequence[dict[str, Any]] | None = None,
    *,
    points: Sequence[dict[str, Any]] | None = None,
    note: str = "",
    **options: Any,
) -> Path:
    """Measure (unless ``rows`` are given), predict (unless ``points``, the predictions of
    ``rows``, are given), and write the study's JSON to ``path``."""
    from ... import __version__

    if points is None:
        points = predict(measure(**options) if rows is None else rows)
    doc = {
        "study": "stripe",
        "qnmodel_version": __version__,
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_info(),
        "settings": {
            "member_service_s": SERVICE,
            "chunk_bytes": CHUNK,
            "member_size_bytes": MEMBER_SIZE,
            "repeats": 3,
            "summary": "median repeat's mean and throughput; quantiles pooled over repeats",
        },
        "note": note,
        "points": [{k: _plain(v) for k, v in p.items()} for p in points],
    }
    from ..._files import output_dir, write_output

    out = Path(path)
    output_dir(out.parent)
    return write_output(out, json.dumps(doc, indent=1) + "\n")


def _plain(v: Any) -> Any:
    v = v.item() if isinstance(v, np.generic) else v
    return None if isinstance(v, float) and not math.isfinite(v) else v


def load(path: str | os.PathLike):
    """A recorded study as (``pandas.DataFrame`` of its points, the document)."""
    import pandas as pd

    doc = json.loads(Path(path).read_text())
    return pd.DataFrame(doc["points"]).astype({"n": int}), doc


def parse(spec: dict[str, Any], topology: Any = None) -> dict[str, Any]:
    """Check the ``[stripe]`` table (:func:`qnmodel.lab.validation._stripe_spec.parse_stripe`):
    the cases, jobs, service and runtime that :func:`run` measures, in SI."""

    return parse_stripe(spec)


def run(spec: dict[str, Any], topology: Any = None, out_dir: Any = None) -> dict[str, Any]:
    """The study as a ``qnmodel validate`` kind: ``[study] kind = "stripe"`` (no testbed).

    ``[stripe]`` keys (all optional): ``workloads`` (of :data:`WORKLOADS`), ``widths``,
    ``members`` (``"emu-exp"``, ``"emu-const"``, ``"file"``), ``jobs``, ``service`` (s),
    ``runtime`` (s). Writes ``stripe.json`` (as :func:`record`) into ``out_dir`` and returns a
    summary: ``mape_r``/``mape_x`` of the fork-join MVA (%), ``inside_bounds_share`` and
    ``points`` with ``n``, measured X and R with 95 % half-widths over the repeats, the model,
    and the optimistic bounds X <= min(1/D_max, n/R(1)), R >= max(R(1), n D_max) (no
    pessimistic bound is known for fork-join networks: ``x_lower`` 0, ``r_upper`` inf).
    """
    cfg = parse(spec, topology)
    rows = measure(cfg["cases"], cfg["jobs"], service=cfg["service"], runtime=cfg["runtime"])
    points = predict(rows)
    if out_dir is not None:
        record(Path(out_dir) / "stripe.json", points=points)
    import qnmodel as qn

    pts, r_in = [], []
    for p in points:
        net = network(p["workload"], int(p["width"]), float(p["model_service_s"]))
        n, dmax = int(p["n"]), float(np.max(net.demands))
        r1 = float(qn.fork_join(net, 1).response_time[0])
        q = {
            "case": p["case"], "n": n, "x_measured": p["x_measured"],
            "x_ci": mean_ci(p["x_measured_repeats"])[1], "r_measured": p["r_measured"],
            "r_ci": mean_ci(p["r_measured_repeats"])[1], "x_model": p["fj_x"], "r_model": p["fj_r"],
            "x_lower": 0.0, "x_upper": min(1.0 / dmax, n / r1), "r_lower": max(r1, n * dmax),
            "r_upper": math.inf,
        }  # fmt: skip
        r_in.append(q["r_measured"] + q["r_ci"] >= q["r_lower"])
        pts.append(q)
    ape = lambda a, b: 100 * float(np.mean(np.abs(np.asarray(a) / np.asarray(b) - 1)))  # noqa: E731
    return {
        "mape_r": ape([q["r_model"] for q in pts], [q["r_measured"] for q in pts]),
        "mape_x": ape([q["x_model"] for q in pts], [q["x_measured"] for q in pts]),
        "inside_bounds_share": float(np.mean(r_in)) if r_in else math.nan,
        "points": pts,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m qnmodel.lab.validation.stripe --out data/validation/stripe.json``."""
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m qnmodel.lab.validation.stripe", description=__doc__
    )
    ap.add_argument("--out", default="data/validation/stripe.json")
    ap.add_argument("--from-rows", help="JSON list of measured rows (skip the measurement)")
    ap.add_argument("--note", default="")
    a = ap.parse_args(argv)
    rows = json.loads(Path(a.from_rows).read_text()) if a.from_rows else None
    out = record(a.out, rows, note=a.note)
    frame, _ = load(out)
    print(summary(frame).round(2).to_string(index=False))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
