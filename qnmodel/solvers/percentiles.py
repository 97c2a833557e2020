"""Response-time distributions as phase-type laws: CDFs and quantiles.

One representation serves every case: a continuous phase-type (PH) law
``(alpha, T)`` -- initial vector over transient phases and sub-generator -- with
CDF ``F(t) = 1 - alpha exp(T t) 1`` and mean ``alpha (-T)^{-1} 1`` ([Neu81]
ch. 2). Sums of independent PH laws are PH (series composition), so a response
time built from stages is one PH law, evaluated with one matrix exponential per
point; quantiles are found by bracketing and Brent's method.

Building blocks
---------------
* :func:`exponential_stage`: one exponential phase of a given mean.
* :func:`order_statistic_ph`: the k-th smallest of independent exponentials
  (k = n: the maximum, a fork-join's full-stripe join; k < n: a k-of-n join).
  States count the finished sub-requests per group of equal rates, so n
  identical branches need only n states.
* :func:`series`: the sum of independent PH laws.
* :func:`hypoexponential_cdf` / :func:`hypoexponential_quantile`: a sum of
  independent exponentials, e.g. the sojourn time of an open tandem of M/M/1
  FCFS queues, which is *exact* there: the sojourn at an M/M/1 queue is
  exponential with rate mu - lambda, and in a tandem the sojourn times at the
  successive queues are independent ([Rei57]; [Kle75] sec. 4.8), so the
  end-to-end time is hypoexponential.

References
----------
.. [Neu81] M. F. Neuts, *Matrix-Geometric Solutions in Stochastic Models*,
   Johns Hopkins, 1981, ch. 2 (phase-type distributions, closure under
   convolution).
.. [Rei57] E. Reich, "Waiting times when queues are in tandem", Ann. Math.
   Statist. 28(3):768-773, 1957 (independence of sojourn times in a tandem of
   M/M/1 queues).
.. [Kle75] L. Kleinrock, *Queueing Systems, Vol. 1*, Wiley 1975, sec. 3.2 (the
   M/M/1 sojourn time is exponential with rate mu - lambda), sec. 4.8.
.. [Tij94] H. C. Tijms, *Stochastic Models: An Algorithmic Approach*, Wiley
   1994, appendix on fitting a mixture of Erlang laws to the first two moments.
.. [Tri02] K. S. Trivedi, *Probability and Statistics with Reliability, Queuing
   and Computer Science Applications*, 2nd ed., Wiley 2002, sec. 3.4 (order
   statistics of exponentials; E[max of n iid Exp(mean d)] = d H_n).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._validate import as_probability
from ..errors import InvalidModelError

__all__ = [
    "PhaseType",
    "exponential_stage",
    "erlang_mixture",
    "two_moment_chain",
    "order_statistic_ph",
    "series",
    "hypoexponential_cdf",
    "hypoexponential_quantile",
]

#: phases above which an order-statistic PH law is refused (matrix exponentials get slow)
MAX_PHASES = 4096


@dataclass(frozen=True)
class PhaseType:
    """A continuous phase-type law: initial vector ``alpha`` (p,), sub-generator ``T`` (p, p).

    ``alpha`` sums to 1 (no mass at zero); ``T`` has non-negative off-diagonal
    entries and row sums <= 0.
    """

    alpha: np.ndarray
    T: np.ndarray

    @property
    def mean(self) -> float:
        """alpha (-T)^{-1} 1, seconds."""
        return float(self.alpha @ np.linalg.solve(-self.T, np.ones(self.T.shape[0])))

    @property
    def variance(self) -> float:
        """2 alpha T^{-2} 1 - mean^2 ([Neu81] ch. 2)."""
        m1 = np.linalg.solve(-self.T, np.ones(self.T.shape[0]))
        m2 = 2.0 * float(self.alpha @ np.linalg.solve(-self.T, m1))
        return m2 - float(self.alpha @ m1) ** 2

    def scaled(self, factor: float) -> PhaseType:
        """The law of ``factor * X`` (time scaled by factor > 0)."""
        return PhaseType(self.alpha, self.T / factor)

    def cdf(self, t: float | Sequence[float] | np.ndarray) -> np.ndarray | float:
        """P(X <= t) = 1 - alpha exp(T t) 1."""
        from scipy.linalg import expm

        ts = np.atleast_1d(np.asarray(t, dtype=np.float64))
        one = np.ones(self.T.shape[0])
        out = np.empty(ts.shape)
        for i, x in enumerate(ts):
            out[i] = 0.0 if x <= 0.0 else 1.0 - float(self.alpha @ expm(self.T * x) @ one)
        out = np.clip(out, 0.0, 1.0)
        return float(out[0]) if np.ndim(t) == 0 else out

    def quantile(self, q: float) -> float:
        """The q-quantile, 0 < q < 1: the t with F(t) = q (Brent's method on a bracket)."""
        from scipy.optimize import brentq

        q = as_probability(q, "q")
        if not 0.0 < q < 1.0:
            raise InvalidModelError(f"q must be strictly between 0 and 1, got {q!r}")
        mean = self.mean
        hi = mean
        while self.cdf(hi) < q:
            hi *= 2.0
            if hi > 1e6 * mean:  # pragma: no cover - a PH law has an exponential tail
                raise InvalidModelError(f"cannot bracket the {q} quantile")
        return float(brentq(lambda x: self.cdf(x) - q, 0.0, hi, xtol=1e-14 * hi, rtol=1e-12))


def exponential_stage(mean: float) -> PhaseType:
    """One exponential phase of the given mean (> 0)."""
    if not (mean > 0.0 and math.isfinite(mean)):
        raise InvalidModelError(f"an exponential stage needs a finite mean > 0, got {mean!r}")
    return PhaseType(np.ones(1), np.array([[-1.0 / mean]]))


def erlang_mixture(mean: float, scv: float, max_phases: int = 512) -> PhaseType:
    """A PH law of the given mean and squared coefficient of variation scv in (0, 1].

    Tijms' two-moment fit ([Tij94]): a mixture of Erlang(m-1) and Erlang(m) with
    one rate, for 1/m <= scv <= 1/(m-1); with probability p the sum of m - 1
    phases, else of m phases, each of rate mu,

        p = (m scv - sqrt(m (1 + scv) - m^2 scv)) / (1 + scv),   mu = (m - p) / mean.

    scv = 1 is the exponential law; scv is raised to 1/max_phases if smaller.
    """
    if not (mean > 0.0 and math.isfinite(mean)):
        raise InvalidModelError(f"a stage needs a finite mean > 0, got {mean!r}")
    scv = min(1.0, max(float(scv), 1.0 / max_phases))
    if scv >= 1.0:
        return exponential_stage(mean)
    m = math.ceil(1.0 / scv - 1e-12)
    p = (m * scv - math.sqrt(max(m * (1.0 + scv) - m * m * scv, 0.0))) / (1.0 + scv)
    p = min(max(p, 0.0), 1.0)
    mu = (m - p) / mean
    T = np.diag(np.full(m, -mu)) + np.diag(np.full(m - 1, mu), 1)
    alpha = np.zeros(m)
    # start in phase 1 (m phases) w.p. 1 - p, in phase 2 (m - 1 phases) w.p. p
    alpha[0] = 1.0 - p
    alpha[1] += p
    return PhaseType(alpha, T)


def two_moment_chain(mean: float, scv: float, max_phases: int = 128):
    """A chain PH law of the given mean (s) and SCV (>= 0): ``(alpha, rates)``.

    The phases are left in order and absorbed after the last; ``alpha`` is where the law
    is entered. scv < 1: Tijms' Erlang mixture (:func:`erlang_mixture`, entered at phase
    1 or 2; scv below 1/max_phases is raised to it); scv = 1: one exponential phase;
    scv > 1: the hyperexponential H2 of balanced means ([Tij94]: p1 = (1 + sqrt((scv - 1)
    / (scv + 1))) / 2, rates 2 p_i / mean) written in Cumani's canonical form -- the slow
    phase then the fast one, entered at the fast phase with probability
    p_f + p_s r_s / r_f (the two transforms agree term by term).
    """
    if not (mean > 0.0 and math.isfinite(mean)) or not (scv >= 0.0 and math.isfinite(scv)):
        raise InvalidModelError(
            f"a two-moment fit needs a finite mean > 0 and scv >= 0, got {mean!r}, {scv!r}"
        )
    if scv <= 1.0:
        ph = erlang_mixture(mean, scv, max_phases)
        return ph.alpha.copy(), -np.diag(ph.T).copy()
    p1 = 0.5 * (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0)))
    p2 = 1.0 - p1
    r1, r2 = 2.0 * p1 / mean, 2.0 * p2 / mean  # r2 < r1: phase 2 is the slow one
    fast = p1 + p2 * r2 / r1
    return np.array([1.0 - fast, fast]), np.array([r2, r1])


