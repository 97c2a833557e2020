"""The N-client curve of the NFS study, and the qnbench runs it shares with the case runs.

N closed-loop clients (no think time, server-cache hits) read through one shaped link; exact
MVA of :class:`~qnmodel.models.nfs.NFSSystem`'s closed network (the link a queue, a per-request
turnaround a delay, measured separately with 4 KiB READs) predicts X(N) and R(N), the balanced
job bounds bracket them, and the USL is fitted to the measured X(N).

References
----------
.. [Cao07] Cao L., Luo H., Zhang X., "Measurement and analysis of factors affecting NFS
   bandwidth in cluster", Computer Engineering, 2007, sec. 3.4 (aggregate bandwidth vs clients).
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, ch. 5-6.
.. [Gun07] N. J. Gunther, *Guerrilla Capacity Planning*, Springer, 2007 (USL).
"""

from __future__ import annotations

import numpy as np

from ..testbed import TestbedError, Topology, bench_in, bench_ranks_in, status
from ..testbed.delay import goodput_factor
from ..testbed.pagecache import prepare_files
from ..testbed.services import nfs_url
from ._common import mape, mean_ci
from ._nfs_cpu import CACHE_SIZES, fit_line, loopback_read_cost, page_cache_bandwidth

MiB = 1024**2


def _nfs_read(topo, client, server, prefix, size, **opts) -> list[dict]:
    """qnbench nfs reads of the prepared files ``prefix-job<j>.dat``; one result per point."""
    trace = bench_in(
        topo,
        client,
        "nfs",
        rw="read",
        nfs_url=nfs_url(topo, server),
        nfs_prefix=prefix,
        size=int(size),
        **opts,
    )
    return trace.results


def _client_hits(topo, client, server, size, link, bs, repeats, per_request=0.0) -> list[dict]:
    """Client-cache hits of ``bs`` requests on ``tnch-job0.dat`` (``size`` bytes), one per repeat.

    The warm-up reads the file once through the link (1.5 x its transfer time at ``link``
    bytes/s, plus ``per_request`` seconds per request, plus 0.3 s) and fills libnfs' cache;
    the timed window then hits it.
    """
    fill = 1.5 * size / (link * goodput_factor()) + per_request * size / bs + 0.3
    return _nfs_read(topo, client, server, "tnch", size, nfs_cache=1, bs=bs, rsize=bs,
                     runtime="300 ms", warmup=fill, repeat=repeats)  # fmt: skip


def client_cache_cost(topo, client, server, cfg, opts, size: int) -> dict:
    """Client-cache hits of 1- and 2-page requests: per-request and per-page cost, seconds.

    Reads the study's client-hit file (``tnch``, already prepared) with libnfs' cache on; the
    time-based warm-up fills the cache through the link. Each size's time per request is the
    best (smallest mean) over the repeats: other work on the cores only adds to it. Returns
    the times, ``per_request_s``, ``per_page_s`` and the predicted ``b1`` for ``size``-byte
    requests (the study's).
    """
    ch = int(opts["client_hit_size"])
    times: dict[int, list[float]] = {}
    for bs in CACHE_SIZES:
        # the fill reads the file in bs requests: a turnaround (~0.1 ms) per page on top
        rows = _client_hits(topo, client, server, ch, cfg["link"], bs, opts["repeats"],
                            per_request=1.5e-4)  # fmt: skip
        times[bs] = [r["latency_s"]["mean"] for r in rows]
    t1, t2 = (min(times[s]) for s in CACHE_SIZES)
    a, c = fit_line(1, t1, 2, t2)
    a, c = max(a, 0.0), max(c, 0.0)
    return {
        "sizes": list(CACHE_SIZES),
        "time_s": {str(s): v for s, v in times.items()},
        "per_request_s": a,
        "per_page_s": c,
        "size": int(size),
        "b1": page_cache_bandwidth(size, a, c),
    }


def _bw(r: dict) -> float:
    """Bandwidth of one closed-loop client: bs / mean response time (Little, no edge effect)."""
    return r["bs_bytes"] / r["latency_s"]["mean"]


def _check_alive(topo: Topology, server: str, where: str) -> None:
    doc = status(topo)
    if not doc["up"]:
        info = doc["nodes"].get(server, {})
        raise TestbedError(
            f"the NFS server {server!r} of testbed {topo.name!r} is not running any more "
            f"({where}; running={info.get('running')}): the study stops; the testbed is "
            "brought down"
        )


def _slowest(cfg: dict) -> float:
    return min(cfg["link"] * goodput_factor(), cfg["disk"])


