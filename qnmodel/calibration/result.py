"""The outcome of a calibration fit: :class:`CalibrationResult`, frozen, with its report.

Every fit of :mod:`qnmodel.calibration` (:func:`~qnmodel.calibration.fit.fit_model` and the
fits built on it) returns one. It is built complete: a fit that learns something after the
least-squares engine returned (a caveat about the data, a derived fact) makes a new result with
:meth:`CalibrationResult.with_notes` or :meth:`CalibrationResult.replace`, never changes the
one it has.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidModelError
from .parameters import Parameters, format_value

__all__ = ["CalibrationResult", "goodness_of_fit"]


def goodness_of_fit(
    weighted_residuals: np.ndarray, nvarys: int
) -> tuple[float, float, float, float]:
    """chi-square, reduced chi-square, AIC and BIC of a least-squares fit.

    chi2 = sum r_i^2 over the (weighted) residuals; redchi = chi2 / (n - p) (NaN
    without degrees of freedom); AIC = n ln(chi2/n) + 2p; BIC = n ln(chi2/n) + p ln n
    (the forms lmfit documents for least squares).
    """
    r = np.asarray(weighted_residuals, dtype=np.float64)
    n = r.size
    chisqr = float(np.sum(r**2))
    dof = n - nvarys
    redchi = chisqr / dof if dof > 0 else math.nan
    lnchi = math.log(chisqr / n) if chisqr > 0 else -math.inf
    return chisqr, redchi, n * lnchi + 2 * nvarys, n * lnchi + math.log(n) * nvarys


@dataclass(frozen=True, repr=False)
class CalibrationResult:
    """Outcome of one calibration fit.

    Glossary (n data points, p varying parameters, weighted residual
    ``e_i = (y_i - f_i) / sigma_i``)
    ---------------------------------------------------------------
    values : dict name -> float
        Fitted (or fixed) parameter values in SI units, plus derived
        quantities (e.g. the USL ``peak``).
    stderr : dict name -> float or None
        Standard errors; ``None`` for fixed parameters and whenever the
        uncertainty cannot be estimated (see ``uncertainty_message``).
    confidence_intervals : dict name -> (lower, upper) or None
        ``ci_level`` intervals (Student t from the covariance, or bootstrap
        percentile intervals).
    ci_level : float
        Nominal coverage of the intervals (0.95 by default).
    uncertainty_method : {"covariance", "bootstrap", "none"}
        How the uncertainty was estimated.
    uncertainty_message : str
        Why that method was chosen, or why no uncertainty could be estimated.
    errorbars : bool
        True when standard errors exist for every varying parameter.
    covariance : ndarray (p, p) or None
        Covariance of the varying parameters, order ``varying``; the
        bootstrap sample covariance when the bootstrap was used.
    varying : tuple of str
        Names of the varying parameters.
    x, y : ndarray
        The data fitted (after any aggregation the fit function applied).
    fitted : ndarray
        ``f(x; values)``.
    residuals : ndarray
        ``y - fitted``, in the unit of y.
    sigma : ndarray
        Per-point weights used: residual i is divided by sigma_i.
    ndata, nvarys, nfev : int
        n, p and the number of model evaluations of the main fit.
    chisqr : float
        ``chi^2 = sum e_i^2``.
    redchi : float
        ``chi^2 / (n - p)`` (NaN when n == p).
    aic, bic : float
        ``n ln(chi^2/n) + 2p`` and ``n ln(chi^2/n) + p ln n``.
    success : bool
        The optimiser reports convergence.
    message : str
        The optimiser's message.
    at_bounds : tuple of str
        Varying parameters that ended on a bound (reported as the bound).
    warnings : tuple of str
        Caveats about the data or the fit (also issued as Python warnings by
        the fit functions).
    extra : dict
        Fit-specific facts (e.g. ``size_range`` of a device fit).
    """

    model: str
    params: Parameters
    values: dict[str, float]
    stderr: dict[str, float | None]
    confidence_intervals: dict[str, tuple[float, float] | None]
    ci_level: float
    uncertainty_method: str
    uncertainty_message: str
    errorbars: bool
    covariance: np.ndarray | None
    varying: tuple[str, ...]
    x: np.ndarray
    y: np.ndarray
    fitted: np.ndarray
    residuals: np.ndarray
    sigma: np.ndarray
    ndata: int
    nvarys: int
    nfev: int
    chisqr: float
    redchi: float
    aic: float
    bic: float
    success: bool
    message: str
    units: dict[str, str]
    derived: tuple[str, ...] = ()
    at_bounds: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    func: Callable[..., Any] | None = None

    @classmethod
    def from_fit(
        cls,
        *,
        y: Any,
        fitted: Any,
        sigma: Any,
        stderr: dict[str, float | None],
        varying: tuple[str, ...],
        **fields: Any,
    ) -> CalibrationResult:
        """A complete result from what a fit found; the statistics every fit states alike are
        computed here: ``residuals = y - fitted``, ``ndata``, ``nvarys``, chi-square, reduced
        chi-square, AIC and BIC of the weighted residuals ``(y - fitted) / sigma``
        (:func:`goodness_of_fit`) and ``errorbars``. `fields` are the other attributes."""
        y = np.asarray(y, dtype=np.float64)
        fitted = np.asarray(fitted, dtype=np.float64)
        sigma = np.asarray(sigma, dtype=np.float64)
        chisqr, redchi, aic, bic = goodness_of_fit((y - fitted) / sigma, len(varying))
        return cls(
            y=y,
            fitted=fitted,
            sigma=sigma,
            stderr=stderr,
            varying=tuple(varying),
            residuals=y - fitted,
            ndata=int(y.size),
            nvarys=len(varying),
            chisqr=chisqr,
            redchi=redchi,
            aic=aic,
            bic=bic,
            errorbars=all(stderr[nm] is not None for nm in varying),
            **fields,
        )

    # -- new results from this one (never mutate a frozen result) ----------------------
    def replace(self, **changes: Any) -> CalibrationResult:
        """A copy with the given fields changed; this result is left as it is.

        ``res.replace(model="...")`` is :func:`dataclasses.replace` on a frozen result.
        """
        return dataclasses.replace(self, **changes)

    def with_notes(self, *warnings: str, **extra: Any) -> CalibrationResult:
        """A copy with caveats appended to :attr:`warnings` and facts merged into :attr:`extra`.

        The way a fit adds what it learns after :func:`~qnmodel.calibration.fit.fit_model`
        returned, e.g. ``res.with_notes("a is extrapolated", crossover_size=a * r)``; the
        result it is called on is not changed.
        """
        return dataclasses.replace(
            self, warnings=self.warnings + tuple(warnings), extra={**self.extra, **extra}
        )

    # -- derived views ---------------------------------------------------------------
    @property
    def correlation(self) -> np.ndarray | None:
        """Correlation matrix of the varying parameters, or None."""
        if self.covariance is None:
            return None
        d = np.sqrt(np.diag(self.covariance))
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.covariance / np.outer(d, d)

    @property
    def weighted_residuals(self) -> np.ndarray:
        """``(y - fitted) / sigma``."""
        return self.residuals / self.sigma

    def eval(self, x: Any) -> np.ndarray:
        """The fitted model at new abscissae ``x`` (same meaning and unit as the fit's x)."""
        if self.func is None:
            raise InvalidModelError(f"{self.model}: this result carries no model function")
        base = {n: self.values[n] for n in self.params}
        return np.asarray(self.func(np.asarray(x, dtype=np.float64), **base), dtype=np.float64)

    def to_frame(self) -> Any:
        """One row per parameter: name, value, stderr, ci_lower, ci_upper, unit, vary, derived,
        at_bound."""
        import pandas as pd

        rows = []
        for name, v in self.values.items():
            ci = self.confidence_intervals.get(name)
            p = self.params.get(name)
            rows.append(
                {
                    "name": name,
                    "value": v,
                    "stderr": self.stderr.get(name),
                    "ci_lower": None if ci is None else ci[0],
                    "ci_upper": None if ci is None else ci[1],
                    "unit": self.units.get(name, ""),
                    "vary": bool(p.vary) if p is not None else False,
                    "derived": name in self.derived,
                    "at_bound": name in self.at_bounds,
                }
            )
        return pd.DataFrame(rows)

    def parameter_lines(self) -> list[str]:
        """One line per parameter: ``a = 5.002 ms +/- 12.3 us (0.25%)  [lo, hi]``, values
        in readable units, then the ``ci_level`` interval and what kind of value it is
        (fixed, derived, without an uncertainty, at a bound). Used by :meth:`report` and by
        ``qnmodel calibrate``."""
        lines = []
        width = max(len(n) for n in self.values) if self.values else 1
        for name, v in self.values.items():
            unit = self.units.get(name, "")
            p = self.params.get(name)
            se = self.stderr.get(name)
            ci = self.confidence_intervals.get(name)
            txt = f"{name:<{width}} = {format_value(v, unit)}"
            if se is not None:
                rel = f" ({abs(se / v):.2%})" if v != 0 and abs(se / v) < 10 else ""
                txt += f" +/- {format_value(se, unit)}{rel}"
            if ci is not None:
                txt += f"  [{format_value(ci[0], unit)}, {format_value(ci[1], unit)}]"
            if p is not None and not p.vary:
                txt += "  (fixed)"
            elif name in self.derived:
                txt += "  (derived)"
            elif se is None:
                txt += "  (uncertainty not estimated)"
            if name in self.at_bounds:
                txt += "  AT BOUND"
            lines.append(txt)
        return lines

    def report(self) -> str:
        """A plain-text fit report (lmfit style): statistics, parameters, caveats."""
        lines = [f"[[Fit: {self.model}]]"]
        lines.append(
            f"    data points = {self.ndata}, variables = {self.nvarys}, "
            f"function evals = {self.nfev}"
        )
        lines.append(
            f"    chi-square = {self.chisqr:.6g}, reduced chi-square = {self.redchi:.6g}, "
            f"AIC = {self.aic:.6g}, BIC = {self.bic:.6g}"
        )
        lines.append(f"    success = {self.success}: {self.message}")
        lines.append(f"    uncertainty = {self.uncertainty_method}: {self.uncertainty_message}")
        lines.append(f"[[Parameters]] ({self.ci_level:.0%} confidence intervals)")
        lines += [f"    {line}" for line in self.parameter_lines()]
        corr = self.correlation
        if corr is not None and len(self.varying) > 1:
            pairs = []
            for i in range(len(self.varying)):
                for j in range(i + 1, len(self.varying)):
                    if np.isfinite(corr[i, j]) and abs(corr[i, j]) > 0.1:
                        pairs.append(
                            f"    C({self.varying[i]}, {self.varying[j]}) = {corr[i, j]:+.4f}"
                        )
            if pairs:
                lines.append("[[Correlations]] (|C| > 0.1)")
                lines.extend(pairs)
        if self.extra:
            lines.append("[[Notes]]")
            for k, v in self.extra.items():
                lines.append(f"    {k}: {_fmt_extra(v)}")
        if self.warnings:
            lines.append("[[Warnings]]")
            lines.extend(f"    {w}" for w in self.warnings)
        return "\n".join(lines)

    def __repr__(self) -> str:
        vals = ", ".join(
            f"{n}={format_value(v, self.units.get(n, ''))}"
            + (
                ""
                if self.stderr.get(n) is None
                else f"+/-{format_value(self.stderr[n], self.units.get(n, ''), 2)}"
            )
            for n, v in self.values.items()
        )
        return (
            f"CalibrationResult({self.model!r}, {vals}, success={self.success}, "
            f"uncertainty={self.uncertainty_method!r})"
        )


def _fmt_extra(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, tuple | list) and all(isinstance(e, float | int) for e in v):
        return "(" + ", ".join(f"{e:.6g}" for e in v) + ")"
    return str(v)
