"""Exact mean value analysis (MVA) of closed single-class networks.

Two algorithms, one function each:

* :func:`mva_exact` (here) -- load-independent queueing stations and delay
  stations with think time: the Reiser-Lavenberg recursion, O(N K), computed by
  the batched kernel :func:`qnmodel.solvers._mva_core.exact` that the what-if
  sweep uses too.
* :func:`~qnmodel.solvers.mva_ld.mva_load_dependent` (in
  :mod:`qnmodel.solvers.mva_ld`, re-exported here) -- adds multi-server stations
  (m identical servers, rate min(j, m)/D with j jobs present). Exact, and
  numerically sound at any utilisation: see its Notes. O(N (K + m)) with one
  multi-server station, O(2^L N (K + L m)) with L <= 6 of them (the
  complement recursion), O(L N^2) beyond (log-space convolution).

:func:`mva` picks the right one for a :class:`~qnmodel.model.network.Network`.

References
----------
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed
   multichain queuing networks", J. ACM 27(2):313-322, 1980,
   doi:10.1145/322186.322195.
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984,
   ch. 6 (Algorithm 6.1, exact MVA with terminals) and ch. 8 (load-dependent
   centres, sec. 8.3).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidModelError
from ..model import Network
from ..results.closed import MVAResult
from ._mva_core import check, exact, result, single_class
from .mva_ld import (
    COMPLEMENT_MAX_SERVERS,
    COMPLEMENT_MAX_STATIONS,
    log_convolve,
    mva_load_dependent,
)
from .mva_residual import mva_residual_life

__all__ = [
    "mva_exact",
    "mva_load_dependent",
    "mva",
    "log_convolve",
    "COMPLEMENT_MAX_SERVERS",
    "COMPLEMENT_MAX_STATIONS",
]


def _own_population(net: Network) -> int:
    """The population of a network's one closed class, for ``mva(net)`` without N."""
    if isinstance(net, Network) and not net.single:
        cm = net.compiled
        if cm.C == 1 and not cm.is_open[0]:
            return int(cm.N[0])
    raise InvalidModelError(
        "mva: N is required (the population: qnmodel.mva(net, N)); only a network with one "
        "closed class carries its own"
    )


def mva_exact(net: Network, N: int, keep: str = "all") -> MVAResult:
    """Exact MVA of a closed single-class network of queueing and delay stations.

    Parameters
    ----------
    net : Network
        Single-server queueing stations (``kind="queue"``, ``servers=1``) and
        delay stations; think time Z = ``net.think_time`` (s, >= 0).
    N : int
        Largest population (>= 1). Every n = 1..N is computed.
    keep : {"all", "last"}
        Keep per-station arrays for every n (memory N x K) or only for n = N
        (memory K; use it for N x K beyond ~10^7).

    Returns
    -------
    MVAResult
        X(n), R(n), and per station Q_k(n), U_k(n) = X(n) D_k, R_k(n).
        System metrics derive as R = sum_k R_k and X = n / (R + Z).

    Raises
    ------
    InvalidModelError
        A multi-server or load-dependent station (use :func:`mva`), a feature exact MVA
        does not solve (:mod:`qnmodel.solvers.support`), N < 1, or all demands and Z zero.

    Notes
    -----
    The recursion adds and multiplies positive numbers only, so it neither
    cancels nor overflows: Q_k(n) <= n and X(n) <= 1 / D_max. It is exact for
    product-form networks (FCFS exponential, PS, LCFS-PR, IS) [RL80].
    Cost O(N K) time; memory O(N K) (``keep="all"``) or O(K).
    """
    net, N = check(net, N, keep)
    if net.has_multiserver or np.any(net.is_load_dependent):
        raise InvalidModelError(
            "mva_exact handles single-server and delay stations; this network has "
            "multi-server stations: use mva_load_dependent() or mva()"
        )
    D = net.demands
    Du = D / net.servers.astype(np.float64)
    pops = N if keep == "all" else np.array([N])
    X, R, Rk, Q, U = exact(D, np.where(net.is_delay, 0.0, D), net.think_time, pops, Du)
    return result("mva.exact", net, N, keep, X, R, Q, U, Rk)


def mva(net: Network, N: int | None = None, keep: str = "all") -> MVAResult:
    """Exact MVA of a closed single-class network for n = 1..N.

    Dispatches on the network: :func:`mva_exact` (single-server and delay stations),
    :func:`mva_load_dependent` (multi-server stations) or
    :func:`~qnmodel.solvers.mva_ld_general.mva_ld_general` (general rate curves). Exact for
    product-form networks: FCFS stations with exponential service, PS and LCFS-PR stations
    with any service law, delays. Single-server FCFS stations with non-exponential service
    (``scv`` != 1) are solved approximately by
    :func:`~qnmodel.solvers.mva_residual.mva_residual_life` (the residual-life correction,
    label ``"mva.exact+residual-life (approximate)"``); anything else is refused, naming the
    solver that takes it (:mod:`qnmodel.solvers.support`). A network with one closed class
    (e.g. read from a JMVA or LINE file) is that class, solved up to its own population
    unless ``N`` is given.
    """
    if N is None:
        N = _own_population(net)
    if isinstance(net, Network):
        cm = net.compiled
        if cm.uses("non_exponential") and (net.single or (cm.C == 1 and not cm.is_open[0])):
            return mva_residual_life(net, N, keep)
    net = single_class(net, "mva")
    if np.any(net.is_load_dependent):
        from .mva_ld_general import mva_ld_general

        return mva_ld_general(net, N, keep)
    if net.has_multiserver:
        return mva_load_dependent(net, N, keep)
    return mva_exact(net, N, keep)
