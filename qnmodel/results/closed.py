"""Frozen result objects returned by the solvers.

Every result shares field names across solvers: ``n`` (populations),
``throughput`` X, ``response_time`` R (excluding think time Z),
``queue_length`` Q_k, ``utilization`` U_k and ``residence_time`` R_k.
Arrays are read-only. ``to_frame()`` returns a pandas DataFrame (pandas is
imported only when it is called).

Glossary (single class, population n, station k, demand D_k, think time Z)
-------------------------------------------------------------------------
X(n)      system throughput, jobs/s; X(n) = n / (R(n) + Z)           (Little's law)
R(n)      response time, s, summed over stations: R(n) = sum_k R_k(n)
R_k(n)    residence time at station k, s, all visits included
Q_k(n)    mean number of jobs at station k: Q_k(n) = X(n) R_k(n)     (Little's law)
U_k(n)    utilisation of one server of station k: U_k = X(n) D_k / m_k (utilisation law);
          for a delay station it is the mean number of busy servers X(n) D_k
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ..units import format_quantity
from ._laws import ResponseTimeQuantile
from ._rows import ByPopulation

__all__ = ["BoundsResult", "MVAResult", "MultiClassResult", "AMVAResult"]


def _freeze(obj: Any) -> None:
    """Make every ndarray field of a frozen dataclass read-only.

    A writeable array (or a view of other memory) is copied, so the caller
    keeps its own array and the result cannot change under it. An array that
    owns its memory and is already read-only is adopted as it is: the solvers
    hand their freshly built arrays over that way (see :func:`handover`),
    because copying a 10^4 x 100 curve costs more than computing it.
    """
    for f in fields(obj):
        v = getattr(obj, f.name)
        if isinstance(v, np.ndarray):
            if v.base is not None or v.flags.writeable:
                v = np.array(v, copy=True)
            v.setflags(write=False)
            object.__setattr__(obj, f.name, v)


def handover(*arrays: np.ndarray) -> None:
    """Mark freshly built, solver-owned arrays read-only so a result adopts them uncopied."""
    for a in arrays:
        if isinstance(a, np.ndarray) and a.base is None:
            a.setflags(write=False)


def station_frame(key: str, keys: Any, result: Any, throughput: bool = True) -> Any:
    """The tidy per-station table of a result: one row per (``key`` value, station).

    ``keys`` label the result's rows (populations, classes or arrival rates); the columns
    are ``key, station, queue_length, utilization, residence_time`` and, with
    ``throughput``, the row's throughput. The one builder of every result's station table.
    """
    pd = _import_pandas()
    P, K = result.queue_length.shape
    cols = {
        key: np.repeat(np.asarray(keys), K),
        "station": np.tile(np.array(result.station_names, dtype=object), P),
        "queue_length": result.queue_length.ravel(),
        "utilization": result.utilization.ravel(),
        "residence_time": result.residence_time.ravel(),
    }
    if throughput:
        cols["throughput"] = np.repeat(result.throughput, K)
    return pd.DataFrame(cols)


def bounds_frame(lead: dict[str, Any], result: Any) -> Any:
    """The table of a bounds result: the ``lead`` columns (what labels the rows), then
    ``throughput_lower, throughput_upper, response_time_lower, response_time_upper``.
    The one builder of every bounds result's table.
    """
    pd = _import_pandas()
    return pd.DataFrame(
        {
            **lead,
            "throughput_lower": result.throughput_lower,
            "throughput_upper": result.throughput_upper,
            "response_time_lower": result.response_time_lower,
            "response_time_upper": result.response_time_upper,
        }
    )


def bad_level(level: str, allowed: tuple[str, ...]) -> Exception:
    """The error for a ``to_frame`` level that does not exist."""
    from ..errors import InvalidModelError

    return InvalidModelError(
        f"level must be {' or '.join(repr(a) for a in allowed)}, got {level!r}"
    )


def shorten(text: str, limit: int = 300) -> str:
    """A repr part cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _import_pandas() -> Any:
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - pandas is a hard dependency
        raise ImportError("to_frame() needs pandas: pip install pandas") from exc
    return pd


