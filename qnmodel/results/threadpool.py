"""Results of a subsystem with a population limit (a thread pool, a queue-depth limit).

Glossary (population n or arrival rate lambda; T threads; the subsystem S is a set of
stations a request holds a thread in; its stations k in S, the others outside)
---------------------------------------------------------------------------------------
X          throughput, requests/s
R          response time, s, think time excluded: R = sum_{k outside} R_k + W_T + R_S
W_T        thread wait, s: mean time a request queues (FCFS) for a free thread;
           W_T = E[(j - T)^+] / X with j the requests at the pool (waiting or holding a
           thread)                                                       (Little's law)
R_S        time inside the subsystem (holding a thread), s: R_S = E[min(j, T)] / X
           = sum_{k in S} R_k
B          threads busy: E[min(j, T)] = X R_S                            (Little's law)
L_T        requests waiting for a thread: E[(j - T)^+] = X W_T           (Little's law)
Q_k        mean requests at station k (waiting for it or served); in S:
           Q_k = sum_j p(j) Q_k^S(min(j, T)) with Q_k^S(i) the subsystem alone with i
           requests (its conditional solution) and p(j) the marginal of the pool
U_k        utilisation of one server of station k: U_k = X D_k / c_k     (utilisation law)
R_k        residence time at station k, s: R_k = Q_k / X                 (Little's law)
X_S(i)     throughput of the subsystem alone with i requests inside, i = 1..T: the rate of
           the flow-equivalent server with j requests is X_S(min(j, T))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..units import format_quantity
from .closed import _freeze, _import_pandas, bad_level, shorten, station_frame

__all__ = ["ThreadPoolResult", "OpenThreadPoolResult"]


def _stations(names, U, Q, inside) -> str:
    return shorten(
        ", ".join(
            f"{name}{'*' if s else ''}: U={u:.4g} Q={q:.4g}"
            for name, u, q, s in zip(names, U, Q, inside, strict=True)
        )
    )


@dataclass(frozen=True, repr=False)
class ThreadPoolResult:
    """A closed network whose subsystem admits at most T requests, for n = 1..N.

    Attributes
    ----------
    method : str
        ``"fes (exact: flow-equivalent server)"`` or ``"fes (approximate: flow-equivalent
        server)"`` (which cases are exact: :mod:`qnmodel.solvers.population_limit`).
    n : ndarray (N,)
        Populations 1..N.
    throughput : ndarray (N,)
        X(n), requests/s.
    response_time : ndarray (N,)
        R(n), seconds, think time excluded: outside stations + thread wait + inside.
    thread_wait : ndarray (N,)
        W_T(n), seconds queued for a thread.
    subsystem_time : ndarray (N,)
        R_S(n), seconds holding a thread (inside the subsystem).
    threads_busy : ndarray (N,)
        B(n), mean threads in use (0..T).
    thread_queue : ndarray (N,)
        L_T(n), mean requests waiting for a thread.
    queue_length, utilization, residence_time : ndarray (N, K)
        Q_k(n), U_k(n), R_k(n) of every station of the network, in its order.
    station_names : tuple of str
    in_subsystem : ndarray (K,) of bool
        Which stations hold a thread.
    threads : int
        T.
    think_time : float
        Z, seconds.
    demands : ndarray (K,)
        D_k, seconds.
    subsystem_throughput : ndarray (min(T, N),)
        X_S(i), requests/s, i = 1..min(T, N) (the rate curve of the flow-equivalent server).
    pool_distribution : ndarray (N + 1,)
        p(j | N), j = 0..N: probability that j requests are at the pool (waiting for or
        holding a thread) at the largest population.
    """

    method: str
    n: np.ndarray
    throughput: np.ndarray
    response_time: np.ndarray
    thread_wait: np.ndarray
    subsystem_time: np.ndarray
    threads_busy: np.ndarray
    thread_queue: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    residence_time: np.ndarray
    station_names: tuple[str, ...]
    in_subsystem: np.ndarray
    threads: int
    think_time: float
    demands: np.ndarray
    subsystem_throughput: np.ndarray
    pool_distribution: np.ndarray

    def __post_init__(self) -> None:
        _freeze(self)

    def to_frame(self, level: str = "system") -> Any:
        """``level="system"``: one row per n with ``n, throughput, response_time,
        thread_wait, subsystem_time, threads_busy, thread_queue``; ``level="station"``: one
        row per (n, station) with ``n, station, queue_length, utilization, residence_time,
        throughput``."""
        pd = _import_pandas()
        if level == "system":
            return pd.DataFrame(
                {
                    "n": self.n.astype(np.int64),
                    "throughput": self.throughput,
                    "response_time": self.response_time,
                    "thread_wait": self.thread_wait,
                    "subsystem_time": self.subsystem_time,
                    "threads_busy": self.threads_busy,
                    "thread_queue": self.thread_queue,
                }
            )
        if level == "station":
            return station_frame("n", self.n.astype(np.int64), self)
        raise bad_level(level, ("system", "station"))

    def __repr__(self) -> str:
        N = int(self.n[-1])
        per = _stations(
            self.station_names, self.utilization[-1], self.queue_length[-1], self.in_subsystem
        )
        return (
            f"ThreadPoolResult(method={self.method!r}, n=1..{N}, T={self.threads}, "
            f"Z={format_quantity(self.think_time, 'time')},\n"
            f"  X({N})={self.throughput[-1]:.6g}/s, "
            f"R({N})={format_quantity(self.response_time[-1], 'time')} "
            f"(thread wait {format_quantity(self.thread_wait[-1], 'time')}, inside "
            f"{format_quantity(self.subsystem_time[-1], 'time')}), "
            f"threads busy {self.threads_busy[-1]:.4g},\n  {per}  (* holds a thread))"
        )


@dataclass(frozen=True, repr=False)
class OpenThreadPoolResult:
    """Poisson arrivals into a subsystem that admits at most T requests at a time.

    Attributes
    ----------
    method : str
        ``"fes (exact: flow-equivalent server)"`` or ``"fes (approximate: flow-equivalent
        server)"`` (which cases are exact: :mod:`qnmodel.solvers.population_limit`).
    arrival_rate : float
        lambda, requests/s offered.
    capacity : int or None
        C, the most requests at the pool (waiting plus holding a thread); an arrival that
        finds C is lost. None: unlimited (then lambda < X_S(T) is required).
    loss_probability : float
        p(C) (0 without a capacity).
    throughput : float
        X = lambda (1 - p(C)), requests/s.
    response_time, thread_wait, subsystem_time : float
        R = W_T + R_S, W_T, R_S, seconds (of the requests admitted).
    threads_busy, thread_queue : float
        B, L_T.
    queue_length, utilization, residence_time : ndarray (K,)
        Q_k, U_k, R_k of the subsystem's stations.
    station_names : tuple of str
    threads : int
        T.
    demands : ndarray (K,)
        D_k, seconds.
    subsystem_throughput : ndarray (T,)
        X_S(i), i = 1..T.
    """

    method: str
    arrival_rate: float
    capacity: int | None
    loss_probability: float
    throughput: float
    response_time: float
    thread_wait: float
    subsystem_time: float
    threads_busy: float
    thread_queue: float
    queue_length: np.ndarray
    utilization: np.ndarray
    residence_time: np.ndarray
    station_names: tuple[str, ...]
    threads: int
    demands: np.ndarray
    subsystem_throughput: np.ndarray

    def __post_init__(self) -> None:
        _freeze(self)

    def to_frame(self) -> Any:
        """One row per station: ``station, queue_length, utilization, residence_time``."""
        pd = _import_pandas()
        return pd.DataFrame(
            {
                "station": list(self.station_names),
                "queue_length": self.queue_length,
                "utilization": self.utilization,
                "residence_time": self.residence_time,
            }
        )

    def __repr__(self) -> str:
        per = _stations(
            self.station_names,
            self.utilization,
            self.queue_length,
            np.ones(len(self.station_names), dtype=bool),
        )
        cap = "unlimited" if self.capacity is None else str(self.capacity)
        return (
            f"OpenThreadPoolResult(method={self.method!r}, lambda={self.arrival_rate:.6g}/s, "
            f"T={self.threads}, capacity={cap}, loss={self.loss_probability:.4g},\n"
            f"  X={self.throughput:.6g}/s, R={format_quantity(self.response_time, 'time')} "
            f"(thread wait {format_quantity(self.thread_wait, 'time')}, inside "
            f"{format_quantity(self.subsystem_time, 'time')}), "
            f"threads busy {self.threads_busy:.4g},\n  {per})"
        )
