"""Frozen result objects of the network-level kernels (bounds, normalising constants,
blocking, load-dependent multi-class MVA, routing and chains).

Same field names as :mod:`qnmodel.results` where the quantity is the same
(``throughput``, ``response_time``, ``queue_length``, ``utilization``, ``residence_time``,
``throughput_lower`` ...). Arrays are read-only; ``to_frame()`` imports pandas only when
called.

Glossary (class c, station k, demand D_ck = V_ck S_ck, population N_c, think time Z_c)
--------------------------------------------------------------------------------------
X_c          class throughput, jobs/s (cycles of class c through its reference station)
R_c          class response time, s, think time excluded; X_c = N_c / (Z_c + R_c)
R_ck         residence time of class c at station k, s, over all visits of one cycle
Q_ck         mean class-c jobs at station k: Q_ck = X_c R_ck              (Little's law)
U_ck         class-c share of station k's peak rate: X_c D_ck / c_k, c_k = 1, m or
             max_j r_k(j); a delay station: X_c D_ck, the mean busy servers
G(n)         normalising constant of the product-form solution at population n
p_k(j|N)     marginal probability of j jobs at station k with N jobs in the network
V_ck         visit ratio: visits of class c to station k per cycle of its chain
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._laws import ResponseTimeQuantile
from ._rows import ByPopulation
from .closed import MultiClassResult, _freeze, _import_pandas, bad_level, bounds_frame, shorten

__all__ = [
    "MultiClassBoundsResult",
    "OpenBoundsResult",
    "CurveBoundsResult",
    "NormalizingConstantResult",
    "BlockingMVAResult",
    "VisitsResult",
    "ChainMVAResult",
]


def _class_labels(C: int, names: tuple[str, ...] | None) -> np.ndarray:
    return np.arange(C) if names is None else np.array(names, dtype=object)


def _class_rows(row: Callable[..., str], *columns: np.ndarray) -> str:
    """The per-class part of a bounds repr: ``row(c, *values of class c)`` for each class c,
    joined by commas and shortened."""
    return shorten(", ".join(row(c, *v) for c, v in enumerate(zip(*columns, strict=True))))


@dataclass(frozen=True, repr=False)
class MultiClassBoundsResult:
    """Bounds on the throughput and response time of each class of a closed network.

    Attributes
    ----------
    method : str
        ``"multiclass.aba"``, ``"multiclass.bsb"`` or ``"multiclass.composite"``.
    population : ndarray (C,)
        N_c, jobs per class.
    throughput_lower, throughput_upper : ndarray (C,)
        Bounds on X_c, jobs/s (0 for a class with N_c = 0).
    response_time_lower, response_time_upper : ndarray (C,)
        Bounds on R_c, seconds, think time excluded (0 for a class with N_c = 0).
    think_time : ndarray (C,)
        Z_c, seconds.
    demands : ndarray (C, K)
        D_ck, seconds.
    class_names : tuple of str or None
    """

    method: str
    population: np.ndarray
    throughput_lower: np.ndarray
    throughput_upper: np.ndarray
    response_time_lower: np.ndarray
    response_time_upper: np.ndarray
    think_time: np.ndarray
    demands: np.ndarray
    class_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        _freeze(self)

    def to_frame(self) -> Any:
        """One row per class: class, population, X bounds (jobs/s), R bounds (s)."""
        labels = _class_labels(self.population.size, self.class_names)
        return bounds_frame({"class": labels, "population": self.population}, self)

    def __repr__(self) -> str:
        rows = _class_rows(
            lambda c, n, xl, xu, rl, ru: (
                f"c{c}: N={int(n)} X in [{xl:.6g}, {xu:.6g}]/s R in [{rl:.6g}, {ru:.6g}]s"
            ),
            self.population,
            self.throughput_lower,
            self.throughput_upper,
            self.response_time_lower,
            self.response_time_upper,
        )
        return f"MultiClassBoundsResult(method={self.method!r},\n  {rows})"


@dataclass(frozen=True, repr=False)
class OpenBoundsResult:
    """Bounds of an open network, per class (a single-class network has C = 1).

    Attributes
    ----------
    method : str
        ``"open.aba"`` or ``"open.bsb"``.
    arrival_rate : ndarray (C,)
        lambda_c, jobs/s.
    throughput_lower : ndarray (C,)
        0: an open network has no lower bound on the throughput it can carry.
    throughput_upper : ndarray (C,)
        1 / max_k D_ck, jobs/s: the largest class-c arrival rate the queueing stations
        sustain with no other class present.
    response_time_lower, response_time_upper : ndarray (C,)
        Bounds on R_c, seconds (``inf`` where there is none, e.g. ABA's upper bound).
    demands : ndarray (C, K)
        D_ck, seconds.
    """

    method: str
    arrival_rate: np.ndarray
    throughput_lower: np.ndarray
    throughput_upper: np.ndarray
    response_time_lower: np.ndarray
    response_time_upper: np.ndarray
    demands: np.ndarray

    def __post_init__(self) -> None:
        _freeze(self)

    def to_frame(self) -> Any:
        """One row per class: class, arrival_rate, X bounds (jobs/s), R bounds (s)."""
        lead = {"class": np.arange(self.arrival_rate.size), "arrival_rate": self.arrival_rate}
        return bounds_frame(lead, self)

    def __repr__(self) -> str:
        rows = _class_rows(
            lambda c, lam, xu, rl, ru: (
                f"c{c}: lambda={lam:.6g}/s X <= {xu:.6g}/s R in [{rl:.6g}, {ru:.6g}]s"
            ),
            self.arrival_rate,
            self.throughput_upper,
            self.response_time_lower,
            self.response_time_upper,
        )
        return f"OpenBoundsResult(method={self.method!r},\n  {rows})"


@dataclass(frozen=True, repr=False)
class CurveBoundsResult(ByPopulation):
    """Bounds of a closed single-class network over the populations n = 1..N.

    Attributes
    ----------
    method : str
        ``"geometric"`` (Z = 0), ``"geometric.sqrt"`` (Z > 0) or ``"proportional"``.
    n : ndarray (P,)
        Populations 1..N.
    throughput_lower, throughput_upper : ndarray (P,)
        Bounds on X(n), jobs/s.
    response_time_lower, response_time_upper : ndarray (P,)
        Bounds on R(n) = n / X(n) - Z, seconds.
    queue_length_lower, queue_length_upper : ndarray (P, K) or None
        Bounds on Q_k(n) (geometric bounds only).
    think_time : float
        Z, seconds.
    demands : ndarray (K,)
        D_k, seconds.
    """

    method: str
    n: np.ndarray
    throughput_lower: np.ndarray
    throughput_upper: np.ndarray
    response_time_lower: np.ndarray
    response_time_upper: np.ndarray
    think_time: float
    demands: np.ndarray
    queue_length_lower: np.ndarray | None = None
    queue_length_upper: np.ndarray | None = None

    _ROW_FIELDS = ("throughput_lower", "throughput_upper", "response_time_lower",
                   "response_time_upper", "queue_length_lower", "queue_length_upper")  # fmt: skip

    def __post_init__(self) -> None:
        _freeze(self)

    def to_frame(self) -> Any:
        """One row per population: n, method, X bounds (jobs/s), R bounds (s)."""
        return bounds_frame({"n": self.n.astype(np.int64), "method": self.method}, self)

    def __repr__(self) -> str:
        N = int(self.n[-1])
        return (
            f"CurveBoundsResult(method={self.method!r}, n=1..{N}, Z={self.think_time:.6g}s,\n"
            f"  X({N}) in [{self.throughput_lower[-1]:.6g}, {self.throughput_upper[-1]:.6g}]/s, "
            f"R({N}) in [{self.response_time_lower[-1]:.6g}, "
            f"{self.response_time_upper[-1]:.6g}]s)"
        )


@dataclass(frozen=True, repr=False)
class NormalizingConstantResult(ResponseTimeQuantile):
    """Product-form solution of a closed single-class network by convolution, at N jobs.

    Attributes
    ----------
    method : str
        ``"convolution"`` or ``"convolution.ld"``.
    population : int
        N.
    log_normalizing_constant : ndarray (N + 1,)
        ln G(n), n = 0..N (natural logarithm; G(0) = 1). G itself overflows double
        precision for large N or demands (see :attr:`normalizing_constant`).
    throughput : float
        X(N) = G(N-1) / G(N), jobs/s (cycles through the stations of demand D_k).
    response_time : float
        R(N) = N / X(N) - Z, seconds.
    queue_length : ndarray (K,)
        Q_k(N) = sum_j j p_k(j|N).
    utilization : ndarray (K,)
        ``"convolution"``: X D_k / m_k (delay stations X D_k); ``"convolution.ld"``:
        the busy probability 1 - p_k(0|N), summed as sum_{j>=1} p_k(j|N).
    residence_time : ndarray (K,)
        R_k = Q_k / X, seconds.
    marginal_probabilities : ndarray (K, N + 1)
        p_k(j|N), j = 0..N; each row sums to 1.
    demands : ndarray (K,)
        D_k (for ``"convolution.ld"``: the demand with one job, D_k(1)), seconds.
    think_time : float
        Z, seconds.
    """

    _NO_LAW = (
        "the convolution solver computes means and normalising constants only "
        "(qnmodel.mva(net, N).response_time_quantile(q) for the same network)"
    )

    method: str
    population: int
    log_normalizing_constant: np.ndarray
    throughput: float
    response_time: float
    queue_length: np.ndarray
    utilization: np.ndarray
    residence_time: np.ndarray
    marginal_probabilities: np.ndarray
    demands: np.ndarray
    think_time: float

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def normalizing_constant(self) -> np.ndarray:
        """G(n), n = 0..N, as exp(ln G): ``inf`` or 0 where G leaves double range."""
        with np.errstate(over="ignore", under="ignore"):
            return np.exp(self.log_normalizing_constant)

    def to_frame(self) -> Any:
        """One row per station: station, queue_length, utilization, residence_time."""
        pd = _import_pandas()
        return pd.DataFrame(
            {
                "station": np.arange(self.queue_length.size),
                "queue_length": self.queue_length,
                "utilization": self.utilization,
                "residence_time": self.residence_time,
            }
        )

    def __repr__(self) -> str:
        N = self.population
        return (
            f"NormalizingConstantResult(method={self.method!r}, N={N}, "
            f"ln G(N)={self.log_normalizing_constant[-1]:.10g},\n"
            f"  X={self.throughput:.6g}/s, R={self.response_time:.6g}s, "
            f"Q={shorten(np.array2string(self.queue_length, precision=4))})"
        )


@dataclass(frozen=True, repr=False)
class BlockingMVAResult(ResponseTimeQuantile):
    """Approximate MVA of a closed network with finite station capacities (MVABLO).

    Attributes
    ----------
    method : str
        ``"mvablo (approximate)"``.
    population : int
        N.
    throughput : float
        X, jobs/s: visits to the reference station per second (V_ref = 1).
    visits : ndarray (K,)
        V_k from the routing matrix.
    station_throughput : ndarray (K,)
        X_k = V_k X, jobs/s.
    response_time_per_visit : ndarray (K,)
        t_k, seconds per visit, blocking included (Octave ``qncsmvablo``'s R).
    residence_time : ndarray (K,)
        V_k t_k, seconds per cycle.
    queue_length : ndarray (K,)
        Q_k = X_k t_k, jobs (a blocked job counts at the station that holds it).
    utilization : ndarray (K,)
        X_k S_k.
    capacity : ndarray (K,)
        M_k, the most jobs station k holds (in service included).
    blocked : ndarray (K,) of bool
        Stations the approximation found full: their predecessors got a blocking time.
    blocking_time : ndarray (K,)
        Blocking time added to each station's response time per visit, seconds.
    service_times : ndarray (K,)
        S_k, seconds per visit.
    """

    _NO_LAW = "blocking MVA computes means only"

    method: str
    population: int
    throughput: float
    visits: np.ndarray
    station_throughput: np.ndarray
    response_time_per_visit: np.ndarray
    residence_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    capacity: np.ndarray
    blocked: np.ndarray
    blocking_time: np.ndarray
    service_times: np.ndarray

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def response_time(self) -> float:
        """R = sum_k V_k t_k = N / X, seconds per cycle."""
        return float(self.residence_time.sum())

    def to_frame(self) -> Any:
        """One row per station."""
        pd = _import_pandas()
        return pd.DataFrame(
            {
                "station": np.arange(self.visits.size),
                "visits": self.visits,
                "capacity": self.capacity,
                "throughput": self.station_throughput,
                "response_time_per_visit": self.response_time_per_visit,
                "queue_length": self.queue_length,
                "utilization": self.utilization,
                "blocked": self.blocked,
            }
        )

    def __repr__(self) -> str:
        return (
            f"BlockingMVAResult(method={self.method!r}, N={self.population}, "
            f"X={self.throughput:.6g}/s,\n  Q={np.array2string(self.queue_length, precision=4)}, "
            f"blocked={np.flatnonzero(self.blocked).tolist()})"
        )


@dataclass(frozen=True, repr=False)
class VisitsResult:
    """Visit ratios from a routing matrix, with the chains of a closed network.

    Attributes
    ----------
    method : str
        ``"visits.closed"`` or ``"visits.open"``.
    visits : ndarray (C, K)
        V_ck. Closed: per cycle of the class's chain, normalised so that the classes of
        a chain visit its reference station once per cycle in total,
        sum_{c in chain} V_{c, ref} = 1. Open: per job entering the network,
        V = lambda / sum(lambda) + V P.
    chains : ndarray (C,) of int or None
        Closed: the chain (0, 1, ...) of each class, -1 for a class that no job stays
        in (its routing is transient). None for open networks.
    reference : ndarray (n_chains,) of int or None
        The reference station of each chain.
    """

    method: str
    visits: np.ndarray
    chains: np.ndarray | None = None
    reference: np.ndarray | None = None

    def __post_init__(self) -> None:
        _freeze(self)

    @property
    def n_chains(self) -> int:
        """Number of chains (0 for an open network)."""
        return 0 if self.reference is None else int(self.reference.size)

    def chain_classes(self, chain: int) -> tuple[int, ...]:
        """The classes of one chain."""
        if self.chains is None:
            from ..errors import InvalidModelError

            raise InvalidModelError(
                "an open network has no chains: chain_classes() is for closed ones"
            )
        return tuple(int(c) for c in np.flatnonzero(self.chains == chain))

    def to_frame(self) -> Any:
        """Tidy: one row per (class, station) with visits and chain."""
        pd = _import_pandas()
        C, K = self.visits.shape
        cols = {
            "class": np.repeat(np.arange(C), K),
            "station": np.tile(np.arange(K), C),
            "visits": self.visits.ravel(),
        }
        if self.chains is not None:
            cols["chain"] = np.repeat(self.chains, K)
        return pd.DataFrame(cols)

    def __repr__(self) -> str:
        C, K = self.visits.shape
        extra = "" if self.chains is None else f", chains={self.chains.tolist()}"
        return (
            f"VisitsResult(method={self.method!r}, C={C}, K={K}{extra},\n"
            f"  visits={shorten(np.array2string(self.visits, precision=6))})"
        )


@dataclass(frozen=True, repr=False)
class ChainMVAResult(MultiClassResult):
    """Exact MVA of a closed network whose classes switch within chains.

    All fields of :class:`MultiClassResult`, per class, where X_c is the throughput of
    the class's chain (cycles per second; D_ck are per chain cycle), R_ck = D_ck F_k with
    F_k the chain's stretch at station k, Q_ck = X_c R_ck, U_ck = X_c D_ck / c_k. Within a
    chain only the total population matters: ``population`` keeps the per-class numbers
    given, and sum_k Q_ck (:attr:`class_jobs`) is the mean number of class-c jobs.

    Attributes
    ----------
    chains : ndarray (C,) of int
        Chain of each class.
    chain_population : ndarray (n_chains,)
        Jobs per chain, the sum of its classes' populations.
    chain_throughput : ndarray (n_chains,)
        Chain throughput, cycles per second.
    """

    chains: np.ndarray | None = None
    chain_population: np.ndarray | None = None
    chain_throughput: np.ndarray | None = None

    @property
    def class_jobs(self) -> np.ndarray:
        """Mean class-c jobs in the network, sum_k Q_ck (C,)."""
        return self.queue_length.sum(axis=1)

    def to_frame(self, level: str = "class") -> Any:
        """As :meth:`MultiClassResult.to_frame`, with the chain of each class."""
        df = super().to_frame(level)
        if level == "class":
            df["chain"] = self.chains
        elif level == "station":
            df["chain"] = np.repeat(self.chains, self.queue_length.shape[1])
        else:  # pragma: no cover - super() raised already
            raise bad_level(level, ("class", "station"))
        return df

    def _extra_repr(self) -> str:
        return f", chains={self.chains.tolist()}"