@dataclass(frozen=True, repr=False)
class BoundsResult(ByPopulation):
    """Asymptotic (ABA) or balanced-job (BJB) bounds for n = 1..N.

    Attributes
    ----------
    method : str
        ``"aba"`` or ``"bjb"``.
    n : ndarray (N,)
        Populations 1..N.
    throughput_lower, throughput_upper : ndarray (N,)
        Bounds on X(n), jobs/s.
    response_time_lower, response_time_upper : ndarray (N,)
        Bounds on R(n), seconds (think time excluded).
    station_names : tuple of str
    think_time : float
        Z, seconds.
    total_demand : float
        D = sum_k D_k, seconds.
    max_demand : float
        D_max over queueing stations (per server for multi-server stations).
    bottleneck : str
        Name of the station with the largest per-server demand.
    saturation_throughput : float
        1 / D_max, jobs/s: the asymptote of X(n).
    n_star : float
        The knee N* = (D + Z) / D_max where the two ABA throughput asymptotes
        meet; below it the light-load bound binds, above it the bottleneck.
    """

    method: str
    n: np.ndarray
    throughput_lower: np.ndarray
    throughput_upper: np.ndarray
    response_time_lower: np.ndarray
    response_time_upper: np.ndarray
    station_names: tuple[str, ...]
    think_time: float
    total_demand: float
    max_demand: float
    bottleneck: str
    saturation_throughput: float
    n_star: float

    _ROW_FIELDS = ("throughput_lower", "throughput_upper", "response_time_lower",
                   "response_time_upper")  # fmt: skip

    def __post_init__(self) -> None:
        _freeze(self)

    def to_frame(self) -> Any:
        """One row per population: n, method, X bounds (jobs/s), R bounds (s)."""
        return bounds_frame({"n": self.n.astype(np.int64), "method": self.method}, self)

    def __repr__(self) -> str:
        N = int(self.n[-1])
        return (
            f"BoundsResult(method={self.method!r}, n=1..{N}, bottleneck={self.bottleneck!r}, "
            f"N*={self.n_star:.4g}, X_sat={self.saturation_throughput:.6g}/s,\n"
            f"  X({N}) in [{self.throughput_lower[-1]:.6g}, {self.throughput_upper[-1]:.6g}] /s, "
            f"R({N}) in [{format_quantity(self.response_time_lower[-1], 'time')}, "
            f"{format_quantity(self.response_time_upper[-1], 'time')}])"
        )


@dataclass(frozen=True, repr=False)
class MVAResult(ByPopulation, ResponseTimeQuantile):
    """Mean values of a closed single-class network for n = 1..N (or selected n).

    Attributes
    ----------
    method : str
        Algorithm that produced the result (e.g. ``"mva.exact"``, ``"mva.ld"``).
    n : ndarray (P,)
        Populations the rows refer to (1..N unless only the last was kept); ``at(n)`` is
        the row of population n (:class:`~qnmodel.results._rows.PopulationRow`).
    throughput : ndarray (P,)
        X(n), jobs/s.
    response_time : ndarray (P,)
        R(n) = sum_k R_k(n), seconds, think time excluded.
    queue_length : ndarray (P, K)
        Q_k(n), mean jobs at each station (waiting plus in service).
    utilization : ndarray (P, K)
        U_k(n) = X(n) D_k / m_k (delay stations: X(n) D_k, the mean busy servers).
    residence_time : ndarray (P, K)
        R_k(n), seconds per job over all its visits.
    station_names : tuple of str
    think_time : float
        Z, seconds.
    demands : ndarray (K,)
        D_k used, seconds.
    is_delay : ndarray (K,) of bool or None
        Which stations are infinite-server (None when the producer did not say).
    """

    method: str
    n: np.ndarray
    throughput: np.ndarray
    response_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    residence_time: np.ndarray
    station_names: tuple[str, ...]
    think_time: float
    demands: np.ndarray
    is_delay: np.ndarray | None = None

    _ROW_FIELDS = ("throughput", "response_time", "queue_length", "utilization", "residence_time")

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def bottleneck(self) -> str:
        """Queueing station with the highest per-server utilisation at the largest population.

        Delay stations are skipped (their "utilisation" X D_k counts busy servers and can
        exceed 1 without anybody waiting) unless every station is a delay.
        """
        u = np.asarray(self.utilization[-1], dtype=np.float64)
        if self.is_delay is not None and not np.all(self.is_delay):
            u = np.where(self.is_delay, -np.inf, u)
        return self.station_names[int(np.argmax(u))]

    def to_frame(self, level: str = "system") -> Any:
        """A DataFrame of the results.

        ``level="system"``: one row per n with ``n, throughput, response_time``
        and ``system_queue_length`` (jobs in the stations, excluding thinkers).
        ``level="station"``: tidy, one row per (n, station) with
        ``n, station, queue_length, utilization, residence_time, throughput``.
        """
        pd = _import_pandas()
        if level == "system":
            return pd.DataFrame(
                {
                    "n": self.n.astype(np.int64),
                    "throughput": self.throughput,
                    "response_time": self.response_time,
                    "system_queue_length": self.queue_length.sum(axis=1),
                }
            )
        if level == "station":
            return station_frame("n", self.n.astype(np.int64), self)
        raise bad_level(level, ("system", "station"))

    def __repr__(self) -> str:
        N = int(self.n[-1])
        per = ", ".join(
            f"{name}: U={u:.4g} Q={q:.4g}"
            for name, u, q in zip(
                self.station_names, self.utilization[-1], self.queue_length[-1], strict=True
            )
        )
        per = shorten(per)
        return (
            f"MVAResult(method={self.method!r}, n={int(self.n[0])}..{N}, "
            f"Z={format_quantity(self.think_time, 'time')},\n"
            f"  X({N})={self.throughput[-1]:.6g}/s, "
            f"R({N})={format_quantity(self.response_time[-1], 'time')}, "
            f"bottleneck={self.bottleneck!r},\n  {per})"
        )


