"""The single-class MVA kernels, one per recursion, and what their solvers share.

* :func:`exact` -- the Reiser-Lavenberg recursion ([RL80]; [LZGS] Algorithm 6.1)
  for P networks of the same K stations at once. It serves
  :func:`~qnmodel.solvers.mva.mva_exact` (P = 1), the what-if sweep
  (:func:`qnmodel.whatif.solve_grid`, P grid points) and the load-independent part
  of the log-space convolution in :mod:`qnmodel.solvers.mva_ld`.
* :func:`subset_pass` -- one pass of the complement recursion of
  :func:`~qnmodel.solvers.mva_ld.mva_load_dependent` over a subset of the
  multi-server stations (L = 0 .. 6 of them; one multi-server station is the pass
  with L = 1 after the pass with L = 0).

Each runs the compiled kernel (``qnk_mva`` and ``qnk_mva_ldn`` in ``_csrc``) when it
is loaded, otherwise its numpy twin below. Both do the same arithmetic in the same
order; only sums over stations differ (four partial sums in C, pairwise in numpy),
within a few ulps (tested to 1e-12 relative). Result arrays are allocated by
:func:`qnmodel.solvers._kernels.result_arrays` for both paths.

Also here, shared by :mod:`~qnmodel.solvers.mva` and :mod:`~qnmodel.solvers.mva_ld`:
the input check and the packing of an :class:`~qnmodel.results.MVAResult`.

References
----------
[RL80] (Reiser and Lavenberg 1980) and [LZGS] (Lazowska et al. 1984, Algorithm 6.1,
sec. 8.3), as listed in :mod:`qnmodel.solvers.mva`.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_choice, as_population
from ..errors import InvalidModelError, InvalidTypeError
from ..network import Network
from ..results import MVAResult, handover
from . import _kernels

__all__ = ["exact", "subset_pass", "check", "result"]

KEEP = ("all", "last")


def check(net: Network, N: int, keep: str) -> int:
    """Validate the common arguments of the single-class solvers; returns N."""
    if not isinstance(net, Network):
        raise InvalidTypeError(f"net must be a Network, got {type(net).__name__}")
    N = as_population(N, "N")
    as_choice(keep, "keep", KEEP)
    if net.total_demand + net.think_time <= 0.0:
        raise InvalidModelError(
            "all demands and the think time are zero: throughput is unbounded; "
            "give at least one station a demand > 0"
        )
    return N


def result(method: str, net: Network, N: int, keep: str, X, R, Q, U, Rk) -> MVAResult:
    """An MVAResult adopting the solver-owned arrays (no copies) for n = 1..N or n = N."""
    n = np.arange(1, N + 1, dtype=np.float64) if keep == "all" else np.array([float(N)])
    handover(n, X, R, Q, U, Rk)
    return MVAResult(
        method=method,
        n=n,
        throughput=X,
        response_time=R,
        queue_length=Q,
        utilization=U,
        residence_time=Rk,
        station_names=net.names,
        think_time=net.think_time,
        demands=np.array(net.demands),
        is_delay=np.array(net.is_delay),
    )


def _populations(pops) -> tuple[int, int, np.ndarray | None]:
    """(N, rows, kept populations or None for all of 1..N)."""
    if np.ndim(pops) == 0:
        return int(pops), int(pops), None
    kept = np.ascontiguousarray(pops, dtype=np.int64)
    return int(kept[-1]) if kept.size else 0, kept.size, kept


def exact(D, Dq, Z, pops, Du=None, per_station: bool = True):
    """Exact single-class MVA ([RL80]) of one network or P networks of K stations.

    R_k(n) = D_k (1 + Q_k(n-1)) at queueing stations (D_k at delay stations),
    R(n) = sum_k R_k(n), X(n) = n / (Z + R(n)), Q_k(n) = X(n) R_k(n),
    U_k(n) = X(n) Du_k.

    Parameters
    ----------
    D, Dq : ndarray (K,) or (P, K)
        Demands, and the demands at queueing stations (0 at delay stations).
    Z : float or ndarray (P,)
        Think times.
    pops : int or sorted ndarray of int
        N: keep every n = 1..N; or the strictly increasing populations to keep.
    Du : ndarray like D, optional
        Per-server demands D / m (needed for U).
    per_station : bool
        Return R_k and Q_k (and U_k when ``Du`` is given); else only X and R.

    Returns
    -------
    X, R : ndarray (rows,) or (P, rows)
    Rk, Q, U : ndarray (rows, K) or (P, rows, K), or None
        Fresh arrays, each element written once.
    """
    single = np.ndim(D) == 1
    D = np.ascontiguousarray(D, dtype=np.float64)
    Dq = np.ascontiguousarray(Dq, dtype=np.float64)
    K = D.shape[-1]
    lead = () if single else (D.shape[0],)
    N, rows, kept = _populations(pops)
    want = {"X", "R"}
    if per_station:
        want |= {"Rk", "Q"} | ({"U"} if Du is not None else set())
    X, R, Rk, Q, U = _kernels.result_arrays(lead, rows, K, want)
    if _kernels.available():
        Zp = np.broadcast_to(np.asarray(Z, dtype=np.float64), lead or (1,))
        _kernels.mva(D, Dq, Du if "U" in want else None, Zp, rows, kept, X, R, Rk, Q, U)
    else:
        _exact_numpy(D, Dq, Z, N, kept, X, R, Rk, Q)
        if U is not None:  # the same products as the kernel's X(n) Du_k, in one pass
            np.multiply(X[..., None], np.asarray(Du)[..., None, :], out=U)
    return X, R, Rk, Q, U


def _exact_numpy(D, Dq, Z, N: int, kept, X, R, Rk, Q) -> None:
    """The numpy twin of ``qnk_mva``: loops over n, vectorised over stations (and points).

    Kept rows of R_k and Q_k are written in place, and the last Q row is the state.
    """
    batched = D.ndim == 2
    Zb = np.asarray(Z, dtype=np.float64) if batched else float(Z)
    q = np.zeros(D.shape)
    rs, qs = np.empty(D.shape), np.empty(D.shape)
    nxt = 0
    for n in range(1, N + 1):
        if kept is None:
            i = n - 1
        elif kept[nxt] == n:
            i, nxt = nxt, nxt + 1
        else:
            i = -1
        r = Rk[..., i, :] if i >= 0 and Rk is not None else rs
        np.multiply(Dq, q, out=r)
        r += D  # D_k (1 + Q_k) at queues; delay stations have Dq = 0 and keep D_k
        s = r.sum(axis=-1)
        x = n / (Zb + s)
        q = Q[..., i, :] if i >= 0 and Q is not None else qs
        np.multiply(r, x[:, None] if batched else x, out=q)
        if i >= 0:
            X[..., i] = x
            R[..., i] = s


def subset_pass(D, Dq, Du, Z: float, N: int, idx, ms, Tc, mode: str):
    """One pass of the complement recursion over the subset S of multi-server stations.

    Parameters
    ----------
    D, Dq, Du : ndarray (K,)
        Demands of the subnetwork (0 for the multi-server stations not in S), at
        queueing stations (0 at delays), and per server.
    idx, ms : ndarray (L,) of int
        The multi-server stations in S and their server counts (L may be 0).
    Tc : ndarray (L, N)
        Cycle times T_{S-k}(n) = n / X_{S-k}(n) of S without each of them (0 for an
        empty network), from earlier passes.
    mode : {"none", "all", "last"}

    Returns
    -------
    T : ndarray (N,)
        Cycle times of S, T_S(n) = Z + R_S(n).
    tuple or None
        X, R, R_k, Q_k, U_k for every n ("all") or n = N ("last"); None for "none".

    Notes
    -----
    See Notes A of :func:`~qnmodel.solvers.mva_ld.mva_load_dependent`: R_k(n) of a
    multi-server station is (D_k/m)(1 + Q_k(n-1) + sum_{j<m-1} (m-1-j) p_k(j|n-1)),
    p_k(j|n) = (D_k X(n) / j) p_k(j-1|n-1) and p_k(0|n) = p_k(0|n-1) X_S(n) / X_{S-k}(n).
    """
    K = D.size
    P = N if mode == "all" else 1
    want = set() if mode == "none" else {"X", "R", "Rk", "Q", "U"}
    X, R, Rk, Q, U = _kernels.result_arrays((), P, K, want)
    T = np.empty(N)
    if _kernels.available():
        _kernels.mva_ldn(D, Dq, Du, Z, N, idx, ms, Tc, mode, T, X, R, Rk, Q, U)
    else:
        _subset_numpy(D, Dq, Du, Z, N, idx, ms, Tc, mode, T, X, R, Rk, Q, U)
    return T, (None if mode == "none" else (X, R, Rk, Q, U))


def _subset_numpy(D, Dq, Du, Z, N, idx, ms, Tc, mode, T, X, R, Rk, Q, U) -> None:
    """The numpy twin of ``qnk_mva_ldn``."""
    K = D.size
    nin = len(idx)
    Lk = [int(min(mk - 1, N)) for mk in ms]
    p = [np.zeros(n) for n in Lk]
    for v in p:
        v[0] = 1.0  # p_k(0 | 0) = 1
    wts = [(mk - 1 - np.arange(n)).astype(np.float64) for mk, n in zip(ms, Lk, strict=True)]
    jdiv = [np.arange(1, n, dtype=np.float64) for n in Lk]
    Dk = [float(D[k]) for k in idx]
    Dmk = [float(D[k]) / int(mk) for k, mk in zip(idx, ms, strict=True)]
    q = np.zeros(K)
    r = np.empty(K)
    for n in range(1, N + 1):
        np.multiply(Dq, q, out=r)
        r += D
        for i in range(nin):
            k = idx[i]
            r[k] = Dmk[i] * ((1.0 + q[k]) + float(np.dot(wts[i], p[i])))
        S = float(r.sum())
        T[n - 1] = Z + S
        if Z + S == 0.0:  # the empty network (no station, no think time): T = 0
            continue
        x = n / (Z + S)
        np.multiply(r, x, out=q)
        for i in range(nin):
            tc = Tc[i, n - 1]  # X_S(n) / X_{S-k}(n), X_{S-k}(n) = n / T_{S-k}(n)
            ratio = x / (n / tc) if tc > 0.0 else 0.0
            if Lk[i] > 1:
                p[i][1:] = ((Dk[i] * x) / jdiv[i]) * p[i][:-1]
            p[i][0] = p[i][0] * ratio
        if mode == "all" or (mode == "last" and n == N):
            j = n - 1 if mode == "all" else 0
            Rk[j] = r
            Q[j] = q
            np.multiply(Du, x, out=U[j])
            X[j] = x
            R[j] = S
