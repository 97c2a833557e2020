"""Model-guided measurement plans: where to measure a device so that a few runs pin it down.

A closed-loop measurement of K devices (positioning time ``a``, transfer rate ``r``, one
request of B bytes costs ``D(B) = a + B/r``) by N clients with think time Z is described by
the closed network of :func:`qnmodel.calibration.pipeline.build_device_network`. Its bounds
say where the measurements carry information ([LZGS] sec. 5.2):

* **concurrency**: throughput rises as ``N / (D + Z)`` up to the knee
  ``N*(B) = (D + Z) / D_max = K (D + Z) / D`` and is flat at ``K / D`` beyond it. The curve
  bends around N*, where the queueing model and the measurement differ most; the plan puts
  its client counts densely there (the integers from ``floor(N*) - 1`` to ``ceil(N*) + 1``,
  and ``N*/2``, ``2 N*``) and sparsely elsewhere (N = 1 and the largest N only);
* **request size**: ``a`` and ``r`` separate only when the sizes straddle the crossover
  ``B* = a r`` where positioning equals transfer (:func:`qnmodel.calibration.fit_device`);
  for the two-parameter line ``D(B) = a + B/r`` the informative sizes are the extremes of
  the range and one size near B* ([Atk07] ch. 9: the D-optimal design of a straight line
  puts its points at the ends of the range), so the plan measures three sizes: the smallest,
  the one nearest B* and the largest.

Every point of a sweep (planned or dense) is fitted with the same model: exact MVA of the
device network ([RL80]), parameters ``a`` and ``r`` by weighted least squares with their
confidence intervals (:func:`qnmodel.calibration.fit.fit_model`). :func:`compare_plans`
measures both sweeps on qnbench's emulated devices and compares the interval widths.

References
----------
.. [LZGS] E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative System
   Performance*, Prentice-Hall, 1984, sec. 5.2 (asymptotic bounds, the knee N*).
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed multichain queuing
   networks", J. ACM 27(2):313-322, 1980.
.. [Atk07] A. C. Atkinson, A. N. Donev, R. D. Tobias, *Optimum Experimental Designs, with
   SAS*, Oxford University Press, 2007, ch. 9 (D-optimum designs; the straight line).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._validate import as_positive_int, as_quantities, as_quantity
from ...calibration.fit import CalibrationResult, fit_model
from ...calibration.parameters import Parameter, Parameters
from ...errors import InvalidModelError, InvalidTypeError
from ...model import Network
from ...solvers._mva_core import exact
from ...solvers.bounds import bounds_aba

__all__ = [
    "DEFAULT_SIZES",
    "MeasurementPlan",
    "PlanComparison",
    "plan_sweep",
    "dense_plan",
    "run_plan",
    "fit_points",
    "compare_plans",
    "knee",
    "knee_jobs",
    "concurrency_plan",
]

#: Candidate request sizes of a plan and of the dense sweep: 4 KiB .. 1 MiB, powers of two.
DEFAULT_SIZES = tuple(4096 * 2**k for k in range(9))


def _device(device: Any) -> tuple[float, float]:
    vals = device.values if isinstance(device, CalibrationResult) else device
    if not isinstance(vals, Mapping) or "a" not in vals or "r" not in vals:
        raise InvalidTypeError(
            f"device must be a mapping with a (positioning time) and r (transfer rate), or a "
            f"fit result holding them, got {device!r}"
        )
    a = as_quantity(vals["a"], "device a", "time")
    r = as_quantity(vals["r"], "device r", "rate", positive=True)
    return a, r


def knee(network: Network) -> float:
    """The knee ``N* = (D + Z) / D_max`` of a closed network's asymptotic bounds ([LZGS] 5.2)."""
    return float(bounds_aba(network, 1).n_star)


