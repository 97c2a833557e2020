"""Frozen result objects of single-station queues: :class:`QueueResult` (one queue, one
class) and :class:`PriorityQueueResult` (one server, several priority classes).

Same field names as the network results where the quantity is the same
(``throughput``, ``response_time``, ``queue_length``, ``utilization``). Arrays are
read-only; ``to_frame()`` imports pandas only when called.

Glossary (arrival rate lambda, mean service time S, m servers, capacity K)
--------------------------------------------------------------------------
a         offered load lambda S, Erlangs
X         throughput (carried rate), jobs/s: X = lambda (1 - p_K); X = lambda when K = inf
U         utilisation of one server: U = X S / m                        (utilisation law)
L         mean jobs in the system, waiting plus in service: L = X R     (Little's law)
Lq        mean jobs waiting (not in service): Lq = X W                   (Little's law)
R         mean response time of an accepted job, s: R = W + S
W         mean waiting time before service of an accepted job, s
p_k       steady-state probability of k jobs in the system (time average; by PASTA also
          what an arrival sees)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..units import format_quantity
from ._laws import ResponseTimeQuantile
from .closed import _freeze, _import_pandas, bad_level

__all__ = ["QueueResult", "PriorityQueueResult"]

_SCALARS = (
    "arrival_rate",
    "service_time",
    "scv",
    "servers",
    "capacity",
    "throughput",
    "loss_probability",
    "utilization",
    "busy_servers",
    "queue_length",
    "waiting_jobs",
    "response_time",
    "waiting_time",
    "empty_probability",
    "wait_probability",
)


@dataclass(frozen=True, repr=False)
class QueueResult(ResponseTimeQuantile):
    """Mean values (and state probabilities) of one queue with one class of jobs.

    Attributes
    ----------
    method : str
        The model solved: ``"mm1"``, ``"mmm"``, ``"mminf"``, ``"mginf"``, ``"mm1k"``,
        ``"mmmk"``, ``"mgmm"`` (loss system), ``"mg1"``, ``"mh1"`` (exact);
        ``"mgm.allen_cunneen.approximate"``, ``"ammm.approximate"`` (approximations:
        the label says so and the solver's docstring gives the measured error).
    arrival_rate : float
        Offered arrival rate lambda, jobs/s (Poisson).
    service_time : float
        Mean service time S of one job at one server, s.
    scv : float
        Squared coefficient of variation of the service time, Var[S] / S^2 (1:
        exponential, 0: constant).
    servers : float
        m, the number of servers (``math.inf`` for an infinite-server station).
    capacity : float
        K, the most jobs in the system, in service included (``math.inf``: no limit).
    throughput : float
        X = lambda (1 - loss_probability), jobs/s.
    loss_probability : float
        p_K, the probability that an arrival finds the system full and is lost (0 when
        K = inf).
    utilization : float
        U = X S / m, the busy fraction of one server; for an infinite-server station
        X S, the mean number of busy servers (as for delay stations in
        :class:`~qnmodel.results.open.OpenResult`).
    busy_servers : float
        X S, the mean number of busy servers.
    queue_length : float
        L, mean jobs in the system (waiting plus in service).
    waiting_jobs : float
        Lq = L - X S, mean jobs waiting for a server.
    response_time : float
        R, mean time from arrival to departure of an accepted job, s.
    waiting_time : float
        W = R - S, mean time an accepted job waits for a server, s.
    empty_probability : float
        p_0, the probability that the system is empty.
    wait_probability : float
        The probability that an accepted arrival waits for a server (all m busy):
        Erlang's C for M/M/m, rho for M/G/1, 0 for infinite servers and loss systems.
    states : ndarray (n,) of int, or None
        The numbers of jobs k whose probabilities are in ``state_probabilities``: 0..K
        for a finite capacity, the requested k otherwise (None when none were requested
        and the capacity is infinite).
    state_probabilities : ndarray (n,), or None
        p_k for k in ``states``.
    server_utilization : ndarray (m,), or None
        The busy fraction of each server when the servers differ (the asymmetric M/M/m
        queue, exact method); None otherwise.
    """

    _NO_LAW = (
        "this solver gives the means and state probabilities of the queue (an M/M/1 or "
        "M/M/m queue as a one-station network: qnmodel.open_network(net, rate)"
        ".response_time_quantile(q))"
    )

    method: str
    arrival_rate: float
    service_time: float
    scv: float
    servers: float
    capacity: float
    throughput: float
    loss_probability: float
    utilization: float
    busy_servers: float
    queue_length: float
    waiting_jobs: float
    response_time: float
    waiting_time: float
    empty_probability: float
    wait_probability: float
    states: np.ndarray | None = None
    state_probabilities: np.ndarray | None = None
    server_utilization: np.ndarray | None = None

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def offered_load(self) -> float:
        """a = lambda S, Erlangs."""
        return self.arrival_rate * self.service_time

    def to_frame(self, level: str = "summary") -> Any:
        """A DataFrame: ``level="summary"`` one row with the scalar fields and ``method``;
        ``level="states"`` one row per state (``k, probability``)."""
        pd = _import_pandas()
        if level == "summary":
            row = {"method": self.method} | {f: getattr(self, f) for f in _SCALARS}
            return pd.DataFrame([row])
        if level == "states":
            if self.states is None:
                return pd.DataFrame({"k": np.zeros(0, np.int64), "probability": np.zeros(0)})
            return pd.DataFrame({"k": self.states, "probability": self.state_probabilities})
        raise bad_level(level, ("summary", "states"))

    def __repr__(self) -> str:
        def num(x: float) -> str:
            return "inf" if math.isinf(x) else f"{x:.6g}"

        def time(x: float) -> str:
            return format_quantity(x, "time")

        head = (
            f"QueueResult(method={self.method!r}, lambda={num(self.arrival_rate)}/s, "
            f"S={time(self.service_time)}, m={num(self.servers)}, K={num(self.capacity)}, "
            f"scv={num(self.scv)},\n"
            f"  X={num(self.throughput)}/s, loss={num(self.loss_probability)}, "
            f"U={num(self.utilization)}, L={num(self.queue_length)}, "
            f"R={time(self.response_time)}, W={time(self.waiting_time)}"
        )
        if self.states is not None:
            head += f",\n  p_k for {self.states.size} states k={_span(self.states)}"
        return head + ")"


def _span(k: np.ndarray) -> str:
    if k.size == 0:
        return "[]"
    if k.size > 1 and np.array_equal(k, np.arange(k[0], k[0] + k.size)):
        return f"{k[0]}..{k[-1]}"
    shown = ", ".join(str(int(v)) for v in k[:8])
    return f"[{shown}{', ...' if k.size > 8 else ''}]"


@dataclass(frozen=True, repr=False)
class PriorityQueueResult(ResponseTimeQuantile):
    """Mean values of an M/G/1 queue serving several classes by static priority.

    Per class c (arrays of length C, in the order given): arrival rate lambda_c, mean
    service time S_c, rho_c = lambda_c S_c. A class is *stable* when the load of its own
    and every higher priority level is below 1 (sigma_p < 1); the classes of the first
    level that breaks it share what the higher levels leave, 1 - sigma_(p-1), and every
    lower level gets nothing.

    Attributes
    ----------
    method : str
        ``"priority.nonpreemptive"`` or ``"priority.preemptive_resume"``.
    class_names : tuple of str
    priorities : ndarray (C,) of int
        Priority levels: a smaller number is served first; equal numbers share a level
        served FCFS.
    arrival_rate : ndarray (C,)
        lambda_c, jobs/s.
    service_time : ndarray (C,)
        S_c, s.
    scv : ndarray (C,)
        Squared coefficients of variation of the service times.
    stable : ndarray (C,) of bool
        Whether class c has a steady state (finite waiting time).
    throughput : ndarray (C,)
        X_c = lambda_c for stable classes; the share of the spare capacity for the first
        unstable level (1 - sigma_(p-1)) lambda_c / sum_level lambda_i S_i; 0 below it.
    utilization : ndarray (C,)
        X_c S_c, the server's busy fraction spent on class c.
    waiting_time : ndarray (C,)
        W_c, mean time before the job's first service (non-preemptive) or R_c - S_c
        (preemptive-resume, interruptions included), s; inf for unstable classes.
    response_time : ndarray (C,)
        R_c = W_c + S_c, s; inf for unstable classes.
    queue_length : ndarray (C,)
        L_c = X_c R_c, mean class-c jobs in the system; inf for unstable classes.
    residual_work : float
        W_0 = sum_c X_c E[S_c^2] / 2, the mean residual service time an arrival finds
        (over all classes), s.
    """

    _NO_LAW = "the priority solver computes means only"

    method: str
    class_names: tuple[str, ...]
    priorities: np.ndarray
    arrival_rate: np.ndarray
    service_time: np.ndarray
    scv: np.ndarray
    stable: np.ndarray
    throughput: np.ndarray
    utilization: np.ndarray
    waiting_time: np.ndarray
    response_time: np.ndarray
    queue_length: np.ndarray
    residual_work: float

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def unstable_classes(self) -> tuple[str, ...]:
        """Names of the classes without a steady state."""
        return tuple(n for n, s in zip(self.class_names, self.stable, strict=True) if not s)

    def to_frame(self) -> Any:
        """A DataFrame, one row per class: ``class, priority, arrival_rate, service_time,
        scv, stable, throughput, utilization, waiting_time, response_time, queue_length``."""
        pd = _import_pandas()
        return pd.DataFrame(
            {
                "class": list(self.class_names),
                "priority": self.priorities,
                "arrival_rate": self.arrival_rate,
                "service_time": self.service_time,
                "scv": self.scv,
                "stable": self.stable,
                "throughput": self.throughput,
                "utilization": self.utilization,
                "waiting_time": self.waiting_time,
                "response_time": self.response_time,
                "queue_length": self.queue_length,
            }
        )

    def __repr__(self) -> str:
        rows = ", ".join(
            f"{n}(p={int(p)}): R={format_quantity(r, 'time')}"
            if s
            else f"{n}(p={int(p)}): unstable"
            for n, p, r, s in zip(
                self.class_names, self.priorities, self.response_time, self.stable, strict=True
            )
        )
        return f"PriorityQueueResult(method={self.method!r}, {rows})"
