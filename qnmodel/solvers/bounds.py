"""Asymptotic (ABA) and balanced job (BJB) bounds of closed single-class networks.

All functions compute the whole range n = 1..N in one vectorised call. The
``*_from_aggregates`` kernels broadcast over any array shape of aggregates,
which is what :mod:`qnmodel.whatif.grid` uses to bound a whole what-if grid at once.

Delay stations and think time
-----------------------------
An infinite-server (delay) station is indistinguishable from terminal think
time in a product-form network, so the bounds are derived for the queueing
stations alone with the effective think time Z' = Z + sum of delay demands,
and the delay demands are added back to the response time bounds.

References
----------
.. [LZGS] E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik,
   *Quantitative System Performance*, Prentice-Hall, 1984, ch. 5
   ("Bounds on performance"): sec. 5.2 asymptotic bounds, sec. 5.3 balanced
   system (job) bounds, with the terminal-workload forms of Table 5.3.
.. [Cui06] Cui B., Liu J., Wang G., Liu J., "Study on I/O response time
   bounds of network storage systems", Journal on Communications 27(1), 2006,
   eq. (1) (BJB lower response-time bound for Z = 0).
"""

from __future__ import annotations

import numpy as np

from .._validate import as_choice, as_population, check_memory, check_time_scale
from ..errors import InvalidModelError
from ..model import Network
from ..results.closed import BoundsResult
from ._mva_core import single_class
from .mva_ld_general import ld_least_stretch as _least_stretch
from .mva_ld_general import ld_peak_capacity as _peak_capacity

__all__ = [
    "aba_from_aggregates",
    "bjb_from_aggregates",
    "bounds_aba",
    "bounds_bjb",
    "bounds",
    "BOUNDS_METHODS",
]


def aba_from_aggregates(n, D, Dmax, Z, Ddelay=0.0):
    """ABA on X(n) and R(n) from aggregate demands; all arguments broadcast.

    Parameters
    ----------
    n : array_like
        Populations (>= 1).
    D : array_like
        Sum of queueing-station demands, s (>= 0).
    Dmax : array_like
        Largest per-server queueing demand D_k / m_k, s (>= 0).
    Z : array_like
        Think time, s (>= 0).
    Ddelay : array_like
        Sum of delay-station demands, s (>= 0).

    Returns
    -------
    x_lo, x_hi, r_lo, r_hi : ndarray
        Of the arguments' common broadcast shape (numpy scalars when all are
        scalars); [LZGS] sec. 5.2, with Z' = Z + Ddelay:
        ``N / (N D + Z') <= X(N) <= min(N / (D + Z'), 1 / Dmax)``,
        ``max(D, N Dmax - Z') <= R_q(N) <= N D`` and R = R_q + Ddelay.
    """
    n = np.asarray(n, dtype=np.float64)
    D = np.asarray(D, dtype=np.float64)
    Dmax = np.asarray(Dmax, dtype=np.float64)
    Zp = np.asarray(Z, dtype=np.float64) + Ddelay
    Dd = np.asarray(Ddelay, dtype=np.float64)
    # Each output is written into one array of the full broadcast shape, in place: a grid of
    # 10^5 points x 64 populations then needs 4 such arrays instead of a dozen temporaries.
    shape = np.broadcast_shapes(n.shape, D.shape, Dmax.shape, Zp.shape, Dd.shape)
    x_lo, x_hi, r_lo, r_hi = (np.empty(shape) for _ in range(4))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x_sat = np.where(Dmax > 0, 1.0 / np.where(Dmax > 0, Dmax, 1.0), np.inf)
        np.divide(n, D + Zp, out=x_hi)
        np.minimum(x_hi, x_sat, out=x_hi)
        np.multiply(n, D, out=x_lo)
        x_lo += Zp
        np.divide(n, x_lo, out=x_lo)
    np.multiply(n, Dmax, out=r_lo)
    r_lo -= Zp
    np.maximum(D, r_lo, out=r_lo)
    r_lo += Dd
    np.multiply(n, D, out=r_hi)
    r_hi += Dd
    return _unwrap(x_lo, x_hi, r_lo, r_hi)


def _unwrap(*arrays):
    """The arrays, with 0-d ones as numpy scalars (as ufuncs on scalars return them)."""
    return tuple(a[()] if a.ndim == 0 else a for a in arrays)


