"""NFS writes and mixed client-hit ratios of the NFS study (seed 001's write path and mixing rule).

**Writes.** One client writes a file of S bytes in 1 MiB WRITEs and closes it; the clock runs
through the COMMIT and the close (close-to-open consistency makes the data durable only then,
[Cao07] sec. 2). Seed 001's write path crosses the client's memory, the network and the
server's disk; pipelined within the stream, a timed write would run at its slowest stage,
min(b1, b2, b3, b4w) (``model_paper``: :meth:`~qnmodel.models.nfs.NFSSystem.write_bandwidth`
with ``form="paper"``), b4w the server disk's *write* rate. The model's default form
(``model``: ``form="corrected"``) has the transfer and then the commit, 1/(1/B_t + 1/b4w) with
B_t = min(b1, b2, b3): the server's page cache takes the WRITEs at the link rate and its disk
writes them at the COMMIT. The closed network at N = 1 (:func:`write_series`, ``model_series``)
puts every stage in series, the memory copies too. b4w is measured bottom-up: ``dd`` of a file
of the same size with ``conv=fsync`` inside ganesha's namespace and blkio cgroup
(:func:`~qnmodel.lab.validation.bottomup.disk_rate` with ``method="dd"``).

**Mixed client hits.** libnfs' page cache holds the whole file; a time-based warm-up reads its
head (h_c S bytes at the measured server-hit rate), then one timed pass of S bytes reads the
rest from the server (server-cache hits) and wraps around to the head, now in the client's
cache: a share h_c of the bytes are client hits. Against seed 001's expected bandwidth
1/B = h_c/b1 + (1 - h_c)/b2 (:meth:`~qnmodel.models.nfs.NFSBandwidth.bandwidth` with h_s = 1
for the rest), with the calibrated b1 (memcpy) and b2 (link goodput), and with the measured
pure cases (tests the mixing rule alone).

References
----------
.. [Cao07] Cao L., Luo H., Zhang X., "Measurement and analysis of factors affecting NFS
   bandwidth in cluster", Computer Engineering, 2007, sec. 1 (expected bandwidth), sec. 2
   (writes timed through close).
"""

from __future__ import annotations

from ...models.nfs import NFSSystem
from ...models.nfs_network import aggregate_bandwidth
from ..testbed import bench_in
from ..testbed.delay import goodput_factor
from ..testbed.pagecache import prepare_files, server_dir
from ..testbed.services import nfs_url
from ._nfs_runs import _bw, _check_alive, _err, _nfs_read, _slowest
from .bottomup import disk_rate

MiB = 1024**2


