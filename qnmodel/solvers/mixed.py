"""Mixed queueing networks: open and closed classes sharing the stations.

The product-form solution of a mixed network ([BCMP75]; [LZGS] sec. 7.4.3) splits in
two steps:

1. The open classes take a fixed share of every queueing station, their utilisation
   U^o_k = sum_{c open} lambda_c D_ck (it does not depend on the closed classes). The
   closed classes see each single-server station slowed down by that share: they are
   solved as a closed network with inflated demands D*_ck = D_ck / (1 - U^o_k) (delay
   stations unchanged), by exact MVA ([RL80]) or, when its lattice is too large, by
   approximate MVA (Schweitzer-Bard).
2. An open-class job arriving at station k finds the closed jobs Q^cl_k and the open
   ones; its residence time is

       R_ck = D_ck (1 + Q^cl_k) / (1 - U^o_k)      (delay station: R_ck = D_ck),

   and Q_ck = lambda_c R_ck (Little).

Both steps are exact for product-form networks of single-server (FCFS with
class-independent service times, PS, LCFS-PR) and delay stations; with approximate MVA
in step 1 the closed-class error of AMVA (a few per cent) carries into step 2.
Multi-server and load-dependent stations are refused here: the decomposition above is
exact only for load-independent stations.

References
----------
.. [BCMP75] F. Baskett, K. M. Chandy, R. R. Muntz, F. G. Palacios, "Open, closed and
   mixed networks of queues with different classes of customers", J. ACM 22(2):248-260,
   1975, doi:10.1145/321879.321887.
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, sec. 7.4.3
   (mixed models, algorithm of Table 7.6).
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed multichain queuing
   networks", J. ACM 27(2):313-322, 1980, doi:10.1145/322186.322195.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._validate import as_choice, as_quantity
from ..errors import InvalidModelError, InvalidTypeError, UnstableModelError
from ..results_open import OpenMultiClassResult
from ._open_model import Model, _class_rates, network_model
from .amva import amva
from .mva_multiclass import DEFAULT_MAX_MEMORY, lattice_memory_bytes, mva_multiclass
from .open import station_capacity

__all__ = ["mixed_network", "mixed_solve", "MIXED_METHODS"]

MIXED_METHODS = ("auto", "exact", "amva")


def mixed_solve(
    model: Model, lam: np.ndarray, method: str = "auto", max_memory: Any = DEFAULT_MAX_MEMORY
) -> OpenMultiClassResult:
    """Solve a compiled mixed model (see :func:`mixed_network`) at open rates ``lam`` (C,)."""
    as_choice(method, "method", MIXED_METHODS)
    max_memory = as_quantity(max_memory, "max_memory", "size", positive=True)
    D, delay, names = model.D, model.delay, model.names
    C, K = D.shape
    closed = ~model.is_open
    if not (closed & (model.population > 0)).any():
        raise InvalidModelError(
            "a mixed network needs a closed class with population > 0; this one has "
            f"populations {model.population.tolist()} for classes {list(model.class_names)}: "
            "solve it with qnmodel.open_network"
        )
    for k in range(K):
        if delay[k]:
            continue
        if model.multipliers[k] is not None or model.servers[k] > 1:
            what = (
                "rate multipliers"
                if model.multipliers[k] is not None
                else f"{int(model.servers[k])} servers"
            )
            raise InvalidModelError(
                f"station {names[k]!r} has {what}: the mixed solver handles single-server "
                "queueing and delay stations (exact decomposition); solve open classes "
                "alone with qnmodel.open_network or closed ones with qnmodel.mva_multiclass"
            )
    cap = station_capacity(delay, model.servers, model.multipliers)
    lam = np.where(model.is_open, lam, 0.0)
    Uo = np.where(delay, 0.0, lam @ D)  # open utilisation of each queueing station
    if (Uo >= 1.0).any():
        k = int(np.argmax(Uo))
        raise UnstableModelError(
            f"station {names[k]!r} is saturated by the open classes: utilisation "
            f"U = {Uo[k]:.6g} >= 1 under arrival rates "
            + ", ".join(
                f"{n}={x:.6g}/s"
                for n, x, o in zip(model.class_names, lam, model.is_open, strict=True)
                if o
            )
        )
    slow = np.where(delay, 1.0, 1.0 / (1.0 - Uo))
    cl = np.flatnonzero(closed)
    Dcl = D[cl] * slow[None, :]
    Ncl = model.population[cl]
    Zcl = model.think_time[cl]
    kinds = ["delay" if d else "queue" for d in delay]
    if method == "auto":
        method = "exact" if lattice_memory_bytes(Ncl, K) <= int(max_memory) else "amva"
    if method == "exact":
        res = mva_multiclass(Dcl, Ncl, Zcl, kinds=kinds, names=names, max_memory=max_memory)
    else:
        res = amva(Dcl, Ncl, Zcl, kinds=kinds, names=names)
    Qcl = res.queue_length.sum(axis=0)  # closed jobs at each station
    X = np.array(lam, dtype=np.float64)
    X[cl] = res.throughput
    Rk = np.empty((C, K))
    Rk[cl] = res.residence_time
    op = np.flatnonzero(model.is_open)
    Rk[op] = np.where(delay[None, :], D[op], D[op] * ((1.0 + Qcl) * slow)[None, :])
    Q = X[:, None] * Rk
    U = X[:, None] * D / cap[None, :]
    a_open = lam @ D
    with np.errstate(divide="ignore", over="ignore"):
        s = np.where(~delay & (a_open > 0), cap / np.where(a_open > 0, a_open, 1.0), np.inf)
    kb = (
        int(np.argmin(s)) if np.isfinite(s).any() else int(np.argmax(np.where(delay, -1, U.sum(0))))
    )
    return OpenMultiClassResult(
        method=f"mixed.{'mva' if method == 'exact' else 'amva'}",
        class_names=model.class_names,
        is_open=model.is_open.copy(),
        arrival_rate=lam,
        population=np.where(closed, model.population, 0),
        think_time=np.where(closed, model.think_time, 0.0),
        throughput=X,
        response_time=Rk.sum(axis=1),
        queue_length=Q,
        utilization=U,
        residence_time=Rk,
        station_names=names,
        demands=D,
        is_delay=delay,
        capacity=cap,
        saturation_scale=float(s[kb]) if np.isfinite(s).any() else float("inf"),
        bottleneck=names[kb],
    )


def mixed_network(
    net: Any,
    arrival_rate: Any = None,
    *,
    N: Any = None,
    method: str = "auto",
    max_memory: Any = DEFAULT_MAX_MEMORY,
) -> OpenMultiClassResult:
    """Solve a mixed network: open classes (arrival rates) and closed classes (populations).

    Parameters
    ----------
    net : MultiClassNetwork
        Single-server queueing and delay stations; at least one closed class with
        population > 0.
    arrival_rate : mapping, sequence or None
        Open-class rates as in :func:`qnmodel.open_network` (default the network's).
    N : mapping, sequence or None
        Closed-class populations (``MultiClassNetwork.population_vector``); default the
        network's.
    method : {"auto", "exact", "amva"}
        How the closed classes are solved: exact multi-class MVA, Schweitzer-Bard AMVA
        (approximate), or exact unless the lattice exceeds ``max_memory`` (default).
    max_memory : int or str
        Lattice memory allowed for exact MVA (see :func:`qnmodel.mva_multiclass`).

    Returns
    -------
    OpenMultiClassResult
        Per class X_c (lambda_c for open classes), R_c, and U_ck, Q_ck, R_ck; ``method``
        is ``"mixed.mva"`` or ``"mixed.amva"``.

    Raises
    ------
    InvalidModelError
        No closed class with jobs; a multi-server or load-dependent station.
    UnstableModelError
        The open classes alone saturate a station (named, with its utilisation).

    Notes
    -----
    See the module docstring ([LZGS] sec. 7.4.3). With zero open load the result
    equals closed multi-class MVA.
    """
    model = network_model(net)
    if model.single:
        raise InvalidModelError(
            "a single-class Network has no open and closed classes together: use "
            "qnmodel.mva (closed) or qnmodel.open_network (open)"
        )
    if N is not None:
        if not hasattr(net, "population_vector"):
            raise InvalidTypeError("N needs a MultiClassNetwork (its population_vector)")
        model = dataclasses.replace(model, population=net.population_vector(N))
    return mixed_solve(model, _class_rates(model, arrival_rate, net), method, max_memory)
