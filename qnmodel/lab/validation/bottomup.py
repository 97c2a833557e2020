"""Bottom-up calibration on a running testbed: each demand from its own component benchmark.

Never fitted to the end-to-end curve that the model is then compared with:

* a link's rate: one TCP stream (qnbench ``tcp`` client) between two nodes through their
  shaped links, requests of one segment and of a quarter second or more; the goodput is the
  slope of the line through their mean times (its intercept, the request's trip and the
  server's turnaround, is no link time), the best of 5 repeats; the wire rate is the goodput
  divided by the TCP payload share of a frame, 1448 / 1514 at MTU 1500
  (:data:`qnmodel.lab.testbed.GOODPUT_FACTOR`);
* a server's disk rate (:func:`disk_rate`, the one home of it for every study): qnbench
  ``file`` in the server's namespace (direct I/O inside the blkio group of a throttled disk;
  buffered on tmpfs or a directory), or qnbench ``mem`` copy bandwidth for a ``memory`` disk
  (the block server replies from a memory buffer) -- the networked-RAID study; or, for an
  NFS server, ``dd``/``pread`` of evicted files and ``dd conv=fsync`` inside the server's
  namespace and blkio group, the disk as the NFS server's page cache uses it -- the NFS study;
* the service time of an ``emu`` disk (qnbench's emulated device inside the block server,
  :func:`disk_service`): the server's own block server driven to saturation over loopback in
  its namespace (no link in the path), S = m / X by the utilisation law at U = 1 per server;
* the master's CPU time per stripe unit: the same striped request with loopback members
  (qnbench ``stripe --member tcp --tcp-role self``, in the master's namespace, no link in
  the path): the time of one request at N = 1 divided by the stripe units it moves. It
  holds the master's and the member servers' protocol and copy work on this machine's
  shared cores, and not the shaper's own cost.

References
----------
.. [Cui06] Cui B., Liu J., Wang G., Liu J., "Study on I/O response time bounds of network
   storage systems", Journal on Communications 27(1):69-74, 2006: the demands of eqs. 2-10
   are built from such per-component times (T_mpro, T_mp, TRate_e, TRate_d).
"""

from __future__ import annotations

import statistics
from typing import Any

from ..._validate import as_choice, as_quantity
from ...models.storage_corrected import moved_bytes
from ..testbed import GOODPUT_FACTOR, Topology, bench_in
from ..testbed.system import TestbedError

__all__ = ["link_rate", "disk_rate", "disk_service", "master_cpu_per_unit"]


def _best(trace, key: str) -> list[float]:
    return [float(r[key]) for r in trace.results]


