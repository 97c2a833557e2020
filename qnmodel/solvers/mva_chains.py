"""Exact MVA of closed networks with class switching, by aggregation into chains.

Classes that switch into each other form a chain (:func:`qnmodel.model.routing.
visits_closed`); the product form of a network with class switching is that of the network
of its chains ([RL80] sec. 5; [BGMT] sec. 7.3.6): chain q has population
N*_q = sum_{c in q} N_c and demand D*_qk = sum_{c in q} D_ck, with the visit ratios of all
classes of a chain normalised to one reference station (so that D_ck are per chain cycle).
The chain network is solved exactly (:func:`qnmodel.solvers.mva_lattice_ld.
mva_multiclass_ld_exact`, multi-server and load-dependent stations included), then each
class gets its share:

    X_c = X*_q,   R_ck = D_ck F_qk,   F_qk = R*_qk / D*_qk,   Q_ck = X_c R_ck,

F_qk the stretch a chain-q job sees at station k -- 1 + Q_k(N* - e_q) at a single-server
queue, 1 at a delay, sum_j (j / r_k(j)) p_k(j-1 | N* - e_q) at a load-dependent station --
the same for every class of the chain by the arrival theorem. Summing over a chain's
classes gives back the chain's R*_qk and Q*_qk. Octave's ``qncmmva(N, S, P, r, m)`` does
the same with single-server and delay stations only (``__qncmmva_cs``).

References
----------
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed multichain queuing
   networks", J. ACM 27(2):313-322, 1980, doi:10.1145/322186.322195.
.. [BGMT] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and Markov
   Chains*, 2nd ed., Wiley 2006, sec. 7.3.6 (class switching, chains).
.. [Sch82] H. Schwetman, "Implementing the mean value algorithm for the solution of
   queueing network models", Purdue CSD-TR-355, 1982, fig. 9 (a network with class
   switching).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_server_counts
from ..errors import InvalidModelError, InvalidTypeError
from ..results.network import ChainMVAResult
from ._netargs import class_arrays
from .mva_lattice_ld import _fcfs_check, mva_multiclass_ld_exact

__all__ = ["mva_chains"]


def _chain_map(chains: Any, C: int) -> tuple[np.ndarray, int]:
    try:
        ch = np.asarray(chains)
    except (TypeError, ValueError):  # pragma: no cover - asarray takes any sequence
        ch = None
    if ch is None or ch.ndim != 1 or ch.dtype.kind not in "iu":
        raise InvalidTypeError(
            f"chains must be a sequence of {C} integers (the chain of each class, -1 for "
            f"none), got {chains!r}"
        )
    if ch.size != C:
        raise InvalidModelError(
            f"chains has {ch.size} entries but demands has {C} rows (classes): "
            "give the chain of each class"
        )
    if np.any(ch < -1):
        c = int(np.flatnonzero(ch < -1)[0])
        raise InvalidModelError(f"chains[{c}] must be a chain index >= 0 or -1, got {ch[c]}")
    ids = np.unique(ch[ch >= 0])
    dense = np.full(C, -1, dtype=np.int64)
    for q, v in enumerate(ids):
        dense[ch == v] = q
    return dense, ids.size


def mva_chains(
    demands: Any,
    population: Any,
    chains: Any,
    delay: Any = None,
    servers: Any = None,
    rates: Any = None,
    visits: Any = None,
    max_memory: Any = None,
) -> ChainMVAResult:
    """Exact MVA of a closed multi-class network with class switching (module docstring).

    Parameters
    ----------
    demands : array_like (C, K)
        D_ck = V_ck S_ck, seconds per cycle of the class's chain (visit ratios of a chain
        normalised to one reference station, as :func:`~qnmodel.model.routing.
        visits_closed` gives them); with ``visits``, service times per visit S_ck.
    population : array_like of int (C,)
        N_c >= 0; only the sums per chain matter.
    chains : array_like of int (C,)
        Chain of each class (the ``chains`` of ``visits_closed``); -1 for a class no job
        stays in (it must have N_c = 0).
    delay, servers, rates, max_memory
        As in :func:`~qnmodel.solvers.mva_lattice_ld.mva_multiclass_ld_exact`.
    visits : array_like (C, K), optional
        V_ck; then D = V S and multi-server stations need class-independent S_ck.

    Returns
    -------
    ChainMVAResult
        Per class: X_c (its chain's cycles per second), R_ck, Q_ck, U_ck = X_c D_ck / c_k;
        per chain: population and throughput. ``method="mva.chains"``.

    Raises
    ------
    InvalidModelError
        Population in a class without a chain; the errors of the chain solver.
    """
    D, N = class_arrays(demands, population, visits)
    C, K = D.shape
    ch, nq = _chain_map(chains, C)
    stray = (ch < 0) & (N > 0)
    if stray.any():
        c = int(np.flatnonzero(stray)[0])
        raise InvalidModelError(
            f"class {c} has N = {int(N[c])} jobs but belongs to no chain (its routing is "
            "transient: its jobs end in another class for good); give the jobs to a class "
            "of the chain they end in"
        )
    if nq == 0:
        raise InvalidModelError("no class belongs to a chain: the network has no jobs to solve")
    if visits is not None:
        _fcfs_check(demands, visits, as_server_counts(servers, "servers", K))
    Dstar = np.zeros((nq, K))
    Nstar = np.zeros(nq, dtype=np.int64)
    for q in range(nq):
        Dstar[q] = D[ch == q].sum(axis=0)
        Nstar[q] = N[ch == q].sum()
    res = mva_multiclass_ld_exact(
        Dstar, Nstar, 0.0, delay=delay, servers=servers, rates=rates, max_memory=max_memory
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        F = np.where(Dstar > 0, res.residence_time / Dstar, 0.0)
    inq = ch >= 0
    Xc = np.where(inq, res.throughput[np.maximum(ch, 0)], 0.0)
    R = np.where(inq[:, None], D * F[np.maximum(ch, 0)], 0.0)
    return ChainMVAResult(
        method="mva.chains",
        population=N,
        throughput=Xc,
        response_time=R.sum(axis=1),
        queue_length=Xc[:, None] * R,
        utilization=Xc[:, None] * D / res.peak_rate[None, :],
        residence_time=R,
        station_names=res.station_names,
        think_time=np.zeros(C),
        demands=D,
        servers=res.servers,
        is_delay=res.is_delay,
        peak_rate=res.peak_rate,
        idle_probability=res.idle_probability,
        chains=ch,
        chain_population=Nstar,
        chain_throughput=res.throughput,
    )
