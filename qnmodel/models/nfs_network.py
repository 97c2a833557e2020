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
from ..errors import InvalidTypeError
from ..results.closed import BoundsResult, MVAResult
from ..solvers import bounds, mva
from .nfs import OPERATIONS, NFSSystem

__all__ = ["NFSAggregateResult", "aggregate_bandwidth"]


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

    Returns
    -------
    NFSAggregateResult
    """
    if not isinstance(system, NFSSystem):
        raise InvalidTypeError(f"system must be an NFSSystem, got {type(system).__name__}")
    N = as_population(clients, "clients")
    as_choice(op, "op", OPERATIONS)
    S = as_quantity(nbytes, "nbytes", "size", positive=True)
    net = system.network(S, op, client_hit, server_hit, think_time)
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
