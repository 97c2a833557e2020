"""The frozen results of :func:`qnmodel.simulate` and :func:`qnmodel.simulate_storage`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidModelError
from ..units import format_quantity
from .closed import _freeze, _import_pandas

__all__ = ["SimulationResult", "StorageSimulationResult"]


@dataclass(frozen=True, repr=False)
class SimulationResult:
    """Estimates of a discrete-event simulation, each with a confidence-interval half-width.

    Every estimate ``x`` has a field ``x_halfwidth``: the interval ``x +- x_halfwidth`` is a
    Student-t confidence interval at level :attr:`confidence` over :attr:`replications`
    independent replications or batch means (:attr:`ci_method`). Field names follow the
    analytic results (:class:`~qnmodel.results.closed.MultiClassResult`): rows are classes c,
    columns stations k.

    Attributes
    ----------
    method : str
        ``"simulation"``.
    ci_method : {"replications", "batch_means"}
    class_names, station_names : tuple of str
    branch_names : tuple of str
        Stations inside fork-join elements, as ``"forkjoin/branch"``.
    population : ndarray (C,)
        N_c of closed classes (0 for open classes).
    arrival_rate : ndarray (C,)
        lambda_c of open classes, 1/s (0 for closed classes).
    throughput : ndarray (C,)
        Completed responses per second. With a routing matrix (``Network(..., routing=...)``)
        a response is a cycle, from leaving the outside node (a closed job's terminal, an open
        job's source) to coming back to it, counted for the class the job had when it left:
        with class switching the cycles of a chain split among its classes, and
        :attr:`chain_throughput` is their sum.
    response_time : ndarray (C,)
        Mean response time (think time excluded), s; with a routing matrix, of the cycles
        started as class c (each visit a service of mean S, so a cycle's law is that of its
        path: a one-of-k choice gives a mixture, a series a sum).
    quantiles : ndarray (Q,)
        Probabilities of the response-time quantiles.
    response_time_quantiles : ndarray (C, Q)
        Response-time quantiles, s (mean over replications/batches of each one's quantile).
    utilization : ndarray (C, K)
        Per-server utilisation by class: busy servers / servers (mean busy servers for a delay
        station; fraction of time serving for a load-dependent station; NaN for a fork-join
        element, see :attr:`branch_utilization`).
    queue_length : ndarray (C, K)
        Mean number of class-c jobs at station k (fork-join: jobs between fork and join).
    residence_time : ndarray (C, K)
        Mean time per cycle, s; fork-join: from fork to join. With a routing matrix: the time
        jobs spend at station k as class c per cycle of the class's chain (all visits summed,
        R_ck = V_ck x time per visit, as :func:`qnmodel.solvers.mva_chains` gives it).
    station_utilization, station_queue_length : ndarray (K,)
        Summed over classes.
    branch_utilization, branch_queue_length : ndarray (NB,)
        Per fork-join branch station, summed over classes (sub-jobs still running after a
        k-of-n join included).
    events : int
        Events processed, warm-up included, all replications.
    visits : int
        Station visits completed after the warm-up, all replications.
    seed : int
        The seed that reproduces this result bit for bit.
    replications : int
        Replications (or batches) behind each interval.
    warmup, run_length : float
        Warm-up discarded and length kept per replication (batch means: the whole run), s.
    confidence : float
    loss_probability : ndarray (C,) or None
        Only when a station has a finite ``capacity``: the fraction of an open class's
        arrivals lost because a station on its route was full (lost / arrived); NaN for
        closed classes, which are blocked instead of lost. :attr:`throughput` is then the
        carried throughput, lambda_c (1 - loss_probability_c).
    loss_rate : ndarray (C, K) or None
        Only with a finite capacity: open jobs of class c lost at station k per second.
    chains : ndarray (C,) of int or None
        Only with a routing matrix: the chain of each class (classes that switch into each
        other share one; -1 for a class no job stays in), as :attr:`Compiled.chains`.
    chain_throughput, chain_response_time : ndarray (Q,) or None
        Only with a routing matrix: cycles per second of each chain (X*_q of
        :func:`qnmodel.solvers.mva_chains`) and their mean response time, s (think time excluded).
    """

    method: str
    ci_method: str
    class_names: tuple[str, ...]
    station_names: tuple[str, ...]
    branch_names: tuple[str, ...]
    population: np.ndarray
    arrival_rate: np.ndarray
    throughput: np.ndarray
    throughput_halfwidth: np.ndarray
    response_time: np.ndarray
    response_time_halfwidth: np.ndarray
    quantiles: np.ndarray
    response_time_quantiles: np.ndarray
    response_time_quantiles_halfwidth: np.ndarray
    utilization: np.ndarray
    utilization_halfwidth: np.ndarray
    queue_length: np.ndarray
    queue_length_halfwidth: np.ndarray
    residence_time: np.ndarray
    residence_time_halfwidth: np.ndarray
    station_utilization: np.ndarray
    station_utilization_halfwidth: np.ndarray
    station_queue_length: np.ndarray
    station_queue_length_halfwidth: np.ndarray
    branch_utilization: np.ndarray
    branch_utilization_halfwidth: np.ndarray
    branch_queue_length: np.ndarray
    branch_queue_length_halfwidth: np.ndarray
    events: int
    visits: int
    seed: int
    replications: int
    warmup: float
    run_length: float
    confidence: float
    loss_probability: np.ndarray | None = None
    loss_probability_halfwidth: np.ndarray | None = None
    loss_rate: np.ndarray | None = None
    loss_rate_halfwidth: np.ndarray | None = None
    chains: np.ndarray | None = None
    chain_throughput: np.ndarray | None = None
    chain_throughput_halfwidth: np.ndarray | None = None
    chain_response_time: np.ndarray | None = None
    chain_response_time_halfwidth: np.ndarray | None = None

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def C(self) -> int:
        """Number of classes."""
        return len(self.class_names)

    def _class_index(self, class_name: str | None) -> int:
        if class_name is None:
            if self.C != 1:
                raise InvalidModelError(
                    f"class_name is needed with {self.C} classes: one of {list(self.class_names)}"
                )
            return 0
        if class_name not in self.class_names:
            raise InvalidModelError(
                f"no class named {class_name!r}; classes are {list(self.class_names)}"
            )
        return self.class_names.index(class_name)

    def _q_index(self, q: float) -> int:
        hit = np.flatnonzero(np.isclose(self.quantiles, float(q), rtol=0, atol=1e-12))
        if hit.size == 0:
            raise InvalidModelError(
                f"q={q!r} was not estimated; this run has quantiles {self.quantiles.tolist()} "
                f"(pass quantiles=(..., {q!r}) to simulate)"
            )
        return int(hit[0])

    def response_time_quantile(self, q: float, class_name: str | None = None) -> float:
        """The q-quantile of the response time of a class (the only one by default), s."""
        return float(self.response_time_quantiles[self._class_index(class_name), self._q_index(q)])

    def response_time_quantile_ci(
        self, q: float, class_name: str | None = None
    ) -> tuple[float, float]:
        """(lower, upper) confidence interval of :meth:`response_time_quantile`."""
        c, i = self._class_index(class_name), self._q_index(q)
        v, h = self.response_time_quantiles[c, i], self.response_time_quantiles_halfwidth[c, i]
        return float(v - h), float(v + h)

    def to_frame(self, level: str = "class") -> Any:
        """A pandas DataFrame of the estimates and their half-widths (``_halfwidth`` columns).

        ``level="class"``: one row per class (throughput, response time, quantiles ``p50``
        ...); ``"station"``: one row per class and station; ``"branch"``: one row per fork-join
        branch station.
        """
        pd = _import_pandas()
        if level == "class":
            data: dict[str, Any] = {
                "class": list(self.class_names),
                "population": self.population,
                "arrival_rate": self.arrival_rate,
                "throughput": self.throughput,
                "throughput_halfwidth": self.throughput_halfwidth,
                "response_time": self.response_time,
                "response_time_halfwidth": self.response_time_halfwidth,
            }
            for i, q in enumerate(self.quantiles):
                label = f"p{100 * q:g}"
                data[label] = self.response_time_quantiles[:, i]
                data[f"{label}_halfwidth"] = self.response_time_quantiles_halfwidth[:, i]
            if self.loss_probability is not None:
                data["loss_probability"] = self.loss_probability
                data["loss_probability_halfwidth"] = self.loss_probability_halfwidth
            return pd.DataFrame(data)
        if level == "station":
            C, K = self.utilization.shape
            rows = {
                "class": np.repeat(list(self.class_names), K),
                "station": list(self.station_names) * C,
                "utilization": self.utilization.ravel(),
                "utilization_halfwidth": self.utilization_halfwidth.ravel(),
                "queue_length": self.queue_length.ravel(),
                "queue_length_halfwidth": self.queue_length_halfwidth.ravel(),
                "residence_time": self.residence_time.ravel(),
                "residence_time_halfwidth": self.residence_time_halfwidth.ravel(),
            }
            if self.loss_rate is not None:
                rows["loss_rate"] = self.loss_rate.ravel()
                rows["loss_rate_halfwidth"] = self.loss_rate_halfwidth.ravel()
            return pd.DataFrame(rows)
        if level == "branch":
            return pd.DataFrame(
                {
                    "branch": list(self.branch_names),
                    "utilization": self.branch_utilization,
                    "utilization_halfwidth": self.branch_utilization_halfwidth,
                    "queue_length": self.branch_queue_length,
                    "queue_length_halfwidth": self.branch_queue_length_halfwidth,
                }
            )
        raise InvalidModelError(f"level must be 'class', 'station' or 'branch', got {level!r}")

    def __repr__(self) -> str:
        loss = self.loss_probability
        rows = "; ".join(
            f"{c}: X={x:.6g}+-{hx:.2g}/s "
            f"R={format_quantity(r, 'time')} +- {format_quantity(hr, 'time', digits=2)}"
            + (f" loss={loss[i]:.4g}" if loss is not None and np.isfinite(loss[i]) else "")
            for i, (c, x, hx, r, hr) in enumerate(
                zip(
                    self.class_names,
                    self.throughput,
                    self.throughput_halfwidth,
                    self.response_time,
                    self.response_time_halfwidth,
                    strict=True,
                )
            )
        )
        return (
            f"SimulationResult({self.ci_method}, n={self.replications}, "
            f"{100 * self.confidence:g}% CI, seed={self.seed}: {rows})"
        )


@dataclass(frozen=True, repr=False)
class StorageSimulationResult:
    """Estimates of :func:`qnmodel.simulate_storage`, one row per population or rate.

    Every estimate ``x`` has ``x_halfwidth``: a Student-t 95 % confidence interval
    ``x +- x_halfwidth`` over :attr:`replications` independent runs (0 for one run).

    Attributes
    ----------
    method : str
        Names the simulation (fluid max-min fair links ...).
    n : ndarray (P,) of int or None
        Closed populations (None for an open run).
    arrival_rate : ndarray (P,) or None
        Open Poisson rates lambda, 1/s (None for a closed run).
    think_time : float
        Z, s (closed).
    response_time, response_time_halfwidth : ndarray (P,)
        Mean response time of a request (think time excluded), s.
    throughput, throughput_halfwidth : ndarray (P,)
        Completed requests per second.
    jobs : int
        Counted requests per run.
    replications : int
        Independent runs per point.
    warmup : int
        Requests discarded at the start of each run.
    seed : int
        The seed that reproduces this result bit for bit.
    """

    method: str
    n: np.ndarray | None
    arrival_rate: np.ndarray | None
    think_time: float
    response_time: np.ndarray
    response_time_halfwidth: np.ndarray
    throughput: np.ndarray
    throughput_halfwidth: np.ndarray
    jobs: int
    replications: int
    warmup: int
    seed: int

    def __post_init__(self) -> None:
        _freeze(self)

    def to_frame(self) -> Any:
        """A pandas DataFrame: ``n`` or ``arrival_rate``, then throughput (1/s), response
        time (s) and their ``_halfwidth`` columns, one row per point."""
        pd = _import_pandas()
        key = {"n": self.n} if self.n is not None else {"arrival_rate": self.arrival_rate}
        return pd.DataFrame(
            {
                **key,
                "throughput": self.throughput,
                "throughput_halfwidth": self.throughput_halfwidth,
                "response_time": self.response_time,
                "response_time_halfwidth": self.response_time_halfwidth,
            }
        )

    def __repr__(self) -> str:
        if self.n is not None:
            keys = [f"N={int(v)}" for v in self.n]
        else:
            keys = [f"lambda={v:.6g}/s" for v in self.arrival_rate]
        rows = "; ".join(
            f"{k}: X={x:.6g}+-{hx:.2g}/s "
            f"R={format_quantity(r, 'time')} +- {format_quantity(hr, 'time', digits=2)}"
            for k, x, hx, r, hr in zip(
                keys,
                self.throughput,
                self.throughput_halfwidth,
                self.response_time,
                self.response_time_halfwidth,
                strict=True,
            )
        )
        return (
            f"StorageSimulationResult(n={self.replications} runs of {self.jobs} requests, "
            f"95% CI, seed={self.seed}: {rows})"
        )
