"""Single queues beyond the exact birth-death and M/G/1 results: M/G/m (approximate,
Allen-Cunneen) and the asymmetric M/M/m queue (servers of different speeds; exact by its
Markov chain, or GNU Octave's approximation).

References
----------
.. [LL59] A. M. Lee, P. A. Longton, "Queueing processes associated with airline passenger
   check-in", Operational Research Quarterly 10(1):56-71, 1959 (the (1 + c^2) / 2 scaling
   of the M/M/m waiting time).
.. [All90] A. O. Allen, *Probability, Statistics, and Queueing Theory with Computer Science
   Applications*, 2nd ed., Academic Press 1990, ch. 6 (the Allen-Cunneen approximation of
   GI/G/c).
.. [BGMT06] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and Markov
   Chains*, 2nd ed., Wiley 2006, ch. 6 (single-station queues: the M/G/m approximations and
   asymmetric multi-server queues).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import as_choice, as_quantities, as_scv, as_servers
from ..errors import InvalidModelError
from ..results.queue import QueueResult
from ._queue_common import (
    Distribution,
    as_arrival_rate,
    as_service_time,
    lossless_result,
    mmm_wait,
    unstable_error,
)

__all__ = ["queue_mgm", "queue_ammm", "AMMM_METHODS", "MAX_AMMM_EXACT_SERVERS"]

#: methods of :func:`queue_ammm`
AMMM_METHODS = ("exact", "approximate")
#: the exact asymmetric M/M/m chain has 2^m states: refused beyond this many servers
MAX_AMMM_EXACT_SERVERS = 16


def queue_mgm(arrival_rate: Any, service_time: Any, servers: int, scv: Any) -> QueueResult:
    """The M/G/m queue, approximately: the M/M/m waiting time scaled by (1 + c^2) / 2.

    The Allen-Cunneen approximation with Poisson arrivals (c_a^2 = 1), first proposed by
    Lee and Longton ([LL59]; [All90]; [BGMT06]):

        W ~ C(m, a) S / (m - a) (1 + c^2) / 2,   R = S + W,   L = lambda R,   Lq = lambda W,

    with a = lambda S and Erlang's C(m, a). Exact for m = 1 (Pollaczek-Khinchine) and for
    c^2 = 1 (M/M/m).

    Parameters
    ----------
    arrival_rate : float or str
        lambda, jobs/s (>= 0).
    service_time : float or str
        Mean service time S, s (> 0).
    servers : int
        m >= 1.
    scv : float
        c^2 = Var[S] / S^2 >= 0.

    Returns
    -------
    QueueResult
        ``method="mgm.allen_cunneen.approximate"``; ``wait_probability`` is Erlang's C
        (the M/M/m value), ``empty_probability`` NaN (the approximation does not give it);
        no state probabilities.

    Raises
    ------
    UnstableModelError
        rho = a / m >= 1.

    Notes
    -----
    Measured error against :func:`qnmodel.simulate` (compiled simulator; per queue 10
    replications of about 100,000 completions, seeds 20260 + i) on 36 random queues:
    m uniform in 2..8, rho uniform in [0.3, 0.95], service laws in turn constant
    (c^2 = 0) and lognormal with c^2 = 0.25, 2.25 and 4, S = 10 ms. Mean response time R:
    median |error| 0.78 %, worst +9.2 % (m = 6, rho = 0.76, lognormal c^2 = 4; the
    simulation's 95 % half-width there is 4.0 %, its median over the family 0.49 %). The
    sign follows the law: constant service is slightly underestimated (-0.1 % to -0.8 %),
    lognormal c^2 = 2.25 and 4 overestimated (up to +5.8 % and +9.2 %): a lognormal's long
    tail costs less waiting than (1 + c^2) / 2 says. The mean waiting time W alone, small
    at light load, is off by a median 19 % and up to +83 % (m = 8, rho = 0.46,
    c^2 = 4); for W at rho < 0.6 prefer the simulator. Reproduce with
    ``tests/solvers/test_queue_approx.py::test_allen_cunneen_error_against_the_simulator``.
    """
    lam, S = as_arrival_rate(arrival_rate), as_service_time(service_time)
    m = as_servers(servers)
    c2 = as_scv(scv)
    a = lam * S
    if a >= m:
        raise unstable_error(lam, S, m, f"the M/G/{m} queue")
    C, W = mmm_wait(m, a, S)
    W = W * (1.0 + c2) / 2.0
    R = S + W
    return lossless_result("mgm.allen_cunneen.approximate", lam, S, c2, m, R, W, a, math.nan, C)


def queue_ammm(arrival_rate: Any, service_times: Any, *, method: str = "exact") -> QueueResult:
    """The asymmetric M/M/m queue: m exponential servers of different mean service times
    s_i, one FCFS queue; a job that finds several servers idle takes one of them at random.

    Parameters
    ----------
    arrival_rate : float or str
        lambda, jobs/s (>= 0).
    service_times : sequence of float or str
        s_i, the mean service time of server i, s (each > 0); m = its length >= 1.
    method : {"exact", "approximate"}
        ``"exact"``: the Markov chain of which servers are busy (below).
        ``"approximate"``: GNU Octave's ``qsammm``, the M/M/m queue of m equal servers of
        total rate sum_i 1 / s_i ([BGMT06] ch. 6).

    Returns
    -------
    QueueResult
        ``method="ammm"`` or ``"ammm.approximate"``. ``service_time`` is
        m / sum_i (1 / s_i) (the mean service time of the equal servers with the same
        total rate), ``utilization`` rho = lambda / sum_i (1 / s_i); ``busy_servers`` is
        the mean number of busy servers, sum_i U_i (exact; m rho in the approximation);
        ``server_utilization`` the U_i of each server (exact only).

    Raises
    ------
    UnstableModelError
        lambda >= sum_i 1 / s_i.
    InvalidModelError
        ``"exact"`` with more than :data:`MAX_AMMM_EXACT_SERVERS` servers (2^m states).

    Notes
    -----
    *Exact*: the state is the set B of busy servers while some server is idle (2^m - 1
    sets), then "all busy with j waiting". An arrival to B takes each idle server with
    probability 1 / (m - |B|); server i finishes at rate mu_i = 1 / s_i. All busy, the
    queue is a birth-death chain of rates lambda and mu = sum mu_i, so
    p(all busy, j) = p(all busy, 0) r^j with r = lambda / mu; the 2^m balance equations of
    the sets (the full set standing for all levels j) are solved by sparse LU, and

        L = sum_B |B| p_B + p_F (m / (1 - r) + r / (1 - r)^2),   Lq = p_F r / (1 - r)^2,

    (p_F = p(all busy, 0)), R = L / lambda, W = Lq / lambda; at lambda = 0 the limits
    R = mean of the s_i (a lone job takes a random server), W = 0. Checked against Ciw
    simulation (``tests/solvers/test_queue_approx.py``), and it reduces to M/M/m when the
    servers are equal.

    *Approximate* (Octave ``qsammm``): measured against the exact chain on 400 random
    queues (m uniform in 2..6, s_i = 10 ms x exp(uniform(log 0.2, log 5)), rho uniform in
    [0.05, 0.95], seed 20261): mean response time median error -12.4 %, worst -61.4 %,
    never above the exact value (at light load a job meets a random server, of mean time
    mean(s_i), while the approximation serves it in m / sum 1 / s_i, the harmonic mean);
    at rho >= 0.8 the worst is -10.8 %. Reproduce with
    ``tests/solvers/test_queue_approx.py::test_octave_asymmetric_approximation_error``.
    """
    lam = as_arrival_rate(arrival_rate)
    s = as_quantities(service_times, "service_times", "time")
    meth = as_choice(method, "method", AMMM_METHODS)
    if s.size == 0:
        raise InvalidModelError("service_times is empty: give one mean service time per server")
    if (s <= 0).any():
        i = int(np.flatnonzero(s <= 0)[0])
        raise InvalidModelError(f"service_times[{i}] must be > 0, got {float(s[i])!r}")
    m = s.size
    mu = 1.0 / s
    total = float(mu.sum())
    S_eq = m / total
    if lam >= total:
        raise unstable_error(lam, S_eq, m, f"the asymmetric M/M/{m} queue")
    if meth == "approximate":
        return _ammm_octave(lam, S_eq, m)
    if m > MAX_AMMM_EXACT_SERVERS:
        raise InvalidModelError(
            f"service_times has {m} servers: the exact asymmetric M/M/m chain has 2^m "
            f"states and is solved for at most {MAX_AMMM_EXACT_SERVERS} servers; use "
            "method='approximate' (its error is in the docstring), or group equal servers"
        )
    return _ammm_exact(lam, s, mu)


def _ammm_octave(lam: float, S: float, m: int) -> QueueResult:
    a = lam * S
    C, W = mmm_wait(m, a, S)
    R = S + W
    p0 = Distribution(a, float(m), math.inf, None).p0()
    return lossless_result("ammm.approximate", lam, S, 1.0, m, R, W, a, p0, C)


def _ammm_exact(lam: float, s: np.ndarray, mu: np.ndarray) -> QueueResult:
    from scipy.sparse import coo_matrix
    from scipy.sparse.linalg import spsolve

    m = s.size
    n = 1 << m
    full = n - 1
    total = float(mu.sum())
    r = lam / total
    masks = np.arange(n, dtype=np.int64)
    busy = ((masks[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)  # (n, m)
    nbusy = busy.sum(axis=1)
    rows, cols, vals = [], [], []
    # departures: server i busy in B -> B \ {i} at mu_i (from the full set too: j = 0 level)
    for i in range(m):
        src = masks[busy[:, i]]
        rows.append(src)
        cols.append(src & ~(1 << i))
        vals.append(np.full(src.size, mu[i]))
    # arrivals: B not full -> B + {i}, i idle, at lambda / (m - |B|)
    if lam > 0:
        for i in range(m):
            src = masks[~busy[:, i]]
            rows.append(src)
            cols.append(src | (1 << i))
            vals.append(lam / (m - nbusy[src]))
    rows_a, cols_a, vals_a = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    out = np.bincount(rows_a, weights=vals_a, minlength=n)
    # balance: sum_B p_B Q[B, B'] = 0, with Q[B, B] = -out(B); transpose to solve A p = 0
    A = coo_matrix(
        (
            np.concatenate([vals_a, -out]),
            (np.concatenate([cols_a, masks]), np.concatenate([rows_a, masks])),
        ),
        shape=(n, n),
    ).tolil()
    # replace one balance equation by the normalisation sum_B p_B + p_F r / (1 - r) = 1
    weight = np.ones(n)
    weight[full] = 1.0 / (1.0 - r)
    A[0, :] = weight
    rhs = np.zeros(n)
    rhs[0] = 1.0
    p = np.asarray(spsolve(A.tocsc(), rhs), dtype=np.float64)
    pF = float(p[full])
    part = p.copy()
    part[full] = 0.0
    L = float(nbusy @ part) + pF * (m / (1.0 - r) + r / ((1.0 - r) * (1.0 - r)))
    Lq = pF * r / ((1.0 - r) * (1.0 - r))
    U = busy[:full].T.astype(np.float64) @ p[:full] + pF / (1.0 - r)
    if lam > 0:
        R, W = L / lam, Lq / lam
    else:
        R, W = float(s.mean()), 0.0
    S_eq = m / total
    return QueueResult(
        method="ammm",
        arrival_rate=lam,
        service_time=S_eq,
        scv=1.0,
        servers=float(m),
        capacity=math.inf,
        throughput=lam,
        loss_probability=0.0,
        utilization=lam / total,
        busy_servers=float(U.sum()),
        queue_length=L,
        waiting_jobs=Lq,
        response_time=R,
        waiting_time=W,
        empty_probability=float(p[0]),
        wait_probability=pF / (1.0 - r),
        server_utilization=U,
    )
