"""Exact continuous-time Markov chain of a thread pool: the reference for
:func:`qnmodel.thread_pool` and :func:`qnmodel.thread_pool_open`.

Model: a request arrives at the pool (closed: each of the N - (requests elsewhere) clients
after an exponential think time of mean Z; open: Poisson at rate lambda, lost when the pool
holds ``capacity``). If fewer than T requests are inside the subsystem it enters, otherwise
it waits (FCFS) for a thread. Inside, it goes first to station k with probability a_k;
after an exponential service of mean S_k (m_k servers, ``servers``, default 1; FCFS) it
goes to station l with probability P[k, l] and leaves the subsystem with probability
1 - sum_l P[k, l]. Default routing: P[k, l] = (1 - e) a_l (leave with probability e after
each service); ``series=True``: stations 0, 1, ..., K-1 once each in that order. The visits
solve V = a + V P, and S_k = D_k / V_k. A request leaving the subsystem frees its thread,
taken at once by the first waiting request (which enters at l with probability a_l); the
leaving request then visits the outer single-server queue (mean service D_out, closed
model only; D_out = 0: none) and thinks again (Z = 0 without an outer queue: it is back at
the pool at once, behind the requests waiting).

State: (requests at each subsystem station, requests waiting for a thread, requests at the
outer queue). Enumerated by breadth-first search; pi Q = 0 solved densely (small chains).
"""

from __future__ import annotations

from collections import deque

import numpy as np


class PoolChain:
    """Stationary means: ``X`` (requests/s leaving the subsystem), ``Q`` (K,) at the
    subsystem stations, ``waiting`` (requests waiting for a thread), ``busy`` (requests
    inside), ``outer`` (requests at the outer queue), ``states``."""

    def __init__(self, X, Q, waiting, busy, outer, states):
        self.X, self.Q, self.waiting, self.busy = X, Q, waiting, busy
        self.outer, self.states = outer, states


def solve_pool_ctmc(
    D,
    T,
    *,
    N=None,
    Z=0.0,
    D_out=0.0,
    lam=None,
    capacity=None,
    a=None,
    e=0.5,
    series=False,
    servers=None,
):
    D = np.asarray(D, dtype=float)
    K = D.size
    if series:
        a = np.eye(K)[0]
        P = np.eye(K, k=1)
    else:
        a = np.full(K, 1.0 / K) if a is None else np.asarray(a, dtype=float)
        P = (1.0 - e) * np.tile(a, (K, 1))
    V = np.linalg.solve(np.eye(K) - P.T, a)
    S = D / V  # service time per visit
    leave = 1.0 - P.sum(axis=1)
    closed = N is not None
    m = np.ones(K, dtype=int) if servers is None else np.asarray(servers, dtype=int)

    def arrivals(x, w, o):
        inside = sum(x)
        if closed:
            think = N - inside - w - o
            return think / Z if (think > 0 and Z > 0) else 0.0
        return lam if inside + w < capacity else 0.0

    def successors(state):
        x, w, o = state
        out = []
        rate = arrivals(x, w, o)
        if rate > 0:
            if sum(x) < T:
                for k in range(K):
                    if a[k] > 0:
                        y = list(x)
                        y[k] += 1
                        out.append(((tuple(y), w, o), rate * a[k]))
            else:
                out.append(((x, w + 1, o), rate))
        for k in range(K):
            if x[k] == 0:
                continue
            mu = min(x[k], m[k]) / S[k]
            o2 = o + 1 if (closed and D_out > 0) else o
            # leave the subsystem
            if leave[k] > 0 and closed and Z == 0 and D_out == 0:
                # no think time: the request is back at once (behind any waiting ones)
                for j in range(K):
                    if a[j] > 0:
                        y = list(x)
                        y[k] -= 1
                        y[j] += 1
                        out.append(((tuple(y), w, o), mu * leave[k] * a[j]))
            elif leave[k] > 0 and w > 0:
                for j in range(K):
                    if a[j] > 0:
                        y = list(x)
                        y[k] -= 1
                        y[j] += 1
                        out.append(((tuple(y), w - 1, o2), mu * leave[k] * a[j]))
            elif leave[k] > 0:
                y = list(x)
                y[k] -= 1
                out.append(((tuple(y), w, o2), mu * leave[k]))
            # move inside
            for j in range(K):
                if j == k or P[k, j] == 0:
                    continue
                y = list(x)
                y[k] -= 1
                y[j] += 1
                out.append(((tuple(y), w, o), mu * P[k, j]))
        if o > 0:
            out.append(((x, w, o - 1), 1.0 / D_out))
        return out

    start = ((0,) * K, 0, 0)
    if closed and Z == 0:  # every request is at the pool from the start
        first = int(np.flatnonzero(a > 0)[0])
        x0 = [0] * K
        x0[first] = min(N, T)
        start = (tuple(x0), N - min(N, T), 0)
    index = {start: 0}
    order = [start]
    edges = []
    queue = deque([start])
    while queue:
        s = queue.popleft()
        for t, r in successors(s):
            if t not in index:
                index[t] = len(order)
                order.append(t)
                queue.append(t)
            edges.append((index[s], index[t], r))
    n = len(order)
    Qm = np.zeros((n, n))
    for i, j, r in edges:
        Qm[i, j] += r
        Qm[i, i] -= r
    A = Qm.T.copy()
    A[-1, :] = 1.0
    b = np.zeros(n)
    b[-1] = 1.0
    pi = np.linalg.solve(A, b)
    xs = np.array([s[0] for s in order], dtype=float)
    ws = np.array([s[1] for s in order], dtype=float)
    os_ = np.array([s[2] for s in order], dtype=float)
    Q = pi @ xs
    X = float(sum(pi @ np.minimum(xs[:, k], m[k]) * leave[k] / S[k] for k in range(K)))
    return PoolChain(X, Q, float(pi @ ws), float(Q.sum()), float(pi @ os_), n)
