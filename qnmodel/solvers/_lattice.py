"""The exact multi-class MVA recursion over the population lattice, kept as a frontier.

The kernel of :func:`qnmodel.mva_multiclass` for load-independent stations ([RL80] eqs.
3.1-3.3; [LZGS] Algorithm 7.1), used also by the load-dependent lattice
(:mod:`qnmodel.solvers.mva_lattice_ld`) for its sub-networks. The compiled kernel keeps two
slices of the lattice along its most populous class; the numpy twin keeps two levels.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _kernels

__all__ = ["lattice_memory_bytes", "lattice_origin", "next_level", "_solve_exact", "_lattice_numpy"]


def lattice_memory_bytes(population: Any, K: int) -> int:
    """Bytes of the lattice frontier kept by :func:`mva_multiclass`.

    An upper estimate: 8 S (4 K + 4 C^2 + 16) + 64 KiB, with S = prod_{c != c*}
    (N_c + 1) the lattice size without its most populous class c* (a bound on
    both the slice of the compiled kernel and the largest level of the numpy
    path). It covers two frontiers of K queue lengths, the temporaries of one
    level and the index bookkeeping of the numpy path (C^2 candidate neighbours).
    """
    N = np.asarray(population, dtype=np.int64)
    sizes = sorted(int(n) + 1 for n in N)
    S = math.prod(sizes[:-1])
    C = N.size
    return 8 * S * (4 * K + 4 * C * C + 16) + 65536


def lattice_origin(N: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(stride, pts, codes)`` of the lattice 0 <= n <= N: the mixed-radix strides s_c
    (radix N_c + 1, last class fastest) and level 0, the one point n = 0 with code 0."""
    C = N.size
    radix = N + 1
    stride = np.ones(C, dtype=np.int64)
    for c in range(C - 2, -1, -1):
        stride[c] = stride[c + 1] * radix[c + 1]
    return stride, np.zeros((1, C), dtype=np.int64), np.zeros(1, dtype=np.int64)


def next_level(pts: np.ndarray, stride: np.ndarray, N: np.ndarray) -> tuple:
    """``(pts, codes)`` of the next lattice level: the points n + e_c <= N of the points
    ``pts`` of a level, each once, sorted by their code sum_c n_c s_c."""
    C = N.size
    eye = np.eye(C, dtype=np.int64)
    cand = (pts[:, None, :] + eye[None, :, :]).reshape(-1, C)
    cand = cand[(cand <= N).all(axis=1)]
    new_codes, first = np.unique(cand @ stride, return_index=True)
    return cand[first], new_codes


def _lattice_numpy(D: np.ndarray, Dq: np.ndarray, Z: np.ndarray, N: np.ndarray):
    """Level-by-level exact recursion; returns X (C,), R_ck (C, K) at population N.

    Level L holds the lattice points with sum_c n_c = L, each identified by its
    mixed-radix code sum_c n_c s_c; the points of a level depend only on the
    previous level, so a level is one vectorised step.
    """
    C, K = D.shape
    stride, pts, codes = lattice_origin(N)
    Q = np.zeros((1, K))
    X = R = None
    top = int(N.sum())
    for level in range(1, top + 1):
        new_pts, new_codes = next_level(pts, stride, N)
        P = new_codes.size
        Qn = np.zeros((P, K))
        X = np.zeros((P, C))
        R = np.zeros((C, K))  # kept at the last level only (one point: N)
        for c in range(C):
            has = new_pts[:, c] > 0
            if not has.any():
                continue
            pos = np.searchsorted(codes, new_codes[has] - stride[c])
            r = D[c][None, :] + Dq[c][None, :] * Q[pos]
            x = new_pts[has, c] / (Z[c] + r.sum(axis=1))
            X[has, c] = x
            if level == top:
                R[c] = r[0]
            Qn[has] += x[:, None] * r
        pts, codes, Q = new_pts, new_codes, Qn
    return X[0], R


def _solve_exact(D: np.ndarray, delay: np.ndarray, Z: np.ndarray, N: np.ndarray):
    """X (C,), R_ck (C, K) for classes with N_c > 0 (others get X = 0, R = D(1 + Q))."""
    C, K = D.shape
    Dq = np.where(delay[None, :], 0.0, D)
    live = np.flatnonzero(N > 0)
    Dl, Dql, Zl, Nl = D[live], Dq[live], Z[live], N[live]
    if _kernels.available():
        Xl, Rl = _kernels.mva_multiclass(Dl, Dql, Zl, Nl)
    else:
        Xl, Rl = _lattice_numpy(Dl, Dql, Zl, Nl)
    X = np.zeros(C)
    X[live] = Xl
    Qtot = (Xl[:, None] * Rl).sum(axis=0)
    R = D + Dq * Qtot[None, :]  # an added class-c job would see Q(N): arrival theorem
    R[live] = Rl
    return X, R
