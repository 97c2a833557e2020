"""Seed 001's NFS bandwidth model validated on the testbed: three cases, hit mixtures, N clients.

:func:`run` takes a study (the parsed TOML with ``[study] kind = "nfs"``) and a testbed topology
with one client and one NFS server (nfs-ganesha) on a ``dir`` or ``throttled`` disk, and for
each configuration of the study (a link rate for both nodes, a disk read rate enforced by a
cgroup-v1 blkio throttle on ganesha) brings the testbed up, measures, and brings it down --
always, also when a measurement fails. It measures, with qnbench's ``nfs`` engine (libnfs):

* **client hit**: libnfs' own page cache on, a file read once in the warm-up (seed 001's b1);
* **server hit**: a file written on the server's disk and still in its page cache (b2);
* **miss**: the same after ``fsync`` + ``posix_fadvise(DONTNEED)``
  (:func:`qnmodel.lab.testbed.pagecache.evict`), read once (min(b2, b4));
* **mixed** server hit ratios h_s: only the tail ``1 - h_s`` of the file evicted, read once,
  against the expected-bandwidth formula (harmonic mean of the cases, seed 001 sec. 1);
* **N clients** (closed loop, no think time, 64 KiB requests, server hits), each in its own
  namespace behind its own link (one MPI rank each; ``nfs.clients.namespaces``), against exact
  MVA of :class:`~qnmodel.models.nfs.NFSSystem`'s network, balanced job bounds and a USL fit;
* **writes** timed through COMMIT + close and **mixed client-hit ratios**
  (:mod:`qnmodel.lab.validation._nfs_more`).

The model is built bottom-up, never from the curves it predicts: b2 = link rate x the TCP
goodput factor at the link MTU; b4 = the throttled disk read directly on the server (``dd`` of
the evicted files inside ganesha's cgroup, :func:`~qnmodel.lab.validation.bottomup.disk_rate`;
the configured throttle is reported beside it); b1 = b3 = the client's memcpy bandwidth
(qnbench ``mem``, measured next to the client-hit runs); and a per-request turnaround for the
N-client model from a separate small-request run (4 KiB READs).

References
----------
.. [Cao07] Cao L., Luo H., Zhang X., "Measurement and analysis of factors affecting NFS
   bandwidth in cluster", Computer Engineering, 2007, sec. 1 (three cases, fig. 1) and
   sec. 3.4 (aggregate bandwidth vs clients).
.. [Gun07] N. J. Gunther, *Guerrilla Capacity Planning*, Springer, 2007 (USL).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pathlib
from typing import Any

import numpy as np

from ...errors import InvalidModelError, InvalidTypeError
from ..testbed import Topology, bench_in, down, up
from ..testbed.delay import goodput_factor
from ..testbed.pagecache import evict, prepare_files, server_dir
from ._common import _clean, summarize
from ._common import machine_info as _machine_info
from ._common import mape as _mape
from ._nfs_more import miss_bandwidth
from ._nfs_runs import (
    _bw,
    _check_alive,
    _client_hits,
    _clients,
    _err,
    _nfs_read,
    _slowest,
)
from ._nfs_spec import parse_spec
from .bottomup import disk_rate
from .crosscheck import flag_notes, flags, nfs_cross_checks

__all__ = ["run", "parse", "parse_spec", "three_case_model", "study_topology", "machine_info"]

MiB = 1024**2


def parse(spec: dict, topology: Topology | None = None) -> dict:
    """The study's ``[nfs]`` table checked (:func:`parse_spec`); the topology is not needed."""
    return parse_spec(spec)


