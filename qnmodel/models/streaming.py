"""Streaming stages: a closed network in which some stations work on one job at once.

A server that streams from its disk into the network (an NFS server's read-ahead: the disk
reads the next blocks while the link carries the previous ones) runs the disk and the link
*at the same time* on one job. Product-form stations in series charge the job the sum of the
two demands; here the job crosses them as a pipeline. Measured on seed 001's testbed (NFS
misses with one 1 MiB READ in flight, ``docs/explanation/nfs-validation.md``), the series sum
1 / (1/b2 + 1/b4) read 19-30 % below every measurement, the pipelined rate min(b2, b4) within
0.6-9.2 %.

The model (ours, approximate)
-----------------------------
Each station k has a demand D_k per job, split into a *serial* part D_k - G_k and a
*streamed* part G_k (0 <= G_k <= D_k) that it works on together with the other stations of
the streaming group (the stations with G_k > 0). The job's time in the group is governed by
its slowest stage, and every stage consumes its own capacity (the utilisation law U_k = X D_k,
[LZGS84] eq. 3.1, at each). With the arrival theorem's queue lengths at n - 1 ([RL80]):

* serial part of station k: ``D'_k (1 + Q_k)`` at a queue, ``D'_k`` at a delay station,
  D'_k = D_k - G_k;
* the group: ``R_G = max_k G_k (1 + Q_k)`` over its queueing stages (``G_k`` at a delay
  stage): each stage streams the job at its share of the stage, slowed by the jobs it finds
  there, and the slowest stage sets the pace;
* ``X = n / (Z + sum_k serial residences + R_G)``; a job in the group is present at every
  stage of it: ``Q_k = X (serial residence_k + R_G)`` for the group's stations.

At n = 1 a job takes ``sum_k D'_k + max_k G_k``: the isolated job's time with the stream
overlapped (exact for a pipeline whose stages move the bytes at constant rates and do not
wait for each other; the series network gives ``sum_k D_k``). As n grows the slowest stage's
queue grows and X tends to ``1 / max_k D_k`` over the queueing stations, the asymptotic bound
([LZGS84] sec. 5.2), as every stage still consumes capacity. A station with several servers
(``servers = m``) outside the group is Seidmann's pair, a queue of D/m and a delay of
D (m - 1)/m ([Sei87]); a group station must have one server.

Residences are reported with the group's time charged to its governing stage (the one of
largest ``G_k (1 + Q_k)``), so they sum to R and ``queue_length = X residence``: the
occupancy used inside the recursion (a job in the group counted at every stage of it) is not
reported.

References
----------
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed multichain queuing
   networks", J. ACM 27(2):313-322, 1980.
.. [LZGS84] E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative System
   Performance*, Prentice-Hall 1984, eq. 3.1 (utilisation law), sec. 5.2 (asymptotic bounds).
.. [Sei87] A. Seidmann, P. J. Schweitzer, S. Shalev-Oren, "Computerized closed queueing
   network models of flexible manufacturing systems", Large Scale Systems 12:91-107, 1987.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validate import as_population, as_quantity, check_memory, check_time_scale
from ..errors import InvalidModelError
from ..model import Network
from ..model.streamed import streamed_parts
from ..results.closed import MVAResult

__all__ = ["METHOD", "streaming_mva"]

METHOD = "approximate MVA with streaming stages (the slowest stage governs the stream; ours)"


def streaming_mva(network: Network, streamed: Mapping[str, float], N, think_time=None) -> MVAResult:
    """Closed single-class network whose ``streamed`` stations pipeline a job (module docstring).

    Parameters
    ----------
    network : Network
        Single-class, queue and delay stations (``kind="queue"`` or ``"delay"``); its
        ``think_time`` is used unless ``think_time`` is given.
    streamed : mapping of str -> float
        G_k, the part of station k's demand per job (s, 0 <= G_k <= D_k) it works on at the
        same time as the group's other stations. At least two stations; a queueing station of
        the group must have one server.
    N : int
        Largest population (>= 1); the curve n = 1..N.
    think_time : float or str, optional
        Z, s (>= 0).

    Returns
    -------
    MVAResult
        Method :data:`METHOD` (approximate). ``demands`` are the stations' whole demands D_k
        (``utilization = X D_k``, divided by the servers at a multi-server station).
    """
    parts = streamed_parts(network, streamed, "streaming_mva")
    N = as_population(N, "N")
    Z = as_quantity(network.think_time if think_time is None else think_time, "think_time",
                    "time")  # fmt: skip
    names, D, G = parts.names, parts.demand, parts.streamed
    m, delay = parts.servers, parts.delay
    K = len(names)
    check_time_scale(N, float(D.sum()), Z)
    check_memory(
        8.0 * N * (2 * K + 3),
        f"the streaming MVA curve n = 1..{N} at {K} stations",
        "give a smaller N",
    )
    for k in np.flatnonzero((G > 0) & (m > 1) & ~delay):
        raise InvalidModelError(
            f"station {names[k]!r} of the streaming group has {m[k]} servers: the streaming "
            "model takes single-server stages; use the series network's mva()"
        )
    serial = D - G
    # Seidmann [Sei87]: an m-server queue is a queue of D/m and a delay of D (m - 1)/m
    q_part = np.where(delay, 0.0, serial / m)
    d_part = np.where(delay, serial, serial * (m - 1) / m)
    group_delay = np.where(delay, G, 0.0)
    grp = G > 0
    X = np.empty(N)
    Rk = np.zeros((N, K))
    Q = np.zeros(K)
    for i in range(N):
        n = i + 1
        r_ser = q_part * (1.0 + Q) + d_part
        pace = np.where(grp, np.where(delay, group_delay, G * (1.0 + Q)), -np.inf)
        gov = int(np.argmax(pace))
        r_g = float(pace[gov])
        x = n / (Z + float(r_ser.sum()) + r_g)
        X[i] = x
        Rk[i] = r_ser
        Rk[i, gov] += r_g
        Q = x * (r_ser + np.where(grp, r_g, 0.0))
        Q = np.where(delay, 0.0, Q)
    R = Rk.sum(axis=1)
    return MVAResult(
        method=METHOD, n=np.arange(1, N + 1, dtype=np.float64), throughput=X,
        response_time=R, queue_length=X[:, None] * Rk,
        utilization=X[:, None] * D[None, :] / np.where(delay, 1, m)[None, :],
        residence_time=Rk, station_names=names, think_time=float(Z), demands=D,
        is_delay=delay,
    )  # fmt: skip
