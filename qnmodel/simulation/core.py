"""``simulate``: discrete-event simulation with confidence intervals (the facade).

The event loop is compiled C (``_csrc/qnsim.c``); this module chooses run lengths, runs
replications or one long run cut into batches, and turns per-run sums into means with
Student-t confidence intervals (A. M. Law, *Simulation Modeling and Analysis*, 5th ed.,
McGraw-Hill 2015, sec. 9.4.1 eq. 9.3 for replications and sec. 9.5.3 for batch means).
"""

from __future__ import annotations

import math
import numbers
import secrets
import warnings
from typing import Any

import numpy as np

from .._validate import as_quantity
from ..errors import ConvergenceError, InvalidModelError, InvalidTypeError
from ..results.simulation import SimulationResult
from . import _engine
from ._model import compile_model
from ._work import check_work

__all__ = ["simulate", "CI_METHODS"]

CI_METHODS = ("replications", "batch_means")
#: completions per class and replication aimed at by the default run length
DEFAULT_COMPLETIONS = 20_000


def _positive_time(value: Any, name: str) -> float:
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value <= 0:
        raise InvalidModelError(f"{name} must be > 0 (simulated seconds), got {value!r}")
    return as_quantity(value, name, "time", positive=True)


def _count(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidTypeError(f"{name} must be an integer, got {value!r}")
    if int(value) < minimum:
        raise InvalidModelError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def _t_halfwidth(obs: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean over axis 0 and the Student-t half-width t_{n-1, 1-a/2} s / sqrt(n) (Law eq. 9.3)."""
    from scipy.stats import t as student_t

    n = obs.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.mean(obs, axis=0)
        sd = np.std(obs, axis=0, ddof=1)
    return mean, student_t.ppf(0.5 + confidence / 2, n - 1) * sd / math.sqrt(n)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def simulate(
    net: Any,
    N: Any = None,
    arrival_rate: Any = None,
    *,
    service: Any = None,
    warmup: Any = None,
    run_length: Any = None,
    replications: int = 10,
    method: str = "replications",
    batches: int = 20,
    confidence: float = 0.95,
    seed: int | None = None,
    quantiles: Any = (0.5, 0.9, 0.95, 0.99),
    target_relative_halfwidth: float | None = None,
    max_replications: int = 200,
    max_jobs: int = 2_000_000,
) -> SimulationResult:
    """Simulate a queueing network and estimate its means and response-time quantiles.

    Parameters
    ----------
    net : Network
        A network without classes (closed with ``N``, or open with ``arrival_rate``) or with
        classes. Stations may be FCFS queues (one or ``servers`` servers), delays,
        load-dependent (``rate_multipliers``), processor sharing (``discipline="PS"``: the
        station's speed, min(n, m) servers or r(n), shared equally by the n jobs present),
        LCFS-PR (one server, or a rate curve), static priorities by the classes' ``priority``
        (``"HOL"`` non-preemptive, ``"PRIO-PR"`` preemptive resume, m servers), or fork-join
        elements (``branches``, ``k``: a job forks into one sub-job per branch and leaves when
        ``k`` have finished; the others still occupy their branch). A station's ``capacity``
        bounds the jobs it holds: an open job finding it full is lost, a closed job is blocked
        after service where it is (at its terminal after a think time) until there is room.
        Each station's service-time law is its own (``Station(..., service=...)`` or
        ``scv=``; exponential by default).
    N : int or sequence of int, optional
        Closed population (per class for a multi-class network; overrides its populations).
    arrival_rate : float, str or sequence, optional
        Poisson arrival rate of the open class(es), 1/s or a unit string (``"40000/s"``).
    service : str, distribution or mapping
        Service-time distribution: one for all stations, or a mapping station name /
        ``(class, station)`` / ``"*"`` -> distribution (see
        :mod:`qnmodel.model.laws`); the mean is always the demand.
    warmup : float or str, optional
        Simulated time discarded at the start of every replication (of the run, for batch
        means), s; must be > 0. Default: a tenth of ``run_length``.
    run_length : float or str, optional
        Simulated time kept per replication (batch means: for the whole run), s; > 0. Default:
        long enough for about 20,000 completions of the slowest class.
    replications : int
        Independent replications (``method="replications"``), >= 2.
    method : {"replications", "batch_means"}
    batches : int
        Batches of the single long run (``method="batch_means"``), >= 2.
    confidence : float
        Level of the intervals, in (0, 1).
    seed : int, optional
        Seed of the generator; the result records it, and the same seed reproduces the result
        bit for bit. Default: a fresh random seed.
    quantiles : sequence of float
        Response-time quantiles to estimate, each in (0, 1).
    target_relative_halfwidth : float, optional
        Keep adding replications (batch means: doubling the run) until every class's mean
        response time and throughput have a half-width at most this fraction of the estimate;
        raises :class:`~qnmodel.errors.ConvergenceError` if ``max_replications`` (or 16 times
        ``run_length``) is not enough.
    max_replications : int
        Budget of the precision target.
    max_jobs : int
        Largest number of jobs (and fork-join sub-jobs) in the system at once.

    Returns
    -------
    SimulationResult
        With a finite capacity anywhere, also ``loss_probability`` (per class) and
        ``loss_rate`` (per class and station, 1/s) of the open classes.

    Raises
    ------
    UnstableModelError
        An open class loads a station without a capacity limit to utilisation >= 1 (at a
        fork-join branch, lambda D fanout / n), or more than ``max_jobs`` jobs are present.
    InvalidModelError
        Bad arguments; LCFS-PR with several servers, a priority station with a rate curve; a
        network whose closed jobs all end up blocked (deadlock).

    Notes
    -----
    Without a routing matrix each class visits the stations where it has demand, in order,
    once per cycle, with the whole demand D = V S as the mean of one service -- the view the
    analytic solvers take, so with exponential service the simulation estimates what exact MVA
    computes for product-form networks. With one (``Network(..., routing=...)``) each job, on
    leaving a node, draws its next (class, node) from the routing probabilities, each visit a
    service of mean S (per visit); class switching changes the job's class (its service law
    and the class its station statistics count under). A response is then a cycle from the
    outside node back to it, counted for the class the job started it as; per chain results
    are ``chain_throughput`` and ``chain_response_time``, and ``residence_time`` is per chain
    cycle (as :func:`qnmodel.solvers.mva_chains` reports). Response-time quantiles then have
    the shape of the routes: a request visiting one of k disks has a mixture law, one visiting
    all k in series a sum. A routed network has no finite capacities (refused).

    Estimates are means over replications (or batches) of per-run time averages and ratios;
    quantiles are per-run quantiles from a log-bucket histogram (relative bucket width 1/128,
    linear inside a bucket) averaged over runs. See ``docs/explanation/simulation.md``.

    References
    ----------
    A. M. Law, *Simulation Modeling and Analysis*, 5th ed., McGraw-Hill, 2015, ch. 9.
    D. Blackman, S. Vigna, "Scrambled linear pseudorandom number generators", ACM TOMS 47(4),
    2021 (xoshiro256**, the generator of the event loop).
    """
    if method not in CI_METHODS:
        raise InvalidModelError(f"method must be one of {list(CI_METHODS)}, got {method!r}")
    if not (isinstance(confidence, numbers.Real) and 0 < confidence < 1):
        raise InvalidModelError(f"confidence must be in (0, 1), got {confidence!r}")
    qs = np.atleast_1d(np.asarray(quantiles, dtype=np.float64)).ravel()
    if np.any(~((qs > 0) & (qs < 1))):
        raise InvalidModelError(f"quantiles must each be in (0, 1), got {quantiles!r}")
    n_obs = _count(
        replications if method == "replications" else batches,
        ("replications" if method == "replications" else "batches"),
        2,
    )
    max_replications = _count(max_replications, "max_replications", 2)
    max_jobs = _count(max_jobs, "max_jobs", 1)
    if target_relative_halfwidth is not None and not (
        isinstance(target_relative_halfwidth, numbers.Real) and target_relative_halfwidth > 0
    ):
        raise InvalidModelError(
            f"target_relative_halfwidth must be > 0, got {target_relative_halfwidth!r}"
        )
    if seed is None:
        seed = secrets.randbits(63)
    elif isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise InvalidModelError(f"seed must be a non-negative integer, got {seed!r}")
    seed = int(seed)

    model, info = compile_model(net, N, arrival_rate, service)
    active = (info.is_open & (info.arrival_rate > 0)) | (~info.is_open & (info.population > 0))
    if not np.any(active):
        raise InvalidModelError("simulate: no class has jobs (N) or arrivals (arrival_rate)")
    given_length = run_length
    if run_length is None:
        x = info.throughput_guess[active]
        run_length = DEFAULT_COMPLETIONS / float(np.min(x[x > 0])) if np.any(x > 0) else 1.0
        if method == "batch_means":
            run_length *= n_obs
    else:
        run_length = _positive_time(run_length, "run_length")
    warmup = run_length / 10 if warmup is None else _positive_time(warmup, "warmup")
    # a work bound before any event: the most runs a target half-width may ask for
    # (replications: max_replications; batch means: lengths 1, 2, 4, 8, 16 x run_length)
    if method == "replications":
        most = n_obs if target_relative_halfwidth is None else max(n_obs, max_replications)
    else:
        most = 1 if target_relative_halfwidth is None else 31
    check_work(info, run_length, warmup, most, given_length)
    r_scale = float(np.max(info.demand.sum(axis=1))) or 1.0

    runs: list[_engine.RunOutput] = []

    def do_runs(count: int) -> None:
        for _ in range(count):
            runs.append(_go(model, seed, len(runs), warmup, run_length, 1, r_scale, qs, max_jobs))

    if method == "replications":
        do_runs(n_obs)
        res = _estimate(info, model, runs, run_length, confidence, qs)
        while target_relative_halfwidth is not None:
            worst = _worst_relative(res, active)
            if worst <= target_relative_halfwidth:
                break
            if len(runs) >= max_replications:
                raise ConvergenceError(
                    _precision_msg(
                        worst,
                        target_relative_halfwidth,
                        len(runs),
                        "replications",
                        "max_replications",
                    )
                )
            need = math.ceil(len(runs) * (worst / target_relative_halfwidth) ** 2 * 1.1)
            do_runs(min(max(need, len(runs) + 1), max_replications) - len(runs))
            res = _estimate(info, model, runs, run_length, confidence, qs)
    else:
        length = run_length
        while True:
            runs = [_go(model, seed, 0, warmup, length / n_obs, n_obs, r_scale, qs, max_jobs)]
            res = _estimate(info, model, runs, length, confidence, qs)
            if target_relative_halfwidth is None:
                break
            worst = _worst_relative(res, active)
            if worst <= target_relative_halfwidth:
                break
            if length >= 16 * run_length:
                raise ConvergenceError(
                    _precision_msg(worst, target_relative_halfwidth, n_obs, "batches", "run_length")
                )
            length *= 2
        run_length = length
    return SimulationResult(
        method="simulation",
        ci_method=method,
        class_names=info.class_names,
        station_names=info.station_names,
        branch_names=info.branch_names,
        population=info.population.astype(np.float64),
        arrival_rate=info.arrival_rate,
        events=sum(r.events for r in runs),
        visits=int(sum(float(r.visits.sum()) for r in runs)),
        seed=seed,
        warmup=float(warmup),
        run_length=float(run_length),
        confidence=float(confidence),
        quantiles=qs,
        **res,
    )


def _go(model, seed, stream, warmup, batch, batches, r_scale, qs, max_jobs):
    return _engine.run(
        model, seed=seed, stream=stream, warmup=warmup, batch=batch, batches=batches,
        r_scale=r_scale, quantiles=qs, max_tasks=max_jobs,
    )  # fmt: skip


def _precision_msg(worst: float, target: float, n: int, what: str, budget: str) -> str:
    return (
        f"simulate: target_relative_halfwidth={target:g} not reached: the widest relative "
        f"half-width is {worst:.3g} after {n} {what}; raise {budget} or loosen the target"
    )


def _worst_relative(res: dict, active: np.ndarray) -> float:
    worst = 0.0
    for key in ("throughput", "response_time"):
        v, h = res[key][active], res[f"{key}_halfwidth"][active]
        with np.errstate(invalid="ignore", divide="ignore"):
            rel = np.where(v > 0, h / np.abs(v), np.inf)
        rel = np.where(np.isnan(rel), np.inf, rel)
        worst = max(worst, float(np.max(rel)))
    return worst


def _estimate(info, model, runs, length, confidence, qs) -> dict:
    """Means and half-widths from the batches of all runs (each batch one observation)."""
    cat = lambda name: np.concatenate([getattr(r, name) for r in runs], axis=0)  # noqa: E731
    done, rsum, quant = cat("done"), cat("rsum"), cat("quant")
    area, busy, narea, visits, resid = (
        cat("area"),
        cat("busy"),
        cat("narea"),
        cat("visits"),
        cat("resid"),
    )
    T = length / runs[0].done.shape[0]  # batch length
    out: dict[str, Any] = {"replications": done.shape[0]}

    def put(name: str, obs: np.ndarray) -> None:
        m, h = _t_halfwidth(obs, confidence)
        out[name], out[f"{name}_halfwidth"] = m, h

    put("throughput", done / T)
    put("response_time", _ratio(rsum, done))
    put("response_time_quantiles", quant)
    ns, fj = info.node_station, info.node_station < 0
    cap = info.util_scale
    util = busy[:, :, np.maximum(ns, 0)] / (T * cap[np.maximum(ns, 0)])
    util[:, :, fj] = np.nan
    put("utilization", util)
    # plain nodes: jobs at their station; fork-join nodes: jobs between fork and join
    qlen = np.where(fj[None, None, :], narea, area[:, :, np.maximum(ns, 0)]) / T
    put("queue_length", qlen)
    if info.chains is None:
        put("residence_time", _ratio(resid, visits))
    else:  # per chain cycle (all visits of a class to a station summed)
        ch = info.chains
        nq = int(ch.max()) + 1 if ch.size and ch.max() >= 0 else 0
        cyc = np.stack([done[:, ch == q].sum(axis=1) for q in range(nq)], axis=1)
        cyc_rsum = np.stack([rsum[:, ch == q].sum(axis=1) for q in range(nq)], axis=1)
        per_class = np.where(ch[None, :] >= 0, cyc[:, np.maximum(ch, 0)], 0.0)
        put("residence_time", _ratio(resid, per_class[:, :, None]))
        out["chains"] = ch
        put("chain_throughput", cyc / T)
        put("chain_response_time", _ratio(cyc_rsum, cyc))
    put("station_utilization", util.sum(axis=1))
    put("station_queue_length", qlen.sum(axis=1))
    bs = info.branch_station
    put("branch_utilization", busy[:, :, bs].sum(axis=1) / (T * cap[bs]))
    put("branch_queue_length", area[:, :, bs].sum(axis=1) / T)
    if info.finite:
        lost = cat("lost")
        put("loss_rate", lost / T)
        put("loss_probability", _ratio(lost.sum(axis=2), cat("arrivals")))
    return out
