"""Approximate MVA of closed networks whose stations serve classes by static priority.

A station with discipline ``"HOL"`` (non-preemptive, head of the line) or ``"PRIO-PR"``
(preemptive resume) serves the waiting job of the most urgent level first (a smaller
``priority`` number), FCFS within a level. No product form holds; the priority MVA of
Bryant, Krzesinski, Lakshmi and Chandy ([BKLC84]) keeps the MVA recursion and replaces the
residence time at a priority station by the mean-value argument behind Cobham's M/G/1
formulas ([Kle76] sec. 3.6-3.7), with what a class-c arrival finds (arrival theorem,
estimated by Schweitzer-Bard or Linearizer from the queues at N, :mod:`qnmodel.solvers.amva`)
in place of Poisson averages. Per visit to station k, with S_j the service time of class j,
c_j^2 its SCV, Q^a_j and U^a_j the queue and utilisation of class j a class-c arrival finds
(Q^a_j(N - e_c), U^a_j = U_j (N - e_c)_j / N_j), r_j = S_j (1 + c_j^2) / 2 the mean residual
service of a job in service, "<=" the classes of c's level or a more urgent one and "<" the
more urgent ones only:

* **shadow server** ([Sev77]): every class-c job at the station is slowed by the more
  urgent classes, which take the fraction sigma_c = sum_{j <} U_j of the server;
* **preemptive resume**: a class-c job waits for the work of its level and the more urgent
  ones found on arrival, then is served, both at the rate the more urgent classes leave::

      R_ck = V_ck (S_ck + sum_{j <=} [S_j (Q^a_j - U^a_j) + U^a_j r_j]) / (1 - sigma_c)

  (the lower levels are invisible to it: Cobham's preemptive formula, [Kle76] eq. 3.65);
* **non-preemptive (HOL)**: a class-c job also waits for the residual service of the job
  in service whatever its level, and is not interrupted once served::

      R_ck = V_ck (S_ck + (sum_{j <=} S_j (Q^a_j - U^a_j) + sum_j U^a_j r_j) / (1 - sigma_c))

  (Cobham's non-preemptive form, [Kle76] eq. 3.31, written for the residual at arrival).

With exponential service (c^2 = 1) these are [BKLC84]'s forms: preemptive
R = V (S_c + sum_{<=} S_j Q^a_j) / (1 - sigma_c); non-preemptive
R = V (S_c + (sum_{<=} S_j Q^a_j + sum_{>} S_j U^a_j) / (1 - sigma_c)). With one level at a
station both reduce to the FCFS heuristic of :mod:`qnmodel.solvers.amva`
(R = D_c + V sum_j S_j Q^a_j), and with one server fed by Poisson streams they are Cobham's
formulas: exactly for HOL; for PRIO-PR exactly with c^2 = 1, while for other laws a
preempted job waiting to resume is counted as a whole fresh service (in the Poisson limit
of many thinking jobs, 8.4 % high on the lowest of three levels at c^2 = 0.25,
``tests/solvers/test_amva_priority.py``). Other stations keep the plain AMVA forms; a multi-server
priority station is split by Seidmann's decomposition into a priority server m times as
fast and a delay.

Mixed networks (:func:`mixed_priority`, called by :func:`qnmodel.mixed_network`): an open
class keeps X_c = lambda_c, its arrivals see the time averages Q(N) and U(N), and
Q_ck = lambda_c R_ck; the closed classes take Schweitzer's estimate. With a closed class
that never comes this is Cobham's M/G/1 exactly.

Error measured against :func:`qnmodel.simulate` on 32 random closed networks (2-3 classes,
1-4 stations, HOL and PRIO-PR, distinct or partly equal levels, N_c = 1..10; reproduce with
``.venv/bin/python tests/accuracy/priority_closed.py 32``): below a utilisation of 0.9 at
every station, per-class X within 1.7 % (median) and 9.1 % (worst) and R within 3.0 % and
14.7 % (HOL, Schweitzer), X within 0.3 % / 5.2 % and R within 1.7 % / 5.5 % (PRIO-PR); a
low-priority class at a saturated station is off by tens of per cent or more (table in
:func:`amva_priority` and ``docs/explanation/open-and-mixed.md``).

References
----------
.. [BKLC84] R. M. Bryant, A. E. Krzesinski, M. S. Lakshmi, K. M. Chandy, "The MVA priority
   approximation", ACM TOCS 2(4):335-359, 1984, doi:10.1145/357401.357406.
.. [Sev77] K. C. Sevcik, "Priority scheduling disciplines in queueing network models of
   computer systems", Proc. IFIP Congress 77, 565-570, 1977.
.. [Kle76] L. Kleinrock, *Queueing Systems, Volume 2: Computer Applications*, Wiley 1976,
   sec. 3.6 (non-preemptive) and 3.7 (preemptive resume).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .._validate import check_fit_scv
from ..errors import InvalidModelError
from ..model.station import PRIORITY_DISCIPLINES
from ..results.closed import AMVAResult
from ._amva_core import (
    _close_step,
    _fcfs_weights,
    _initial_q,
    _linearizer_loop,
    _on_failure,
    _population_terms,
    _split,
    visits_and_times,
)
from ._closed import package
from .mva_multiclass import _fold

__all__ = [
    "amva_priority",
    "mixed_priority",
    "priority_columns",
    "priority_point",
    "refuse_priority_rate_curves",
]

#: column kinds of the split model
QUEUE, HOL, PR = 0, 1, 2


def priority_columns(cm) -> dict[int, str]:
    """{station index: discipline} of the priority stations where the priority MVA differs
    from plain AMVA: the visiting classes have more than one level, or a service law other
    than exponential (c^2 != 1, whose residual the formulas weigh). At the others (one
    level, exponential) a priority station is a FCFS one."""
    out = {}
    for k, d in enumerate(cm.discipline):
        if d in PRIORITY_DISCIPLINES:
            visiting = cm.D[:, k] > 0
            if np.unique(cm.priority[visiting]).size > 1 or np.any(cm.scv[visiting, k] != 1.0):
                out[k] = d
    return out


def amva_priority(net, model, cols, method, tol, max_iter, errors):
    """:func:`qnmodel.amva` of a closed network with priority stations ``cols`` (from
    :func:`priority_columns`): the :class:`~qnmodel.results.closed.AMVAResult`, labelled
    ``"amva.<method>+priority (approximate: priority MVA (...))"``.

    Notes
    -----
    Error against :func:`qnmodel.simulate` (10 replications of 200 s) on 32 random closed
    networks of 2-3 classes and 1-4 single-server stations, N_c = 1..10, HOL or PRIO-PR,
    distinct or partly equal levels, exponential service (``tests/accuracy/priority_closed.py
    32``; the table is in ``docs/explanation/open-and-mixed.md``), median / worst |error| of
    the per-class X and R:

    * max U < 0.9, HOL: X 1.7 / 9.1 %, R 3.0 / 14.7 % (Schweitzer); X 1.5 / 9.0 %,
      R 2.8 / 14.5 % (Linearizer);
    * max U < 0.9, PRIO-PR: X 0.3 / 5.2 %, R 1.7 / 5.5 % (Schweitzer); X 0.2 / 3.0 %,
      R 0.7 / 4.5 % (Linearizer);
    * all cases, HOL: X 2.6 / 125 %, R 6.6 / 57 % (Schweitzer);
    * all cases, PRIO-PR: X 0.8 / 2403 %, R 1.9 / 95 % (Schweitzer).

    The large errors are those of a low-priority class at a saturated station (its
    throughput a few jobs per second, set by the 1 - sigma the urgent classes leave, which
    the urgent classes' own few-per-cent error decides), and of a class that cycles through
    one station without think time (its arrivals are its departures, which the arrival
    theorem does not see). Use :func:`qnmodel.simulate` for the low classes of a saturated
    station.
    """
    cm = net.compiled
    refuse_priority_rate_curves(cm, cols)
    C, K = model.D.shape
    D2, delay2, owner = _split(model)
    K2 = D2.shape[1]
    V2, S2 = visits_and_times(cm, D2, owner)
    _, G, _ = _fcfs_weights(net, model, D2, owner, always=True)
    Dq2 = np.where(delay2[None, :], 0.0, D2)
    kind = np.full(K2, QUEUE)
    for k, d in cols.items():
        kind[k] = HOL if d == "HOL" else PR
    scv2 = np.ones((C, K2))
    scv2[:, :K] = cm.scv
    prio = np.asarray(cm.priority, dtype=np.int64)

    def core(M, Dlt, Q, tol, max_iter):
        return priority_point(M, D2, Dq2, model.Z, V2, S2, G, kind, scv2, prio, Dlt, Q, tol,
                              max_iter)  # fmt: skip

    M = model.N.astype(np.float64)
    if method == "schweitzer":
        X, R2, ok, it, res = core(M, None, _initial_q(M, D2), tol, max_iter)
    else:
        X, R2, ok, it, res = _linearizer_loop(core, M, D2, tol, max_iter)
    _on_failure(ok, errors, method, res, tol, it, model.N)
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(R2))):
        raise InvalidModelError(
            "amva: the priority MVA lost precision (non-finite throughputs or response times) "
            f"at the demands {model.D.tolist()} s: express the demands in a range near "
            "1e-9 .. 1e6 s (scale the time unit), or use qnmodel.simulate"
        )
    where = ", ".join(f"{cm.station_names[k]!r} ({d})" for k, d in sorted(cols.items()))
    label = f"amva.{method}+priority" + ("+seidmann" if owner.size else "")
    label += f" (approximate: priority MVA (shadow server, Bryant et al. 1984) at {where})"
    return package(label, model, X, _fold(R2, K, owner), cls=AMVAResult,
                   converged=np.full(C, ok), iterations=np.full(C, it),
                   residual=np.full(C, res), tol=tol, peak_rate=model.peak_rate())  # fmt: skip


def refuse_priority_rate_curves(cm, cols: dict[int, str]) -> None:
    """A priority station with a rate curve: no solver (nor the simulator) takes it."""
    for k in cols:
        if cm.rates[k] is not None:
            raise InvalidModelError(
                f"amva cannot solve priority scheduling ({cm.discipline[k]}) at the "
                f"load-dependent station {cm.station_names[k]!r} (a rate curve): no solver "
                "in qnmodel takes it; give the station servers=m instead of rate_multipliers"
            )
        check_fit_scv(cm.scv[:, k], f"station {cm.station_names[k]!r}", "the priority MVA")


def priority_point(M, D2, Dq2, Z, V2, S2, G, kind, scv2, prio, Dlt, Q, tol, max_iter,
                   open_rate=None):  # fmt: skip
    """Fixed point of the priority core at the population vector M (C,), float.

    D2, Dq2, V2, S2, scv2 : (C, K2) demands, queueing demands (0 at delays), visits, service
    times per visit and SCVs of the split model; G (C, C, K2): the waiting cost of a class-r
    job for a class-c arrival at a plain queue (:func:`qnmodel.solvers.amva._fcfs_weights`);
    kind (K2,): QUEUE, HOL or PR; prio (C,) levels; Dlt (C, C, K2) Linearizer deltas or None;
    open_rate (C,): NaN for closed classes, lambda_c for open ones (mixed networks: an open
    class has X_c = lambda_c and its arrivals see the time averages Q(N), U(N); Schweitzer
    only), or None.
    Q (C, K2) is updated in place. Returns X, R (C, K2) (R of empty classes: as an added
    job would see the network), converged, iterations, residual.
    """
    C, K2 = D2.shape
    live, inv, W = _population_terms(M)
    queue = (Dq2 > 0) | (D2 == 0)
    le = prio[None, :] <= prio[:, None]  # le[c, j]: j of c's level or more urgent
    lt = prio[None, :] < prio[:, None]  # lt[c, j]: j more urgent than c
    res = S2 * (1.0 + scv2) / 2.0  # mean residual service of a job in service (j, k)
    hol, pr = kind == HOL, kind == PR
    plain = queue & ~(hol | pr)[None, :]
    # a start where no single server is loaded past 1 (the shadow server's 1 - sigma > 0)
    X = np.where(live, M / (Z + D2.sum(axis=1)), 0.0)
    opened = np.zeros(C, dtype=bool) if open_rate is None else ~np.isnan(open_rate)
    lam = np.where(opened, np.nan_to_num(open_rate), 0.0)
    X /= max(1.0, float((X @ Dq2).max(initial=0.0)))
    X[opened] = lam[opened]
    seen = W * inv[None, :]  # U_j(N - e_c) / U_j(N): (N - e_c)_j / N_j, 1 for open classes
    seen[:, opened] = 1.0

    def residence(Q, X):
        F = Q * inv[:, None]
        if Dlt is None:  # Schweitzer: Q_jk(N - e_c) = Q_jk - delta_cj Q_ck / N_c
            QA = Q[None, :, :] - np.eye(C)[:, :, None] * F[:, None, :]
        else:
            QA = W[:, :, None] * (F[None, :, :] + Dlt)
        QA = np.maximum(QA, 0.0)
        U = X[:, None] * D2 * (Dq2 > 0)  # (j, k) at queueing columns
        UA = U[None, :, :] * seen[:, :, None]  # U_jk (N - e_c)_j / N_j
        UA = np.minimum(UA, QA)  # a class is in service no more often than present
        sigma = np.einsum("cj,jk->ck", lt.astype(float), U)
        slow = np.maximum(1.0 - sigma, 1e-9)  # share the more urgent classes leave
        waiting = S2[None, :, :] * (QA - UA)  # work of the waiting jobs (c, j, k)
        resid = UA * res[None, :, :]  # residual of a job in service (c, j, k)
        own = np.einsum("cj,cjk->ck", le.astype(float), waiting + resid)
        R = np.array(D2)
        R[plain] += (V2 * np.einsum("crk,crk->ck", G, QA))[plain]
        Rp = V2 * (S2 + own) / slow
        Rh = V2 * (S2 + (np.einsum("cj,cjk->ck", le.astype(float), waiting)
                         + resid.sum(axis=1)) / slow)  # fmt: skip
        R[:, pr] = np.where(D2[:, pr] > 0, Rp[:, pr], 0.0)
        R[:, hol] = np.where(D2[:, hol] > 0, Rh[:, hol], 0.0)
        return R

    res_, it, converged = np.inf, 0, False
    R = np.array(D2)
    while it < max_iter:
        it += 1
        R = residence(Q, X)
        X0 = X
        Ro, Qo = R[opened], Q[opened]
        X, res_ = _close_step(R, D2, live, M, Z, Q)
        if opened.any():  # open classes: X = lambda, Q = lambda R (Little)
            R[opened], X[opened] = Ro, lam[opened]
            Q[opened] = lam[opened, None] * Ro
            pos = Q[opened] > 0
            if pos.any():
                res_ = max(res_, float(np.max(np.abs(Q[opened][pos] - Qo[pos]) / Q[opened][pos])))
        pos = X > 0  # X enters the shadow servers: it too must have settled
        res_ = max(res_, float(np.max(np.abs(X[pos] - X0[pos]) / X[pos], initial=0.0)))
        if res_ < tol and it > 1:
            converged = True
            break
    dead = ~live & ~opened
    if dead.any():
        R[dead] = residence(Q, X)[dead]
    return X, R, converged, it, res_


def mixed_priority(net, lam, pop, tol: float = 1e-10, max_iter: int = 100_000):
    """(label, X (C,), R_ck (C, K)) of a mixed network (open and closed classes) with
    priority stations, by the priority MVA with Schweitzer's estimate for the closed
    classes; :func:`qnmodel.mixed_network` calls it. Single-server and delay stations only.

    Raises
    ------
    InvalidModelError
        A multi-server or load-dependent station (named), or no convergence.
    """
    cm = net.compiled
    cols = priority_columns(cm)
    refuse_priority_rate_curves(cm, cols)
    K = cm.D.shape[1]
    multi = [cm.station_names[k] for k in range(K) if not cm.is_delay[k]
             and (cm.servers[k] > 1 or cm.rates[k] is not None)]  # fmt: skip
    if multi:
        raise InvalidModelError(
            f"mixed_network cannot solve priority scheduling with the multi-server or "
            f"load-dependent station(s) {multi}: use qnmodel.simulate (or qnmodel.amva "
            "with closed classes only)"
        )
    D = np.array(cm.D)
    Dq = np.where(cm.is_delay[None, :], 0.0, D)
    _, G, _ = _fcfs_weights(net, SimpleNamespace(D=D), D, np.zeros(0, dtype=np.int64), always=True)
    kind = np.full(K, QUEUE)
    for k, d in cols.items():
        kind[k] = HOL if d == "HOL" else PR
    M = np.where(cm.is_open, 0.0, pop).astype(np.float64)
    rate = np.where(cm.is_open, lam, np.nan)
    X, R, ok, it, res = priority_point(M, D, Dq, np.array(cm.Z), np.array(cm.V),
                                       np.array(cm.S), G, kind, np.array(cm.scv),
                                       np.asarray(cm.priority, dtype=np.int64), None,
                                       _initial_q(M, D), tol, max_iter, rate)  # fmt: skip
    _on_failure(ok, "raise", "schweitzer", res, tol, it, pop)
    if np.any(np.isnan(X)) or np.any(np.isnan(R)):  # (an inf R: a starved open class)
        closed = {cm.class_names[c]: int(pop[c]) for c in range(len(pop)) if not cm.is_open[c]}
        raise InvalidModelError(
            f"mixed_network: the priority MVA lost precision at the closed populations "
            f"{closed} (NaN throughputs; 10^6 jobs did): give smaller "
            "populations, or use qnmodel.simulate"
        )
    where = ", ".join(f"{cm.station_names[k]!r} ({d})" for k, d in sorted(cols.items()))
    if not cols:  # every priority station serves one level: FCFS
        return (
            "mixed.amva+fcfs (approximate: Schweitzer-Bard AMVA, open classes at their "
            "rates; priority stations at one level are FCFS)",
            X,
            R,
        )
    label = (f"mixed.amva+priority (approximate: priority MVA (shadow server, Bryant et al. "
             f"1984) at {where})")  # fmt: skip
    return label, X, R
