"""The work bound of :func:`qnmodel.simulate`: a run whose expected number of events is past
:data:`MAX_EVENTS` is refused before it starts, naming ``run_length`` and the limit.

The estimate: each class ``c`` completes about ``X_c`` cycles per second (the simulator's own
throughput guess, an optimistic bound from the demands), and each cycle is one event per
node where the class has work (with a routing matrix: per visit, sum_k V_ck) plus one for its
think time or arrival; the run simulates
``warmup + run_length`` seconds per replication (batch means: one run of ``warmup +
run_length``). Measured: the estimate is within 1 % of the events counted for a closed
three-station network at N = 20 (16.77 million events counted, 3.5 million events/s on one
core), so :data:`MAX_EVENTS` events take about half an hour.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import check_memory
from ..errors import InvalidModelError

__all__ = ["BYTES_PER_JOB", "MAX_EVENTS", "check_work", "expected_events"]

#: memory of one closed-class job in the event loop (its record and heap entry), bytes:
#: measured 72 B per job at N = 2e6 (two stations), rounded up
BYTES_PER_JOB = 96

#: the most events one call of :func:`qnmodel.simulate` may be expected to simulate
MAX_EVENTS = 6 * 10**9


def expected_events(info, run_length: float, warmup: float, runs: int) -> float:
    """About how many events a simulation of ``runs`` runs of ``warmup + run_length`` s
    does (module docstring)."""
    x = np.asarray(info.throughput_guess, dtype=np.float64)
    nodes = np.asarray(info.events_per_cycle, dtype=np.float64)
    active = np.where(info.is_open, info.arrival_rate > 0, info.population > 0)
    rate = float(np.sum(np.where(active & np.isfinite(x), x * nodes, 0.0)))
    return rate * (float(warmup) + float(run_length)) * int(runs)


def check_work(info, run_length: float, warmup: float, runs: int, given: object) -> None:
    """Refuse a simulation expected to take more than :data:`MAX_EVENTS` events (``given``:
    the run_length as the user gave it, None for the default)."""
    given = run_length if given is None else given
    jobs = float(np.sum(np.where(info.is_open, 0.0, info.population)))
    check_memory(
        BYTES_PER_JOB * jobs,
        f"simulate: N = {jobs:.0f} closed jobs in the event loop",
        "simulate fewer jobs (the exact solvers take large N), or raise the limit",
    )
    events = expected_events(info, run_length, warmup, runs)
    if not math.isfinite(events) or events > MAX_EVENTS:
        shown = repr(given) if isinstance(given, str) else f"{float(given):.4g} s"
        raise InvalidModelError(
            f"simulate: run_length={shown} ({run_length:.4g} s, warm-up {warmup:.4g} s, "
            f"{runs} run(s)) would simulate about {events:.3g} events, more than the limit of "
            f"{MAX_EVENTS:.3g} (qnmodel.simulation._work.MAX_EVENTS, about half an hour); "
            "give a shorter run_length or fewer replications"
        )
