"""Exact continuous-time Markov chain of a closed network with transfer blocking.

The reference against which :func:`qnmodel.solvers.mva_blocking` (MVABLO, an approximation)
is measured. Model ([Aky88] sec. II; "blocking after service", BAS): K single-server FCFS
stations with exponential service of mean S_k and capacity M_k (the job in service
included), routing P. A job that finishes service at i and is routed to a full station j
stays in i (counted there), blocking i's server, until j has room; stations blocked on the
same j are released in the order they blocked. A job moving into i frees a place where it
came from, which may release a station blocked there in turn (a cascade).

State: (jobs per station, destination each station is blocked on or -1, blocking order).
The state space is enumerated from one initial state by breadth-first search, the generator
assembled as a sparse matrix and pi Q = 0, sum pi = 1 solved with scipy's sparse solver
(one balance equation replaced by the normalisation). Only for small networks (thousands of
states). A network that can deadlock (a reachable state without transitions) is reported.

.. [Aky88] I. F. Akyildiz, "Mean value analysis for blocking queueing networks", IEEE
   Trans. Software Engineering 14(4):418-428, 1988.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from scipy.sparse import csc_matrix
from scipy.sparse.linalg import spsolve

__all__ = ["BlockingChain", "solve_blocking_ctmc"]


class BlockingChain:
    """Stationary mean values of the chain: ``X0`` (completions at station 0 per second),
    ``Q`` (K,), ``U`` (K,) (serving probability), ``states`` (count), ``deadlock`` (bool)."""

    def __init__(self, X0, Q, U, states, deadlock):
        self.X0, self.Q, self.U, self.states, self.deadlock = X0, Q, U, states, deadlock


def _release(n, blk, order, freed):
    """Cascade: ``freed`` has a place; the first station blocked on it moves its job in."""
    n, blk, order = list(n), list(blk), list(order)
    while True:
        waiting = [s for s in order if blk[s] == freed]
        if not waiting:
            break
        s = waiting[0]
        order.remove(s)
        blk[s] = -1
        n[s] -= 1
        n[freed] += 1
        freed = s
    return tuple(n), tuple(blk), tuple(order)


def _successors(state, S, M, P):
    n, blk, order = state
    K = len(n)
    out = []
    for i in range(K):
        if n[i] == 0 or blk[i] >= 0:
            continue
        mu = 1.0 / S[i]
        for j in range(K):
            p = P[i][j]
            if p == 0.0 or j == i:
                continue  # a self-loop changes no state
            if n[j] < M[j]:
                nn = list(n)
                nn[i] -= 1
                nn[j] += 1
                out.append((_release(tuple(nn), blk, order, i), mu * p))
            else:
                bb = list(blk)
                bb[i] = j
                out.append(((n, tuple(bb), order + (i,)), mu * p))
    return out


def solve_blocking_ctmc(N, S, M, P, max_states=200_000) -> BlockingChain:
    """Solve the chain of the module docstring for N jobs."""
    K = len(S)
    n0 = []
    left = N
    for k in range(K):
        take = min(left, M[k])
        n0.append(take)
        left -= take
    if left:
        raise ValueError("N exceeds the total capacity")
    start = (tuple(n0), (-1,) * K, ())
    index = {start: 0}
    queue = deque([start])
    rows, cols, vals = [], [], []
    deadlock = False
    while queue:
        st = queue.popleft()
        a = index[st]
        succ = _successors(st, S, M, P)
        if not succ:
            deadlock = True
        for nxt, rate in succ:
            b = index.get(nxt)
            if b is None:
                b = index[nxt] = len(index)
                if b >= max_states:
                    raise ValueError("state space too large")
                queue.append(nxt)
            rows.append(a)
            cols.append(b)
            vals.append(rate)
    ns = len(index)
    if deadlock:
        return BlockingChain(np.nan, None, None, ns, True)
    rows = np.array(rows)
    cols = np.array(cols)
    vals = np.array(vals)
    out = np.zeros(ns)
    np.add.at(out, rows, vals)
    # pi Q = 0  <=>  Q^T pi^T = 0; Q = offdiag - diag(out). Replace the last equation by sum = 1.
    A = csc_matrix((vals, (cols, rows)), shape=(ns, ns)).tolil()
    A.setdiag(A.diagonal() - out)
    A[ns - 1, :] = np.ones(ns)
    b = np.zeros(ns)
    b[-1] = 1.0
    pi = spsolve(A.tocsc(), b)
    states = list(index)
    nmat = np.array([s[0] for s in states], dtype=float)
    serving = np.array([[s[0][k] > 0 and s[1][k] < 0 for k in range(K)] for s in states])
    Q = pi @ nmat
    U = pi @ serving
    X0 = U[0] / S[0]
    return BlockingChain(X0, Q, U, ns, False)
