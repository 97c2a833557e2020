"""Event simulation of networked storage whose stages overlap: :func:`simulate_storage`.

The reference the overlapped models of :mod:`qnmodel.models.storage_overlap` are measured
against, and the simulation ``NetworkedRAID.simulate`` runs: things the compiled simulator
(:func:`qnmodel.simulate`) cannot express -- one transfer moving through two links at once,
a link shared by the branches of every request's fork, a sender that starts a request's
transfers one after another, a request of several fork-joins in turn over the same members.
Pure Python (Ctrl-C stops it), seeded with :class:`random.Random`: a seed reproduces a run
bit for bit.

The system
----------
A closed population of ``N`` requests (exponential think time ``Z``) or an open Poisson
stream at rate lambda. A request visits FCFS exponential ``serial`` stations (the master's
CPU, the other link direction's messages), then a sequence of *phases*; a phase forks into
branches, one per member it touches, and joins when all are done. A branch is

1. ``out`` bytes from the master to member m: one flow through the master link's egress and
   member m's ingress *at once* (a pipelined transfer);
2. member m's disk: one FCFS server of mean ``d`` per chunk, exponential (SCV 1), constant
   (SCV 0) or lognormal of that SCV (:func:`qnmodel.model.laws.law_for_scv`), shared by every
   request's branches to m;
3. ``in`` bytes back: one flow through member m's egress and the master's ingress at once.

Links are fluid: every flow in progress gets its max-min fair share of the links it crosses
(progressive filling, [BG92] sec. 6.5.2), which is how TCP flows share a shaped link
(``discipline="ps"``); ``"fcfs"`` lets only the earliest flow at a link move (a link that
sends whole chunks in turn). With ``sender="sequential"`` the master's one thread sends a
request's chunks one after another, each send blocking until the chunk has left (qnbench's
``stripe`` engine); ``send_buffer`` bytes let the next send start that much earlier.
``turnaround`` adds a fixed delay to every branch (a request's trip and the reply latency).

Chunks are placed as the RAID levels of qnbench's ``stripe`` engine place them, at a
uniformly random stripe: RAID0, chunk i of a stripe on member i; RAID5, the parity of stripe
s on member ``K - 1 - s mod K`` and data chunk i on ``(parity + 1 + i) mod K``; a RAID5 write
smaller than a stripe (read-modify-write) reads its data chunks and the parity, then writes
them (two phases).

Estimates
---------
Each of ``reps`` independent runs discards ``warmup`` completed requests, then counts
``jobs``: R is the mean response time of the counted requests (think time excluded), X the
counted requests over the time from the last discarded completion to the last counted one
(the window starts at a completion, so at saturation X reads high by up to one request in
``jobs``). Half-widths are Student-t 95 % over the runs.

Cost
----
Where every link shares its rate and no member link is slower than the master's of its
direction (every ``NetworkedRAID``), each flow of a direction moves at rate / F and the
engine keeps the flows in virtual time, O(log F) per event (``qnmodel.simulation._flows``);
otherwise each change of the flows costs one max-min allocation, O(F + L^2) over the F
flows and L links, and their progress O(F). Measured on this project's two shared cores: a
point of 3 runs of 3000 requests (and 300 warm-up each) takes 0.2-0.4 s at N = 1 and at
N = 32 over 4 members (RAID0 and RAID5 reads, full-stripe and one-chunk writes), about
30-40 us per request; N = 32 RAID0 reads over 4 members with d = c took 13 s with the
general engine, 0.5 s in virtual time.

References
----------
.. [BG92] D. Bertsekas, R. Gallager, *Data Networks*, 2nd ed., Prentice-Hall 1992,
   sec. 6.5.2 (max-min fairness, progressive filling).
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections import deque
from dataclasses import dataclass

import numpy as np

from .._validate import (
    as_choice,
    as_population,
    as_positive_int,
    as_quantity,
    as_scv,
    check_size,
)
from ..errors import InvalidModelError, InvalidTypeError, UnstableModelError
from ..results.simulation import StorageSimulationResult
from ._flows import IN, OUT, EqualShares, FairLinks

__all__ = ["METHOD", "MAX_REQUESTS", "StorageSpec", "simulate_storage", "storage_demands"]

METHOD = (
    "simulation (fluid max-min fair links, FCFS members, pipelined transfers; pure-Python events)"
)
#: The most requests (counted and warm-up, every run and point) one call simulates: about
#: a minute of pure Python with equal-share links (30-40 us a request), longer with the
#: general engine.
MAX_REQUESTS = 2_000_000
#: The largest closed population: every request in flight holds flows the allocation visits.
MAX_N = 10_000
RAID_LEVELS = ("raid0", "raid5")
OPS = ("read", "write")
DISCIPLINES = ("ps", "fcfs")
SENDERS = ("sequential", "parallel")


@dataclass(frozen=True)
class StorageSpec:
    """The simulated system in SI units (module docstring); built by :func:`simulate_storage`.

    Attributes
    ----------
    K : int
        Members (storage servers).
    d : float
        A member's mean time per chunk (disk and server CPU), s.
    scv : float
        Its squared coefficient of variation (0 constant, 1 exponential, else lognormal).
    chunk : float
        Bytes per chunk (stripe unit).
    rate_out, rate_in : float
        The master link's egress and ingress rates, bytes/s.
    server_out, server_in : float
        Every member link's egress and ingress rates, bytes/s.
    serial : tuple of float
        Mean times of the master's FCFS exponential serial stations, s, in order.
    raid, op : str
        ``"raid0"`` / ``"raid5"``, ``"read"`` / ``"write"``.
    chunks : int
        Data chunks per request (at most a stripe's data).
    discipline_out, discipline_in : str
        ``"ps"`` (max-min fair sharing) or ``"fcfs"`` per direction.
    sender : str
        ``"sequential"`` or ``"parallel"`` out-transfers of one request.
    send_buffer : float
        Bytes left of a send when the sequential sender starts the next, bytes.
    turnaround : float
        Fixed delay added to every branch, s.
    """

    K: int
    d: float
    scv: float
    chunk: float
    rate_out: float
    rate_in: float
    server_out: float
    server_in: float
    serial: tuple
    raid: str
    op: str
    chunks: int
    discipline_out: str = "ps"
    discipline_in: str = "ps"
    sender: str = "sequential"
    send_buffer: float = 0.0
    turnaround: float = 0.0

    @property
    def rmw(self) -> bool:
        """A RAID5 write smaller than a stripe: read-modify-write (two phases)."""
        return self.raid == "raid5" and self.op == "write" and self.chunks < self.K - 1


def _pattern(spec: StorageSpec, rng: random.Random) -> list:
    """The phases of one request: lists of (member, bytes out, bytes in)."""
    K, c, k = spec.K, spec.chunk, spec.chunks
    if spec.raid == "raid0":
        start = rng.randrange(K)
        members = [(start + i) % K for i in range(k)]
        if spec.op == "read":
            return [[(m, 0.0, c) for m in members]]
        return [[(m, c, 0.0) for m in members]]
    p = rng.randrange(K)  # the parity's member of a uniformly random stripe
    data = [(p + 1 + i) % K for i in range(K - 1)]
    if spec.op == "read":
        first = rng.randrange(K - 1) if k < K - 1 else 0
        return [[(data[(first + i) % (K - 1)], 0.0, c) for i in range(k)]]
    if k >= K - 1:  # full-stripe write: data and parity out
        return [[(m, c, 0.0) for m in [*data, p]]]
    first = rng.randrange(K - 1 - k + 1)
    touched = [data[first + i] for i in range(k)] + [p]
    return [[(m, 0.0, c) for m in touched], [(m, c, 0.0) for m in touched]]


def storage_demands(spec: StorageSpec) -> list[tuple[str, float]]:
    """Each stage's demand per request, s: (name, D) over every stage that consumes capacity.

    The serial stations, the master link's two directions (bytes per request over the rate),
    the busiest member link per direction and a member's disk (a uniformly random stripe
    spreads a request's t touched chunks evenly: t / K per member and phase).
    """
    K, c, k = spec.K, spec.chunk, spec.chunks
    if spec.raid == "raid5" and spec.op == "write":
        touched = K if k >= K - 1 else k + 1
    else:
        touched = k
    phases = 2 if spec.rmw else 1
    b_out = touched * c if spec.op == "write" else 0.0
    b_in = touched * c if (spec.op == "read" or spec.rmw) else 0.0
    out = [(f"serial[{i}]", s) for i, s in enumerate(spec.serial)]
    out += [
        ("master link egress", b_out / spec.rate_out),
        ("master link ingress", b_in / spec.rate_in),
        ("member link ingress", b_out / K / spec.server_in),
        ("member link egress", b_in / K / spec.server_out),
        ("member disk", spec.d * touched * phases / K),
    ]
    return out


def _drawer(spec: StorageSpec, rng: random.Random):
    d, scv = spec.d, spec.scv
    if d == 0.0 or scv == 0.0:
        return lambda: d
    if scv == 1.0:
        rate = 1.0 / d
        return lambda: rng.expovariate(rate)
    s2 = math.log1p(scv)  # lognormal of mean d and SCV scv: sigma^2 = ln(1 + scv)
    mu, sigma = math.log(d) - s2 / 2.0, math.sqrt(s2)
    return lambda: rng.lognormvariate(mu, sigma)


def _run(spec: StorageSpec, N, lam, Z, jobs, warm, rng) -> tuple[float, float]:
    """One run: (mean R, X) of ``jobs`` requests after ``warm`` (module docstring)."""
    K = spec.K
    equal = (spec.discipline_out == spec.discipline_in == "ps"
             and spec.server_in >= spec.rate_out and spec.server_out >= spec.rate_in)  # fmt: skip
    links = EqualShares(spec) if equal else FairLinks(spec)
    draw = _drawer(spec, rng)
    expo = rng.expovariate
    serial_mean = spec.serial
    nserial = len(serial_mean)
    sequential = spec.sender == "sequential"
    buffer, turnaround = spec.send_buffer, spec.turnaround
    heap: list = []
    seq = itertools.count()
    disks = [deque() for _ in range(K)]
    serial = [deque() for _ in serial_mean]
    start: dict = {}
    phases: dict = {}
    left: dict = {}
    queued: dict = {}
    ids = itertools.count(N or 0)
    t = 0.0
    done, rsum, t_first = 0, 0.0, 0.0

    def push(when, what, arg):
        heapq.heappush(heap, (when, next(seq), what, arg))

    def begin(job):
        start[job] = t
        phases[job] = _pattern(spec, rng)
        enter_serial(job, 0)

    def enter_serial(job, i):
        if i == nserial:
            fork(job)
            return
        q = serial[i]
        q.append(job)
        if len(q) == 1:
            push(t + expo(1.0 / serial_mean[i]) if serial_mean[i] > 0 else t, "serial", i)

    def fork(job):
        branches = phases[job].pop(0)
        left[job] = len(branches)
        sends = [b for b in branches if b[1] > 0]
        if sequential and len(sends) > 1:  # the master's one thread sends them in turn
            queued[job] = deque(sends[1:])
            branches = [sends[0]] + [b for b in branches if b[1] <= 0]
        for m, b_out, b_in in branches:
            if turnaround > 0:
                push(t + turnaround, "go", (job, m, b_out, b_in))
            else:
                go(job, m, b_out, b_in)

    def go(job, m, b_out, b_in):
        if b_out > 0:
            # in a sequential send, the next chunk starts ``buffer`` bytes before this
            # one's end (a mark), or at its end
            mark = min(buffer, b_out) if job in queued else None
            links.add(t, b_out, OUT, m, (True, job, m, b_in, mark == 0.0), mark)
        else:
            to_disk(job, m, b_in)

    def sent(job):
        q = queued.get(job)
        if q:
            go(job, *q.popleft())
            if not q:
                del queued[job]

    def to_disk(job, m, b_in):
        q = disks[m]
        q.append((job, b_in))
        if len(q) == 1:
            push(t + draw(), "disk", m)

    def branch_done(job):
        nonlocal done, rsum, t_first
        left[job] -= 1
        if left[job]:
            return
        if phases[job]:
            fork(job)
            return
        done += 1
        if done == warm:
            t_first = t
        elif done > warm:
            rsum += t - start[job]
        del phases[job], left[job], start[job]
        if N is not None:
            if Z > 0:
                push(t + expo(1.0 / Z), "think", job)
            else:
                begin(job)

    if N is not None:
        for j in range(N):
            push(expo(1.0 / Z) if Z > 0 else 0.0, "think", j)
    else:
        push(expo(lam), "arrive", None)
    total = warm + jobs
    while done < total:
        tf, flow, marked = links.peek()
        te = heap[0][0] if heap else math.inf
        if tf <= te:
            t = max(t, tf)
            to_disk_next, job, m, b_in, sent_at_end = links.take(t, flow, marked)
            if marked:  # the sender's buffer takes the next chunk
                sent(job)
            elif to_disk_next:
                to_disk(job, m, b_in)
                if sent_at_end:
                    sent(job)
            else:
                branch_done(job)
            continue
        t, _, what, arg = heapq.heappop(heap)
        if what == "disk":  # a disk finishes its head request
            job, b_in = disks[arg].popleft()
            if disks[arg]:
                push(t + draw(), "disk", arg)
            if b_in > 0:
                links.add(t, b_in, IN, arg, (False, job, arg, 0.0, False), None)
            else:
                branch_done(job)
        elif what == "serial":
            job = serial[arg].popleft()
            if serial[arg]:
                mean = serial_mean[arg]
                push(t + expo(1.0 / mean) if mean > 0 else t, "serial", arg)
            enter_serial(job, arg + 1)
        elif what == "think":
            begin(arg)
        elif what == "arrive":
            begin(next(ids))
            push(t + expo(lam), "arrive", None)
        else:  # "go": a branch after its turnaround
            go(*arg)
    return rsum / jobs, jobs / (t - t_first)


def _mean_hw(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Means over the runs (axis 0) and Student-t 95 % half-widths (0 for one run)."""
    reps = obs.shape[0]
    m = obs.mean(axis=0)
    if reps < 2:
        return m, np.zeros_like(m)
    from scipy.stats import t as student_t

    return m, student_t.ppf(0.975, reps - 1) / math.sqrt(reps) * obs.std(axis=0, ddof=1)


def _as_chunks(chunks, raid: str, K: int) -> int:
    data = K - 1 if raid == "raid5" else K
    if chunks is None:
        return data
    k = as_positive_int(chunks, "chunks")
    if k > data:
        raise InvalidModelError(
            f"chunks must be at most a stripe's data ({data} chunks for {raid} over {K} "
            f"members), got {chunks!r}: a request of several stripes is not simulated"
        )
    return k


def _as_serial(serial) -> tuple:
    if isinstance(serial, str) or not isinstance(serial, list | tuple | np.ndarray):
        raise InvalidTypeError(
            "serial must be a sequence of mean times (s or time strings), one per FCFS "
            f"serial station, e.g. ['50 us'], got {serial!r}"
        )
    return tuple(as_quantity(s, f"serial[{i}]", "time") for i, s in enumerate(serial))


def simulate_storage(
    *,
    members,
    chunk_size,
    disk_time,
    link_rate,
    N=None,
    arrival_rate=None,
    think_time=0.0,
    raid: str = "raid0",
    op: str = "read",
    chunks=None,
    disk_scv=1.0,
    serial=(),
    link_rate_in=None,
    server_link_rate=None,
    discipline: str = "ps",
    sender: str = "sequential",
    send_buffer=0.0,
    turnaround=0.0,
    jobs: int = 3000,
    reps: int = 3,
    warmup=None,
    seed: int = 1,
) -> StorageSimulationResult:
    """Simulate networked storage whose stages overlap, closed or open (module docstring).

    Parameters
    ----------
    members : int
        K, storage servers (>= 1; >= 3 for raid5).
    chunk_size : float or str
        Bytes per chunk (stripe unit), > 0 (``"64 KiB"``).
    disk_time : float or str
        d, a member's mean time per chunk (disk and server CPU), s (>= 0; ``"2 ms"``).
    link_rate : float or str
        The master link's rate, bytes/s (> 0; ``"1 Gbit/s"``); egress, and ingress unless
        ``link_rate_in`` is given.
    N : int or sequence of int, optional
        Closed populations (each >= 1), one simulated point each. Exactly one of ``N`` and
        ``arrival_rate``.
    arrival_rate : float, str or sequence, optional
        Open Poisson rates lambda, 1/s (> 0; ``"40 Hz"``), each below 1 / D_max
        (:func:`storage_demands`).
    think_time : float or str
        Z, mean exponential think time of a closed request, s (>= 0).
    raid : {"raid0", "raid5"}
    op : {"read", "write"}
    chunks : int, optional
        Data chunks per request, 1 .. a stripe's data (default a full stripe).
    disk_scv : float
        SCV of a member's time per chunk (>= 0): 0 constant, 1 exponential, otherwise
        lognormal (:func:`qnmodel.model.laws.law_for_scv`).
    serial : sequence of float or str
        Mean times of the master's FCFS exponential stations before the fork, s.
    link_rate_in : float or str, optional
        The master link's ingress rate, bytes/s (default ``link_rate``).
    server_link_rate : float or str, optional
        Every member link's rate in both directions, bytes/s (default: the master's of
        the same direction).
    discipline : {"ps", "fcfs"}
        How a link shares its rate: max-min fair among its flows, or whole flows in turn.
    sender : {"sequential", "parallel"}
        A request's out-transfers one after another (qnbench ``stripe``) or all at once.
    send_buffer : float or str
        Bytes left of a sequential send when the next starts (>= 0).
    turnaround : float or str
        Fixed delay added to every branch, s (>= 0).
    jobs : int
        Counted requests per run (>= 10).
    reps : int
        Independent runs per point (>= 1; half-widths need >= 2).
    warmup : int, optional
        Requests discarded at the start of each run (default max(200, jobs // 10)).
    seed : int
        Seed of the one random stream of the call (>= 0): equal inputs and seed give
        equal results.

    Returns
    -------
    StorageSimulationResult
        One row per population or rate; method :data:`METHOD`.

    Notes
    -----
    At most :data:`MAX_REQUESTS` requests per call (points x reps x (jobs + warmup)).
    """
    K = as_positive_int(members, "members")
    raid = as_choice(raid, "raid", RAID_LEVELS)
    op = as_choice(op, "op", OPS)
    if raid == "raid5" and K < 3:
        raise InvalidModelError(f"members must be >= 3 for raid5 (data and parity), got {K}")
    c = as_quantity(chunk_size, "chunk_size", "size", positive=True)
    d = as_quantity(disk_time, "disk_time", "time")
    scv = as_scv(disk_scv, "disk_scv")
    rate_out = as_quantity(link_rate, "link_rate", "rate", positive=True)
    rate_in = rate_out if link_rate_in is None else as_quantity(
        link_rate_in, "link_rate_in", "rate", positive=True)  # fmt: skip
    if server_link_rate is None:
        srv_out, srv_in = rate_in, rate_out
    else:
        srv_out = srv_in = as_quantity(server_link_rate, "server_link_rate", "rate",
                                       positive=True)  # fmt: skip
    Z = as_quantity(think_time, "think_time", "time")
    spec = StorageSpec(
        K=K, d=d, scv=scv, chunk=c, rate_out=rate_out, rate_in=rate_in, server_out=srv_out,
        server_in=srv_in, serial=_as_serial(serial), raid=raid, op=op,
        chunks=_as_chunks(chunks, raid, K),
        discipline_out=as_choice(discipline, "discipline", DISCIPLINES),
        discipline_in=discipline, sender=as_choice(sender, "sender", SENDERS),
        send_buffer=as_quantity(send_buffer, "send_buffer", "size"),
        turnaround=as_quantity(turnaround, "turnaround", "time"),
    )  # fmt: skip
    jobs = as_positive_int(jobs, "jobs", 10)
    reps = as_positive_int(reps, "reps", 1)
    warm = max(200, jobs // 10) if warmup is None else as_positive_int(warmup, "warmup", 1)
    seed = as_positive_int(seed, "seed", 0)
    if (N is None) == (arrival_rate is None):
        raise InvalidModelError(
            "simulate_storage: give exactly one of N (closed populations) and arrival_rate "
            f"(open), got N={N!r}, arrival_rate={arrival_rate!r}"
        )
    if N is not None:
        values = N if isinstance(N, list | tuple | np.ndarray) else [N]
        if len(values) == 0:
            raise InvalidModelError("N must hold at least one population, got an empty list")
        points = [as_population(n, f"N[{i}]") for i, n in enumerate(values)]
        check_size(max(points), MAX_N, "simulate_storage: N (every request in flight holds "
                   "flows each event visits)", "simulate a smaller population")  # fmt: skip
    else:
        values = (arrival_rate if isinstance(arrival_rate, list | tuple | np.ndarray)
                  else [arrival_rate])  # fmt: skip
        if len(values) == 0:
            raise InvalidModelError("arrival_rate must hold at least one rate, got an empty list")
        points = [as_quantity(v, f"arrival_rate[{i}]", "frequency", positive=True)
                  for i, v in enumerate(values)]  # fmt: skip
        dmax, bott = max((v, k) for k, v in storage_demands(spec))
        for lam in points:
            if lam * dmax >= 1.0:
                raise UnstableModelError(
                    f"simulate_storage: arrival_rate {lam:.6g}/s saturates the {bott} "
                    f"(utilisation {lam:.6g}/s x {dmax:.6g} s = {lam * dmax:.4g} >= 1): give "
                    f"a rate below {1.0 / dmax:.6g}/s"
                )
    check_size(
        len(points) * reps * (jobs + warm), MAX_REQUESTS,
        "simulate_storage: requests to simulate (points x reps x (jobs + warmup); pure "
        "Python, 30-40 us each, more with slower member links)",
        "ask for fewer jobs, reps or points",
    )  # fmt: skip
    rng = random.Random(seed)
    R, X, Rh, Xh = [], [], [], []
    for p in points:
        obs = np.array([
            _run(spec, p if N is not None else None, None if N is not None else p, Z, jobs,
                 warm, rng)
            for _ in range(reps)
        ])  # fmt: skip
        m, h = _mean_hw(obs)
        R.append(m[0])
        X.append(m[1])
        Rh.append(h[0])
        Xh.append(h[1])
    return StorageSimulationResult(
        method=METHOD,
        n=np.array(points, dtype=np.int64) if N is not None else None,
        arrival_rate=None if N is not None else np.array(points, dtype=np.float64),
        think_time=float(Z),
        response_time=np.array(R),
        response_time_halfwidth=np.array(Rh),
        throughput=np.array(X),
        throughput_halfwidth=np.array(Xh),
        jobs=jobs,
        replications=reps,
        warmup=warm,
        seed=seed,
    )