@dataclass(frozen=True)
class MeasurementPlan:
    """The points (client count, request size) of a measurement sweep.

    Attributes
    ----------
    points : tuple of (int, int)
        ``(jobs, bs_bytes)`` pairs, one qnbench run each.
    knees : dict int -> float
        Knee N*(B) of the model at each planned size (bytes -> clients).
    crossover : float
        ``B* = a r`` of the prior device model, bytes (NaN for a dense plan).
    kind : str
        ``"planned"`` or ``"dense"``.
    shares : dict int -> float
        Share of the measuring time given to each size (summing to 1): a plan spends most
        of it at the two ends of the size range, where ``a`` and ``r`` are determined.
    """

    points: tuple[tuple[int, int], ...]
    knees: dict
    crossover: float
    kind: str
    shares: dict = field(default_factory=dict)

    def runtime(self, bs: int, budget: float) -> float:
        """Seconds per run at size ``bs`` when the whole plan may measure ``budget`` seconds."""
        share = self.shares.get(bs, 1.0 / len(self.sizes))
        return budget * share / len(self.jobs_for(bs))

    @property
    def runs(self) -> int:
        """Number of qnbench points (runs) the plan costs."""
        return len(self.points)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(sorted({b for _, b in self.points}))

    def jobs_for(self, bs: int) -> list[int]:
        """The client counts planned at request size ``bs``, increasing."""
        return sorted(j for j, b in self.points if b == bs)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.points, columns=["jobs", "bs_bytes"])

    def __repr__(self) -> str:
        per = ", ".join(f"{b} B: N={self.jobs_for(b)}" for b in self.sizes)
        return f"MeasurementPlan({self.kind}, {self.runs} runs; {per})"


def knee_jobs(n_star: float, max_jobs: int) -> list[int]:
    """Client counts dense around the knee, sparse elsewhere: the integers next to N*
    (``floor(N*) - 1 .. ceil(N*) + 1``), then ``1, N*/2, 2 N*`` and ``max_jobs``, kept within
    ``1..max_jobs``."""
    Nmax = as_positive_int(max_jobs, "max_jobs")
    lo, hi = math.floor(n_star), math.ceil(n_star)
    want = {1, Nmax, n_star / 2, lo - 1, lo, hi, hi + 1, 2 * n_star}
    return sorted({min(Nmax, max(1, int(round(v)))) for v in want})


def concurrency_plan(model: Any, max_jobs: int = 64) -> list[int]:
    """The client counts to measure a closed model at: dense around its knee N*.

    ``model`` is a :class:`~qnmodel.model.network.Network`, a model file path (``.toml``, read by
    :func:`qnmodel.io.modelfile.load`) or a :class:`~qnmodel.io.modelfile.ModelSpec`.
    """
    if isinstance(model, str | os.PathLike):
        from ...io import modelfile

        model = modelfile.load(model)
    net = getattr(model, "network", model)
    if not isinstance(net, Network):
        raise InvalidTypeError(
            f"model must be a Network, a model file or a ModelSpec, got {type(model).__name__}"
        )
    return knee_jobs(knee(net), max_jobs)


