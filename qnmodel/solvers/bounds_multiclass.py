"""Bounds on the class throughputs and response times of closed multi-class networks.

Three kernels on arrays (demands D_ck of class c at station k, populations N_c):

* :func:`bounds_multiclass_aba` -- asymptotic bounds, with think times, delay and
  multi-server stations;
* :func:`bounds_multiclass_bsb` -- balanced system bounds of Kerola ([Ker86]), single-server
  queueing stations and Z = 0;
* :func:`bounds_multiclass_composite` -- Kerola's composite bound: the balanced lower bounds
  of the other classes fed into the utilisation law ([Ker86] eq. 13).

Every bound follows from the exact multi-class MVA equations of a product-form network
([RL80]): R_ck = D_ck (1 + Q_k(N - e_c)) at a single-server station (never more with m
servers), D_ck at a delay station, X_c = N_c / (Z_c + R_c), and Q_k(N - e_c) counts at most
the N_tot - 1 other jobs -- more precisely only jobs of classes that visit k.

Differences from Octave ``queueing`` 1.2.7 (``qncmaba``, ``qncmbsb``, ``qncmcb``)
---------------------------------------------------------------------------------
* ``qncmaba``'s lower throughput bound N_c / (sum_s N_s D_s + ...) charges class c with the
  *other* classes' total demands. It is not a bound: with one station, D = (1, 0.01),
  N = (1, 5), the five class-2 jobs always sit at the station, class 1 gets a sixth of it,
  X_1 = 1/6, and ``qncmaba`` gives X_1 >= 0.952. Here R_c <= sum_k D_ck n_k with n_k the
  jobs of the classes visiting k (equal to Octave's value when demands are
  class-independent and positive, and for one class).
* ``qncmaba`` takes D_max over every station, delay stations included; a delay station
  does not limit throughput, so that is not a bound when a delay has the largest demand.
  Here D_max is over queueing stations (per server).
* ``qncmbsb`` accepts delay stations, where its upper bound N_c / ((K + N_tot - 1) D_min)
  fails (it counts queueing at the delay); here delay stations are refused.
* For a class with N_c = 0 every bound is 0 (``qncmcb`` returns a positive upper bound
  and a response time 0/0 for it); ``qncmcb`` fails outright for a single class.

References
----------
.. [LZGS] E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative System
   Performance*, Prentice-Hall, 1984, sec. 5.2 (asymptotic bounds) and sec. 7.4.2.1
   (the multi-class MVA equations used above).
.. [Ker86] T. Kerola, "The composite bound method for computing throughput bounds in
   multiple class environments", Performance Evaluation 6(1):1-9, 1986,
   doi:10.1016/0166-5316(86)90002-7 (also Purdue CSD-TR-475, 1984): the balanced bounds
   and eq. (13), the composite upper bound.
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed multichain queuing
   networks", J. ACM 27(2):313-322, 1980, doi:10.1145/322186.322195.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_per_class, as_server_counts
from ..errors import InvalidModelError
from ..results.network import MultiClassBoundsResult
from ._netargs import class_arrays, station_kinds

__all__ = ["bounds_multiclass_aba", "bounds_multiclass_bsb", "bounds_multiclass_composite"]


def _inputs(demands, population, think_time, visits):
    D, N = class_arrays(demands, population, visits)
    C, K = D.shape
    Z = as_per_class(think_time, "think_time", C)
    live = N > 0
    empty = live & (D.sum(axis=1) + Z <= 0.0)
    if empty.any():
        c = int(np.flatnonzero(empty)[0])
        raise InvalidModelError(
            f"class {c} has N = {int(N[c])} jobs but no demand anywhere and no think time: "
            "its throughput is unbounded; give it a demand > 0"
        )
    return D, N, Z, live


def _package(method, D, N, Z, live, x_lo, x_hi):
    with np.errstate(divide="ignore", invalid="ignore"):
        r_lo = np.where(live, N / np.where(live, x_hi, 1.0) - Z, 0.0)
        r_hi = np.where(live, N / np.where(live, x_lo, 1.0) - Z, 0.0)
    return MultiClassBoundsResult(
        method=method,
        population=N,
        throughput_lower=np.where(live, x_lo, 0.0),
        throughput_upper=np.where(live, x_hi, 0.0),
        response_time_lower=r_lo,
        response_time_upper=r_hi,
        think_time=Z,
        demands=D,
    )


def bounds_multiclass_aba(
    demands: Any,
    population: Any,
    think_time: Any = 0.0,
    delay: Any = None,
    servers: Any = None,
    visits: Any = None,
) -> MultiClassBoundsResult:
    """Asymptotic bounds of a closed multi-class network at population N.

    Parameters
    ----------
    demands : array_like (C, K)
        D_ck, seconds (>= 0); with ``visits``, the service times per visit S_ck.
    population : array_like of int (C,)
        N_c >= 0.
    think_time : float or array_like (C,)
        Z_c, seconds (>= 0).
    delay : array_like of bool (K,), optional
        Delay (infinite-server) stations.
    servers : array_like of int (K,), optional
        m_k >= 1 servers of each queueing station (default 1).
    visits : array_like (C, K), optional
        V_ck >= 0; then D = V S.

    Returns
    -------
    MultiClassBoundsResult
        ``method="multiclass.aba"``. With D_c = sum_k D_ck, n_k = sum of N_s over the
        classes s with D_sk > 0, and the queueing stations q:

        ``N_c / (Z_c + sum_k D_ck [q: n_k, delay: 1]) <= X_c
        <= min(N_c / (D_c + Z_c), min_q m_q / D_cq)``

        and R_c = N_c / X_c - Z_c between the matching values ([LZGS] sec. 5.2 applied
        per class with the MVA equations of the module docstring).

    Notes
    -----
    Closed forms of sums and quotients of non-negative numbers: no cancellation. A class
    with N_c = 0 gets 0 everywhere.
    """
    D, N, Z, live = _inputs(demands, population, think_time, visits)
    C, K = D.shape
    delay, m, _ = station_kinds(K, delay, servers, jobs=1)  # the curves are unused
    q = ~delay
    n_k = ((D > 0) * N[:, None]).sum(axis=0).astype(np.float64)  # jobs that can be at k
    worst = np.where(q[None, :], D * n_k[None, :], D).sum(axis=1)
    per_server = np.where(q[None, :], D / m[None, :], 0.0)
    Dmax = per_server.max(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):  # 0/0 for empty classes, masked
        x_sat = np.where(Dmax > 0, 1.0 / np.where(Dmax > 0, Dmax, 1.0), np.inf)
        x_hi = np.minimum(N / (D.sum(axis=1) + Z), x_sat)
        x_lo = N / (worst + Z)
    return _package("multiclass.aba", D, N, Z, live, x_lo, x_hi)


def _single_server_only(K: int, delay: Any, servers: Any, think_time: Any, C: int, what: str):
    Z = as_per_class(think_time, "think_time", C)
    if np.any(Z != 0.0):
        c = int(np.flatnonzero(Z != 0.0)[0])
        raise InvalidModelError(
            f"{what} only supports Z = 0 (its upper bound counts every job as queueing at a "
            f"station); class {c} has think_time {float(Z[c])!r}: use bounds_multiclass_aba, or "
            "model the think time as a delay station there"
        )
    if delay is not None and np.any(np.asarray(delay, dtype=bool)):
        k = int(np.flatnonzero(np.asarray(delay, dtype=bool))[0])
        raise InvalidModelError(
            f"{what} supports single-server queueing stations only; station {k} is a delay "
            "station (the bound counts queueing there): use bounds_multiclass_aba"
        )
    m = as_server_counts(servers, "servers", K)
    if np.any(m > 1):
        k = int(np.flatnonzero(m > 1)[0])
        raise InvalidModelError(
            f"{what} supports single-server stations only; multiple-server station {k} "
            f"(servers = {m[k]}) is not supported: use bounds_multiclass_aba"
        )


def _bsb_arrays(D: np.ndarray, N: np.ndarray):
    C, K = D.shape
    Ntot = float(N.sum())
    Dc = D.sum(axis=1)
    Dmax = D.max(axis=1)
    Dmin = D.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_sat = np.where(Dmax > 0, 1.0 / np.where(Dmax > 0, Dmax, 1.0), np.inf)
        x_lo = N / (Dc + (Ntot - 1.0) * Dmax)
        x_hi = np.minimum(x_sat, N / ((K + Ntot - 1.0) * Dmin))
    return x_lo, x_hi


def bounds_multiclass_bsb(
    demands: Any,
    population: Any,
    think_time: Any = 0.0,
    delay: Any = None,
    servers: Any = None,
    visits: Any = None,
) -> MultiClassBoundsResult:
    """Balanced system bounds of a closed multi-class network ([Ker86]).

    Parameters as :func:`bounds_multiclass_aba`; single-server queueing stations only and
    Z = 0 (anything else is refused, naming the station or class).

    Returns
    -------
    MultiClassBoundsResult
        ``method="multiclass.bsb"``; with D_c = sum_k D_ck, D_max,c / D_min,c the largest /
        smallest demand of class c over the K stations and N_tot = sum_s N_s:

        ``N_c / (D_c + (N_tot - 1) D_max,c) <= X_c
        <= min(1 / D_max,c, N_c / ((K + N_tot - 1) D_min,c))``,

        from R_c = sum_k D_ck (1 + Q_k(N - e_c)) and sum_k Q_k(N - e_c) = N_tot - 1.
    """
    D, N, Z, live = _inputs(demands, population, think_time, visits)
    C, K = D.shape
    _single_server_only(K, delay, servers, think_time, C, "bounds_multiclass_bsb")
    x_lo, x_hi = _bsb_arrays(D, N)
    return _package("multiclass.bsb", D, N, Z, live, x_lo, x_hi)


def bounds_multiclass_composite(
    demands: Any,
    population: Any,
    think_time: Any = 0.0,
    delay: Any = None,
    servers: Any = None,
    visits: Any = None,
) -> MultiClassBoundsResult:
    """Kerola's composite bounds of a closed multi-class network ([Ker86] eq. 13).

    Parameters as :func:`bounds_multiclass_bsb` (single-server stations, Z = 0).

    Returns
    -------
    MultiClassBoundsResult
        ``method="multiclass.composite"``: the balanced lower bounds X_s^- of
        :func:`bounds_multiclass_bsb`, and by the utilisation law
        sum_s X_s D_sk <= 1 at every station,

        ``X_c <= min(1 / D_max,c, min_{k: D_ck > 0} (1 - sum_{s != c, N_s > 0} X_s^- D_sk)
        / D_ck)``.
    """
    D, N, Z, live = _inputs(demands, population, think_time, visits)
    C, K = D.shape
    _single_server_only(K, delay, servers, think_time, C, "bounds_multiclass_composite")
    x_lo, _ = _bsb_arrays(D, N)
    x_lo = np.where(live, x_lo, 0.0)
    used = x_lo[:, None] * D  # class s's least use of each station
    x_hi = np.empty(C)
    for c in range(C):
        spare = 1.0 - (used.sum(axis=0) - used[c])
        vis = D[c] > 0
        with np.errstate(divide="ignore"):
            cand = spare[vis] / D[c, vis]
        x_hi[c] = float(cand.min()) if cand.size else np.inf
        if vis.any():
            x_hi[c] = min(x_hi[c], 1.0 / float(D[c].max()))
    return _package("multiclass.composite", D, N, Z, live, x_lo, x_hi)
