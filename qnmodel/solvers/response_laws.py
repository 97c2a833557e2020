"""The response-time law of a single-class network: exact for open tandems, approximate else.

A job visits every station once, in order, with the station's demand D_k as the mean of
one exponential service (the tandem view the simulator takes, and the one in which the
mean of the law equals the mean-value solvers' R). Its sojourn at each station has a
phase-type law that is a *chain* (phases entered at a random position, left in order,
absorbed after the last), so the end-to-end law is one long chain, evaluated by the
matrix exponential (short chains) or by inverting its Laplace transform (long ones).

Per-station laws
----------------
* delay station: the service itself, exponential with mean D_k;
* open single-server FCFS queue (M/M/1): exponential with rate 1/D_k - lambda
  ([Kle75] sec. 3.2);
* open M/M/m queue: with probability C(m, a) (Erlang C, a = lambda D_k) the job waits an
  exponential time of rate m/D_k - lambda, then is served (exponential, mean D_k)
  ([Kle75] sec. 3.5; the waiting-time law of M/M/m);
* closed single-server FCFS queue: by the arrival theorem ([LR80]) a job arriving at
  station k sees the network with N - 1 jobs, so j jobs there with the marginal
  probability p_k(j | N-1), and (memoryless service) stays for an Erlang(j + 1, 1/D_k)
  time; p_k(j | n) = D_k X(n) p_k(j-1 | n-1) is the marginal recursion of exact MVA
  ([LZGS] sec. 8.3);
* closed m-server FCFS queue: by the arrival theorem a job sees j jobs there with the
  marginal p_k(j | N-1) of the load-dependent product form (convolution, [Buz73]); for
  j < m it is served at once (exponential, mean D_k), for j >= m it first waits for
  j - m + 1 departures at rate m/D_k (all servers busy), so its sojourn is a mixture of
  hypoexponential laws ([Kle75] sec. 3.5 for the M/M/m wait given j);
* open M/G/1 and M/G/m FCFS queues (SCV != 1): a two-moment phase-type fit
  (:func:`~qnmodel.solvers.percentiles.two_moment_chain`) of the sojourn time, whose mean
  is the open solver's (Pollaczek-Khinchine; Allen-Cunneen for m servers) and whose
  variance is Var W + SCV S^2, with Takacs' second moment of the M/G/1 wait ([Kle75]
  eq. 5.110) or, for m servers, a wait that is 0 with probability 1 - C(m, a) and
  exponential otherwise -- *approximate*; a closed network with non-exponential FCFS
  service is refused (exact MVA, whose marginals the law needs, assumes exponential
  service);
* any station with ``rate_multipliers``: exponential with the station's mean residence
  time (a one-moment approximation).

Exactness
---------
*Exact* (label :data:`EXACT_TANDEM`, ``"exact: ..."``) for one structure only: an **open
tandem** whose stations a job visits **once each, in order**, the queueing ones all
single-server FCFS with exponential service (with any delay stations): the sojourn times of
a tandem of M/M/1 queues are independent ([Rei57]; [Bur69] for the tandem), so the response
time is their (hypoexponential) sum; also exact for an open network with only one queueing
station, an M/M/m. In a closed network it is exact (label :data:`EXACT_CLOSED_ONE`) when
one FCFS exponential station (1 or m servers, visited once) is all the response time holds,
with any think time: the arrival theorem gives the exact law of what the job finds there.
Otherwise the per-station laws are combined as if independent -- an
*approximation* (label ``"approximate: ..."``): in a closed network the sojourn times are
correlated (a job that met a long queue at one station leaves fewer jobs elsewhere), so a
closed network's law is not that sum; Burke showed that overtaking at an M/M/s (s >= 2)
queue makes tandem sojourn times dependent ([Bur69]); a station given ``visits`` other than
1 is not "visited once" (its sojourn is taken as one exponential of its mean residence time).
The approximation's error against ``qn.simulate`` quantiles is measured in
``tests/solvers/test_capacity_targets.py`` (closed tandems of 2-4 stations: p95 and p99
within a few per cent; see the test for the figures) and by ``tests/accuracy/percentiles.py``
(table in docs/how-to/capacity.md): closed networks of 1-3 stations with 1-4 servers, p90
and p99 median 0.2 %, worst 2.4 %; open M/M/m tandems worst 2.9 %; open M/G/m stations of
SCV 0-10 (the two-moment fit), p90 median 4.7 % (worst 28.5 %), p99 median 8.8 % (worst
36.6 %, a lognormal SCV-10 service: its tail is not a phase-type one).

**Arrays are not tandems.** A disk array written as k identical stations in series makes
every request visit *every* member, and the law sums k sojourns: for a lone request to six
exponential members of mean 5/6 ms each, an Erlang law of mean 5 ms and p99 = 10.9 ms. A
random read goes to **one** member (the one-of-k structure): its law is one member's
sojourn, so model one member at its share of the load (arrival rate lambda / k for a
symmetric array): alone, p99 = 5 ms x ln 100 = 23.0 ms for an exponential 5 ms disk. When
the stations summed include identical ones, the label says so and points to
``docs/how-to/capacity.md`` ("Arrays: one request, one member").

References
----------
.. [Kle75] L. Kleinrock, *Queueing Systems, Vol. 1: Theory*, Wiley 1975, secs. 3.2, 3.5.
.. [Rei57] E. Reich, "Waiting times when queues are in tandem", Ann. Math. Statist.
   28(3):768-773, 1957.
.. [Bur69] P. J. Burke, "The dependence of sojourn times in tandem M/M/s queues",
   Operations Research 17(4):754-755, 1969.
.. [LR80] S. S. Lavenberg, M. Reiser, "Stationary state probabilities at arrival instants
   for closed queueing networks with multiple types of customers", J. Appl. Prob.
   17(4):1048-1061, 1980 (the arrival theorem).
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, sec. 8.3.
.. [Buz73] J. P. Buzen, "Computational algorithms for closed queueing networks with
   exponential servers", CACM 16(9):527-531, 1973 (marginals of load-dependent stations).
.. [AW95] J. Abate, W. Whitt, "Numerical inversion of Laplace transforms of probability
   distributions", ORSA J. on Computing 7(1):36-43, 1995.
.. [AW06] J. Abate, W. Whitt, "A unified framework for numerically inverting Laplace
   transforms", INFORMS J. on Computing 18(4):408-421, 2006.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import (
    as_population,
    as_probability,
    as_quantity,
    check_fit_scv,
    check_not_subnormal,
    check_size,
)
from ..errors import InvalidModelError, UnstableModelError
from ..model import Network
from ._mva_core import single_class
from .open import erlang_c
from .percentiles import two_moment_chain

__all__ = ["EXACT_CLOSED_ONE", "EXACT_TANDEM", "ResponseTimeLaw", "response_time_law"]


def _time_point(t: Any) -> float:
    """A time t of the law's survival or distribution function, in s (a unit string is
    read); NaN, a bool or a non-number is refused."""
    if isinstance(t, str):
        return float(as_quantity(t, "t", "time"))
    if isinstance(t, bool) or not isinstance(t, int | float | np.integer | np.floating):
        raise InvalidModelError(f"t must be a time in s (a number or a unit string), got {t!r}")
    if math.isnan(t):
        raise InvalidModelError("t must be a time in s, got nan")
    return float(t)


@dataclass(frozen=True)
class ResponseTimeLaw:
    """A phase-type response-time law held as one chain of exponential phases.

    Attributes
    ----------
    alpha : ndarray (p,)
        Probability of entering at each phase (sums to 1).
    rates : ndarray (p,)
        Exit rate of each phase, 1/s.
    jumps : list of (int, ndarray, ndarray)
        Where the last phase of each stage jumps: ``(from, to_indices, probabilities)``;
        every other phase i moves to i + 1.
    exact : bool
        True when the law is the exact response-time law of the model.
    method : str
        ``"exact: ..."`` or ``"approximate: ..."``, naming the construction.
    """

    alpha: np.ndarray
    rates: np.ndarray
    jumps: tuple
    exact: bool
    method: str

    def _generator_T(self):
        from scipy.sparse import coo_matrix

        p = self.rates.size
        rows, cols, vals = [np.arange(p)], [np.arange(p)], [-self.rates]
        ends = {j[0] for j in self.jumps}
        inner = np.array([i for i in range(p - 1) if i not in ends], dtype=np.int64)
        rows.append(inner)
        cols.append(inner + 1)
        vals.append(self.rates[inner])
        for i, to, prob in self.jumps:
            rows.append(np.full(to.size, i))
            cols.append(to)
            vals.append(self.rates[i] * prob)
        return coo_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(p, p)
        ).tocsr()

    @property
    def mean(self) -> float:
        """E[R], seconds: alpha (-T)^{-1} 1 (solved on the sparse chain)."""
        from scipy.sparse.linalg import spsolve

        m = spsolve((-self._generator_T()).tocsc(), np.ones(self.rates.size))
        return float(self.alpha @ np.atleast_1d(m))

    @functools.cached_property
    def _dense_T(self) -> np.ndarray:
        return self._generator_T().toarray()

    def _stages(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(entry probabilities, rates) of each stage of the chain."""
        ends = [j[0] for j in self.jumps] + [self.rates.size - 1]
        out, start = [], 0
        for k, end in enumerate(ends):
            a = np.zeros(end + 1 - start)
            if k == 0:
                a[:] = self.alpha[start : end + 1]
            else:
                _, to, prob = self.jumps[k - 1]
                a[to - start] = prob
            out.append((a, self.rates[start : end + 1]))
            start = end + 1
        return out

    def laplace(self, s: np.ndarray) -> np.ndarray:
        """E[exp(-s R)] at complex points s: the product of the stages' transforms.

        A stage entered at phase i passes phases i..L-1: prod_{l >= i} r_l / (r_l + s).
        """
        s = np.asarray(s, dtype=np.complex128)
        out = np.ones(s.shape, dtype=np.complex128)
        for a, r in self._stages():
            g = r[:, None] / (r[:, None] + s[None, :])
            tail = np.cumprod(g[::-1], axis=0)[::-1]  # prod_{l >= i}
            out *= a @ tail
        return out

    def survival(self, t: float) -> float:
        """P(R > t) = alpha exp(T t) 1.

        Up to 64 phases by the dense matrix exponential (machine precision); beyond,
        by inverting the Laplace transform of the survival function, (1 - E[e^{-sR}])/s,
        with the Euler algorithm of [AW95] (M = 18; absolute error about 1e-10 here), whose
        cost does not grow with the spread of the phase rates as the exponential's does.
        """
        t = _time_point(t)
        if t <= 0.0:
            return 1.0
        if math.isinf(t):
            return 0.0
        if self.rates.size <= 64:
            from scipy.linalg import expm

            v = float(self.alpha @ expm(self._dense_T * t).sum(axis=1))
        else:
            beta, eta = _euler_nodes()
            s = beta / t
            v = float(np.real(eta @ ((1.0 - self.laplace(s)) / s)) * (10.0 ** (_M / 3)) / t)
        return float(min(max(v, 0.0), 1.0))

    def cdf(self, t: float) -> float:
        """P(R <= t)."""
        return 1.0 - self.survival(t)

    def quantile(self, q: float) -> float:
        """The q-quantile, 0 < q < 1 (Brent's method on a bracket, relative tolerance 1e-9)."""
        from scipy.optimize import brentq

        q = as_probability(q, "q")
        if not 0.0 < q < 1.0:
            raise InvalidModelError(f"q must be strictly between 0 and 1, got {q!r}")
        lo, hi = 0.0, float(np.max(1.0 / self.rates))
        while self.cdf(hi) < q:
            lo, hi = hi, 2.0 * hi
            if hi > 1e300:  # pragma: no cover - a phase-type law has an exponential tail
                raise InvalidModelError(f"cannot bracket the {q} quantile")
        return float(brentq(lambda x: self.cdf(x) - q, lo, hi, xtol=1e-12 * hi, rtol=1e-10))