def study_topology(
    topo: Topology, link: float, disk: float, clients: int = 1
) -> tuple[Topology, str, str]:
    """``topo`` with every node's link at ``link`` and the NFS server's disk throttled to ``disk``.

    Returns the topology, the first client's and the server's names. The topology must have a
    client and an NFS server on a ``dir`` or ``throttled`` disk (a tmpfs cannot miss).
    ``clients`` > 1 adds copies of the first client (``<name>_2`` ... ``<name>_K``, each its
    own namespace behind its own link) up to that many clients, for the N-client curve.
    """
    servers = [s for s in topo.servers if s.service == "nfs"]
    if not topo.clients or len(servers) != 1:
        raise InvalidModelError(
            f"topology {topo.source}: the NFS study needs a client and exactly one NFS server "
            f'(service = "nfs"), got {len(servers)}'
        )
    s, c = servers[0], topo.clients[0]
    if s.disk.kind not in ("dir", "throttled"):
        raise InvalidModelError(
            f"topology {topo.source}: servers.{s.name}.disk.kind = {s.disk.kind!r}: the miss "
            "case needs a dir or throttled disk on a real file system (a tmpfs never misses)"
        )
    disk_t = dataclasses.replace(s.disk, kind="throttled", read_rate=disk, write_rate=disk)
    new_s = dataclasses.replace(s, disk=disk_t, link=dataclasses.replace(s.link, rate=link))
    new_c = dataclasses.replace(c, link=dataclasses.replace(c.link, rate=link))
    extra = tuple(
        dataclasses.replace(new_c, name=f"{c.name[:10]}_{k}") for k in range(2, clients + 1)
    )
    nodes = (new_c, *topo.clients[1:], *extra)
    names = [n.name for n in nodes]
    if len(set(names)) != len(names):
        raise InvalidModelError(f"topology {topo.source}: client names {names} clash")
    nodes = tuple(dataclasses.replace(n, index=i) for i, n in enumerate(nodes))
    servers_t = tuple(
        dataclasses.replace(new_s if x is s else x, index=len(nodes) + j)
        for j, x in enumerate(topo.servers)
    )
    t = dataclasses.replace(topo, clients=nodes, servers=servers_t)
    return t, c.name, s.name


def three_case_model(link: float, disk: float, memory: float, mtu: int = 1500):
    """Seed 001's :class:`~qnmodel.models.nfs.NFSBandwidth` of one configuration.

    b1 = b3 = ``memory`` (the client's memory bandwidth for a cache hit; client and server
    share the machine, and at GB/s b3 never limits a link of 1 Gbit/s or less), b2 = ``link``
    x :func:`~qnmodel.lab.testbed.delay.goodput_factor` (TCP payload per shaped frame), b4 =
    ``disk`` (the disk's read rate). The study measures ``memory`` as ``[nfs] b1`` says:
    ``"memcpy"`` (default), seed 001's memory bandwidth (qnbench ``mem`` STREAM copy / 2), or
    ``"cachehit"``, qnbench ``cpu cachehit`` -- a hit in a user-space page cache copies every
    byte twice (page to reassembly buffer to caller), with a hash lookup and an age check per
    4 KiB page. Neither predicts libnfs' client hits within 5 % on the 2-core development
    machine: paired with the hit measured right after, +6 ... +26 % (cachehit) and
    +8 ... +27 % (memcpy) in ``data/validation/nfs_cases_20261124.json``.
    """
    from ...models.nfs import NFSBandwidth

    return NFSBandwidth(b1=memory, b2=link * goodput_factor(mtu), b3=memory, b4=disk)


#: the Debian packages whose versions an NFS study records beside the machine
PACKAGES = ("nfs-ganesha", "libnfs-dev")


def machine_info() -> dict:
    """Where and when a study ran (:func:`._common.machine_info`), with the versions of
    :data:`PACKAGES`."""
    return _machine_info(PACKAGES)


