"""A small pure-Python discrete-event reference simulation for the fork-join tests.

Test-only and deliberately simple (no CIs, no compiled loop): FCFS single-server
exponential queues, exponential delay stations, fork-join elements whose branches
are FCFS exponential queues joined after k of n sub-requests (the others are then
cancelled, queued or in service),
visited in order; closed (N requests with exponential think time Z) or open
(Poisson arrivals). Seeded with :class:`random.Random`, so every run is reproducible.

Run ``python tests/solvers/fj_sim.py`` to print the measured error table of
``qnmodel.fork_join`` (means and percentiles) quoted in docs/explanation/fork-join.md.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections import deque

import numpy as np
from scipy.stats import t as student_t


def simulate(elements, *, N=None, arrival_rate=None, think_time=0.0, jobs=50_000,
             warmup=5_000, seed=1):  # fmt: skip
    """Simulate; ``elements``: ("queue", D) | ("delay", D) | ("fj", [D_1..D_n], k).

    Returns dict with ``R`` (response-time samples after warm-up, think time excluded),
    and ``X`` (completions per second over the measured part).
    """
    rng = random.Random(seed)
    exp = rng.expovariate
    heap: list = []
    seq = itertools.count()
    queues = []
    for e in elements:
        queues.append([deque() for _ in e[1]] if e[0] == "fj" else deque())
    joined: dict[int, int] = {}  # visit id -> finished sub-requests
    owner: dict[int, int] = {}  # visit id -> request
    visits = itertools.count()
    token: dict[tuple[int, int], int] = {}  # service generation per branch (cancellation)
    for i, e in enumerate(elements):
        for b in range(len(e[1]) if e[0] == "fj" else 0):
            token[i, b] = 0
    start: dict[int, float] = {}
    samples: list[float] = []
    done = 0
    t_measure = None

    def push(t, kind, *data):
        heapq.heappush(heap, (t, next(seq), kind, data))

    def enter(job, i, t):
        if i == len(elements):
            finish(job, t)
            return
        e = elements[i]
        if e[0] == "delay":
            push(t + (exp(1.0 / e[1]) if e[1] > 0 else 0.0), "leave", job, i)
        elif e[0] == "queue":
            q = queues[i]
            q.append(job)
            if len(q) == 1:
                push(t + exp(1.0 / e[1]), "served", job, i, -1, 0)
        else:  # fork: one sub-request per branch, tagged with a fresh visit id
            visit = next(visits)
            joined[visit] = 0
            owner[visit] = job
            for b, d in enumerate(e[1]):
                q = queues[i][b]
                q.append(visit)
                if len(q) == 1:
                    push(t + exp(1.0 / d), "served", visit, i, b, token[i, b])

    def finish(job, t):
        nonlocal done, t_measure
        done += 1
        if done == warmup:
            t_measure = t
        if done > warmup:
            samples.append(t - start[job])
        if N is not None:
            z = exp(1.0 / think_time) if think_time > 0 else 0.0
            push(t + z, "start", job)

    if N is not None:
        for j in range(N):
            push(exp(1.0 / think_time) if think_time > 0 else 0.0, "start", j)
    else:
        push(exp(arrival_rate), "arrive", 0)
    t = 0.0
    while done < warmup + jobs:
        t, _s, kind, data = heapq.heappop(heap)
        if kind == "start":
            start[data[0]] = t
            enter(data[0], 0, t)
        elif kind == "arrive":
            job = data[0]
            start[job] = t
            push(t + exp(arrival_rate), "arrive", job + 1)
            enter(job, 0, t)
        elif kind == "leave":
            enter(data[0], data[1] + 1, t)
        else:  # served
            job, i, b, tok = data
            e = elements[i]
            if b >= 0 and tok != token[i, b]:
                continue  # the sub-request in service was cancelled
            q = queues[i] if b < 0 else queues[i][b]
            q.popleft()
            if b < 0:
                if q:
                    push(t + exp(1.0 / e[1]), "served", q[0], i, b, 0)
                enter(job, i + 1, t)
                continue
            # ``job`` is a visit id here
            token[i, b] += 1
            if q:
                push(t + exp(1.0 / e[1][b]), "served", q[0], i, b, token[i, b])
            joined[job] += 1
            if joined[job] == e[2]:
                # k-of-n join: cancel the visit's other sub-requests (queued or in service)
                for c, qc in enumerate(queues[i]):
                    if job in qc:
                        head = qc[0] == job
                        qc.remove(job)
                        if head:
                            token[i, c] += 1
                            if qc:
                                push(t + exp(1.0 / e[1][c]), "served", qc[0], i, c, token[i, c])
                del joined[job]
                enter(owner.pop(job), i + 1, t)
    span = t - t_measure
    return {"R": np.array(samples), "X": jobs / span}


def _elements(net):
    """The simulator's element list for a qnmodel Network."""
    out = []
    for s in net.stations:
        if hasattr(s, "branches"):
            out.append(("fj", [b.demand for b in s.branches], s.k))
        else:
            out.append(("delay" if s.is_delay else "queue", s.demand))
    return out