_M = 18


#: The largest closed population the law is built for (its chain has a phase per job).
MAX_LAW_POPULATION = 100_000


def _euler_nodes(M: int = _M) -> tuple[np.ndarray, np.ndarray]:
    """Nodes beta_k and weights eta_k of the Euler inversion ([AW95]; [AW06] sec. 5).

    f(t) ~ 10^{M/3} / t * sum_{k=0}^{2M} eta_k Re f^(beta_k / t), beta_k = M ln(10)/3 + i pi k,
    eta_k = (-1)^k xi_k, xi_0 = 1/2, xi_k = 1 (1 <= k <= M), xi_2M = 2^-M,
    xi_{2M-k} = xi_{2M-k+1} + 2^-M C(M, k) (0 < k < M).
    """
    k = np.arange(2 * M + 1)
    beta = M * math.log(10.0) / 3.0 + 1j * math.pi * k
    xi = np.ones(2 * M + 1)
    xi[0] = 0.5
    xi[2 * M] = 2.0**-M
    for j in range(1, M):
        xi[2 * M - j] = xi[2 * M - j + 1] + 2.0**-M * math.comb(M, j)
    eta = (-1.0) ** k * xi
    return beta, eta


def _closed_marginals(D: np.ndarray, X: np.ndarray, n: int) -> np.ndarray:
    """p_k(j | n), j = 0..n, of load-independent stations with demands D (K,) ([LZGS] 8.3).

    ``X[i]`` is X(i + 1). p(j | i) = D X(i) p(j-1 | i-1), p(0 | i) = 1 - D X(i).
    """
    p = np.zeros((D.size, n + 1))
    p[:, 0] = 1.0
    for i in range(1, n + 1):
        nxt = np.zeros_like(p)
        nxt[:, 1 : i + 1] = (D * X[i - 1])[:, None] * p[:, :i]
        nxt[:, 0] = np.maximum(1.0 - nxt[:, 1 : i + 1].sum(axis=1), 0.0)
        p = nxt
    return p / p.sum(axis=1, keepdims=True)