def _little(r: dict) -> float:
    """Aggregate bandwidth of ``jobs`` closed-loop clients by Little's law: N bs / mean R."""
    return r["jobs"] * r["bs_bytes"] / r["latency_s"]["mean"]


def _err(model: float, measured: float) -> float:
    return (model - measured) / measured


def _ranks_read(topo, clients, server, prefix, size, **opts) -> list[dict]:
    """One qnbench nfs job per client namespace (one MPI rank each); one row per repeat.

    Each row holds the aggregate bytes/s over the ranks (``throughput_B_s``, bytes of every
    rank / the longest rank's window), the mean response time over all requests
    (``latency_mean_s`` = sum of the ranks' windows / sum of their requests: each rank has
    one request in flight all the time, so its window is its requests' summed response time,
    Little's law per rank), and rank 0's own latency tail.
    """
    trace = bench_ranks_in(
        topo,
        clients,
        "nfs",
        rw="read",
        nfs_url=nfs_url(topo, server),
        nfs_prefix=prefix,
        size=int(size),
        jobs=1,
        **opts,
    )
    if "mpi" not in trace.document:  # one rank: qnbench writes no aggregate
        return [
            {**r, "jobs": 1, "latency_s": {**r["latency_s"], "mean": r["elapsed_s"] / r["ops"]}}
            for r in trace.results
        ]
    agg = trace.document["mpi"]["aggregate"]
    rows = []
    for a, own in zip(agg, trace.results, strict=True):
        ops = sum(r["ops"] for r in a["per_rank"])
        busy = sum(r["elapsed_s"] for r in a["per_rank"])
        rows.append(
            {
                "jobs": len(clients),
                "bs_bytes": own["bs_bytes"],
                "throughput_B_s": a["throughput_B_s"],
                "complete": a["complete"],
                "latency_s": {
                    "mean": busy / ops if ops else float("nan"),
                    "p50": own["latency_s"]["p50"],
                    "p99": own["latency_s"]["p99"],
                    "max": own["latency_s"]["max"],
                },
                "per_rank_B_s": [r["throughput_B_s"] for r in a["per_rank"]],
            }
        )
    return rows


def _clients(topo, client, server, cfg, opts, ns, model, log, names=None) -> dict:
    """N = 1..max closed-loop clients (server hits) vs exact MVA, bounds and a USL fit.

    ``names``: the client nodes, one namespace (and MPI rank) per client -- N clients then
    cross N shaped client links and the server's link, as in a cluster; None runs the N
    clients as N jobs of one qnbench in ``client`` (one client link shared by all).
    """
    from ...calibration.usl import fit_usl
    from ...models.nfs import NFSSystem
    from ...models.nfs_network import aggregate_bandwidth
    from ...solvers import mva

    bs = int(opts["clients"]["bs"])
    size = max(4 * bs, 4 * MiB)
    prepare_files(topo, server, "tnn", 1 if names else max(ns), size)
    # the per-request turnaround, from a separate small-request run (4 KiB READs)
    small = _nfs_read(
        topo,
        client,
        server,
        "tnn",
        size,
        nfs_cache=0,
        bs=4096,
        rsize=4096,
        runtime="1 s",
        warmup="200 ms",
        repeat=opts["repeats"],
    )
    r_small = min(r["latency_s"]["mean"] for r in small)
    per_byte, loopback = 0.0, None
    if opts.get("components"):
        # the READ's CPU per byte, bottom-up: loopback READs at 4 KiB and 1 MiB (_nfs_cpu)

        loopback = loopback_read_cost(topo, server, opts, size)
        per_byte = loopback["per_byte_s"]
    # the 4 KiB READ's turnaround without its transfer and its per-byte CPU
    turnaround = max(r_small - 4096 / model.b2 - 4096 * per_byte, 0.0)
    run_opts = dict(
        nfs_cache=0,
        bs=bs,
        rsize=bs,
        runtime=opts["clients"]["runtime"],
        warmup=opts["warmup"],
        repeat=opts["repeats"],
    )
    if names:
        # every rank reads job 0's file (one prepared file, in the server's cache)
        rows = []
        for n in ns:
            rows += _ranks_read(topo, names[:n], server, "tnn", size, **run_opts)
            _check_alive(topo, server, f"after the runs of {n} client namespaces")
    else:
        rows = _nfs_read(topo, client, server, "tnn", size, jobs=list(ns), **run_opts)
    _check_alive(topo, server, "after the N-client runs")
    # one client's link is pipelined with the server's (a frame crosses both at once), so it
    # adds no station: the closed network is the server's link (queue) + the turnaround (delay)
    system = NFSSystem(
        model, rsize=bs, client_cpu_per_request=turnaround, read_cpu_per_byte=per_byte
    )
    paper = NFSSystem(model, rsize=bs)
    # the model before the per-byte term (a constant turnaround), for comparison
    flat = NFSSystem(model, rsize=bs, client_cpu_per_request=max(r_small - 4096 / model.b2, 0.0))
    agg = aggregate_bandwidth(system, max(ns), bs, client_hit=0.0, server_hit=1.0)
    res = mva(system.network(bs, "read", 0.0, 1.0), max(ns))
    res0 = mva(paper.network(bs, "read", 0.0, 1.0), max(ns))
    res_flat = mva(flat.network(bs, "read", 0.0, 1.0), max(ns))
    points = [_point(n, [r for r in rows if r["jobs"] == n], bs, res, res0, agg) for n in ns]
    for p in points:
        p["X_mva_flat"] = float(res_flat.throughput[p["N"] - 1]) * bs
        p["err_X_flat"] = _err(p["X_mva_flat"], p["X_measured"])
    usl = None
    if len(ns) >= 6:
        fit = fit_usl([p["N"] for p in points], [p["X_measured"] for p in points])
        v = fit.values
        from ...models.usl import usl_throughput

        pred = usl_throughput(np.array(ns), v["lam"], v["sigma"], v["kappa"])
        for p, xu in zip(points, pred, strict=True):
            p["X_usl"] = float(xu)
        usl = {
            "lam": float(v["lam"]),
            "sigma": float(v["sigma"]),
            "kappa": float(v["kappa"]),
            "mape_x": mape([p["X_usl"] for p in points], [p["X_measured"] for p in points]),
        }
    if log:
        log(
            "N clients: " + ", ".join(f"{p['N']}: {p['X_measured'] / 1e6:.2f} MB/s" for p in points)
        )
    return {
        "turnaround_s": turnaround,
        "read_cpu_per_byte_s": per_byte,
        "loopback": loopback,
        "small_request_s": r_small,
        "points": points,
        "usl": usl,
        "config": opts["clients"]["config"],
        "namespaces": bool(names),
        "link_B_s": cfg["link"],
    }


