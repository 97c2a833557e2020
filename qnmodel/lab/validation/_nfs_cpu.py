"""Bottom-up CPU components of the NFS study (``[nfs] components = true``).

Two component benchmarks, each a measurement the study does not validate against:

**libnfs' client cache, per request and per page.** A client-cache hit of an S-byte request
costs a fixed part ``a`` (the call, the lookup of the request's range) and a part per 4 KiB
page ``c`` (the page's hash lookup and its copy into the caller's buffer)::

    t(S) = a + ceil(S / 4096) c,       b1(S) = S / t(S)

(:func:`page_cache_bandwidth`). ``a`` and ``c`` come from client hits of 1- and 2-page
requests on the study's client-hit file (``_nfs_runs.client_cache_cost``), and predict b1 for
the study's request size, against the memcpy bandwidth that seed 001 takes as b1.

**A READ's turnaround per byte.** READs served from the server's page cache over loopback
inside the server's namespace (no shaped link, no transfer time) at two sizes give the line
``R(S) = a + e S`` (:func:`loopback_read_cost`); ``e`` is the per-byte CPU of a READ's data
path (server copy, TCP over the host, the client's XDR decode), the closed network's
``read_cpu_per_byte`` (:class:`~qnmodel.models.nfs.NFSSystem`).

References
----------
.. [Cao07] Cao L., Luo H., Zhang X., "Measurement and analysis of factors affecting NFS
   bandwidth in cluster", Computer Engineering, 2007, sec. 1 (b1, the client's memory) and
   sec. 3.2 (CPU cost of NFS requests).
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, ch. 5 (service
   demands from component measurements).
"""

from __future__ import annotations

import math

from ...errors import InvalidModelError
from ..testbed import bench_in
from ..testbed.services import nfs_url

#: libnfs 4.0's page-cache page (``NFS_PAGE`` of qnbench's nfs engine)
PAGE = 4096
#: request sizes of the client-cache component: 1 and 2 pages
CACHE_SIZES = (PAGE, 2 * PAGE)
#: request sizes of the loopback READ component (the slope spans 4 KiB .. 1 MiB); the middle
#: one (the N-client curve's 64 KiB) is recorded as a check of the line, not fitted
LOOPBACK_SIZES = (4096, 65536, 1048576)


def fit_line(x0: float, y0: float, x1: float, y1: float) -> tuple[float, float]:
    """The line through (x0, y0) and (x1, y1): ``(a, b)`` with y = a + b x (x0 != x1)."""
    if x0 == x1:
        raise InvalidModelError(f"fit_line needs two distinct x, got {x0!r} twice")
    b = (y1 - y0) / (x1 - x0)
    return y0 - b * x0, b


def page_cache_bandwidth(size: float, per_request: float, per_page: float, page: int = PAGE):
    """Bandwidth of client-cache hits of ``size``-byte requests, bytes/s.

    ``size / (per_request + ceil(size / page) per_page)``: a fixed cost per request and one per
    page of libnfs' page cache (lookup and copy), seconds. ``inf`` when both costs are zero.
    """
    if size <= 0 or page <= 0 or per_request < 0 or per_page < 0:
        raise InvalidModelError(
            f"page_cache_bandwidth needs size, page > 0 and costs >= 0, got size={size!r}, "
            f"page={page!r}, per_request={per_request!r}, per_page={per_page!r}"
        )
    t = per_request + math.ceil(size / page) * per_page
    return math.inf if t == 0 else size / t


def loopback_read_cost(topo, server, opts, size: int) -> dict:
    """READs from the server's cache over loopback in its namespace: R(S) = a + e S.

    qnbench's nfs engine runs inside the server's namespace against the server's own address
    (the kernel routes it over loopback: no shaped link). The line goes through the best
    (smallest mean) response time at 4 KiB and 1 MiB; the 64 KiB point is recorded beside
    it (``err_middle``: the line's error there). Reads the N-client curve's file ``tnn`` of
    ``size`` bytes (in the server's cache).
    """
    lat: dict[int, list[float]] = {}
    for bs in LOOPBACK_SIZES:
        tr = bench_in(
            topo,
            server,
            "nfs",
            rw="read",
            nfs_url=nfs_url(topo, server),
            nfs_prefix="tnn",
            size=int(size),
            nfs_cache=0,
            bs=bs,
            rsize=bs,
            runtime="1 s",
            warmup="200 ms",
            repeat=opts["repeats"],
        )
        lat[bs] = [r["latency_s"]["mean"] for r in tr.results]
    lo, mid, hi = LOOPBACK_SIZES
    a, e = fit_line(lo, min(lat[lo]), hi, min(lat[hi]))
    e = max(e, 0.0)
    line_mid = a + e * mid
    return {
        "sizes": list(LOOPBACK_SIZES),
        "response_s": {str(s): v for s, v in lat.items()},
        "per_request_s": a,
        "per_byte_s": e,
        "err_middle": (line_mid - min(lat[mid])) / min(lat[mid]),
    }
