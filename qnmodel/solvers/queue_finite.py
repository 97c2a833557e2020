"""Finite-capacity queues, exact: M/M/1/K, M/M/m/K and the loss system M/G/m/m.

At most K jobs are in the system (in service included, K >= m); an arrival that finds K
is lost. With exponential service the number of jobs is the birth-death process of
:mod:`qnmodel.solvers.queue` cut at K; the loss system (K = m) is insensitive to the
service law ([Iv15]). GNU Octave ``queueing`` 1.2.7: ``qsmm1k``, ``qsmmmk``.

References
----------
.. [Kle75] L. Kleinrock, *Queueing Systems, Volume 1: Theory*, Wiley 1975, sec. 3.6
   (M/M/1/K) and 3.7 (M/M/m/m, Erlang's loss formula).
.. [BGMT98] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and Markov
   Chains*, Wiley 1998, sec. 6.6 (M/M/m/K).
.. [Iv15] V. B. Iversen, *Teletraffic Engineering and Network Planning*, DTU Fotonik, 2015
   (Erlang's loss system and its insensitivity).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .._validate import as_positive_int, as_scv, as_servers
from ..errors import InvalidModelError, InvalidTypeError
from ..results.queue import QueueResult
from ._queue_common import Distribution, as_arrival_rate, as_service_time, as_states, make_result

__all__ = ["queue_mmmk", "queue_mm1k"]


def queue_mmmk(
    arrival_rate: Any,
    service_time: Any,
    servers: int,
    capacity: int,
    *,
    scv: Any = 1.0,
    states: Any = None,
) -> QueueResult:
    """The finite-capacity queue M/M/m/K: m exponential servers, at most K jobs in all.

    An arrival that finds K jobs (in service and waiting) is lost.

    Parameters
    ----------
    arrival_rate : float or str
        lambda, offered jobs/s (>= 0).
    service_time : float or str
        Mean service time S, s (> 0).
    servers : int
        m >= 1.
    capacity : int
        K >= m, jobs in the system at most (in service included).
    scv : float
        Squared coefficient of variation of the service time: 1, or any value >= 0 when
        K = m (the loss system M/G/m/m is insensitive: Erlang's loss formula holds for any
        service law, method ``"mgmm"``).
    states : sequence of int, optional
        The k in 0..K whose p_k are returned (default all of 0..K).

    Returns
    -------
    QueueResult
        ``method="mmmk"`` (``"mm1k"`` from :func:`queue_mm1k`): p_n for n = 0..K,
        loss probability p_K, X = lambda (1 - p_K), U = X S / m, L = sum n p_n,
        Lq = sum (n - m)^+ p_n, R = L / X, W = Lq / X (R = S, W = 0 at lambda = 0), wait
        probability sum_{n=m}^{K-1} p_n / (1 - p_K). Stable at any load.

    Raises
    ------
    InvalidModelError
        K < m; ``scv`` != 1 with K > m (the M/G/m/K queue is not insensitive: its
        results depend on the whole service law).

    References
    ----------
    [Kle75] sec. 3.6-3.7; [BGMT98] sec. 6.6 (GNU Octave ``qsmm1k``, ``qsmmmk``).
    """
    return finite_queue(arrival_rate, service_time, servers, capacity, scv, states, "mmmk")


def queue_mm1k(
    arrival_rate: Any, service_time: Any, capacity: int, *, states: Any = None
) -> QueueResult:
    """The M/M/1/K queue: :func:`queue_mmmk` with one server (``method="mm1k"``).

    p_n = (1 - a) a^n / (1 - a^(K+1)) (1 / (K + 1) at a = 1), n = 0..K, a = lambda S
    ([Kle75] sec. 3.6; [BGMT98] sec. 6.6; GNU Octave ``qsmm1k``).
    """
    return finite_queue(arrival_rate, service_time, 1, capacity, 1.0, states, "mm1k")


def capacity_input(capacity: Any, m: int) -> int:
    if isinstance(capacity, bool | np.bool_) or not isinstance(capacity, numbers.Real):
        raise InvalidTypeError(
            f"capacity must be an integer K >= servers = {m} (the most jobs in the system, "
            f"in service included) or None for no limit, got {capacity!r}"
        )
    K = as_positive_int(capacity, "capacity", 1) if math.isfinite(capacity) else None
    if K is None:
        raise InvalidModelError(
            f"capacity must be a finite integer K >= servers = {m}, or None for no limit, "
            f"got {capacity!r}"
        )
    if K < m:
        raise InvalidModelError(
            f"capacity K = {K} is below servers m = {m}: K counts the jobs in service too, "
            f"so K >= m (K = m is the loss system, no waiting room); give capacity >= {m}"
        )
    return K


def finite_queue(arrival_rate, service_time, servers, capacity, scv, states, method) -> QueueResult:
    lam, S = as_arrival_rate(arrival_rate), as_service_time(service_time)
    m = as_servers(servers)
    K = capacity_input(capacity, m)
    c2 = as_scv(scv)
    if c2 != 1.0 and K > m:
        raise InvalidModelError(_finite_scv_message(m, K, c2))
    if c2 != 1.0:
        method = "mgmm"
    ks = as_states(states, K)
    a = lam * S
    dist = Distribution(a, float(m), float(K), None)
    pK = float(dist.p[-1]) if dist.hi == K else 0.0
    X = lam * (1.0 - pK)
    L, _busy, Lq = dist.sums()
    if X > 0.0:
        R, W = L / X, Lq / X
    else:  # no traffic: an arriving job would find the system empty
        R, W = S, 0.0
    accepted = 1.0 - pK
    waits = (dist.at_least(m) - pK) / accepted if K > m and accepted > 0 else 0.0
    if ks is None:
        ks = np.arange(K + 1, dtype=np.int64)
    return make_result(
        method,
        lam,
        S,
        c2,
        m,
        K,
        throughput=X,
        loss_probability=pK,
        utilization=X * S / m,
        busy_servers=X * S,
        queue_length=L,
        waiting_jobs=Lq,
        response_time=R,
        waiting_time=W,
        empty_probability=dist.p0(),
        wait_probability=max(waits, 0.0),
        states=ks,
        state_probabilities=dist.prob(ks),
    )


def _finite_scv_message(m: int, K: int, c2: float) -> str:
    return (
        f"capacity K = {K} with scv = {c2!r} (an M/G/{m}/{K} queue) is not supported: with "
        "waiting room its results depend on the whole service-time law, not on its mean and "
        "SCV alone. Supported: exponential service (scv=1.0, M/M/m/K, exact), capacity equal "
        f"to servers (K = {m}: the loss system M/G/m/m, exact for any law), or no capacity "
        "limit (capacity=None: M/G/1 exact, M/G/m approximate)"
    )
