"""Frozen result objects of open and mixed networks, and of the capacity questions.

Same field names as :mod:`qnmodel.results.closed` (``throughput``, ``response_time``,
``queue_length``, ``utilization``, ``residence_time``): an :class:`OpenResult` is indexed
by operating point (and class), a :class:`MixedResult` by class. Arrays are read-only;
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

from ..units import format_quantity
from ._laws import ResponseTimeQuantile
from .closed import _freeze, _import_pandas, bad_level, shorten, station_frame

__all__ = ["OpenResult", "MixedResult", "UpgradeResult"]


@dataclass(frozen=True, repr=False)
class OpenResult(ResponseTimeQuantile):
    """Mean values of an open network: the result of :func:`qnmodel.open_network`.

    Rows p are the operating points (one vector of arrival rates each: a sweep has several,
    a single call one). A network without classes has one class and its class axis is
    dropped; with classes, per-class values carry a class axis c after the row axis.

    Every residence time has the form R_pck = D_ck h_pk + V_ck w_pk: product-form stations
    have the stretch h = g = R / D of the isolated station and w = 0 ([LZGS] sec. 7.4.1); a
    FCFS station whose classes have different service times has h = 1 and the mean FCFS
    wait per visit w (approximate, the method label says so). Per-class arrays that would
    need (P, C, K) are formed when asked for.

    Attributes
    ----------
    method : str
        ``"open"``, or ``"open (approximate: ...)"`` naming what is approximated.
    class_names : tuple of str
    single : bool
        The network has no classes: arrays have no class axis.
    rates : ndarray (P, C)
        lambda_pc, jobs/s.
    arrival_rate, throughput : ndarray (P,) or (P, C)
        lambda (single) or lambda_pc; X = lambda in steady state.
    response_time : ndarray (P,) or (P, C)
        R = sum_k R_k, seconds.
    stretch, wait : ndarray (P, K)
        h_pk and w_pk above (inf in an unstable row kept with ``unstable="inf"``).
    residence_time, queue_length, utilization : ndarray (P, K) or (P, C, K)
        R_k, Q_k = X R_k, U_k = X D_k / c_k (per class with classes).
    offered_load : ndarray (P, K)
        a_pk = sum_c lambda_pc D_ck, Erlangs.
    station_queue_length, station_utilization : ndarray (P, K)
        Q and U of each station, all classes.
    station_names : tuple of str
    demands, visits : ndarray (C, K)
    is_delay : ndarray (K,) of bool
    capacity : ndarray (K,)
        c_k (1 for delay stations).
    saturation_scale : ndarray (P,)
        Per row, the factor by which its rates could grow before the busiest queueing
        station reaches U = 1 (inf without load).
    saturation_arrival_rate : float or ndarray (P, C)
        Single class: lambda_sat = min_k c_k / D_k, the largest sustainable rate; with
        classes, the rates of each row scaled by its ``saturation_scale``.
    bottleneck_index : ndarray (P,) of int
    bottleneck : str
        The station that saturates first at the last row.
    """

    _NO_LAW = (
        "the law is kept for a network without classes solved at one arrival rate "
        "(qnmodel.open_network(net, rate).response_time_quantile(q))"
    )

    method: str
    class_names: tuple[str, ...]
    single: bool
    rates: np.ndarray
    response: np.ndarray
    stretch: np.ndarray
    wait: np.ndarray
    station_names: tuple[str, ...]
    demands: np.ndarray
    visits: np.ndarray
    is_delay: np.ndarray
    capacity: np.ndarray
    saturation_scale: np.ndarray
    bottleneck_index: np.ndarray

    def __post_init__(self) -> None:
        _freeze(self)

    def _shape(self, a: np.ndarray) -> np.ndarray:
        return a[:, 0] if self.single else a

    @property
    def arrival_rate(self) -> np.ndarray:
        """lambda (P,) or lambda_pc (P, C), jobs/s."""
        return self._shape(self.rates)

    @property
    def throughput(self) -> np.ndarray:
        """X = lambda (every offered job is served in steady state)."""
        return self.arrival_rate

    @property
    def response_time(self) -> np.ndarray:
        """R (P,) or R_pc (P, C), seconds."""
        return self._shape(self.response)

    def class_residence_time(self, cls: Any) -> np.ndarray:
        """R_pck (P, K) of one class (name or index), seconds."""
        c = self.class_names.index(cls) if isinstance(cls, str) else int(cls)
        with np.errstate(invalid="ignore"):
            return self.demands[c][None, :] * self.stretch + self.visits[c][None, :] * self.wait

    @property
    def residence_time(self) -> np.ndarray:
        """R_pk (P, K) or R_pck (P, C, K), seconds."""
        out = np.stack([self.class_residence_time(c) for c in range(len(self.class_names))], 1)
        return out[:, 0] if self.single else out

    @property
    def queue_length(self) -> np.ndarray:
        """Q = X R per station (P, K), or per class and station (P, C, K) (Little's law)."""
        R = self.residence_time
        return self.rates[:, :, None] * R if not self.single else self.rates[:, :1] * R

    @property
    def utilization(self) -> np.ndarray:
        """U = X D / c per station (P, K), or per class and station (P, C, K)."""
        U = self.rates[:, :, None] * (self.demands / self.capacity[None, :])[None, :, :]
        return U[:, 0] if self.single else U

    @property
    def offered_load(self) -> np.ndarray:
        """a_pk = sum_c lambda_pc D_ck (P, K), Erlangs."""
        return self.rates @ self.demands

    @property
    def station_queue_length(self) -> np.ndarray:
        """Q_pk, all classes (P, K)."""
        Q = self.queue_length
        return Q if self.single else Q.sum(axis=1)

    @property
    def station_utilization(self) -> np.ndarray:
        """U_pk, all classes (P, K)."""
        return self.offered_load / self.capacity[None, :]

    @property
    def system_queue_length(self) -> np.ndarray:
        """Mean jobs in the network per row (P,), = sum_c X_c R_c (Little's law)."""
        return (self.rates * self.response).sum(axis=1)

    @property
    def saturation_arrival_rate(self) -> Any:
        """lambda_sat = min_k c_k / D_k over queueing stations (single class, a float, inf
        without one), or the rates of each row scaled to saturation (P, C)."""
        if self.single:
            D = self.demands[0]
            live = ~self.is_delay & (D > 0)
            return float((self.capacity[live] / D[live]).min()) if live.any() else float("inf")
        with np.errstate(invalid="ignore"):
            return np.where(self.rates > 0, self.saturation_scale[:, None] * self.rates, np.inf)

    @property
    def bottleneck(self) -> str:
        """The station that saturates first at the last row."""
        return self.station_names[int(self.bottleneck_index[-1])]

    def to_frame(self, level: str = "system") -> Any:
        """A DataFrame of the results.

        ``level="system"``: one row per point (single class: ``arrival_rate, throughput,
        response_time, system_queue_length``; with classes one row per (point, class):
        ``point, class, arrival_rate, throughput, response_time``). ``level="station"``:
        tidy, one row per (point, station) with ``arrival_rate`` (single class) or
        ``point``, ``station, queue_length, utilization`` and, single class,
        ``residence_time``.
        """
        pd = _import_pandas()
        P, C = self.rates.shape
        if level == "system":
            if self.single:
                return pd.DataFrame({
                    "arrival_rate": self.arrival_rate, "throughput": self.throughput,
                    "response_time": self.response_time,
                    "system_queue_length": self.system_queue_length,
                })  # fmt: skip
            return pd.DataFrame({
                "point": np.repeat(np.arange(P), C),
                "class": np.tile(np.array(self.class_names, dtype=object), P),
                "arrival_rate": self.rates.ravel(), "throughput": self.rates.ravel(),
                "response_time": self.response.ravel(),
            })  # fmt: skip
        if level == "station":
            if self.single:
                return station_frame("arrival_rate", self.arrival_rate, self, throughput=False)
            K = len(self.station_names)
            return pd.DataFrame({
                "point": np.repeat(np.arange(P), K),
                "station": np.tile(np.array(self.station_names, dtype=object), P),
                "queue_length": self.station_queue_length.ravel(),
                "utilization": self.station_utilization.ravel(),
            })  # fmt: skip
        raise bad_level(level, ("system", "station"))

    def __repr__(self) -> str:
        P, C = self.rates.shape
        last = self.rates[-1]
        if self.single:
            lam = self.rates[:, 0]
            rng = f"{lam[0]:.6g}/s" if P == 1 else f"{lam[0]:.6g}..{lam[-1]:.6g}/s"
            return (
                f"OpenResult(method={self.method!r}, lambda={rng} ({P} rates),\n"
                f"  R={format_quantity(self.response[-1, 0], 'time')} at lambda={lam[-1]:.6g}/s, "
                f"lambda_sat={self.saturation_arrival_rate:.6g}/s, "
                f"bottleneck={self.bottleneck!r})"
            )
        cls = shorten(", ".join(
            f"{n}: lambda={x:.6g}/s R={format_quantity(r, 'time')}"
            for n, x, r in zip(self.class_names, last, self.response[-1], strict=True)
        ))  # fmt: skip
        return (
            f"OpenResult(method={self.method!r}, {P} point{'s' if P > 1 else ''}, last:\n"
            f"  {cls},\n  bottleneck={self.bottleneck!r}, "
            f"saturation_scale={self.saturation_scale[-1]:.6g})"
        )


@dataclass(frozen=True, repr=False)
class MixedResult(ResponseTimeQuantile):
    """Mean values of a mixed network (open and closed classes) at one workload: the result
    of :func:`qnmodel.mixed_network`.

    Attributes
    ----------
    method : str
        ``"mixed.mva"`` (closed classes by exact MVA) or ``"mixed.amva ..."`` (closed
        classes by approximate MVA; the label says "approximate").
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

    _NO_LAW = "the response-time laws here are single-class, not mixed networks"

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
            f"{n}: "
            + (f"lambda={lam:.6g}/s" if o else f"N={int(p)}")
            + f" X={x:.6g}/s R={format_quantity(r, 'time')}"
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
            f"MixedResult(method={self.method!r},\n  {cls},\n"
            f"  bottleneck={self.bottleneck!r}, saturation_scale={self.saturation_scale:.6g})"
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
        The workload solved (``"arrival_rate=..."`` or ``"N=..."``).
    metric : str
        What ``response_time`` holds: ``"R"`` (the mean, default) or a percentile
        such as ``"p95"``.
    target : str or None
        The target the options were checked against, if one was given.
    meets_target : ndarray (n,) of bool or None
        Whether each option meets ``target``.
    speedup : float
        The device speedup factor k of the "k x faster" options (service times divided
        by k).
    response_time_ratio : ndarray (n,)
        baseline / value of each option: how many times shorter the response time (or
        percentile) gets (0 for an option that stays unstable; inf when it makes an
        unstable baseline stable). Not the device speedup: a device 2x faster at a
        station that holds a third of R gives a ratio near 1.5.
    """

    options: tuple[str, ...]
    response_time: np.ndarray
    baseline_response_time: float
    workload: str
    metric: str = "R"
    target: str | None = None
    meets_target: np.ndarray | None = None
    speedup: float = 2.0

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def best(self) -> str:
        """The upgrade with the lowest response time."""
        return self.options[0]

    @property
    def response_time_ratio(self) -> np.ndarray:
        """baseline / value per option (see the class docstring)."""
        base, v = self.baseline_response_time, self.response_time
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(np.isinf(v), 0.0, base / v)
        ratio.setflags(write=False)
        return ratio

    def to_frame(self) -> Any:
        """One row per upgrade: ``option, response_time, response_time_ratio``
        (baseline / value).

        With a target, also ``meets_target``; ``response_time`` holds :attr:`metric`.
        """
        pd = _import_pandas()
        cols = {
            "option": list(self.options),
            "response_time": self.response_time,
            "response_time_ratio": self.response_time_ratio,
        }
        if self.meets_target is not None:
            cols["meets_target"] = self.meets_target
        return pd.DataFrame(cols)

    def __repr__(self) -> str:
        rows = ", ".join(
            f"{o}: R={format_quantity(r, 'time')}"
            for o, r in zip(self.options[:4], self.response_time, strict=False)
        )
        more = ", ..." if len(self.options) > 4 else ""
        metric = "" if self.metric == "R" else f"{self.metric}, "
        base = "R" if self.metric == "R" else self.metric
        return (
            f"UpgradeResult({self.workload}, {metric}baseline {base}="
            f"{format_quantity(self.baseline_response_time, 'time')},\n  {rows}{more})"
        )
