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
(:func:`~qnmodel.solvers.mva_multiclass.seidmann_split`), load-dependent ones its
generalisation; FCFS stations whose classes have different service times charge an arrival
each waiting job's own service time ([Rei79]), and single-server FCFS stations whose service
is not exponential charge it the residual life S_rk (1 + c_rk^2) / 2 of the job found in
service ([Rei79], [Bar79]; :mod:`qnmodel.solvers.mva_residual`).

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
.. [Rei79] M. Reiser, "A queueing network analysis of computer communication networks
   with window flow control", IEEE Trans. Commun. 27(8):1199-1209, 1979 (the FCFS
   heuristic: an arrival waits the service time of each job found ahead, per its class).
.. [SSS87] A. Seidmann, P. J. Schweitzer, S. Shalev-Oren, Large Scale Systems 12:91-107,
   1987 (a multi-server station as a single server of demand D/m and a delay).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_choice, as_positive_int
from ..errors import InvalidModelError
from ..model import Network
from ..results.closed import AMVAResult
from . import _kernels
from ._amva_core import (
    _class_dependent,
    _close_step,
    _fcfs_weights,
    _initial_q,
    _linearizer_loop,
    _on_failure,
    _population_terms,
    _split,
)
from ._closed import closed_model, package
from .mva_multiclass import _fold
from .mva_residual import clamp_to_capacity

__all__ = ["amva", "AMVA_METHODS", "solve_closed_amva"]

AMVA_METHODS = ("schweitzer", "linearizer")


def _core_numpy(M, D, Dq, Z, Dlt, Q, tol, max_iter):
    """Mirror of ``qnk_amva_core``: fixed point of the Schweitzer/Linearizer core.

    Q (C, K) is updated in place. Returns X, R, converged, iterations, residual.
    """
    C, K = D.shape
    live, inv, W = _population_terms(M)
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
        X, res = _close_step(R, D, live, M, Z, Q)
        if res < tol:
            converged = True
            break
    return X, R, converged, it, res


def _core(M, D, Dq, Z, Dlt, Q, tol, max_iter):
    if _kernels.available():
        return _kernels.amva_core(M, D, Dq, Z, Dlt, Q, tol, max_iter)
    return _core_numpy(M, D, Dq, Z, Dlt, Q, tol, max_iter)


def _schweitzer(M, D, Dq, Z, tol, max_iter, Q0=None):
    Q = _initial_q(M, D) if Q0 is None else np.ascontiguousarray(Q0, dtype=np.float64)
    return _core(M, D, Dq, Z, None, Q, tol, max_iter)


def _linearizer(N, D, Dq, Z, tol, max_iter):
    """The Linearizer ([CN82]) over the Schweitzer core :func:`_core`."""

    def core(M, Dlt, Q, tol, max_iter):
        return _core(M, D, Dq, Z, Dlt, Q, tol, max_iter)

    return _linearizer_loop(core, N.astype(np.float64), D, tol, max_iter)