#: The label of the exact case: which structure the law is exact for, and why.
EXACT_TANDEM = (
    "exact: sum of independent sojourn laws, exact for an open tandem whose stations are "
    "each visited once in order (M/M/1 FCFS and delay stations: Reich 1957, Burke 1969, or "
    "one M/M/m), not for a closed network"
)


#: The label of the exact closed case.
EXACT_CLOSED_ONE = (
    "exact: one FCFS exponential station (1 or m servers) and nothing else in the response "
    "time of a closed network (think time allowed): arrival theorem (Lavenberg-Reiser 1980) "
    "with the exact marginal of N - 1 jobs"
)


def _closed_ld_marginals(net: Network, D: np.ndarray, n: int) -> np.ndarray:
    """p_k(j | n), j = 0..n, of every station of a closed network with multi-server
    (load-dependent) stations: the convolution marginals f_k(j) G_{-k}(n-j) / G(n) of
    :func:`~qnmodel.solvers.normconst.normconst_ld` ([Buz73]), with D_k(j) = D_k / r_k(j):
    r_k(j) = min(j, m_k) for m servers, j for a delay station, the rate curve if given."""
    from .mva_ld_general import ld_rates
    from .normconst import normconst_ld

    j = np.arange(1, n + 1, dtype=np.float64)
    rates = ld_rates(net, n_max=n)
    rows = np.empty((D.size, n))
    for k in range(D.size):
        r = rates[k]
        if D[k] <= 0:
            rows[k] = 0.0
        elif net.is_delay[k]:
            rows[k] = D[k] / j
        elif r is None:
            rows[k] = D[k]
        else:
            rows[k] = D[k] / r[np.minimum(np.arange(n), r.size - 1)]
    return np.asarray(normconst_ld(rows, n, think_time=net.think_time).marginal_probabilities)