def link_rate(topo: Topology, client: str, server: str, *, op: str = "read",
              runtime: Any = "200 ms", repeat: int = 5, method: str = "line",
              realtime: bool = True, alone: bool = True) -> dict:  # fmt: skip
    """The wire rate between ``client`` and a ``server``, bytes/s, measured alone.

    ``op="read"`` moves bytes server -> client, ``"write"`` client -> server.

    ``alone`` (default True): the link is measured without the server's device. A server whose
    disk is not ``memory`` (an ``emu``, file or throttled disk, or any NFS server) answers
    through its device, and a sweep against it measures the device too: on a testbed of three
    emulated-disk servers (one 64 KiB chunk about as long on the disk as on the link) the six
    link directions read 10-28 % below the configured rate while the study's striped reads
    moved 0.95 x the rate through them (issue 28). So the sweep targets a memory-served probe
    in the server's namespace (:func:`qnmodel.lab.testbed.services.link_probe`), through the
    same shaped link; a ``tcp`` server with a ``memory`` disk is its own probe. ``alone=False``
    sweeps the server's own block server whatever its disk (the estimator before 2026-11-27).
    The result's ``path`` says which was measured.

    ``method="line"`` (default): one TCP stream with SCHED_FIFO clients, requests of one
    segment (1448 B) and of B bytes, where B is the power of two of at least 256 KiB that
    takes 250 ms or more at the configured rate (4 MiB at 100 Mbit/s, 32 MiB at 1 Gbit/s; at
    most 64 MiB, which an unshaped link gets).
    Each repeat times both sizes (B for ``runtime`` or 4 requests, whichever is longer) and
    takes goodput = (B - 1448) / (t_B - t_1448): the line through the two mean request times,
    whose intercept -- the request's trip and the server's turnaround -- is no link time.
    One stream keeps TCP's flows from sharing the tail-drop queue unfairly; a request of a
    quarter second makes the sender's idle gap between requests negligible. Measured over
    the four 100 Mbit/s links of ``examples/testbed/raid_100mbit.toml``, both directions, at
    load average about 1: medians -0.00 ... +0.13 % of the configured rate, repeats
    -0.47 ... +0.30 %; the two-stream estimator below, at load 1.3-2.0: -3.86 ... +0.20 %,
    repeats -6.11 ... +1.98 %.

    The rate is the best of the repeats (the median is returned as ``median``): a
    disturbance only slows a shaped link. ``realtime`` runs the client with SCHED_FIFO.

    ``method="streams"``: the estimator of the studies recorded before 2026-11-24: two streams
    of 256 KiB requests, goodput = 2 x 256 KiB / mean response time (Little's law), median of
    the repeats.

    Returns ``rate`` (goodput / GOODPUT_FACTOR), ``goodput``, the repeats' goodputs
    (``repeats``), ``configured``, ``op``, ``method``; ``line``: also ``sizes`` (bytes),
    ``times`` (per repeat, the mean request time at each size, s) and ``latency`` (median
    intercept, s).
    """
    node = topo.node(server)
    if method not in ("line", "streams"):
        raise TestbedError(f"link_rate method must be 'line' or 'streams', got {method!r}")
    if alone and not (node.service == "tcp" and node.disk.kind == "memory"):
        from ..testbed.services import link_probe

        with link_probe(topo, server) as port:
            out = _link_rate(topo, client, server, port, op, runtime, repeat, method, realtime)
        return {**out, "path": f"memory probe in {server} (port {port}), no device"}
    if node.service != "tcp":
        raise TestbedError(
            f"link calibration with alone=False needs a tcp server, {server!r} runs "
            f"{node.service}: use alone=True (a memory probe in its namespace)"
        )
    out = _link_rate(topo, client, server, node.port, op, runtime, repeat, method, realtime)
    kind = "no device" if node.disk.kind == "memory" else "through its device"
    return {**out, "path": f"{server}'s block server ({node.disk.kind} disk, {kind})"}


def _link_rate(topo: Topology, client: str, server: str, port: int, op: str, runtime: Any,
               repeat: int, method: str, realtime: bool) -> dict:  # fmt: skip
    """:func:`link_rate` against the tcp server listening at ``server``'s ``port``."""
    node = topo.node(server)
    kw = dict(tcp_role="client", host=topo.address(server), port=port, rw=op)
    if method == "streams":
        bs, jobs = 262144, 2
        trace = bench_in(topo, client, "tcp", bs=bs, jobs=jobs, runtime=runtime,
                         warmup="200 ms", repeat=repeat, **kw)  # fmt: skip
        # Little's law, jobs x bs / mean response time: free of the +-1 request edge effect of
        # counting completions in a short window. The median of 5 repeats: on a busy 2-core
        # machine a repeat reads low when the link idles behind a descheduled client (22 %
        # low seen) and high when a client is descheduled between requests and fewer than
        # ``jobs`` are in flight (6 % high seen).
        good = [jobs * bs / float(r["latency_s"]["mean"]) for r in trace.results]
        best = statistics.median(good)
        return {"rate": best / GOODPUT_FACTOR, "goodput": best, "repeats": good,
                "configured": node.link.rate, "op": op, "method": method}  # fmt: skip

    floor = as_quantity(runtime, "runtime", "time", positive=True)
    # the request sizes and windows follow the configured rate, at most 64 MiB; an unshaped
    # link (veth speed) is sized as if it ran at 10 Gbit/s
    nominal = (node.link.rate or 1.25e9) * GOODPUT_FACTOR
    big = 262144
    while big / nominal < 0.25 and big < 1 << 26:
        big *= 2
    sizes = [1448, big]
    good, lat, times = [], [], []
    for _ in range(int(repeat)):
        t = []
        for size in sizes:
            window = max(floor, 4.0 * size / nominal)
            trace = bench_in(topo, client, "tcp", bs=size, jobs=1, runtime=window,
                             warmup="200 ms", repeat=1, realtime=realtime, **kw)  # fmt: skip
            t.append(float(trace.results[0]["latency_s"]["mean"]))
        good.append((sizes[1] - sizes[0]) / (t[1] - t[0]) if t[1] > t[0] else float("nan"))
        lat.append(t[0] - sizes[0] / good[-1] if good[-1] == good[-1] else float("nan"))
        times.append(t)
    # the best repeat: disturbances only slow a shaped link down (a late shaper timer drops
    # the tokens its bucket cannot hold; a descheduled sender idles the link), and the line
    # removes the one thing that could speed a repeat up (the bucket passed after the idle
    # gap before each request). At 1 Gbit/s on an idle machine whole rounds of repeats read
    # 1-15 % low while the next round read within 0.15 %.
    ok = [g for g in good if g == g]
    best = max(ok) if ok else float("nan")
    return {"rate": best / GOODPUT_FACTOR, "goodput": best, "repeats": good,
            "median": statistics.median(ok) if ok else float("nan"),
            "configured": node.link.rate, "op": op, "method": method, "sizes": sizes,
            "times": times, "latency": statistics.median(lat)}  # fmt: skip


