"""Exact mean value analysis of closed multi-class (multi-chain) networks.

:func:`mva_multiclass` runs the Reiser-Lavenberg recursion over the
population lattice {n : 0 <= n_c <= N_c}. Only a *frontier* of the lattice is
ever held in memory, never the whole lattice:

* the compiled kernel sweeps the lattice slice by slice along the class with
  the largest population and keeps two slices (the lattice with that class
  removed), a memory of 2 K prod_{c != c*} (N_c + 1) doubles;
* the pure-numpy path sweeps it level by level (|n| = 0, 1, ..., sum N_c) and
  keeps two levels, each no larger than one slice.

Multi-server stations are approximated with Seidmann's decomposition (see
:func:`seidmann_split`); everything else is exact for product-form networks.

References
----------
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed
   multichain queuing networks", J. ACM 27(2):313-322, 1980,
   doi:10.1145/322186.322195 (eqs. 3.1-3.3, the multi-chain recursion).
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984,
   sec. 7.4.2.1 (exact multiple-class MVA, Algorithm 7.1).
.. [SSS87] A. Seidmann, P. J. Schweitzer, S. Shalev-Oren, "Computerized
   closed queueing network models of flexible manufacturing systems",
   Large Scale Systems 12:91-107, 1987 (multi-server station replaced by a
   single server of demand D/m in tandem with a delay of demand D (m-1)/m).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_choice, as_population, as_populations, as_quantity, as_servers
from ..errors import InvalidModelError, InvalidTypeError, LatticeTooLargeError
from ..network import Network, refuse_forkjoin
from ..results import MultiClassResult
from . import _kernels

__all__ = ["mva_multiclass", "seidmann_split", "lattice_memory_bytes", "DEFAULT_MAX_MEMORY"]

DEFAULT_MAX_MEMORY = 1 << 30  # bytes (1 GiB) allowed for the lattice frontier by default
_KINDS = ("queue", "delay")


# --------------------------------------------------------------------------------------
# Inputs shared by the exact and the approximate multi-class solvers
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Model:
    """Validated multi-class model: D (C, K), population (C,), Z (C,), kinds, servers."""

    D: np.ndarray
    N: np.ndarray
    Z: np.ndarray
    delay: np.ndarray
    servers: np.ndarray
    names: tuple[str, ...]


def _as_demand_matrix(demands: Any, name: str = "demands") -> np.ndarray:
    if isinstance(demands, str) or np.isscalar(demands):
        raise InvalidTypeError(
            f"{name} must be a C x K matrix of demands (classes x stations), got {demands!r}"
        )
    try:
        arr = np.asarray(demands, dtype=np.float64)
    except (TypeError, ValueError):
        arr = None
    if arr is None:  # unit strings, ragged rows: go row by row through the shared checker
        from .._validate import as_demands

        rows = [as_demands(r, f"{name}[{i}]") for i, r in enumerate(demands)]
        if len({r.size for r in rows}) > 1:
            raise InvalidModelError(
                f"{name} rows differ in length ({[r.size for r in rows]}): "
                "give one demand per station for every class"
            )
        arr = np.vstack(rows)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.size == 0:
        raise InvalidModelError(
            f"{name} must be a non-empty C x K matrix (classes x stations), got shape {arr.shape}"
        )
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        c, k = (int(i) for i in np.argwhere(bad)[0])
        rule = "finite" if not np.isfinite(arr[c, k]) else ">= 0"
        raise InvalidModelError(f"{name}[{c}, {k}] must be {rule}, got {arr[c, k]!r}")
    return arr.copy()


def _prepare(
    demands: Any,
    population: Any,
    think_time: Any,
    kinds: Any,
    servers: Any,
    names: Any,
) -> _Model:
    """Validate the inputs of a multi-class solver (a Network is a one-class model)."""
    if isinstance(demands, Network):
        net = demands
        if kinds is not None or servers is not None or names is not None:
            raise InvalidModelError(
                "kinds, servers and names come from the Network; do not pass them as well"
            )
        if not (isinstance(think_time, int | float) and think_time == 0.0):
            raise InvalidModelError(
                f"think_time comes from the Network (Z={net.think_time}); got think_time="
                f"{think_time!r} as well: use net.with_think_time() instead"
            )
        pop = np.array([as_population(population, "population")], dtype=np.int64)
        return _Model(
            D=np.array(net.demands, dtype=np.float64)[None, :],
            N=pop,
            Z=np.array([net.think_time]),
            delay=np.array(net.is_delay),
            servers=np.array(net.servers, dtype=np.int64),
            names=net.names,
        )
    D = _as_demand_matrix(demands)
    C, K = D.shape
    N = as_populations(population, "population")
    if N.size != C:
        raise InvalidModelError(
            f"population has {N.size} entries but demands has {C} rows (classes): "
            "give one population per class"
        )
    if N.sum() < 1:
        raise InvalidModelError(f"population must hold at least one job, got {N.tolist()}")
    if isinstance(think_time, str) or np.isscalar(think_time):
        Z = np.full(C, as_quantity(think_time, "think_time", "time"))
    else:
        zs = list(think_time)
        if len(zs) != C:
            raise InvalidModelError(
                f"think_time has {len(zs)} entries but there are {C} classes: "
                "give a scalar or one think time per class"
            )
        Z = np.array([as_quantity(z, f"think_time[{c}]", "time") for c, z in enumerate(zs)])
    if kinds is None:
        delay = np.zeros(K, dtype=bool)
    else:
        kinds = list(kinds) if not isinstance(kinds, str) else [kinds]
        if len(kinds) != K:
            raise InvalidModelError(
                f"kinds has {len(kinds)} entries but demands has {K} columns (stations)"
            )
        delay = np.array(
            [as_choice(kd, f"kinds[{k}]", _KINDS) == "delay" for k, kd in enumerate(kinds)]
        )
    if servers is None:
        m = np.ones(K, dtype=np.int64)
    else:
        ms = list(np.atleast_1d(servers))
        if len(ms) != K:
            raise InvalidModelError(
                f"servers has {len(ms)} entries but demands has {K} columns (stations)"
            )
        m = np.array([as_servers(v, f"servers[{k}]") for k, v in enumerate(ms)], dtype=np.int64)
        both = np.flatnonzero(delay & (m > 1))
        if both.size:
            k = int(both[0])
            raise InvalidModelError(
                f"servers[{k}] must be 1 for a delay station (it has infinitely many), "
                f"got {int(m[k])}"
            )
    if names is None:
        names = tuple(f"s{k}" for k in range(K))
    else:
        names = tuple(names)
        if len(names) != K or not all(isinstance(s, str) and s for s in names):
            raise InvalidModelError(f"names must be {K} non-empty strings, got {names!r}")
        if len(set(names)) != K:
            raise InvalidModelError(f"names must be unique, got {names!r}")
    loaded = (D[N > 0].sum(axis=1) + Z[N > 0]) <= 0
    if loaded.any():
        c = int(np.flatnonzero(N > 0)[np.flatnonzero(loaded)[0]])
        raise InvalidModelError(
            f"class {c} has zero demand everywhere and zero think time: its throughput is "
            "unbounded; give it a demand > 0 somewhere"
        )
    return _Model(D=D, N=N, Z=Z, delay=delay, servers=m, names=names)


def seidmann_split(D: np.ndarray, delay: np.ndarray, servers: np.ndarray):
    """Seidmann's decomposition of multi-server stations ([SSS87]).

    A station of m > 1 servers and demand D_ck becomes a single-server queue of
    demand D_ck / m followed by a delay station of demand D_ck (m - 1) / m. The
    approximation is exact at one job and in heavy traffic (both the throughput
    asymptote 1/(D/m) and the minimal response time D are preserved).

    Parameters
    ----------
    D : ndarray (C, K)
        Demands, seconds.
    delay : ndarray (K,) of bool
    servers : ndarray (K,) of int

    Returns
    -------
    D2 : ndarray (C, K + L)
        Demands of the K stations (multi-server ones divided by m) followed by
        the L added delay stations.
    delay2 : ndarray (K + L,) of bool
    owner : ndarray (L,) of int
        Which original station each added delay belongs to.
    """
    multi = np.flatnonzero(~delay & (servers > 1))
    m = servers[multi].astype(np.float64)
    D2 = np.array(D, dtype=np.float64)
    D2[:, multi] = D[:, multi] / m
    extra = D[:, multi] * ((m - 1.0) / m)
    return (
        np.hstack([D2, extra]),
        np.concatenate([delay, np.ones(multi.size, dtype=bool)]),
        multi,
    )


def _fold(A: np.ndarray, K: int, owner: np.ndarray) -> np.ndarray:
    """Add the columns of the Seidmann delay parts back onto their stations."""
    out = np.array(A[:, :K])
    np.add.at(out, (slice(None), owner), A[:, K:])
    return out


def _package(method: str, model: _Model, X: np.ndarray, Rk: np.ndarray, cls=MultiClassResult, **kw):
    """Build the result from X (C,) and R_ck (C, K) of the original stations."""
    Q = X[:, None] * Rk
    m = np.where(model.delay, 1.0, model.servers.astype(np.float64))
    U = X[:, None] * model.D / m[None, :]
    return cls(
        method=method,
        population=model.N,
        throughput=X,
        response_time=Rk.sum(axis=1),
        queue_length=Q,
        utilization=U,
        residence_time=Rk,
        station_names=model.names,
        think_time=model.Z,
        demands=model.D,
        servers=np.where(model.delay, 0, model.servers),
        **kw,
    )


# --------------------------------------------------------------------------------------
# Exact recursion over the lattice
# --------------------------------------------------------------------------------------


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


def _lattice_numpy(D: np.ndarray, Dq: np.ndarray, Z: np.ndarray, N: np.ndarray):
    """Level-by-level exact recursion; returns X (C,), R_ck (C, K) at population N.

    Level L holds the lattice points with sum_c n_c = L, each identified by its
    mixed-radix code sum_c n_c s_c; the points of a level depend only on the
    previous level, so a level is one vectorised step.
    """
    C, K = D.shape
    radix = N + 1
    stride = np.ones(C, dtype=np.int64)
    for c in range(C - 2, -1, -1):
        stride[c] = stride[c + 1] * radix[c + 1]
    pts = np.zeros((1, C), dtype=np.int64)
    codes = np.zeros(1, dtype=np.int64)
    Q = np.zeros((1, K))
    eye = np.eye(C, dtype=np.int64)
    X = R = None
    top = int(N.sum())
    for level in range(1, top + 1):
        cand = (pts[:, None, :] + eye[None, :, :]).reshape(-1, C)
        cand = cand[(cand <= N).all(axis=1)]
        ccodes = cand @ stride
        new_codes, first = np.unique(ccodes, return_index=True)
        new_pts = cand[first]
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


def mva_multiclass(
    demands: Any,
    population: Any,
    think_time: Any = 0.0,
    kinds: Any = None,
    servers: Any = None,
    names: Any = None,
    max_memory: Any = DEFAULT_MAX_MEMORY,
) -> MultiClassResult:
    """Exact MVA of a closed multi-class network at population vector N.

    Parameters
    ----------
    demands : array_like (C, K) or Network
        D_ck = V_ck S_ck, service demand of class c at station k, seconds
        (finite, >= 0). A :class:`~qnmodel.network.Network` is a one-class model
        (its stations, kinds, servers and think time are used).
    population : array_like of int (C,)
        Jobs per class N_c >= 0, at least one job in total (an int for a Network).
    think_time : float or array_like (C,)
        Z_c, seconds (>= 0), one for all classes or one per class.
    kinds : sequence of {"queue", "delay"} (K,), optional
        Station kinds; default all ``"queue"``.
    servers : sequence of int (K,), optional
        Servers of each queueing station (>= 1); default 1. Stations with
        m > 1 use Seidmann's approximation ([SSS87]); the result is then no
        longer exact (see Notes).
    names : sequence of str (K,), optional
        Station names; default ``"s0", "s1", ...``.
    max_memory : int or str
        Largest lattice frontier allowed, bytes or a size string
        (``"4 GiB"``); default 1 GiB.

    Returns
    -------
    MultiClassResult
        X_c, R_c, and per class and station Q_ck, U_ck = X_c D_ck / m_k, R_ck.
        For a class with N_c = 0: X_c = 0, Q_ck = U_ck = 0, and R_ck is the
        residence time one added class-c job would see, D_ck (1 + Q_k(N)).

    Raises
    ------
    LatticeTooLargeError
        Before any work, when the frontier (see :func:`lattice_memory_bytes`)
        exceeds ``max_memory``; the message states the estimate.
    InvalidModelError
        Bad shapes or values, naming the argument.

    Notes
    -----
    The recursion of [RL80] (also [LZGS] Algorithm 7.1): for every lattice
    point n, in an order where n - e_c precedes n,

        R_ck(n) = D_ck (1 + Q_k(n - e_c))  at queueing stations (D_ck at delays),
        X_c(n)  = n_c / (Z_c + sum_k R_ck(n)),
        Q_k(n)  = sum_c X_c(n) R_ck(n).

    Only sums and products of positive numbers occur, so it neither cancels
    nor overflows. Cost O(C K prod_c (N_c + 1)) time; memory is a frontier of
    the lattice (module docstring), not the whole lattice.

    With multi-server stations the network is first transformed by
    :func:`seidmann_split`. Against the exact load-dependent solution
    (single class, :func:`~qnmodel.solvers.mva.mva_load_dependent`) the
    throughput error of this approximation is largest near the knee of the
    throughput curve; see ``docs/explanation/performance.md`` and
    ``tests/solvers/test_mva_multiclass.py`` for the measured bound.
    """
    refuse_forkjoin(demands, "mva_multiclass")
    model = _prepare(demands, population, think_time, kinds, servers, names)
    C, K = model.D.shape
    limit = as_quantity(max_memory, "max_memory", "size", positive=True)
    D2, delay2, owner = seidmann_split(model.D, model.delay, model.servers)
    need = lattice_memory_bytes(model.N[model.N > 0], D2.shape[1])
    if need > limit:
        points = math.prod(int(n) + 1 for n in model.N)
        raise LatticeTooLargeError(
            f"exact multi-class MVA for population {model.N.tolist()} with {K} stations needs "
            f"about {need / 2**20:.4g} MiB for the lattice frontier (the lattice has "
            f"{points:.4g} points, about {points * C * K:.3g} multiply-adds), more than "
            f"max_memory={limit / 2**20:.4g} MiB; use amva(..., method='linearizer') or "
            "'schweitzer', or raise max_memory"
        )
    X, R2 = _solve_exact(D2, delay2, model.Z, model.N)
    Rk = _fold(R2, K, owner)
    method = "mva.multiclass" if owner.size == 0 else "mva.multiclass+seidmann"
    return _package(method, model, X, Rk)
