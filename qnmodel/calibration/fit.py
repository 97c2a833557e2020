"""Weighted non-linear least squares with honest uncertainty.

:func:`fit_model` is the engine under every calibration fit in this package
(device, CPU, link, NFS, USL): it minimises the weighted residuals
``(y_i - f(x_i; p)) / sigma_i`` with :func:`scipy.optimize.least_squares`
(trust-region reflective, bounds honoured) and returns a
:class:`~qnmodel.calibration.result.CalibrationResult` (defined in
:mod:`qnmodel.calibration.result`, re-exported here) holding values, standard errors, covariance,
confidence intervals, residuals and a report.

How uncertainty is estimated (``uncertainty="auto"``)
-----------------------------------------------------
1. **Covariance** ``C = s^2 (J^T J)^{-1}`` from the Jacobian J of the
   weighted residuals at the optimum, with ``s^2 = chi^2 / (n - p)`` (the
   reduced chi-square: the weights fix only the *relative* size of the errors)
   unless ``scale_covar=False``. Confidence intervals are
   ``value +- t_{n-p, (1+level)/2} * stderr`` (Student t, exact for a linear
   model with Gaussian errors).
2. The covariance is **unreliable** when a varying parameter ends on one of
   its bounds (the quadratic approximation is cut in half there). Then a
   **residual bootstrap** replaces it: new data ``y* = f(x; p) + sigma_i e*_i``
   with ``e*`` drawn with replacement from the centred, dof-inflated weighted
   residuals, refitted ``n_boot`` times; standard errors are the bootstrap
   standard deviations and intervals the percentile intervals, widened about
   the estimate by ``t_{n-p} / z`` (the small-sample correction the Student t
   brings to the covariance intervals; without it the percentile intervals of
   a 10-point fit cover about 90% instead of 95%) and kept inside the bounds.
3. **No uncertainty** when it cannot be estimated, with the reason in
   :attr:`CalibrationResult.uncertainty_message`: no degrees of freedom left
   (as many varying parameters as points), or a rank-deficient Jacobian
   (parameters not separately identifiable from these data). Then every
   ``stderr`` is ``None`` and ``errorbars`` is False; nothing downstream may
   assume a covariance exists.

References
----------
.. [NR] W. H. Press et al., *Numerical Recipes*, 3rd ed., 2007, sec. 15.5-15.6
   (non-linear models, confidence limits, bootstrap).
.. [ET] B. Efron, R. Tibshirani, *An Introduction to the Bootstrap*, 1993,
   sec. 9.5 (bootstrapping residuals of regression models).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy import optimize, stats

from .._validate import as_choice, as_reals
from ..errors import ConvergenceWarning, InvalidModelError, InvalidTypeError
from .parameters import Parameters
from .result import CalibrationResult, goodness_of_fit

__all__ = ["CalibrationResult", "fit_model", "UNCERTAINTY_METHODS"]

UNCERTAINTY_METHODS = ("auto", "covariance", "bootstrap", "none")

#: Distance (in units of the parameter's starting scale) under which a fitted value
#: counts as lying on its bound; such values are reported as the bound itself.
_BOUND_RTOL = 1e-9


# ---------------------------------------------------------------------------------------
# the engine
# ---------------------------------------------------------------------------------------


class _Problem:
    """Weighted residuals in scaled coordinates u = p / scale (so every u is O(1))."""

    def __init__(self, func, params: Parameters, x, y, sigma):
        self.func = func
        self.params = params
        self.names = params.varying
        self.fixed = {n: p.value for n, p in params.items() if not p.vary}
        p0 = np.array([params[n].value for n in self.names], dtype=np.float64)
        scale = np.abs(p0)
        for i, n in enumerate(self.names):
            if scale[i] == 0.0:
                p = params[n]
                finite = [abs(b) for b in (p.min, p.max) if math.isfinite(b) and b != 0.0]
                scale[i] = min(finite) if finite else 1.0
        self.scale = scale
        self.u0 = p0 / scale
        self.lb = np.array([params[n].min for n in self.names]) / scale
        self.ub = np.array([params[n].max for n in self.names]) / scale
        self.x = x
        self.y = y
        self.sigma = sigma

    def values(self, u: np.ndarray) -> dict[str, float]:
        vals = dict(self.fixed)
        for n, ui, s in zip(self.names, u, self.scale, strict=True):
            vals[n] = float(ui * s)
        return {n: vals[n] for n in self.params}

    def model(self, u: np.ndarray) -> np.ndarray:
        return np.asarray(self.func(self.x, **self.values(u)), dtype=np.float64)

    def residuals(self, u: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        yy = self.y if y is None else y
        r = (yy - self.model(u)) / self.sigma
        return np.where(np.isfinite(r), r, 1e150)

    def solve(self, u0: np.ndarray, y: np.ndarray | None = None):
        return optimize.least_squares(
            self.residuals,
            np.clip(u0, self.lb, self.ub),
            bounds=(self.lb, self.ub),
            method="trf",
            x_scale="jac",
            xtol=1e-12,
            ftol=1e-12,
            gtol=1e-12,
            max_nfev=2000,
            kwargs={} if y is None else {"y": y},
        )


def fit_model(
    func: Callable[..., Any],
    params: Parameters,
    x: Any,
    y: Any,
    *,
    weights: str | Any = "relative",
    scale_covar: bool = True,
    ci_level: float = 0.95,
    uncertainty: str = "auto",
    n_boot: int = 200,
    random_state: int | None = 0,
    derived: Mapping[str, tuple[Callable[[dict[str, float]], float], str]] | None = None,
    model: str = "model",
    extra: Mapping[str, Any] | None = None,
    notes: tuple[str, ...] = (),
) -> CalibrationResult:
    """Fit ``y ~ func(x, **params)`` by weighted least squares.

    Parameters
    ----------
    func : callable
        ``func(x, **values) -> ndarray`` like ``y``; ``x`` is passed through as
        given (an ndarray, or anything the function understands).
    params : Parameters
        Starting values, bounds, vary flags and units.
    x : array_like
        Abscissae (any unit the model understands).
    y : array_like (n,)
        Observations, finite.
    weights : {"relative", "absolute"} or array_like (n,)
        ``"relative"``: relative errors, sigma_i proportional to the size of
        y_i. Fitted in two stages: sigma_i = |y_i|, then sigma_i =
        |f(x_i; p_1)| from the first fit (iteratively reweighted least
        squares, which avoids the downward bias of weighting by the noisy
        observation). ``"absolute"``: all sigma_i = 1. An array gives the
        sigma_i (same unit as y).
    scale_covar : bool
        Scale the covariance by the reduced chi-square (default; the weights
        then fix only the relative size of the errors). Use False when the
        sigma_i are true standard deviations.
    ci_level : float
        Confidence level of the intervals, in (0, 1).
    uncertainty : {"auto", "covariance", "bootstrap", "none"}
        See the module docstring.
    n_boot : int
        Bootstrap replicates (>= 20).
    random_state : int or None
        Seed of the bootstrap's generator (results are reproducible by default).
    derived : dict name -> (callable(values) -> float, unit), optional
        Quantities computed from the fitted values; their uncertainty comes by
        the delta method (covariance) or from the bootstrap replicates.
    model : str
        Name/formula used in the report.
    extra : dict, optional
        Facts copied into :attr:`CalibrationResult.extra`.
    notes : tuple of str
        Warnings about the data, copied into :attr:`CalibrationResult.warnings`.

    Returns
    -------
    CalibrationResult
    """
    if not isinstance(params, Parameters):
        raise InvalidTypeError(f"params must be a Parameters, got {type(params).__name__}")
    as_choice(uncertainty, "uncertainty", UNCERTAINTY_METHODS)
    if not (isinstance(ci_level, float | int) and 0.0 < float(ci_level) < 1.0):
        raise InvalidModelError(f"ci_level must be in (0, 1), got {ci_level!r}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 20:
        raise InvalidModelError(f"n_boot must be an integer >= 20, got {n_boot!r}")
    yv = as_reals(y, "y")
    xv = np.asarray(x, dtype=np.float64) if not isinstance(x, np.ndarray) else x
    n = yv.size
    names = params.varying
    p = len(names)
    if n == 0:
        raise InvalidModelError("y is empty: a fit needs data")
    if p == 0:
        raise InvalidModelError("no parameter varies: set vary=True on at least one")

    relative = False
    if isinstance(weights, str):
        as_choice(weights, "weights", ("relative", "absolute"))
        if weights == "relative":
            relative = True
            if np.any(yv == 0.0):
                i = int(np.flatnonzero(yv == 0.0)[0])
                raise InvalidModelError(
                    f"y[{i}] is 0, which relative-error weights cannot use; "
                    "drop the point or pass weights='absolute'"
                )
            sigma = np.abs(yv)
        else:
            sigma = np.ones(n)
    else:
        sigma = as_reals(weights, "weights")
        if sigma.size != n or np.any(sigma <= 0):
            raise InvalidModelError(
                f"weights must hold one sigma > 0 per point ({n}), got {sigma.size} values "
                f"with minimum {sigma.min() if sigma.size else 'n/a'}"
            )

    prob = _Problem(func, params, xv, yv, sigma)
    try:
        res = prob.solve(prob.u0)
        if relative:
            fit1 = np.abs(prob.model(res.x))
            if np.all(np.isfinite(fit1)) and np.all(fit1 > 0):
                prob.sigma = fit1
                res = prob.solve(res.x)
    except ValueError as exc:
        raise InvalidModelError(f"{model}: the fit could not start: {exc}") from None
    u = np.array(res.x, dtype=np.float64)
    on_lb = (res.active_mask == -1) | (np.isfinite(prob.lb) & (u - prob.lb <= _BOUND_RTOL))
    on_ub = (res.active_mask == 1) | (np.isfinite(prob.ub) & (prob.ub - u <= _BOUND_RTOL))
    u = np.where(on_lb, prob.lb, np.where(on_ub, prob.ub, u))
    bound_hit = [nm for nm, lo, hi in zip(names, on_lb, on_ub, strict=True) if lo or hi]
    values = prob.values(u)
    fitted = prob.model(u)
    sigma = prob.sigma
    wres = (yv - fitted) / sigma
    redchi = goodness_of_fit(wres, p)[1]
    dof = n - p
    success = bool(res.success)
    message = str(res.message)
    notes = tuple(notes)
    if not success:
        warnings.warn(f"{model}: {message}", ConvergenceWarning, stacklevel=3)

    # -- uncertainty -----------------------------------------------------------------
    derived = dict(derived or {})
    for dn in derived:
        if dn in params:
            raise InvalidModelError(f"derived quantity {dn!r} clashes with a parameter name")
    cov = None
    method = "none"
    umsg = ""
    stderr: dict[str, float | None] = {nm: None for nm in params}
    cis: dict[str, tuple[float, float] | None] = {nm: None for nm in params}
    boot_vals: np.ndarray | None = None

    jac_u = np.asarray(res.jac, dtype=np.float64)
    sv = np.linalg.svd(jac_u, compute_uv=False) if jac_u.size else np.array([0.0])
    rank_ok = sv.size == p and sv[-1] > 1e-7 * max(sv[0], 1e-300)

    if uncertainty == "none":
        umsg = "not requested (uncertainty='none')"
    elif dof <= 0:
        umsg = (
            f"cannot be estimated: {n} data point(s) for {p} varying parameter(s) leave no "
            "degrees of freedom; add measurements"
        )
    elif not rank_ok:
        umsg = (
            "cannot be estimated: the Jacobian is rank-deficient, so "
            f"{', '.join(names)} are not separately identifiable from these data "
            "(e.g. too narrow a range of x); widen the range or fix a parameter"
        )
    else:
        want_boot = uncertainty == "bootstrap" or (uncertainty == "auto" and bound_hit)
        if want_boot:
            boot_vals, nok = _bootstrap(prob, u, fitted, wres, dof, n_boot, random_state)
            if boot_vals is not None:
                boot_vals = _add_derived_columns(boot_vals, names, prob.fixed, derived)
            if boot_vals is None:
                umsg = f"cannot be estimated: only {nok} of {n_boot} bootstrap refits succeeded"
            else:
                method = "bootstrap"
                cov = np.atleast_2d(np.cov(boot_vals[:, :p], rowvar=False))
                why = (
                    f"{', '.join(bound_hit)} ended on a bound, where the covariance is unreliable; "
                    if bound_hit
                    else ""
                )
                umsg = (
                    f"{why}residual bootstrap, {nok} of {n_boot} refits, percentile intervals "
                    "widened by t/z"
                )
        else:
            # invert in the scaled coordinates (columns of similar size), then unscale
            cov_u = np.linalg.pinv(jac_u.T @ jac_u)
            cov = cov_u * np.outer(prob.scale, prob.scale) * (redchi if scale_covar else 1.0)
            method = "covariance"
            umsg = (
                "covariance from the Jacobian"
                + (" scaled by the reduced chi-square" if scale_covar else "")
                + f", Student t intervals with {dof} degrees of freedom"
            )

    for dn, (dfun, _unit) in derived.items():
        try:
            values[dn] = float(dfun(values))
        except (ZeroDivisionError, FloatingPointError, ValueError):
            values[dn] = math.nan
        stderr[dn] = None
        cis[dn] = None

    alpha = 1.0 - float(ci_level)
    if method == "covariance" and cov is not None:
        tq = float(stats.t.ppf(1.0 - alpha / 2, dof))
        for i, nm in enumerate(names):
            se = math.sqrt(max(cov[i, i], 0.0))
            stderr[nm] = se
            cis[nm] = (values[nm] - tq * se, values[nm] + tq * se)
        for dn, (dfun, _unit) in derived.items():
            g = _gradient(dfun, values, names, prob.scale)
            if g is not None and math.isfinite(values[dn]):
                var = float(g @ cov @ g)
                se = math.sqrt(max(var, 0.0))
                stderr[dn] = se
                cis[dn] = (values[dn] - tq * se, values[dn] + tq * se)
    elif method == "bootstrap" and boot_vals is not None:
        cols = list(names) + list(derived)
        # small-sample correction: widen the percentile interval about the estimate by
        # t_{n-p} / z, as the Student t does for the covariance intervals
        widen = float(stats.t.ppf(1 - alpha / 2, dof) / stats.norm.ppf(1 - alpha / 2))
        for i, nm in enumerate(cols):
            col = boot_vals[:, i]
            col = col[~np.isnan(col)]
            if col.size < 0.5 * boot_vals.shape[0]:
                continue
            v = values[nm]
            if np.all(np.isfinite(col)) and math.isfinite(v):
                stderr[nm] = float(np.std(col, ddof=1))
            lo, hi = np.quantile(col, [alpha / 2, 1 - alpha / 2], method="inverted_cdf")
            if math.isfinite(v):
                lo = v - (v - lo) * widen if lo <= v else lo
                hi = v + (hi - v) * widen if hi >= v else hi
            if nm in params:
                lo, hi = max(lo, params[nm].min), min(hi, params[nm].max)
            cis[nm] = (float(lo), float(hi))

    units = {nm: pp.unit for nm, pp in params.items()}
    units.update({dn: u_ for dn, (_f, u_) in derived.items()})
    return CalibrationResult.from_fit(
        model=model,
        params=params,
        values=values,
        stderr=stderr,
        confidence_intervals=cis,
        ci_level=float(ci_level),
        uncertainty_method=method,
        uncertainty_message=umsg,
        covariance=cov,
        varying=tuple(names),
        x=np.asarray(xv),
        y=yv,
        fitted=fitted,
        sigma=sigma,
        nfev=int(res.nfev),
        success=success,
        message=message,
        units=units,
        derived=tuple(derived),
        at_bounds=tuple(bound_hit),
        warnings=notes,
        extra=dict(extra or {}),
        func=func,
    )


def _gradient(dfun, values, names, scale) -> np.ndarray | None:
    """Central-difference gradient of a derived quantity w.r.t. the varying parameters."""
    g = np.empty(len(names))
    for i, nm in enumerate(names):
        h = 1e-6 * max(abs(values[nm]), scale[i] * 1e-3)
        up = dict(values)
        dn = dict(values)
        up[nm] += h
        dn[nm] -= h
        try:
            g[i] = (float(dfun(up)) - float(dfun(dn))) / (2 * h)
        except (ZeroDivisionError, FloatingPointError, ValueError):
            return None
    return g if np.all(np.isfinite(g)) else None


def _bootstrap(prob: _Problem, u, fitted, wres, dof, n_boot, random_state):
    """Residual bootstrap ([ET] sec. 9.5): refit to fitted + sigma * resampled residuals.

    Returns (array (n_ok, p + n_derived) of parameter values; derived filled in later)
    or (None, n_ok) when fewer than half of the refits succeed.
    """
    rng = np.random.default_rng(random_state)
    n = wres.size
    e = (wres - wres.mean()) * math.sqrt(n / dof)
    rows = []
    for _ in range(n_boot):
        ystar = fitted + prob.sigma * rng.choice(e, size=n, replace=True)
        try:
            r = prob.solve(u, y=ystar)
        except ValueError:
            continue
        if r.success and np.all(np.isfinite(r.x)):
            ub = np.where(prob.ub - r.x <= _BOUND_RTOL, prob.ub, r.x)
            rows.append(np.where(r.x - prob.lb <= _BOUND_RTOL, prob.lb, ub) * prob.scale)
    nok = len(rows)
    if nok < max(10, n_boot // 2):
        return None, nok
    return np.array(rows), nok


def _add_derived_columns(boot: np.ndarray, names, fixed, derived) -> np.ndarray:
    """Append derived quantities evaluated at each bootstrap replicate."""
    if not derived:
        return boot
    cols = []
    for row in boot:
        vals = dict(fixed)
        vals.update({nm: float(v) for nm, v in zip(names, row, strict=True)})
        out = []
        for dfun, _unit in derived.values():
            try:
                out.append(float(dfun(vals)))
            except (ZeroDivisionError, FloatingPointError, ValueError):
                out.append(math.nan)
        cols.append(out)
    return np.hstack([boot, np.array(cols)])