DISK_METHODS = ("auto", "file", "mem", "emu", "dd", "pread")


def disk_rate(topo: Topology, server: str, *, op: str = "read", method: str = "auto",
              runtime: Any = "1 s", repeat: int = 3, bs: Any = "1 MiB", state_dir: Any = None,
              files: Any = None, size: Any = None, share: float = 1.0) -> dict:  # fmt: skip
    """A server's disk rate in bytes/s, measured in its own namespace (median of repeats).

    The one home of a server's disk rate: the networked-RAID study
    (:mod:`qnmodel.lab.validation.raid`) and the NFS study (:mod:`qnmodel.lab.validation.nfs`) both
    measure it here, each with its own ``method``.

    Parameters
    ----------
    topo, server : Topology, str
        The running testbed and the server whose disk is measured.
    op : {"read", "write"}
        The disk's read or write rate.
    method : {"auto", "file", "mem", "emu", "dd", "pread"}
        How (see Notes). ``"auto"`` (default): by the disk's kind, ``"emu"`` for an ``emu``
        disk, ``"mem"`` for a ``memory`` disk, ``"file"`` otherwise.
    runtime, bs, state_dir
        ``"file"``/``"mem"``: each repeat's window, the request size, the testbed's state
        directory. ``"emu"``: ``bs`` is the request size (:func:`disk_service`'s own
        window and repeats). ``"pread"``: ``bs`` is the size
        of each ``pread``, the NFS study's READ size.
    repeat : int
        Repeats (>= 1), one measurement each (not ``"emu"``).
    files : list of paths, optional
        ``"dd"``/``"pread"``: files on the server's disk. Reads: evicted from the page cache,
        then all read at once (one ``dd`` or one ``pread`` thread each). Writes
        (``"dd"`` only): exactly one path, written and removed.
    size : int, optional
        ``"dd"`` writes: bytes to write (an integer >= 1 MiB, in 1 MiB blocks).
    share : float
        ``"pread"``: each repeat is timed until this share of all the files' bytes has
        arrived, in (0, 1].

    Returns
    -------
    dict
        ``rate`` (the median of the repeats; a blkio throttle lets a repeat that follows an
        idle gap run ahead: one of three read 22.0 MB/s through a 20 MB/s throttle, the others
        19.92), ``repeats``, ``engine``, ``method``, ``configured`` (the throttle's rate, or
        None when the topology gives none) and ``op``; ``"emu"`` adds ``service``.

    Notes
    -----
    The two studies need different methods because their servers use the disk differently,
    and each measures it the way its server does:

    * ``"file"`` (RAID study): qnbench ``file``, one job, ``bs`` requests on a 64 MiB file,
      direct I/O inside the blkio group of a throttled disk (buffered on tmpfs or a plain
      directory): the device rate the throttle grants, TRate_d of [Cui06], with no page cache
      in the way. ``"mem"``: qnbench ``mem`` copy of 16 MiB, for a ``memory`` disk (the block
      server replies from a memory buffer). ``"emu"``: ``bs`` / the service time that
      :func:`disk_service` measures for qnbench's emulated device.
    * ``"dd"`` and ``"pread"`` (NFS study): nfs-ganesha reads and writes through the host's
      page cache, so seed 001's b4 is the disk *behind that cache*: reads of files evicted
      (``fsync`` + ``POSIX_FADV_DONTNEED``) and read buffered with the kernel's read-ahead,
      writes into the page cache flushed by ``fsync`` (as a COMMIT flushes them). ``"dd"``
      runs one ``dd`` per file (1 MiB blocks), or for writes ``dd conv=fsync``, inside the
      server's namespace and blkio group; ``"pread"`` runs one thread per file issuing ``bs``
      ``pread`` calls one after the other, the way ganesha's workers serve clients with one
      READ in flight each (:mod:`qnmodel.lab.testbed.pagecache` holds the mechanics). Direct I/O
      would skip the read-ahead and the flush the NFS server's requests get.
    """
    from ..testbed import pagecache
    from ..testbed.services import disk_dir
    from ..testbed.state import State

    as_choice(op, "op", ("read", "write"))
    as_choice(method, "method", DISK_METHODS)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise TestbedError(f"repeat must be an integer >= 1, got {repeat!r}")
    node = topo.node(server)
    d = node.disk
    if method == "auto":
        method = {"emu": "emu", "memory": "mem"}.get(d.kind, "file")
    throttled = d.kind == "throttled"
    configured = (d.read_rate if op == "read" else d.write_rate) if throttled else None
    if method in ("dd", "pread"):
        if files is None or isinstance(files, str | bytes) or not list(files):
            raise TestbedError(f"disk_rate(method={method!r}) needs files=[...] on the disk")
        files = list(files)
        if method == "pread":
            if op != "read":
                raise TestbedError("disk_rate(method='pread') measures reads; give op='read'")
            request = int(as_quantity(bs, "bs", "size", positive=True))
            rates = [pagecache._read_rate(topo, server, files, request=request, share=share)
                     for _ in range(repeat)]  # fmt: skip
            engine = f"pread threads, {request} B (evicted files, blkio group)"
        elif op == "read":
            rates = [pagecache._read_rate(topo, server, files) for _ in range(repeat)]
            engine = "dd (evicted files, blkio group)"
        else:
            if len(files) != 1:
                raise TestbedError(
                    f"disk_rate(method='dd', op='write') writes one file, got files={files}"
                )
            rates = [pagecache._write_rate(topo, server, files[0], size) for _ in range(repeat)]
            engine = "dd conv=fsync (blkio group)"
        return {"rate": statistics.median(rates), "repeats": rates, "engine": engine,
                "method": method, "configured": configured, "op": op}  # fmt: skip
    if method == "emu":  # the rate of requests of bs bytes: bs / their calibrated service time
        svc = disk_service(topo, server, bs=bs, op=op)  # its own runtime and 3 repeats
        size = float(svc["bs"])
        return {"rate": size / svc["service"], "repeats": [size / t for t in svc["repeats"]],
                "engine": svc["engine"], "method": method,
                "configured": size / svc["configured"], "op": op, "service": svc}  # fmt: skip
    if method == "mem":
        trace = bench_in(topo, server, "mem", mem_op="copy", size="16 MiB", runtime=runtime,
                         repeat=repeat)  # fmt: skip
        engine, configured = "mem copy", None
    else:
        path = disk_dir(topo, node, State(topo.name, state_dir).dir)
        rw = "read" if op == "read" else "write"
        trace = bench_in(topo, server, "file", dir=str(path), rw=rw, bs=bs, size="64 MiB",
                         jobs=1, runtime=runtime, warmup="200 ms", repeat=repeat,
                         access="direct" if throttled else "sync",
                         throttled=throttled)  # fmt: skip
        engine = "file direct (blkio group)" if throttled else "file sync"
    rates = _best(trace, "throughput_B_s")
    # the median, not the best: a blkio throttle lets a repeat that follows an idle gap run
    # ahead (one of three read 22.0 MB/s through a 20 MB/s throttle, the others 19.92)
    return {"rate": statistics.median(rates), "repeats": rates, "engine": engine,
            "method": method, "configured": configured, "op": op}  # fmt: skip