def bjb_from_aggregates(n, D, Dmax, Davg, Z, Ddelay=0.0):
    """Balanced job bounds on X(n) and R(n) from aggregate demands; all broadcast.

    With D the total, Dmax the largest and Davg = D / K the mean queueing
    demand, Z' = Z + Ddelay ([LZGS] sec. 5.3, terminal workload):

    ``N / (D + Z' + (N-1) Dmax / (1 + Z'/(N D))) <= X(N)
    <= min(1/Dmax, N / (D + Z' + (N-1) Davg / (1 + Z'/D)))``

    ``max(N Dmax - Z', D + (N-1) Davg / (1 + Z'/D)) <= R_q(N)
    <= D + (N-1) Dmax / (1 + Z'/(N D))``, R = R_q + Ddelay.

    For Z' = 0 these are ``max(N Dmax, D + (N-1) Davg) <= R(N) <= D + (N-1) Dmax``,
    [Cui06] eq. (1). When D = 0 (no queueing demand) the network is a pure
    delay and X = N / Z' exactly.

    Parameters are those of :func:`aba_from_aggregates` plus ``Davg`` (s, >= 0);
    the four outputs ``x_lo, x_hi, r_lo, r_hi`` (jobs/s, jobs/s, s, s) have the
    arguments' common broadcast shape.
    """
    n = np.asarray(n, dtype=np.float64)
    D = np.asarray(D, dtype=np.float64)
    Dmax = np.asarray(Dmax, dtype=np.float64)
    Davg = np.asarray(Davg, dtype=np.float64)
    Zp = np.asarray(Z, dtype=np.float64) + Ddelay
    Dd = np.asarray(Ddelay, dtype=np.float64)
    pos = D > 0
    Ds = np.where(pos, D, 1.0)  # safe divisor; results for D == 0 replaced below
    shape = np.broadcast_shapes(n.shape, D.shape, Dmax.shape, Davg.shape, Zp.shape, Dd.shape)
    # Outputs are built in place in arrays of the full broadcast shape (5 for a whole grid,
    # not a dozen temporaries), with the same operations in the same order as the formulas.
    x_lo, x_hi, r_lo, r_hi, tmp = (np.empty(shape) for _ in range(5))
    DZ = D + Zp
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # shrink_hi = (N-1) Davg / (1 + Z'/D), written (N-1) Davg D / (D + Z') to stay finite
        shrink_hi = r_lo
        np.multiply(n - 1.0, Davg, out=shrink_hi)
        shrink_hi *= Ds
        shrink_hi /= Ds + Zp
        # shrink_lo = (N-1) Dmax / (1 + Z'/(N D)) = (N-1) Dmax N D / (N D + Z')
        shrink_lo = r_hi
        np.multiply(n - 1.0, Dmax, out=shrink_lo)
        shrink_lo *= n
        shrink_lo *= Ds
        np.multiply(n, Ds, out=tmp)
        tmp += Zp
        shrink_lo /= tmp
        x_sat = np.where(Dmax > 0, 1.0 / np.where(Dmax > 0, Dmax, 1.0), np.inf)
        np.add(DZ, shrink_hi, out=x_hi)
        np.divide(n, x_hi, out=x_hi)
        np.minimum(x_sat, x_hi, out=x_hi)
        np.add(DZ, shrink_lo, out=x_lo)
        np.divide(n, x_lo, out=x_lo)
        np.multiply(n, Dmax, out=tmp)
        tmp -= Zp
        shrink_hi += D  # r_lo = max(N Dmax - Z', D + shrink_hi)
        np.maximum(tmp, shrink_hi, out=r_lo)
        shrink_lo += D  # r_hi = D + shrink_lo
        if not np.all(pos):  # a pure delay network: X = N / Z' exactly, R = delays only
            np.divide(n, Zp, out=tmp)
            np.copyto(x_lo, tmp, where=~pos)
            np.copyto(x_hi, tmp, where=~pos)
            np.copyto(r_lo, 0.0, where=~pos)
            np.copyto(r_hi, 0.0, where=~pos)
    r_lo += Dd
    r_hi += Dd
    return _unwrap(x_lo, x_hi, r_lo, r_hi)