def simulate_net(net, **kw):
    """:func:`simulate` on a :class:`qnmodel.Network` (think time from the network)."""
    return simulate(_elements(net), think_time=net.think_time, **kw)


def _table(parts=("closed", "open")):  # pragma: no cover - documentation helper
    import qnmodel as qn

    S = qn.Station
    cases = {
        "4 identical, Z=0": qn.Network([qn.ForkJoin("fj", [S(f"m{i}", 1.0) for i in range(4)])]),
        "4 identical + cpu, Z=2": qn.Network(
            [S("cpu", 0.3), qn.ForkJoin("fj", [S(f"m{i}", 1.0) for i in range(4)])], think_time=2.0
        ),
        "8 identical, Z=4": qn.Network(
            [qn.ForkJoin("fj", [S(f"m{i}", 1.0) for i in range(8)])], think_time=4.0
        ),
        "3 different, Z=1": qn.Network(
            [qn.ForkJoin("fj", [S("a", 0.5), S("b", 1.0), S("c", 1.5)])], think_time=1.0
        ),
        "2-of-4, Z=1": qn.Network(
            [qn.ForkJoin("fj", [S(f"m{i}", 1.0) for i in range(4)], k=2)], think_time=1.0
        ),
    }
    print("closed: N, model R, sim R, err %, model p95 err %, p99 err %")
    for name, net in cases.items() if "closed" in parts else ():
        for N in (1, 2, 4, 8, 16):
            m = qn.fork_join(net, N)
            s = simulate_net(net, N=N, jobs=100_000, warmup=10_000, seed=7)
            R = m.response_time[-1]
            p95, p99 = np.quantile(s["R"], [0.95, 0.99])
            e = 100 * (R / s["R"].mean() - 1)
            e95 = 100 * (m.response_time_quantile(0.95) / p95 - 1)
            e99 = 100 * (m.response_time_quantile(0.99) / p99 - 1)
            print(f"{name:24s} N={N:2d} R={R:8.4f} sim={s['R'].mean():8.4f} err={e:+6.2f}% "
                  f"p95 {e95:+6.2f}% p99 {e99:+6.2f}%")  # fmt: skip
    if "open" not in parts:
        return
    print("open: lambda, model R, sim R, err %")
    for n in (2, 4, 8):
        for rho in (0.3, 0.6, 0.8):
            net = qn.Network([qn.ForkJoin("fj", [S(f"m{i}", 1.0) for i in range(n)])])
            m = qn.fork_join(net, arrival_rate=rho)
            s = simulate_net(net, arrival_rate=rho, jobs=100_000, warmup=10_000, seed=7)
            R = m.response_time[0]
            p95, p99 = np.quantile(s["R"], [0.95, 0.99])
            print(f"n={n} rho={rho} R={R:.4f} sim={s['R'].mean():.4f} "
                  f"err={100 * (R / s['R'].mean() - 1):+.2f}% "
                  f"p95 {100 * (m.response_time_quantile(0.95) / p95 - 1):+.2f}% "
                  f"p99 {100 * (m.response_time_quantile(0.99) / p99 - 1):+.2f}%")  # fmt: skip
    for rho in (0.3, 0.6, 0.8):
        net = qn.Network([qn.ForkJoin("fj", [S("a", 0.5), S("b", 1.0), S("c", 0.8)])])
        m = qn.fork_join(net, arrival_rate=rho)
        s = simulate_net(net, arrival_rate=rho, jobs=100_000, warmup=10_000, seed=7)
        R = m.response_time[0]
        p95, p99 = np.quantile(s["R"], [0.95, 0.99])
        print(f"hetero (0.5,1,0.8) lambda={rho} R={R:.4f} sim={s['R'].mean():.4f} "
              f"err={100 * (R / s['R'].mean() - 1):+.2f}% "
              f"p95 {100 * (m.response_time_quantile(0.95) / p95 - 1):+.2f}% "
              f"p99 {100 * (m.response_time_quantile(0.99) / p99 - 1):+.2f}%")  # fmt: skip


