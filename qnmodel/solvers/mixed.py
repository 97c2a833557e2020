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

Multi-server and load-dependent stations (approximate)
------------------------------------------------------
The decomposition above is exact only for load-independent stations. For a station of
capacity c_k (m servers, or the last rate multiplier r_L) the solver removes the open
classes' share from the capacity the closed classes see, and treats the closed load as
background for the open classes, in the spirit of the "shadow server" ([Sev77]) and of
[LZGS] sec. 7.4.3:

1. the closed classes see the station's rate curve capped at the capacity the open
   classes leave, r'(j) = min(r(j), c_k (1 - U^o_k)) with U^o_k = a^o_k / c_k and
   a^o_k = sum_{c open} lambda_c D_ck (for m servers: min(j, m - a^o_k)); they are
   solved by exact load-dependent MVA: the log-space convolution
   (:func:`qnmodel.solvers.mva_ld_general.ld_general_arrays`) for one closed class, the
   load-dependent lattice (:func:`qnmodel.solvers.mva_lattice_ld.mva_multiclass_ld_exact`)
   for several;
2. an open job's residence time at the station is that of the isolated station
   (Erlang C or the birth-death chain, :func:`qnmodel.solvers.open.stretch`) at the total
   offered load a^o_k + sum_{c closed} X_c D_ck:  R_ck = D_ck g_k(a^o_k + a^cl_k).

Single-server stations keep the exact formulas above. With zero open load step 1 is
the exact closed solution. Measured against simulation (``tests/solvers/
test_mixed_ld.py``: one 2-server and one load-dependent station, open utilisation up to
0.5): open-class response times within 5 %, closed-class ones within 8 % (too small:
the cap is optimistic for the closed jobs when the open jobs leave servers idle).
The method is labelled ``"... (approximate)"``.

References
----------
.. [BCMP75] F. Baskett, K. M. Chandy, R. R. Muntz, F. G. Palacios, "Open, closed and
   mixed networks of queues with different classes of customers", J. ACM 22(2):248-260,
   1975, doi:10.1145/321879.321887.
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, sec. 7.4.3
   (mixed models, algorithm of Table 7.6).
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed multichain queuing
   networks", J. ACM 27(2):313-322, 1980, doi:10.1145/322186.322195.
.. [Sev77] K. C. Sevcik, "Priority scheduling disciplines in queueing network models of
   computer systems", Proc. IFIP Congress 77, 565-570, 1977 (the shadow server: a class
   sees a server slowed down by the utilisation another class takes from it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_choice
from .._validate import max_memory as max_memory_bytes
from ..errors import InvalidModelError, InvalidTypeError, UnstableModelError
from ..model import Network
from ..results.open import MixedResult
from ._lattice import _solve_exact, lattice_memory_bytes
from .amva import solve_closed_amva
from .mva_lattice_ld import mva_multiclass_ld_exact
from .mva_ld_general import ld_general_arrays
from .open_stations import station_capacity, stretch
from .support import require

__all__ = ["mixed_network", "MIXED_METHODS"]

MIXED_METHODS = ("auto", "exact", "amva")


