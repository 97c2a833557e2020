"""Bounds of open networks: asymptotic (single and multi-class) and balanced system bounds.

In steady state an open class carries exactly its arrival rate, so its throughput has no
lower bound other than 0; the bounds say how much a class could carry (X_c <= 1 / D_max,c,
the rate at which its bottleneck saturates alone) and how long a job stays.

Differences from Octave ``queueing`` 1.2.7
------------------------------------------
``qnosbsb`` computes D_avg as ``mean(D_tot)`` -- the mean of the scalar total, i.e. D itself
-- so its lower bound is D / (1 - lambda D), which can exceed the upper bound and the exact
value (lambda = 0.1, D = (1, 2, 3): 15 > exact 7.90 > upper 8.57). Here D_avg = D / K, the
bound of [LZGS] sec. 5.3.

References
----------
.. [LZGS] E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative System
   Performance*, Prentice-Hall, 1984, sec. 5.2 (asymptotic bounds, open models) and
   sec. 5.3 (balanced system bounds, open models: D / (1 - lambda D_avg) <= R
   <= D / (1 - lambda D_max)).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_quantities, as_quantity
from ..errors import InvalidModelError, InvalidTypeError, UnstableModelError
from ..results.network import OpenBoundsResult
from ._netargs import demand_array, station_kinds

__all__ = ["bounds_open_aba", "bounds_open_bsb"]


def _rates(arrival_rate: Any, C: int) -> np.ndarray:
    if isinstance(arrival_rate, str) or np.ndim(arrival_rate) == 0:
        lam = np.array([as_quantity(arrival_rate, "arrival_rate", "frequency")])
    else:
        lam = as_quantities(arrival_rate, "arrival_rate", "frequency")
    if lam.size != C:
        raise InvalidModelError(
            f"arrival_rate has {lam.size} entries but demands has {C} rows (classes): "
            "give one arrival rate per class"
        )
    if np.any(lam <= 0):
        c = int(np.flatnonzero(lam <= 0)[0])
        raise InvalidModelError(
            f"arrival_rate[{c}] must be > 0 (an open class needs arrivals), got {float(lam[c])!r}"
        )
    return lam


def bounds_open_aba(
    arrival_rate: Any,
    demands: Any,
    delay: Any = None,
    servers: Any = None,
    visits: Any = None,
) -> OpenBoundsResult:
    """Asymptotic bounds of an open network, single or multi-class.

    Parameters
    ----------
    arrival_rate : float or array_like (C,)
        lambda_c > 0, jobs/s (a number is SI; ``"40 kHz"`` accepted).
    demands : array_like (K,) or (C, K)
        D_ck, seconds (>= 0): a 1-D array is one class; with ``visits``, service times.
    delay : array_like of bool (K,), optional
        Delay stations (no queueing, no saturation).
    servers : array_like of int (K,), optional
        m_k >= 1 (default 1).
    visits : array_like, optional
        V_ck >= 0 of the shape of ``demands``; then D = V S.

    Returns
    -------
    OpenBoundsResult
        ``method="open.aba"``: X_c in [0, min_q m_q / D_cq] over queueing stations q, and
        R_c in [sum_k D_ck, inf) ([LZGS] sec. 5.2): the arrival rate does not enter.
    """
    if np.ndim(demands) == 1 and not isinstance(demands, str):  # one class
        D = demand_array(demands, visits, classes=False)[None, :]
    else:
        D = demand_array(demands, visits, classes=True)
    C, K = D.shape
    lam = _rates(arrival_rate, C)
    delay, m, _ = station_kinds(K, delay, servers, jobs=1)  # the curves are unused
    per_server = np.where(~delay[None, :], D / m[None, :], 0.0).max(axis=1)
    with np.errstate(divide="ignore"):
        x_hi = np.where(per_server > 0, 1.0 / np.where(per_server > 0, per_server, 1.0), np.inf)
    return OpenBoundsResult(
        method="open.aba",
        arrival_rate=lam,
        throughput_lower=np.zeros(C),
        throughput_upper=x_hi,
        response_time_lower=D.sum(axis=1),
        response_time_upper=np.full(C, np.inf),
        demands=D,
    )


def bounds_open_bsb(
    arrival_rate: Any,
    demands: Any,
    delay: Any = None,
    visits: Any = None,
) -> OpenBoundsResult:
    """Balanced system bounds of an open single-class network ([LZGS] sec. 5.3).

    Parameters
    ----------
    arrival_rate : float
        lambda > 0, jobs/s, below the saturation rate 1 / D_max.
    demands : array_like (K,)
        D_k, seconds (>= 0); with ``visits``, service times per visit.
    delay : array_like of bool (K,), optional
        Delay stations: their demand D_delay adds to both bounds exactly.
    visits : array_like (K,), optional

    Returns
    -------
    OpenBoundsResult
        ``method="open.bsb"`` with C = 1; over the K_q queueing stations of total demand
        D_q, mean D_avg = D_q / K_q and largest D_max (exact R = sum_q D_q,k / (1 - lambda
        D_q,k) + D_delay lies between, by convexity of D / (1 - lambda D)):

        ``D_q / (1 - lambda D_avg) + D_delay <= R <= D_q / (1 - lambda D_max) + D_delay``,
        X <= 1 / D_max.

    Raises
    ------
    UnstableModelError
        lambda D_max >= 1.
    """
    if np.ndim(demands) != 1 or isinstance(demands, str):
        raise InvalidTypeError(
            "bounds_open_bsb takes one demand per station (K,): it bounds single-class "
            f"networks; got shape {np.shape(demands)} (use bounds_open_aba for several classes)"
        )
    D = demand_array(demands, visits, classes=False)
    K = D.size
    lam = float(_rates(arrival_rate, 1)[0])
    delay, _, _ = station_kinds(K, delay)
    q = ~delay
    Dq = D[q]
    Dtot = float(Dq.sum())
    Dmax = float(Dq.max()) if Dq.size else 0.0
    Davg = Dtot / Dq.size if Dq.size else 0.0
    Ddelay = float(D[delay].sum())
    if lam * Dmax >= 1.0:
        k = int(np.flatnonzero(q)[int(np.argmax(Dq))])
        raise UnstableModelError(
            f"arrival_rate {lam!r}/s saturates station {k} (demand {Dmax!r} s: utilisation "
            f"{lam * Dmax:.6g} >= 1); the largest sustainable rate is {1.0 / Dmax:.6g}/s"
        )
    x_hi = 1.0 / Dmax if Dmax > 0 else np.inf
    return OpenBoundsResult(
        method="open.bsb",
        arrival_rate=np.array([lam]),
        throughput_lower=np.zeros(1),
        throughput_upper=np.array([x_hi]),
        response_time_lower=np.array([Dtot / (1.0 - lam * Davg) + Ddelay]),
        response_time_upper=np.array([Dtot / (1.0 - lam * Dmax) + Ddelay]),
        demands=D[None, :],
    )