def _measure_cases(topo, client, server, cfg, opts, log) -> dict:
    """Client hit, server hit and miss bandwidths of one configuration (all repeats)."""
    bs, rep = int(opts["bs"]), opts["repeats"]
    common = dict(bs=bs, rsize=bs)
    out: dict[str, Any] = {}
    # b1 bottom-up, under this moment's load: memcpy (seed 001's memory bandwidth) and the
    # copies of a page-cache hit of the client-hit file's size and the study's request size,
    # each repeat right before a client-hit repeat: the machine's memory bandwidth moves by a
    # factor of 2-3 within minutes here, so each repeat's pair sees the same moment
    ch = int(opts["client_hit_size"])
    prepare_files(topo, server, "tnch", 1, ch)
    for key in ("memcpy", "cachehit", "client_hit"):
        out[key] = []
    for _ in range(rep):
        out["memcpy"] += _memcpy(topo, client, 1)
        out["cachehit"] += _cachehit(topo, client, ch, bs, 1)
        # client hit: a small file, read once through the link during the warm-up
        rows = _client_hits(topo, client, server, ch, cfg["link"], bs, 1)
        out["client_hit"].append(_bw(rows[0]))
    if opts["components"]:  # b1 bottom-up from 1- and 2-page hits (libnfs' cache per page)
        from ._nfs_runs import client_cache_cost

        out["client_cache"] = client_cache_cost(topo, client, server, cfg, opts, bs)
    _check_alive(topo, server, "after the client-hit runs")
    # server hit: the prepared file is in the server's page cache
    hs = int(opts["hit_size"])
    prepare_files(topo, server, "tnsh", 1, hs)
    rows = _nfs_read(
        topo,
        client,
        server,
        "tnsh",
        hs,
        nfs_cache=0,
        runtime=opts["runtime"],
        warmup=opts["warmup"],
        repeat=rep,
        **common,
    )
    out["server_hit"] = [_bw(r) for r in rows]
    _check_alive(topo, server, "after the server-hit runs")
    # miss: evicted before each pass; one pass over the file, no warm-up
    out["miss"], out["resident_after_evict"] = [], []
    size = _miss_size(cfg, opts)
    paths = prepare_files(topo, server, "tnmiss", 1, size)
    for _ in range(rep):
        ev = evict(topo, server, paths)
        out["resident_after_evict"].append(ev[0]["resident_after"])
        rows = _one_pass(topo, client, server, "tnmiss", size, cfg, bs)
        out["miss"].append(_bw(rows[0]))
    # pipelined miss: P clients, each on its own evicted file (P requests in flight)
    p = int(opts["miss_parallel"])
    psize = max(size // p // MiB, 1) * MiB
    paths = prepare_files(topo, server, "tnmissp", p, psize)
    # b4 bottom-up: the same P files read at once on the server, under ganesha's throttle
    out["disk_rate"] = disk_rate(topo, server, method="dd", files=paths, repeat=rep)["repeats"]
    # ... and at the server's real concurrency: P threads of one process, one bs pread each in
    # flight (ganesha's workers serving P clients), timed over the share the pass reads
    out["disk_rate_server"] = disk_rate(
        topo, server, method="pread", files=paths, bs=bs, share=PASS_SHARE, repeat=rep
    )["repeats"]
    out["miss_parallel"] = []
    for _ in range(rep):
        ev = evict(topo, server, paths)
        out["resident_after_evict"] += [e["resident_after"] for e in ev]
        rows = _one_pass(topo, client, server, "tnmissp", psize, cfg, bs, jobs=p)
        # bytes / elapsed: Little's law over a few long requests per job is biased (the ones
        # in flight when the pass ends are not counted)
        out["miss_parallel"].append(rows[0]["throughput_B_s"])
    _check_alive(topo, server, "after the miss runs")
    if log:
        log(
            f"{cfg['label']}: "
            + ", ".join(
                f"{k} {max(out[k]) / 1e6:.2f} MB/s"
                for k in ("client_hit", "server_hit", "miss", "miss_parallel")
            )
        )
    return out


def _miss_size(cfg: dict, opts: dict) -> int:
    rate = _slowest(cfg) * opts["miss_seconds"]
    return int(min(max(rate, 8 * MiB), 512 * MiB) // MiB) * MiB


#: share of its files a pass of several jobs reads: a job that reached the end of its file
#: would wrap around and read its head again from the server's page cache (a hit, not a miss).
#: The blkio throttle does not share its rate evenly among the readers, so at 90 % one job
#: could finish early (4 readers behind 6 MB/s then read 7.0-7.7 MB/s in some passes); at 50 %
#: a job must read twice as fast as the mean to wrap.
PASS_SHARE = 0.5


def _one_pass(topo, client, server, prefix, size, cfg, bs, jobs=1) -> list[dict]:
    """Read ``jobs`` evicted files (:data:`PASS_SHARE` of them in all when several)."""
    total = size if jobs == 1 else int(PASS_SHARE * jobs * size)
    return _nfs_read(
        topo,
        client,
        server,
        prefix,
        size,
        nfs_cache=0,
        warmup=0,
        io_size=total,
        runtime=3 * jobs * size / _slowest(cfg) + 10,
        bs=bs,
        rsize=bs,
        jobs=jobs,
    )


#: seed 001's three cases (the miss measured with several requests in flight)
CASES = ("client_hit", "server_hit", "miss")


def _case_rows(i: int, cfg: dict, model, cases: dict, configured, in_flight: int = 4) -> list[dict]:
    """One row per case of configuration ``i``: best repeat measured vs the model.

    ``miss`` is the pipelined miss (``in_flight`` = ``miss_parallel`` requests in flight, one
    per client, each on its own file), seed 001's min(b2, b4); ``miss_single`` is one client
    with one request in flight: the closed network at N = 1 predicts 1 / (1/b2 + 1/b4)
    (``model_series``) besides the three-case min(b2, b4) (``model``). Both misses also carry
    the streaming server (``model_streaming``, ``err_streaming``: the server's read-ahead
    streams its disk into the network; :func:`qnmodel.models.nfs_network.aggregate_bandwidth`,
    ``structure="streaming"``, at N = 1 and N = ``in_flight`` clients), and the miss of
    ``in_flight`` clients the series network at that N (``model_series``). ``model`` uses b1 and
    b4 measured bottom-up (b1 as ``[nfs] b1`` says, the throttled disk read directly);
    ``model_configured`` the configured throttle as b4. A client hit also carries both b1s:
    ``model_cachehit``/``err_cachehit`` and ``model_memcpy``/``err_memcpy`` (the best
    repeats), and ``err_cachehit_paired``/``err_memcpy_paired``, the median over the repeats
    of each b1 repeat against the client-hit repeat measured right after it.
    """
    b2, b4 = model.b2, model.b4
    series = 1.0 / (1.0 / min(b2, model.b3) + 1.0 / b4)
    pred = {**model.case_bandwidths(), "miss_single": model.miss_bandwidth}
    rows = []
    for case, key in (
        ("client_hit", "client_hit"),
        ("server_hit", "server_hit"),
        ("miss", "miss_parallel"),
        ("miss_single", "miss"),
    ):
        measured = max(cases[key])
        row = {
            "config": i,
            "label": cfg["label"],
            "link_B_s": cfg["link"],
            "disk_B_s": cfg["disk"],
            "case": case,
            "measured": measured,
            "repeats": cases[key],
            "model": pred[case],
            "err": _err(pred[case], measured),
            "bottleneck": model.bottleneck(case == "client_hit", case == "server_hit"),
        }
        conf = {**configured.case_bandwidths(), "miss_single": configured.miss_bandwidth}[case]
        row.update(model_configured=conf, err_configured=_err(conf, measured), b4=b4)
        if case.startswith("miss"):
            row["resident_after_evict"] = cases["resident_after_evict"]
        if case == "miss" and cases.get("disk_rate_server"):
            # b4 read at the server's concurrency (P threads, one bs pread each in flight)
            b4s = max(cases["disk_rate_server"])
            row.update(b4_server=b4s, model_server=min(b2, b4s))
            row["err_server"] = _err(row["model_server"], measured)
        if case == "client_hit":
            # b1 both ways: the copies of a page-cache hit, and seed 001's memcpy; best of
            # the repeats, and the median error of the pairs measured one after the other
            for how in ("cachehit", "memcpy"):
                row[f"model_{how}"] = max(cases[how])
                row[f"err_{how}"] = _err(row[f"model_{how}"], measured)
                pairs = zip(cases[how], row["repeats"], strict=True)
                row[f"err_{how}_paired"] = float(np.median([_err(m, x) for m, x in pairs]))
        if case == "client_hit" and cases.get("client_cache"):
            # b1 from libnfs' cache cost per request and per page (_nfs_cpu)
            row["model_pages"] = cases["client_cache"]["b1"]
            row["err_pages"] = _err(row["model_pages"], measured)
        if case == "miss_single":
            row["model_series"] = series
            row["err_series"] = _err(series, measured)
        if case == "miss":
            row["in_flight"] = in_flight
            row["model_series"] = miss_bandwidth(model, in_flight, "series")
            row["err_series"] = _err(row["model_series"], measured)
        if case.startswith("miss"):
            n = 1 if case == "miss_single" else in_flight
            row["model_streaming"] = miss_bandwidth(model, n, "streaming")
            row["err_streaming"] = _err(row["model_streaming"], measured)
        rows.append(row)
    return rows


def _mixed(topo, client, server, cfg, opts, hits, model, case_bw) -> list[dict]:
    """Mixed server-hit ratios: evict the file's tail 1 - h_s, read it once."""
    size = _miss_size(cfg, opts)
    paths = prepare_files(topo, server, "tnmiss", 1, size)
    rows = []
    for h in hits:
        best, resident = 0.0, []
        for _ in range(opts["repeats"]):
            _warm(paths)
            ev = evict(topo, server, paths, keep=float(h))
            resident.append(ev[0]["resident_after"])
            best = max(
                best, _bw(_one_pass(topo, client, server, "tnmiss", size, cfg, int(opts["bs"]))[0])
            )
        expected = float(model.bandwidth(0.0, float(h)))
        # the same formula on the measured case bandwidths: tests the mixing rule alone
        # one request in flight, as the mixed pass: the single-request miss
        from_measured = 1.0 / (h / case_bw["server_hit"] + (1 - h) / case_bw["miss_single"])
        rows.append(
            {
                "server_hit": float(h),
                "resident_share": float(np.mean(resident)),
                "measured": best,
                "model": expected,
                "err": _err(expected, best),
                "from_measured_cases": from_measured,
                "err_from_measured_cases": _err(from_measured, best),
            }
        )
    return rows


def _warm(paths) -> None:
    """Read files from the host (not through the throttle) so all their pages are cached."""
    for p in paths:
        with open(p, "rb") as f:
            while f.read(8 * MiB):
                pass


def _memcpy(topo, client, repeats: int) -> list[float]:
    """memcpy bandwidth, bytes/s, per repeat (qnbench mem copy; STREAM counts bytes twice).

    Run inside ``client``'s node, as its client-hit runs are: with the testbed's priority, so
    other work on the machine slows both alike.
    """
    mem = bench_in(topo, client, "mem", mem_op=["copy"], size="16 MiB", runtime="500 ms",
                   repeat=repeats)  # fmt: skip
    return [r["throughput_B_s"] / 2 for r in mem.results]


def _cachehit(topo, client, size: int, bs: int, repeats: int) -> list[float]:
    """A client-cache hit's memory work, bytes/s per repeat (qnbench ``cpu`` ``cachehit``).

    ``bs``-byte reads served from a user-space page cache of ``size`` bytes in 4 KiB pages:
    each page looked up in a hash table, checked for age, copied into a reassembly buffer, and
    the buffer copied into the caller's -- what libnfs' cache does on a hit, without libnfs.
    Run inside ``client``'s node (see :func:`_memcpy`).
    """
    tr = bench_in(topo, client, "cpu", cpu_op=["cachehit"], bs=int(bs), size=int(size),
                  runtime="300 ms", warmup="200 ms", repeat=repeats)  # fmt: skip
    return [r["throughput_B_s"] for r in tr.results]


def _b1_once(topo, client, opts: dict) -> float:
    """One repeat of the model's b1, bytes/s, measured as ``[nfs] b1`` says."""
    if opts["b1"] == "memcpy":
        return _memcpy(topo, client, 1)[0]
    return _cachehit(topo, client, int(opts["client_hit_size"]), int(opts["bs"]), 1)[0]


def _parts(summary, i, topo, client, server, cfg, opts, model, best, log) -> None:
    """The mixed-ratio, write and N-client parts of the study that run on configuration ``i``."""
    from . import _nfs_more

    if i in opts["writes"]:
        summary["writes"].append(
            {"config": i, **_nfs_more.writes(topo, client, server, cfg, opts, model.b1, log)}
        )
    cm = opts["client_mixed"]
    if cm and cm["config"] == i:
        summary["client_mixed"] = _nfs_more.client_mixed(
            topo, client, server, cfg, opts, cm["client_hit"], model, log
        )
    if opts["mixed"] and opts["mixed"]["config"] == i:
        summary["mixed"] = _mixed(
            topo, client, server, cfg, opts, opts["mixed"]["server_hit"], model, best
        )
    if opts["clients"] and opts["clients"]["config"] == i:
        names = [c.name for c in topo.clients] if opts["clients"]["namespaces"] else None
        if log:
            log(f"{cfg['label']}: N clients ({'one namespace each' if names else 'one namespace'})")
        summary["clients"] = _clients(
            topo, client, server, cfg, opts, opts["clients"]["n"], model, log, names
        )


def run(spec: dict, topology: Topology, out_dir: pathlib.Path, *, log=None) -> dict:
    """Run the NFS validation study ``spec`` on ``topology``; write ``out_dir/summary.json``.

    Brings one testbed up per configuration and ALWAYS down again (also when a measurement
    or the server fails: the error is raised after ``down``). Returns the summary: ``mape_x``
    and ``mape_r`` in percent (exact MVA with the measured turnaround vs the N-client curve),
    ``inside_bounds_share`` (N-client R points whose 95 % interval meets the balanced job
    bounds), ``points`` (the N-client table), ``three_case`` (measured vs model per case and
    configuration, best repeat), ``mixed``, ``writes``, ``client_mixed``, ``usl``,
    ``machine`` (see :func:`_totals`).
    """
    opts = parse_spec(spec)
    if not isinstance(topology, Topology):
        raise InvalidTypeError(f"topology must be a loaded testbed Topology, got {topology!r}")
    study_topology(topology, 1e6, 1e6)  # checks the topology before anything runs
    from ..._files import check_output, output_dir, write_output

    out_dir = output_dir(out_dir)
    check_output(out_dir / "summary.json")
    summary: dict[str, Any] = {
        "study": "nfs",
        "machine": machine_info(),
        "three_case": [],
        "calibration": [],
        "mixed": [],
        "writes": [],
        "client_mixed": [],
        "clients": None,
        "configs": opts["configs"],
    }
    for i, cfg in enumerate(opts["configs"]):
        cl = opts["clients"]
        k = max(cl["n"]) if cl and cl["config"] == i and cl["namespaces"] else 1
        topo, client, server = study_topology(topology, cfg["link"], cfg["disk"], clients=k)
        up(topo, log=log)
        try:
            server_dir(topo, server)
            if not cfg["cases"]:  # only the mixed or N-client part here, on the configured b4
                model = three_case_model(cfg["link"], cfg["disk"], _b1_once(topo, client, opts))
                _parts(summary, i, topo, client, server, cfg, opts, model, {}, log)
                continue
            cases = _measure_cases(topo, client, server, cfg, opts, log)
            b1, b4 = max(cases[opts["b1"]]), max(cases["disk_rate"])
            model = three_case_model(cfg["link"], b4, b1)
            configured = three_case_model(cfg["link"], cfg["disk"], b1)
            summary["calibration"].append(
                {
                    "config": i,
                    "memcpy_B_s": cases["memcpy"],
                    "cachehit_B_s": cases["cachehit"],
                    "b1_method": opts["b1"],
                    "disk_read_B_s": cases["disk_rate"],
                    "disk_read_server_B_s": cases["disk_rate_server"],
                    "b1": b1,
                    "b2": model.b2,
                    "b4": b4,
                    "b4_configured": cfg["disk"],
                    "client_cache": cases.get("client_cache"),
                }
            )
            summary["three_case"] += _case_rows(
                i, cfg, model, cases, configured, int(opts["miss_parallel"])
            )
            best = {r["case"]: r["measured"] for r in summary["three_case"] if r["config"] == i}
            _parts(summary, i, topo, client, server, cfg, opts, model, best, log)
        finally:
            down(topo, log=log)
    _totals(summary)
    summary["cross_checks"] = nfs_cross_checks(summary)
    summary["calibration_flags"] = flags(summary["cross_checks"])
    summary["notes"] = flag_notes(summary["cross_checks"])
    summary["machine"]["load_average_after"] = list(os.getloadavg())
    write_output(out_dir / "summary.json", json.dumps(_clean(summary), indent=1, default=float))
    return summary


def _totals(summary: dict) -> dict:
    """The study's figures from its parts, in ``summary``: MAPEs in percent (as every study).

    ``mape_x``/``mape_r``: exact MVA against the N-client curve's mean X and R;
    ``mape_x_best``/``mape_r_best`` against the best repeat; ``inside_bounds_share`` the share
    of N-client R points whose 95 % interval meets the balanced job bounds (as every study;
    ``inside_bounds_share_x`` for X);
    ``mape_three_case`` the three cases' MAPE against seed 001; ``three_case_within_5pct``
    per case (client hit, server hit, miss of each configuration) whether it is within 5 %,
    ``..._memcpy`` with b1 = memcpy and ``..._pages`` with libnfs' per-page cost instead;
    ``mape_miss_series``/``mape_miss_streaming`` over the misses at one and at
    ``miss_parallel`` requests in flight, the series network against the streaming server.
    Relative errors of single rows (``err``) stay fractions, as ``calibration_rows``'
    ``error``.
    """
    clients = summary.get("clients")
    pts = clients["points"] if clients else []
    three = summary["three_case"]

    def within(err: str) -> list[bool] | None:  # every case within 5 %, client hits by ``err``
        if not any(err in r for r in three):
            return None
        return [abs(r.get(err, r["err"])) <= 0.05 for r in three if r["case"] in CASES]

    def m(model, measured):  # NaN without an N-client part (null in summary.json)
        return _mape([p[model] for p in pts], [p[measured] for p in pts]) if pts else math.nan

    summary.update(
        clients=clients,
        points=pts,
        usl=clients["usl"] if clients else None,
        mape_x=m("X_mva", "X_measured"),
        mape_r=m("R_mva", "R_measured"),
        # as every study: R points (with their CIs) inside the bounds; X points beside
        inside_bounds_share=summarize(pts)["inside_bounds_share"] if pts else math.nan,
        inside_bounds_share_x=float(np.mean([p["inside_bounds"] for p in pts]))
        if pts
        else math.nan,
        mape_x_best=m("X_mva", "X_best"),
        mape_r_best=m("R_mva", "R_best"),
        three_case_within_5pct=[abs(r["err"]) <= 0.05 for r in three if r["case"] in CASES],
        # the client hits with seed 001's b1 = memcpy, and with b1 from libnfs' cache cost per
        # page (components = true): only in studies that recorded them
        three_case_within_5pct_memcpy=within("err_memcpy"),
        three_case_within_5pct_pages=within("err_pages"),
        mape_three_case=_mape(
            [r["model"] for r in three if r["case"] in CASES],
            [r["measured"] for r in three if r["case"] in CASES],
        )
        if three
        else None,
        units={"mape": "percent", "err": "fraction"},
    )
    misses = [r for r in three if "err_streaming" in r]
    for how in ("series", "streaming"):
        summary[f"mape_miss_{how}"] = (
            100.0 * float(np.mean([abs(r[f"err_{how}"]) for r in misses])) if misses else None
        )
    return summary


def main(argv: list[str] | None = None) -> int:
    """``python -m qnmodel.lab.validation.nfs STUDY.toml TOPOLOGY.toml OUT_DIR`` (root)."""
    import sys
    import tomllib

    from ..testbed import load_topology

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print(main.__doc__, file=sys.stderr)
        return 2
    spec = tomllib.loads(pathlib.Path(args[0]).read_text())
    summary = run(spec, load_topology(args[1]), pathlib.Path(args[2]), log=print)
    keys = ("mape_x", "mape_r", "inside_bounds_share", "mape_three_case")
    print(json.dumps({k: summary[k] for k in keys}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