def order_statistic_ph(means: Sequence[float], k: int | None = None) -> PhaseType:
    """The k-th smallest of independent exponentials of the given means (k = n: the maximum).

    Phases are the vectors f of finished counts per group of equal means with
    sum(f) < k; from f, a member of group g finishes at rate (m_g - f_g) / d_g.
    For n identical exponentials of mean d this is a pure-death chain of k
    phases with mean d (H_n - H_{n-k}) ([Tri02] sec. 3.4).
    """
    means = [float(m) for m in means]
    n = len(means)
    k = n if k is None else int(k)
    if n == 0 or not 1 <= k <= n:
        raise InvalidModelError(f"order statistic k={k} of n={n} exponentials is undefined")
    if any(not (m > 0.0 and math.isfinite(m)) for m in means):
        raise InvalidModelError(f"exponential means must be finite and > 0, got {means}")
    groups: dict[float, int] = {}
    for m in means:
        groups[m] = groups.get(m, 0) + 1
    d = np.array(list(groups.keys()))
    cnt = np.array(list(groups.values()))
    states = [f for f in itertools.product(*(range(c + 1) for c in cnt)) if sum(f) < k]
    if len(states) > MAX_PHASES:
        raise InvalidModelError(
            f"the join of {n} branches with {len(groups)} different means needs "
            f"{len(states)} phases (> {MAX_PHASES}); group branches with equal demands"
        )
    index = {f: i for i, f in enumerate(states)}
    p = len(states)
    T = np.zeros((p, p))
    for f, i in index.items():
        out = 0.0
        for g in range(d.size):
            rate = (cnt[g] - f[g]) / d[g]
            if rate <= 0.0:
                continue
            out += rate
            nxt = f[:g] + (f[g] + 1,) + f[g + 1 :]
            j = index.get(nxt)
            if j is not None:  # otherwise the k-th completion: absorption
                T[i, j] += rate
        T[i, i] = -out
    alpha = np.zeros(p)
    alpha[index[tuple(0 for _ in cnt)]] = 1.0
    return PhaseType(alpha, T)