def mixed_network(
    net: Network,
    arrival_rate: Any = None,
    *,
    N: Any = None,
    method: str = "auto",
    max_memory: Any = None,
) -> MixedResult:
    """Solve a mixed network: open classes (arrival rates) and closed classes (populations).

    Parameters
    ----------
    net : Network
        Open and closed classes; at least one closed class with population > 0. Queueing
        (single-, multi-server or load-dependent) and delay stations; multi-server and
        load-dependent stations are handled by an approximation (module docstring),
        labelled in ``method``. Stations with static priorities (``"HOL"``, ``"PRIO-PR"``;
        single-server) by the priority MVA (:mod:`qnmodel.solvers.amva_priority`, open
        classes at their arrival rates, closed ones by Schweitzer's estimate), labelled
        ``"mixed.amva+priority (approximate: priority MVA ...)"``.
    arrival_rate : mapping, sequence or None
        Open-class rates as in :func:`qnmodel.open_network` (default the classes' own).
    N : mapping, sequence or None
        Closed-class populations (:meth:`Network.population_vector`); default the classes'.
    method : {"auto", "exact", "amva"}
        How the closed classes are solved: exact multi-class MVA, Schweitzer-Bard AMVA
        (approximate), or exact unless the lattice exceeds ``max_memory`` (default).
    max_memory : int or str, optional
        Lattice memory allowed for exact MVA (see :func:`qnmodel.mva_multiclass`).

    Returns
    -------
    MixedResult
        Per class X_c (lambda_c for open classes), R_c, and U_ck, Q_ck, R_ck; ``method`` is
        ``"mixed.mva"`` (exact), ``"mixed.amva (approximate: ...)"``, or, with multi-server
        or load-dependent stations, ``"mixed.mva_ld (approximate: ...)"``.

    Raises
    ------
    InvalidModelError
        No closed class with jobs, no classes, or a feature mixed_network does not take.
    UnstableModelError
        The open classes alone saturate a station (named, with its utilisation).

    Notes
    -----
    See the module docstring ([LZGS] sec. 7.4.3). With zero open load the result
    equals closed multi-class MVA.
    """
    if not isinstance(net, Network):
        raise InvalidTypeError(f"net must be a Network, got {type(net).__name__}")
    if net.single:
        raise InvalidModelError(
            "a network without classes has no open and closed classes together: use "
            "qnmodel.mva (closed) or qnmodel.open_network (open), or give it classes"
        )
    cm = net.compiled
    approximate = require(cm, "mixed_network")
    as_choice(method, "method", MIXED_METHODS)
    limit = max_memory_bytes(max_memory)
    pop = cm.population_vector(N)
    lam = np.where(cm.is_open, cm.arrival_rate_vector(arrival_rate), 0.0)
    D, delay, names = cm.D, cm.is_delay, cm.station_names
    C, K = D.shape
    closed = ~cm.is_open
    if not (closed & (pop > 0)).any():
        raise InvalidModelError(
            "a mixed network needs a closed class with population > 0; this one has "
            f"populations {pop.tolist()} for classes {list(cm.class_names)}: solve it with "
            "qnmodel.open_network"
        )
    cap = station_capacity(delay, cm.servers, cm.rates)
    a_open = lam @ D
    Uo = np.where(delay, 0.0, a_open / cap)  # open utilisation of each queueing station
    if (Uo >= 1.0).any():
        k = int(np.argmax(Uo))
        raise UnstableModelError(
            f"station {names[k]!r} is saturated by the open classes: utilisation "
            f"U = {Uo[k]:.6g} >= 1 under arrival rates "
            + ", ".join(
                f"{n}={x:.6g}/s"
                for n, x, o in zip(cm.class_names, lam, cm.is_open, strict=True)
                if o
            )  # fmt: skip
        )
    if "priority" in cm.features:  # static priorities: the priority MVA, open and closed
        from .amva_priority import mixed_priority

        if method == "exact":
            raise InvalidModelError(
                "mixed_network(method='exact') cannot solve priority scheduling (stations "
                f"{list(cm.features['priority'])}): no exact solution exists; use "
                "method='auto' (the approximate priority MVA) or qnmodel.simulate"
            )
        label, X, Rk = mixed_priority(net, lam, pop)
    else:
        ld = [not delay[k] and (cm.rates[k] is not None or cm.servers[k] > 1) for k in range(K)]
        slow = np.where(delay, 1.0, 1.0 / (1.0 - Uo))
        cl = np.flatnonzero(closed)
        Dcl = D[cl] * slow[None, :]
        Ncl, Zcl = pop[cl], cm.Z[cl]
        if method == "auto":
            method = "exact" if lattice_memory_bytes(Ncl, K) <= limit else "amva"
        if any(ld):
            label, Xcl, Rcl = _closed_ld(cm, Dcl, Ncl, Zcl, slow, limit)
        elif method == "exact":
            Xcl, Rcl = _solve_exact(Dcl, delay, Zcl, Ncl)
            label = "mixed.mva"
        else:
            Xcl, Rcl = solve_closed_amva(Dcl, delay, Zcl, Ncl)
            label = "mixed.amva (approximate: Schweitzer-Bard AMVA for the closed classes)"
        Qcl = (np.asarray(Xcl)[:, None] * Rcl).sum(axis=0)  # closed jobs at each station
        X = np.array(lam, dtype=np.float64)
        X[cl] = Xcl
        Rk = np.empty((C, K))
        Rk[cl] = Rcl
        op = np.flatnonzero(cm.is_open)
        Rk[op] = np.where(delay[None, :], D[op], D[op] * ((1.0 + Qcl) * slow)[None, :])
        if any(ld):  # open classes at multi-server / LD stations: the total load (docstring)
            ldk = np.flatnonzero(ld)
            a_tot = np.minimum(a_open + np.asarray(Xcl) @ D[cl], cap * (1.0 - 1e-12))
            g = stretch(a_tot[None, :], delay, cm.servers, cm.rates)[0]
            Rk[np.ix_(op, ldk)] = D[np.ix_(op, ldk)] * g[ldk][None, :]
        if approximate and "approximate" not in label:
            label += " (approximate)"
    Q = X[:, None] * Rk
    U = X[:, None] * D / cap[None, :]
    with np.errstate(divide="ignore", over="ignore"):
        s = np.where(~delay & (a_open > 0), cap / np.where(a_open > 0, a_open, 1.0), np.inf)
    kb = (
        int(np.argmin(s)) if np.isfinite(s).any() else int(np.argmax(np.where(delay, -1, U.sum(0))))
    )
    return MixedResult(
        method=label,
        class_names=cm.class_names,
        is_open=np.array(cm.is_open),
        arrival_rate=lam,
        population=np.where(closed, pop, 0),
        think_time=np.where(closed, cm.Z, 0.0),
        throughput=X,
        response_time=Rk.sum(axis=1),
        queue_length=Q,
        utilization=U,
        residence_time=Rk,
        station_names=names,
        demands=np.array(D),
        is_delay=np.array(delay),
        capacity=cap,
        saturation_scale=float(s[kb]) if np.isfinite(s).any() else float("inf"),
        bottleneck=names[kb],
    )


