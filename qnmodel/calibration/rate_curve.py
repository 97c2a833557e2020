"""Rate multipliers of a load-dependent device from a queue-depth sweep.

A qnbench sweep over ``jobs`` = 1, 2, 4, ... clients, each issuing its next request as
soon as the previous one completes (no think time), against one device keeps exactly
j requests at the device. If the device serves at rate r(j) / D with j requests present
(a :class:`~qnmodel.model.network.Station` with ``rate_multipliers``), its throughput is
X(j) = r(j) / D, so with the convention r(1) = 1

    D = 1 / X(1),     r(j) = X(j) / X(1)

([LZGS] sec. 8.2: a load-dependent centre is characterised by its rate at each
population, measured in isolation). Depths that were not measured are interpolated
linearly in j; beyond the deepest one the last rate holds (as in ``rate_multipliers``).

Uncertainty: with independent runs and throughput errors e_j (half-widths of a
confidence interval of the mean, as :func:`qnmodel.calibration.pipeline.measured_curve`
reports them), first-order propagation gives
e_D = e_1 / X(1)^2 and e_r(j) = r(j) sqrt((e_j / X(j))^2 + (e_1 / X(1))^2) at the same
confidence level (the interpolated depths get the interpolated errors).

References
----------
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, ch. 8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidModelError
from ..model import Station

__all__ = ["RateCurveFit", "fit_rate_multipliers", "rate_multipliers_from_curve"]


@dataclass(frozen=True)
class RateCurveFit:
    """Fitted demand and rate multipliers of a load-dependent device.

    Attributes
    ----------
    jobs : ndarray (M,)
        Measured queue depths.
    throughput, throughput_halfwidth : ndarray (M,)
        Measured X(j) and its error (NaN if unknown), jobs/s.
    demand, demand_err : float
        D = 1 / X(1) and its error, seconds.
    rate_multipliers, rate_multipliers_err : ndarray (L,)
        r(1..L) for L = max(jobs), and their errors.
    """

    jobs: np.ndarray
    throughput: np.ndarray
    throughput_halfwidth: np.ndarray
    demand: float
    demand_err: float
    rate_multipliers: np.ndarray
    rate_multipliers_err: np.ndarray

    def station(self, name: str) -> Station:
        """A :class:`~qnmodel.model.network.Station` with the fitted demand and curve."""
        return Station(name, self.demand, rate_multipliers=self.rate_multipliers)

    def __repr__(self) -> str:
        r = ", ".join(f"{x:.3g}" for x in self.rate_multipliers[:8])
        return (
            f"RateCurveFit(D={self.demand:.6g}+-{self.demand_err:.2g} s, "
            f"r=[{r}{', ...' if self.rate_multipliers.size > 8 else ''}])"
        )


def fit_rate_multipliers(
    jobs: Any, throughput: Any, throughput_halfwidth: Any = None
) -> RateCurveFit:
    """D and r(1..max jobs) from throughputs measured at queue depths ``jobs``.

    Parameters
    ----------
    jobs : sequence of int
        Queue depths (distinct, >= 1, including 1).
    throughput : sequence of float
        X(j), jobs/s (> 0), one per depth.
    throughput_halfwidth : sequence of float, optional
        Error of each X(j) (e.g. a 95 % confidence half-width); NaN or omitted: unknown.

    Raises
    ------
    InvalidModelError
        Depth 1 missing, repeated depths, non-positive throughputs, lengths that differ.
    """
    j = np.asarray(jobs)
    X = np.asarray(throughput, dtype=np.float64)
    if j.ndim != 1 or X.shape != j.shape or j.size == 0:
        raise InvalidModelError(
            f"jobs and throughput must be 1-D of equal length, got {j.shape} and {X.shape}"
        )
    if j.dtype.kind not in "iuf" or np.any(j != np.floor(j)) or np.any(j < 1):
        raise InvalidModelError(f"jobs must be integers >= 1, got {j.tolist()}")
    j = j.astype(np.int64)
    if np.unique(j).size != j.size:
        raise InvalidModelError(f"jobs has repeated depths: {j.tolist()}")
    if 1 not in j:
        raise InvalidModelError(
            f"jobs must include depth 1 (it fixes D and r(1) = 1), got {j.tolist()}"
        )
    bad = ~np.isfinite(X) | (X <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidModelError(f"throughput[{i}] must be finite and > 0, got {X[i]!r}")
    E = (
        np.full(j.size, np.nan)
        if throughput_halfwidth is None
        else np.asarray(throughput_halfwidth, dtype=np.float64).reshape(j.shape)
    )
    order = np.argsort(j)
    j, X, E = j[order], X[order], E[order]
    X1, E1 = float(X[0]), float(E[0])
    r = X / X1
    rel = np.sqrt((E / X) ** 2 + (E1 / X1) ** 2)
    depths = np.arange(1, int(j[-1]) + 1)
    r_all = np.interp(depths, j, r)
    err_all = np.interp(depths, j, r * rel)
    err_all[0] = 0.0  # r(1) = 1 by convention
    return RateCurveFit(
        jobs=j,
        throughput=X,
        throughput_halfwidth=E,
        demand=1.0 / X1,
        demand_err=E1 / X1**2 if math.isfinite(E1) else math.nan,
        rate_multipliers=r_all,
        rate_multipliers_err=err_all,
    )


def rate_multipliers_from_curve(curve: Any, max_client_share: float = 0.05) -> RateCurveFit:
    """:func:`fit_rate_multipliers` on the output of
    :func:`qnmodel.calibration.pipeline.measured_curve` (columns ``n``, ``throughput``,
    ``throughput_halfwidth``, ``think_time``).

    The clients must keep the device busy: a point where they spend more than
    ``max_client_share`` of the time outside the device (X Z / n) is refused, since the
    device then holds fewer than n requests and X(n) D is not r(n).
    """
    n = np.asarray(curve["n"])
    X = np.asarray(curve["throughput"], dtype=np.float64)
    Z = np.asarray(curve["think_time"], dtype=np.float64) if "think_time" in curve else 0 * X
    share = X * Z / n
    if np.any(share > max_client_share):
        i = int(np.argmax(share))
        raise InvalidModelError(
            f"at jobs = {int(n[i])} the clients spend {share[i]:.1%} of the time outside the "
            f"device (think time {Z[i]:.3g} s); a rate curve needs a sweep without think time "
            f"(at most {max_client_share:.0%})"
        )
    err = curve["throughput_halfwidth"] if "throughput_halfwidth" in curve else None
    return fit_rate_multipliers(n, X, err)
