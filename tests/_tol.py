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