def disk_service(
    topo: Topology,
    server: str,
    *,
    bs: Any = "64 KiB",
    op: str = "read",
    runtime: Any = "2 s",
    repeat: int = 3,
    jobs: int | None = None,
) -> dict:
    """Mean service time (s) of an ``emu`` disk for requests of ``bs`` bytes, measured.

    qnbench ``tcp`` clients in the server's own namespace keep its block server's emulated
    device busy through loopback (no shaped link in the path): ``jobs`` clients (default 4 m + 4
    for a device of m servers, with SCHED_FIFO) so its queue never empties, and by the
    utilisation law at U = 1 per server, S = m / X ([LZGS84] eq. 3.1). The network time of each
    request overlaps other requests' service, so it does not enter. Each repeat counts n = X x
    ``runtime`` completions; with exponential service its estimate has a relative standard
    deviation of 1 / sqrt(n) (constant service: the window edges only), and the estimate is the
    mean over repeats (n summed). Returns ``service``, ``configured``
    (:meth:`~qnmodel.lab.testbed.Disk.service_time`), ``error`` (relative), ``repeats``,
    ``completions``, ``rel_sd`` (1 / sqrt(completions) for exponential service, else 0), ``bs``,
    ``engine``.

    References
    ----------
    .. [LZGS84] Lazowska E. D. et al., "Quantitative System Performance", Prentice-Hall,
       1984, eq. 3.1 (utilisation law).
    """
    node = topo.node(server)
    d = node.disk
    if d.kind != "emu" or node.service != "tcp":
        raise TestbedError(
            f"disk_service calibrates an emu disk behind a tcp server; {server!r} has a "
            f"{d.kind} disk and runs {node.service}"
        )
    size = int(as_quantity(bs, "bs", "size", positive=True))
    jobs = 4 * d.servers + 4 if jobs is None else int(jobs)
    # real-time clients (the testbed runs as root): on a loaded machine a descheduled set of
    # clients lets the device idle, and every idle moment reads as a longer service (one
    # repeat read +17.6 % at load average 14 without them)
    trace = bench_in(topo, server, "tcp", tcp_role="client", host="127.0.0.1", port=node.port,
                     rw=op, bs=size, jobs=jobs, runtime=runtime, warmup="200 ms",
                     repeat=repeat, realtime=True)  # fmt: skip
    xs = [float(r["throughput_ops_s"]) for r in trace.results]
    ops = sum(int(r["ops"]) for r in trace.results)
    elapsed = sum(float(r["elapsed_s"]) for r in trace.results)
    service = d.servers * elapsed / ops if ops else float("inf")
    configured = d.service_time(size)
    return {"service": service, "configured": configured, "error": service / configured - 1.0,
            "repeats": [d.servers / x for x in xs], "completions": ops,
            "rel_sd": 1.0 / ops**0.5 if d.dist == "exp" and ops else 0.0, "bs": size,
            "engine": f"tcp loopback, {jobs} clients (saturated emu device)"}  # fmt: skip