def _point(n, reps, bs, res, res0, agg) -> dict:
    """One N of the curve: measured (mean, best, CI, tails) vs MVA and the bounds.

    Besides its own keys (bytes/s, upper-case ``X``/``R``) the point carries the keys every
    study's points share (``_common.POINT_KEYS``: requests/s and seconds), for the report.
    """
    # bytes completed in the window / window: unbiased (a request in flight at the start
    # counts, one at the end does not); Little's N bs / mean R is biased high when some
    # flows stall past the window's end (their requests are missing from the mean)
    x = np.array([r["throughput_B_s"] for r in reps])
    x_little = float(np.mean([_little(r) for r in reps]))
    rt = np.array([r["latency_s"]["mean"] for r in reps])
    half = mean_ci(x)[1]
    r_half = mean_ci(rt)[1]
    lo, hi = float(agg.bandwidth_lower[n - 1]), float(agg.bandwidth_upper[n - 1])
    xm, rm = float(x.mean()), float(rt.mean())
    x_mva, r_mva = float(res.throughput[n - 1]) * bs, float(res.response_time[n - 1])
    return {
        "N": n,
        "X_measured": xm,
        "X_little": x_little,
        # the link caps every repeat, CPU contention from other work only lowers one
        "X_best": float(x.max()),
        "R_best": float(rt.min()),
        "X_ci_half": float(half),
        "R_measured": rm,
        "R_p50": float(np.median([r["latency_s"]["p50"] for r in reps])),
        "R_p99": float(max(r["latency_s"]["p99"] for r in reps)),
        "R_max": float(max(r["latency_s"]["max"] for r in reps)),
        "X_mva": x_mva,
        "R_mva": r_mva,
        "err_X": _err(x_mva, xm),
        "err_R": _err(r_mva, rm),
        "X_mva_three_case": float(res0.throughput[n - 1]) * bs,
        "X_lower": lo,
        "X_upper": hi,
        "inside_bounds": bool(xm + half >= lo * (1 - 1e-9) and xm - half <= hi * (1 + 1e-9)),
        "repeats": len(x),
        # the shared keys: requests/s, seconds; R bounds = N / X bounds (no think time)
        "n": n,
        "x_measured": xm / bs,
        "x_ci": float(half) / bs,
        "x_model": x_mva / bs,
        "x_lower": lo / bs,
        "x_upper": hi / bs,
        "r_measured": rm,
        "r_ci": float(r_half),
        "r_model": r_mva,
        "r_lower": n * bs / hi,
        "r_upper": n * bs / lo,
        "case": "N clients",
    }
