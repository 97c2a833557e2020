"""Universal Scalability Law fit of throughput against concurrency.

Gunther's USL (SPEC §4; seed 001's multi-client NFS bandwidth rises,
saturates near 18 clients and then falls):

    X(N) = lam * N / (1 + sigma (N - 1) + kappa N (N - 1))

``lam`` is the throughput of one client (ops/s or bytes/s), ``sigma`` the
contention (serialisation) coefficient in [0, 1] and ``kappa`` the coherency
(crosstalk) coefficient >= 0. The law, its peak N* = sqrt((1 - sigma)/kappa)
and the throughput there live in :mod:`qnmodel.models.usl` (one home); this
module fits the coefficients to measurements with that module's kernel, so the
fit's ``peak`` and ``peak_throughput`` are the :class:`~qnmodel.models.usl.USL`
``peak_concurrency`` and ``max_throughput`` of the fitted coefficients.

References
----------
.. [Gun07] N. J. Gunther, *Guerrilla Capacity Planning*, Springer, 2007,
   ch. 4 (eq. 4.31 the USL, eq. 4.33 the peak), ch. 5 (fitting by regression).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._validate import as_populations, as_quantities
from ..errors import InvalidModelError, MeasurementArtefactWarning
from ..models.usl import usl_kernel, usl_peak_kernel, usl_throughput
from .fit import CalibrationResult, fit_model
from .parameters import Parameter, Parameters

__all__ = ["fit_usl", "usl_throughput", "MIN_USL_POINTS"]

#: The fewest distinct concurrency levels fit_usl accepts.
MIN_USL_POINTS = 6


def _peak(v: dict[str, float]) -> float:
    return usl_peak_kernel(v["lam"], v["sigma"], v["kappa"])[0]


def _peak_throughput(v: dict[str, float]) -> float:
    return usl_peak_kernel(v["lam"], v["sigma"], v["kappa"])[1]


def fit_usl(
    n: Any,
    x: Any,
    *,
    params: Any = None,
    weights: str | Any = "relative",
    ci_level: float = 0.95,
    uncertainty: str = "auto",
    n_boot: int = 200,
) -> CalibrationResult:
    """Fit the USL coefficients ``lam``, ``sigma``, ``kappa`` to measured X(N).

    Parameters
    ----------
    n : array_like
        Concurrency levels N: client counts, integers >= 1 (no unit; repeats
        allowed for replicates).
        At least 6 **distinct** levels are required: three coefficients plus
        the curvature that tells contention from coherency need them.
    x : array_like
        Measured throughput at each N (ops/s, bytes/s, ...; > 0), same length.
    params : dict or Parameters, optional
        Overrides, e.g. ``{"kappa": {"value": 0.0, "vary": False}}`` for
        Amdahl's law.
    weights : {"relative", "absolute"} or array_like
        Relative errors by default (throughput noise grows with throughput).
    ci_level, uncertainty, n_boot
        See :func:`~qnmodel.calibration.fit.fit_model`. kappa often ends on its
        bound 0; the intervals then come from the bootstrap.

    Returns
    -------
    CalibrationResult
        ``values`` holds ``lam`` (unit of x), ``sigma``, ``kappa`` and the
        derived ``peak`` (the real-valued N* = sqrt((1 - sigma)/kappa), ``inf``
        when kappa = 0) and ``peak_throughput`` (X at max(N*, 1), lam/sigma when
        kappa = 0): the ``peak_concurrency`` and ``max_throughput`` of
        :class:`qnmodel.models.usl.USL`.

    Raises
    ------
    InvalidModelError
        Fewer than 6 distinct concurrency levels, N < 1 or not whole, or x <= 0.
    InvalidTypeError
        N given with a unit (``"8 Hz"``): a concurrency is a count.
    """
    nv = as_populations(n, "n", allow_zero=False).astype(np.float64)
    xv = as_quantities(x, "x", "frequency")
    if nv.size != xv.size:
        raise InvalidModelError(
            f"n has {nv.size} values but x has {xv.size}: give one throughput per concurrency"
        )
    if np.any(xv <= 0):
        i = int(np.flatnonzero(xv <= 0)[0])
        raise InvalidModelError(f"x[{i}] must be > 0, got {xv[i]!r}")
    distinct = np.unique(nv)
    if distinct.size < MIN_USL_POINTS:
        raise InvalidModelError(
            f"fit_usl needs at least {MIN_USL_POINTS} distinct concurrency levels, got "
            f"{distinct.size} ({[int(v) for v in distinct]}); measure more levels, e.g. "
            "1, 2, 4, 8, 16, 32"
        )
    order = np.argsort(nv, kind="stable")
    nv, xv = nv[order], xv[order]

    # Starting values: lam from the smallest N, then Gunther's linearisation
    # ([Gun07] ch. 5): N lam / X - 1 = sigma (N-1) + kappa N (N-1), solved by NNLS.
    from scipy.optimize import nnls

    lam0 = float(np.median(xv[nv == nv[0]]) / nv[0])
    lam0 = max(lam0, float(np.max(xv / nv)))
    lhs = nv * lam0 / xv - 1.0
    A = np.column_stack([nv - 1.0, nv * (nv - 1.0)])
    (s0, k0), _ = nnls(A, lhs)
    s0 = min(max(s0, 1e-6), 0.999)
    k0 = max(k0, 0.0)
    base = Parameters(
        [
            Parameter("lam", lam0, min=0.0, unit=""),
            Parameter("sigma", s0, min=0.0, max=1.0, unit=""),
            Parameter("kappa", k0, min=0.0, unit=""),
        ]
    ).updated(params)

    def func(nn, **v):
        return usl_kernel(nn, v["lam"], v["sigma"], v["kappa"])

    res = fit_model(
        func,
        base,
        nv,
        xv,
        weights=weights,
        ci_level=ci_level,
        uncertainty=uncertainty,
        n_boot=n_boot,
        derived={"peak": (_peak, ""), "peak_throughput": (_peak_throughput, "")},
        model="USL X(N) = lam N / (1 + sigma (N-1) + kappa N (N-1))",
        extra={
            "concurrency_levels": [int(v) for v in distinct],
        },
    )
    peak = res.values["peak"]
    nmax = float(distinct[-1])
    if math.isfinite(peak) and peak > 2 * nmax:
        msg = (
            f"the fitted peak N = {peak:.3g} lies beyond twice the largest measured "
            f"concurrency ({nmax:g}): it is an extrapolation"
        )
        warnings.warn(f"fit_usl: {msg}", MeasurementArtefactWarning, stacklevel=2)
        return res.with_notes(msg)
    return res