def amva(
    net: Network,
    N: Any = None,
    *,
    method: str = "schweitzer",
    tol: float = 1e-10,
    max_iter: int = 100_000,
    keep: str = "all",
    errors: str = "raise",
) -> AMVAResult:
    """Approximate MVA of a closed network: Schweitzer-Bard or Linearizer.

    Parameters
    ----------
    net : Network
        Closed classes (a network without classes is one class, solved along its whole
        curve n = 1..N like :func:`~qnmodel.solvers.mva.mva`). Takes, approximately:
        multi-server stations (Seidmann's decomposition, [SSS87]), load-dependent
        stations (its generalisation, :func:`~qnmodel.solvers.mva_ld_general.ld_seidmann_split`)
        and FCFS stations whose classes have different service times (a waiting job of
        class r costs an arrival S_rk, [LZGS] sec. 7.4.2.2; [Rei79]); single-server FCFS
        stations with non-exponential service, SCV c_rk^2 >= 0 (the job found in service
        costs its residual life S_rk (1 + c_rk^2) / 2: R_ck = D_ck + V_ck sum_r (S_rk
        Q_rk(N - e_c) + S_rk U_rk(N - e_c) (c_rk^2 - 1) / 2), label ``"+residual-life"``;
        :mod:`qnmodel.solvers.mva_residual`; a multi-server one is refused); stations with
        static priorities (``"HOL"``, ``"PRIO-PR"``) where the classes have several levels,
        by the priority MVA (:mod:`qnmodel.solvers.amva_priority`: the shadow server and
        Bryant-Krzesinski-Lakshmi-Chandy's forms; label ``"+priority (approximate:
        priority MVA (...))"``). At one level a priority station is FCFS.
    N : int, array_like of int (C,) or mapping, optional
        N (an int, for a network without classes) or jobs per class N_c >= 0; default the
        classes' own populations.
    method : {"schweitzer", "linearizer"}
        Bard-Schweitzer ([Sch79], [Bar79]) or Chandy-Neuse Linearizer ([CN82]).
    tol : float
        Stopping tolerance (> 0) on the relative change of every Q_ck between two
        iterations (outer iterations for Linearizer, whose inner core is solved to tol/100).
    max_iter : int
        Iteration limit (>= 1) per population: Schweitzer iterations, Linearizer outer
        iterations.
    keep : {"all", "last"}
        Network without classes: the whole curve n = 1..N (default) or only n = N.
    errors : {"raise", "warn"}
        What to do when a point does not converge within ``max_iter``: raise
        :class:`~qnmodel.errors.ConvergenceError` (default; no unconverged number is
        returned), or return it flagged ``converged=False`` with a
        :class:`~qnmodel.errors.ConvergenceWarning`.

    Returns
    -------
    AMVAResult
        Rows are the classes (or, without classes, the populations n); ``method`` names the
        algorithm and every approximation beyond it, e.g. ``"amva.schweitzer+seidmann"``;
        ``converged``, ``iterations`` and ``residual`` per row, and ``tol``.

    Raises
    ------
    ConvergenceError
        With ``errors="raise"``, when an iteration does not converge within ``max_iter``.
    InvalidModelError
        A feature amva does not take (:mod:`qnmodel.solvers.support`), bad arguments.

    Notes
    -----
    Schweitzer's estimate is exact at N_c = 1 in a single class and its throughput error
    typically stays within a few percent; Linearizer is typically an order of magnitude
    more accurate at about C times the cost ([CN82]; measured on seeded random networks in
    ``tests/solvers/test_amva.py`` and ``docs/explanation/performance.md``). Cost per
    iteration O(C K) (Schweitzer), O(C^2 K) per core iteration and C + 1 cores per outer
    iteration (Linearizer); O(C^2 K) per iteration with class-dependent FCFS service.
    Along a single-class curve each Schweitzer point starts from the previous point's
    queue lengths scaled by n / (n - 1), so later points need few iterations.

    The FCFS class-dependent heuristic (label ``"+fcfs"``) measured against
    :func:`qnmodel.simulate` (2 classes, 2 FCFS stations, N = (3, 2), service times 2/8 ms
    and 10/4 ms; ``tests/solvers/test_support.py``): Schweitzer X within 1.9 %, R within
    12.3 %; Linearizer X within 1.5 %, R within 9.5 %. At N = (10, 10) on the same stations:
    X within 5.3 % / 3.0 %, R within 12.4 % / 6.6 %.

    The residual-life correction (label ``"+residual-life"``), measured against
    :func:`qnmodel.simulate` (``tests/accuracy/amva_scv.py``, table in
    ``docs/explanation/open-and-mixed.md``; 2-5 FCFS stations, SCV in {0, 0.25, 1, 4, 10}):
    one class, N = 1..30, Schweitzer: X median 5.1 %, worst 16.0 %, R median 5.8 %, worst
    28.0 %; two classes with class-dependent service times (so ``+fcfs`` too), N_c = 1..15:
    Schweitzer X median 2.6 %, worst 27.4 %, R median 2.9 %, worst 56.1 %; Linearizer X
    3.0 % / 27.0 %, R 3.0 % / 50.1 % (ignoring the SCV: X 3.2 % / 20.7 %, R 3.2 % / 31.2 %).
    Below 0.9 utilisation of the busiest station it halves the median error of ignoring the
    SCV (two classes: X 4.0 % against 9.0 %); near saturation it converges to the bound
    1 / D_max only as (c^2 - 1) / (2 n) and is slightly worse (X 2.5 % against 2.1 %). Every
    utilisation is kept <= 1 (:func:`~qnmodel.solvers.mva_residual.clamp_to_capacity`).
    """
    model = closed_model(net, N, "amva")
    as_choice(method, "method", AMVA_METHODS)
    as_choice(keep, "keep", ("all", "last"))
    as_choice(errors, "errors", ("raise", "warn"))
    if isinstance(tol, bool) or not isinstance(tol, int | float) or not (0.0 < tol < 1.0):
        raise InvalidModelError(f"tol must be a number in (0, 1), got {tol!r}")
    tol = float(tol)
    max_iter = as_positive_int(max_iter, "max_iter")
    C, K = model.D.shape
    if "priority" in net.compiled.features:
        from .amva_priority import amva_priority, priority_columns

        cols = priority_columns(net.compiled)
        if cols and model.single:  # one class at one level: only a service law other than
            raise InvalidModelError(  # exponential makes the priority station differ
                "amva cannot solve non-exponential service (SCV != 1) at the priority "
                f"station(s) {[net.compiled.station_names[k] for k in cols]} of a network "
                "without classes: use qnmodel.simulate"
            )
        if cols:
            return amva_priority(net, model, cols, method, tol, max_iter, errors)
    D2, delay2, owner = _split(model)
    fcfs = _fcfs_weights(net, model, D2, owner)
    Dq2 = np.where(delay2[None, :], 0.0, D2)
    label = f"amva.{method}" + ("+seidmann" if owner.size else "")
    if _class_dependent(net.compiled):
        label += "+fcfs"
    if net.compiled.uses("non_exponential"):
        label += "+residual-life"
    label += " (approximate)"
    if model.single:
        return _single_class_curve(model, D2, Dq2, fcfs, owner, method, label, tol, max_iter,
                                   keep, errors)  # fmt: skip
    X, R2, ok, it, res = _solve_point(model.N, D2, Dq2, model.Z, method, tol, max_iter, None,
                                      fcfs)  # fmt: skip
    _on_failure(ok, errors, method, res, tol, it, model.N)
    dead = model.N == 0
    if dead.any():  # an added class-c job would see the queues of N (arrival theorem)
        R2[dead] = D2[dead] + Dq2[dead] * (X[:, None] * R2)[~dead].sum(axis=0)[None, :]
        if fcfs is not None and fcfs[2] is not None:  # and the residual life in service
            V, _, E = fcfs
            R2[dead] += np.where(Dq2[dead] > 0, V[dead] * (X[:, None] * D2 * E).sum(axis=0), 0.0)
    Rk = _fold(R2, K, owner)
    return package(label, model, X, Rk, cls=AMVAResult, converged=np.full(C, ok),
                   iterations=np.full(C, it), residual=np.full(C, res), tol=tol,
                   peak_rate=model.peak_rate())  # fmt: skip


