"""Service demands from measured utilisation and throughput.

Two estimators, as in LibReDE's catalogue of resource-demand estimators:

``service_demand_law``
    The service-demand law ``D_k = U_k / X`` ([LZGS] sec. 3.2), station by
    station. With several observation intervals it is the least-squares
    line through the origin ``U_k(t) = D_k X(t)``, ``D_k = sum U X / sum X^2``,
    whose standard error comes from the scatter of the intervals (none from a
    single interval: said so).
``utilization_regression``
    Multi-class utilisation regression ``U_k(t) = U0_k + sum_c D_{k,c} X_c(t)``
    ([RS03]; LibReDE's "Utilization Regression"), solved per station by
    **non-negative** least squares (a demand cannot be negative), optionally
    with a background utilisation ``U0_k``. Uncertainty from a pairs
    bootstrap over the intervals (the non-negativity constraint makes the
    covariance unreliable whenever a demand sits at 0).

Inputs are fractions (0..1 per server; a multi-server station's utilisation
is per server, so multiply D by the servers yourself if you pass the average)
and throughputs in jobs/s.

References
----------
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, sec. 3.2.
.. [RS03] J. Rolia, V. Vetland, "Parameter estimation for performance models of
   distributed application systems", CASCON 1995; and J. Rolia, V. Vetland,
   "Correlating resource demand information with ARM data for application
   services", WOSP 1998 (utilisation regression).
.. [LibReDE] S. Spinner et al., "LibReDE: A library for resource demand
   estimation", ICPE 2014 (estimator catalogue).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, stats

from .._validate import as_choice
from ..errors import InvalidModelError, InvalidTypeError
from .parameters import Parameter, Parameters
from .result import CalibrationResult

__all__ = ["service_demand_law", "utilization_regression"]


def _matrix(v: Any, name: str, lo: float, hi: float) -> np.ndarray:
    try:
        a = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidTypeError(f"{name} must be numeric, got {v!r}") from None
    if a.ndim == 0:
        a = a.reshape(1)
    bad = ~np.isfinite(a) | (a < lo) | (a > hi)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidModelError(
            f"{name}{list(idx)} must be finite and in [{lo:g}, {hi:g}], got {a[idx]!r}"
        )
    return a


def _names(names: Any, k: int, what: str, prefix: str) -> list[str]:
    if names is None:
        return [f"{prefix}{i}" for i in range(k)]
    names = [str(n) for n in names]
    if len(names) != k:
        raise InvalidModelError(f"{what} has {len(names)} names for {k} columns")
    return names


def _pname(s: str) -> str:
    p = "".join(c if c.isalnum() or c == "_" else "_" for c in s)
    return p if p.isidentifier() else f"D_{p}"


def _result(model, names, units, values, stderr, cis, method, umsg, x, y, fitted, extra, level):
    params = Parameters([Parameter(n, max(values[n], 0.0), min=0.0, unit=units[n]) for n in names])
    return CalibrationResult.from_fit(
        y=y,
        fitted=fitted,
        sigma=np.ones_like(y),
        stderr=stderr,
        varying=tuple(names),
        model=model,
        params=params,
        values=values,
        confidence_intervals=cis,
        ci_level=level,
        uncertainty_method=method,
        uncertainty_message=umsg,
        covariance=None,
        x=x,
        nfev=1,
        success=True,
        message="closed-form least squares",
        units=units,
        at_bounds=tuple(k for k in names if values[k] == 0.0),
        extra=extra,
    )


def service_demand_law(
    utilization: Any,
    throughput: Any,
    *,
    stations: Any = None,
    ci_level: float = 0.95,
) -> CalibrationResult:
    """Service demands D_k = U_k / X from utilisations and system throughput.

    Parameters
    ----------
    utilization : array_like (K,) or (T, K)
        Utilisation of each of K stations (fraction in [0, 1]) in one or T
        observation intervals.
    throughput : float or array_like (T,)
        System throughput X (jobs/s, > 0) in the same intervals.
    stations : sequence of str, optional
        Station names (default ``s0, s1, ...``); parameter names are these
        names with non-identifier characters replaced by ``_``.
    ci_level : float
        Level of the Student t intervals (T - 1 degrees of freedom).

    Returns
    -------
    CalibrationResult
        ``values[name]`` = D_k in seconds. With a single interval the demands
        are exact ratios and ``stderr`` is None (the message says why).
    """
    U = _matrix(utilization, "utilization", 0.0, 1.0)
    X = _matrix(throughput, "throughput", 0.0, math.inf)
    if U.ndim == 1:
        U = U[None, :]
    if U.ndim != 2:
        raise InvalidModelError(f"utilization must be (K,) or (T, K), got shape {U.shape}")
    X = X.reshape(-1)
    T, K = U.shape
    if X.size != T:
        raise InvalidModelError(
            f"throughput has {X.size} values but utilization has {T} interval(s): one per interval"
        )
    if np.any(X <= 0):
        raise InvalidModelError(f"throughput must be > 0 in every interval, got {X.tolist()}")
    st = _names(stations, K, "stations", "s")
    names = [_pname(s) for s in st]
    sxx = float(np.sum(X**2))
    D = (X @ U) / sxx
    values = {n: float(d) for n, d in zip(names, D, strict=True)}
    stderr: dict[str, float | None] = {n: None for n in names}
    cis: dict[str, tuple[float, float] | None] = {n: None for n in names}
    fitted = np.outer(X, D)
    if T >= 2:
        tq = float(stats.t.ppf(0.5 + ci_level / 2, T - 1))
        for j, n in enumerate(names):
            s2 = float(np.sum((U[:, j] - fitted[:, j]) ** 2)) / (T - 1)
            se = math.sqrt(s2 / sxx)
            stderr[n] = se
            cis[n] = (values[n] - tq * se, values[n] + tq * se)
        method = "covariance"
        umsg = (
            f"least squares through the origin U_k = D_k X over {T} intervals, "
            f"Student t intervals with {T - 1} degrees of freedom"
        )
    else:
        method = "none"
        umsg = (
            "cannot be estimated: a single interval gives the exact ratio U/X with no scatter; "
            "measure several intervals"
        )
    return _result(
        "service-demand law D_k = U_k / X",
        names,
        dict.fromkeys(names, "s"),
        values,
        stderr,
        cis,
        method,
        umsg,
        np.repeat(X, K),
        U.ravel(),
        fitted.ravel(),
        {"stations": st, "intervals": T},
        float(ci_level),
    )


def utilization_regression(
    utilization: Any,
    throughput: Any,
    *,
    stations: Any = None,
    classes: Any = None,
    background: bool = False,
    ci_level: float = 0.95,
    n_boot: int = 200,
    random_state: int | None = 0,
    uncertainty: str = "bootstrap",
) -> CalibrationResult:
    """Per-class service demands by non-negative utilisation regression.

    Solves ``U_k(t) = U0_k + sum_c D_{k,c} X_c(t)`` for every station k by
    non-negative least squares over the T observation intervals.

    Parameters
    ----------
    utilization : array_like (T, K)
        Utilisation of each station per interval, fractions in [0, 1].
    throughput : array_like (T,) or (T, C)
        Throughput of each class per interval, jobs/s (>= 0).
    stations, classes : sequence of str, optional
        Names; parameters are called ``<station>`` (one class) or
        ``<station>__<class>``; background terms ``<station>__U0``.
    background : bool
        Also fit a constant background utilisation U0_k >= 0 per station.
    ci_level, n_boot, random_state
        Pairs-bootstrap percentile intervals over intervals (rows).
    uncertainty : {"bootstrap", "none"}

    Returns
    -------
    CalibrationResult
        ``values`` in seconds (demands) and fractions (U0).

    Raises
    ------
    InvalidModelError
        Fewer intervals than unknowns per station.
    """
    as_choice(uncertainty, "uncertainty", ("bootstrap", "none"))
    U = _matrix(utilization, "utilization", 0.0, 1.0)
    X = _matrix(throughput, "throughput", 0.0, math.inf)
    if U.ndim == 1:
        U = U[:, None]
    if X.ndim == 1:
        X = X[:, None]
    if U.ndim != 2 or X.ndim != 2:
        raise InvalidModelError("utilization must be (T, K) and throughput (T,) or (T, C)")
    T, K = U.shape
    C = X.shape[1]
    if X.shape[0] != T:
        raise InvalidModelError(
            f"throughput has {X.shape[0]} intervals but utilization has {T}: one row per interval"
        )
    A = np.hstack([X, np.ones((T, 1))]) if background else X
    q = A.shape[1]
    if T < q + 1:
        raise InvalidModelError(
            f"utilization regression needs more intervals than unknowns per station ({q}); "
            f"got {T}; measure at least {q + 1} intervals with varied class mix"
        )
    if np.linalg.matrix_rank(A) < q:
        raise InvalidModelError(
            "the class throughputs (and the constant, with background=True) are collinear over "
            "the intervals: the demands are not identifiable; vary the workload mix"
        )
    st = _names(stations, K, "stations", "s")
    cl = _names(classes, C, "classes", "c")
    cols = [_pname(s) if C == 1 else f"{_pname(s)}__{_pname(c)}" for s in st for c in cl]
    names: list[str] = []
    units: dict[str, str] = {}
    for k, s in enumerate(st):
        for c in range(C):
            names.append(cols[k * C + c])
            units[cols[k * C + c]] = "s"
        if background:
            names.append(f"{_pname(s)}__U0")
            units[f"{_pname(s)}__U0"] = ""

    def solve(Am, Um):
        return np.array([optimize.nnls(Am, Um[:, k])[0] for k in range(K)])  # (K, q)

    coef = solve(A, U)
    values = {n: float(v) for n, v in zip(names, coef.ravel(), strict=True)}
    stderr: dict[str, float | None] = dict.fromkeys(names)
    cis: dict[str, tuple[float, float] | None] = dict.fromkeys(names)
    method = "none"
    umsg = "not requested (uncertainty='none')"
    if uncertainty == "bootstrap":
        rng = np.random.default_rng(random_state)
        reps = []
        for _ in range(n_boot):
            idx = rng.integers(0, T, T)
            if np.linalg.matrix_rank(A[idx]) < q:
                continue
            reps.append(solve(A[idx], U[idx]).ravel())
        if len(reps) >= n_boot // 2:
            R = np.array(reps)
            alpha = 1 - ci_level
            for i, n in enumerate(names):
                stderr[n] = float(np.std(R[:, i], ddof=1))
                lo, hi = np.quantile(R[:, i], [alpha / 2, 1 - alpha / 2])
                cis[n] = (float(lo), float(hi))
            method = "bootstrap"
            umsg = (
                f"pairs bootstrap over {T} intervals ({len(reps)} of {n_boot} resamples "
                "identifiable), percentile intervals; non-negativity makes the covariance "
                "unreliable"
            )
        else:
            umsg = (
                f"cannot be estimated: only {len(reps)} of {n_boot} bootstrap resamples were "
                "identifiable; measure more intervals with varied class mix"
            )
    fitted = A @ coef.T
    return _result(
        "utilisation regression U_k = "
        + ("U0_k + " if background else "")
        + "sum_c D_kc X_c (NNLS)",
        names,
        units,
        values,
        stderr,
        cis,
        method,
        umsg,
        np.repeat(np.arange(T), K).astype(np.float64),
        U.ravel(),
        fitted.ravel(),
        {"stations": st, "classes": cl, "intervals": T},
        float(ci_level),
    )
