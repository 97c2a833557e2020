"""Tolerances derived from the method: one home for the tests' error budgets.

A tolerance that is far looser than the method's error lets a regression of that size pass.
Each helper here turns what the tested computation does into the error it may make, so a
test states *why* its tolerance is what it is:

* :func:`closed_form` -- a closed form of ``n`` floating-point operations, evaluated by the
  code and again by the test (possibly in another order): each side is within
  gamma_n = n u / (1 - n u) of the exact value (u = eps / 2, the unit roundoff; [Hig02]_
  Lemma 3.1), so they differ by at most ``2 gamma_n`` relative.
* :func:`exact_fit` -- parameters of a least-squares fit to noise-free synthetic data. The
  residual at the truth is zero up to rounding, so first-order perturbation theory of the
  zero-residual problem ([GV13]_ Theorem 5.3.1, whose kappa^2 term is multiplied by the
  residual and vanishes) bounds the parameters' relative error by ``||J^+||_2 ||delta r||_2``,
  with J the Jacobian of the log model in the log parameters (so both sides are relative)
  and delta r the per-point rounding of the data and of the model, 2 gamma_ops each; times
  :data:`FIT_STOP` for where the iteration stops near that floor.
* :func:`student_t` -- a parameter fitted to noisy data: its standardised error is
  Student-t with the fit's degrees of freedom; the two-sided quantile at a stated false
  failure probability.

References
----------
.. [Hig02] N. J. Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM
   2002, Sec. 3.1 (gamma_n) and Sec. 20.1 (least squares perturbation).
.. [GV13] G. H. Golub and C. F. Van Loan, *Matrix Computations*, 4th ed., Johns Hopkins
   2013, Sec. 5.3.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

__all__ = ["EPS", "U", "FIT_STOP", "gamma", "closed_form", "exact_mva", "exact_fit", "student_t"]

#: machine epsilon of IEEE double (2.22e-16)
EPS = float(np.finfo(float).eps)
#: unit roundoff u = eps / 2: |fl(x op y) - (x op y)| <= u |x op y|
U = EPS / 2


#: The least-squares iteration stops on a relative step of 1e-12 (``qnmodel.calibration.fit``),
#: a little short of or beyond the first-order floor: over 300 random noise-free device fits
#: (a in [0.1, 20] ms, r in [1 MB/s, 5 GB/s], 12 sizes) the error reached 1.21 times the floor;
#: 4 covers that with room.
FIT_STOP = 4.0


def gamma(n: int) -> float:
    """Higham's gamma_n = n u / (1 - n u): the relative error of n rounded operations."""
    return n * U / (1 - n * U)


def closed_form(n_ops: int) -> float:
    """Relative tolerance between two float evaluations of one closed form of ``n_ops``
    operations (the code's and the test's): ``2 gamma_n``. Exact operations (a power of two
    times a float, an integer sum below 2**53) count zero."""
    return 2 * gamma(n_ops)


def exact_mva(stations: int) -> float:
    """Relative error of exact MVA's throughput and response times: ``4 K eps`` for K stations.

    Each step of the recursion rounds a few times per station and feeds the queue lengths
    back through a contraction (X = n / (Z + sum D_k (1 + Q_k)) damps an error in Q), so the
    error does not grow with N; against the 60-digit oracle it is at most 1.2 ulp
    (``tests/solvers/test_mva_ld.py``, the same bound)."""
    return 4 * stations * EPS


