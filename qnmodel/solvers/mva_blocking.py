"""Approximate MVA of closed single-class networks with finite capacities (MVABLO).

Stations k = 1..K hold at most M_k jobs (the one in service included). A job finishing
service at i that is routed to a full station j stays in i's server, blocking it, until j
has room: transfer blocking, also called blocking after service ([Aky88] sec. II; BAS in
[BDO01]). Such networks have no product form, and MVABLO ([Aky88] sec. III) is an
**approximation**: ordinary exact MVA ([RL80]) over n = 1..N, except that when a station's
mean queue length would exceed its capacity, the network is treated as having reached the
station's limit:

* the full station i drops the arriving job's own service from its response time per
  visit, t_i = S_i (z_i + Q_i(n-1)) + B_i with z_i = 1 becoming 0, which lowers its
  queue length;
* every station j that routes to i gets a blocking time S_i V_j P_ji / V_i per visit added
  to its response time: the mean residual service time of the blocker, in proportion to
  the share of i's arrivals that come from j;

and the step is repeated until no mean queue length exceeds its capacity. The changes are
kept for the larger populations. This is the algorithm of Octave ``queueing`` 1.2.7's
``qncsmvablo`` (which this module follows step for step, read from its source, and
cross-checks to 1e-12), labelled as the approximation it is.

Measured error
--------------
Against the exact continuous-time Markov chain of the same network under transfer
blocking (FCFS single servers, exponential service; built and solved by sparse LU in
``tests/solvers/test_mva_blocking.py``), at every population where a station can fill
(min M < N < sum M):

* 60 random cyclic networks (Akyildiz's setting; 2-4 stations, capacities 1-5), 324
  points: throughput relative error median 4.3 %, 90th percentile 22 %, worst 72 % (tight
  capacities); max_k |Q_k - Q_k(exact)| / N median 6.3 %, worst 23 %.
* 100 random networks with branching routing (2-4 stations, capacities 1-4), 404 points:
  215 deadlock in the exact chain (blocked stations waiting on each other). MVABLO does not
  detect deadlock: it answers on 161 of them, and on 54 it never settles (this function
  raises :class:`~qnmodel.errors.ConvergenceError`; Octave's ``qncsmvablo`` loops
  forever). On the 189 others: throughput error median 0.95 %, 90th percentile 16.5 %,
  worst 54 %; queue lengths median 6.9 %, worst 22 % of N.

Where no station can fill (N <= min M) it is exact MVA.

References
----------
.. [Aky88] I. F. Akyildiz, "Mean value analysis for blocking queueing networks", IEEE
   Trans. Software Engineering 14(4):418-428, 1988, doi:10.1109/32.4663 (sec. III, the
   MVABLO algorithm; examples of sec. V used in the tests).
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed multichain queuing
   networks", J. ACM 27(2):313-322, 1980.
.. [BDO01] S. Balsamo, V. de Nitto Persone, R. Onvural, *Analysis of Queueing Networks
   with Blocking*, Kluwer, 2001, ch. 1 (blocking types).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_population, as_positive_int, as_quantities, as_server_counts
from ..errors import ConvergenceError, InvalidModelError
from ..model.routing import visits_closed
from ..results.network import BlockingMVAResult

__all__ = ["mvablo", "MVABLO_METHOD"]

MVABLO_METHOD = "mvablo (approximate)"


def mvablo(
    N: Any,
    service_times: Any,
    capacity: Any,
    routing: Any,
    max_iter: Any = 10_000,
) -> BlockingMVAResult:
    """MVABLO: approximate MVA of a closed network with finite station capacities.

    Parameters
    ----------
    N : int
        Jobs in the network, 1 <= N < sum_k M_k (with N = sum M every station is full and
        the network is deadlocked).
    service_times : array_like (K,)
        S_k > 0, seconds per visit (unit strings accepted).
    capacity : array_like of int (K,)
        M_k >= 1, the most jobs station k holds, the one in service included.
    routing : array_like (K, K)
        P[i, j], probability that a job leaving i goes to j; rows sum to 1, one chain.
        Visit ratios V from it, with V_0 = 1 (station 0 is the reference).
    max_iter : int
        Most capacity adjustments per population before giving up (the adjustments of one
        population normally number at most K).

    Returns
    -------
    BlockingMVAResult
        ``method="mvablo (approximate)"``: X (visits to station 0 per second), per station
        t_k (per visit), V_k t_k, Q_k = X V_k t_k, U_k = X V_k S_k, the stations found full
        and their predecessors' blocking times.

    Raises
    ------
    InvalidModelError
        N >= sum M, S_k <= 0, M_k < 1, shapes, a routing matrix that is not stochastic.
    ConvergenceError
        A station still exceeds its capacity after ``max_iter`` adjustments (seen only on
        networks that deadlock, module docstring).

    Notes
    -----
    An approximation (module docstring, with its error against the exact Markov chain).
    Each step is exact MVA's: sums and quotients of positive numbers.
    """
    N = as_population(N, "N")
    S = as_quantities(service_times, "service_times", "time")
    K = S.size
    if K == 0:
        raise InvalidModelError("service_times is empty: a network needs at least one station")
    if np.any(S <= 0):
        k = int(np.flatnonzero(S <= 0)[0])
        raise InvalidModelError(f"service_times[{k}] must be > 0, got {float(S[k])!r}")
    M = as_server_counts(capacity, "capacity", K)
    limit = as_positive_int(max_iter, "max_iter", 1)
    if N >= int(M.sum()):
        raise InvalidModelError(
            f"the population N = {N} reaches the total capacity sum(M) = {int(M.sum())} of "
            "the network: every station would be full and no job could move (deadlock); "
            f"give N < {int(M.sum())}"
        )
    P = np.asarray(routing, dtype=np.float64) if not isinstance(routing, str) else routing
    if np.shape(P) != (K, K):
        raise InvalidModelError(
            f"routing must be a {K} x {K} matrix (one row and column per station), got "
            f"shape {np.shape(P)}"
        )
    v = visits_closed(P, 0).visits[0]
    q_prev = np.zeros(K)
    bt = np.zeros(K)
    z = np.ones(K)
    full = np.zeros(K, dtype=bool)
    for n in range(1, N + 1):
        for _ in range(limit):
            t = S * (z + q_prev) + bt
            lam = n / float(v @ t)
            q = t * v * lam
            over = np.flatnonzero(q > M)
            if over.size == 0:
                break
            i = int(over[0])
            z[i] = 0.0
            full[i] = True
            bt = bt + S[i] * (v * P[:, i]) / v[i]
        else:
            raise ConvergenceError(
                f"MVABLO at N = {n}: station {int(over[0])} still holds more than its "
                f"capacity {int(M[over[0]])} on average after {limit} blocking adjustments"
            )
        q_prev = q
    X = v * lam
    return BlockingMVAResult(
        method=MVABLO_METHOD,
        population=N,
        throughput=float(lam),
        visits=v,
        station_throughput=X,
        response_time_per_visit=t,
        residence_time=v * t,
        queue_length=X * t,
        utilization=X * S,
        capacity=M,
        blocked=full,
        blocking_time=bt,
        service_times=S,
    )
