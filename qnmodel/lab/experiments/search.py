"""The search for the best aggregate bandwidth: seed 000's one-factor-at-a-time, and better.

He et al. (seed 000, sec. 4.2) find the peak aggregate bandwidth of a parallel file system
by tuning one parameter at a time: the stripe size first, then the block size at the best
stripe size, then the concurrency, then the client count. That search misses every optimum
that lies on an interaction: on a RAID5 array a write is cheap only when it covers whole
stripes, and the stripe is ``(K - 1) x chunk``; the best chunk depends on the block size.

This module searches qnbench's ``stripe`` engine (user-space RAID0/RAID5 over emulated
members) in two ways over the same grid of chunk size, block size and client count:

* :func:`search_ofat`: seed 000's method, factor by factor in the paper's order;
* :func:`search_model`: calibrate one member (positioning ``a`` and rate ``r`` from a few
  single-device runs), predict every grid point with the demand model of the array
  (:func:`stripe_demands`: each member request costs ``a + bytes/r`` on its member; the
  array's throughput is bounded by ``min(n / R0, 1 / D_max)``, [LZGS] sec. 5.2), prune the
  grid to the few best predicted points and measure only those.

Both report the optimum, the runs used, and measured-vs-predicted bandwidth at the optimum.

References
----------
.. [He14] He Q., Li Z., Wang L., Wang R. (贺秦禄 等), "Testing technology for aggregate
   bandwidth of cloud storage system", Journal of Jilin University (Engineering and
   Technology Edition) 44(4):1104-1111, 2014, sec. 4.2 (the one-parameter-at-a-time method).
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, sec. 5.2.
.. [CLGK94] P. M. Chen et al., "RAID: high-performance, reliable secondary storage", ACM
   Computing Surveys 26(2), 1994, sec. 3 (full-stripe and read-modify-write RAID5 writes).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..._validate import as_choice, as_positive_int, as_quantities, as_quantity
from ...calibration.device import fit_device
from ...errors import InvalidModelError

__all__ = [
    "SearchSpace",
    "SearchResult",
    "stripe_demands",
    "predict_bandwidth",
    "search_ofat",
    "search_model",
    "known_optimum",
]

_FACTORS = ("chunk", "bs", "jobs")


@dataclass(frozen=True)
class SearchSpace:
    """The grid searched: chunk sizes, block sizes, client counts of one array.

    ``raid`` 0 or 5, ``members`` K, ``rw`` the access pattern (``"write"``, ``"read"``, ...),
    ``start`` the one-factor-at-a-time starting point (chunk, bs, jobs), ``options`` further
    qnbench options (``dev_latency``, ``dev_rate``, ``runtime``...).
    """

    chunk: tuple[int, ...] = tuple(16384 * 2**k for k in range(5))
    bs: tuple[int, ...] = tuple(65536 * 2**k for k in range(5))
    jobs: tuple[int, ...] = (1, 2, 4, 8)
    raid: int = 5
    members: int = 5
    rw: str = "write"
    start: tuple[int, int, int] = (65536, 65536, 1)
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        for name in (*_FACTORS, "start"):
            v = getattr(self, name)
            seq = isinstance(v, Sequence | np.ndarray) and not isinstance(v, str | bytes)
            if not seq or len(v) == 0:
                raise InvalidModelError(f"{name} must be a non-empty sequence, got {v!r}")
        if len(self.start) != len(_FACTORS):
            raise InvalidModelError(
                f"start must be one level of each of {', '.join(_FACTORS)}, got {self.start!r}"
            )
        if not isinstance(self.options, Mapping):
            raise InvalidModelError(
                f"options must be a mapping of qnbench options, got {self.options!r}"
            )
        as_positive_int(self.members, "members", 2)
        object.__setattr__(
            self, "chunk", tuple(int(v) for v in as_quantities(self.chunk, "chunk", "size"))
        )
        object.__setattr__(self, "bs", tuple(int(v) for v in as_quantities(self.bs, "bs", "size")))
        object.__setattr__(self, "jobs", tuple(as_positive_int(j, "jobs") for j in self.jobs))
        as_choice(self.rw, "rw", ("read", "write", "randread", "randwrite"))
        if isinstance(self.raid, bool) or self.raid not in (0, 5):
            raise InvalidModelError(f"raid must be 0 or 5 (qnbench stripe), got {self.raid!r}")
        for name, value, levels in zip(
            _FACTORS, self.start, (self.chunk, self.bs, self.jobs), strict=True
        ):
            if value not in levels:
                raise InvalidModelError(f"start {name} = {value!r} is not one of {levels}")

    @property
    def size(self) -> int:
        return len(self.chunk) * len(self.bs) * len(self.jobs)


# ------------------------------------------------------------------------------ the model
def _member_ops(raid: int, K: int, chunk: int, bs: int, off: int, write: bool):
    """Member operations of one request at ``off``: list of phases, each a list of (member, len).

    The layout of qnbench's stripe engine (csrc/engines/stripe.c): RAID5 parity of stripe s on
    member K-1 - s mod K, data chunk d on (parity + 1 + d) mod K; full-stripe writes in one
    phase (data and parity), partial-stripe writes read then write data and parity range.
    """
    dch = K - 1 if raid == 5 else K
    sb = dch * chunk
    phases: list[list[tuple[int, int]]] = [[], []]
    pos, end = off, off + bs
    while pos < end:
        s = pos // sb
        sstart = s * sb
        send = min((s + 1) * sb, end)
        pm = (K - 1) - (s % K) if raid == 5 else -1
        pieces, q = [], pos
        while q < send:
            d = (q - sstart) // chunk
            inn = (q - sstart) % chunk
            ln = min(chunk - inn, send - q)
            pieces.append((int((pm + 1 + d) % K) if pm >= 0 else int(d), ln, inn))
            q += ln
        full = raid == 5 and pos == sstart and send == sstart + sb
        if not write or raid != 5 or full:
            phases[0] += [(m, ln) for m, ln, _ in pieces]
            if write and full:
                phases[0].append((pm, chunk))
        else:
            lo = min(i for _, _, i in pieces)
            hi = max(i + ln for _, ln, i in pieces)
            rmw = [(m, ln) for m, ln, _ in pieces] + [(pm, hi - lo)]
            phases[0] += rmw
            phases[1] += rmw
        pos = send
    return [p for p in phases if p]


def stripe_demands(
    raid: int,
    members: int,
    chunk: int,
    bs: int,
    a: float,
    r: float,
    rw: str = "write",
    size: int = 16 * 2**20,
) -> tuple[np.ndarray, float]:
    """Per-member busy time per request (s, shape (K,)) and the lone request's time R0 (s).

    Averaged over the request offsets of a sequential run (``rw`` read/write: the cursor
    walks the array from 0 in steps of ``bs``) or over the aligned offsets of a random one.
    Every member request of ``len`` bytes costs ``a + len/r`` on its member; a phase ends
    when its busiest member does, so ``R0`` is the sum over phases of the largest member
    time ([CLGK94] sec. 3 for the RAID5 write paths).
    """
    K = int(members)
    dch = K - 1 if raid == 5 else K
    capacity = (size // chunk) * dch * chunk
    nreq = capacity // bs
    if nreq < 1:
        raise InvalidModelError(f"bs {bs} exceeds the array capacity {capacity}")
    offs = np.arange(min(nreq, 64)) * bs
    D = np.zeros(K)
    R0 = 0.0
    for off in offs:
        for phase in _member_ops(raid, K, chunk, bs, int(off), "write" in rw):
            t = np.zeros(K)
            for m, ln in phase:
                t[m] += a + ln / r
            D += t
            R0 += t.max()
    return D / offs.size, R0 / offs.size


def predict_bandwidth(space: SearchSpace, a: float, r: float) -> pd.DataFrame:
    """Predicted aggregate bandwidth (bytes/s) at every grid point: ``bs * min(n/R0, 1/Dmax)``.

    The asymptotic bound of the array as a closed network of K member stations ([LZGS]
    sec. 5.2); exact at n = 1 and at saturation for emulated members with constant service.
    """
    rows = []
    for c, b in itertools.product(space.chunk, space.bs):
        size = int(space.options.get("size", 16 * 2**20))
        D, R0 = stripe_demands(space.raid, space.members, c, b, a, r, space.rw, size)
        for n in space.jobs:
            x = min(n / R0, 1.0 / D.max())
            rows.append({"chunk": c, "bs": b, "jobs": n, "predicted_B_s": b * x})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------ measuring
class _Bench:
    """Measures grid points once each (a point measured twice is looked up, not re-run)."""

    def __init__(self, space: SearchSpace):
        self.space = space
        self.cache: dict[tuple[int, int, int], float] = {}
        self.order: list[tuple[int, int, int]] = []

    def measure(self, points: Sequence[tuple[int, int, int]]) -> dict:
        from ... import bench

        todo = [p for p in dict.fromkeys(points) if p not in self.cache]
        by_chunk: dict[int, list] = {}
        for c, b, n in todo:
            by_chunk.setdefault(c, []).append((b, n))
        for c, pts in by_chunk.items():
            for b in sorted({b for b, _ in pts}):
                jobs = sorted({n for bb, n in pts if bb == b})
                opts = {"member": "emu", **self.space.options}
                trace = bench.run(
                    "stripe", raid=self.space.raid, members=self.space.members, chunk=c,
                    bs=b, jobs=jobs, rw=self.space.rw, progress=False, **opts,
                )  # fmt: skip
                f = trace.to_frame()
                for n in jobs:
                    bw = float(f.loc[f["jobs"] == n, "throughput_B_s"].max())
                    self.cache[(c, b, n)] = bw
                    self.order.append((c, b, n))
        return {p: self.cache[p] for p in points}

    @property
    def runs(self) -> int:
        return len(self.order)


@dataclass(frozen=True)
class SearchResult:
    """The optimum a search found.

    ``optimum`` (chunk, bs, jobs); ``bandwidth`` measured there (bytes/s); ``predicted`` the
    model's bandwidth there (NaN for a model-free search); ``runs`` qnbench points measured
    (calibration included); ``measured`` every measured point.
    """

    method: str
    optimum: tuple[int, int, int]
    bandwidth: float
    predicted: float
    runs: int
    measured: pd.DataFrame
    calibration: Any = None

    @property
    def error(self) -> float:
        """(predicted - measured) / measured at the optimum."""
        return (self.predicted - self.bandwidth) / self.bandwidth

    def __repr__(self) -> str:
        c, b, n = self.optimum
        return (
            f"SearchResult({self.method}: chunk {c} B, bs {b} B, jobs {n}: "
            f"{self.bandwidth / 1e6:.1f} MB/s measured, {self.predicted / 1e6:.1f} MB/s "
            f"predicted, {self.runs} runs)"
        )


def _frame(cache: Mapping) -> pd.DataFrame:
    return pd.DataFrame(
        [{"chunk": c, "bs": b, "jobs": n, "measured_B_s": v} for (c, b, n), v in cache.items()]
    )


def _best(values: Mapping, tie: float) -> tuple:
    """The best point; points within ``tie`` (relative) of the best count as equal and the
    one with the fewest clients, then smallest block, wins (less load for the same result)."""
    top = max(values.values())
    near = [p for p, v in values.items() if v >= (1.0 - tie) * top]
    return min(near, key=lambda p: (p[2], p[1], p[0]))


def search_ofat(space: SearchSpace, *, tie: float = 0.03) -> SearchResult:
    """Seed 000's one-factor-at-a-time search ([He14] sec. 4.2): chunk, then bs, then jobs.

    Each step measures every level of one factor with the others at their best so far and
    keeps the best (bandwidths within ``tie`` of the best are ties, resolved toward fewer
    clients and smaller blocks).
    """
    bench = _Bench(space)
    cur = list(space.start)
    for i, levels in enumerate((space.chunk, space.bs, space.jobs)):
        pts = []
        for v in levels:
            p = list(cur)
            p[i] = v
            pts.append(tuple(p))
        got = bench.measure(pts)
        cur = list(_best(got, tie))
    opt = tuple(cur)
    return SearchResult("one-factor-at-a-time", opt, bench.cache[opt], math.nan, bench.runs,
                        _frame(bench.cache))  # fmt: skip


def search_model(
    space: SearchSpace,
    *,
    calibration_sizes: Sequence[Any] = ("16 KiB", "256 KiB", "1 MiB"),
    keep: int = 3,
    tie: float = 0.03,
) -> SearchResult:
    """Model-pruned search: calibrate a member, predict the grid, measure the ``keep`` best.

    One qnbench ``emu`` run per calibration size (one device, one client, constant service)
    gives ``a`` and ``r`` (:func:`qnmodel.calibration.fit_device`); :func:`predict_bandwidth`
    ranks the grid; the ``keep`` best predicted points (after dropping points predicted within
    ``tie`` of a better one with more clients) are measured and the best measured is the
    optimum. Runs = calibration sizes + ``keep``.
    """
    from ... import bench as qb

    sizes = [int(v) for v in as_quantities(calibration_sizes, "calibration_sizes", "size")]
    dev = {k: space.options[k] for k in ("dev_latency", "dev_rate", "runtime", "warmup",
                                         "realtime") if k in space.options}  # fmt: skip
    trace = qb.run("emu", jobs=1, bs=sizes, devices=1, dev_dist="const", progress=False, **dev)
    f = trace.to_frame()
    fit = fit_device(f["bs_bytes"], f["latency_mean_s"], seek_floor=None)
    a, r = fit.values["a"], fit.values["r"]
    pred = predict_bandwidth(space, a, r)
    pred = pred.sort_values(["predicted_B_s", "jobs"], ascending=[False, True])
    top = pred["predicted_B_s"].iloc[0]
    # among points predicted as good as the best, the fewest clients: the rest are pruned
    chosen, seen = [], set()
    for row in pred.itertuples():
        key = (row.chunk, row.bs)
        if key in seen or row.predicted_B_s < (1 - 0.5) * top:
            continue
        same = pred[(pred.chunk == row.chunk) & (pred.bs == row.bs)]
        best_n = int(
            same.loc[same.predicted_B_s >= (1 - tie) * same.predicted_B_s.max(), "jobs"].min()
        )
        chosen.append((int(row.chunk), int(row.bs), best_n))
        seen.add(key)
        if len(chosen) == keep:
            break
    b = _Bench(space)
    got = b.measure(chosen)
    opt = _best(got, tie)
    p = pred[(pred.chunk == opt[0]) & (pred.bs == opt[1]) & (pred.jobs == opt[2])]
    return SearchResult("model-pruned", opt, got[opt], float(p["predicted_B_s"].iloc[0]),
                        b.runs + len(sizes), _frame(b.cache), fit)  # fmt: skip


def known_optimum(space: SearchSpace, a: float, r: float, tie: float = 0.03) -> tuple:
    """The grid point the model ranks first (exact for emulated members): the reference."""
    pred = predict_bandwidth(space, as_quantity(a, "a", "time"), as_quantity(r, "r", "rate"))
    vals = {(int(x.chunk), int(x.bs), int(x.jobs)): x.predicted_B_s for x in pred.itertuples()}
    return _best(vals, tie)
