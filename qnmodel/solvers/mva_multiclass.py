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
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_population, as_quantity
from ..errors import InvalidModelError, LatticeTooLargeError
from ..model.multiclass import MultiClassNetwork
from ..model.network import Network, refuse_forkjoin
from ..results.closed import MultiClassResult
from . import _kernels

__all__ = ["mva_multiclass", "seidmann_split", "lattice_memory_bytes", "DEFAULT_MAX_MEMORY"]

DEFAULT_MAX_MEMORY = 1 << 30  # bytes (1 GiB) allowed for the lattice frontier by default


# --------------------------------------------------------------------------------------
# Inputs shared by the exact and the approximate multi-class solvers
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Model:
    """Validated closed multi-class model: D (C, K), N (C,), Z (C,), kinds, servers, names."""

    D: np.ndarray
    N: np.ndarray
    Z: np.ndarray
    delay: np.ndarray
    servers: np.ndarray
    names: tuple[str, ...]
    class_names: tuple[str, ...] | None = None


def _legacy_keywords(net: Any, N: Any, demands: Any, population: Any, solver: str) -> tuple:
    """Map the deprecated keywords ``demands=`` / ``population=`` onto ``net`` / ``N``."""
    for old, new, value in (("demands", "net", demands), ("population", "N", population)):
        if value is None:
            continue
        if (net if new == "net" else N) is not None:
            raise InvalidModelError(f"{solver}: give {new} once ({old}= is its old name)")
        warnings.warn(
            f"{solver}({old}=...) is deprecated: pass it as {new} (the network first, "
            "the population N second)",
            DeprecationWarning,
            stacklevel=3,
        )
        if new == "net":
            net = value
        else:
            N = value
    if net is None:
        raise InvalidModelError(f"{solver}: give a network (or a C x K demand matrix)")
    if N is None and not isinstance(net, MultiClassNetwork):
        raise InvalidModelError(f"{solver}: give the population N")
    return net, N


def _prepare(
    net: Any,
    N: Any,
    think_time: Any,
    kinds: Any,
    servers: Any,
    names: Any,
    solver: str = "mva_multiclass",
) -> _Model:
    """Arrays of a closed multi-class solver from a network (or the legacy arrays).

    A :class:`~qnmodel.model.network.Network` is a one-class model; a
    :class:`~qnmodel.model.multiclass.MultiClassNetwork` gives its stations and classes (N
    overrides the closed classes' populations); a C x K demand matrix with ``N``,
    ``think_time``, ``kinds``, ``servers`` and ``names`` is described by
    :meth:`MultiClassNetwork.from_demands`. Every check is the description's own.
    """
    if isinstance(net, Network | MultiClassNetwork):
        extra = [k for k, v in (("kinds", kinds), ("servers", servers), ("names", names)) if v]
        if extra:
            raise InvalidModelError(
                f"{', '.join(extra)} come from the {type(net).__name__}; do not pass them as well"
            )
        if not (isinstance(think_time, int | float) and think_time == 0.0):
            raise InvalidModelError(
                f"think_time comes from the {type(net).__name__}; got think_time="
                f"{think_time!r} as well: set it on the network (with_think_time() or the "
                "classes' think_time)"
            )
        check_plain(net, solver)
    if isinstance(net, Network):
        return _Model(
            D=np.array(net.demands, dtype=np.float64)[None, :],
            N=np.array([as_population(N, "N")], dtype=np.int64),
            Z=np.array([net.think_time]),
            delay=np.array(net.is_delay),
            servers=np.array(net.servers, dtype=np.int64),
            names=net.names,
        )
    if not isinstance(net, MultiClassNetwork):
        net = MultiClassNetwork.from_demands(
            net, N=N, think_time=think_time, names=names, kinds=kinds, servers=servers
        )
        N = None
    if net.is_open.any():
        opened = [net.class_names[c] for c in net.open_classes]
        raise InvalidModelError(
            f"{solver} solves closed classes; the network has open classes {opened}: "
            "use qnmodel.mixed_network (open and closed) or qnmodel.open_network"
        )
    Ns = net.population_vector(N)
    if Ns.sum() < 1:
        raise InvalidModelError(f"N must hold at least one job, got {Ns.tolist()}")
    return _Model(
        D=np.array(net.demands),
        N=Ns,
        Z=np.array(net.think_time),
        delay=np.array(net.is_delay),
        servers=np.array(net.servers, dtype=np.int64),
        names=net.names,
        class_names=net.class_names,
    )


def check_plain(net: Any, solver: str) -> None:
    """Refuse stations a product-form MVA solver cannot take (general load-dependent).

    Multi-server stations are accepted (Seidmann's approximation, see
    :func:`seidmann_split`).
    """
    ld = np.flatnonzero(net.is_load_dependent)
    if ld.size:
        raise InvalidModelError(
            f"{solver} does not take general load-dependent stations (station "
            f"{net.names[int(ld[0])]!r} has rate_multipliers): use qnmodel.mva for one class"
        )


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
        class_names=model.class_names,
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
    net: Any = None,
    N: Any = None,
    think_time: Any = 0.0,
    kinds: Any = None,
    servers: Any = None,
    names: Any = None,
    max_memory: Any = DEFAULT_MAX_MEMORY,
    *,
    demands: Any = None,
    population: Any = None,
) -> MultiClassResult:
    """Exact MVA of a closed multi-class network at population vector N.

    Parameters
    ----------
    net : MultiClassNetwork, Network or array_like (C, K)
        The network: a :class:`~qnmodel.model.multiclass.MultiClassNetwork` (closed
        classes only), a single-class :class:`~qnmodel.model.network.Network` (one
        class), or the demand matrix D_ck = V_ck S_ck of class c at station k,
        seconds (finite, >= 0), described further by ``think_time``, ``kinds``,
        ``servers`` and ``names``.
    N : array_like of int (C,), mapping or int
        Jobs per class N_c >= 0, at least one job in total (an int for a
        Network; optional for a MultiClassNetwork, whose classes carry it; a
        mapping {class name: N_c} overrides some classes).
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
    demands, population
        Deprecated names of ``net`` and ``N``.

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
    net, N = _legacy_keywords(net, N, demands, population, "mva_multiclass")
    refuse_forkjoin(net, "mva_multiclass")
    model = _prepare(net, N, think_time, kinds, servers, names)
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