def _aggregates(net: Network) -> dict:
    q = ~net.is_delay
    per_server = np.where(q, net.demands / _peak_capacity(net), 0.0)
    Dq = float((net.demands * _least_stretch(net))[q].sum())  # lone-job time D_k min j/r(j)
    Kq = int(q.sum())
    Ddelay = float(net.demands[net.is_delay].sum())
    Dmax = float(per_server.max()) if Kq else 0.0
    if Dq + Ddelay + net.think_time <= 0.0:
        raise InvalidModelError(
            "all demands and the think time are zero: throughput is unbounded; "
            "give at least one station a demand > 0"
        )
    k_bn = int(np.argmax(np.where(q, per_server, -1.0))) if Kq else int(np.argmax(net.demands))
    D_all = Dq + Ddelay
    return {
        "D": Dq,
        "Dmax": Dmax,
        "Davg": Dq / Kq if Kq else 0.0,
        "Ddelay": Ddelay,
        "bottleneck": net.names[k_bn],
        "x_sat": 1.0 / Dmax if Dmax > 0 else float("inf"),
        "n_star": (D_all + net.think_time) / Dmax if Dmax > 0 else float("inf"),
    }


def _result(method: str, net: Network, N: int, agg: dict, arrays) -> BoundsResult:
    x_lo, x_hi, r_lo, r_hi = arrays
    return BoundsResult(
        method=method,
        n=np.arange(1, N + 1, dtype=np.float64),
        throughput_lower=x_lo,
        throughput_upper=x_hi,
        response_time_lower=r_lo,
        response_time_upper=r_hi,
        station_names=net.names,
        think_time=net.think_time,
        total_demand=agg["D"] + agg["Ddelay"],
        max_demand=agg["Dmax"],
        bottleneck=agg["bottleneck"],
        saturation_throughput=agg["x_sat"],
        n_star=agg["n_star"],
    )


def _check_size(net: Network, N: int) -> None:
    """Refuse before allocating: times that overflow, or curves n = 1..N past the memory limit
    (about ten float64 arrays of N: n, the four bounds and their temporaries)."""
    check_time_scale(N, net.total_demand, net.think_time)
    check_memory(
        8.0 * 10 * N,
        f"bounds for n = 1..{N}",
        "give a smaller N (the bounds are straight lines and a hyperbola: a few hundred "
        "points draw them), or raise the limit",
    )


def bounds_aba(net: Network, N: int) -> BoundsResult:
    """Asymptotic bounds of a closed single-class network for n = 1..N.

    Parameters
    ----------
    net : Network
        Queueing, multi-server and delay stations; think time ``net.think_time``.
        A multi-server station of m servers counts with its per-server demand
        D_k / m in D_max (its saturation rate is m / D_k).
    N : int
        Largest population (>= 1).

    Returns
    -------
    BoundsResult
        See :func:`aba_from_aggregates` for the formulas ([LZGS] sec. 5.2).
    """
    net = single_class(net, "bounds_aba")
    N = as_population(N, "N")
    _check_size(net, N)
    agg = _aggregates(net)
    n = np.arange(1, N + 1, dtype=np.float64)
    return _result(
        "aba",
        net,
        N,
        agg,
        aba_from_aggregates(n, agg["D"], agg["Dmax"], net.think_time, agg["Ddelay"]),
    )


def bounds_bjb(net: Network, N: int) -> BoundsResult:
    """Balanced job bounds of a closed single-class network for n = 1..N.

    Parameters
    ----------
    net : Network
        Single-server queueing stations (FCFS with exponential service, PS, LCFS-PR) and
        delay stations: BJB is derived for product-form networks of load-independent
        stations; anything else is refused (use ``method="aba"`` or :func:`qnmodel.mva`).
    N : int
        Largest population (>= 1).

    Returns
    -------
    BoundsResult
        See :func:`bjb_from_aggregates` ([LZGS] sec. 5.3; [Cui06] eq. 1).
    """
    net = single_class(net, "bounds_bjb")
    N = as_population(N, "N")
    _check_size(net, N)
    agg = _aggregates(net)
    n = np.arange(1, N + 1, dtype=np.float64)
    return _result(
        "bjb",
        net,
        N,
        agg,
        bjb_from_aggregates(n, agg["D"], agg["Dmax"], agg["Davg"], net.think_time, agg["Ddelay"]),
    )


BOUNDS_METHODS = {"aba": bounds_aba, "bjb": bounds_bjb}


def bounds(net: Network, N: int, method: str = "bjb") -> BoundsResult:
    """Bounds on X(n) and R(n) for n = 1..N: ``method="bjb"`` (default) or ``"aba"``."""
    as_choice(method, "method", tuple(BOUNDS_METHODS))
    return BOUNDS_METHODS[method](net, N)
