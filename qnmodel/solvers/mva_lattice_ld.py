"""Exact MVA of closed multi-class networks with multi-server and load-dependent stations.

:func:`mva_multiclass_ld_exact` runs the multi-class MVA recursion over the population
lattice with the marginal queue-length probabilities of the load-dependent stations
([RL80] sec. 4; [LZGS] sec. 8.3, Algorithm 8.1 for several classes; [BGMT] sec. 8.2.2,
Bruell and Balbo's formulation). It is exact for product-form networks: single-server
queues, delay stations, m-server FCFS stations with class-independent service times and
stations whose rate r_k(j) depends on the number j of jobs present (processor-sharing
semantics, BCMP type 2, where service demands may depend on the class).

The recursion
-------------
For every lattice point n (0 <= n <= N), in an order where n - e_c precedes n, with
p_k(j|n) the probability of j jobs at station k:

    R_ck(n) = D_ck (1 + Q_k(n - e_c))                  single-server queue,
    R_ck(n) = D_ck                                     delay station,
    R_ck(n) = D_ck sum_{j>=1} (j / r_k(j)) p_k(j-1 | n - e_c)   load-dependent station,
    X_c(n)  = n_c / (Z_c + sum_k R_ck(n)),   Q_k(n) = sum_c X_c(n) R_ck(n),
    p_k(j|n) = (1 / r_k(j)) sum_c D_ck X_c(n) p_k(j-1 | n - e_c),  j >= 1.

Two changes keep it subtraction-free and short, as in the single-class
:func:`qnmodel.solvers.mva.mva_load_dependent` (its Notes A):

* the residence time is split at the last rate value rho = r_k(L):
  R_ck(n) = (D_ck / rho) (1 + Q_k(n - e_c)) + D_ck sum_{j=1..L-1} (j/r_k(j) - j/rho)
  p_k(j-1 | n - e_c), so only p_k(0..L-2) are carried (L - 1 = m - 1 for m servers);
* the idle probability is not 1 - sum_{j>=1} p_k(j|n) -- Octave's ``qncmmva``, which
  cancels near saturation and turns negative -- but the complement ratio
  p_k(0|n) = G_{-k}(n) / G(n) = p_k(0 | n - e_c) X_c(n) / X_c^{-k}(n), with X^{-k} the
  throughput of the network without station k at the same lattice point (any class c
  with n_c > 0). With several load-dependent stations, the network without k still has
  the others: every subset of them is solved alongside, in increasing order, so a
  subset's sub-subsets are ready ([Cas08] for the single-class form).

For a non-decreasing rate curve (m servers included) every weight is >= 0 and every step
a sum, product or quotient of positive numbers.

Cost and memory
---------------
2^L subsets for L load-dependent stations, each O(C (K + sum_k L_k)) per lattice point;
only two lattice levels are held (see :func:`ld_lattice_memory_bytes`). Without
load-dependent stations the plain recursion of :mod:`qnmodel.solvers.mva_multiclass` runs.

References
----------
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed multichain queuing
   networks", J. ACM 27(2):313-322, 1980, doi:10.1145/322186.322195.
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, Prentice-Hall, 1984,
   ch. 8 (sec. 8.3, load-dependent service centres).
.. [BGMT] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and Markov
   Chains*, 2nd ed., Wiley 2006, sec. 8.2.2 (multi-class MVA with load-dependent stations;
   example 9.5 p. 337 in the 1998 edition).
.. [Cas08] G. Casale, "A note on stable flow-equivalent aggregation in closed networks",
   Queueing Systems 60:193-202, 2008, doi:10.1007/s11134-008-9093-6.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import as_per_class, check_memory
from ..errors import InvalidModelError
from ..results.closed import MultiClassResult
from ._lattice import _solve_exact, lattice_memory_bytes, lattice_origin, next_level
from ._netargs import class_arrays, demand_array, peak_rates, station_kinds, visit_array

__all__ = ["mva_multiclass_ld_exact", "ld_lattice_memory_bytes"]


def ld_lattice_memory_bytes(population: Any, K: int, carried: list[int]) -> int:
    """Bytes of the two lattice levels kept by :func:`mva_multiclass_ld_exact`.

    An upper estimate: 8 S (2 (2^L (K + C) + 2^(L-1) sum_k L_k) + C K + 4 C^2 + 16) + 64 KiB,
    with S = prod_{c != c*} (N_c + 1) the lattice without its most populous class (a bound on
    the points of one level) and L_k the marginal probabilities carried for each of the L
    load-dependent stations (min(L_curve, N_tot + 1) - 1).
    """
    N = np.asarray(population, dtype=np.int64)
    C = N.size
    S = math.prod(sorted(int(n) + 1 for n in N)[:-1])
    L = len(carried)
    per_point = 2 * ((2**L) * (K + C) + (2 ** max(L - 1, 0)) * sum(carried))
    return 8 * S * (per_point + C * K + 4 * C * C + 16) + 65536


def _fcfs_check(demands: Any, visits: Any, servers: np.ndarray) -> None:
    """m-server FCFS stations need class-independent service times (BCMP type 1)."""
    S = demand_array(demands, None, classes=True)
    V = visit_array(visits, "visits", S.shape)
    for k in np.flatnonzero(servers > 1):
        used = np.flatnonzero(V[:, k] > 0)
        if used.size and not np.all(S[used, k] == S[used[0], k]):
            c2 = int(used[np.flatnonzero(S[used, k] != S[used[0], k])[0]])
            raise InvalidModelError(
                f"station {k} has {servers[k]} servers (FCFS) and class-dependent service "
                f"times (class {int(used[0])}: {float(S[used[0], k])!r} s, class {c2}: "
                f"{float(S[c2, k])!r} s): service times at a multiple-server FCFS station must be "
                "class-independent for product form; give a rate curve (processor sharing) "
                "via rates= instead"
            )


def _level_tables(pts, codes, stride, N):
    """The next lattice level: points, codes, and for each class the rows of n - e_c."""
    C = N.size
    new_pts, new_codes = next_level(pts, stride, N)
    has = [new_pts[:, c] > 0 for c in range(C)]
    pos = [np.searchsorted(codes, new_codes[has[c]] - stride[c]) for c in range(C)]
    cstar = np.argmax(new_pts > 0, axis=1)
    pos_star = np.searchsorted(codes, new_codes - stride[cstar])
    return new_pts, new_codes, has, pos, cstar, pos_star


def _lattice(D, Dq, Dd, Z, N, ld, w, rho, rdiv):
    """The recursion of the module docstring; returns X (C,), R (C, K) at N, Q_k(N) and the
    carried marginals of the full network at N."""
    C, K = D.shape
    L = len(ld)
    Dl = D[:, ld]  # (C, L) demands at the load-dependent stations
    masks = range(1 << L)
    bits = [[i for i in range(L) if m >> i & 1] for m in masks]
    base = Z + Dq.sum(axis=1) + Dd.sum(axis=1)
    dead = [base + Dl[:, b].sum(axis=1) <= 0 for b in bits]
    stride, pts, codes = lattice_origin(N)
    state = []
    for b in bits:
        p = {}
        for i in b:
            p[i] = np.zeros((1, w[i].size))
            p[i][0, 0] = 1.0
        state.append((np.zeros((1, K)), p))
    R_top = np.zeros((C, K))
    top = int(N.sum())
    for level in range(1, top + 1):
        pts, new_codes, has, pos, cstar, pos_star = _level_tables(pts, codes, stride, N)
        codes = new_codes
        P = codes.size
        rows = np.arange(P)
        new_state, new_X = [], []
        for mask, b in enumerate(bits):
            Qp, pp = state[mask]
            live = ~(pts[:, dead[mask]] > 0).any(axis=1)
            X = np.zeros((P, C))
            Q = np.zeros((P, K))
            for c in range(C):
                if not has[c].any():
                    continue
                qprev = Qp[pos[c]]
                r = Dd[c][None, :] + Dq[c][None, :] * (1.0 + qprev)
                for i in b:
                    k = ld[i]
                    r[:, k] = (Dl[c, i] / rho[i]) * (1.0 + qprev[:, k]) + Dl[c, i] * (
                        pp[i][pos[c]] @ w[i]
                    )
                with np.errstate(divide="ignore", invalid="ignore"):
                    x = pts[has[c], c] / (Z[c] + r.sum(axis=1))
                x = np.where(live[has[c]], x, 0.0)
                X[has[c], c] = x
                Q[has[c]] += x[:, None] * r
                if level == top and mask == len(bits) - 1:
                    R_top[c] = r[0]
            pn = {}
            for i in b:
                prev = pp[i]
                cur = np.zeros((P, prev.shape[1]))
                for c in range(C):
                    if has[c].any() and cur.shape[1] > 1:
                        cur[has[c], 1:] += (Dl[c, i] * X[has[c], c])[:, None] * prev[pos[c], :-1]
                cur[:, 1:] /= rdiv[i][None, :]
                child = new_X[mask & ~(1 << i)]
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = X[rows, cstar] / child[rows, cstar]
                cur[:, 0] = prev[pos_star, 0] * np.where(np.isfinite(ratio), ratio, 0.0)
                cur[~live] = 0.0
                pn[i] = cur
            X[~live] = np.inf  # a dead subnetwork: G = 0, so a parent's p_k(0) = 0 here
            new_X.append(X)
            new_state.append((Q, pn))
        state = new_state
        X_full = new_X[-1]
    Q_top, p_top = state[-1]
    X_top = X_full[0] if top > 0 else np.zeros(C)
    return X_top, R_top, Q_top[0], {i: p_top[i][0] for i in p_top}


def mva_multiclass_ld_exact(
    demands: Any,
    population: Any,
    think_time: Any = 0.0,
    delay: Any = None,
    servers: Any = None,
    rates: Any = None,
    visits: Any = None,
    max_memory: Any = None,
) -> MultiClassResult:
    """Exact multi-class MVA with multi-server and load-dependent stations (module docstring).

    Parameters
    ----------
    demands : array_like (C, K)
        D_ck, seconds (>= 0); with ``visits``, service times per visit S_ck.
    population : array_like of int (C,)
        N_c >= 0.
    think_time : float or array_like (C,)
        Z_c, seconds (>= 0).
    delay : array_like of bool (K,), optional
        Delay (infinite-server) stations.
    servers : array_like of int (K,), optional
        m_k >= 1 servers (FCFS): rate min(j, m) / D with j jobs.
    rates : sequence (K,) of None or rate curves, optional
        r_k(1..L) > 0: rate r_k(min(j, L)) / D_ck with j jobs (processor-sharing
        semantics; the last value holds beyond L).
    visits : array_like (C, K), optional
        V_ck >= 0; then D = V S, and a multi-server station must have class-independent
        service times S_ck among the classes that visit it (FCFS product form).
    max_memory : int or str, optional
        Largest memory for the lattice levels, bytes or ``"4 GiB"``; default
        ``$QNMODEL_MAX_MEMORY`` or 1 GiB.

    Returns
    -------
    MultiClassResult
        ``method="mva.multiclass.ld"``: X_c, R_c, R_ck, Q_ck = X_c R_ck,
        U_ck = X_c D_ck / c_k (c_k = m or max_j r_k(j)), and p_k(0|N) at load-dependent
        stations. A class with N_c = 0 has X_c = Q_ck = U_ck = 0 and R_ck the residence
        time one added class-c job would see.

    Raises
    ------
    LatticeTooLargeError
        Before any work, when :func:`ld_lattice_memory_bytes` exceeds ``max_memory``.
    InvalidModelError
        Bad shapes or values (naming the argument), a class with jobs and neither demand nor
        think time, class-dependent service times at a multi-server FCFS station.
    """
    D, N = class_arrays(demands, population, visits)
    C, K = D.shape
    Z = as_per_class(think_time, "think_time", C)
    delay, m, curves = station_kinds(K, delay, servers, rates, jobs=int(N.sum()))
    empty = (N > 0) & (D.sum(axis=1) + Z <= 0)
    if empty.any():
        c = int(np.flatnonzero(empty)[0])
        raise InvalidModelError(
            f"class {c} has N = {int(N[c])} jobs but its demands (row {c}) and think time are "
            "all zero: its throughput is unbounded; the demands must contain at least one "
            "value > 0 for each class with jobs"
        )
    if visits is not None:
        _fcfs_check(demands, visits, np.where(delay, 1, m))
    Ntot = int(N.sum())
    peak = np.where(m > 1, m, peak_rates(curves))  # m servers peak at m (curves are cut)
    Deff = D.copy()
    ld, w, rho, rdiv, carried = [], [], [], [], []
    for k, r in enumerate(curves):
        if r is None:
            continue
        reach = np.asarray(r[np.minimum(np.arange(Ntot + 1), r.size - 1)])  # r(1..Ntot+1)
        Lt = int(min(r.size, Ntot + 1))
        if Lt == 1 or np.all(reach[:Lt] == reach[0]) or not D[:, k].any():
            Deff[:, k] = D[:, k] / float(reach[0])  # constant over reachable loads
            continue
        rk = reach[:Lt]
        j = np.arange(1.0, Lt)
        ld.append(k)
        rho.append(float(rk[-1]))
        w.append(j / rk[:-1] - j / rk[-1])  # weights of p(j-1), j = 1..Lt-1
        rdiv.append(rk[: Lt - 2])  # r(1..Lt-2) for p(1..Lt-2)
        carried.append(Lt - 1)
    cap = max_memory
    if ld:
        need = ld_lattice_memory_bytes(N, K, carried)
    else:
        need = lattice_memory_bytes(N[N > 0], K) if Ntot else 65536
    check_memory(
        need,
        f"exact multi-class MVA for population {N.tolist()} with {K} stations and {len(ld)} "
        f"load-dependent ones ({2 ** len(ld)} subnetworks)",
        "use qnmodel.amva (approximate), or raise max_memory",
        cap,
    )
    is_ld = np.zeros(K, dtype=bool)
    is_ld[ld] = True
    Dq = np.where((~delay & ~is_ld)[None, :], Deff, 0.0)
    Dd = np.where(delay[None, :], D, 0.0)
    idle = np.full(K, np.nan)
    if not ld and Ntot:
        X, R = _solve_exact(Deff, delay, Z, N)
    else:
        X, R, QN, pN = _lattice(Deff, Dq, Dd, Z, N, ld, w, rho, rdiv)
        for i, k in enumerate(ld):
            idle[k] = pN[i][0]
        zero = N == 0  # an added class-c job at N sees Q(N) and p(N): arrival theorem
        if zero.any():
            Radd = Dd + Dq * (1.0 + QN[None, :])
            for i, k in enumerate(ld):
                Radd[:, k] = (Deff[:, k] / rho[i]) * (1.0 + QN[k]) + Deff[:, k] * (pN[i] @ w[i])
            R = np.where(zero[:, None], Radd, R)
    return MultiClassResult(
        method="mva.multiclass.ld",
        population=N,
        throughput=X,
        response_time=R.sum(axis=1),
        queue_length=X[:, None] * R,
        utilization=X[:, None] * D / peak[None, :],
        residence_time=R,
        station_names=tuple(f"s{k}" for k in range(K)),
        think_time=Z,
        demands=D,
        servers=np.where(delay, 1, m),
        is_delay=delay,
        peak_rate=peak,
        idle_probability=idle,
    )
