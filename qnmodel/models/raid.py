"""RAID accelerator model: theoretical speedup, measured speedup and efficiency.

Chen et al. (seed 003) judge a RAID accelerator (Intel VROC over NVMe disks)
by three numbers ([Chen] sec. 1.3.2):

* the **measured speedup** S(L, C, B) = RAID measured / single disk measured
  (level L, chunk C, block size B), for IOPS or bandwidth alike;
* the **theoretical speedup** T(L, C, B) from the vendor's RAID mathematics
  ([VROC]), a function of the level and the number of member disks N;
* the **efficiency** E = S / T, at most 1; a measured E > 1 is physically
  implausible and flagged (:class:`~qnmodel.errors.MeasurementArtefactWarning`):
  the paper saw such a "virtual increase" (虚增) at very deep queues
  ([Chen] sec. 2.2.3).

The theoretical speedup table
-----------------------------
Every entry follows one rule: the speedup is N divided by the back-end disk
operations that one logical operation costs, spread evenly over the members
(equivalently, the bottleneck law on N equally loaded disks):

==========  ===========  ============  =================  ==================
level       random read  random write  sequential read    sequential write
==========  ===========  ============  =================  ==================
raid0       N            N             N                  N
raid1       N (= 2)      1             N (= 2)            1
raid10      N            N/2           N                  N/2
raid5       N            N/4           N - 1              N - 1
raid6       N            N/6           N - 2              N - 2
==========  ===========  ============  =================  ==================

The random-read column, the random writes (RAID5 read-modify-write: 2 reads
+ 2 writes = 4; RAID6: 6) and the sequential RAID0 and RAID5 (full-stripe)
entries are those of [VROC] as restated by [Chen] table 1; the sequential
RAID1/RAID10/RAID6 entries apply the same rule (a mirror writes every byte
N (RAID1) or 2 (RAID10) times; RAID6 stripes carry two parity chunks). Intel
VROC's RAID1 is a two-disk mirror, giving the 2 of [Chen]; here RAID1 is an
N-way mirror. Override any entry with ``table=``.

Bridging to queueing networks
-----------------------------
:func:`disk_demand_multipliers` gives, per member disk, the factor by which a
single disk's service demand is multiplied when the same logical workload
runs on the array (``1/T`` on each of N disks for these symmetric layouts).
A closed network with those N disk stations saturates at exactly T times the
single-disk throughput, so the speedup table and the queueing model agree by
construction. The multipliers feed the solvers directly (:func:`disk_demands`)
and the networked-RAID composition: ``NetworkedRAID.network(disk_array=(level,
disks, pattern))`` puts such an array behind each storage server
(:mod:`qnmodel.models.storage`).

References
----------
.. [Chen] Chen X., Liu Y., Gao P., Xu J. (陳旭輝, 劉洋, 高鵬, 徐娟), performance
   tests of NVMe SSDs and Intel VROC RAID for the Gansu meteorological big-data
   platform: sec. 1.3.2 and table 1 (S, T, E), sec. 2.2.1 (RAID0 vs RAID5),
   sec. 2.2.3 (virtual increase at deep queues).
.. [VROC] Intel, "RAID Performance Analysis on Intel Virtual RAID on CPU
   (Intel VROC)", white paper, revision 002, January 2019 ("RAID mathematical
   performance model").
.. [CLGK94] P. M. Chen, E. K. Lee, G. A. Gibson, R. H. Katz, D. A. Patterson,
   "RAID: high-performance, reliable secondary storage", ACM Computing Surveys
   26(2):145-185, 1994, sec. 3 (redundancy and capacity of each level; the
   read-modify-write of small RAID5 writes).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from .._validate import as_choice, as_probability, as_quantity
from ..errors import InvalidModelError, InvalidTypeError, MeasurementArtefactWarning
from ..model import ForkJoin, Station
from ..raid_levels import OPERATIONS, RAID, RAID_LEVELS
from ..units import parse_quantity

__all__ = [
    "LEVELS",
    "OPS",
    "PATTERNS",
    "MIN_DISKS",
    "SPEEDUP_TABLE",
    "RAIDEfficiency",
    "check_disks",
    "speedup_table",
    "theoretical_speedup",
    "measured_speedup",
    "efficiency",
    "write_penalty",
    "usable_capacity",
    "capacity_fraction",
    "disk_demand_multipliers",
    "disk_demands",
    "disk_array_forkjoin",
    "raid5_read_modify_write",
]

LEVELS = RAID_LEVELS
OPS = OPERATIONS
PATTERNS = ("random", "sequential")

#: smallest member count per level (a one-disk RAID0 is the single disk itself)
MIN_DISKS: Mapping[str, int] = MappingProxyType({n: lv.min_disks for n, lv in RAID.items()})

SpeedupEntry = Callable[[int], float] | float


def _n(N: int) -> float:
    return float(N)


_DEFAULT: dict[tuple[str, str, str], SpeedupEntry] = {
    ("raid0", "read", "random"): _n,
    ("raid0", "write", "random"): _n,
    ("raid0", "read", "sequential"): _n,
    ("raid0", "write", "sequential"): _n,
    ("raid1", "read", "random"): _n,
    ("raid1", "write", "random"): lambda N: 1.0,
    ("raid1", "read", "sequential"): _n,
    ("raid1", "write", "sequential"): lambda N: 1.0,
    ("raid10", "read", "random"): _n,
    ("raid10", "write", "random"): lambda N: N / 2.0,
    ("raid10", "read", "sequential"): _n,
    ("raid10", "write", "sequential"): lambda N: N / 2.0,
    ("raid5", "read", "random"): _n,
    ("raid5", "write", "random"): lambda N: N / 4.0,
    ("raid5", "read", "sequential"): lambda N: N - 1.0,
    ("raid5", "write", "sequential"): lambda N: N - 1.0,
    ("raid6", "read", "random"): _n,
    ("raid6", "write", "random"): lambda N: N / 6.0,
    ("raid6", "read", "sequential"): lambda N: N - 2.0,
    ("raid6", "write", "sequential"): lambda N: N - 2.0,
}

#: The default theoretical-speedup table: (level, op, pattern) -> T(N) (read-only).
SPEEDUP_TABLE: Mapping[tuple[str, str, str], SpeedupEntry] = MappingProxyType(_DEFAULT)


# --------------------------------------------------------------------------- validation
def _level(level: Any) -> str:
    return as_choice(level, "level", LEVELS)


#: the most member disks of one array (one station each in the model)
MAX_DISKS = 4096


def check_disks(level: str, disks: Any) -> int:
    """The member count of a ``level`` array: an integer >= the level's minimum.

    RAID10 also needs an even count (mirrored pairs).
    """
    level = _level(level)
    lo = MIN_DISKS[level]
    if isinstance(disks, bool | np.bool_) or not isinstance(disks, numbers.Real):
        raise InvalidTypeError(f"disks must be an integer >= {lo} for {level}, got {disks!r}")
    f = float(disks)
    if not math.isfinite(f) or f != math.floor(f):
        raise InvalidModelError(f"disks must be an integer >= {lo} for {level}, got {disks!r}")
    n = int(f)
    if n > MAX_DISKS:
        raise InvalidModelError(
            f"disks must be at most {MAX_DISKS} (qnmodel.models.raid.MAX_DISKS) for {level}, got "
            f"{disks!r}: a model of one station per member disk that large is not an array"
        )
    if n < lo:
        raise InvalidModelError(
            f"disks must be >= {lo} for {level}, got {disks!r}: {level} needs at least "
            f"{lo} member disk{'s' if lo > 1 else ''}"
        )
    if RAID[level].even_disks and n % 2:
        raise InvalidModelError(
            f"disks must be even for raid10 (mirrored pairs), got {disks!r}; use {n - 1} or {n + 1}"
        )
    return n


def speedup_table(
    overrides: Mapping[tuple[str, str, str], SpeedupEntry] | None = None,
) -> dict[tuple[str, str, str], SpeedupEntry]:
    """The default table with ``overrides`` applied: a fresh, editable dict.

    Keys are ``(level, op, pattern)``; values a number or a callable of the
    member count N returning T. Unknown keys are rejected.
    """
    table = dict(_DEFAULT)
    if overrides is None:
        return table
    if not isinstance(overrides, Mapping):
        raise InvalidTypeError(
            f"table must be a mapping (level, op, pattern) -> T(N), got {type(overrides).__name__}"
        )
    for key, value in overrides.items():
        if key not in _DEFAULT:
            raise InvalidModelError(
                f"table key {key!r} is not a (level, op, pattern) triple with level in {LEVELS}, "
                f"op in {OPS}, pattern in {PATTERNS}"
            )
        if not callable(value) and not (
            isinstance(value, numbers.Real) and not isinstance(value, bool)
        ):
            raise InvalidTypeError(
                f"table[{key!r}] must be a number or a callable of the disk count, got {value!r}"
            )
        table[key] = value
    return table


# --------------------------------------------------------------------------- speedup
def theoretical_speedup(
    level: str,
    disks: int,
    op: str,
    pattern: str,
    table: Mapping[tuple[str, str, str], SpeedupEntry] | None = None,
) -> float:
    """Theoretical speedup T of a RAID array over one member disk ([VROC]; [Chen] table 1).

    Parameters
    ----------
    level : {"raid0", "raid1", "raid10", "raid5", "raid6"}
    disks : int
        Member disks N (>= 1 for raid0, 2 raid1, 4 raid10 (even), 3 raid5, 4 raid6).
    op : {"read", "write"}
    pattern : {"random", "sequential"}
    table : mapping, optional
        Entries ``(level, op, pattern) -> number or callable(N)`` overriding
        :data:`SPEEDUP_TABLE` (see :func:`speedup_table`).

    Returns
    -------
    float
        T (dimensionless, > 0). One disk in RAID0 gives exactly 1; RAID0 with
        N disks gives N.

    Examples
    --------
    >>> theoretical_speedup("raid5", 4, "write", "random")
    1.0
    >>> theoretical_speedup("raid5", 4, "read", "sequential")
    3.0
    >>> theoretical_speedup("raid0", 4, "write", "random", table={
    ...     ("raid0", "write", "random"): lambda n: 0.9 * n})
    3.6
    """
    level = _level(level)
    n = check_disks(level, disks)
    op = as_choice(op, "op", OPS)
    pattern = as_choice(pattern, "pattern", PATTERNS)
    tab = _DEFAULT if table is None else speedup_table(table)
    entry = tab[(level, op, pattern)]
    value = entry(n) if callable(entry) else entry
    try:
        t = float(value)
    except (TypeError, ValueError):
        raise InvalidTypeError(
            f"table[{(level, op, pattern)!r}]({n}) returned {value!r}, not a number"
        ) from None
    if not (math.isfinite(t) and t > 0.0):
        raise InvalidModelError(
            f"table[{(level, op, pattern)!r}]({n}) = {value!r}: a speedup must be finite and > 0"
        )
    return t


def _as_measurements(value: Any, name: str) -> tuple[np.ndarray, str | None]:
    """Positive finite measurements (numbers, arrays, or unit strings) and their dimension."""
    if isinstance(value, str):
        v, dim = parse_quantity(value)
        arr, out_dim = np.asarray(v, dtype=np.float64), dim
    elif isinstance(value, bool | np.bool_):
        raise InvalidTypeError(f"{name} must be a positive measurement, got {value!r}")
    else:
        arr = np.asarray(value)
        if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
            raise InvalidTypeError(
                f"{name} must be positive numbers (IOPS or bytes/s), got {value!r}"
            )
        arr, out_dim = arr.astype(np.float64), None
    bad = ~(np.isfinite(arr) & (arr > 0.0))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"{name}[{', '.join(map(str, idx))}]" if idx else name
        raise InvalidModelError(f"{where} must be finite and > 0, got {float(arr[idx])!r}")
    return arr, out_dim


def measured_speedup(measured: Any, single: Any) -> float | np.ndarray:
    """S = RAID measured / single-disk measured ([Chen] sec. 1.3.2); broadcasts.

    Both in the same unit (IOPS, or bytes/s; unit strings must share a
    dimension).
    """
    m, dm = _as_measurements(measured, "measured")
    s, ds = _as_measurements(single, "single")
    if dm is not None and ds is not None and dm != ds:
        raise InvalidModelError(f"measured is a {dm} but single is a {ds}: compare like with like")
    out = m / s
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True, repr=False)
class RAIDEfficiency:
    """Measured speedup, theoretical speedup and efficiency of a RAID array.

    Attributes
    ----------
    level, op, pattern : str
    disks : int
        Member disks N.
    speedup : float or ndarray
        S = measured / single ([Chen] sec. 1.3.2).
    theoretical : float
        T from the table ([VROC]).
    efficiency : float or ndarray
        E = S / T; <= 1 for a sound measurement.
    artefact : bool or ndarray of bool
        True where E > 1 + tolerance: a measurement artefact (cache effects,
        a not-yet-steady run, the deep-queue "virtual increase" of [Chen]).
    tolerance : float
        Slack allowed above 1 before flagging.
    """

    level: str
    disks: int
    op: str
    pattern: str
    speedup: Any
    theoretical: float
    efficiency: Any
    artefact: Any
    tolerance: float

    @property
    def any_artefact(self) -> bool:
        """True if any entry is flagged."""
        return bool(np.any(self.artefact))

    def __repr__(self) -> str:
        def fmt(x: Any) -> str:
            return f"{x:.4g}" if np.ndim(x) == 0 else np.array2string(np.asarray(x), precision=4)

        return (
            f"RAIDEfficiency({self.level}, N={self.disks}, {self.pattern} {self.op}: "
            f"S={fmt(self.speedup)}, T={self.theoretical:.4g}, E={fmt(self.efficiency)}"
            + (", ARTEFACT: E > 1" if self.any_artefact else "")
            + ")"
        )


def efficiency(
    measured: Any,
    single: Any,
    level: str,
    disks: int,
    op: str,
    pattern: str,
    table: Mapping[tuple[str, str, str], SpeedupEntry] | None = None,
    tolerance: float = 0.0,
) -> RAIDEfficiency:
    """RAID efficiency E = S / T ([Chen] sec. 1.3.2), flagging E > 1.

    Parameters
    ----------
    measured : float, array_like or str
        The array's measured IOPS or bandwidth (> 0); arrays broadcast with
        ``single`` (e.g. one entry per block size).
    single : float, array_like or str
        The single disk's measurement under the same conditions, same unit.
    level, disks, op, pattern, table
        As in :func:`theoretical_speedup`.
    tolerance : float
        E may exceed 1 by this much before it is flagged (>= 0; default 0).

    Returns
    -------
    RAIDEfficiency

    Warns
    -----
    MeasurementArtefactWarning
        When some E > 1 + tolerance; the result's ``artefact`` says where.
    """
    T = theoretical_speedup(level, disks, op, pattern, table)
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real):
        raise InvalidTypeError(f"tolerance must be a number >= 0, got {tolerance!r}")
    tol = float(tolerance)
    if not (math.isfinite(tol) and tol >= 0.0):
        raise InvalidModelError(f"tolerance must be finite and >= 0, got {tolerance!r}")
    S = measured_speedup(measured, single)
    E = np.asarray(S) / T
    flag = E > 1.0 + tol
    if flag.any():
        worst = float(E.max())
        where = "" if E.ndim == 0 else f" at {int(flag.sum())} of {E.size} points"
        warnings.warn(
            f"RAID efficiency E = {worst:.4g} > 1{where} for {level} with {int(disks)} disks "
            f"({pattern} {op}): the measured speedup {worst * T:.4g} exceeds the theoretical "
            f"{T:.4g}. Treat it as a measurement artefact (caching, a run not yet steady, "
            "very deep queues: the 'virtual increase' of Chen et al.), not as performance.",
            MeasurementArtefactWarning,
            stacklevel=2,
        )
    scalar = E.ndim == 0
    return RAIDEfficiency(
        level=level,
        disks=check_disks(level, disks),
        op=op,
        pattern=pattern,
        speedup=float(S) if scalar else S,
        theoretical=T,
        efficiency=float(E) if scalar else E,
        artefact=bool(flag) if scalar else flag,
        tolerance=tol,
    )


# --------------------------------------------------------------------------- capacity, penalty
def write_penalty(level: str, disks: int | None = None) -> int:
    """Back-end disk operations per small random logical write.

    raid0: 1; raid1: N (every mirror; 2 for a pair); raid10: 2; raid5: 4
    (read data and parity, write both); raid6: 6 ([VROC]; [CLGK94] sec. 3).
    ``disks`` is needed for raid1 only (and validated when given). Random-write
    T = N / penalty. Returns a count of disk operations (dimensionless).
    """
    level = _level(level)
    if disks is not None:
        n = check_disks(level, disks)
    elif level == "raid1":
        raise InvalidModelError("disks is required for raid1: its penalty is the mirror count")
    penalty = RAID[level].write_penalty
    return n if penalty is None else penalty


def capacity_fraction(level: str, disks: int) -> float:
    """Usable fraction of the raw capacity (dimensionless), [CLGK94] sec. 3.

    raid0: 1; raid1: 1/N; raid10: 1/2; raid5: (N-1)/N; raid6: (N-2)/N for
    ``disks`` = N members (>= the level's minimum, even for raid10).
    """
    level = _level(level)
    n = check_disks(level, disks)
    return RAID[level].data_disks(n) / n


def usable_capacity(level: str, disks: int, disk_size: float | str) -> float:
    """Usable bytes of an array of ``disks`` equal members of ``disk_size`` bytes each.

    raid0: N s; raid1: s; raid10: N s / 2; raid5: (N - 1) s; raid6: (N - 2) s
    ([CLGK94] sec. 3). ``disk_size`` is bytes (a plain number) or a size string
    (``"2 TB"``, ``"1.8 TiB"``).

    >>> usable_capacity("raid5", 4, "2 TB") / 1e12
    6.0
    """
    s = as_quantity(disk_size, "disk_size", "size", positive=True)
    n = check_disks(level, disks)
    return RAID[level].data_disks(n) * s


# --------------------------------------------------------------------------- demands
def disk_demand_multipliers(
    level: str,
    disks: int,
    op: str,
    pattern: str,
    table: Mapping[tuple[str, str, str], SpeedupEntry] | None = None,
) -> np.ndarray:
    """Per-member-disk demand multipliers of a RAID array, shape (N,).

    If one disk needs D seconds per logical operation (or per byte), the
    same workload on the array costs member disk i ``D * m_i`` seconds. For
    the symmetric layouts here ``m_i = 1 / T`` on every disk, so that

    * the array saturates at ``1 / max_i(D m_i) = T / D``: T times one disk
      (the bottleneck law reproduces the speedup table);
    * ``sum_i m_i = N / T`` is the back-end work per unit of logical work
      (the write penalty for random writes, N/(N-1) for RAID5 full-stripe
      writes: the byte factor STP/(STP-1) of the networked-RAID formulas).

    Feed ``D * m`` to :class:`~qnmodel.model.network.Network` as N disk stations
    (see :func:`disk_demands`) or to the networked-RAID composition.

    The multipliers are *busy-time* factors. For writes their sum equals the
    byte factor of :func:`qnmodel.demands.raid_bytes.raid_byte_factor`
    (sequential: N/(N-1) for RAID5, N/(N-2) RAID6, 2 for mirrors); for
    sequential RAID5/6 reads it exceeds the byte factor 1, because each
    member also passes over the parity chunks it does not return.
    """
    T = theoretical_speedup(level, disks, op, pattern, table)
    n = check_disks(level, disks)
    return np.full(n, 1.0 / T)


def disk_demands(
    single_disk_demand: float | str,
    level: str,
    disks: int,
    op: str | Mapping[str, float],
    pattern: str,
    table: Mapping[tuple[str, str, str], SpeedupEntry] | None = None,
) -> np.ndarray:
    """Service demand of each member disk, seconds, from one disk's demand (s, >= 0).

    ``single_disk_demand * disk_demand_multipliers(...)``: the per-station
    demands of the array's disks in a closed network.

    ``op`` is ``"read"``, ``"write"`` or a **read/write mix** ``{"read": f_r, "write":
    f_w}`` (fractions of the logical requests, each in [0, 1], summing to 1): the mean
    demand of a request of the mix, D_i = sum_op f_op D m_i(op). This is one class with
    averaged demands (utilisations, throughputs and the mean response time over all
    requests); separate read and write response times need two classes
    (:class:`~qnmodel.model.network.Network` with ``classes``).

    >>> disk_demands("8 ms", "raid5", 4, "write", "random")
    array([0.008, 0.008, 0.008, 0.008])
    >>> disk_demands("8 ms", "raid5", 4, {"read": 0.7, "write": 0.3}, "random").round(6)
    array([0.0038, 0.0038, 0.0038, 0.0038])
    """
    D = as_quantity(single_disk_demand, "single_disk_demand", "time")
    if not isinstance(op, Mapping):
        return D * disk_demand_multipliers(level, disks, op, pattern, table)
    mix = as_op_mix(op)
    return D * sum(f * disk_demand_multipliers(level, disks, o, pattern, table)
                   for o, f in mix.items())  # fmt: skip


def as_op_mix(op: Mapping[str, float], name: str = "op") -> dict[str, float]:
    """A read/write mix ``{"read": f_r, "write": f_w}``: known operations, fractions in
    [0, 1] summing to 1 (within 1e-9; never rescaled)."""
    if not op:
        raise InvalidModelError(f"{name} is an empty mix; give {{'read': 0.7, 'write': 0.3}}")
    out = {}
    for o, f in op.items():
        if o not in ("read", "write"):
            raise InvalidModelError(
                f"{name}: unknown operation {o!r} in the mix; use 'read' and 'write'"
            )
        out[o] = as_probability(f, f"{name}[{o!r}]")
    total = sum(out.values())
    if abs(total - 1.0) > 1e-9:
        raise InvalidModelError(
            f"{name}: the mix's fractions sum to {total:g}, not 1: give the share of each "
            f"operation among the requests, e.g. {{'read': 0.7, 'write': 0.3}}"
        )
    return out


def disk_array_forkjoin(
    name: str,
    single_disk_demand: float | str,
    level: str,
    disks: int,
    op: str,
    table: Mapping[tuple[str, str, str], SpeedupEntry] | None = None,
) -> ForkJoin:
    """A full-stripe access to a RAID array as a fork-join over its member disks.

    A sequential (full-stripe) read or write forks into one chunk request per
    member and completes when the last returns, so its response time is the
    maximum of the members' times (d H_N for N identical exponential members),
    not their sum and not one member's time. Member ``disk_j`` gets the demand
    ``single_disk_demand * m_j`` with the sequential multipliers of
    :func:`disk_demand_multipliers`, so the array still saturates at T(level,
    disks, op, "sequential") times one disk. Put the element in a
    :class:`~qnmodel.model.network.Network` and solve with :func:`qnmodel.fork_join`.

    >>> fj = disk_array_forkjoin("array", "8 ms", "raid0", 4, "read")
    >>> fj.n, round(fj.demand, 6)
    (4, 0.002)
    """
    D = as_quantity(single_disk_demand, "single_disk_demand", "time")
    m = disk_demand_multipliers(level, disks, op, "sequential", table)
    return ForkJoin(name, [Station(f"disk_{j}", D * mj) for j, mj in enumerate(m, start=1)])


def raid5_read_modify_write(member_demand: float | str, disks: int, name: str = "rmw") -> ForkJoin:
    """A RAID5 sub-stripe write as a fork-join over two random members of the array.

    A write smaller than a stripe cannot compute the new parity from the new data alone: it
    reads the old data chunk and the old parity chunk, then writes the new data and the new
    parity = old parity XOR old data XOR new data ([CLGK94] sec. 3; 2 reads + 2 writes,
    the write penalty 4 of the speedup table). The data member is where the block lives and
    the parity member rotates with the stripe, so a random write forks to a random 2 of the
    ``disks`` members (``ForkJoin(fanout=2)``), each of which reads and then writes one chunk:
    a sub-request of demand ``2 * member_demand`` on ``disk_1..disk_N``. Each disk is busy
    4 d / N per write, so the array saturates at N / (4 d), the speedup table's N / 4 times
    one disk.

    The array joins twice (after the reads, after the writes) on the same two disks; one
    element cannot hold two joins over the same disk stations, so the phases are folded into
    one sub-request and the join between them is dropped. With exponential members one
    write alone then takes E[max of two Exp(2 d)] = 3 d, the same as two joins of two
    Exp(d), 2 d H_2. Measured against qnbench's ``stripe`` engine in
    :mod:`qnmodel.lab.validation.stripe`.

    >>> fj = raid5_read_modify_write("4 ms", 4)
    >>> fj.n, fj.fanout, round(fj.demand, 6)
    (4, 2, 0.004)
    """
    d = as_quantity(member_demand, "member_demand", "time")
    n = check_disks("raid5", disks)
    return ForkJoin(name, [Station(f"disk_{j}", 2 * d) for j in range(1, n + 1)], fanout=2)
