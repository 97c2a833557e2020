"""A subsystem with a population limit, solved by a flow-equivalent server.

A software server with T threads (the NFS server's ``nfsd`` pool): a request takes a thread,
holds it while it uses the stations of the subsystem S (CPU, disks), and gives it back when
it leaves S; requests that find every thread taken wait for one in a FCFS queue. A device
with a queue-depth limit is the same model with S one station and T the depth. Outside S
are the clients' think time Z and any other stations (a network link, say).

Method (Chandy-Herzog-Woo's Norton theorem, [CHW75]; the memory-constraint model of
[LZGS] ch. 9):

1. Solve S alone, closed, with i = 1..T requests and no think time, by exact MVA
   (:func:`qnmodel.solvers.mva_ld_general.ld_general_arrays`: single- and multi-server
   queues, delays, rate curves): X_S(i) and Q_k^S(i).
2. Replace S and its thread queue by one load-dependent station, the flow-equivalent
   server (FES), which with j requests serves at rate X_S(min(j, T)): a request beyond the
   T-th waits, and the subsystem never holds more than T.
3. Solve the outer network (Z, the stations outside S, the FES) by exact load-dependent
   MVA, and its normalising constant for the marginal p(j | n) of the FES ([Buz73]):
   p(j | n) = f(j) G_O(n - j) / G(n), f(j) = prod_{i<=j} 1 / X_S(min(i, T)), with G_O the
   constant of the outer stations and Z. Everything inside S is the conditional solution
   weighted by that marginal: Q_k(n) = sum_j p(j | n) Q_k^S(min(j, T)).

Exactness and measured error
----------------------------
The Norton theorem is exact for product-form networks ([CHW75] sec. 3; [BGMT] sec. 8.4).
A population limit breaks product form ([LZGS] ch. 9 solves memory constraints this way as
an approximation), so the answer is **exact** (``method = "fes (exact: flow-equivalent
server)"``) only where the limit leaves the product form intact:

* n <= T at every population solved (T >= N: the limit never binds; equal to
  :func:`qnmodel.mva` to 1e-12);
* a subsystem of one station with a demand (a device's queue-depth limit, whatever its
  servers or rate curve): the pool and the device are one load-dependent station of rate
  r(min(j, T)) / D, the curve cut at the depth;
* no think time and no outside station with a demand (the pool always holds n, and the
  subsystem is the closed network of min(n, T) requests).

Otherwise it is **approximate** (``method = "fes (approximate: flow-equivalent
server)"``): a request's time inside a subsystem of several stations is not exponential,
and which station it is at is correlated with how many requests wait (with T = 1 the pool
is the finite-source M/G/1//N queue, whose throughput depends on the service law, not
only on its mean: the FES gives the M/M/1//N answer with mean sum_{k in S} D_k). The tests'
Markov chain of the whole network measures it (``tests/accuracy/thread_pool.py``: 200
random closed cases of 2-3 single-server stations inside, 1-3 threads, every population
T < n <= 8, think time 0.2-3 x the total demand; 120 random open cases with a capacity
T <= C <= T + 6). Relative error of the answer, in %, for a request that visits the
stations once each in series (CPU then disk: its time inside is less variable than an
exponential) and for random routing inside (first station drawn, leaving with
probability 0.2-1 after each service: mostly more variable):

| family | points | median | 90th pct. | worst | sign |
|---|--:|--:|--:|--:|---|
| closed X, in series | 208 | 0.75 | 1.99 | 3.09 | always low |
| closed R, in series | 208 | 1.37 | 3.97 | 6.54 | always high |
| open X (capacity), in series | 37 | 1.07 | 3.42 | 4.21 | low in 95 % |
| open R (capacity), in series | 37 | 1.42 | 8.60 | 16.8 | high in 68 % |
| closed X, random routing | 489 | 0.46 | 2.64 | 16.1 | always high |
| closed R, random routing | 489 | 0.82 | 5.04 | 25.7 | always low |
| open X (capacity), random routing | 83 | 1.10 | 5.17 | 27.3 | high in 94 % |
| open R (capacity), random routing | 83 | 0.83 | 9.05 | 33.3 | high in 40 % |

So for the usual server (each request uses the CPU and a disk once) the FES is
conservative: it predicts a little less throughput and a little more response time than
the pool delivers, within 3 % on X. The error falls as the thread count grows (closed X,
worst in series: 3.1 % with T = 1, 1.8 % with T = 2, 1.3 % with T = 3; random routing:
16 %, 4.3 %, 3.2 %). With a highly variable time inside (a request that sometimes loops
many times) the FES is optimistic and, with one or two threads, its error can pass 10 %:
simulate such a pool.

The open variant (Poisson arrivals at rate lambda into the pool, optionally a capacity C on
the requests at the pool) is the birth-death process with birth rate lambda and death rate
X_S(min(j, T)): exact for one station inside (or T = infinity), approximate otherwise on
the same grounds (T = 1 is M/G/1, the FES its M/M/1).

References
----------
.. [CHW75] K. M. Chandy, U. Herzog, L. Woo, "Parametric analysis of queuing networks", IBM
   J. Res. Dev. 19(1):36-42, 1975, doi:10.1147/rd.191.0036 (the Norton theorem).
.. [LZGS] E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative System
   Performance*, Prentice-Hall 1984, ch. 8 (flow-equivalent service centres) and ch. 9
   (memory constraints: a population limit on a subsystem, solved by a flow-equivalent
   centre).
.. [BGMT] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and Markov
   Chains*, 2nd ed., Wiley 2006, sec. 8.4 (flow-equivalent server method).
.. [Buz73] J. P. Buzen, "Computational algorithms for closed queueing networks with
   exponential servers", CACM 16(9):527-531, 1973, doi:10.1145/362342.362345.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validate import (
    as_population,
    as_positive_int,
    as_quantity,
    check_memory,
    check_not_subnormal,
    check_time_scale,
)
from ..errors import InvalidModelError, InvalidTypeError, UnstableModelError
from ..model import Network
from ..results.threadpool import OpenThreadPoolResult, ThreadPoolResult
from ._mva_core import single_class
from .mva_ld import log_convolve
from .mva_ld_general import ld_general_arrays, ld_peak_capacity, ld_rates

__all__ = ["thread_pool", "thread_pool_open", "THREAD_POOL_METHOD", "THREAD_POOL_APPROXIMATE"]

THREAD_POOL_METHOD = "fes (exact: flow-equivalent server)"
THREAD_POOL_APPROXIMATE = "fes (approximate: flow-equivalent server)"


def _network(net: Any, solver: str) -> Network:
    if not isinstance(net, Network):
        raise InvalidTypeError(f"{solver}: net must be a Network, got {type(net).__name__}")
    cm = net.compiled
    if not net.single and cm.C > 1:
        raise InvalidModelError(
            f"{solver} solves one class; this network has {cm.C} classes "
            f"{list(cm.class_names)}: with several classes sharing the threads the "
            "flow-equivalent server is not exact and no qnmodel solver takes a population "
            "limit for them; merge the classes into one (demands weighted by each class's "
            "share of the throughput) for an approximation"
        )
    return net


def _subsystem_mask(net: Network, subsystem: Any) -> np.ndarray:
    names = net.names
    if subsystem is None:
        return np.ones(len(names), dtype=bool)
    if isinstance(subsystem, str):
        subsystem = [subsystem]
    if not isinstance(subsystem, Sequence) or not subsystem:
        raise InvalidModelError(
            f"subsystem must be a non-empty list of station names, got {subsystem!r}"
        )
    mask = np.zeros(len(names), dtype=bool)
    for s in subsystem:
        if not isinstance(s, str):
            raise InvalidTypeError(
                f"subsystem must hold station names (str), got {s!r} of type {type(s).__name__}"
            )
        if s not in names:
            raise InvalidModelError(
                f"subsystem names {s!r}, which is not a station of the network; its stations "
                f"are {list(names)}"
            )
        k = names.index(s)
        if mask[k]:
            raise InvalidModelError(f"subsystem names station {s!r} twice; name it once")
        mask[k] = True
    return mask


def _subsystem_curve(D, delay, rates, inside, T: int):
    """X_S(i) (T,) and Q_k^S(i) (T, K_S) of the subsystem alone, i = 1..T ([RL80] MVA)."""
    Ds = D[inside]
    if not np.any(Ds > 0):
        names = "its stations"
        raise InvalidModelError(
            f"the subsystem has no demand (every D_k of {names} is 0): a request would hold "
            "a thread for no time; give a station of the subsystem a demand > 0"
        )
    check_not_subnormal(Ds.max(), "the subsystem's largest demand", "the thread pool")
    rs = [rates[k] for k in np.flatnonzero(inside)]
    X, Q, _ = ld_general_arrays(Ds, delay[inside], 0.0, T, rs, "all")
    return X, Q


def _log_fes_factor(Xs: np.ndarray, N: int) -> np.ndarray:
    """log f(j) = -sum_{i<=j} log X_S(min(i, T)), j = 0..N.

    A short cumulative sum up to T, then one multiplication per j (f(j) = f(T) X_S(T)^(T-j)),
    never a long running sum: log f(j) keeps full relative precision at any N.
    """
    T = min(Xs.size, N)
    out = np.empty(N + 1)
    out[0] = 0.0
    out[1 : T + 1] = -np.cumsum(np.log(Xs[:T]))
    if N > T:
        out[T + 1 :] = out[T] - math.log(float(Xs[T - 1])) * np.arange(1, N - T + 1)
    return out


def thread_pool(net: Network, N: Any, threads: Any, subsystem: Any = None) -> ThreadPoolResult:
    """Mean values of a closed network whose subsystem admits at most T requests.

    Parameters
    ----------
    net : Network
        One closed class: think time Z (s) and stations (queues with one or m servers or a
        rate curve, delays; FCFS, PS or LCFS-PR) with demands D_k (s). A network with one
        closed class is taken as that class.
    N : int
        Largest population (>= 1); every n = 1..N is computed.
    threads : int
        T >= 1, the most requests inside the subsystem at once (threads of the server, or
        a device's queue depth).
    subsystem : str or sequence of str, optional
        Names of the stations a request holds a thread at (default: every station).

    Returns
    -------
    ThreadPoolResult
        X(n), R(n) split into thread wait and time inside, threads busy, requests waiting
        for a thread, and Q_k, U_k, R_k of every station (glossary in
        :mod:`qnmodel.results.threadpool`).

    Raises
    ------
    InvalidModelError
        Several classes (module docstring), an open class, non-product-form stations
        (non-exponential FCFS, priorities, finite capacities, fork-join: the features that
        :func:`qnmodel.mva` refuses), a subsystem naming unknown stations or without demand,
        N or T < 1.

    Notes
    -----
    The flow-equivalent server (module docstring; [CHW75], [LZGS] ch. 9). Exact where the
    limit keeps product form -- T >= N (then equal to :func:`qnmodel.mva`), one station
    inside (a queue-depth limit), or no think time and nothing outside -- and labelled
    approximate otherwise, with the error measured against the Markov chain of the whole
    network in the module docstring (CPU then disk: X low by 0.75 % median, 3.1 %
    worst). With T = 1 the FES is
    one server of demand sum_{k in S} D_k (the M/M/1//N answer); the true pool is
    M/G/1//N with that mean service time.

    Numerics: the outer network is solved by the subtraction-free load-dependent MVA
    (:func:`qnmodel.mva_ld_general`); the marginal p(j | n) from log-space convolutions of
    positive terms ([Buz73]): explicitly for j < T, and for j >= T, where the FES rate is
    constant, by two running sums of positive terms (the tail of the pool is geometric).
    Cost O(T K_S) for the subsystem and O(N (K + T)) for the rest.

    Examples
    --------
    >>> import qnmodel as qn
    >>> net = qn.Network([qn.Station("cpu", "1 ms"), qn.Station("disk", "8 ms")],
    ...                  think_time="100 ms")
    >>> r = qn.thread_pool(net, 20, threads=2)
    >>> round(float(r.throughput[-1]), 2), r.method
    (121.7, 'fes (approximate: flow-equivalent server)')
    """
    net = single_class(_network(net, "thread_pool"), "thread_pool")
    N = as_population(N, "N")
    T = as_positive_int(threads, "threads", 1)
    check_time_scale(N, net.total_demand, net.think_time)
    inside = _subsystem_mask(net, subsystem)
    check_memory(
        8.0 * N * (3 * len(net.names) + min(T, N) + 10),
        f"the thread pool of N = {N} clients, threads = {T}, every n kept",
        "give a smaller N",
    )
    D = np.asarray(net.demands, dtype=np.float64)
    delay = np.asarray(net.is_delay, dtype=bool)
    Z = float(net.think_time)
    K = D.size
    Tn = min(T, N)
    rates = ld_rates(net, n_max=N)
    Xs, Qs = _subsystem_curve(D, delay, rates, inside, Tn)

    # Outer network: stations outside S, Z, and the FES (demand 1, rate curve X_S).
    out = np.flatnonzero(~inside)
    D_o = np.concatenate([D[out], [1.0]])
    delay_o = np.concatenate([delay[out], [False]])
    rates_o = [rates[k] for k in out] + [Xs]
    X, Q_o, _ = ld_general_arrays(D_o, delay_o, Z, N, rates_o, "all")

    # Marginal of the FES: p(j | n) = f(j) G_O(n - j) / G(n).
    lG_O = np.full(N + 1, -np.inf)
    lG_O[0] = 0.0
    if out.size and np.any(D[out] > 0):
        X_O = ld_general_arrays(D[out], delay[out], Z, N, [rates[k] for k in out], "all")[0]
        lG_O[1:] = -np.cumsum(np.log(X_O))
    elif Z > 0:
        j = np.arange(1, N + 1, dtype=np.float64)
        lG_O[1:] = np.cumsum(math.log(Z) - np.log(j))  # Z^n / n!
    lf = _log_fes_factor(Xs, N)
    lG = log_convolve(lG_O, lf)

    # Moments of the marginal. Below T threads, p(j | n) one by one (an N x T matrix);
    # from T on f(j) = f(T) b^(j-T) with b = 1 / X_S(T), so with m = n - T the tail sums
    # are P(m) = sum_{i<=m} b^i G_O(m-i) = G_O(m) + b P(m-1) and
    # W(m) = sum_{i<=m} i b^i G_O(m-i) = b (W(m-1) + P(m-1)):
    # P(j >= T | n) = f(T) P(m) / G(n), E[(j - T)^+ | n] = f(T) W(m) / G(n). In log space,
    # scaled by b^-m, both are running log-sums of positive terms (np.logaddexp.accumulate).
    n_all = np.arange(1, N + 1)
    jh = np.arange(Tn)
    idx = n_all[:, None] - jh[None, :]
    valid = idx >= 0
    head = np.exp(
        np.where(valid, lf[None, :Tn] + lG_O[np.where(valid, idx, 0)] - lG[n_all][:, None], -np.inf)
    )
    lxt = math.log(float(Xs[-1]))
    shift = np.arange(N + 1, dtype=np.float64) * lxt
    u = np.logaddexp.accumulate(lG_O + shift)  # log(b^-m P(m))
    v = np.full(N + 1, -np.inf)
    v[1:] = np.logaddexp.accumulate(u[:-1])  # log(b^-m W(m))
    lP = u - shift
    lW = v - shift
    tail = np.zeros(N)
    waiting = np.zeros(N)
    m = n_all - Tn
    over = m >= 0
    tail[over] = np.exp(lf[Tn] + lP[m[over]] - lG[n_all[over]])
    waiting[over] = np.exp(lf[Tn] + lW[m[over]] - lG[n_all[over]])
    busy = head @ jh.astype(np.float64) + Tn * tail
    Q_in = head[:, 1:] @ Qs[: Tn - 1] + tail[:, None] * Qs[Tn - 1][None, :]
    jN = np.arange(N + 1)
    p_last = np.exp(lf + lG_O[N - jN] - lG[N])

    Q = np.zeros((N, K))
    Q[:, out] = Q_o[:, :-1]
    Q[:, inside] = Q_in
    Xc = X[:, None]
    Rk = Q / Xc
    Rk[:, delay] = D[delay]
    cap = ld_peak_capacity(net)
    U = Xc * (D / cap)[None, :]
    thread_wait = waiting / X
    subsystem_time = busy / X
    R = Rk[:, out].sum(axis=1) + thread_wait + subsystem_time
    one_station = int(np.count_nonzero(D[inside] > 0)) == 1
    closed_pool = Z == 0.0 and not np.any(D[out] > 0)
    exact = N <= T or one_station or closed_pool
    return ThreadPoolResult(
        method=THREAD_POOL_METHOD if exact else THREAD_POOL_APPROXIMATE,
        n=np.arange(1, N + 1, dtype=np.float64),
        throughput=X,
        response_time=R,
        thread_wait=thread_wait,
        subsystem_time=subsystem_time,
        threads_busy=busy,
        thread_queue=waiting,
        queue_length=Q,
        utilization=U,
        residence_time=Rk,
        station_names=net.names,
        in_subsystem=inside,
        threads=T,
        think_time=Z,
        demands=D,
        subsystem_throughput=Xs,
        pool_distribution=p_last,
    )


def _logsumexp(a: np.ndarray) -> float:
    m = float(a.max())
    return m + math.log(float(np.exp(a - m).sum()))


def thread_pool_open(
    net: Network, arrival_rate: Any, threads: Any, capacity: Any = None
) -> OpenThreadPoolResult:
    """Mean values of Poisson arrivals into a subsystem that admits at most T requests.

    Parameters
    ----------
    net : Network
        The subsystem: every station of ``net`` holds a thread (queues with one or m
        servers or a rate curve, delays; product-form disciplines). Its think time is not
        used.
    arrival_rate : float or str
        lambda > 0, requests/s (``"400/s"``, ``"2 kHz"``).
    threads : int
        T >= 1.
    capacity : int, optional
        C >= T: the most requests at the pool (holding or waiting for a thread); an
        arrival that finds C is lost. Default: unlimited, which needs lambda < X_S(T).

    Returns
    -------
    OpenThreadPoolResult

    Raises
    ------
    UnstableModelError
        No capacity and lambda >= X_S(T), the pool's saturation throughput.
    InvalidModelError
        capacity < T, classes, non-product-form stations, lambda <= 0.

    Notes
    -----
    The pool is a birth-death process (module docstring): p(j) = p(0) prod_{i<=j} lambda /
    X_S(min(i, T)), j = 0..C; without a capacity the tail j >= T is geometric with ratio
    rho = lambda / X_S(T) and its sums are closed forms (sum rho^i = 1 / (1 - rho),
    sum i rho^i = rho / (1 - rho)^2). Computed in log space with positive terms only.
    Inside S, Q_k = sum_j p(j) Q_k^S(min(j, T)); X = lambda (1 - p(C)); R, W_T, R_S by
    Little's law.

    Examples
    --------
    >>> import qnmodel as qn
    >>> net = qn.Network([qn.Station("cpu", "1 ms"), qn.Station("disk", "8 ms")])
    >>> r = qn.thread_pool_open(net, "100/s", threads=1)
    >>> round(r.response_time * 1e3, 3)  # the FES of one thread: M/M/1 of demand 9 ms
    90.0
    >>> r.method  # the true pool is M/G/1: its service is CPU then disk
    'fes (approximate: flow-equivalent server)'
    """
    net = _network(net, "thread_pool_open")
    if not net.single:
        raise InvalidModelError(
            "thread_pool_open takes a network without classes (the subsystem's stations); "
            "give the arrival rate as arrival_rate"
        )
    single_class(net, "thread_pool_open")
    lam = as_quantity(arrival_rate, "arrival_rate", "frequency")
    if not lam > 0:
        raise InvalidModelError(f"arrival_rate must be > 0 requests/s, got {arrival_rate!r}")
    T = as_positive_int(threads, "threads", 1)
    C = None if capacity is None else as_positive_int(capacity, "capacity", 1)
    if C is not None and C < T:
        raise InvalidModelError(
            f"capacity = {C} is below threads = {T}: the pool could never use all its "
            f"threads; give capacity >= {T} (or threads = {C})"
        )
    D = np.asarray(net.demands, dtype=np.float64)
    delay = np.asarray(net.is_delay, dtype=bool)
    inside = np.ones(D.size, dtype=bool)
    check_memory(
        8.0 * ((C or T) + 1) * (3 * D.size + 4),
        f"the open pool of threads = {T}, capacity = {C} at {D.size} stations",
        "give fewer threads or a smaller capacity (past the stations' own concurrency more "
        "threads change nothing)",
    )
    rates = ld_rates(net, n_max=T)
    Xs, Qs = _subsystem_curve(D, delay, rates, inside, T)
    ll = math.log(lam)
    # log p~(j), j = 0..T (or 0..C with a capacity)
    top = T if C is None else C
    idx = np.minimum(np.arange(1, top + 1), T) - 1
    lp = np.concatenate([[0.0], np.cumsum(ll - np.log(Xs)[idx])])
    jj = np.arange(top + 1, dtype=np.float64)
    Qs_ext = np.vstack([np.zeros((1, D.size)), Qs])[np.minimum(np.arange(top + 1), T)]
    # Sums over j >= 1 scaled by exp(-M), M = max log p~(j): X = sum_j p(j) X_S(min(j, T))
    # (the departures, equal to lambda (1 - p(C)) without its cancellation when p(C) is
    # near 1), and R, W_T, R_S, R_k as ratios of such sums, which stay exact when every
    # p(j >= 1) underflows (a tiny lambda).
    xr = Xs[idx]
    if C is None:
        rho = lam / float(Xs[-1])
        if rho >= 1.0:
            raise UnstableModelError(
                f"arrival_rate = {lam:.6g}/s reaches the pool's saturation throughput "
                f"X_S(T) = {float(Xs[-1]):.6g}/s with threads = {T}: the thread queue grows "
                "without bound; give a lower rate, more threads, or a capacity"
            )
        # j = 0..T-1 explicitly; j >= T as p~(T) rho^(j-T), summed in closed form.
        head = lp[:T]
        lt = lp[T] - math.log1p(-rho)  # log sum_{j>=T} p~(j)
        lZ = _logsumexp(np.concatenate([head, [lt]]))
        M = float(lp[1:].max())
        w = np.exp(lp[1:T] - M)  # j = 1..T-1
        s0 = math.exp(lt - M)  # sum_{j>=T} p~(j) e^-M
        x_num = float(w @ xr[: T - 1]) + float(Xs[-1]) * s0
        busy_num = float(w @ jj[1:T]) + T * s0
        wait_num = s0 * rho / (1.0 - rho)
        Q_num = w @ Qs[: T - 1] + s0 * Qs[-1]
        loss = 0.0
    else:
        lZ = _logsumexp(lp)
        M = float(lp[1:].max())
        w = np.exp(lp[1:] - M)  # j = 1..C
        x_num = float(w @ xr)
        busy_num = float(w @ np.minimum(jj[1:], T))
        wait_num = float(w @ np.maximum(jj[1:] - T, 0.0))
        Q_num = w @ Qs_ext[1:]
        loss = float(np.exp(lp[-1] - lZ))
    scale = math.exp(M - lZ)
    busy = busy_num * scale
    waiting = wait_num * scale
    Q = Q_num * scale
    X = lam if C is None else x_num * scale
    Rk = Q_num / x_num
    Rk[delay] = D[delay]
    U = X * D / ld_peak_capacity(net)
    exact = int(np.count_nonzero(D > 0)) == 1
    return OpenThreadPoolResult(
        method=THREAD_POOL_METHOD if exact else THREAD_POOL_APPROXIMATE,
        arrival_rate=lam,
        capacity=C,
        loss_probability=loss,
        throughput=X,
        response_time=(busy_num + wait_num) / x_num,
        thread_wait=wait_num / x_num,
        subsystem_time=busy_num / x_num,
        threads_busy=busy,
        thread_queue=waiting,
        queue_length=np.asarray(Q, dtype=np.float64),
        utilization=U,
        residence_time=Rk,
        station_names=net.names,
        threads=T,
        demands=D,
        subsystem_throughput=Xs,
    )
