"""Single queues in isolation, exact: M/M/1, M/M/m, M/M/inf (M/G/inf), M/M/1/K,
M/M/m/K (and the loss system M/G/m/m), M/G/1 and M/H_m/1; the front door
:func:`single_queue` dispatches on servers, capacity and service variability.

One Poisson stream of rate lambda reaches m servers of mean service time S (offered load
a = lambda S, per-server utilisation rho = a / m) with room for K jobs in all (K = inf:
no limit).

* **Exponential service** ([Kle75] ch. 3; [BGMT98] sec. 6.3-6.6): the number of jobs is a
  birth-death process with birth rate lambda (below K) and death rate min(n, m) / S, so

      p_n = p_0 prod_{i=1}^{n} a / min(i, m),   n = 0..K,

  normalised to 1. With K = inf it needs rho < 1; M/M/m then has Erlang's C formula
  C(m, a) (:func:`~qnmodel.solvers.open.erlang_c`) as the probability of waiting, and

      W = C S / (m - a),   R = S + W,   L = lambda R,   Lq = lambda W.

  M/M/1: p_n = (1 - rho) rho^n, R = S / (1 - rho). M/M/inf: p_n Poisson of mean a,
  R = S. Finite K: a job arriving at a full system is lost (p_K, by PASTA), the carried
  rate is X = lambda (1 - p_K) and R = L / X (Little's law on accepted jobs).
* **General service** with squared coefficient of variation c^2 = Var[S] / S^2, one
  server: the Pollaczek-Khinchine mean value formula ([Kle75] sec. 5.5; [Kle76] sec. 1.7)

      W = lambda E[S^2] / (2 (1 - rho)) = rho S (1 + c^2) / (2 (1 - rho)),   p_0 = 1 - rho.

  The hyperexponential law H_m (phase j with probability alpha_j, exponential of mean
  s_j) has E[S] = sum alpha_j s_j and E[S^2] = 2 sum alpha_j s_j^2.
* **Insensitive systems**: M/G/inf and the loss system M/G/m/m have the state
  probabilities and means of their exponential versions for any service law of mean S
  ([Iv15] on Erlang's loss system and its insensitivity; [Kle75] sec. 3.4, 3.7), so
  :func:`single_queue` solves them exactly at any ``scv``.

Notes on numerics
-----------------
The state probabilities are built in log space, log w_n = sum_{i<=n} log(a / min(i, m)),
summed outward from the most likely state (so the running sums stay small where the mass
is) and normalised there; no a^n / n! is formed, so nothing overflows at any m, K or a. With
K = inf only the states that carry mass are enumerated: the Poisson-like bulk
a +- (40 sqrt(a) + 60) (outside it the mass is below e^-140 of the total) and, for n > m,
the geometric tail p_m rho^(n - m), summed in closed form. Means of infinite queues come
from the closed forms (Erlang C by the recursion of :func:`~qnmodel.solvers.open.erlang_b`);
of finite ones from sums over p_n, the waiting jobs summed directly (never L minus busy
servers). GNU Octave's ``queueing`` computes M/M/m/K by solving the CTMC's linear system.

Differences from GNU Octave ``queueing`` 1.2.7 (its ``qsmg1``, ``qsmh1``): ``qsmg1``
returns p_0 = exp(-rho); the M/G/1 value is 1 - rho (the fraction of time the server
idles, by the utilisation law; [Kle75] sec. 5.5). ``qsmh1`` takes the second moment of
the hyperexponential law as sum alpha_j / mu_j^2, half its value 2 sum alpha_j / mu_j^2
(with one phase it returns M/D/1, not M/M/1); :func:`queue_mh1` uses the right moment.
Octave also refuses lambda = 0, answered here by the limits (R = S, p_0 = 1).

References
----------
.. [Kle75] L. Kleinrock, *Queueing Systems, Volume 1: Theory*, Wiley 1975, ch. 3
   (birth-death queues: sec. 3.2 M/M/1, 3.4 M/M/inf, 3.5 M/M/m, 3.6 M/M/1/K, 3.7
   M/M/m/m), ch. 4 (the method of stages: hyperexponential laws) and sec. 5.5 (M/G/1,
   the Pollaczek-Khinchine mean-value formula).
.. [Kle76] L. Kleinrock, *Queueing Systems, Volume 2: Computer Applications*, Wiley 1976,
   sec. 1.7.
.. [BGMT98] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and Markov
   Chains*, Wiley 1998, sec. 6.3 (M/M/1), 6.4 (M/M/inf), 6.5 (M/M/m), 6.6 (M/M/m/K).
.. [Iv15] V. B. Iversen, *Teletraffic Engineering and Network Planning*, DTU Fotonik, 2015
   (Erlang's loss system and its insensitivity).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .._validate import as_probability, as_quantities, as_scv, as_servers
from ..errors import InvalidModelError, InvalidTypeError
from ..results.queue import QueueResult
from ._queue_common import (
    Distribution,
    as_arrival_rate,
    as_service_time,
    as_states,
    lossless_result,
    make_result,
    mmm_wait,
    unstable_error,
)
from .queue_finite import capacity_input, finite_queue

__all__ = [
    "single_queue",
    "queue_mm1",
    "queue_mmm",
    "queue_mminf",
    "queue_mg1",
    "queue_mh1",
]


# --------------------------------------------------------------------------------------
# Exact kernels
# --------------------------------------------------------------------------------------


def queue_mm1(arrival_rate: Any, service_time: Any, *, states: Any = None) -> QueueResult:
    """The M/M/1 queue: one exponential server, unlimited room.

    Parameters
    ----------
    arrival_rate : float or str
        lambda, jobs/s (>= 0; a number in 1/s or a string such as ``"80/s"``,
        ``"40 kHz"``).
    service_time : float or str
        Mean service time S, s (> 0; ``"10 ms"``).
    states : sequence of int, optional
        Numbers of jobs k >= 0 whose probabilities p_k = (1 - rho) rho^k are wanted
        (``range(11)`` for k = 0..10).

    Returns
    -------
    QueueResult
        ``method="mm1"``: U = rho = lambda S, L = rho / (1 - rho), R = S / (1 - rho),
        W = rho S / (1 - rho), p_0 = 1 - rho, wait probability rho.

    Raises
    ------
    UnstableModelError
        rho >= 1.

    References
    ----------
    [Kle75] sec. 3.2; [BGMT98] sec. 6.3 (GNU Octave ``qsmm1``).
    """
    lam, S = as_arrival_rate(arrival_rate), as_service_time(service_time)
    ks = as_states(states, math.inf)
    rho = lam * S
    if rho >= 1.0:
        raise unstable_error(lam, S, 1, "the M/M/1 queue")
    R = S / (1.0 - rho)
    W = rho * R
    pk = None if ks is None else (1.0 - rho) * rho ** ks.astype(np.float64)
    return lossless_result("mm1", lam, S, 1.0, 1, R, W, rho, 1.0 - rho, rho, ks, pk)


def queue_mmm(
    arrival_rate: Any, service_time: Any, servers: int, *, states: Any = None
) -> QueueResult:
    """The M/M/m queue: m identical exponential servers sharing one FCFS queue.

    Parameters
    ----------
    arrival_rate : float or str
        lambda, jobs/s (>= 0).
    service_time : float or str
        Mean service time S of one server, s (> 0).
    servers : int
        m >= 1.
    states : sequence of int, optional
        Numbers of jobs k >= 0 whose probabilities p_k are wanted:
        p_k = p_0 a^k / k! for k <= m and p_m rho^(k-m) beyond.

    Returns
    -------
    QueueResult
        ``method="mmm"``: U = rho = a / m, wait probability C = Erlang's C(m, a),
        W = C S / (m - a), R = S + W, L = lambda R, Lq = lambda W,
        p_0 = [sum_{k<m} a^k / k! + a^m / (m! (1 - rho))]^-1.

    Raises
    ------
    UnstableModelError
        rho >= 1.

    Notes
    -----
    C comes from Erlang B's recursion (stable for any m, see
    :func:`~qnmodel.solvers.open.erlang_b`); p_0 and p_k from the log-space birth-death
    weights (module notes). Tested against 50-digit arithmetic.

    References
    ----------
    [Kle75] sec. 3.5; [BGMT98] sec. 6.5 (GNU Octave ``qsmmm``, ``erlangc``).
    """
    lam, S = as_arrival_rate(arrival_rate), as_service_time(service_time)
    m = as_servers(servers)
    ks = as_states(states, math.inf)
    a = lam * S
    if a >= m:
        raise unstable_error(lam, S, m, f"the M/M/{m} queue")
    C, W = mmm_wait(m, a, S)
    R = S + W
    dist = Distribution(a, float(m), math.inf, ks)
    pk = None if ks is None else dist.prob(ks)
    return lossless_result("mmm", lam, S, 1.0, m, R, W, a, dist.p0(), C, ks, pk)


def queue_mminf(
    arrival_rate: Any, service_time: Any, *, scv: Any = 1.0, states: Any = None
) -> QueueResult:
    """The infinite-server queue M/M/inf (and M/G/inf): every job is served at once.

    Parameters
    ----------
    arrival_rate : float or str
        lambda, jobs/s (>= 0).
    service_time : float or str
        Mean service time S, s (> 0).
    scv : float
        Squared coefficient of variation of the service time (>= 0). The results do not
        depend on it (insensitivity: the number of busy servers of M/G/inf is Poisson of
        mean a for any service law, [Iv15]): it is recorded, and the method is
        ``"mginf"`` when it is not 1.
    states : sequence of int, optional
        k >= 0 whose p_k = e^-a a^k / k! (Poisson of mean a = lambda S) are wanted.

    Returns
    -------
    QueueResult
        ``method="mminf"`` (``"mginf"``): R = S, W = 0, L = a = busy servers =
        ``utilization`` (the mean busy servers, as for delay stations), p_0 = e^-a,
        wait probability 0. Always stable.

    References
    ----------
    [Kle75] sec. 3.4; [BGMT98] sec. 6.4 (GNU Octave ``qsmminf``).
    """
    lam, S = as_arrival_rate(arrival_rate), as_service_time(service_time)
    c2 = as_scv(scv)
    ks = as_states(states, math.inf)
    a = lam * S
    pk = None if ks is None else Distribution(a, math.inf, math.inf, ks).prob(ks)
    return make_result(
        "mminf" if c2 == 1.0 else "mginf",
        lam,
        S,
        c2,
        math.inf,
        math.inf,
        throughput=lam,
        loss_probability=0.0,
        utilization=a,
        busy_servers=a,
        queue_length=a,
        waiting_jobs=0.0,
        response_time=S,
        waiting_time=0.0,
        empty_probability=math.exp(-a),
        wait_probability=0.0,
        states=ks,
        state_probabilities=pk,
    )


def queue_mg1(arrival_rate: Any, service_time: Any, scv: Any) -> QueueResult:
    """The M/G/1 queue: one server, general service law of mean S and SCV c^2, FCFS.

    Parameters
    ----------
    arrival_rate : float or str
        lambda, jobs/s (>= 0).
    service_time : float or str
        Mean service time S, s (> 0).
    scv : float
        c^2 = Var[S] / S^2 >= 0 (0: constant, M/D/1; 1: exponential, M/M/1).

    Returns
    -------
    QueueResult
        ``method="mg1"``: Pollaczek-Khinchine, W = rho S (1 + c^2) / (2 (1 - rho)),
        R = S + W, L = lambda R, Lq = lambda W, U = rho = lambda S, p_0 = 1 - rho, wait
        probability rho (PASTA). No state probabilities (they depend on the whole law).

    Raises
    ------
    UnstableModelError
        rho >= 1.

    References
    ----------
    [Kle75] sec. 5.5 (the Pollaczek-Khinchine mean-value formula); [Kle76] sec. 1.7
    (GNU Octave ``qsmg1``, whose p_0 = exp(-rho) is not M/G/1's 1 - rho).
    """
    lam, S = as_arrival_rate(arrival_rate), as_service_time(service_time)
    c2 = as_scv(scv)
    return _pollaczek_khinchine("mg1", lam, S, S * S * (1.0 + c2), c2)


def queue_mh1(arrival_rate: Any, phase_service_times: Any, phase_probabilities: Any) -> QueueResult:
    """The M/H_m/1 queue: hyperexponential service, one server.

    A job's service is, with probability alpha_j, exponential of mean s_j (phase j,
    j = 1..m); then E[S] = sum alpha_j s_j, E[S^2] = 2 sum alpha_j s_j^2 and the
    Pollaczek-Khinchine formula of :func:`queue_mg1` applies with
    c^2 = E[S^2] / E[S]^2 - 1 >= 1.

    Parameters
    ----------
    arrival_rate : float or str
        lambda, jobs/s (>= 0).
    phase_service_times : sequence of float or str
        s_j, the mean of phase j, s (each > 0).
    phase_probabilities : sequence of float
        alpha_j in [0, 1], summing to 1 (within 1e-12).

    Returns
    -------
    QueueResult
        ``method="mh1"`` with ``service_time`` E[S] and ``scv`` c^2.

    Notes
    -----
    GNU Octave's ``qsmh1(lambda, mu, alpha)`` takes rates mu_j = 1 / s_j and uses
    sum alpha_j / mu_j^2 as the second moment, half the hyperexponential's; its results
    are those of an M/G/1 queue with that smaller variance (one phase gives M/D/1).

    References
    ----------
    [Kle75] ch. 4 (the method of stages: hyperexponential laws) and sec. 5.5
    (Pollaczek-Khinchine).
    """
    lam = as_arrival_rate(arrival_rate)
    s = as_quantities(phase_service_times, "phase_service_times", "time")
    if isinstance(phase_probabilities, str | bytes) or not hasattr(phase_probabilities, "__iter__"):
        raise InvalidTypeError(
            f"phase_probabilities must be a sequence of probabilities summing to 1, got "
            f"{phase_probabilities!r}"
        )
    alpha = np.asarray(
        [as_probability(v, f"phase_probabilities[{i}]") for i, v in enumerate(phase_probabilities)],
        dtype=np.float64,
    )
    if s.size == 0:
        raise InvalidModelError("phase_service_times is empty: give at least one phase")
    if alpha.size != s.size:
        raise InvalidModelError(
            f"phase_probabilities has {alpha.size} entries but phase_service_times has "
            f"{s.size}: give one probability per phase"
        )
    if (s <= 0).any():
        i = int(np.flatnonzero(s <= 0)[0])
        raise InvalidModelError(f"phase_service_times[{i}] must be > 0, got {float(s[i])!r}")
    total = float(alpha.sum())
    if abs(total - 1.0) > 1e-12:
        raise InvalidModelError(
            f"phase_probabilities must sum to 1, they sum to {total!r}: divide them by "
            "their sum if they are weights"
        )
    S = float(alpha @ s)
    second = 2.0 * float(alpha @ (s * s))
    return _pollaczek_khinchine("mh1", lam, S, second, second / (S * S) - 1.0)


def _pollaczek_khinchine(method: str, lam: float, S: float, second: float, c2: float):
    rho = lam * S
    if rho >= 1.0:
        raise unstable_error(lam, S, 1, f"the {'M/G/1' if method == 'mg1' else 'M/H/1'} queue")
    W = lam * second / (2.0 * (1.0 - rho))
    R = S + W
    return lossless_result(method, lam, S, c2, 1, R, W, rho, 1.0 - rho, rho)


# --------------------------------------------------------------------------------------
# Front door
# --------------------------------------------------------------------------------------


def _servers(servers: Any) -> int | float:
    if isinstance(servers, float | np.floating) and math.isinf(servers) and servers > 0:
        return math.inf
    if isinstance(servers, bool | np.bool_) or not isinstance(servers, numbers.Real):
        raise InvalidTypeError(
            f"servers must be an integer >= 1, or math.inf for an infinite-server (delay) "
            f"station, got {servers!r} of type {type(servers).__name__}"
        )
    try:
        return as_servers(servers)
    except InvalidModelError:
        raise InvalidModelError(
            f"servers must be an integer >= 1, or math.inf for an infinite-server (delay) "
            f"station, got {servers!r}"
        ) from None


def single_queue(
    arrival_rate: Any,
    service_time: Any,
    servers: Any = 1,
    capacity: Any = None,
    scv: Any = 1.0,
    *,
    states: Any = None,
    exact_only: bool = False,
) -> QueueResult:
    """One queue in isolation: Poisson arrivals, m servers, optional capacity K, service of
    mean S and squared coefficient of variation ``scv``.

    Dispatches to the kernel that solves the case (the ``method`` of the result says which):

    * ``servers=math.inf`` (no capacity), any ``scv``: :func:`queue_mminf` (M/G/inf,
      insensitive to the service law);
    * a ``capacity`` K >= m with ``scv=1``:
      :func:`~qnmodel.solvers.queue_finite.queue_mmmk` (M/M/m/K; one server: M/M/1/K);
      K = m with any ``scv``: the same kernel (the loss system M/G/m/m, insensitive);
    * one server, no capacity: :func:`queue_mm1` (``scv=1``) or :func:`queue_mg1`
      (Pollaczek-Khinchine);
    * m > 1 servers, no capacity: :func:`queue_mmm` (``scv=1``, Erlang C) or
      :func:`~qnmodel.solvers.queue_approx.queue_mgm` (approximate: Allen-Cunneen).

    Parameters
    ----------
    arrival_rate : float or str
        lambda, offered jobs/s (>= 0; ``"40 kHz"``, ``"2000/s"``).
    service_time : float or str
        Mean service time S of one job at one server, s (> 0; ``"5 ms"``).
    servers : int or math.inf
        m, an integer >= 1, or ``math.inf`` for an infinite-server (delay) station.
    capacity : int, optional
        K, the most jobs in the system in service included (K >= m); None: no limit.
    scv : float
        Var[S] / S^2 >= 0: 1 exponential (default), 0 constant, > 1 more variable.
    states : sequence of int, optional
        Numbers of jobs k whose probabilities p_k are wanted (``range(21)``); with a finite
        capacity all of 0..K are returned by default. Exponential service, the loss system
        and M/G/inf only.
    exact_only : bool
        Refuse (rather than approximate) a case without an exact solution here.

    Returns
    -------
    QueueResult

    Raises
    ------
    UnstableModelError
        No capacity limit and rho = lambda S / m >= 1; the message gives m / S, the largest
        sustainable rate.
    InvalidModelError
        Capacity below the servers; capacity with scv != 1 and K > m (M/G/m/K: not
        supported, the message says what is); non-integer servers or capacity; negative or
        NaN ``scv``; state probabilities of a non-exponential queue other than M/G/inf and
        M/G/m/m; an approximation with ``exact_only=True``.
    InvalidTypeError, UnitError
        A value of the wrong type or unit (``"5 MB"`` as a time).

    Examples
    --------
    >>> import qnmodel as qn
    >>> r = qn.single_queue("80/s", "10 ms")  # M/M/1, rho = 0.8
    >>> round(r.response_time, 6)
    0.05
    >>> r = qn.single_queue("80/s", "10 ms", scv=0.0)  # M/D/1
    >>> round(r.response_time, 6)
    0.03
    """
    m = _servers(servers)
    c2 = as_scv(scv)
    if not isinstance(exact_only, bool):
        raise InvalidTypeError(f"exact_only must be True or False, got {exact_only!r}")
    if capacity is not None and not (
        isinstance(capacity, float | np.floating) and math.isinf(capacity) and capacity > 0
    ):
        if math.isinf(m):
            raise InvalidModelError(
                f"capacity = {capacity!r} with servers = inf: an infinite-server station "
                "never waits or loses a job; give capacity=None, or a finite number of "
                "servers"
            )
        K = capacity_input(capacity, int(m))
        return finite_queue(
            arrival_rate, service_time, m, K, c2, states, "mm1k" if m == 1 else "mmmk"
        )
    if math.isinf(m):
        return queue_mminf(arrival_rate, service_time, scv=c2, states=states)
    if c2 == 1.0:
        if m == 1:
            return queue_mm1(arrival_rate, service_time, states=states)
        return queue_mmm(arrival_rate, service_time, m, states=states)
    if states is not None:
        kind = "M/G/1" if m == 1 else f"M/G/{m}"
        raise InvalidModelError(
            f"states: the state probabilities of an {kind} queue with scv = {c2!r} depend "
            "on the whole service-time law, not on its mean and SCV; single_queue gives "
            "them for exponential service (scv=1.0), infinite servers and the loss system "
            "(capacity = servers)"
        )
    if m == 1:
        return queue_mg1(arrival_rate, service_time, c2)
    if exact_only:
        raise InvalidModelError(
            f"exact_only=True, but the M/G/{m} queue (servers = {m}, scv = {c2!r}) has no "
            "exact mean-value formula here: single_queue would answer with the Allen-Cunneen "
            "approximation (method 'mgm.allen_cunneen.approximate'); exact cases are one "
            "server (M/G/1), exponential service (scv=1.0), infinite servers, or the loss "
            "system (capacity = servers); qnmodel.simulate simulates M/G/m"
        )
    from .queue_approx import queue_mgm

    return queue_mgm(arrival_rate, service_time, m, c2)