def plan_sweep(
    device: Any,
    *,
    devices: int = 1,
    think_time: float | str = 0.0,
    max_jobs: int = 16,
    sizes: Sequence[Any] = DEFAULT_SIZES,
) -> MeasurementPlan:
    """Plan a closed-loop sweep of K devices from a prior model of one device.

    Parameters
    ----------
    device : mapping or CalibrationResult
        Prior values ``a`` (positioning time, s) and ``r`` (transfer rate, bytes/s): a
        datasheet, an earlier fit, a guess within a factor of a few.
    devices : int
        K, the devices a request is spread over (visit ratio 1/K each).
    think_time : float or str
        Z, seconds, per client between requests.
    max_jobs : int
        Largest client count that may be measured.
    sizes : sequence
        The candidate request sizes (bytes or size strings) the plan chooses from.

    Returns
    -------
    MeasurementPlan
        Three sizes (smallest, nearest the crossover ``a r`` on a log scale, largest) and per
        size the client counts of :func:`knee_jobs`, with N* the knee of that size's device
        network.
    """
    from ...calibration.pipeline import build_device_network

    a, r = _device(device)
    K = as_positive_int(devices, "devices")
    Nmax = as_positive_int(max_jobs, "max_jobs")
    cand = np.unique(as_quantities(sizes, "sizes", "size"))
    if cand.size < 2 or np.any(cand <= 0):
        raise InvalidModelError(f"sizes must hold at least 2 distinct sizes > 0, got {sizes!r}")
    cross = a * r
    near = cand[int(np.argmin(np.abs(np.log(cand) - math.log(max(cross, 1.0)))))]
    chosen = sorted({int(cand[0]), int(near), int(cand[-1])})
    # [Atk07] ch. 9: the information on the intercept (a) sits at the small end, on the
    # slope (1/r) at the large end; the middle size is there to check the model's shape
    ends = 0.5 if len(chosen) == 2 else 0.4
    shares = {b: (ends if b in (chosen[0], chosen[-1]) else 1.0 - 2 * ends) for b in chosen}
    points, knees = [], {}
    for bs in chosen:
        ns = knee(build_device_network({"a": a, "r": r}, bs, devices=K, think_time=think_time))
        knees[bs] = ns
        points += [(j, bs) for j in knee_jobs(ns, Nmax)]
    return MeasurementPlan(tuple(points), knees, cross, "planned", shares)


def dense_plan(
    jobs: Sequence[int] = (1, 2, 4, 8, 12, 16), sizes: Sequence[Any] = DEFAULT_SIZES
) -> MeasurementPlan:
    """The model-blind full grid ``jobs x sizes`` (the usual sweep, seed 000's practice)."""
    bs = [int(b) for b in np.unique(as_quantities(sizes, "sizes", "size"))]
    js = sorted({as_positive_int(j, "jobs") for j in jobs})
    return MeasurementPlan(tuple((j, b) for b in bs for j in js), {}, math.nan, "dense")


def run_plan(
    plan: MeasurementPlan, engine: str = "emu", *, budget: float | str | None = None, **options: Any
) -> pd.DataFrame:
    """Measure every point of ``plan`` with qnbench; one row per point (the trace's points).

    One qnbench invocation per planned size (its client counts as one ``jobs`` sweep);
    ``options`` go to :func:`qnmodel.bench.run` (``dev_latency``, ``dev_rate``, ``devices``,
    ``think``, ``runtime``, ...). With ``budget`` (seconds of measuring for the whole plan)
    each size gets its share of it (:meth:`MeasurementPlan.runtime`) instead of ``runtime``.
    """
    from ... import bench

    total = None if budget is None else as_quantity(budget, "budget", "time", positive=True)
    frames = []
    for bs in plan.sizes:
        if total is not None:
            options["runtime"] = plan.runtime(bs, total)
        trace = bench.run(engine, jobs=plan.jobs_for(bs), bs=bs, progress=False, **options)
        frames.append(trace.to_frame())
    return pd.concat(frames, ignore_index=True)


def _model_throughput(n: np.ndarray, B: np.ndarray, a: float, r: float, K: int, Z: float):
    """Exact-MVA throughput of the device network at (n_i, B_i) ([RL80])."""
    sizes, where = np.unique(B, return_inverse=True)
    D = np.repeat(((a + sizes / r) / K)[:, None], K, axis=1)
    X, *_ = exact(D, D, np.full(sizes.size, Z), int(n.max()), per_station=False)
    return X[where, n.astype(np.int64) - 1]


