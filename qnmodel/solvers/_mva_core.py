"""The single-class MVA kernels, one per recursion, and what their solvers share.

* :func:`exact` -- the Reiser-Lavenberg recursion ([RL80]; [LZGS] Algorithm 6.1)
  for P networks of the same K stations at once. It serves
  :func:`~qnmodel.solvers.mva.mva_exact` (P = 1), the what-if sweep
  (:func:`qnmodel.whatif.solve_grid`, P grid points) and the load-independent part
  of the log-space convolution in :mod:`qnmodel.solvers.mva_ld`.
* :func:`complement` -- the complement recursion of
  :func:`~qnmodel.solvers.mva_ld.mva_load_dependent`: one step per population n
  for each subset of the L = 1 .. 6 multi-server stations (one multi-server
  station is L = 1, the same code).

Each runs the compiled kernel (``qnk_mva`` and ``qnk_mva_ld`` in ``_csrc``) when it
is loaded, otherwise its numpy twin below. Both do the same arithmetic in the same
order; only sums over stations differ (four partial sums in C, pairwise in numpy),
within a few ulps (tested to 1e-12 relative). Result arrays are allocated by
:func:`qnmodel.solvers._kernels.result_arrays` for both paths.

Also here, shared by :mod:`~qnmodel.solvers.mva` and :mod:`~qnmodel.solvers.mva_ld`:
the input check and the packing of an :class:`~qnmodel.results.closed.MVAResult`.

References
----------
[RL80] (Reiser and Lavenberg 1980) and [LZGS] (Lazowska et al. 1984, Algorithm 6.1,
sec. 8.3), as listed in :mod:`qnmodel.solvers.mva`.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_choice, as_population, check_memory, check_time_scale
from ..errors import InvalidTypeError
from ..model import Network
from ..results._laws import LawOf, attach_law
from ..results.closed import MVAResult, handover
from . import _kernels
from ._netargs import check_has_demand
from .support import require

__all__ = ["exact", "complement", "check", "result", "single_class"]

KEEP = ("all", "last")


def single_class(net: Network, solver: str) -> Network:
    """The single-class closed network ``solver`` solves: ``net`` itself, or the one closed
    class of a network with classes; anything ``solver`` does not support is refused
    (:func:`qnmodel.solvers.support.require`)."""
    if not isinstance(net, Network):
        raise InvalidTypeError(f"net must be a Network, got {type(net).__name__}")
    cm = net.compiled
    if not net.single:
        if cm.C == 1 and not cm.is_open[0]:
            net = net.class_network(0)
        else:
            require(cm, solver)  # names the classes: several, or open
    require(net.compiled, solver)
    return net


def check(net: Network, N: int, keep: str, solver: str = "mva") -> tuple[Network, int]:
    """Validate the common arguments of the single-class solvers; returns (network, N)."""
    net = single_class(net, solver)
    N = as_population(N, "N")
    as_choice(keep, "keep", KEEP)
    check_time_scale(N, net.total_demand, net.think_time)
    # Results n, X, R and Rk, Q, U (K each) for every kept population, float64: refuse
    # before allocating past the memory limit (a population past memory is a bad input).
    rows = N if keep == "all" else 1
    check_memory(
        8.0 * rows * (3 * len(net.demands) + 3),
        f"exact MVA of N = {N} jobs at K = {len(net.demands)} stations, keeping every n",
        "pass keep='last' (memory O(K)) or a smaller N, or raise the limit",
    )
    check_has_demand(net.total_demand, net.think_time)
    return net, N


def result(method: str, net: Network, N: int, keep: str, X, R, Q, U, Rk) -> MVAResult:
    """An MVAResult adopting the solver-owned arrays (no copies) for n = 1..N or n = N,
    carrying the network's response-time law for ``response_time_quantile``."""
    n = np.arange(1, N + 1, dtype=np.float64) if keep == "all" else np.array([float(N)])
    handover(n, X, R, Q, U, Rk)
    res = MVAResult(
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
    return attach_law(res, LawOf(net))


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
    if batched:  # row-first views, so that row i of every output is a plain [i]
        X, R = X.T, R.T
        Rk, Q = (None if a is None else a.transpose(1, 0, 2) for a in (Rk, Q))
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
        r = Rk[i] if i >= 0 and Rk is not None else rs
        np.multiply(Dq, q, out=r)
        r += D  # D_k (1 + Q_k) at queues; delay stations have Dq = 0 and keep D_k
        s = r.sum(axis=-1)
        x = n / (Zb + s)
        q = Q[i] if i >= 0 and Q is not None else qs
        np.multiply(r, x[:, None] if batched else x, out=q)
        if i >= 0:
            X[i] = x
            R[i] = s


def complement(D, Dq, Du, Z: float, N: int, idx, ms, keep: str):
    """The complement recursion of :func:`~qnmodel.solvers.mva_ld.mva_load_dependent`
    (its Notes A) with L >= 1 multi-server stations, all subsets of them at once.

    Parameters
    ----------
    D, Dq, Du : ndarray (K,)
        Demands, demands at queueing stations (0 at delays), per-server demands D / m.
    Z : float
        Think time.
    idx, ms : ndarray (L,) of int
        The multi-server stations and their server counts (>= 2).
    keep : {"all", "last"}

    Returns
    -------
    X, R : ndarray (P,); R_k, Q_k, U_k : ndarray (P, K)
        P = N rows (n = 1..N) or one (n = N).

    Notes
    -----
    Subset S (a bit mask over ``idx``) is the network of the load-independent
    stations and Z plus the multi-server stations in S. For each n every subset takes
    one step, and its marginals then move to n with X_{S-k}(n) of each subset without
    one of its stations k (the compiled kernel does all the steps first, the numpy
    twin both per subset in increasing mask order; the numbers are the same). R_k(n) of
    a multi-server station is (D_k/m)(1 + Q_k(n-1) + sum_{j<m-1} (m-1-j) p_k(j|n-1)); then
    p_k(j|n) = (D_k X_S(n) / j) p_k(j-1|n-1) and p_k(0|n) = p_k(0|n-1) X_S(n) / X_{S-k}(n).
    The last subset (all stations) gives the result. One multi-server station is
    L = 1: the load-independent network and the whole one, side by side.
    """
    K = D.size
    X, R, Rk, Q, U = _kernels.result_arrays((), N if keep == "all" else 1, K, set(_FIELDS))
    if _kernels.available():
        _kernels.mva_ld(D, Dq, Du, Z, N, idx, ms, keep == "all", X, R, Rk, Q, U)
    else:
        _complement_numpy(D, Dq, Du, Z, N, idx, ms, keep == "all", X, R, Rk, Q, U)
    return X, R, Rk, Q, U


_FIELDS = ("X", "R", "Rk", "Q", "U")


def _complement_numpy(D, Dq, Du, Z, N, idx, ms, keep_all, X, R, Rk, Q, U) -> None:
    """The numpy twin of ``qnk_mva_ld``."""
    L, K = len(idx), D.size
    full = (1 << L) - 1
    subsets = []  # per mask: D, Dq of the subnetwork, Q state, its multi-server stations
    for mask in range(full + 1):
        DS, DqS = D.copy(), Dq.copy()
        stations = []
        for i, (k, mk) in enumerate(zip(idx, ms, strict=True)):
            if not mask >> i & 1:
                DS[k] = DqS[k] = 0.0
                continue
            Lk = int(min(mk - 1, N))
            p = np.zeros(Lk)
            p[0] = 1.0  # p_k(0 | 0) = 1: the marginals p_k(j | n-1), j < Lk
            wts = (mk - 1 - np.arange(Lk)).astype(np.float64)
            jdiv = np.arange(1, Lk, dtype=np.float64)
            stations.append(
                (int(k), float(D[k]) / int(mk), float(D[k]), wts, jdiv, p, mask & ~(1 << i))
            )
        subsets.append((DS, DqS, np.zeros(K), stations))
    xs = [0.0] * (full + 1)  # X_S(n); 0 for the empty network
    r = np.empty(K)
    for n in range(1, N + 1):
        for mask, (DS, DqS, q, stations) in enumerate(subsets):
            np.multiply(DqS, q, out=r)
            r += DS
            for k, Dm, _, wts, _, p, _ in stations:
                r[k] = Dm * ((1.0 + q[k]) + float(np.dot(wts, p)))
            S = float(r.sum())
            if Z + S == 0.0:  # the empty network (no station, no think time)
                continue
            x = n / (Z + S)
            np.multiply(r, x, out=q)
            for _, _, Dk, _, jdiv, p, sub in stations:
                xc = xs[sub]
                ratio = x / xc if xc > 0.0 else 0.0  # X_S(n) / X_{S-k}(n)
                if p.size > 1:
                    p[1:] = ((Dk * x) / jdiv) * p[:-1]
                p[0] = p[0] * ratio
            xs[mask] = x
            if mask == full and (keep_all or n == N):
                j = n - 1 if keep_all else 0
                Rk[j] = r
                Q[j] = q
                np.multiply(Du, x, out=U[j])
                X[j] = x
                R[j] = S
