"""One server, several open classes served by static priority: the M/G/1 priority queue,
non-preemptive (head of the line) and preemptive-resume, exact mean values per class.

Class c has Poisson arrivals of rate lambda_c, service of mean S_c and squared
coefficient of variation c_c^2 (E[S_c^2] = S_c^2 (1 + c_c^2)), load rho_c = lambda_c S_c,
and an integer priority level: a smaller number is served first, classes of one level are
served FCFS among themselves. With sigma_p the load of level p and every higher level and
sigma_p^- = sigma_p minus level p's own load ([Cob54]; [Kle76] sec. 3.6 and 3.7):

* **non-preemptive**: a job in service finishes; an arrival of level p waits

      W_p = W_0 / ((1 - sigma_p^-) (1 - sigma_p)),   W_0 = sum_c lambda_c E[S_c^2] / 2,

  W_0 being the mean residual service time found by an arrival (all classes);
* **preemptive-resume**: an arrival of a higher level interrupts the job in service,
  which later resumes where it stopped; lower levels are invisible to level p and

      R_p = S_p / (1 - sigma_p^-) + W_0p / ((1 - sigma_p^-) (1 - sigma_p)),
      W_0p = sum over levels <= p of lambda_c E[S_c^2] / 2.

R = W + S (non-preemptive), L_c = lambda_c R_c (Little's law).

**Stability per level**: level p has a steady state iff sigma_p < 1. Higher levels can be
stable while lower ones are not: the first level with sigma_p >= 1 (call it q) gets the
capacity the levels above leave, 1 - sigma_q^-, shared in proportion to its classes' loads
(its queue grows; it departs in arrival order), and every level below it is never served.
Levels above q keep their formulas, with W_0 (non-preemptive) summed over the *carried*
rates X_c: the server is then always busy, a fraction X_c S_c of the time on class c
([Kle76] sec. 3.6, the remark on rho >= 1). The result says which classes are stable.

References
----------
.. [Cob54] A. Cobham, "Priority assignment in waiting line problems", Journal of the
   Operations Research Society of America 2(1):70-76, 1954, doi:10.1287/opre.2.1.70.
.. [Kle76] L. Kleinrock, *Queueing Systems, Volume 2: Computer Applications*, Wiley 1976,
   sec. 3.6 (head-of-the-line priority, non-preemptive) and 3.7 (preemptive-resume).
.. [CMM67] R. W. Conway, W. L. Maxwell, L. W. Miller, *Theory of Scheduling*,
   Addison-Wesley 1967 (priority queues, preemptive-resume).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validate import as_choice, as_integers, as_quantities, as_scvs
from ..errors import InvalidModelError, InvalidTypeError
from ..results.queue import PriorityQueueResult

__all__ = ["priority_queue", "PRIORITY_DISCIPLINES"]

#: the disciplines :func:`priority_queue` solves
PRIORITY_DISCIPLINES = ("nonpreemptive", "preemptive_resume")


def priority_queue(
    arrival_rates: Any,
    service_times: Any,
    priorities: Any = None,
    scv: Any = None,
    *,
    discipline: str = "nonpreemptive",
    class_names: Sequence[str] | None = None,
) -> PriorityQueueResult:
    """Mean waiting and response times per class of an M/G/1 queue with static priorities.

    Parameters
    ----------
    arrival_rates : sequence of float or str
        lambda_c, jobs/s (each >= 0; ``["200/s", "50/s"]``).
    service_times : sequence of float or str
        Mean service times S_c, s (each > 0; ``["2 ms", "8 ms"]``).
    priorities : sequence of int, optional
        Priority level of each class, integers: a smaller number is served first, equal
        numbers share a level served FCFS. Default: the order given (0, 1, 2, ...).
    scv : sequence of float, optional
        Squared coefficients of variation of the service times, each >= 0 (0 constant,
        1 exponential). Default: all 1.
    discipline : {"nonpreemptive", "preemptive_resume"}
        Whether an arrival of a higher level waits for the job in service to finish
        (``"nonpreemptive"``, head of the line) or interrupts it, the job resuming later
        where it stopped (``"preemptive_resume"``).
    class_names : sequence of str, optional
        Default ``class0``, ``class1``, ...

    Returns
    -------
    PriorityQueueResult
        Per class: stable, X_c, U_c, W_c, R_c, L_c (inf for unstable classes); W_0.

    Raises
    ------
    InvalidModelError
        A priority that is not an integer (named with its value), sequences of different
        lengths, a negative or NaN rate or SCV, a service time <= 0, repeated class names.
    InvalidTypeError, UnitError
        Values of the wrong type or unit.

    Notes
    -----
    Exact for Poisson arrivals and independent service times (formulas in the module
    docstring). One class reduces to Pollaczek-Khinchine; equal priorities to M/G/1 FCFS
    with the mixture of the service laws; the non-preemptive waits obey Kleinrock's
    conservation law sum_c rho_c W_c = rho W_0 / (1 - rho) ([Kle76] ch. 3). Checked
    against Ciw's simulation with priority classes (preemption "resume") in
    ``tests/solvers/test_priority.py``.

    Examples
    --------
    >>> import qnmodel as qn
    >>> r = qn.priority_queue(["100/s", "100/s"], ["4 ms", "4 ms"], [0, 1])
    >>> [round(float(x) * 1e3, 4) for x in r.response_time]  # ms
    [9.3333, 30.6667]
    """
    lam = as_quantities(arrival_rates, "arrival_rates", "frequency")
    S = as_quantities(service_times, "service_times", "time")
    C = lam.size
    if C == 0:
        raise InvalidModelError("arrival_rates is empty: give one rate per class")
    if S.size != C:
        raise InvalidModelError(
            f"service_times has {S.size} entries but arrival_rates has {C}: give one mean "
            "service time per class"
        )
    if (S <= 0).any():
        i = int(np.flatnonzero(S <= 0)[0])
        raise InvalidModelError(f"service_times[{i}] must be > 0, got {float(S[i])!r}")
    prio = (
        np.arange(C, dtype=np.int64)
        if priorities is None
        else as_integers(priorities, "priorities")
    )
    c2 = np.ones(C) if scv is None else as_scvs(scv, "scv")
    for name, arr in (("priorities", prio), ("scv", c2)):
        if arr.size != C:
            raise InvalidModelError(
                f"{name} has {arr.size} entries but arrival_rates has {C}: give one per class"
            )
    disc = as_choice(discipline, "discipline", PRIORITY_DISCIPLINES)
    names = _class_names(class_names, C)

    rho = lam * S
    second = S * S * (1.0 + c2)  # E[S_c^2]
    levels = np.unique(prio)  # ascending: the first is served first
    level_load = np.array([rho[prio == p].sum() for p in levels])
    above = np.concatenate(([0.0], np.cumsum(level_load)[:-1]))  # sigma_p^-
    upto = above + level_load  # sigma_p
    # carried rates: stable levels all; the first unstable level what is left; then none
    X = lam.copy()
    stable = np.ones(C, dtype=bool)
    bad = np.flatnonzero(upto >= 1.0)
    if bad.size:
        q = int(bad[0])
        share = (1.0 - above[q]) / level_load[q]
        for j, p in enumerate(levels):
            cls = prio == p
            if j >= q:
                stable[cls] = False
                X[cls] = lam[cls] * share if j == q else 0.0
    half = X * second / 2.0  # each class's part of the residual work
    W0 = float(half.sum())
    W = np.full(C, np.inf)
    R = np.full(C, np.inf)
    for j, p in enumerate(levels):
        cls = (prio == p) & stable
        if not cls.any():
            continue
        d = (1.0 - above[j]) * (1.0 - upto[j])
        if disc == "nonpreemptive":
            W[cls] = W0 / d
            R[cls] = W[cls] + S[cls]
        else:
            w0p = float(half[prio <= p].sum())
            R[cls] = S[cls] / (1.0 - above[j]) + w0p / d
            W[cls] = R[cls] - S[cls]
    L = np.full(C, np.inf)
    L[stable] = X[stable] * R[stable]
    return PriorityQueueResult(
        method=f"priority.{disc}",
        class_names=names,
        priorities=prio,
        arrival_rate=lam,
        service_time=S,
        scv=c2,
        stable=stable,
        throughput=X,
        utilization=X * S,
        waiting_time=W,
        response_time=R,
        queue_length=L,
        residual_work=W0,
    )


def _class_names(class_names: Any, C: int) -> tuple[str, ...]:
    if class_names is None:
        return tuple(f"class{c}" for c in range(C))
    if isinstance(class_names, str) or not isinstance(class_names, Sequence):
        raise InvalidTypeError(
            f"class_names must be a sequence of {C} strings, got {class_names!r}"
        )
    names = tuple(class_names)
    if len(names) != C:
        raise InvalidModelError(
            f"class_names has {len(names)} entries but arrival_rates has {C}: give one per class"
        )
    for i, n in enumerate(names):
        if not isinstance(n, str):
            raise InvalidTypeError(f"class_names[{i}] must be a string, got {n!r}")
    if len(set(names)) != C:
        dup = next(n for n in names if names.count(n) > 1)
        raise InvalidModelError(f"class names must be unique; {dup!r} appears twice")
    return names
