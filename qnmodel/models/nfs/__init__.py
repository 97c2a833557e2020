"""NFS bandwidth: the cache-hit model of Cao et al. (2007) and its protocol costs.

Three layers, each reducing exactly to the one before it when its extra
parameters are zero:

:class:`NFSBandwidth`
    The paper's model ([Cao07] sec. 1, fig. 1). A request that hits the
    client cache runs at the client memory bandwidth ``b1``; one that misses
    there but hits the server cache at ``min(b2, b3)`` (network, server
    memory bus); one that misses both at ``min(b2, b3, b4)`` (``b4`` the
    server storage)::

        B_NFS = b1                 client-cache hit
                min(b2, b3)        server-cache hit   (= b2 when b3 >> b2)
                min(b2, b3, b4)    miss in both       (= min(b2, b4))

    For hit *ratios* the expected bandwidth is **time-weighted**: a byte
    costs ``1/b`` seconds on its path, the expected cost per byte is the
    hit-ratio-weighted mean of those times, and the bandwidth is its
    reciprocal (a weighted harmonic mean of the three case bandwidths):

        1/B = h_c/b1 + (1 - h_c) [h_s/min(b2, b3) + (1 - h_s)/min(b2, b3, b4)]

    with ``h_c`` the client hit ratio and ``h_s`` the server hit ratio of the
    requests that reach the server.

:class:`NFSSystem`
    Adds the protocol where it matters: ``rsize``/``wsize`` turn bytes into
    RPC requests (``1/rsize`` requests per byte), each costing
    ``server_cpu_per_request`` seconds of server CPU and
    ``client_cpu_per_request`` of client CPU; each disk request costs
    ``disk_access_time`` of positioning. The write path follows the paper's
    sec. 2: NFS flushes every dirty byte to the server when the file is
    closed, so a write's time includes the close and client-cache hits do
    not help; a ``"sync"`` export writes each ``wsize`` request to stable
    storage in arrival order, an ``"async"`` export may merge them into
    ``async_merge_size`` disk writes ([Cao07] sec. 3.1). One client's timed
    write is, by default (``form="corrected"``), the transfer into the
    server's page cache followed by the disk's write at the COMMIT on close,
    ``1/(1/b2 + 1/b4)``: what the testbed measures (within 4 %, where the
    paper's pipelined ``min(b2, b4)`` misses by up to 64 %); ``form="paper"``
    keeps the paper's. The same per-byte
    times are the service demands of a closed network
    (:meth:`NFSSystem.network`): client and optional client link (one per
    client: delay stations), the shared network, the server CPU (with the
    server memory copy at ``b3``; ``server_cpus`` servers) and the server
    disk. One job is one whole file of ``nbytes``. Solving it
    (:mod:`qnmodel.models.nfs_network`) gives the concurrency effects; its
    saturation bandwidth is :meth:`NFSSystem.asymptotic_bandwidth`.

:class:`USL`
    Gunther's Universal Scalability Law, for measured aggregate curves that
    rise, peak and *fall* ([Cao07] fig. 5): :mod:`qnmodel.models.usl` (also ``qnmodel.USL``).

Units: rates in bytes/s, sizes in bytes, times in seconds; every argument
also accepts a unit string (``"940 Mbit/s"``, ``"32 KiB"``, ``"50 us"``).

How the three bandwidths relate
-------------------------------
For the same parameters, ``S / sum_k D_k`` (one client, one outstanding
request, no overlap) <= :meth:`NFSSystem.bandwidth` (one streaming client,
stages pipelined, the paper's model) <= the saturation bandwidth of the
shared stations :meth:`NFSSystem.asymptotic_bandwidth` (many clients).

References
----------
.. [Cao07] Cao L., Luo H., Zhang X., "Measurement and analysis of factors
   affecting NFS bandwidth in cluster" (集群环境中影响 NFS 文件系统带宽的测试与分析),
   Computer Engineering (计算机工程), 2007: sec. 1 and fig. 1 (bandwidth
   model), sec. 2 (write timing must include close), sec. 3.1 and table 1
   (server file system; sync vs async export), sec. 3.3 and table 2
   (rsize/wsize), sec. 3.4 and fig. 5 (aggregate bandwidth vs clients).
"""

from __future__ import annotations

from .cache import NFSBandwidth, requests_for
from .system import EXPORT_MODES, FORMS, OPERATIONS, NFSSystem

__all__ = [
    "NFSBandwidth",
    "NFSSystem",
    "EXPORT_MODES",
    "OPERATIONS",
    "FORMS",
    "requests_for",
]
