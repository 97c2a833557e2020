"""Array arguments shared by the network-level kernels: demands (or service times with
visits), station kinds, servers and rate curves, validated once.

Conventions (every kernel of :mod:`qnmodel.solvers` that takes arrays):

* ``demands`` D_ck (C, K) or D_k (K,) in seconds (unit strings accepted), finite and >= 0.
  With ``visits`` V (same shape, dimensionless, finite and >= 0) the ``demands`` argument
  holds the service times per visit S and D = V S (Octave's ``(S, V)`` calling form).
* ``delay`` (K,) booleans: infinite-server stations.
* ``servers`` (K,) integers >= 1: m identical servers, rate min(j, m) / D with j jobs.
* ``rates`` (K,) entries None or a rate curve r(1), ..., r(L) > 0: rate r(min(j, L)) / D
  with j jobs (the last value holds beyond L); m servers are r = (1, 2, ..., m).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import (
    as_demand_matrix,
    as_demands,
    as_flags,
    as_populations,
    as_rate_multipliers,
    as_server_counts,
)
from ..errors import InvalidModelError, InvalidTypeError

__all__ = [
    "demand_array",
    "class_arrays",
    "visit_array",
    "station_kinds",
    "peak_rates",
    "check_has_demand",
]


def visit_array(visits: Any, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Visit ratios of the given shape: finite, >= 0, dimensionless, as float64."""
    if isinstance(visits, str):
        raise InvalidTypeError(f"{name} must be numbers (visits per cycle), got {visits!r}")
    try:
        arr = np.array(visits, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidTypeError(
            f"{name} must be numbers (visits per cycle), got {visits!r:.80}"
        ) from None
    if arr.shape != shape:
        raise InvalidModelError(
            f"{name} has shape {arr.shape} but the service times have shape {shape}: "
            "size mismatch, give one visit ratio per service time"
        )
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidModelError(
            f"{name}{list(idx)} must be finite and >= 0, got {float(arr[idx])!r}"
        )
    return arr


def demand_array(demands: Any, visits: Any = None, *, classes: bool) -> np.ndarray:
    """D (C, K) when ``classes`` else D (K,), from demands or from service times and visits."""
    name = "demands" if visits is None else "service_times"
    if classes:
        D = as_demand_matrix(demands, name)
    else:
        if np.ndim(demands) == 2 and not isinstance(demands, str):
            raise InvalidModelError(
                f"{name} must be one value per station (K,), got a matrix of shape "
                f"{np.shape(demands)}: this kernel solves single-class networks"
            )
        D = as_demands(demands, name)
    if visits is not None:
        D = D * visit_array(visits, "visits", D.shape)
    return D


def class_arrays(demands: Any, population: Any, visits: Any = None) -> tuple:
    """Validated ``(D (C, K), N (C,))`` of a closed multi-class kernel: the demands (or
    service times with visits) and one population N_c >= 0 per class (row of D)."""
    D = demand_array(demands, visits, classes=True)
    N = as_populations(population, "population")
    if N.size != D.shape[0]:
        raise InvalidModelError(
            f"population has {N.size} entries but demands has {D.shape[0]} rows (classes): "
            "give one population per class"
        )
    return D, N


def station_kinds(
    K: int, delay: Any = None, servers: Any = None, rates: Any = None, jobs: int | None = None
) -> tuple:
    """Validated ``(delay (K,) bool, servers (K,) int, curves)``.

    ``curves`` has one entry per station: None (a single-server queue or a delay) or the
    float64 rate curve (m servers become 1, 2, ..., min(m, jobs + 1): with at most ``jobs``
    jobs the rate min(n, m) is read at most at n = jobs + 1, and a curve's last value holds
    beyond it, so the cut is exact and 10^9 servers need no 7 GiB array; ``jobs=None`` keeps
    the whole curve; the peak rate of m servers is m, not the cut curve's maximum). A delay
    station takes neither servers nor a curve; a station takes servers or a curve, not both.
    """
    delay = as_flags(delay, "delay", K)
    servers = as_server_counts(servers, "servers", K)
    if rates is None:
        given = (None,) * K
    else:
        if isinstance(rates, str) or not hasattr(rates, "__len__"):
            raise InvalidTypeError(
                f"rates must be a sequence of {K} entries (None or a rate curve), got {rates!r}"
            )
        given = tuple(rates)
        if len(given) != K:
            raise InvalidModelError(
                f"rates has {len(given)} entries; give one per station ({K}), None for a "
                "load-independent one"
            )
    curves = []
    for k in range(K):
        if delay[k] and (servers[k] > 1 or given[k] is not None):
            what = f"servers[{k}] = {servers[k]}" if servers[k] > 1 else f"rates[{k}]"
            raise InvalidModelError(
                f"station {k} is a delay station and has {what}: a delay station has "
                "infinitely many servers; give one or the other"
            )
        if servers[k] > 1 and given[k] is not None:
            raise InvalidModelError(
                f"station {k} has servers[{k}] = {servers[k]} and a rate curve rates[{k}]: "
                f"give one (m servers are the curve 1, 2, ..., m)"
            )
        if given[k] is not None:
            curves.append(as_rate_multipliers(given[k], f"rates[{k}]"))
        elif servers[k] > 1:
            top = servers[k] if jobs is None else min(int(servers[k]), max(int(jobs), 1) + 1)
            curves.append(np.arange(1.0, top + 1.0))
        else:
            curves.append(None)
    return delay, servers, tuple(curves)


def peak_rates(curves: tuple) -> np.ndarray:
    """c_k = max_j r_k(j) per station (1 for stations without a curve)."""
    return np.array([1.0 if r is None else float(r.max()) for r in curves])


def check_has_demand(total_demand: float, think_time: float) -> None:
    """Refuse a closed single-class network whose demands D = sum_k D_k (s) and think time
    Z (s) are all zero (D + Z <= 0): its throughput is unbounded."""
    if total_demand + think_time <= 0:
        raise InvalidModelError(
            "all demands and the think time are zero: throughput is unbounded; "
            "give at least one station a demand > 0"
        )