def exact_fit(
    model: Callable[..., np.ndarray],
    x: np.ndarray,
    values: Mapping[str, float],
    *,
    ops: int,
    names: tuple[str, ...] | None = None,
) -> float:
    """Relative tolerance of the parameters of a fit to noise-free data ``y = model(x, **values)``.

    ``FIT_STOP * ||J^+||_2 * sqrt(m) * 2 gamma_ops`` with J_ij = d log f_i / d log p_j at the
    truth (central differences; the norm needs two digits at most): the data and the fit's value
    of each of the m points are both rounded (``ops`` operations each), and the zero-residual
    least-squares solution moves by at most ``||J^+||`` times that residual ([GV13]_ Thm
    5.3.1). ``names``: the fitted parameters (default: all of ``values``).
    """
    names = tuple(values) if names is None else names
    x = np.asarray(x, dtype=float)
    base = np.log(np.abs(np.asarray(model(x, **values), dtype=float)))
    cols = []
    for n in names:
        h = 1e-6
        up = dict(values, **{n: values[n] * np.exp(h)})
        dn = dict(values, **{n: values[n] * np.exp(-h)})
        fu = np.log(np.abs(np.asarray(model(x, **up), dtype=float)))
        fd = np.log(np.abs(np.asarray(model(x, **dn), dtype=float)))
        cols.append((fu - fd) / (2 * h))
    J = np.column_stack(cols)
    pinv_norm = 1.0 / np.linalg.svd(J, compute_uv=False)[-1]
    return float(FIT_STOP * pinv_norm * np.sqrt(base.size) * 2 * gamma(ops))


def student_t(dof: int, p_false: float = 1e-6) -> float:
    """Two-sided Student-t quantile: |estimate - truth| <= this * stderr fails a correct
    fit with probability ``p_false``."""
    from scipy import stats

    return float(stats.t.isf(p_false / 2, dof))


# -- exact solvers checked against themselves, closed forms and laws ----------------------------
#
# The solvers' recursions (MVA over n = 1..N, its load-dependent and multiclass forms, the open
# product forms) are exact: what they compute differs from the true value by rounding only. The
# MVA step R_k = D_k (1 + Q_k(n-1)), X = n / (Z + sum_k R_k), Q_k = X R_k is stable: a relative
# perturbation of Q(n-1) reaches R(n) scaled by Q/(1 + Q) < 1 and X(n), Q(n) no larger, so the
# roundings of the steps at most add up ([Rei80]_; [Hig02]_ Sec. 3.3 for sums of error terms).
# Two such evaluations (the code and a reference, possibly summing in another order, e.g. another
# BLAS) therefore differ by at most 2 gamma(steps * ops_per_step). This a-priori bound grows
# with N; :func:`exact_mva` is the error measured against a 60-digit oracle, which stays flat
# in N on the networks measured there.
#
# .. [Rei80] M. Reiser and S. S. Lavenberg, "Mean-value analysis of closed multichain queuing
#    networks", J. ACM 27(2), 1980.


def recursion(steps: int, ops_per_step: int) -> float:
    """Relative tolerance between two evaluations of an exact, stable recursion of ``steps``
    steps of ``ops_per_step`` rounded operations each: ``closed_form(steps * ops_per_step)``
    (the per-step errors add, none is amplified). For MVA over n = 1..N on K stations a step is
    about 4 K + 2 operations (R_k, the sum, X, Q_k)."""
    return closed_form(steps * ops_per_step)


#: load-dependent MVA by the log-space convolution (several load-dependent stations): a log G of
#: magnitude L carries L eps absolute, which exp() turns into L eps relative; L reaches ~1300 in
#: tests/solvers/test_mva_ld.py (measured 1043 ulp against a 60-digit oracle there): 4096 eps.
#: The single-curve complement recursion stays within a few ulps, well inside this.
LOG_CONV = 4096 * EPS

#: a value copied, serialised (shortest repr round-trips exactly) or read back: equal up to one
#: rounding, allowed so that a conversion through another unit or container stays legal.
COPY = closed_form(1)

#: a quantile of a phase-type law (qnmodel.solvers.percentiles.PhaseType.quantile): Brent's method
#: stops within 1e-12 |t| + 1e-14 hi (the bracket hi < 2 t for q >= 1/2), and the CDF's rounding
#: (expm, a few ulps of ||T t||) moves t by that over t f(t), <= 150x at q = 0.999: 1e-10.
PH_QUANTILE = 1e-10

__all__ += ["recursion", "COPY", "PH_QUANTILE", "LOG_CONV"]