def series(*parts: PhaseType) -> PhaseType:
    """The sum of independent PH laws ([Neu81] ch. 2: exits of one part feed the next)."""
    if not parts:
        raise InvalidModelError("a response time needs at least one stage")
    sizes = [x.T.shape[0] for x in parts]
    p = sum(sizes)
    T = np.zeros((p, p))
    alpha = np.zeros(p)
    alpha[: sizes[0]] = parts[0].alpha
    off = 0
    for i, x in enumerate(parts):
        s = sizes[i]
        T[off : off + s, off : off + s] = x.T
        if i + 1 < len(parts):
            exit_rates = -x.T.sum(axis=1)
            T[off : off + s, off + s : off + s + sizes[i + 1]] = np.outer(
                exit_rates, parts[i + 1].alpha
            )
        off += s
    return PhaseType(alpha, T)


def _hypo(rates: Sequence[float]) -> PhaseType:
    r = np.asarray(rates, dtype=np.float64)
    if r.ndim != 1 or r.size == 0 or not np.all(np.isfinite(r) & (r > 0)):
        raise InvalidModelError(
            f"rates must be a non-empty sequence of finite values > 0, got {rates!r}"
        )
    return series(*(exponential_stage(1.0 / x) for x in r))


def hypoexponential_cdf(t: float | Sequence[float], rates: Sequence[float]):
    """CDF of a sum of independent exponentials with the given rates (1/s); equal rates allowed.

    Distinct rates have the closed form 1 - sum_i prod_{j != i} r_j / (r_j - r_i) e^{-r_i t};
    all equal rates r give the Erlang(n, r) law. Evaluated as a PH law (stable either way).
    """
    return _hypo(rates).cdf(t)


def hypoexponential_quantile(q: float, rates: Sequence[float]) -> float:
    """The q-quantile (0 < q < 1) of a sum of independent exponentials of the given rates."""
    return _hypo(rates).quantile(q)