def solve_closed_amva(D, delay, Z, N, method: str = "schweitzer", tol: float = 1e-10,
                      max_iter: int = 100_000):  # fmt: skip
    """X (C,), R_ck (C, K) of closed classes by AMVA, on arrays (load-independent stations):
    the kernel the mixed solver uses for large closed lattices. Raises ConvergenceError."""
    Dq = np.where(np.asarray(delay)[None, :], 0.0, D)
    X, R, ok, it, res = _solve_point(np.asarray(N), D, Dq, np.asarray(Z, dtype=np.float64),
                                     method, tol, max_iter)  # fmt: skip
    _on_failure(ok, "raise", method, res, tol, it, N)
    dead = np.asarray(N) == 0
    if dead.any():
        R[dead] = D[dead] + Dq[dead] * (X[:, None] * R)[~dead].sum(axis=0)[None, :]
    return X, R


def _solve_point(N, D2, Dq2, Z, method, tol, max_iter, Q0=None, fcfs=None):
    if fcfs is not None:
        return _fcfs_point(N.astype(np.float64), D2, Dq2, Z, method, tol, max_iter, Q0, fcfs)
    if method == "schweitzer":
        return _schweitzer(N.astype(np.float64), D2, Dq2, Z, tol, max_iter, Q0)
    return _linearizer(N, D2, Dq2, Z, tol, max_iter)