def master_cpu_per_unit(topo: Topology, client: str, *, raid: str, op: str, chunks: int,
                        chunk: float, servers: int, runtime: Any = "1 s",
                        repeat: int = 3, realtime: bool = True) -> dict:  # fmt: skip
    """CPU time per stripe unit moved, from striped requests to loopback members (N = 1).

    The request is the study's own (``raid``, ``op``, ``chunks`` x ``chunk`` bytes over
    ``servers`` members); the best (smallest) of the repeats' mean times is taken, as the
    other repeats carry interference from the machine's other work. Returns
    ``time_per_unit`` (s), ``request_time`` (s), ``units`` moved per request.

    ``realtime`` (default True): the striping client and its loopback members run with
    SCHED_FIFO, so the machine's other work does not stretch the time that is meant to be the
    uncontended CPU demand. Measured for four of the study's cases (RAID0 read 3 servers,
    RAID0 write 4, RAID5 one-chunk write 3, RAID5 read 4) beside three busy loops on the 2
    cores: 58.5-106.5 us per unit without it, 22.3-30.4 us with it; at load average about 2
    without the loops, 23.6-29.1 and 24.5-28.2 us. One recorded calibration read 211 us per
    unit at load 15 without it.
    """
    level = 5 if raid in ("raid5", 5) else 0
    trace = bench_in(topo, client, "stripe", raid=level, members=servers, chunk=chunk,
                     member="tcp", tcp_role="self", rw=op, bs=chunks * chunk, jobs=1,
                     runtime=runtime, warmup="200 ms", repeat=repeat,
                     realtime=realtime)  # fmt: skip
    times = [float(r["latency_s"]["mean"]) for r in trace.results]
    out, inn, _ = moved_bytes(chunks * chunk, chunk, servers, f"raid{level}", op)
    units = float(out + inn) / chunk
    best = min(times)
    return {"time_per_unit": best / units, "request_time": best, "units": units,
            "repeats": times}  # fmt: skip