def _mmm_closed_stage(pj: np.ndarray, m: int, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """The sojourn chain at an m-server FCFS exponential station for a job that sees j jobs
    there with probability ``pj[j]`` (j = 0..n): j < m, its own service (rate mu); j >= m,
    first j - m + 1 departures at rate m mu (all servers busy), then its service. Phases:
    n - m + 1 waiting phases of rate m mu, then the service phase; seeing j >= m enters
    at waiting phase n - j, seeing j < m at the service phase ([Kle75] sec. 3.5)."""
    n = pj.size - 1
    w = max(n - m + 1, 0)
    alpha = np.zeros(w + 1)
    alpha[w] = pj[: min(m, n + 1)].sum()
    for jj in range(m, n + 1):
        alpha[n - jj] += pj[jj]
    alpha /= alpha.sum()
    rates = np.concatenate([np.full(w, m * mu), [mu]])
    first = int(np.flatnonzero(alpha)[0])  # drop phases that are never entered
    return alpha[first:].copy(), rates[first:].copy()


def _third_moment(law: Any, S: float, scv: float) -> float:
    """E[S^3] of the station's service law scaled to mean S: exponential 6 S^3,
    deterministic S^3, lognormal S^3 (1 + scv)^3, a histogram from its buckets (uniform
    inside each: E = sum p (hi^4 - lo^4) / (4 (hi - lo)))."""
    name = type(law).__name__
    if name == "Exponential":
        return 6.0 * S**3
    if name == "Empirical":
        p = law.counts / law.counts.sum()
        lo, hi = law.lower, law.upper
        m3 = float(np.sum(p * (hi**4 - lo**4) / (4.0 * (hi - lo))))
        return m3 * (S / law.mean) ** 3
    return S**3 * (1.0 + scv) ** 3  # deterministic (scv = 0) and lognormal


def _mg_sojourn_moments(
    lam: float, S: float, scv: float, m: int, law: Any, mean: float
) -> tuple[float, float, str]:
    """Mean (the open solver's) and variance of the sojourn at an open M/G/1 or M/G/m
    FCFS station; the law is then a two-moment fit (:func:`two_moment_chain`).

    M/G/1: Takacs' moments of the wait, E[W] = lam E[S^2] / (2 (1 - rho)),
    E[W^2] = 2 E[W]^2 + lam E[S^3] / (3 (1 - rho)) ([Kle75] eq. 5.110), W independent of
    the job's own service, so Var T = Var W + scv S^2. M/G/m: the Allen-Cunneen mean of
    the open solver, the wait taken as 0 with probability 1 - C(m, a) and else
    exponential with the conditional mean, so E[W^2] = 2 E[W]^2 / C.
    """
    ew = mean - S
    if m == 1:
        rho = lam * S
        ew2 = 2.0 * ew * ew + lam * _third_moment(law, S, scv) / (3.0 * (1.0 - rho))
        label = "M/G/1 sojourn, two-moment fit (Takacs moments)"
    else:
        C = float(erlang_c(m, lam * S))
        ew2 = 2.0 * ew * ew / C if C > 0 else 0.0
        label = f"M/G/{m} sojourn, two-moment fit (Allen-Cunneen mean)"
    var = max(ew2 - ew * ew, 0.0) + scv * S * S
    return mean, var, label


def _visits(s: Any) -> float:
    """The visits of a single-class station (1 when it was given by its demand alone)."""
    v = s.visits
    if v is None:
        return 1.0
    if isinstance(v, Mapping):
        vals = {float(x) for x in v.values()}
        return vals.pop() if len(vals) == 1 else math.nan
    return float(v)


def _one_of_k_note(net: Network, D: np.ndarray) -> str:
    """A note for what looks like an array written as stations in series: several identical
    queueing stations (same demand, servers and rate curve), which the law sums."""
    seen: dict[tuple, list[str]] = {}
    for k, s in enumerate(net.stations):
        if net.is_delay[k] or D[k] <= 0:
            continue
        r = None if s.rate_multipliers is None else tuple(np.asarray(s.rate_multipliers))
        seen.setdefault((float(D[k]), int(s.servers), r), []).append(s.name)
    groups = [g for g in seen.values() if len(g) >= 2]
    if not groups:
        return ""
    g = max(groups, key=len)
    return (
        f"; the law sums {len(g)} identical stations ({', '.join(g[:3])}"
        f"{', ...' if len(g) > 3 else ''}): a request that visits ONE of them (an array "
        "member: a random read) is the one-of-k structure, whose law is one member's "
        "sojourn at its share of the load (docs/how-to/capacity.md)"
    )


def response_time_law(net: Network, *, arrival_rate: Any = None, N: Any = None) -> ResponseTimeLaw:
    """The response-time law of a single-class network at one workload.

    Parameters
    ----------
    net : Network
    arrival_rate : float or str, optional
        Open workload (jobs/s, or ``"40000/s"``).
    N : int, optional
        Closed workload: N jobs (think time as in ``net``; the law excludes it).

    Returns
    -------
    ResponseTimeLaw
        Its ``method`` says whether it is exact (module docstring).

    Raises
    ------
    UnstableModelError
        Open: a station saturates at this rate.
    """
    from .mva import mva
    from .open import open_network

    net = single_class(net, "response_time_law")
    if (arrival_rate is None) == (N is None):
        raise InvalidModelError("give exactly one of arrival_rate (open) or N (closed)")
    stages: list[tuple[np.ndarray, np.ndarray]] = []  # (alpha over the chain, rates)
    D = np.asarray(net.demands, dtype=np.float64)
    is_open = arrival_rate is not None
    scv = np.asarray(net.compiled.scv, dtype=np.float64).reshape(-1)
    laws = [row[0] for row in net.compiled.laws]
    if not is_open:  # before mva, which refuses it with a less specific message
        non_exp = [
            s.name
            for k, s in enumerate(net.stations)
            if not net.is_delay[k] and D[k] > 0 and scv[k] != 1.0
        ]
        if non_exp:
            raise InvalidModelError(
                f"response_time_law of a closed network with non-exponential FCFS service "
                f"(stations {non_exp}) is not supported: exact MVA, whose marginals it needs, "
                "assumes exponential service; use qnmodel.simulate, or the open network "
                "(arrival_rate=...), whose M/G/1 and M/G/m laws are approximated"
            )
    queues = [k for k in range(D.size) if not net.is_delay[k] and D[k] > 0]
    check_not_subnormal(D[queues], "response_time_law: the queueing stations' demands",
                        "the response-time law")  # fmt: skip
    check_fit_scv(scv[queues], "response_time_law: the stations' service", "the response-time law")
    if is_open:
        lam = as_quantity(arrival_rate, "arrival_rate", "frequency")
        res = open_network(net, lam)  # raises UnstableModelError at saturation
        R_k = np.asarray(res.residence_time).reshape(-1)
    else:
        N = as_population(N, "N")
        check_size(
            N, MAX_LAW_POPULATION,
            "response_time_law: N (the law's chain has a phase per job ahead: "
            "100000 take seconds, 10^7 an hour)",
            "ask for a smaller N, or the mean (qnmodel.mva)",
        )  # fmt: skip
        res = mva(net, N)
        X = np.asarray(res.throughput, dtype=np.float64)
        R_k = np.asarray(res.residence_time)[-1]
    queue_kinds = []
    approx = []
    marg = None
    if not is_open and N > 1:
        simple = [
            k
            for k, s in enumerate(net.stations)
            if not net.is_delay[k] and D[k] > 0 and s.servers == 1 and s.rate_multipliers is None
        ]
        if simple:
            marg = dict(zip(simple, _closed_marginals(D[simple], X, N - 1), strict=True))
        if any(
            not net.is_delay[k] and D[k] > 0 and s.servers > 1 and s.rate_multipliers is None
            for k, s in enumerate(net.stations)
        ):
            ld = _closed_ld_marginals(net, D, N - 1)
            marg = {**(marg or {}), **{k: ld[k] for k in range(D.size) if k not in (marg or {})}}
    for k, s in enumerate(net.stations):
        if D[k] <= 0:
            continue
        mu = 1.0 / D[k]
        v = _visits(s)
        if v != 1.0:  # not "visited once": the tandem's laws do not apply
            if not net.is_delay[k]:
                queue_kinds.append(-1)
            approx.append(
                f"{s.name}: {v:g} visits taken as one exponential sojourn of its mean "
                "residence time"
            )
            stages.append((np.ones(1), np.array([1.0 / R_k[k]])))
            continue
        if net.is_delay[k]:
            stages.append((np.ones(1), np.array([mu])))
            continue
        queue_kinds.append(s.servers if s.rate_multipliers is None else -1)
        if s.rate_multipliers is not None:
            approx.append(f"{s.name}: exponential with its mean (rate curve)")
            stages.append((np.ones(1), np.array([1.0 / R_k[k]])))
        elif is_open and scv[k] != 1.0:
            queue_kinds[-1] = -1
            mean, var, label = _mg_sojourn_moments(
                lam, D[k], float(scv[k]), int(s.servers), laws[k], float(R_k[k])
            )
            approx.append(f"{s.name}: {label}")
            stages.append(two_moment_chain(mean, var / (mean * mean)))
        elif is_open and s.servers == 1:
            stages.append((np.ones(1), np.array([mu - lam])))
        elif is_open:
            m = int(s.servers)
            C = float(erlang_c(m, lam * D[k]))
            stages.append((np.array([C, 1.0 - C]), np.array([m * mu - lam, mu])))
        elif marg is None:  # N = 1: the job is alone
            stages.append((np.ones(1), np.array([mu])))
        elif s.servers == 1:
            pj = marg[k]  # jobs seen 0..N-1 -> j + 1 phases
            stages.append((pj[::-1].copy(), np.full(pj.size, mu)))
        else:
            stages.append(_mmm_closed_stage(marg[k], int(s.servers), mu))
    if not stages:
        raise InvalidModelError("every demand is zero: the response time is 0")
    sizes = [a.size for a, _ in stages]
    offs = np.concatenate([[0], np.cumsum(sizes)])
    alpha = np.zeros(int(offs[-1]))
    alpha[: sizes[0]] = stages[0][0]
    jumps = []
    for i in range(len(stages) - 1):
        nz = np.flatnonzero(stages[i + 1][0])
        jumps.append((int(offs[i + 1] - 1), nz + int(offs[i + 1]), stages[i + 1][0][nz]))
    rates = np.concatenate([r for _, r in stages])
    n_queues = len(queue_kinds)
    if is_open and not approx and (all(m == 1 for m in queue_kinds) or n_queues <= 1):
        exact, method = True, EXACT_TANDEM
    elif not is_open and not approx and len(stages) == 1 and n_queues == 1:
        exact, method = True, EXACT_CLOSED_ONE
    elif is_open and n_queues <= 1:
        exact, method = False, "approximate: one queueing station, its sojourn law approximated"
    elif is_open:
        exact = False
        method = "approximate: per-station sojourn laws taken as independent (" + (
            "several multi-server or rate-curve stations)"
            if all(m >= 1 for m in queue_kinds)
            else "Burke's independence needs M/M/1 stations visited once)"
        )
    else:
        exact = False
        method = (
            "approximate: per-station sojourn laws (arrival theorem, MVA marginals) taken as "
            "independent (closed network)"
        )
    if approx:
        method += "; " + "; ".join(approx)
    method += _one_of_k_note(net, D)
    if math.isinf(float(np.max(1.0 / rates))):  # pragma: no cover - demands are finite
        raise UnstableModelError("a sojourn law has an infinite mean")
    return ResponseTimeLaw(alpha, rates, tuple(jumps), exact, method)