def _closed_ld(cm, Dcl, Ncl, Zcl, slow, limit):
    """Closed classes of a mixed model with multi-server or load-dependent stations, at
    the demands the open load inflated: (label, X (Ccl,), R_ck (Ccl, K))."""
    K = Dcl.shape[1]
    delay = cm.is_delay
    # m servers: the curve 1..min(m, N + 1) (exact for N closed jobs, the last value holding
    # beyond; 10^9 servers need no 7 GiB array), its capacity c = m
    top = int(np.sum(Ncl)) + 1
    rates = tuple(
        None if delay[k]
        else (cm.rates[k] if cm.rates[k] is not None
              else (np.arange(1.0, min(int(cm.servers[k]), top) + 1.0)
                    if cm.servers[k] > 1 else None))
        for k in range(K)
    )  # fmt: skip
    cap = [float(cm.servers[k]) if cm.rates[k] is None else None for k in range(K)]
    # the open classes' share removed from each multi-server / LD station's capacity:
    # r'(j) = min(r(j), c (1 - U^o)) at the original demands (module docstring)
    Dcl = np.array(Dcl)
    new = []
    for k in range(K):
        if rates[k] is None:
            new.append(None)
        else:
            Dcl[:, k] = cm.D[~cm.is_open][:, k]
            c = cap[k] if cap[k] is not None else float(rates[k][-1])
            new.append(np.minimum(rates[k], c / slow[k]))
    label = "mixed.mva_ld (approximate: the open load caps the servers the closed classes see)"
    if Ncl.size == 1:  # one closed class: exact load-dependent MVA of the inflated model
        X, _Q, Rk = ld_general_arrays(Dcl[0], delay, float(Zcl[0]), int(Ncl[0]), new,
                                      keep="last")  # fmt: skip
        return label, X, Rk
    res = mva_multiclass_ld_exact(Dcl, Ncl, Zcl, delay=delay, rates=list(new), max_memory=limit)
    return label, np.array(res.throughput), np.array(res.residence_time)