# ------------------------------------------------------------------ overlapped link
# NetworkedRAID.fork_join(N, structure="forkjoin_overlap"): a closed population cycles through
# FCFS exponential stations in series, then forks into K sub-jobs; reads are served by member i
# (FCFS, Exp(d)) and then cross ONE FCFS link shared by every branch of every job (fixed time c
# per chunk); writes cross the link first (a job's K chunks queued at once) and then member i.
# The job leaves when all K are done. qnmodel.simulate's branches are one station each and
# cannot share a station inside the fork, hence this loop.


class _Queue:
    def __init__(self, sample):
        self.sample, self.wait, self.busy = sample, deque(), False


def _run(serial, d, c, K, op, N, Z, jobs, warm, rng):
    heap, seq = [], [0]

    def push(t, what, *args):
        seq[0] += 1
        heapq.heappush(heap, (t, seq[0], what, args))

    exp = lambda m: lambda: rng.expovariate(1.0 / m) if m > 0 else 0.0  # noqa: E731
    st = [_Queue(exp(m)) for m in serial]
    members = [_Queue(exp(d)) for _ in range(K)]
    link = _Queue(lambda: c)

    def arrive(q, t, token):
        if q.busy:
            q.wait.append(token)
        else:
            q.busy = True
            push(t + q.sample(), "done", q, token)

    start, left, done, rsum, t_first = {}, {}, 0, 0.0, None

    def begin(job, t):
        start[job] = t
        if serial:
            arrive(st[0], t, ("s", job, 0))
        else:
            fork(job, t)

    def fork(job, t):
        left[job] = K
        for i in range(K):
            if op == "read":
                arrive(members[i], t, ("m", job, i))
            else:
                arrive(link, t, ("l", job, i))

    for job in range(N):
        begin(job, 0.0)
    while done < warm + jobs:
        t, _, what, args = heapq.heappop(heap)
        if what == "think":
            begin(args[0], t)
            continue
        q, token = args
        if q.wait:
            push(t + q.sample(), "done", q, q.wait.popleft())
        else:
            q.busy = False
        kind, job, i = token
        if kind == "s":
            if i + 1 < len(st):
                arrive(st[i + 1], t, ("s", job, i + 1))
            else:
                fork(job, t)
            continue
        if (kind == "m") == (op == "read"):  # first leg of the branch
            nxt = link if op == "read" else members[i]
            arrive(nxt, t, ("l" if op == "read" else "m", job, i))
            continue
        left[job] -= 1
        if left[job]:
            continue
        done += 1
        if done == warm:
            t_first = t
        elif done > warm:
            rsum += t - start[job]
        if Z > 0:
            push(t + rng.expovariate(1.0 / Z), "think", job)
        else:
            begin(job, t)
    return rsum / jobs, jobs / (t - t_first)


def simulate_overlap(serial, d, c, K, op, N, Z=0.0, *, jobs=20_000, reps=8, seed=1):
    """(R mean, R half-width, X mean, X half-width) of the system in the module docstring."""
    rng = random.Random(seed)
    warm = max(200, jobs // 20)
    obs = np.array([_run(serial, d, c, K, op, N, Z, jobs, warm, rng) for _ in range(reps)])
    tq = student_t.ppf(0.975, reps - 1) / math.sqrt(reps)
    m, sd = obs.mean(axis=0), obs.std(axis=0, ddof=1)
    return float(m[0]), float(tq * sd[0]), float(m[1]), float(tq * sd[1])


if __name__ == "__main__":  # pragma: no cover
    import sys

    _table(tuple(sys.argv[1:]) or ("closed", "open"))
