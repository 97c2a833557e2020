"""A test-only event simulation of networked storage whose stages overlap.

The reference the overlapped models of :mod:`qnmodel.models.storage_overlap` are checked
against (the package simulator, :mod:`qnmodel.simulation`, cannot yet share one station among
the branches of a fork, nor move a transfer through two links at once; see the note in
``docs/explanation/overlap.md``). Deliberately small and pure Python, seeded with
:class:`random.Random`, so every run is reproducible.

The system
----------
A closed population of ``N`` requests (exponential think time ``Z``) or an open Poisson
stream. A request visits FCFS exponential ``serial`` stations (the master's CPU), then a
sequence of *phases*; a phase forks into branches, one per member it touches, and joins when
all are done. A branch is

1. ``out`` bytes from the master to member m: one flow through the master link's egress and
   member m's ingress *at once* (a pipelined transfer);
2. member m's disk: one FCFS server of service law ``law`` (``"exp"`` or ``"const"``, mean
   ``d``), shared by every request's branches to m;
3. ``in`` bytes back: one flow through member m's egress and the master's ingress at once.

Links are fluid: every flow in progress gets its max-min fair share of the links it crosses
(progressive filling, [BG92] sec. 6.5.2), which is how TCP flows share a shaped link
(``discipline="ps"``); ``"fcfs"`` lets only the earliest flow at a link move (a link that
sends whole chunks in turn). Zero-byte transfers take no time; ``turnaround`` adds a fixed
delay to every branch (a request's trip and the server's reply latency).

Patterns (:func:`pattern`) place a request's chunks as the RAID levels of qnbench's
``stripe`` engine do, at a uniformly random stripe (``access = "random"``).

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
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import t as student_t


@dataclass
class Spec:
    """The simulated system (module docstring); rates in bytes/s, times in s."""

    K: int
    d: float
    chunk: float
    master_rate: float
    server_rate: float | None = None  # None: as fast as the master's link
    law: str = "exp"
    serial: list = field(default_factory=list)
    raid: str = "raid0"
    op: str = "read"
    chunks: int | None = None  # request size in chunks (default: a stripe's data)
    discipline_out: str = "ps"
    discipline_in: str = "ps"
    turnaround: float = 0.0
    sender: str = "sequential"  # a request's own out-transfers one after the other, or "parallel"
    send_buffer: float = 0.0  # "sequential": the next send starts when this many bytes are left


def pattern(spec: Spec, rng: random.Random) -> list[list[tuple[int, float, float]]]:
    """The phases of one request: lists of (member, bytes out, bytes in)."""
    K, c = spec.K, spec.chunk
    if spec.raid == "raid0":
        k = spec.chunks or K
        start = rng.randrange(K)
        members = [(start + i) % K for i in range(k)]
        if spec.op == "read":
            return [[(m, 0.0, c) for m in members]]
        return [[(m, c, 0.0) for m in members]]
    # raid5: stripe s keeps parity on member K-1 - s mod K, data chunk i on (parity+1+i) mod K
    k = spec.chunks or K - 1
    p = rng.randrange(K)
    data = [(p + 1 + i) % K for i in range(K - 1)]
    if spec.op == "read":
        first = rng.randrange(K - 1) if k < K - 1 else 0
        return [[(data[(first + i) % (K - 1)], 0.0, c) for i in range(k)]]
    if k >= K - 1:  # full-stripe write: data and parity out
        return [[(m, c, 0.0) for m in [*data, p]]]
    first = rng.randrange(K - 1 - k + 1)
    touched = [data[first + i] for i in range(k)] + [p]
    return [[(m, 0.0, c) for m in touched], [(m, c, 0.0) for m in touched]]


class _Link:
    __slots__ = ("cap", "fcfs", "flows")

    def __init__(self, cap: float, fcfs: bool) -> None:
        self.cap, self.fcfs, self.flows = cap, fcfs, []


class _Flow:
    __slots__ = ("rem", "links", "rate", "then", "mark", "job")

    def __init__(self, rem, links, then, mark=None, job=None) -> None:
        self.rem, self.links, self.rate, self.then = rem, links, 0.0, then
        self.mark, self.job = mark, job  # at ``mark`` bytes left, the job's next send starts


def _allocate(flows: list[_Flow]) -> None:
    """Max-min fair rates of the flows that may move (progressive filling)."""
    active = []
    for f in flows:
        f.rate = 0.0
        if all(not ln.fcfs or ln.flows[0] is f for ln in f.links):
            active.append(f)
    cap: dict[_Link, float] = {}
    count: dict[_Link, int] = {}
    for f in active:
        for ln in f.links:
            cap[ln] = ln.cap
            count[ln] = count.get(ln, 0) + 1
    left = set(active)
    while left:
        ln = min((x for x in count if count[x] > 0), key=lambda x: cap[x] / count[x])
        share = cap[ln] / count[ln]
        for f in [f for f in left if ln in f.links]:
            f.rate = share
            left.discard(f)
            for x in f.links:
                cap[x] -= share
                count[x] -= 1


def _run(spec: Spec, N, lam, Z, jobs, warm, rng):
    K = spec.K
    mr, sr = spec.master_rate, spec.server_rate or spec.master_rate
    m_out, m_in = _Link(mr, spec.discipline_out == "fcfs"), _Link(mr, spec.discipline_in == "fcfs")
    s_in = [_Link(sr, spec.discipline_out == "fcfs") for _ in range(K)]
    s_out = [_Link(sr, spec.discipline_in == "fcfs") for _ in range(K)]
    d = spec.d
    draw = (lambda: rng.expovariate(1.0 / d)) if spec.law == "exp" else (lambda: d)
    heap: list = []
    seq = itertools.count()
    flows: list[_Flow] = []
    disks = [deque() for _ in range(K)]
    serial = [deque() for _ in spec.serial]
    t = 0.0
    start: dict[int, float] = {}
    phases: dict[int, list] = {}
    left: dict[int, int] = {}
    queued: dict[int, deque] = {}
    done, rsum, t_first = 0, 0.0, None
    ids = itertools.count()
    dirty = [True]

    def push(when, what, *args):
        heapq.heappush(heap, (when, next(seq), what, args))

    def begin(job):
        start[job] = t
        phases[job] = pattern(spec, rng)
        enter_serial(job, 0)

    def enter_serial(job, i):
        if i == len(serial):
            fork(job)
            return
        q = serial[i]
        q.append(job)
        if len(q) == 1:
            push(t + rng.expovariate(1.0 / spec.serial[i]), "serial", i)

    def fork(job):
        branches = phases[job].pop(0)
        left[job] = len(branches)
        sends = [b for b in branches if b[1] > 0]
        if spec.sender == "sequential" and len(sends) > 1:
            # the master's one thread sends each member its chunk in turn, each send
            # blocking until the chunk has left (qnbench stripe, --member tcp)
            queued[job] = deque(sends[1:])
            branches = [sends[0]] + [b for b in branches if b[1] <= 0]
        for m, b_out, b_in in branches:
            if spec.turnaround > 0:
                push(t + spec.turnaround, "go", job, m, b_out, b_in)
            else:
                go(job, m, b_out, b_in)

    def go(job, m, b_out, b_in):
        after_out = ("disk", job, m, b_in)
        if b_out > 0:
            mark = min(spec.send_buffer, b_out) if job in queued else None
            add_flow(b_out, (m_out, s_in[m]), after_out, mark, job)
        else:
            to_disk(*after_out[1:])

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

    def add_flow(nbytes, links, then, mark=None, job=None):
        f = _Flow(nbytes, links, then, mark, job)
        dirty[0] = True
        flows.append(f)
        for ln in links:
            ln.flows.append(f)

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
                push(t + rng.expovariate(1.0 / Z), "think", job)
            else:
                begin(job)

    if N is not None:
        for j in range(N):
            push(rng.expovariate(1.0 / Z) if Z > 0 else 0.0, "think", j)
    else:
        push(rng.expovariate(lam), "arrive")
    while done < warm + jobs:
        if dirty[0]:
            _allocate(flows)
            dirty[0] = False
        tf, nxt, marked = math.inf, None, False
        for f in flows:
            if f.rate > 0:
                if f.mark is not None and f.mark > 0:
                    tt = t + (f.rem - f.mark) / f.rate
                    if tt < tf:
                        tf, nxt, marked = tt, f, True
                tt = t + f.rem / f.rate
                if tt < tf:
                    tf, nxt, marked = tt, f, False
        te = heap[0][0] if heap else math.inf
        now = min(tf, te)
        dt = now - t
        if dt > 0:
            for f in flows:
                f.rem -= f.rate * dt
        t = now
        if tf <= te and marked:  # the sender's buffer takes the next chunk
            nxt.mark = None
            sent(nxt.job)
            continue
        if tf <= te:  # a transfer ends
            flows.remove(nxt)
            for ln in nxt.links:
                ln.flows.remove(nxt)
            dirty[0] = True
            kind, job, m, b_in = nxt.then
            if kind == "disk":
                to_disk(job, m, b_in)
                if nxt.mark is not None:
                    sent(job)
            else:
                branch_done(job)
            continue
        _, _, what, args = heapq.heappop(heap)
        if what == "think":
            begin(args[0])
        elif what == "arrive":
            begin(next(ids) + 1_000_000_000)
            push(t + rng.expovariate(lam), "arrive")
        elif what == "go":
            go(*args)
        elif what == "serial":
            i = args[0]
            job = serial[i].popleft()
            if serial[i]:
                push(t + rng.expovariate(1.0 / spec.serial[i]), "serial", i)
            enter_serial(job, i + 1)
        else:  # a disk finishes its head request
            m = args[0]
            job, b_in = disks[m].popleft()
            if disks[m]:
                push(t + draw(), "disk", m)
            if b_in > 0:
                add_flow(b_in, (s_out[m], m_in), ("done", job, m, 0.0))
            else:
                branch_done(job)
    return rsum / jobs, jobs / (t - t_first)


def simulate_storage(spec: Spec, *, N: int | None = None, arrival_rate: float | None = None,
                     Z: float = 0.0, jobs: int = 10_000, reps: int = 5,
                     seed: int = 1) -> dict:  # fmt: skip
    """Mean R and X with 95 % half-widths over ``reps`` independent runs (module docstring)."""
    if (N is None) == (arrival_rate is None):
        raise ValueError("give N (closed) or arrival_rate (open)")
    rng = random.Random(seed)
    warm = max(200, jobs // 10)
    obs = np.array([_run(spec, N, arrival_rate, Z, jobs, warm, rng) for _ in range(reps)])
    tq = student_t.ppf(0.975, reps - 1) / math.sqrt(reps) if reps > 1 else 0.0
    m = obs.mean(axis=0)
    sd = obs.std(axis=0, ddof=1) if reps > 1 else np.zeros(2)
    return dict(R=float(m[0]), R_hw=float(tq * sd[0]), X=float(m[1]), X_hw=float(tq * sd[1]))