def writes(topo, client, server, cfg, opts, memcpy, log=None) -> dict:
    """Timed writes (through COMMIT + close) of one configuration against the write model.

    ``model``/``err``: :class:`~qnmodel.models.nfs.NFSSystem`'s default (corrected) form,
    ``model_paper``/``err_paper``: seed 001's min(b1, b2, b3, b4w), ``model_series``: the
    closed network at N = 1; ``*_configured``: the same with the configured disk rate.
    """
    from ...models.nfs import NFSBandwidth, NFSSystem

    rep, bs = opts["repeats"], int(opts["bs"])
    size = int(min(max(_slowest(cfg) * opts["miss_seconds"], 8 * MiB), 512 * MiB) // MiB) * MiB
    cal = server_dir(topo, server) / "tnwcal.dat"
    b4w = disk_rate(topo, server, op="write", method="dd", files=[cal], size=size,
                    repeat=rep)["repeats"]  # fmt: skip
    trace = bench_in(
        topo,
        client,
        "nfs",
        rw="write",
        nfs_url=nfs_url(topo, server),
        size=size,
        io_size=size,
        bs=bs,
        wsize=bs,
        nfs_cache=0,
        warmup=0,
        runtime=3 * size / _slowest(cfg) + 10,
        repeat=rep,
    )
    _check_alive(topo, server, "after the write runs")
    rows = trace.results
    measured = [r["throughput_B_s"] for r in rows]
    b2 = cfg["link"] * goodput_factor()
    model = NFSSystem(NFSBandwidth(b1=memcpy, b2=b2, b3=memcpy, b4=max(b4w)), wsize=bs)
    configured = NFSSystem(NFSBandwidth(b1=memcpy, b2=b2, b3=memcpy, b4=cfg["disk"]), wsize=bs)
    paper = NFSSystem(model.bandwidths, wsize=bs, form="paper")
    paper_conf = NFSSystem(configured.bandwidths, wsize=bs, form="paper")
    pred, conf, best = model.write_bandwidth(), configured.write_bandwidth(), max(measured)
    pred_paper, conf_paper = paper.write_bandwidth(), paper_conf.write_bandwidth()
    series = write_series(model, size)
    if log:
        log(f"{cfg['label']}: write {best / 1e6:.2f} MB/s, model {pred / 1e6:.2f} MB/s "
            f"(paper's min {pred_paper / 1e6:.2f} MB/s)")  # fmt: skip
    return {
        "label": cfg["label"],
        "link_B_s": cfg["link"],
        "disk_B_s": cfg["disk"],
        "size_bytes": size,
        "bs_bytes": bs,
        "b4_write": b4w,
        "measured": best,
        "repeats": measured,
        "commit_close_s": [r["engine_stats"]["commit_close_s"] for r in rows],
        "model": pred,
        "err": _err(pred, best),
        "model_form": model.form,
        "model_paper": pred_paper,
        "err_paper": _err(pred_paper, best),
        "model_configured": conf,
        "err_configured": _err(conf, best),
        "model_configured_paper": conf_paper,
        "err_configured_paper": _err(conf_paper, best),
        "b1": memcpy,
        "model_series": series,
        "err_series": _err(series, best),
        "bottleneck": "network" if b2 <= max(b4w) else "server_disk",
    }


def write_series(system, size: float) -> float:
    """Bandwidth of one client writing ``size`` bytes: the closed network at N = 1, bytes/s.

    Exact MVA of :meth:`~qnmodel.models.nfs.NFSSystem.network` (one job = the whole file,
    op ``"write"``) with one client: R(1) is the sum of the stations' demands, so the file
    crosses the client, the network and the server's disk one after the other --
    1/(1/b1 + 1/b2 + 1/b3 + 1/b4w) per byte with zero protocol costs. This is what the testbed
    shows: the server's page cache takes the WRITEs at the link rate and its disk writes them
    only at the COMMIT on close.
    """
    from ...solvers import mva

    res = mva(system.network(size, "write"), 1)
    return float(res.throughput[0]) * size


def miss_bandwidth(model, clients: int, structure: str) -> float:
    """Aggregate bytes/s of ``clients`` clients, each reading its own evicted file (a miss).

    ``model`` is the study's :class:`~qnmodel.models.nfs.NFSBandwidth` (b1..b4);
    ``structure`` ``"series"`` (disk, then link) or ``"streaming"`` (the server's read-ahead
    overlaps the network): :func:`qnmodel.models.nfs_network.aggregate_bandwidth` at N =
    ``clients`` over 64 MiB files (the study's files are long: a file's first request is
    negligible).
    """
    agg = aggregate_bandwidth(
        NFSSystem(model, rsize=MiB), clients, 64 * MiB, "read", 0.0, 0.0, structure=structure
    )
    return float(agg.bandwidth[clients - 1])


def client_mixed(topo, client, server, cfg, opts, hits, model, log=None) -> list[dict]:
    """Mixed client-hit ratios h_c (the rest server hits) against seed 001's formula."""
    rep = opts["repeats"]
    bs = 64 * 1024
    size = int(max(2.0 * cfg["link"] * goodput_factor(), 16 * MiB) // MiB) * MiB
    prepare_files(topo, server, "tncm", 1, size)
    common = dict(bs=bs, rsize=bs, repeat=rep)
    # the pure cases at this request size: server hit (no client cache) and client hit (the
    # whole file read in the warm-up)
    sh = _nfs_read(topo, client, server, "tncm", size, nfs_cache=0, runtime=1.0,
                   warmup=0.2, **common)  # fmt: skip
    b2_meas = max(_bw(r) for r in sh)
    ch = _nfs_read(topo, client, server, "tncm", size, nfs_cache=1, runtime=0.3,
                   warmup=1.5 * size / b2_meas + 0.3, **common)  # fmt: skip
    b1_meas = max(_bw(r) for r in ch)
    rows = []
    for h in hits:
        warm = h * size / b2_meas
        runs = _nfs_read(topo, client, server, "tncm", size, nfs_cache=1, warmup=warm,
                         io_size=size, runtime=3 * size / b2_meas + 10, **common)  # fmt: skip
        best = max(r["throughput_B_s"] for r in runs)
        expected = float(model.bandwidth(float(h), 1.0))
        from_measured = 1.0 / (h / b1_meas + (1 - h) / b2_meas)
        rows.append(
            {
                "client_hit": float(h),
                "measured": best,
                "repeats": [r["throughput_B_s"] for r in runs],
                "model": expected,
                "err": _err(expected, best),
                "from_measured_cases": from_measured,
                "err_from_measured_cases": _err(from_measured, best),
                "server_hit_B_s": b2_meas,
                "client_hit_B_s": b1_meas,
                "bs_bytes": bs,
                "size_bytes": size,
            }
        )
    _check_alive(topo, server, "after the client-hit mixtures")
    if log:
        log("client-hit mixtures: " + ", ".join(
            f"{r['client_hit']:g}: {r['measured'] / 1e6:.2f} MB/s" for r in rows))  # fmt: skip
    return rows