def fit_points(
    points: pd.DataFrame,
    *,
    devices: int = 1,
    think_time: float | str = 0.0,
    start: Any = None,
    ci_level: float = 0.95,
) -> CalibrationResult:
    """Fit ``a`` and ``r`` to the throughputs of a closed-loop sweep by exact MVA.

    ``points`` has columns ``jobs``, ``bs_bytes`` and ``throughput_ops_s`` (a qnbench points
    frame). The model is K queueing stations of demand ``(a + B/r)/K`` and think time Z,
    exact for random device selection with exponential service (``dev_select="random"``,
    ``dev_dist="exp"``: a product-form network). Each point is weighted by the counting
    error of a rate measured over ``elapsed_s`` seconds, ``sigma_i = sqrt(X_i / T_i)``, with
    X_i from a first fit with relative weights (weights from the observed rates would bias
    the fit toward the points that happened to measure low); relative weights when the
    frame has no ``elapsed_s``. The covariance is scaled by the reduced chi-square, so the
    intervals reflect the scatter actually seen. 95 % intervals by default.
    """
    K = as_positive_int(devices, "devices")
    Z = as_quantity(think_time, "think_time", "time")
    n = points["jobs"].to_numpy(dtype=np.float64)
    B = points["bs_bytes"].to_numpy(dtype=np.float64)
    y = points["throughput_ops_s"].to_numpy(dtype=np.float64)
    if np.any(~np.isfinite(y) | (y <= 0)):
        i = int(np.flatnonzero(~np.isfinite(y) | (y <= 0))[0])
        raise InvalidModelError(
            f"point {i} (jobs {n[i]:g}, bs {B[i]:g} B) has throughput {y[i]!r}: no request "
            "completed in its window; lengthen the runtime"
        )
    a0, r0 = _device(start) if start is not None else (1e-3, 1e8)
    params = Parameters(
        [Parameter("a", a0, min=0.0, unit="s"), Parameter("r", r0, min=1.0, unit="B/s")]
    )

    def func(_x, a, r):
        return _model_throughput(n, B, a, r, K, Z)

    x = np.arange(y.size, dtype=np.float64)
    model = f"exact MVA, {K} devices of demand (a + B/r)/{K}, Z = {Z:g} s"
    first = fit_model(func, params, x, y, weights="relative", uncertainty="none", model=model)
    if "elapsed_s" not in points:
        return fit_model(func, params, x, y, weights="relative", ci_level=ci_level, model=model,
                         extra={"runs": int(y.size)})  # fmt: skip
    # counting error of a rate X measured over T seconds: var = X / T, with X from the first
    # fit (weights from the observed rates would pull the fit toward the low points)
    T = points["elapsed_s"].to_numpy(dtype=np.float64)
    sigma = np.sqrt(np.maximum(first.fitted, 1e-300) / np.maximum(T, 1e-9))
    return fit_model(
        func,
        params.updated({"a": {"value": first.values["a"]}, "r": {"value": first.values["r"]}}),
        x,
        y,
        weights=sigma,
        ci_level=ci_level,
        model=model,
        extra={"runs": int(y.size), "weights": "Poisson counting error sqrt(X_fit / T)"},
    )


@dataclass(frozen=True)
class PlanComparison:
    """A planned and a dense sweep of the same emulated devices, fitted alike.

    ``width_ratio[p]`` is (planned interval width) / (dense interval width) for parameter p;
    ``covered[kind][p]`` whether that sweep's interval holds the true value.
    """

    truth: dict
    planned: MeasurementPlan
    dense: MeasurementPlan
    planned_fit: CalibrationResult
    dense_fit: CalibrationResult
    width_ratio: dict
    covered: dict
    seconds: dict

    @property
    def run_ratio(self) -> float:
        return self.planned.runs / self.dense.runs

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for kind, fit, plan in (
            ("planned", self.planned_fit, self.planned),
            ("dense", self.dense_fit, self.dense),
        ):
            for p in ("a", "r"):
                lo, hi = fit.confidence_intervals[p] or (math.nan, math.nan)
                rows.append(
                    {
                        "sweep": kind,
                        "runs": plan.runs,
                        "seconds": self.seconds[kind],
                        "parameter": p,
                        "true": self.truth[p],
                        "value": fit.values[p],
                        "ci_low": lo,
                        "ci_high": hi,
                        "ci_width": hi - lo,
                        "covered": self.covered[kind][p],
                    }
                )
        return pd.DataFrame(rows)


