"""Event simulation of streaming stages: :func:`simulate_streaming`.

The system :func:`qnmodel.models.streaming.streaming_mva` models (an NFS server's read miss:
the disk reads ahead while the network sends what was read), by events: a closed
single-class network whose job, after its think time, visits each station's *serial* part
``D_k - G_k`` in turn and then the *streaming group* (the stations with ``G_k > 0``), holding
every stage of the group at once while each serves it at its own rate.

Every station is fluid processor sharing ([Kle76] sec. 4.4): its work is shared among the
jobs present, at most one server's rate per job (``servers`` of them). A job's stream is one
flow through every stage of the group: station k moves it at 1 / G_k of the stream per
second of its full rate, so alone it takes ``max_k G_k`` (the slowest stage governs), and
with others it gets its max-min fair share of each stage (progressive filling, [BG92] sec.
6.5.2: a stage it cannot use fully, because another stage holds it back, goes to the other
jobs). A serial part is a flow through its station alone; a delay station serves every job
at full rate. With processor sharing the serial parts' means are those of any product-form
queue ([BCMP75]): a network without a group is exact MVA. Work sizes are the demands
(deterministic); pure Python; a seed reproduces a run bit for bit.

References
----------
.. [BCMP75] F. Baskett, K. M. Chandy, R. R. Muntz, F. G. Palacios, "Open, closed, and mixed
   networks of queues with different classes of customers", J. ACM 22(2):248-260, 1975.
.. [BG92] D. Bertsekas, R. Gallager, *Data Networks*, 2nd ed., Prentice-Hall 1992, sec. 6.5.2.
.. [Kle76] L. Kleinrock, *Queueing Systems, Vol. 2: Computer Applications*, Wiley 1976,
   sec. 4.4 (processor sharing).
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Mapping

import numpy as np

from .._validate import as_population, as_positive_int, as_quantity, check_size
from ..errors import InvalidModelError
from ..model import Network
from ..model.streamed import streamed_parts
from ..results.simulation import StorageSimulationResult
from ._flows import Flows, Link
from .storage import MAX_N, MAX_REQUESTS, _mean_hw

__all__ = ["METHOD_STREAMING", "simulate_streaming"]

METHOD_STREAMING = (
    "simulation (streaming stages: fluid processor-sharing stations, a job's stream max-min "
    "fair through every stage at once; pure-Python events)"
)


def _stations(network: Network, streamed: Mapping) -> list[tuple]:
    """(name, serial part, G, servers, is delay) per station, validated
    (:func:`qnmodel.model.streamed.streamed_parts`)."""
    p = streamed_parts(network, streamed, "simulate_streaming")
    return [(name, float(p.serial[k]), float(p.streamed[k]), int(p.servers[k]), bool(p.delay[k]))
            for k, name in enumerate(p.names)]  # fmt: skip


def _run(stations, N, Z, jobs, warm, rng) -> tuple[float, float]:
    """One run: (mean R, X) of ``jobs`` cycles after ``warm`` (module docstring)."""
    flows = Flows()
    # per station: its work rate (units/s: 1 / G_k in the group, else 1) and shared link
    rate = [1.0 / g if g > 0 else 1.0 for _n, _s, g, _m, _d in stations]
    shared = [None if d else Link(rate[k] * m, False)
              for k, (_n, _s, _g, m, d) in enumerate(stations)]  # fmt: skip
    serial = [(k, s * rate[k]) for k, (_n, s, _g, _m, _d) in enumerate(stations) if s > 0]
    group = [k for k, (_n, _s, g, _m, _d) in enumerate(stations) if g > 0]

    def links(ks):  # a flow through stations ks: their shared links, one server's rate each
        out = []
        for k in ks:
            _n, _s, _g, m, d = stations[k]
            if shared[k] is not None:
                out.append(shared[k])
            if d or m > 1:
                out.append(Link(rate[k], False))
        return tuple(out)

    heap: list = []
    seq = itertools.count()
    start: dict = {}
    t = 0.0
    done, rsum, t_first = 0, 0.0, 0.0

    def step(job, i):  # the job's i-th serial part, then the group
        if i < len(serial):
            k, size = serial[i]
            flows.add_path(t, size, links((k,)), (job, i + 1))
        else:
            flows.add_path(t, 1.0, links(group), (job, -1))

    for j in range(N):
        heapq.heappush(heap, (rng.expovariate(1.0 / Z) if Z > 0 else 0.0, next(seq), j))
    total = warm + jobs
    while done < total:
        tf, f, _marked = flows.peek()
        if heap and heap[0][0] < tf:  # a think time ends
            t, _, job = heapq.heappop(heap)
            start[job] = t
            step(job, 0)
            continue
        t = max(t, tf)
        job, nxt = flows.take(t, f, False)
        if nxt >= 0:
            step(job, nxt)
            continue
        done += 1
        if done == warm:
            t_first = t
        elif done > warm:
            rsum += t - start[job]
        if Z > 0:
            heapq.heappush(heap, (t + rng.expovariate(1.0 / Z), next(seq), job))
        else:
            start[job] = t
            step(job, 0)
    return rsum / jobs, jobs / (t - t_first)


def simulate_streaming(network: Network, streamed: Mapping, N, think_time=None, *,
                       jobs: int = 3000, reps: int = 3, warmup=None,
                       seed: int = 1) -> StorageSimulationResult:  # fmt: skip
    """Simulate a closed network with a streaming group (module docstring).

    Parameters
    ----------
    network : Network
        Single-class; queue stations (``servers`` >= 1, processor sharing) and delay
        stations; its ``think_time`` is used unless ``think_time`` is given.
    streamed : mapping of str -> float or str
        G_k, the part of station k's demand (s, 0 <= G_k <= D_k) that streams with the other
        stages of the group, as for :func:`qnmodel.models.streaming.streaming_mva`.
    N : int or sequence of int
        Populations (each >= 1), one simulated point each.
    think_time : float or str, optional
        Z, mean exponential think time, s (>= 0).
    jobs, reps, warmup, seed
        Counted cycles per run (>= 10), runs per point (>= 1), cycles discarded per run
        (default max(200, jobs // 10)), seed (>= 0).

    Returns
    -------
    StorageSimulationResult
        R (think time excluded) and X per population with 95 % half-widths; method
        :data:`METHOD_STREAMING`.
    """
    stations = _stations(network, streamed)
    Z = as_quantity(network.think_time if think_time is None else think_time, "think_time",
                    "time")  # fmt: skip
    values = N if isinstance(N, list | tuple | np.ndarray) else [N]
    if len(values) == 0:
        raise InvalidModelError("N must hold at least one population, got an empty list")
    points = [as_population(n, f"N[{i}]") for i, n in enumerate(values)]
    check_size(max(points), MAX_N, "simulate_streaming: N (every job in flight holds a flow "
               "each event visits)", "simulate a smaller population")  # fmt: skip
    jobs = as_positive_int(jobs, "jobs", 10)
    reps = as_positive_int(reps, "reps", 1)
    warm = max(200, jobs // 10) if warmup is None else as_positive_int(warmup, "warmup", 1)
    seed = as_positive_int(seed, "seed", 0)
    check_size(
        len(points) * reps * (jobs + warm), MAX_REQUESTS,
        "simulate_streaming: cycles to simulate (points x reps x (jobs + warmup))",
        "ask for fewer jobs, reps or points",
    )  # fmt: skip
    rng = random.Random(seed)
    R, X, Rh, Xh = [], [], [], []
    for n in points:
        obs = np.array([_run(stations, n, Z, jobs, warm, rng) for _ in range(reps)])
        m, h = _mean_hw(obs)
        R.append(m[0])
        X.append(m[1])
        Rh.append(h[0])
        Xh.append(h[1])
    return StorageSimulationResult(
        method=METHOD_STREAMING, n=np.array(points, dtype=np.int64), arrival_rate=None,
        think_time=float(Z), response_time=np.array(R), response_time_halfwidth=np.array(Rh),
        throughput=np.array(X), throughput_halfwidth=np.array(Xh), jobs=jobs,
        replications=reps, warmup=warm, seed=seed,
    )  # fmt: skip
