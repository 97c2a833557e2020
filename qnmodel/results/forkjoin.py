"""The result of the fork-join solvers: mean values per station and branch, the
synchronisation delay, and response-time distributions (phase-type, :mod:`percentiles`).

Kept apart from :mod:`qnmodel.solvers.forkjoin` (the model, the equations, the two solvers
and the response-time laws, which the solver attaches to its result);
``qnmodel.ForkJoinResult`` is this class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidModelError
from ..units import format_quantity
from ._rows import ByPopulation, row_index
from .closed import _freeze, _import_pandas

__all__ = ["ForkJoinResult"]


@dataclass(frozen=True, repr=False)
class ForkJoinResult(ByPopulation):
    """Mean values of a network with fork-join elements (an approximation, see ``method``).

    Rows are populations n = 1..N (closed) or the single operating point
    (open; then ``n`` holds the mean number in the system lambda R, Little's law).
    Elements (columns of the per-station arrays) are the network's stations,
    a fork-join counted once; branches have their own arrays.

    Attributes
    ----------
    method : str
        Contains "approximate".
    n, throughput, response_time : ndarray (P,)
        Population (closed), X in requests/s, R in s (think time excluded).
    residence_time, queue_length, utilization : ndarray (P, K)
        Per element; for a fork-join: R_fj, requests inside it (X R_fj), and
        the utilisation of its busiest branch.
    branch_names : tuple of str
        ``"<forkjoin>.<branch>"``.
    branch_response_time, branch_queue_length, branch_utilization : ndarray (P, B)
        Sub-request sojourn T_i, sub-requests present q_i = X T_i, U_i = X D_i.
    synchronization_delay : ndarray (P, F)
        Per fork-join: R_fj minus the mean branch sojourn, the mean time a
        finished sub-request waits for its siblings (k = n); negative for a
        k-of-n join that leaves before the average sub-request finishes.
    forkjoin_names : tuple of str
    arrival_rate : float or None
        lambda (open) or None (closed).
    """

    method: str
    n: np.ndarray
    throughput: np.ndarray
    response_time: np.ndarray
    residence_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    branch_response_time: np.ndarray
    branch_queue_length: np.ndarray
    branch_utilization: np.ndarray
    synchronization_delay: np.ndarray
    station_names: tuple[str, ...]
    branch_names: tuple[str, ...]
    forkjoin_names: tuple[str, ...]
    think_time: float
    arrival_rate: float | None = None
    #: the solver's response-time law of a row, ``law(result, i) -> (PhaseType, label)``
    _law: Callable[[ForkJoinResult, int], tuple[Any, str]] | None = field(
        default=None, compare=False
    )

    _ROW_FIELDS = ("throughput", "response_time", "residence_time", "queue_length",
                   "utilization", "branch_response_time", "branch_queue_length",
                   "branch_utilization", "synchronization_delay")  # fmt: skip

    def __post_init__(self) -> None:
        _freeze(self)

    def _row(self, n: int | None) -> int:
        if self.arrival_rate is not None or n is None:
            return self.n.size - 1
        return row_index(self.n, n, "the response-time law")

    def response_time_distribution(self, n: int | None = None) -> tuple[Any, str]:
        """A phase-type law of the response time at population n (default: the last) and its label.

        Open networks of single-server queues only: *exact* (hypoexponential, [Rei57]).
        Otherwise an approximation with the solver's means, stages independent:

        * closed: a queue's residence R_k(n) is the service of the Q_k(n-1)
          requests found ahead plus its own, so it is fitted as an Erlang
          mixture of mean R_k(n) and SCV 1 / (1 + Q_k(n-1)) ([Tij94]; exponential
          at n = 1, Erlang-like near saturation); a fork-join is the wait for
          the requests ahead (same fit, SCV 1/Q_fj(n-1)) followed by the exact
          race of this request's exponential sub-requests (k-th order statistic);
          delay stations are Exp(D);
        * open: exponential stages (exact for M/M/1); a fork-join is the join
          of independent exponential branch sojourns, not rescaled: its mean is
          [NT88]'s upper bound (above ``residence_time``, which is the better
          mean), but its upper quantiles match simulation closely, because the
          positive correlation of the branches mostly shortens the body of the
          distribution, not its tail (measured: docs page).

        Errors against simulation: ``tests/solvers/fj_sim.py`` and the fork-join docs page.
        """
        if self._law is None:
            raise InvalidModelError(
                f"no response-time distribution for this result ({self.method}): only the "
                "means are modelled"
            )
        return self._law(self, self._row(n))

    def response_time_quantile(self, q: float, n: int | None = None) -> float:
        """The q-quantile of the response time, s (0 < q < 1), e.g. ``q=0.99`` for p99.

        Exact for open tandems of M/M/1 queues, approximate otherwise; see
        :meth:`response_time_distribution`.
        """
        law, _label = self.response_time_distribution(n)
        return law.quantile(q)

    def to_frame(self, level: str = "system") -> Any:
        """A DataFrame: ``"system"`` (n, X, R), ``"station"`` or ``"branch"`` (long form)."""
        pd = _import_pandas()
        if level == "system":
            return pd.DataFrame(
                {"n": self.n, "throughput": self.throughput, "response_time": self.response_time}
            )
        if level == "station":
            P, K = self.residence_time.shape
            return pd.DataFrame(
                {
                    "n": np.repeat(self.n, K),
                    "station": np.tile(np.array(self.station_names, dtype=object), P),
                    "residence_time": self.residence_time.ravel(),
                    "queue_length": self.queue_length.ravel(),
                    "utilization": self.utilization.ravel(),
                }
            )
        if level == "branch":
            P, B = self.branch_response_time.shape
            return pd.DataFrame(
                {
                    "n": np.repeat(self.n, B),
                    "branch": np.tile(np.array(self.branch_names, dtype=object), P),
                    "response_time": self.branch_response_time.ravel(),
                    "queue_length": self.branch_queue_length.ravel(),
                    "utilization": self.branch_utilization.ravel(),
                }
            )
        raise InvalidModelError(
            f"level must be one of 'system', 'station', 'branch'; got {level!r}"
        )

    def __repr__(self) -> str:
        what = (
            f"lambda={self.arrival_rate:.6g}/s"
            if self.arrival_rate is not None
            else f"N={int(self.n[-1])}"
        )
        return (
            f"ForkJoinResult({self.method}, {what}: X={self.throughput[-1]:.6g}/s, "
            f"R={format_quantity(self.response_time[-1], 'time')})"
        )
