"""Multi-client NFS bandwidth from the closed queueing network of an :class:`NFSSystem`.

:meth:`qnmodel.models.nfs.NFSSystem.network` describes the system as a closed
network (client and client link per client, shared network, server CPU,
server disk; one job = one file of ``nbytes``); this module solves it with
exact MVA for n = 1..N clients and turns throughput into bandwidth:

    B(n) = X(n) * nbytes   (bytes/s, aggregate over the n clients)

The curve rises with n and saturates at :meth:`NFSSystem.asymptotic_bandwidth`
(the bottleneck law); the balanced-job bounds bracket it. A product-form
network never predicts the *fall* that [Cao07] fig. 5 measured beyond ~18
writers: compare with :class:`qnmodel.models.usl.USL` for that.

References
----------
.. [Cao07] Cao L., Luo H., Zhang X., "Measurement and analysis of factors
   affecting NFS bandwidth in cluster", Computer Engineering, 2007, sec. 3.2
   (single vs dual server CPU) and sec. 3.4 (aggregate bandwidth vs clients).
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984,
   ch. 5 (bounds) and ch. 6 (exact MVA).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_choice, as_population, as_quantity
from ..errors import InvalidModelError, InvalidTypeError
from ..results.closed import BoundsResult, MVAResult
from ..solvers import bounds, mva
from .nfs import OPERATIONS, NFSSystem
from .streaming import streaming_mva

__all__ = ["NFSAggregateResult", "aggregate_bandwidth", "STRUCTURES", "METHOD_STREAMING_BOUNDS"]

#: how a read miss crosses the server's disk and the network (:func:`aggregate_bandwidth`)
STRUCTURES = ("series", "streaming")
METHOD_STREAMING_BOUNDS = (
    "streaming bounds (asymptotic over every stage; the streamed isolated time as R(1) floor)"
)


@dataclass(frozen=True, repr=False)
class NFSAggregateResult:
    """Aggregate NFS bandwidth of n = 1..N clients predicted by the closed network.

    Attributes
    ----------
    n : ndarray (N,)
        Number of clients, 1..N.
    bandwidth : ndarray (N,)
        B(n) = X(n) * nbytes, aggregate bytes/s.
    per_client_bandwidth : ndarray (N,)
        B(n) / n, bytes/s.
    bandwidth_lower, bandwidth_upper : ndarray (N,)
        Bounds on B(n), bytes/s (balanced job bounds; asymptotic bounds when
        the server has several CPUs).
    asymptote : float
        nbytes / max_k(D_k / m_k) over the shared stations, bytes/s: the
        saturation bandwidth (``inf`` if no shared station is busy).
    bottleneck : str
        The shared station with the largest per-server demand.
    nbytes : float
        File size per job, bytes.
    op : str
        ``"read"`` or ``"write"``.
    mva : MVAResult
        The full solution (throughput in files/s, response time per file in s,
        per-station queue lengths and utilisations).
    bounds : BoundsResult
        The bounds in jobs/s.
    """

    n: np.ndarray
    bandwidth: np.ndarray
    per_client_bandwidth: np.ndarray
    bandwidth_lower: np.ndarray
    bandwidth_upper: np.ndarray
    asymptote: float
    bottleneck: str
    nbytes: float
    op: str
    mva: MVAResult
    bounds: BoundsResult

    def __post_init__(self) -> None:
        for name in (
            "n",
            "bandwidth",
            "per_client_bandwidth",
            "bandwidth_lower",
            "bandwidth_upper",
        ):
            a = np.array(getattr(self, name), dtype=np.float64)
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    def to_frame(self) -> Any:
        """One row per n: clients, bandwidth, bounds, per-client bandwidth (bytes/s)."""
        import pandas as pd

        return pd.DataFrame(
            {
                "clients": self.n.astype(int),
                "bandwidth": self.bandwidth,
                "bandwidth_lower": self.bandwidth_lower,
                "bandwidth_upper": self.bandwidth_upper,
                "per_client_bandwidth": self.per_client_bandwidth,
                "response_time": self.mva.response_time,
            }
        )

    def __repr__(self) -> str:
        N = int(self.n[-1])
        return (
            f"NFSAggregateResult({self.op}, nbytes={self.nbytes:.6g} B, n=1..{N}: "
            f"B(1)={self.bandwidth[0]:.6g} B/s, B({N})={self.bandwidth[-1]:.6g} B/s, "
            f"asymptote={self.asymptote:.6g} B/s at {self.bottleneck!r})"
        )


def aggregate_bandwidth(
    system: NFSSystem,
    clients: int,
    nbytes: float | str,
    op: str = "read",
    client_hit: Any = None,
    server_hit: Any = None,
    think_time: float | str = 0.0,
    structure: str = "series",
) -> NFSAggregateResult:
    """Aggregate bandwidth of 1..``clients`` NFS clients, each moving files of ``nbytes``.

    Parameters
    ----------
    system : NFSSystem
        Bandwidths and protocol costs.
    clients : int
        Largest number of clients N (>= 1).
    nbytes : float or str
        Bytes per file per client (> 0), e.g. ``"10 MB"`` as in [Cao07] sec. 3.4.
    op : {"read", "write"}
        Writes are timed through the flush on close.
    client_hit, server_hit : float, optional
        Read hit ratios in [0, 1] (scalars); leave unset for writes.
    think_time : float or str
        Pause between a client's files, seconds (>= 0).
    structure : {"series", "streaming"}
        How a read miss crosses the server's disk and the network. ``"series"`` (default):
        the product-form network of :meth:`NFSSystem.network` solved by exact MVA, the disk
        then the link (one file at N = 1 takes the sum of the demands, 1 / (1/b2 + 1/b4) per
        byte). ``"streaming"`` (reads only; approximate): the server streams from its disk
        into the network (read-ahead), so the misses' bytes cross the disk, the network and
        the client link at once, at the slowest of them (min(b2, b4) at N = 1), each still
        consuming its capacity: :func:`qnmodel.models.streaming.streaming_mva` with the
        streamed parts ``(1 - h_c)(1 - h_s) S / b2`` of the network (and of the client
        link) and the whole ``server_disk`` demand; bounds ``X(n) <= min(n / (R0 + Z),
        1 / D_max)``, ``X(n) >= n / (n D + Z)`` (R0 the streamed isolated time, D the sum
        of the demands: a schedule that serves the files one after the other and overlaps
        nothing). Measured on the recorded seed-001 misses with one request in flight
        (``docs/explanation/nfs-validation.md``, section "Streaming servers"): within
        -9.2 ... +1.2 % where the series reads 19-30 % low. Writes commit after the
        transfer (``form="corrected"``, series, measured within 3.8 %) and refuse it.

    Returns
    -------
    NFSAggregateResult
    """
    if not isinstance(system, NFSSystem):
        raise InvalidTypeError(f"system must be an NFSSystem, got {type(system).__name__}")
    N = as_population(clients, "clients")
    as_choice(op, "op", OPERATIONS)
    S = as_quantity(nbytes, "nbytes", "size", positive=True)
    structure = as_choice(structure, "structure", STRUCTURES)
    net = system.network(S, op, client_hit, server_hit, think_time)
    if structure == "streaming":
        res, b = _streaming(system, net, N, op, server_hit)
    else:
        res = mva(net, N)
        b = bounds(net, N, method="aba" if net.has_multiserver else "bjb")
    shared = {
        "network": net.station("network").demand,
        "server_cpu": net.station("server_cpu").demand / system.server_cpus,
        "server_disk": net.station("server_disk").demand / system.server_disks,
    }
    bn = max(shared, key=shared.__getitem__)
    dmax = shared[bn]
    asym = S / dmax if dmax > 0 else float("inf")
    return NFSAggregateResult(
        n=res.n,
        bandwidth=res.throughput * S,
        per_client_bandwidth=res.throughput * S / res.n,
        bandwidth_lower=b.throughput_lower * S,
        bandwidth_upper=b.throughput_upper * S,
        asymptote=asym,
        bottleneck=bn,
        nbytes=S,
        op=op,
        mva=res,
        bounds=b,
    )


def _streaming(system: NFSSystem, net, N: int, op: str, server_hit) -> tuple:
    """The streaming read miss (:func:`aggregate_bandwidth`, ``structure="streaming"``)."""
    if op != "read":
        raise InvalidModelError(
            "structure='streaming' models read misses (the server's read-ahead streams its "
            f"disk into the network); got op={op!r}: writes commit after the transfer, use "
            "structure='series'"
        )
    hs = 0.0 if server_hit is None else float(server_hit)
    names = net.names
    streamed = {"server_disk": net.station("server_disk").demand}
    for k in ("network", "client_link"):
        if k in names:
            streamed[k] = net.station(k).demand * (1.0 - hs)
    if streamed["server_disk"] <= 0.0:  # every read hits a cache: nothing streams
        return mva(net, N), bounds(net, N, method="aba" if net.has_multiserver else "bjb")
    res = streaming_mva(net, streamed, N)
    Z = float(net.think_time)
    n = res.n
    D = np.array([st.demand for st in net.stations])
    m = np.array([1 if st.kind == "delay" else st.servers for st in net.stations])
    per = np.where([st.kind == "delay" for st in net.stations], 0.0, D / m)
    k = int(np.argmax(per))
    dmax, r0, total = float(per[k]), float(res.response_time[0]), float(D.sum())
    x_up = np.minimum(n / (r0 + Z), 1.0 / dmax if dmax > 0 else np.inf)
    x_lo = n / (n * total + Z)
    b = BoundsResult(
        method=METHOD_STREAMING_BOUNDS, n=n, throughput_lower=x_lo, throughput_upper=x_up,
        response_time_lower=np.maximum(r0, n / x_up - Z), response_time_upper=n * total,
        station_names=names, think_time=Z, total_demand=total, max_demand=dmax,
        bottleneck=names[k], saturation_throughput=1.0 / dmax if dmax > 0 else np.inf,
        n_star=(r0 + Z) / dmax if dmax > 0 else np.inf,
    )  # fmt: skip
    return res, b