def _fcfs_core(M, D, Dq, Z, V, G, E, Dlt, Q, tol, max_iter):
    """The Schweitzer/Linearizer core with per-class waiting costs G and residual-life
    terms E (see _fcfs_weights): at queueing stations

        R_ck = D_ck + V_ck sum_r (G_crk Q_rk(N - e_c) + E_rk U_rk(N - e_c)),

    U_rk = X_r D_rk (one server). U_rk(N - e_c) is U_rk(N) (N - e_c)_r / N_r, the
    Schweitzer estimate (also under Linearizer, whose deltas correct Q only)."""
    C, K = D.shape
    live, inv, W = _population_terms(M)
    queue = (Dq > 0) | (D == 0)
    den = Z + D.sum(axis=1)  # the first U estimate: every station without waiting
    X = np.divide(M, den, out=np.zeros(C), where=den > 0)
    R = np.array(D)
    res, it, converged = np.inf, 0, False
    while it < max_iter:
        it += 1
        F = Q * inv[:, None]
        if Dlt is None:  # Q_rk(N - e_c) = Q_rk - delta_rc Q_ck / N_c
            QE = np.broadcast_to(Q[None, :, :], (C, C, K)) - np.eye(C)[:, :, None] * F[:, None, :]
        else:
            QE = W[:, :, None] * (F[None, :, :] + Dlt)
        A = np.einsum("crk,crk->ck", G, QE)
        if E is not None:  # residual life of the job found in service
            A += (W * inv[None, :]) @ (X[:, None] * D * E)
        R = D + np.where(queue, V * A, 0.0)
        if E is not None:  # keep every U_k <= 1 (see clamp_to_capacity)
            clamp_to_capacity(M, Z, Dq, R)
        X, res = _close_step(R, D, live, M, Z, Q)
        if res < tol:
            converged = True
            break
    return X, R, converged, it, res


def _fcfs_point(M, D, Dq, Z, method, tol, max_iter, Q0, fcfs):
    V, G, E = fcfs
    if method == "schweitzer":
        Q = _initial_q(M, D) if Q0 is None else np.array(Q0, dtype=np.float64)
        return _fcfs_core(M, D, Dq, Z, V, G, E, None, Q, tol, max_iter)

    def core(M, Dlt, Q, tol, max_iter):
        return _fcfs_core(M, D, Dq, Z, V, G, E, Dlt, Q, tol, max_iter)

    return _linearizer_loop(core, M, D, tol, max_iter)


def _single_class_curve(model, D2, Dq2, fcfs, owner, method, label, tol, max_iter, keep,
                        errors):  # fmt: skip
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
            np.array([n], dtype=np.int64), D2, Dq2, model.Z, method, tol, max_iter, Q0, fcfs
        )
        _on_failure(ok, errors, method, res, tol, it, [n])
        Q = x[:, None] * R2
        X[i] = x[0]
        Rk[i] = _fold(R2, K, owner)[0]
        conv[i], iters[i], resid[i] = ok, it, res
    peak = model.peak_rate()
    return AMVAResult(
        method=label,
        population=ns,
        throughput=X,
        response_time=Rk.sum(axis=1),
        queue_length=X[:, None] * Rk,
        utilization=X[:, None] * model.D[0][None, :] / peak[None, :],
        residence_time=Rk,
        station_names=model.names,
        think_time=np.full(P, model.Z[0]),
        demands=np.broadcast_to(model.D[0], (P, K)),
        servers=model.servers,
        is_delay=model.delay,
        peak_rate=peak,
        n=ns.astype(np.float64),
        converged=conv,
        iterations=iters,
        residual=resid,
        tol=tol,
    )
