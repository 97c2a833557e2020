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
.. [CMS08] G. Casale, R. R. Muntz, G. Serazzi, "Geometric bounds: a noniterative
   analysis technique for closed queueing networks", IEEE Trans. Computers 57(6):780-794,
   2008 (see :mod:`qnmodel.solvers.bounds_geometric`).
.. [HL87] C. Hsieh, S. S. Lam, "Two classes of performance bounds for closed queueing
   networks", Performance Evaluation 7(1):3-30, 1987 (proportional bounds).
"""

from __future__ import annotations

import numpy as np

from .._validate import as_choice, as_population, check_memory, check_time_scale
from ..model import Network
from ..results.closed import BoundsResult
from ._bounds_core import aba_from_aggregates, bjb_from_aggregates
from ._mva_core import single_class
from ._netargs import check_has_demand
from .bounds_geometric import bounds_geometric, bounds_proportional
from .mva_ld_general import ld_least_stretch as _least_stretch
from .mva_ld_general import ld_peak_capacity as _peak_capacity

__all__ = [
    "aba_from_aggregates",
    "bjb_from_aggregates",
    "bounds_aba",
    "bounds_bjb",
    "bounds_geometric_of",
    "bounds_proportional_of",
    "bounds",
    "BOUNDS_METHODS",
]


def _aggregates(net: Network) -> dict:
    q = ~net.is_delay
    per_server = np.where(q, net.demands / _peak_capacity(net), 0.0)
    Dq = float((net.demands * _least_stretch(net))[q].sum())  # lone-job time D_k min j/r(j)
    Kq = int(q.sum())
    Ddelay = float(net.demands[net.is_delay].sum())
    Dmax = float(per_server.max()) if Kq else 0.0
    check_has_demand(Dq + Ddelay, net.think_time)
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
    (twelve float64 arrays of N: n, the four bounds and their temporaries; measured peak
    88 B per population at N = 1e6, K = 1 and 8)."""
    check_time_scale(N, net.total_demand, net.think_time)
    check_memory(
        8.0 * 12 * N,
        f"bounds for n = 1..{N}",
        "give a smaller N (the bounds are straight lines and a hyperbola: a few hundred "
        "points draw them), or raise the limit",
    )


def _prepare(net: Network, N: int, name: str) -> tuple[Network, int, dict]:
    """``(net, N, aggregates)`` of a bounds entry point ``name``: the single-class network,
    the validated N, checked by :func:`_check_size` before anything is allocated."""
    net = single_class(net, name)
    N = as_population(N, "N")
    _check_size(net, N)
    return net, N, _aggregates(net)


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
    net, N, agg = _prepare(net, N, "bounds_aba")
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
    net, N, agg = _prepare(net, N, "bounds_bjb")
    n = np.arange(1, N + 1, dtype=np.float64)
    return _result(
        "bjb",
        net,
        N,
        agg,
        bjb_from_aggregates(n, agg["D"], agg["Dmax"], agg["Davg"], net.think_time, agg["Ddelay"]),
    )


def _curve_bounds(kernel, method: str, net: Network, N: int) -> BoundsResult:
    """Geometric or proportional bounds ([CMS08]; [HL87]) of a product-form network of
    single-server queues and delays, as a :class:`BoundsResult`."""
    net, N, agg = _prepare(net, N, "bounds_bjb")
    res = kernel(net.demands, N, net.think_time, delay=net.is_delay)
    arrays = (res.throughput_lower, res.throughput_upper, res.response_time_lower,
              res.response_time_upper)  # fmt: skip
    return _result(res.method, net, N, agg, arrays)


def bounds_geometric_of(net: Network, N: int) -> BoundsResult:
    """Geometric bounds ([CMS08]) of a closed single-class network for n = 1..N."""
    return _curve_bounds(bounds_geometric, "gb", net, N)


def bounds_proportional_of(net: Network, N: int) -> BoundsResult:
    """Proportional bounds ([HL87]) of a closed single-class network for n = 1..N."""
    return _curve_bounds(bounds_proportional, "pb", net, N)


BOUNDS_METHODS = {"aba": bounds_aba, "bjb": bounds_bjb, "gb": bounds_geometric_of,
                  "pb": bounds_proportional_of}  # fmt: skip


def bounds(net: Network, N: int, method: str = "bjb") -> BoundsResult:
    """Bounds on X(n) and R(n) for n = 1..N of a closed single-class network.

    ``method``: ``"bjb"`` (balanced job bounds, default), ``"aba"`` (asymptotic: true bounds
    for any single-class network of these stations, whatever the service laws), ``"gb"``
    (geometric bounds, [CMS08]: tighter than BJB) or ``"pb"`` (proportional bounds,
    [HL87]); BJB, GB and PB assume a product-form network of single-server queues and
    delays. See :func:`qnmodel.bounds_multiclass` and :func:`qnmodel.bounds_open` for
    several classes and open networks.
    """
    as_choice(method, "method", tuple(BOUNDS_METHODS))
    return BOUNDS_METHODS[method](net, N)
