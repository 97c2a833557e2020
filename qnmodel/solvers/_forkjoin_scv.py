"""Fork-join members whose service is not exponential (SCV != 1): the join of two-moment laws.

The fork-join technique (:mod:`qnmodel.solvers.forkjoin`) races a request's sub-requests,
each taken as a shift (the work found ahead) plus an exponential service, and its mean is
the expected k-th order statistic of those times. An exponential race is wrong for members
of other variability: n constant 5 ms members finish a lone request in 5 ms, not in
5 ms x H_n. Here (ours, approximate) a member of mean service d and squared coefficient of
variation c^2 is given a **gamma** law of that mean and SCV (shape 1/c^2, scale d c^2; a
constant d for c^2 = 0; the exponential for c^2 = 1), and

    E[T_(k)] = integral_0^inf P(fewer than k of {shift_i + G_i} are <= t) dt,

the probability a Poisson-binomial tail of the members' CDFs F_i(t - shift_i), integrated
piecewise between the shifts and the constant members' completion times (scipy ``quad``).

Closed networks ([Var99]'s mean value technique): the work found ahead at a member of
utilisation U (at n - 1) is the M/G/1 decomposition of the FCFS wait,
d A + a U d (c^2 - 1) / 2 (the job in service has residual life d (1 + c^2) / 2, [Kle75]
sec. 5.2, instead of d), and the race is over gamma laws. The weight
a = 1 - Q_fj(n-1) / (n-1) (ours) is the share of the other requests away from the element:
a request that comes straight back (no think time, nothing else in the cycle) arrives as
the one ahead starts its service and meets its whole service time, not a residual one, so
constant members with N requests and no think time take N d, as measured; requests that
arrive from a long think time see the random-observer residual. Open networks: each member's
sojourn is an M/G/1 one -- mean d + rho d (1 + c^2) / (2 (1 - rho)) (Pollaczek-Khinchine),
variance Var W + c^2 d^2 with Takacs' second moment of the wait ([Kle75] eq. 5.110) --
fitted by a gamma law; the maximum of independent such sojourns is then corrected toward
the members' positive correlation by Nelson and Tantawi's factor, as for different
exponential members (:mod:`qnmodel.solvers.forkjoin`, blended by how alike the members
are). Exponential members keep the exponential formulas exactly.

Measured against ``qnmodel.simulate`` (which draws a lognormal law for an SCV other than
0 and 1): ``tests/accuracy/forkjoin_scv.py``, table in docs/explanation/fork-join.md.

Supported: full joins (k = fanout) of single-server members. k-of-n joins (whose
cancellation busy times assume exponential members) and multi-server or load-dependent
non-exponential members are refused by the caller.

References
----------
.. [Var99] E. Varki, "Mean value technique for closed fork-join networks", SIGMETRICS 1999.
.. [Kle75] L. Kleinrock, *Queueing Systems, Vol. 1*, Wiley 1975, sec. 5.2 (residual life),
   eq. 5.110 (second moment of the M/G/1 wait).
.. [NT88] R. Nelson, A. N. Tantawi, IEEE Trans. Computers 37(6):739-743, 1988.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidModelError
from ._forkjoin_terms import fewer_than, harmonic, nelson_tantawi


def member_cdf(t: np.ndarray, means: np.ndarray, scvs: np.ndarray) -> np.ndarray:
    """P(G_i <= t) of the gamma laws of the given means (s) and SCVs (>= 0), elementwise;
    t may be negative (0 there). SCV 0: a step at the mean."""
    from scipy.special import gammainc

    t = np.asarray(t, dtype=np.float64)
    out = np.zeros(np.broadcast(t, means).shape)
    det = scvs <= 0.0
    pos = t > 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        shape = np.where(det, 1.0, 1.0 / np.where(det, 1.0, scvs))
        scale = np.where(det, 1.0, means * scvs)
        g = gammainc(shape, np.where(pos, t, 0.0) / np.where(scale > 0, scale, 1.0))
    out = np.where(det, (t >= means).astype(np.float64), np.where(pos, g, 0.0))
    return np.where(means <= 0.0, (t >= 0.0).astype(np.float64), out)


def _survival(t: float, shifts: np.ndarray, means: np.ndarray, scvs: np.ndarray, k: int) -> float:
    """P(fewer than k of shift_i + G_i are <= t) (Poisson-binomial, truncated at k)."""
    return fewer_than(member_cdf(t - shifts, means, scvs), k)


def expected_order_statistic_scv(means, scvs, k: int | None = None, shifts=None) -> float:
    """E[k-th smallest of {shift_i + G_i}], G_i gamma of mean ``means[i]`` (s) and SCV
    ``scvs[i]`` (>= 0), independent; k = n (default) is the maximum.

    The survival function is integrated piecewise between the shifts and the constant
    members' completion times, the tail in two pieces (``quad``, relative tolerance 1e-10).
    Equal shifts c and constant members of mean d give c + d exactly.
    """
    from scipy.integrate import quad

    d = np.asarray(means, dtype=np.float64).ravel()
    c2 = np.asarray(scvs, dtype=np.float64).ravel()
    n = d.size
    k = n if k is None else int(k)
    c = np.zeros(n) if shifts is None else np.asarray(shifts, dtype=np.float64).ravel()
    if n == 0 or not 1 <= k <= n or c.size != n or c2.size != n:
        raise InvalidModelError(f"order statistic k={k} of n={n} values is undefined")
    if np.any(c2 < 0) or np.any(d < 0):
        raise InvalidModelError(f"means and SCVs must be >= 0, got {d}, {c2}")
    cuts = np.unique(np.concatenate(([0.0], c, (c + d)[c2 <= 0.0])))
    total = 0.0
    args = (c, d, c2, k)
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        v, _ = quad(_survival, a, b, args=args, epsabs=0.0, epsrel=1e-10, limit=200)
        total += v
    top = float(cuts[-1])
    span = float(np.max(d * (1.0 + 10.0 * np.sqrt(c2))) + 1e-300)
    v, _ = quad(_survival, top, top + span, args=args, epsabs=0.0, epsrel=1e-10, limit=400)
    w, _ = quad(_survival, top + span, np.inf, args=args, epsabs=1e-13 * (top + span),
                epsrel=1e-10, limit=400)  # fmt: skip
    return float(total + v + w)


def open_join(d, scv, T, T_scv, rho) -> float:
    """Mean response time of an open full join of M/G/1 members (module docstring).

    Between two extremes: L, the members' waits common to all (every member saw the same
    arrivals: the race of the services G_i shifted by the mean waits W_i = T_i - d_i), and
    U, the maximum of independent gamma fits of the sojourns (mean T_i, SCV T_scv_i).
    R = L + w (U - L): for exponential members w_1 is where Nelson and Tantawi's R_n
    ([NT88]) lies between the two at the largest utilisation; constant members (SCV 0)
    see identical queues (w = 0, R = L); the weight moves with the mean SCV c^2 of the
    members as w = w_1 c^2 (c^2 <= 1) and 1 - (1 - w_1) / c^2 (c^2 > 1: large services
    hit the members at different times, the sojourns decorrelate). The weight is ours.
    """
    n = d.size
    if n == 1:
        return float(T[0])
    low = expected_order_statistic_scv(d, scv, n, shifts=np.maximum(T - d, 0.0))
    high = expected_order_statistic_scv(T, T_scv, n)
    rs = float(np.max(rho))
    h = harmonic(n)
    lo1, hi1 = rs / (1.0 - rs) + h, h / (1.0 - rs)
    w1 = (nelson_tantawi(n, rs, 1.0) - lo1) / (hi1 - lo1) if hi1 > lo1 else 1.0
    w1 = min(max(w1, 0.0), 1.0)
    c2 = float(np.mean(scv))
    w = w1 * c2 if c2 <= 1.0 else 1.0 - (1.0 - w1) / c2
    return float(low + w * (high - low))


def mg1_sojourn_moments(lam: float, d: float, scv: float, law) -> tuple[float, float]:
    """Mean and variance (s, s^2) of the sojourn at an open M/G/1 FCFS member of mean
    service d, SCV scv and service law ``law`` at arrival rate lam (module docstring)."""
    from .response_laws import _third_moment

    rho = lam * d
    ew = lam * d * d * (1.0 + scv) / (2.0 * (1.0 - rho))
    ew2 = 2.0 * ew * ew + lam * _third_moment(law, d, scv) / (3.0 * (1.0 - rho))
    return d + ew, max(ew2 - ew * ew, 0.0) + scv * d * d