@dataclass(frozen=True, repr=False)
class MultiClassResult(ResponseTimeQuantile):
    """Mean values of a closed multi-class network at one population vector.

    Same field names as :class:`MVAResult`, indexed by class c (rows) instead
    of population n.

    Glossary (class c, station k, demand D_ck, think time Z_c, population N_c)
    ----------------------------------------------------------------------------
    X_c      class throughput, jobs/s; X_c = N_c / (Z_c + R_c)          (Little's law)
    R_c      class response time, s: R_c = sum_k R_ck (think time excluded)
    R_ck     residence time of class c at station k, s, all visits included
    Q_ck     mean class-c jobs at station k: Q_ck = X_c R_ck            (Little's law)
    U_ck     class-c utilisation of one server of station k: U_ck = X_c D_ck / c_k (c_k: m
             servers, or the peak of a rate curve);
             delay station: X_c D_ck (mean busy servers). Station total: sum_c U_ck.

    Attributes
    ----------
    method : str
        Algorithm (e.g. ``"mva.multiclass"``).
    population : ndarray (C,)
        Jobs per class N_c.
    throughput : ndarray (C,)
        X_c, jobs/s.
    response_time : ndarray (C,)
        R_c, seconds.
    queue_length : ndarray (C, K)
        Q_ck, jobs.
    utilization : ndarray (C, K)
        U_ck (fraction of one server's time).
    residence_time : ndarray (C, K)
        R_ck, seconds.
    station_names : tuple of str
    think_time : ndarray (C,)
        Z_c, seconds.
    demands : ndarray (C, K)
        D_ck used, seconds.
    servers : ndarray (K,)
        Servers per station (1 at delay stations, which have infinitely many).
    is_delay : ndarray (K,) of bool
        Which stations are delay (infinite-server) stations.
    class_names : tuple of str or None
        Class names, when the model named them.
    peak_rate : ndarray (K,) or None
        c_k = max_j r_k(j) of multi-server and load-dependent stations (m for m servers,
        1 for single-server and delay stations); U_ck = X_c D_ck / c_k.
    idle_probability : ndarray (K,) or None
        p_k(0 | N) at multi-server and load-dependent stations (NaN elsewhere), when the
        solver computed it.
    """

    _NO_LAW = (
        "the response-time laws here are single-class (a network with one closed class: "
        "qnmodel.mva(net, N).response_time_quantile(q))"
    )

    method: str
    population: np.ndarray
    throughput: np.ndarray
    response_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    residence_time: np.ndarray
    station_names: tuple[str, ...]
    think_time: np.ndarray
    demands: np.ndarray
    servers: np.ndarray
    is_delay: np.ndarray
    class_names: tuple[str, ...] | None = None
    peak_rate: np.ndarray | None = None
    idle_probability: np.ndarray | None = None

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def _labels(self) -> np.ndarray:
        C = self.throughput.shape[0]
        if self.class_names is None:
            return np.arange(C)
        return np.array(self.class_names, dtype=object)

    @property
    def station_queue_length(self) -> np.ndarray:
        """Q_k = sum_c Q_ck, mean jobs at each station (K,)."""
        return self.queue_length.sum(axis=0)

    @property
    def station_utilization(self) -> np.ndarray:
        """U_k = sum_c U_ck, utilisation of one server of each station (K,)."""
        return self.utilization.sum(axis=0)

    @property
    def bottleneck(self) -> str:
        """Station with the highest total utilisation (queueing stations only)."""
        u = np.where(self.is_delay, -np.inf, self.station_utilization)
        return self.station_names[int(np.argmax(u))]

    def to_frame(self, level: str = "class") -> Any:
        """A DataFrame of the results.

        ``level="class"``: one row per class with ``class, population, throughput,
        response_time``. ``level="station"``: tidy, one row per (class, station) with
        ``class, station, queue_length, utilization, residence_time, throughput``.
        """
        pd = _import_pandas()
        C, K = self.queue_length.shape
        if level == "class":
            return pd.DataFrame(
                {
                    "class": self._labels,
                    "population": self.population,
                    "throughput": self.throughput,
                    "response_time": self.response_time,
                }
            )
        if level == "station":
            return station_frame("class", self._labels, self)
        raise bad_level(level, ("class", "station"))

    def _extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        cls = ", ".join(
            f"{c if isinstance(c, str) else f'c{c}'}: N={int(n)} X={x:.6g}/s "
            f"R={format_quantity(r, 'time')}"
            for c, n, x, r in zip(
                self._labels.tolist(),
                self.population,
                self.throughput,
                self.response_time,
                strict=True,
            )
        )
        cls = shorten(cls)
        return (
            f"{type(self).__name__}(method={self.method!r}{self._extra_repr()},\n"
            f"  {cls},\n  bottleneck={self.bottleneck!r})"
        )