def compare_plans(
    *,
    a: float | str = "2 ms",
    r: float | str = "100 MB/s",
    devices: int = 4,
    think_time: float | str = "4 ms",
    max_jobs: int = 16,
    prior_factor: float = 2.0,
    runtime: float | str = "0.25 s",
    warmup: float | str = "0.05 s",
    dense_jobs: Sequence[int] = (1, 2, 4, 8, 12, 16),
    sizes: Sequence[Any] = DEFAULT_SIZES,
    realtime: bool = True,
    save: str | os.PathLike | None = None,
) -> PlanComparison:
    """Measure a planned and a dense sweep of emulated devices and compare the fits.

    The plan is made from a deliberately wrong prior (``a * prior_factor``,
    ``r / prior_factor``), as a datasheet would be. Both sweeps get the same total measuring
    time ``runtime * dense.runs``: the dense sweep ``runtime`` per run, the plan its shares of
    it (fewer, longer runs: each run also costs a warm-up and a set-up, which the plan saves).
    Both are fitted by :func:`fit_points`. ``realtime`` runs the clients with SCHED_FIFO
    (root or CAP_SYS_NICE): on a loaded machine late wake-ups otherwise lower the measured
    throughput by tens of percent at some points. With ``save`` the measured points of both go to
    that CSV (column ``sweep``; ``cpu_steal_share`` the share of the CPU the hypervisor stole
    during each run, :func:`qnmodel.bench.trace.steal_share`).
    """
    import time

    ta = as_quantity(a, "a", "time")
    tr = as_quantity(r, "r", "rate", positive=True)
    Z = as_quantity(think_time, "think_time", "time")
    prior = {"a": ta * prior_factor, "r": tr / prior_factor}
    planned = plan_sweep(prior, devices=devices, think_time=Z, max_jobs=max_jobs, sizes=sizes)
    dense = dense_plan(dense_jobs, sizes)
    opts = dict(
        dev_latency=ta,
        dev_rate=tr,
        devices=devices,
        dev_select="random",
        dev_dist="exp",
        think=Z,
        warmup=warmup,
        realtime=bool(realtime),
    )
    frames, fits, seconds = {}, {}, {}
    rt = as_quantity(runtime, "runtime", "time")
    for kind, plan in (("planned", planned), ("dense", dense)):
        t0 = time.monotonic()
        frames[kind] = run_plan(plan, "emu", budget=rt * dense.runs, **opts)
        seconds[kind] = time.monotonic() - t0
    if save is not None:
        out = pd.concat([f.assign(sweep=k) for k, f in frames.items()], ignore_index=True)
        keep = [
            "sweep",
            "jobs",
            "bs_bytes",
            "ops",
            "throughput_ops_s",
            "latency_mean_s",
            "elapsed_s",
            "cpu_steal_share",
        ]
        from ..._files import open_output, output_dir

        output_dir(Path(save).parent)
        with open_output(save, newline="") as fh:
            out[keep].to_csv(fh, index=False)
    for kind in ("planned", "dense"):
        fits[kind] = fit_points(frames[kind], devices=devices, think_time=Z, start=prior)
    truth = {"a": ta, "r": tr}
    width, covered = {}, {"planned": {}, "dense": {}}
    for p in ("a", "r"):
        w = {}
        for kind in ("planned", "dense"):
            ci = fits[kind].confidence_intervals[p]
            if ci is None:
                raise InvalidModelError(f"the {kind} sweep gave no interval for {p}")
            w[kind] = ci[1] - ci[0]
            covered[kind][p] = bool(ci[0] <= truth[p] <= ci[1])
        width[p] = w["planned"] / w["dense"]
    return PlanComparison(
        truth, planned, dense, fits["planned"], fits["dense"], width, covered, seconds
    )
