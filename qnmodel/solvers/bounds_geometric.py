"""Geometric and proportional bounds of closed single-class networks, n = 1..N.

Both improve on the balanced job bounds by bounding the queue lengths of the non-bottleneck
stations, and both are non-iterative: one vectorised pass gives the whole curve.

Delay stations and think time
-----------------------------
A delay station is a think time in a product-form network, so the bounds are computed for
the queueing stations with Z' = Z + sum of delay demands (as :mod:`qnmodel.solvers.bounds`
does), and R(n) = n / X(n) - Z keeps the delay residence times.

Differences from Octave ``queueing`` 1.2.7 (``qncsgb``, ``qncspb``)
------------------------------------------------------------------
* ``qncsgb`` bounds the queue lengths at N - 1 jobs with the asymptotic throughput bound
  of N jobs; here they use the tightest of the asymptotic, balanced-job and proportional
  bounds at N - 1 jobs (all valid, see :func:`bounds_geometric`), which reproduces the
  paper's Tables IV and V (Octave marks those two test blocks ``xtest``: its upper bounds
  miss them). The lower throughput bounds agree exactly.
* ``qncsgb`` returns ``[Xl, Xu, Ru, Rl, ...]``, response-time bounds in the order opposite
  to its documentation, and its documented 7-argument form (X^-, X^+ given) fails: it
  passes all seven to a checker that takes five.
* The queue-length bounds of the bottleneck stations are clipped to [0, n] here (Octave's
  can be negative at small n; a negative lower bound is true but says nothing).
* ``qncspb`` evaluates sum(D.^N) / sum(D.^(N-1)), which underflows to 0/0 for large N
  (D = 0.1, N = 400); here (D / D_max)^n is summed instead, times D_max.

References
----------
.. [CMS08] G. Casale, R. R. Muntz, G. Serazzi, "Geometric bounds: a non-iterative analysis
   technique for closed queueing networks", IEEE Trans. Computers 57(6):780-794, 2008,
   doi:10.1109/TC.2008.37: eq. (8) (queue-length lower bounds), eq. (13) (upper), the
   geometric bounds (GB, Z = 0), the geometric square-root bounds (GSB, Z > 0) and
   Tables IV-V; its non-iterative form of the proportional bounds.
.. [HL87] C. H. Hsieh, S. S. Lam, "Two classes of performance bounds for closed queueing
   networks", Performance Evaluation 7(1):3-30, 1987, doi:10.1016/0166-5316(87)90054-X
   (proportional bounds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_population, as_quantity, check_memory, check_time_scale
from ..errors import InvalidModelError
from ..results.network import CurveBoundsResult
from ._bounds_core import aba_from_aggregates, bjb_from_aggregates
from ._netargs import check_has_demand, demand_array, station_kinds

__all__ = ["bounds_geometric", "bounds_proportional"]


def _inputs(demands, N, think_time, delay, servers, visits, what):
    D = demand_array(demands, visits, classes=False)
    N = as_population(N, "N")
    Z = as_quantity(think_time, "think_time", "time")
    K = D.size
    delay, m, _ = station_kinds(K, delay, servers, jobs=1)  # the curves are unused
    if np.any(m > 1):
        k = int(np.flatnonzero(m > 1)[0])
        raise InvalidModelError(
            f"{what} supports single-server stations only; station {k} has {m[k]} servers "
            "(use qnmodel.bounds(..., method='aba') or exact load-dependent MVA)"
        )
    check_has_demand(D.sum(), Z)
    check_time_scale(N, float(D.sum()), Z)
    check_memory(
        8.0 * 8 * (N + 1) * (K + 2),
        f"{what} for n = 1..{N}",
        "give a smaller N, or raise the limit",
    )
    L = np.where(delay, 0.0, D)
    Zp = Z + float(D[delay].sum())
    return D, N, Z, delay, L, Zp


def _geometric_sum(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """sum_{j=1..p} y^j = y (1 - y^p) / (1 - y) for 0 <= y < 1 (0 for y = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        s = y * -np.expm1(p * np.log(y)) / (1.0 - y)
    return np.where(y > 0, s, 0.0)


def _pure_delay(what, D, N, Z, delay, Zp):
    n = np.arange(1, N + 1, dtype=np.float64)
    X = n / Zp
    Q = X[:, None] * np.where(delay, D, 0.0)[None, :]
    return CurveBoundsResult(what, n, X, X, n / X - Z, n / X - Z, Z, D, Q, Q)


def _pb_arrays(L: np.ndarray, Zp: float, n: np.ndarray):
    """Proportional bounds (lower, upper) on X(n) for the populations n >= 1 (Notes of
    :func:`bounds_proportional`)."""
    Ltot = float(L.sum())
    Lmax = float(L.max())
    u = L[L > 0] / Lmax
    lu = np.log(u)
    pw = np.exp(np.outer(n, lu))  # (u_k)^n
    pw_prev = np.exp(np.outer(n - 1.0, lu))
    ratio = Lmax * pw.sum(axis=1) / pw_prev.sum(axis=1)
    x_lo = n / (Zp + Ltot + (n - 1.0) * ratio)
    x_hi = np.minimum(
        1.0 / Lmax, n / (Zp + Ltot + (n - 1.0 - Zp / Lmax) * float((L * L).sum()) / Ltot)
    )
    return x_lo, x_hi


def _throughput_envelope(L: np.ndarray, Zp: float, p: np.ndarray):
    """Tightest of the asymptotic, balanced-job and proportional bounds on X(p), p >= 0."""
    Ltot, Lmax = float(L.sum()), float(L.max())
    Davg = Ltot / int(np.count_nonzero(L))
    pos = np.maximum(p, 1.0)
    a_lo, a_hi, _, _ = aba_from_aggregates(pos, Ltot, Lmax, Zp)
    b_lo, b_hi, _, _ = bjb_from_aggregates(pos, Ltot, Lmax, Davg, Zp)
    c_lo, c_hi = _pb_arrays(L, Zp, pos)
    lo = np.maximum(np.maximum(a_lo, b_lo), c_lo)
    hi = np.minimum(np.minimum(a_hi, b_hi), c_hi)
    return np.where(p > 0, lo, 0.0), np.where(p > 0, hi, 0.0)


def bounds_geometric(
    demands: Any,
    N: Any,
    think_time: Any = 0.0,
    delay: Any = None,
    servers: Any = None,
    visits: Any = None,
) -> CurveBoundsResult:
    """Geometric bounds ([CMS08]) on X(n), R(n) and Q_k(n) for n = 1..N.

    Parameters
    ----------
    demands : array_like (K,)
        D_k, seconds (>= 0); with ``visits``, service times per visit.
    N : int
        Largest population (>= 1).
    think_time : float
        Z, seconds (>= 0).
    delay : array_like of bool (K,), optional
        Delay stations (folded into the think time, module docstring).
    servers : array_like of int (K,), optional
        Must be all 1: the bounds assume single-server stations.
    visits : array_like (K,), optional
        V_k >= 0; then D = V S.

    Returns
    -------
    CurveBoundsResult
        ``method="geometric"`` for Z' = 0, ``"geometric.sqrt"`` for Z' > 0, with queue
        bounds. With queueing demands L_k, L = sum L_k, L_max (held by m_max stations) and
        X^-(p), X^+(p) the tightest of the asymptotic, balanced-job and proportional
        throughput bounds at p jobs, for L_k < L_max ([CMS08] eqs. 8, 13)

        ``Q_k^-(p) = sum_{j=1..p} y_k^j``, y_k = L_k p / (Z' + L + L_max p);
        ``Q_k^+(p) = sum_{j=1..p} Y_k^j``, Y_k = L_k X^+(p);

        at the bottleneck stations Q^-(p) = (p - Z' X^+(p) - sum Q_k^+) / m_max and
        Q^+(p) = (p - Z' X^-(p) - sum Q_k^-) / m_max (clipped to [0, p]). Then, with
        b^± = Z' + L + L_max (n - 1) - sum_k (L_max - L_k) Q_k^∓(n - 1):
        Z' = 0: X^± = n / b^±; Z' > 0 (GSB):
        ``X^- = 2n / (b^- + sqrt((b^-)^2 - 4 Z' L_max (n - 1)))``,
        ``X^+ = 2n / (b^+ + sqrt((b^+)^2 - 4 Z' L_max n))``.

        The queue bounds at n use X^±(n); the throughput bounds are not intersected with
        the others (take the elementwise max/min for the tightest envelope).

    Notes
    -----
    [CMS08] does not say which X^+ enters eq. (13); the envelope of the three classic
    bounds at the same population reproduces its Table IV (Z = 0) to every printed digit,
    and Table V (Z = 1) except at N = 10, where it gives 6.1414 for the printed 6.1410
    (+6.5e-5 relative; exact MVA: 5.8719). Octave's ``qncsgb`` uses the asymptotic bound of
    N jobs for the queues at N - 1 (module docstring), which gives the same lower and a
    looser upper bound.

    The geometric sums are evaluated as y (-expm1(p log y)) / (1 - y): no overflow. Since
    (L_max - L_k) Q_k^+ <= L_k, b^± >= Z' + L_max n and the discriminants are
    >= (Z' - L_max n)^2 >= 0: real square roots, sums of positive terms. O(N K).
    """
    what = "bounds_geometric"
    D, N, Z, delay, L, Zp = _inputs(demands, N, think_time, delay, servers, visits, what)
    Ltot = float(L.sum())
    if Ltot <= 0:
        return _pure_delay("geometric" if Zp == 0 else "geometric.sqrt", D, N, Z, delay, Zp)
    Lmax = float(L.max())
    top = ~delay & (L == Lmax)
    low = ~delay & (L < Lmax)
    m_max = float(top.sum())
    p = np.arange(N + 1, dtype=np.float64)  # populations 0..N
    x_minus, x_plus = _throughput_envelope(L, Zp, p)
    P = p[:, None]
    y = L[low][None, :] * P / (Zp + Ltot + Lmax * P)
    q_lo_low = _geometric_sum(y, P)
    q_hi_low = _geometric_sum(L[low][None, :] * x_plus[:, None], P)
    q_lo_top = (p - Zp * x_plus - q_hi_low.sum(axis=1)) / m_max
    q_hi_top = (p - Zp * x_minus - q_lo_low.sum(axis=1)) / m_max

    n = p[1:]
    gap = Lmax - L[low]
    b_lo = Zp + Ltot + Lmax * (n - 1.0) - q_lo_low[:-1] @ gap
    b_hi = Zp + Ltot + Lmax * (n - 1.0) - q_hi_low[:-1] @ gap
    if Zp == 0:
        method = "geometric"
        x_lo, x_hi = n / b_lo, n / b_hi
    else:
        method = "geometric.sqrt"
        x_lo = 2.0 * n / (b_lo + np.sqrt(b_lo * b_lo - 4.0 * Zp * Lmax * (n - 1.0)))
        x_hi = 2.0 * n / (b_hi + np.sqrt(b_hi * b_hi - 4.0 * Zp * Lmax * n))

    K = D.size
    q_lo = np.zeros((N, K))
    q_hi = np.zeros((N, K))
    q_lo[:, low], q_hi[:, low] = q_lo_low[1:], q_hi_low[1:]
    q_lo[:, top] = np.clip(q_lo_top[1:], 0.0, n)[:, None]
    q_hi[:, top] = np.clip(q_hi_top[1:], 0.0, n)[:, None]
    q_lo[:, delay] = x_minus[1:, None] * D[delay][None, :]
    q_hi[:, delay] = x_plus[1:, None] * D[delay][None, :]
    return CurveBoundsResult(method, n, x_lo, x_hi, n / x_hi - Z, n / x_lo - Z, Z, D, q_lo, q_hi)


def bounds_proportional(
    demands: Any,
    N: Any,
    think_time: Any = 0.0,
    delay: Any = None,
    servers: Any = None,
    visits: Any = None,
) -> CurveBoundsResult:
    """Proportional bounds ([HL87], non-iterative form of [CMS08]) for n = 1..N.

    Parameters as :func:`bounds_geometric`.

    Returns
    -------
    CurveBoundsResult
        ``method="proportional"``, without queue bounds. With queueing demands L_k,
        L = sum L_k, L_max, Z' as in the module docstring:

        ``X^-(n) = n / (Z' + L + (n - 1) sum_k L_k^n / sum_k L_k^(n-1))``,
        ``X^+(n) = min(1 / L_max, n / (Z' + L + (n - 1 - Z' / L_max) sum_k L_k^2 / L))``.

    Notes
    -----
    sum L^n / sum L^(n-1) is evaluated as L_max sum (L/L_max)^n / sum (L/L_max)^(n-1): the
    powers stay in [0, 1] and the bottleneck terms equal 1, so nothing overflows or turns
    into 0/0 at large n.
    """
    what = "bounds_proportional"
    D, N, Z, delay, L, Zp = _inputs(demands, N, think_time, delay, servers, visits, what)
    Ltot = float(L.sum())
    if Ltot <= 0:
        r = _pure_delay("proportional", D, N, Z, delay, Zp)
        return CurveBoundsResult(
            "proportional",
            r.n,
            r.throughput_lower,
            r.throughput_upper,
            r.response_time_lower,
            r.response_time_upper,
            Z,
            D,
        )
    n = np.arange(1, N + 1, dtype=np.float64)
    x_lo, x_hi = _pb_arrays(L, Zp, n)
    return CurveBoundsResult("proportional", n, x_lo, x_hi, n / x_hi - Z, n / x_lo - Z, Z, D)
