"""Frozen result objects of open and mixed networks.

Same field names as :mod:`qnmodel.results.closed` (``throughput``, ``response_time``,
``queue_length``, ``utilization``, ``residence_time``), indexed by the arrival rate
of a sweep (single class) or by class (several classes). Arrays are read-only;
``to_frame()`` imports pandas only when called.

Glossary (open class c, arrival rate lambda_c, station k, demand D_ck)
--------------------------------------------------------------------
X_c       class throughput, jobs/s: X_c = lambda_c in steady state (open class)
R_ck      residence time of class c at station k, s, all visits included
Q_ck      mean class-c jobs at station k: Q_ck = X_c R_ck                (Little's law)
U_ck      class-c utilisation of station k's capacity: U_ck = X_c D_ck / c_k, where the
          capacity c_k is 1 (single server), m (m servers) or the largest rate
          multiplier (load-dependent station); for a delay station X_c D_ck, the mean
          number of busy servers                                          (utilisation law)
R_c       class response time, s: R_c = sum_k R_ck
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .closed import _freeze, _import_pandas, bad_level, shorten, station_frame

__all__ = ["OpenResult", "OpenMultiClassResult", "OpenSweepResult", "UpgradeResult"]


@dataclass(frozen=True, repr=False)
class OpenResult:
    """Mean values of an open single-class network, one row per arrival rate.

    Attributes
    ----------
    method : str
        ``"open"``.
    arrival_rate : ndarray (P,)
        Offered arrival rates lambda, jobs/s (the rows of a sweep).
    throughput : ndarray (P,)
        X = lambda, jobs/s (every offered job is served in steady state).
    response_time : ndarray (P,)
        R = sum_k R_k, seconds.
    queue_length : ndarray (P, K)
        Q_k, mean jobs at station k (waiting plus in service).
    utilization : ndarray (P, K)
        U_k = lambda D_k / c_k (capacity c_k: 1, m servers, or the largest rate
        multiplier); delay stations: lambda D_k, the mean busy servers.
    residence_time : ndarray (P, K)
        R_k, seconds per job over all its visits.
    station_names : tuple of str
    demands : ndarray (K,)
        D_k, seconds.
    is_delay : ndarray (K,) of bool
    capacity : ndarray (K,)
        c_k (1 for delay stations).
    saturation_arrival_rate : float
        lambda_sat = min_k c_k / D_k over queueing stations: the largest arrival rate
        the network sustains (inf if no queueing station has a demand).
    bottleneck : str
        The station that attains lambda_sat.
    """

    method: str
    arrival_rate: np.ndarray
    throughput: np.ndarray
    response_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    residence_time: np.ndarray
    station_names: tuple[str, ...]
    demands: np.ndarray
    is_delay: np.ndarray
    capacity: np.ndarray
    saturation_arrival_rate: float
    bottleneck: str

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def system_queue_length(self) -> np.ndarray:
        """Mean jobs in the network, sum_k Q_k (P,) (equals X R by Little's law)."""
        return self.queue_length.sum(axis=1)

    def to_frame(self, level: str = "system") -> Any:
        """A DataFrame of the results.

        ``level="system"``: one row per arrival rate with ``arrival_rate, throughput,
        response_time, system_queue_length``. ``level="station"``: tidy, one row per
        (arrival rate, station) with ``arrival_rate, station, queue_length,
        utilization, residence_time``.
        """
        pd = _import_pandas()
        if level == "system":
            return pd.DataFrame(
                {
                    "arrival_rate": self.arrival_rate,
                    "throughput": self.throughput,
                    "response_time": self.response_time,
                    "system_queue_length": self.system_queue_length,
                }
            )
        if level == "station":
            return station_frame("arrival_rate", self.arrival_rate, self, throughput=False)
        raise bad_level(level, ("system", "station"))

    def __repr__(self) -> str:
        lam = self.arrival_rate
        rng = f"{lam[0]:.6g}/s" if lam.size == 1 else f"{lam[0]:.6g}..{lam[-1]:.6g}/s"
        return (
            f"OpenResult(method={self.method!r}, lambda={rng} ({lam.size} rates),\n"
            f"  R={self.response_time[-1]:.6g}s at lambda={lam[-1]:.6g}/s, "
            f"lambda_sat={self.saturation_arrival_rate:.6g}/s, bottleneck={self.bottleneck!r})"
        )


@dataclass(frozen=True, repr=False)
class OpenMultiClassResult:
    """Mean values of an open or mixed multi-class network at one workload.

    Attributes
    ----------
    method : str
        ``"open"``, ``"mixed.mva"`` (closed classes by exact MVA) or ``"mixed.amva"``
        (closed classes by approximate MVA).
    class_names : tuple of str
    is_open : ndarray (C,) of bool
        Which classes are open.
    arrival_rate : ndarray (C,)
        lambda_c of open classes, jobs/s (0 for closed classes).
    population : ndarray (C,) of int
        N_c of closed classes (0 for open classes).
    think_time : ndarray (C,)
        Z_c of closed classes, seconds (0 for open classes).
    throughput : ndarray (C,)
        X_c, jobs/s (= lambda_c for an open class).
    response_time : ndarray (C,)
        R_c = sum_k R_ck, seconds (think time excluded).
    queue_length, utilization, residence_time : ndarray (C, K)
        Q_ck, U_ck, R_ck (see the module glossary).
    station_names : tuple of str
    demands : ndarray (C, K)
        D_ck, seconds.
    is_delay : ndarray (K,) of bool
    capacity : ndarray (K,)
        c_k (1 for delay stations).
    saturation_scale : float
        The factor s_max = min_k c_k / sum_{c open} lambda_c D_ck over queueing
        stations: scaling every open arrival rate by less than s_max keeps the
        network stable (inf without open load).
    bottleneck : str
        The station that attains s_max (with no open load: the busiest station).
    """

    method: str
    class_names: tuple[str, ...]
    is_open: np.ndarray
    arrival_rate: np.ndarray
    population: np.ndarray
    think_time: np.ndarray
    throughput: np.ndarray
    response_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    residence_time: np.ndarray
    station_names: tuple[str, ...]
    demands: np.ndarray
    is_delay: np.ndarray
    capacity: np.ndarray
    saturation_scale: float
    bottleneck: str

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def saturation_arrival_rate(self) -> np.ndarray:
        """s_max * lambda_c per class (C,): the open rates at which the bottleneck saturates."""
        return self.saturation_scale * self.arrival_rate

    @property
    def station_queue_length(self) -> np.ndarray:
        """Q_k = sum_c Q_ck (K,)."""
        return self.queue_length.sum(axis=0)

    @property
    def station_utilization(self) -> np.ndarray:
        """U_k = sum_c U_ck (K,)."""
        return self.utilization.sum(axis=0)

    def to_frame(self, level: str = "class") -> Any:
        """A DataFrame: ``level="class"`` one row per class (``class, open, arrival_rate,
        population, throughput, response_time``); ``level="station"`` one row per
        (class, station) (``class, station, queue_length, utilization, residence_time,
        throughput``)."""
        pd = _import_pandas()
        C, K = self.queue_length.shape
        names = np.array(self.class_names, dtype=object)
        if level == "class":
            return pd.DataFrame(
                {
                    "class": names,
                    "open": self.is_open,
                    "arrival_rate": self.arrival_rate,
                    "population": self.population.astype(np.int64),
                    "throughput": self.throughput,
                    "response_time": self.response_time,
                }
            )
        if level == "station":
            return station_frame("class", names, self)
        raise bad_level(level, ("class", "station"))

    def __repr__(self) -> str:
        cls = ", ".join(
            f"{n}: " + (f"lambda={lam:.6g}/s" if o else f"N={int(p)}") + f" X={x:.6g}/s R={r:.6g}s"
            for n, o, lam, p, x, r in zip(
                self.class_names,
                self.is_open,
                self.arrival_rate,
                self.population,
                self.throughput,
                self.response_time,
                strict=True,
            )
        )
        cls = shorten(cls)
        return (
            f"OpenMultiClassResult(method={self.method!r},\n  {cls},\n"
            f"  bottleneck={self.bottleneck!r}, saturation_scale={self.saturation_scale:.6g})"
        )


@dataclass(frozen=True, repr=False)
class OpenSweepResult:
    """Mean values of an open multi-class network over a sweep of rate vectors.

    One row p per vector of class arrival rates. Per-class values that would need a
    (P, C, K) array are formed on request (:meth:`residence_time_of`).

    Attributes
    ----------
    method : str
        ``"open"``.
    class_names : tuple of str
    arrival_rate : ndarray (P, C)
        lambda_pc, jobs/s; also the class throughputs (:attr:`throughput`).
    response_time : ndarray (P, C)
        R_pc = sum_k D_ck g_pk, seconds.
    offered_load : ndarray (P, K)
        a_pk = sum_c lambda_pc D_ck, Erlangs (a property: for a sweep along one rate
        vector it is formed from ``load_scale`` (P,) and ``load_base`` (K,) on request,
        otherwise stored in ``load_table``).
    stretch : ndarray (P, K)
        g_pk = R_pck / D_ck, the residence time of station k over its demand (the same
        for every class; inf in an unstable row kept with ``unstable="inf"``).
    station_names : tuple of str
    demands : ndarray (C, K)
    is_delay : ndarray (K,) of bool
    capacity : ndarray (K,)
        c_k (1 for delay stations).
    saturation_scale : ndarray (P,)
        Per row, the factor by which its rates could grow before the busiest queueing
        station reaches U = 1 (inf without load).
    bottleneck_index : ndarray (P,) of int
        Per row, the index of that station (:attr:`bottleneck` gives the names).
    """

    method: str
    class_names: tuple[str, ...]
    arrival_rate: np.ndarray
    response_time: np.ndarray
    stretch: np.ndarray
    station_names: tuple[str, ...]
    demands: np.ndarray
    is_delay: np.ndarray
    capacity: np.ndarray
    saturation_scale: np.ndarray
    bottleneck_index: np.ndarray
    load_table: np.ndarray | None = None
    load_scale: np.ndarray | None = None
    load_base: np.ndarray | None = None

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def offered_load(self) -> np.ndarray:
        """a_pk = sum_c lambda_pc D_ck (P, K), Erlangs."""
        if self.load_table is not None:
            return self.load_table
        return np.multiply.outer(self.load_scale, self.load_base)

    @property
    def throughput(self) -> np.ndarray:
        """X_pc = lambda_pc (P, C): every offered job is served in steady state."""
        return self.arrival_rate

    @property
    def utilization(self) -> np.ndarray:
        """U_pk = a_pk / c_k (P, K), station totals (delay: the mean busy servers)."""
        return self.offered_load / np.where(self.is_delay, 1.0, self.capacity)[None, :]

    @property
    def queue_length(self) -> np.ndarray:
        """Q_pk = a_pk g_pk (P, K), mean jobs at each station, all classes (Little)."""
        return self.offered_load * self.stretch

    @property
    def bottleneck(self) -> tuple[str, ...]:
        """Per row, the name of the station that saturates first."""
        return tuple(self.station_names[k] for k in self.bottleneck_index)

    def residence_time_of(self, cls: Any) -> np.ndarray:
        """R_pck = D_ck g_pk (P, K) of one class (name or index)."""
        c = self.class_names.index(cls) if isinstance(cls, str) else int(cls)
        return self.demands[c][None, :] * self.stretch

    def to_frame(self) -> Any:
        """A DataFrame with one row per (point, class): ``point, class, arrival_rate,
        response_time``."""
        pd = _import_pandas()
        P, C = self.arrival_rate.shape
        return pd.DataFrame(
            {
                "point": np.repeat(np.arange(P), C),
                "class": np.tile(np.array(self.class_names, dtype=object), P),
                "arrival_rate": self.arrival_rate.ravel(),
                "response_time": self.response_time.ravel(),
            }
        )

    def __repr__(self) -> str:
        P, C = self.arrival_rate.shape
        return (
            f"OpenSweepResult(method={self.method!r}, points={P}, classes={C}, "
            f"stations={len(self.station_names)})"
        )


@dataclass(frozen=True, repr=False)
class UpgradeResult:
    """Single upgrades ranked by the mean response time they give (best first).

    Attributes
    ----------
    options : tuple of str
        The upgrades, e.g. ``"disk: 2x faster"``, ``"disk: 3 servers"``.
    response_time : ndarray (n,)
        R with each upgrade, seconds (inf: the open network stays unstable).
    baseline_response_time : float
        R without any upgrade, seconds (inf if the open network is unstable).
    workload : str
        The workload solved (``"arrival_rate=..."`` or ``"population=..."``).
    metric : str
        What ``response_time`` holds: ``"R"`` (the mean, default) or a percentile
        such as ``"p95"``.
    target : str or None
        The target the options were checked against, if one was given.
    meets_target : ndarray (n,) of bool or None
        Whether each option meets ``target``.
    """

    options: tuple[str, ...]
    response_time: np.ndarray
    baseline_response_time: float
    workload: str
    metric: str = "R"
    target: str | None = None
    meets_target: np.ndarray | None = None

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def best(self) -> str:
        """The upgrade with the lowest response time."""
        return self.options[0]

    def to_frame(self) -> Any:
        """One row per upgrade: ``option, response_time, speedup`` (baseline / value).

        With a target, also ``meets_target``; ``response_time`` holds :attr:`metric`.
        """
        pd = _import_pandas()
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = self.baseline_response_time / self.response_time
        cols = {"option": list(self.options), "response_time": self.response_time, "speedup": gain}
        if self.meets_target is not None:
            cols["meets_target"] = self.meets_target
        return pd.DataFrame(cols)

    def __repr__(self) -> str:
        rows = ", ".join(
            f"{o}: R={r:.6g}s" for o, r in zip(self.options[:4], self.response_time, strict=False)
        )
        more = ", ..." if len(self.options) > 4 else ""
        metric = "" if self.metric == "R" else f"{self.metric}, "
        base = "R" if self.metric == "R" else self.metric
        return (
            f"UpgradeResult({self.workload}, {metric}baseline {base}="
            f"{self.baseline_response_time:.6g}s,\n  {rows}{more})"
        )