@dataclass(frozen=True, repr=False)
class AMVAResult(MultiClassResult, ByPopulation):
    """Approximate MVA (Schweitzer-Bard or Linearizer): the result of :func:`qnmodel.amva`.

    All fields of :class:`MultiClassResult`, whose rows are the classes of a multi-class
    network at its population vector, or, for a single-class network, the populations
    n = 1..N of its curve (``n``; ``population`` then holds the same n), plus the state of
    the fixed-point iteration of each row.

    Attributes
    ----------
    n : ndarray (P,) or None
        Single-class network: the populations of the rows (None with several classes).
    converged : ndarray of bool (rows,)
        True when the residual fell below ``tol`` within ``max_iter`` iterations (False only
        when ``amva(..., errors="warn")`` returned an unconverged point).
    iterations : ndarray of int (rows,)
        Fixed-point iterations performed (outer iterations for Linearizer).
    residual : ndarray (rows,)
        max_ck |Q_ck^(i) - Q_ck^(i-1)| / Q_ck^(i) at the last iteration (relative change
        of the queue lengths).
    tol : float
        Stopping tolerance used.
    """

    _NO_LAW = (
        "approximate MVA computes means only (exact MVA of a single-class network: "
        "qnmodel.mva(net, N).response_time_quantile(q))"
    )

    n: np.ndarray | None = None
    converged: np.ndarray | None = None
    iterations: np.ndarray | None = None
    residual: np.ndarray | None = None
    tol: float = 0.0

    _ROW_FIELDS = ("throughput", "response_time", "queue_length", "utilization",
                   "residence_time", "converged", "iterations", "residual")  # fmt: skip

    @property
    def _labels(self) -> np.ndarray:
        if self.n is not None:
            return self.n.astype(np.int64)
        return super()._labels

    def to_frame(self, level: str = "class") -> Any:
        """As :meth:`MultiClassResult.to_frame`, with ``converged`` and ``iterations`` per
        row; rows of a single-class curve are labelled by ``n`` (``level="system"`` is the
        same table)."""
        if self.n is not None and level in ("system", "class"):
            pd = _import_pandas()
            return pd.DataFrame({
                "n": self.n.astype(np.int64), "throughput": self.throughput,
                "response_time": self.response_time,
                "system_queue_length": self.queue_length.sum(axis=1),
                "converged": self.converged, "iterations": self.iterations,
            })  # fmt: skip
        df = super().to_frame(level)
        if level == "class":
            df["converged"] = self.converged
            df["iterations"] = self.iterations
        return df

    def _extra_repr(self) -> str:
        bad = int(np.count_nonzero(~self.converged)) if self.converged is not None else 0
        size = 0 if self.converged is None else self.converged.size
        return f", converged at {size - bad}/{size} rows"

    def __repr__(self) -> str:
        if self.n is None:
            return super().__repr__()
        N = int(self.n[-1])
        return (
            f"AMVAResult(method={self.method!r}, n={int(self.n[0])}..{N}{self._extra_repr()},"
            f"\n  X({N})={self.throughput[-1]:.6g}/s, "
            f"R({N})={format_quantity(self.response_time[-1], 'time')}, "
            f"bottleneck={self.bottleneck!r})"
        )
