"""Exact mean value analysis of closed multi-class (multi-chain) networks.

:func:`mva_multiclass` runs the Reiser-Lavenberg recursion over the
population lattice {n : 0 <= n_c <= N_c}. Only a *frontier* of the lattice is
ever held in memory, never the whole lattice:

* the compiled kernel sweeps the lattice slice by slice along the class with
  the largest population and keeps two slices (the lattice with that class
  removed), a memory of 2 K prod_{c != c*} (N_c + 1) doubles;
* the pure-numpy path sweeps it level by level (|n| = 0, 1, ..., sum N_c) and
  keeps two levels, each no larger than one slice.

Multi-server and load-dependent stations carry their marginal probabilities through the
lattice (:mod:`qnmodel.solvers.mva_lattice_ld`); the answer is exact for product-form
networks. :func:`seidmann_split` (Seidmann's decomposition, an approximation) serves the
approximate solvers.

References
----------
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed
   multichain queuing networks", J. ACM 27(2):313-322, 1980,
   doi:10.1145/322186.322195 (eqs. 3.1-3.3, the multi-chain recursion).
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984,
   sec. 7.4.2.1 (exact multiple-class MVA, Algorithm 7.1).
.. [SSS87] A. Seidmann, P. J. Schweitzer, S. Shalev-Oren, "Computerized
   closed queueing network models of flexible manufacturing systems",
   Large Scale Systems 12:91-107, 1987 (multi-server station replaced by a
   single server of demand D/m in tandem with a delay of demand D (m-1)/m).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import max_memory as max_memory_bytes
from ..errors import LatticeTooLargeError
from ..model import Network
from ..results.closed import MultiClassResult
from ._closed import closed_model, package
from ._lattice import _solve_exact, lattice_memory_bytes
from .mva_chains import mva_chains
from .mva_lattice_ld import mva_multiclass_ld_exact

__all__ = ["mva_multiclass", "seidmann_split", "lattice_memory_bytes"]


def seidmann_split(D: np.ndarray, delay: np.ndarray, servers: np.ndarray):
    """Seidmann's decomposition of multi-server stations ([SSS87]).

    A station of m > 1 servers and demand D_ck becomes a single-server queue of
    demand D_ck / m followed by a delay station of demand D_ck (m - 1) / m. The
    approximation is exact at one job and in heavy traffic (both the throughput
    asymptote 1/(D/m) and the minimal response time D are preserved).

    Parameters
    ----------
    D : ndarray (C, K)
        Demands, seconds.
    delay : ndarray (K,) of bool
    servers : ndarray (K,) of int

    Returns
    -------
    D2 : ndarray (C, K + L)
        Demands of the K stations (multi-server ones divided by m) followed by
        the L added delay stations.
    delay2 : ndarray (K + L,) of bool
    owner : ndarray (L,) of int
        Which original station each added delay belongs to.
    """
    multi = np.flatnonzero(~delay & (servers > 1))
    m = servers[multi].astype(np.float64)
    D2 = np.array(D, dtype=np.float64)
    D2[:, multi] = D[:, multi] / m
    extra = D[:, multi] * ((m - 1.0) / m)
    return (
        np.hstack([D2, extra]),
        np.concatenate([delay, np.ones(multi.size, dtype=bool)]),
        multi,
    )


def _fold(A: np.ndarray, K: int, owner: np.ndarray) -> np.ndarray:
    """Add the columns of the Seidmann delay parts back onto their stations."""
    out = np.array(A[:, :K])
    np.add.at(out, (slice(None), owner), A[:, K:])
    return out


# --------------------------------------------------------------------------------------
# Exact recursion over the lattice
# --------------------------------------------------------------------------------------


def mva_multiclass(net: Network, N: Any = None, *, max_memory: Any = None) -> MultiClassResult:
    """Exact MVA of a closed multi-class network at population vector N.

    Parameters
    ----------
    net : Network
        Closed classes (a network without classes is one class). Exact for product-form
        networks ([BCMP75]): FCFS stations where every class has the same exponential
        service time per visit, PS and LCFS-PR stations with any service times, delays,
        multi-server and load-dependent stations. Anything else is refused, naming the
        solver that takes it (:mod:`qnmodel.solvers.support`): FCFS stations whose classes
        have different service times go to :func:`qnmodel.amva` or :func:`qnmodel.simulate`.
    N : array_like of int (C,), mapping or int, optional
        Jobs per class N_c >= 0, at least one job in total: one per class, one per closed
        class, a mapping {class name: N_c} overriding some classes, or an int for a network
        without classes. Default: the classes' own populations.
    max_memory : int or str, optional
        Largest lattice frontier allowed, bytes or a size string (``"4 GiB"``); default the
        package limit (``QNMODEL_MAX_MEMORY``, 1 GiB).

    Returns
    -------
    MultiClassResult
        X_c, R_c, and per class and station Q_ck, U_ck = X_c D_ck / c_k (c_k: servers, or
        the peak of a rate curve), R_ck. For a class with N_c = 0: X_c = 0, Q_ck = U_ck = 0,
        and R_ck is the residence time one added class-c job would see.

    Raises
    ------
    LatticeTooLargeError
        Before any work, when the lattice frontier (:func:`lattice_memory_bytes`) exceeds
        ``max_memory``; the message states the estimate.
    InvalidModelError
        A feature the solver does not take, or bad populations, naming them.

    Notes
    -----
    The recursion of [RL80] (also [LZGS] Algorithm 7.1): for every lattice point n, in an
    order where n - e_c precedes n,

        R_ck(n) = D_ck (1 + Q_k(n - e_c))  at queueing stations (D_ck at delays),
        X_c(n)  = n_c / (Z_c + sum_k R_ck(n)),
        Q_k(n)  = sum_c X_c(n) R_ck(n).

    Only sums and products of positive numbers occur, so it neither cancels nor
    overflows. Cost O(C K prod_c (N_c + 1)) time; memory is a frontier of the lattice
    (module docstring), not the whole lattice. With multi-server or load-dependent
    stations the recursion also carries each such station's marginal probabilities
    (:func:`~qnmodel.solvers.mva_lattice_ld.mva_multiclass_ld_exact`, [RL80] sec. 4;
    [LZGS] sec. 8.3), still exact.
    """
    model = closed_model(net, N, "mva_multiclass")
    limit = max_memory_bytes(max_memory)
    C, K = model.D.shape
    if "class_switching" in net.compiled.features:
        return _chains(net, model, limit)
    if model.has_ld:
        rates = [None if model.delay[k] else
                 (model.rates[k] if model.rates[k] is not None else
                  np.arange(1.0, float(min(model.servers[k], max(int(model.N.sum()), 1))) + 1.0)
                  if model.servers[k] > 1 else None)
                 for k in range(K)]  # fmt: skip
        res = mva_multiclass_ld_exact(
            model.D, model.N, model.Z, delay=model.delay, rates=rates, max_memory=limit
        )
        return package("mva.multiclass.ld", model, np.array(res.throughput),
                       np.array(res.residence_time), peak_rate=model.peak_rate(),
                       idle_probability=res.idle_probability)  # fmt: skip
    need = lattice_memory_bytes(model.N[model.N > 0], K)
    if need > limit:
        points = math.prod(int(n) + 1 for n in model.N)
        raise LatticeTooLargeError(
            f"exact multi-class MVA for population {model.N.tolist()} with {K} stations needs "
            f"about {need / 2**20:.4g} MiB for the lattice frontier (the lattice has "
            f"{points:.4g} points, about {points * C * K:.3g} multiply-adds), more than "
            f"max_memory={limit / 2**20:.4g} MiB; use amva(..., method='linearizer') or "
            "'schweitzer', or raise max_memory"
        )
    X, Rk = _solve_exact(model.D, model.delay, model.Z, model.N)
    return package("mva.multiclass", model, X, Rk)


def _chains(net: Network, model, limit: float) -> MultiClassResult:
    """Class switching: exact MVA over the chains ([RL80] sec. 5;
    :func:`~qnmodel.solvers.mva_chains.mva_chains`), the terminals as one more delay station
    whose demand per chain cycle is sum_c V_c,outside Z_c (dropped from the result)."""
    cm = net.compiled
    C, K = model.D.shape
    D = np.hstack([model.D, (cm.outside_visits * model.Z)[:, None]])
    delay = np.append(model.delay, True)
    rates = [None if model.delay[k] else (model.rates[k] if model.rates[k] is not None else (
        np.arange(1.0, float(min(model.servers[k], max(int(model.N.sum()), 1))) + 1.0)
        if model.servers[k] > 1 else None))
        for k in range(K)] + [None]  # fmt: skip
    res = mva_chains(D, model.N, cm.chains, delay=delay, rates=rates, max_memory=limit)
    X = np.array(res.throughput)
    Rk = np.array(res.residence_time)[:, :K]
    return package("mva.chains", model, X, Rk, peak_rate=model.peak_rate())
