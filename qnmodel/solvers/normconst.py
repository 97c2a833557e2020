"""Normalising constant and marginal queue-length probabilities of closed single-class
product-form networks (Buzen's convolution), in log space.

With station factors f_k(j) = D_k^j / prod_{i=1..j} a_k(i) -- a_k(i) = 1 for a single-server
queue, min(i, m) for m servers, i for a delay station; D_k(1) ... D_k(j) multiplied for a
general load-dependent station -- the product form of [Buz73] is

    P(n_1, ..., n_K) = prod_k f_k(n_k) / G(N),   G(n) = (f_1 * f_2 * ... * f_K)(n)

(``*`` the discrete convolution), and ([Buz73]; [BGMT] sec. 8.1, eqs. 8.8-8.12)

    X(N) = G(N-1) / G(N),   p_k(j|N) = f_k(j) G_{-k}(N-j) / G(N),   Q_k = sum_j j p_k(j|N),

where G_{-k} is the constant of the network without station k. A think time Z is a delay
station of demand Z in G (not reported as a station).

Numerics
--------
G grows or shrinks geometrically in N (D^N) and leaves double range long before N = 10^4;
the textbook marginal p_k(j|N) = D^j (G(N-j) - D G(N-j-1)) / G(N) (Octave ``qncsconv``'s
complement G_{-k} = G - f * G_{-k}, too) cancels when the station is busy. Here:

* every convolution is a sum of positive terms evaluated in **log space**
  (:func:`qnmodel.solvers.mva.log_convolve`), so nothing overflows or underflows;
* factors are **tilted** by exp(-alpha j), alpha the steepest asymptotic growth rate
  log(D_k / r_k(L)) of a queueing station: G~(n) = G(n) e^{-alpha n} keeps |ln G~| of the
  order of ln N instead of N |ln D|, so ln G~(N-1) - ln G~(N) keeps its relative precision;
  every ratio f_k(j) G_{-k}(N-j) / G(N) is unchanged by the tilt;
* the complement G_{-k} is the convolution of the prefix (stations < k) and suffix
  (stations > k) products: no subtraction anywhere.

The relative error of X and of the p_k(j|N) is a few eps times (3 + max_n |ln G~(n)|)
(tests compare with exact rationals). Cost O(K N^2) time (3K log-convolutions of length
N + 1, in C with the compiled kernels), O(K N) memory.

References
----------
.. [Buz73] J. P. Buzen, "Computational algorithms for closed queueing networks with
   exponential servers", CACM 16(9):527-531, 1973, doi:10.1145/362342.362345.
.. [BGMT] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and Markov
   Chains*, 2nd ed., Wiley 2006, sec. 8.1 (convolution; example 8.1 p. 318 in the 1998
   edition).
.. [Sch81] H. Schwetman, "Some computational aspects of queueing network models", Purdue
   CSD-TR-354, 1981, p. 7 (factor of a general load-dependent station).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import as_population, as_quantity, check_memory
from ..errors import InvalidModelError, InvalidTypeError
from ..results.network import NormalizingConstantResult
from ._netargs import check_has_demand, demand_array, station_kinds, visit_array
from .mva_ld import _tilted_log_factor, log_convolve

__all__ = ["normconst_convolution", "normconst_ld"]


def _memory(N: int, K: int) -> None:
    check_memory(
        8.0 * (N + 1) * (3 * K + 8),
        f"the convolution of {K} stations up to N = {N}",
        "give a smaller N, or raise the limit",
    )


def _solve(lf: list[np.ndarray], alpha: float, N: int, nreport: int):
    """Tilted ln G~(0..N) and the complements ln G~_{-k} of the first ``nreport`` factors."""
    delta = np.full(N + 1, -np.inf)
    delta[0] = 0.0
    prefix = [delta]
    for f in lf:
        prefix.append(log_convolve(prefix[-1], f))
    suffix = [delta]
    for f in reversed(lf):
        suffix.append(log_convolve(suffix[-1], f))
    suffix = suffix[::-1]
    comps = [log_convolve(prefix[k], suffix[k + 1]) for k in range(nreport)]
    return prefix[-1], comps


def _package(method, N, lG, comps, lf, alpha, D, Z, U_of):
    """X, the marginals, Q, R and U from the tilted logs."""
    X = math.exp(lG[N - 1] - lG[N] - alpha)
    K = len(comps)
    j = np.arange(N + 1)
    P = np.empty((K, N + 1))
    with np.errstate(invalid="ignore"):
        for k in range(K):
            P[k] = np.exp(lf[k] + comps[k][N - j] - lG[N])
    P = np.where(np.isnan(P), 0.0, P)
    Q = P @ j.astype(np.float64)
    return NormalizingConstantResult(
        method=method,
        population=N,
        log_normalizing_constant=lG + alpha * j,
        throughput=X,
        response_time=N / X - Z,
        queue_length=Q,
        utilization=U_of(X, P),
        residence_time=Q / X,
        marginal_probabilities=P,
        demands=D,
        think_time=Z,
    )


def normconst_convolution(
    demands: Any,
    N: Any,
    think_time: Any = 0.0,
    delay: Any = None,
    servers: Any = None,
    visits: Any = None,
) -> NormalizingConstantResult:
    """Buzen's convolution for a closed single-class network: G(0..N), X, Q, U, R, p_k(j|N).

    Parameters
    ----------
    demands : array_like (K,)
        D_k, seconds (>= 0); with ``visits``, service times per visit S_k.
    N : int
        Population (>= 1).
    think_time : float
        Z, seconds (>= 0): a delay of demand Z, counted in G.
    delay : array_like of bool (K,), optional
        Delay (infinite-server) stations.
    servers : array_like of int (K,), optional
        m_k >= 1 identical servers.
    visits : array_like (K,), optional
        V_k >= 0; then D = V S.

    Returns
    -------
    NormalizingConstantResult
        ``method="convolution"``: ln G(0..N), X(N) = G(N-1)/G(N) (jobs/s, per unit of
        the visit ratios), R_k = Q_k / X (per cycle), U_k = X D_k / m_k (delay stations
        X D_k), p_k(j|N) for every station (module docstring).

    Notes
    -----
    Log space with tilted factors and prefix/suffix complements (module docstring): exact
    up to rounding at any N and load, O(K N^2) time.
    """
    D = demand_array(demands, visits, classes=False)
    N = as_population(N, "N")
    Z = as_quantity(think_time, "think_time", "time")
    K = D.size
    dly, m, curves = station_kinds(K, delay, servers, jobs=N)
    check_has_demand(D.sum(), Z)
    _memory(N, K)
    ramp = np.arange(1.0, N + 1.0)
    rates = [
        ramp if dly[k] else (curves[k] if curves[k] is not None else np.ones(1)) for k in range(K)
    ]
    slopes = [
        math.log(D[k]) - math.log(float(rates[k][-1])) for k in range(K) if D[k] > 0 and not dly[k]
    ]
    alpha = max(slopes) if slopes else 0.0
    lf = [_log_factor(float(D[k]), rates[k], N, alpha) for k in range(K)]
    if Z > 0:
        lf.append(_log_factor(Z, ramp, N, alpha))
    lG, comps = _solve(lf, alpha, N, K)
    cap = np.where(dly, 1.0, m.astype(np.float64))
    return _package("convolution", N, lG, comps, lf, alpha, D, Z, lambda X, P: X * D / cap)


def _log_factor(D: float, r: np.ndarray, N: int, alpha: float) -> np.ndarray:
    if D <= 0:
        out = np.full(N + 1, -np.inf)
        out[0] = 0.0
        return out
    return _tilted_log_factor(D, r, N, alpha)


def normconst_ld(
    demands: Any,
    N: Any,
    think_time: Any = 0.0,
    visits: Any = None,
) -> NormalizingConstantResult:
    """Convolution for a closed single-class network of general load-dependent stations.

    Parameters
    ----------
    demands : array_like (K, L), L >= N
        D_k(j), seconds (>= 0): the demand of station k while it holds j = 1..L jobs
        (1 / its service rate then, times its visits); columns beyond N are loads that N
        jobs never reach and are not read. With ``visits``, the service times S_k(j).
    N : int
        Population (>= 1).
    think_time : float
        Z, seconds (>= 0).
    visits : array_like (K,), optional
        V_k >= 0; then D_k(j) = V_k S_k(j).

    Returns
    -------
    NormalizingConstantResult
        ``method="convolution.ld"`` with f_k(j) = prod_{i=1..j} D_k(i) ([Sch81] p. 7);
        U_k is the busy probability sum_{j>=1} p_k(j|N) (no subtraction from 1);
        ``demands`` holds D_k(1).
    """
    if isinstance(demands, str) or np.ndim(demands) != 2:
        raise InvalidTypeError(
            "demands must be a K x L matrix: D_k(j) of station k with j = 1..L jobs, got "
            f"shape {np.shape(demands)}"
        )
    N = as_population(N, "N")
    name = "demands" if visits is None else "service_times"
    S = demand_array(demands, None, classes=True)  # checks finite and >= 0, unit strings
    K, L = S.shape
    if visits is not None:
        V = visit_array(visits, "visits", (K,))
        S = S * V[:, None]
    if L < N:
        raise InvalidModelError(
            f"{name} has {L} columns but N = {N}: size mismatch, give the demand of every "
            f"load j = 1..{N} (one column per load)"
        )
    Z = as_quantity(think_time, "think_time", "time")
    if S[:, 0].sum() + Z <= 0:
        raise InvalidModelError(
            "all demands with one job and the think time are zero: throughput is unbounded"
        )
    _memory(N, K)
    Dn = S[:, :N]
    with np.errstate(divide="ignore"):
        logD = np.log(Dn)
    top = logD[:, -1]
    alpha = float(top[np.isfinite(top)].max()) if np.isfinite(top).any() else 0.0
    lf = []
    for k in range(K):
        out = np.empty(N + 1)
        out[0] = 0.0
        out[1:] = np.cumsum(logD[k] - alpha)
        lf.append(out)
    if Z > 0:
        lf.append(_log_factor(Z, np.arange(1.0, N + 1.0), N, alpha))
    lG, comps = _solve(lf, alpha, N, K)
    return _package(
        "convolution.ld", N, lG, comps, lf, alpha, S[:, 0], Z, lambda X, P: P[:, 1:].sum(axis=1)
    )
