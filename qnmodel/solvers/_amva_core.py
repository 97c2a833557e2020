"""The pieces of approximate MVA that :mod:`.amva` and :mod:`.amva_priority` share: the
population terms and closing step of the Schweitzer/Linearizer fixed point, Linearizer's outer
loop, the Seidmann split of multi-server stations, and the per-class waiting costs of the FCFS
heuristics (:func:`_fcfs_weights`). Formulas and references: :func:`qnmodel.solvers.amva.amva`.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import ConvergenceError, ConvergenceWarning
from ..model.station import PRIORITY_DISCIPLINES
from .mva_ld_general import ld_seidmann_split
from .mva_multiclass import seidmann_split
from .mva_residual import residual_factors


def _population_terms(M):
    """``(live, inv, W)`` of the population vector N (C,): the classes with N_c > 0,
    1 / N_c (0 for empty classes) and W_cj = (N - e_c)_j clipped at 0."""
    live = M > 0
    inv = np.where(live, 1.0 / np.where(live, M, 1.0), 0.0)
    W = M[None, :] - np.eye(M.size)  # (N - e_c)_j
    return live, inv, np.where(W > 0, W, 0.0)


def _close_step(R, D, live, M, Z, Q):
    """The step shared by every fixed point here, once the residence times R_ck of an
    iteration are known: R_ck = D_ck for empty classes, X_c = N_c / (Z_c + R_c), the new
    Q_ck = X_c R_ck written into Q in place. Returns X and the residual
    max_ck |Q_new - Q_old| / Q_new over Q_new > 0 (0 if none is)."""
    R[~live] = D[~live]
    X = np.where(live, M / (Z + R.sum(axis=1)), 0.0)
    Qn = X[:, None] * R
    pos = Qn > 0
    res = float(np.max(np.abs(Qn[pos] - Q[pos]) / Qn[pos])) if pos.any() else 0.0
    Q[...] = Qn
    return X, res


def _initial_q(M: np.ndarray, D: np.ndarray) -> np.ndarray:
    """N_c spread evenly over the stations class c visits."""
    visits = D > 0
    n = np.maximum(visits.sum(axis=1), 1)
    return np.ascontiguousarray(visits * (M / n)[:, None], dtype=np.float64)


def _linearizer_loop(core, M, D, tol, max_iter):
    """Chandy-Neuse Linearizer ([CN82], fig. 2): outer iterations on the deltas.

    ``core(M, Dlt, Q, tol, max_iter)`` is the fixed point of one population vector M with
    the deltas Dlt, updating Q in place (:func:`_core` or :func:`_fcfs_core`). Returns X, R,
    converged, outer iterations, residual.
    """
    C, K = D.shape
    inner_tol, inner_max = tol * 0.01, max(1000, 100 * max_iter)
    Dlt = np.zeros((C, C, K))
    Q = _initial_q(M, D)
    sub = [c for c in range(C) if M[c] > 0]
    Qs = {c: _initial_q(M - np.eye(C)[c], D) for c in sub}
    invN = np.where(M > 0, 1.0 / np.where(M > 0, M, 1.0), 0.0)
    prev, res = None, np.inf
    for outer in range(1, max_iter + 1):
        X, R, ok, _, _ = core(M, Dlt, Q, inner_tol, inner_max)
        if not ok:
            return X, R, False, outer, float("inf")
        if prev is not None:
            pos = Q > 0
            res = float(np.max(np.abs(Q[pos] - prev[pos]) / Q[pos])) if pos.any() else 0.0
            if res < tol:
                return X, R, True, outer, res
        prev = Q.copy()
        F = Q * invN[:, None]
        new = np.zeros_like(Dlt)  # every core of this pass uses the same deltas
        for c in sub:
            Mc = M - np.eye(C)[c]
            _, _, ok, _, _ = core(Mc, Dlt, Qs[c], inner_tol, inner_max)
            if not ok:
                return X, R, False, outer, float("inf")
            invc = np.where(Mc > 0, 1.0 / np.where(Mc > 0, Mc, 1.0), 0.0)
            new[c] = np.where(Mc[:, None] > 0, Qs[c] * invc[:, None] - F, 0.0)
        Dlt = new
    return X, R, False, max_iter, res


def _split(model):
    """Seidmann's decomposition of multi-server stations and its generalisation to rate
    curves: (D2 (C, K + L), delay2 (K + L,), owner (L,))."""
    if any(r is not None for r in model.rates):
        rates = tuple(
            r if r is not None else (np.arange(1.0, model.servers[k] + 1.0)
                                     if model.servers[k] > 1 and not model.delay[k] else None)
            for k, r in enumerate(model.rates)
        )  # fmt: skip
        return ld_seidmann_split(model.D, model.delay, rates)
    return seidmann_split(model.D, model.delay, model.servers)


def visits_and_times(cm, D2, owner):
    """Visits V (C, K2) and service times per visit S = D2 / V of the split model (a
    Seidmann column keeps its station's visits)."""
    K = cm.D.shape[1]
    V = np.zeros(D2.shape)
    V[:, :K] = cm.V
    V[:, K:] = cm.V[:, owner]
    return V, np.divide(D2, V, out=np.zeros_like(D2), where=V > 0)


def _class_dependent(cm) -> set[str]:
    """The stations where a waiting job costs an arrival its own service time: FCFS stations
    whose classes' service times differ, and priority stations (at one level, FCFS) where
    they do."""
    dep = set(cm.features.get("fcfs_class_dependent", ()))
    for k in range(len(cm.station_names)):
        s = cm.S[cm.D[:, k] > 0, k]
        if cm.discipline[k] in PRIORITY_DISCIPLINES and not np.allclose(s, s[0], rtol=1e-12,
                                                                         atol=0.0):  # fmt: skip
            dep.add(cm.station_names[k])
    return dep


def _fcfs_weights(net, model, D2, owner, always=False):
    """(V, G, E) of the FCFS heuristics, or None when no station needs them (unless
    ``always``).

    G[c, r, k]: the time a waiting class-r job at station k costs a class-c arrival, per
    its visit: S_rk at FCFS stations whose classes' service times differ (and priority
    stations where they do), S_ck elsewhere (the product-form form R_ck = D_ck (1 + sum_r
    Q_rk)). E[r, k]: what a class-r job found in service costs beyond S_rk, S_rk (c_rk^2 -
    1) / 2, at single-server FCFS stations with non-exponential service (the residual-life
    correction, :mod:`.mva_residual`); None when no station has one, and always None with
    ``always`` (the priority MVA, which takes the residual life itself)."""
    cm = net.compiled
    dep = _class_dependent(cm)
    if not dep and not always and not cm.uses("non_exponential"):
        return None
    V, S = visits_and_times(cm, D2, owner)
    C, K2 = D2.shape
    G = np.broadcast_to(S[:, None, :], (C, C, K2)).copy()  # S_ck: own time (product form)
    for k, name in enumerate(cm.station_names):
        if name in dep:
            G[:, :, k] = S[None, :, k]  # S_rk: the waiting job's own service time
    E = None
    if cm.uses("non_exponential") and not always:
        E = np.zeros((C, K2))
        K = len(cm.station_names)
        E[:, :K] = S[:, :K] * residual_factors(net, "amva")
    return V, G, E


def _on_failure(ok, errors, method, res, tol, it, N) -> None:
    if ok:
        return
    msg = (
        f"amva(method={method!r}) did not converge at N={np.asarray(N).tolist()}: residual "
        f"{res:.3g} > tol={tol:g} after {it} iterations; raise max_iter or tol"
    )
    if errors == "raise":
        raise ConvergenceError(msg)
    warnings.warn(msg, ConvergenceWarning, stacklevel=3)
