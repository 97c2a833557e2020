"""Approximate mean value analysis: Schweitzer-Bard and Linearizer.

Both replace the exact recursion's Q_k(N - e_c) by an estimate built from
Q(N) itself, so the cost no longer grows with the population lattice:

* **Schweitzer-Bard** ([Sch79], [Bar79]): a class-c arrival sees
  Q_k(N - e_c) ~ sum_j Q_jk(N) - Q_ck(N) / N_c (it removes its own share).
* **Linearizer** ([CN82]): the fractions F_jk(N) = Q_jk(N) / N_j are assumed
  to change linearly, F_jk(N - e_c) = F_jk(N) + delta_cjk; the deltas are
  estimated by solving the Schweitzer-like *core* at N and at every N - e_c,
  and the whole is repeated until Q(N) stops changing.

Multi-server stations use Seidmann's decomposition
(:func:`~qnmodel.solvers.mva_multiclass.seidmann_split`).

References
----------
.. [Sch79] P. J. Schweitzer, "Approximate analysis of multiclass closed
   networks of queues", Proc. Int. Conf. Stochastic Control and
   Optimization, Amsterdam, 1979.
.. [Bar79] Y. Bard, "Some extensions to multiclass queueing network
   analysis", in *Performance of Computer Systems*, North-Holland, 1979.
.. [CN82] K. M. Chandy, D. Neuse, "Linearizer: a heuristic algorithm for
   queueing network models of computing systems", CACM 25(2):126-134, 1982,
   doi:10.1145/358396.358403.
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984,
   sec. 6.4.2 (single class) and sec. 7.4.2.2 (multiple classes).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._validate import as_choice, as_positive_int
from ..errors import ConvergenceError, ConvergenceWarning, InvalidModelError
from ..model.network import Network, refuse_forkjoin
from ..results.closed import AMVACurveResult, AMVAResult
from . import _kernels
from .mva_multiclass import _fold, _legacy_keywords, _package, _prepare, seidmann_split

__all__ = ["amva", "AMVA_METHODS"]

AMVA_METHODS = ("schweitzer", "linearizer")


def _core_numpy(M, D, Dq, Z, Dlt, Q, tol, max_iter):
    """Mirror of ``qnk_amva_core``: fixed point of the Schweitzer/Linearizer core.

    Q (C, K) is updated in place. Returns X, R, converged, iterations, residual.
    """
    C, K = D.shape
    live = M > 0
    inv = np.where(live, 1.0 / np.where(live, M, 1.0), 0.0)
    W = M[None, :] - np.eye(C)  # (N - e_c)_j
    W = np.where(W > 0, W, 0.0)
    X = np.zeros(C)
    R = np.array(D)
    res = np.inf
    it = 0
    converged = False
    while it < max_iter:
        it += 1
        F = Q * inv[:, None]
        if Dlt is None:
            A = Q.sum(axis=0)[None, :] - F
        else:
            A = np.einsum("cj,cjk->ck", W, F[None, :, :] + Dlt)
        R = Dq * A + D
        R[~live] = D[~live]
        X = np.where(live, M / (Z + R.sum(axis=1)), 0.0)
        Qn = X[:, None] * R
        pos = Qn > 0
        res = float(np.max(np.abs(Qn[pos] - Q[pos]) / Qn[pos])) if pos.any() else 0.0
        Q[...] = Qn
        if res < tol:
            converged = True
            break
    return X, R, converged, it, res


def _core(M, D, Dq, Z, Dlt, Q, tol, max_iter):
    if _kernels.available():
        return _kernels.amva_core(M, D, Dq, Z, Dlt, Q, tol, max_iter)
    return _core_numpy(M, D, Dq, Z, Dlt, Q, tol, max_iter)


def _initial_q(M: np.ndarray, D: np.ndarray) -> np.ndarray:
    """N_c spread evenly over the stations class c visits."""
    visits = D > 0
    n = np.maximum(visits.sum(axis=1), 1)
    return np.ascontiguousarray(visits * (M / n)[:, None], dtype=np.float64)


def _schweitzer(M, D, Dq, Z, tol, max_iter, Q0=None):
    Q = _initial_q(M, D) if Q0 is None else np.ascontiguousarray(Q0, dtype=np.float64)
    return _core(M, D, Dq, Z, None, Q, tol, max_iter)


def _linearizer(N, D, Dq, Z, tol, max_iter):
    """Chandy-Neuse Linearizer ([CN82], fig. 2): outer iterations on the deltas."""
    C, K = D.shape
    M = N.astype(np.float64)
    inner_tol = tol * 0.01
    inner_max = max(1000, 100 * max_iter)
    Dlt = np.zeros((C, C, K))
    Q = _initial_q(M, D)
    sub = [c for c in range(C) if M[c] > 0]
    Qs = {c: _initial_q(M - np.eye(C)[c], D) for c in sub}
    invN = np.where(M > 0, 1.0 / np.where(M > 0, M, 1.0), 0.0)
    prev = None
    res = np.inf
    total = 0
    for outer in range(1, max_iter + 1):
        X, R, ok, it, _ = _core(M, D, Dq, Z, Dlt, Q, inner_tol, inner_max)
        total += it
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
            _, _, ok, it, _ = _core(Mc, D, Dq, Z, Dlt, Qs[c], inner_tol, inner_max)
            total += it
            if not ok:
                return X, R, False, outer, float("inf")
            invc = np.where(Mc > 0, 1.0 / np.where(Mc > 0, Mc, 1.0), 0.0)
            new[c] = np.where(Mc[:, None] > 0, Qs[c] * invc[:, None] - F, 0.0)
        Dlt = new
    return X, R, False, max_iter, res


def amva(
    net: Any = None,
    N: Any = None,
    think_time: Any = 0.0,
    kinds: Any = None,
    servers: Any = None,
    names: Any = None,
    method: str = "schweitzer",
    tol: float = 1e-10,
    max_iter: int = 100_000,
    keep: str = "all",
    errors: str = "raise",
    *,
    demands: Any = None,
    population: Any = None,
) -> AMVAResult | AMVACurveResult:
    """Approximate MVA of a closed single- or multi-class network.

    Parameters
    ----------
    net : Network, MultiClassNetwork or array_like (C, K)
        A single-class :class:`~qnmodel.model.network.Network` (the whole curve
        n = 1..N is returned, like :func:`~qnmodel.solvers.mva.mva`), a closed
        :class:`~qnmodel.model.multiclass.MultiClassNetwork`, or demands D_ck of class c
        at station k, seconds (finite, >= 0).
    N : int, array_like of int (C,) or mapping
        N (an int, with a Network) or jobs per class N_c >= 0 (optional for a
        MultiClassNetwork, whose classes carry it).
    think_time, kinds, servers, names
        As in :func:`~qnmodel.solvers.mva_multiclass.mva_multiclass` (taken from
        the network when one is given). Multi-server stations use Seidmann's
        approximation.
    method : {"schweitzer", "linearizer"}
        Bard-Schweitzer ([Sch79], [Bar79]) or Chandy-Neuse Linearizer ([CN82]).
    tol : float
        Stopping tolerance (> 0) on the relative change of every Q_ck between
        two iterations (outer iterations for Linearizer, whose inner core is
        solved to tol/100).
    max_iter : int
        Iteration limit (>= 1) per population: Schweitzer iterations,
        Linearizer outer iterations.
    keep : {"all", "last"}
        Single class only: the whole curve n = 1..N (default) or only n = N.
    errors : {"raise", "warn"}
        What to do when a point does not converge within ``max_iter``:
        raise :class:`~qnmodel.errors.ConvergenceError` (default; no unconverged
        number is returned), or return it flagged ``converged=False`` with a
        :class:`~qnmodel.errors.ConvergenceWarning`.
    demands, population
        Deprecated names of ``net`` and ``N``.

    Returns
    -------
    AMVACurveResult (single class) or AMVAResult (several classes)
        The fields of :class:`~qnmodel.results.closed.MVAResult` (curve) or
        :class:`~qnmodel.results.closed.MultiClassResult`, plus ``converged``,
        ``iterations`` and ``residual`` (one per population of the curve) and
        ``tol``.

    Raises
    ------
    ConvergenceError
        With ``errors="raise"``, when an iteration does not converge within
        ``max_iter``.
    InvalidModelError
        Bad shapes or values, naming the argument.

    Notes
    -----
    Schweitzer's estimate is exact at N_c = 1 in a single class and its
    throughput error typically stays within a few percent; Linearizer is
    typically an order of magnitude more accurate at about C times the cost
    ([CN82]; measured on seeded random networks in
    ``tests/solvers/test_amva.py`` and ``docs/explanation/performance.md``).
    Cost per iteration O(C K) (Schweitzer), O(C^2 K) per core iteration and
    C + 1 cores per outer iteration (Linearizer). Along a single-class curve
    each Schweitzer point starts from the previous point's queue lengths scaled
    by n / (n - 1), so later points need few iterations.
    """
    net, N = _legacy_keywords(net, N, demands, population, "amva")
    refuse_forkjoin(net, "amva")
    model = _prepare(net, N, think_time, kinds, servers, names, solver="amva")
    as_choice(method, "method", AMVA_METHODS)
    as_choice(keep, "keep", ("all", "last"))
    as_choice(errors, "errors", ("raise", "warn"))
    if isinstance(tol, bool) or not isinstance(tol, int | float) or not (0.0 < tol < 1.0):
        raise InvalidModelError(f"tol must be a number in (0, 1), got {tol!r}")
    tol = float(tol)
    max_iter = as_positive_int(max_iter, "max_iter")
    C, K = model.D.shape
    D2, delay2, owner = seidmann_split(model.D, model.delay, model.servers)
    Dq2 = np.where(delay2[None, :], 0.0, D2)
    label = f"amva.{method}" + ("+seidmann" if owner.size else "")
    if isinstance(net, Network):
        return _single_class_curve(
            net, model, D2, Dq2, owner, method, label, tol, max_iter, keep, errors
        )
    X, R2, ok, it, res = _solve_point(model.N, D2, Dq2, model.Z, method, tol, max_iter)
    _on_failure(ok, errors, method, res, tol, it, model.N)
    dead = model.N == 0
    if dead.any():  # an added class-c job would see the queues of N (arrival theorem)
        R2[dead] = D2[dead] + Dq2[dead] * (X[:, None] * R2)[~dead].sum(axis=0)[None, :]
    Rk = _fold(R2, K, owner)
    return _package(
        label, model, X, Rk, cls=AMVAResult, converged=ok, iterations=it, residual=res, tol=tol
    )


def _solve_point(N, D2, Dq2, Z, method, tol, max_iter, Q0=None):
    if method == "schweitzer":
        return _schweitzer(N.astype(np.float64), D2, Dq2, Z, tol, max_iter, Q0)
    return _linearizer(N, D2, Dq2, Z, tol, max_iter)


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


def _single_class_curve(net, model, D2, Dq2, owner, method, label, tol, max_iter, keep, errors):
    """AMVA at n = 1..N (or only N) of a single-class network, warm-started along n."""
    Ntot = int(model.N[0])
    ns = np.arange(1, Ntot + 1) if keep == "all" else np.array([Ntot])
    P, K = ns.size, model.D.shape[1]
    X = np.empty(P)
    Rk = np.empty((P, K))
    conv = np.empty(P, dtype=bool)
    iters = np.empty(P, dtype=np.int64)
    resid = np.empty(P)
    Q = None
    for i, n in enumerate(ns):
        Q0 = None if Q is None or method != "schweitzer" else Q * (n / (n - 1.0))
        x, R2, ok, it, res = _solve_point(
            np.array([n], dtype=np.int64), D2, Dq2, model.Z, method, tol, max_iter, Q0
        )
        _on_failure(ok, errors, method, res, tol, it, [n])
        Q = x[:, None] * R2
        X[i] = x[0]
        Rk[i] = _fold(R2, K, owner)[0]
        conv[i], iters[i], resid[i] = ok, it, res
    m = np.where(model.delay, 1.0, model.servers.astype(np.float64))
    return AMVACurveResult(
        method=label,
        n=ns,
        throughput=X,
        response_time=Rk.sum(axis=1),
        queue_length=X[:, None] * Rk,
        utilization=X[:, None] * model.D[0][None, :] / m[None, :],
        residence_time=Rk,
        station_names=net.names,
        think_time=float(net.think_time),
        demands=np.array(net.demands),
        is_delay=np.array(net.is_delay),
        converged=conv,
        iterations=iters,
        residual=resid,
        tol=tol,
    )
