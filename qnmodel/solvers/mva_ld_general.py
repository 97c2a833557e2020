"""General load-dependent stations: exact single-class MVA, bounds and a multi-class
approximation.

A load-dependent station k of demand D_k and rate multipliers r_k(1), ..., r_k(L) serves
at rate r_k(min(j, L)) / D_k with j jobs present (the last multiplier holds beyond L);
m identical servers are the special case r(j) = min(j, m). A device that serves faster
as its queue deepens (a disk with command queueing, an NVMe drive) is described by the
curve a queue-depth sweep measures.

Exact solution (single class)
-----------------------------
The network has product form ([BCMP75]; [Buz73]) with station factor

    f_k(j) = D_k^j / prod_{i=1..j} r_k(min(i, L)),

and the normalising constant G(n) is the convolution of the factors with the constant
of the load-independent part. :func:`mva_ld_general` computes it in **log space**
(:func:`qnmodel.solvers.mva.log_convolve`): every term is positive, so nothing cancels
and nothing overflows, at any utilisation. Then X(n) = G(n-1)/G(n), and the marginal
p_k(j|n) = f_k(j) G_{-k}(n-j) / G(n) gives Q_k(n) = sum_j j p_k(j|n) ([BGMT] sec. 8.1;
[LZGS] sec. 8.3). The textbook load-dependent MVA recursion instead takes
p_k(0|n) = 1 - sum_{j>=1} p_k(j|n), which cancels catastrophically near saturation
([BGMT] sec. 8.2.4; Octave's ``qncsmvald`` documents the resulting negative values).

Bounds
------
A load-dependent station never serves faster than max_j r(j) / D, so D / max r plays
the role of the per-server demand in the asymptotic bounds; as j grows its rate tends
to r_L / D, the saturation rate of an open network.

Multi-class approximation
-------------------------
:func:`ld_seidmann_split` generalises Seidmann's multi-server decomposition ([SSS87]):
the station becomes a single-server queue of demand D / r_max followed by a delay of
D / r(1) - D / r_max. It keeps the light-load residence time D / r(1) and the heavy-load
capacity r_max / D; in between it is an approximation (for m servers it is Seidmann's
exactly). :func:`qnmodel.amva` applies it; :func:`qnmodel.mva_multiclass` solves such
stations exactly.

References
----------
.. [Buz73] J. P. Buzen, "Computational algorithms for closed queueing networks with
   exponential servers", CACM 16(9):527-531, 1973, doi:10.1145/362342.362345.
.. [BCMP75] F. Baskett, K. M. Chandy, R. R. Muntz, F. G. Palacios, "Open, closed and
   mixed networks of queues with different classes of customers", J. ACM 22(2):248-260,
   1975, doi:10.1145/321879.321887.
.. [BGMT] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and Markov
   Chains*, 2nd ed., Wiley 2006, sec. 8.1-8.2.
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, ch. 8.
.. [SSS87] A. Seidmann, P. J. Schweitzer, S. Shalev-Oren, "Computerized closed queueing
   network models of flexible manufacturing systems", Large Scale Systems 12:91-107, 1987.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validate import as_choice, as_population, as_rate_multipliers
from ..errors import InvalidModelError
from ..results.closed import MVAResult
from ._mva_core import result, single_class
from ._netargs import check_has_demand
from .mva_ld import convolution_arrays

__all__ = [
    "mva_ld_general",
    "ld_rates",
    "ld_log_factor",
    "ld_peak_capacity",
    "ld_least_stretch",
    "ld_seidmann_split",
]


def ld_rates(net: Any, rate_multipliers: Sequence | None = None, n_max: int | None = None) -> tuple:
    """Per station: None (load-independent queue or delay) or the float64 rate curve.

    ``rate_multipliers`` (one entry per station, None or a sequence) overrides the
    network's own ``rate_multipliers``; a multi-server queue without multipliers gets
    r(j) = 1, 2, ..., m, cut at ``n_max`` when given (the curve is constant past its end,
    and no population above ``n_max`` is solved: a station of 10^9 servers needs no 8 GB
    array).
    """
    K = len(net.names)
    given = rate_multipliers
    if given is None:
        given = getattr(net, "rate_multipliers", None)
    if given is None:
        given = tuple(getattr(s, "rate_multipliers", None) for s in getattr(net, "stations", ()))
    if not given:
        given = (None,) * K
    given = tuple(given)
    if len(given) != K:
        raise InvalidModelError(
            f"rate_multipliers has {len(given)} entries but the network has {K} stations"
        )
    out = []
    for k in range(K):
        r = given[k]
        if net.is_delay[k]:
            if r is not None:
                raise InvalidModelError(
                    f"station {net.names[k]!r} is a delay station; rate_multipliers apply to "
                    "queueing stations"
                )
            out.append(None)
        elif r is not None:
            out.append(as_rate_multipliers(r, f"Station {net.names[k]!r}: rate_multipliers"))
        elif int(net.servers[k]) > 1:
            m = int(net.servers[k]) if n_max is None else min(int(net.servers[k]), int(n_max))
            out.append(np.arange(1.0, m + 1.0))
        else:
            out.append(None)
    return tuple(out)


def ld_peak_capacity(net: Any, rate_multipliers: Sequence | None = None) -> np.ndarray:
    """max_j r_k(j) per station (m for m servers, 1 for single-server and delay stations)."""
    rates = ld_rates(net, rate_multipliers, n_max=0)  # plain multi-server stations: empty
    return np.array(
        [
            1.0 if r is None else float(r.max()) if r.size else float(net.servers[k])
            for k, r in enumerate(rates)
        ]
    )


def ld_least_stretch(net: Any, rate_multipliers: Sequence | None = None) -> np.ndarray:
    """min_j j / r_k(j) per station: the residence time of station k is at least
    D_k times this at any population (1 for single- and multi-server and delay stations;
    the minimum is reached for j <= L since j / r_L grows beyond)."""
    rates = ld_rates(net, rate_multipliers, n_max=0)  # plain multi-server stations: 1
    return np.array(
        [
            1.0 if r is None or not r.size else float((np.arange(1.0, r.size + 1) / r).min())
            for r in rates
        ]
    )


def ld_log_factor(D: float, r: np.ndarray, N: int) -> np.ndarray:
    """log f(j) = j log D - sum_{i<=j} log r(min(i, L)) for j = 0..N ([Buz73])."""
    L = r.size
    idx = np.minimum(np.arange(1, N + 1), L) - 1
    cs = np.concatenate([[0.0], np.cumsum(np.log(r)[idx])])
    return np.arange(N + 1, dtype=np.float64) * np.log(D) - cs


def _complement_applies(r: np.ndarray) -> bool:
    """One non-decreasing curve whose carried marginals stay negligible after p(0)
    underflows: (r_L / r(1))^(L-1) < 1e200 (see :func:`_ld1_general`)."""
    return bool(np.all(np.diff(r) >= 0)) and (r.size - 1) * math.log(r[-1] / r[0]) < 460.0


def _ld1_general(D, delay, Z: float, N: int, s: int, r: np.ndarray, keep: str):
    """Complement recursion for one station s with a non-decreasing rate curve r.

    The recursion of :func:`qnmodel.solvers.mva.mva_load_dependent` (its Notes A), with
    min(j, m) replaced by r(j): p_s(j|n) = (D_s X(n) / r(j)) p_s(j-1|n-1) for j >= 1,
    p_s(0|n) = p_s(0|n-1) X(n) / X_c(n) (X_c: the network without s, by ordinary MVA),
    and, splitting j / r(j) = j / r_L + (j / r(j) - j / r_L) [j < L] in the arrival
    theorem,

        R_s(n) = (D_s / r_L) (1 + Q_s(n-1)) + D_s sum_{j=1..L-1} (j/r(j) - j/r_L) p_s(j-1|n-1).

    For a non-decreasing curve every weight is >= 0: sums and products of positive
    numbers only. O(N (K + L)). Returns X (P,), Q (P, K), R_k (P, K).
    """
    K = D.size
    Dq = np.where(delay, 0.0, D)
    L = r.size
    rL = float(r[-1])
    nw = min(L - 1, N)
    jj = np.arange(1, nw + 1, dtype=np.float64)
    w = jj / r[:nw] - jj / rL  # weights of p(j-1 | n-1), j = 1..L-1
    p = np.zeros(max(nw, 1))
    p[0] = 1.0
    Ds = float(D[s])
    rows = N if keep == "all" else 1
    X = np.empty(rows)
    Q = np.empty((rows, K))
    Rk = np.empty((rows, K))
    q = np.zeros(K)
    qc = np.zeros(K)
    for n in range(1, N + 1):
        rk = D + Dq * q
        rk[s] = (Ds / rL) * (1.0 + q[s]) + Ds * float(np.dot(w, p[:nw]))
        x = n / (Z + rk.sum())
        q = x * rk
        rc = D + Dq * qc
        rc[s] = 0.0
        ratio = 0.0
        if Z + rc.sum() > 0.0:
            xc = n / (Z + rc.sum())
            qc = xc * rc
            ratio = x / xc
        if nw > 1:
            p[1:nw] = (Ds * x / r[: nw - 1]) * p[: nw - 1]
        p[0] *= ratio
        if keep == "all" or n == N:
            i = n - 1 if keep == "all" else 0
            X[i], Q[i], Rk[i] = x, q, rk
    return X, Q, Rk


def ld_general_arrays(D, delay, Z: float, N: int, rates: Sequence, keep: str = "all"):
    """Exact MVA with general load-dependent stations on arrays.

    One load-dependent station with a non-decreasing curve: the complement recursion
    (:func:`_ld1_general`, O(N (K + L))); otherwise the log-space convolution
    (O(N K + L N^2)). Returns X (P,), Q (P, K), R_k (P, K) for n = 1..N
    (``keep="all"``) or n = N.
    """
    D = np.asarray(D, dtype=np.float64)
    delay = np.asarray(delay, dtype=bool)
    K = D.size
    active = D > 0
    ld = [k for k in range(K) if active[k] and rates[k] is not None]
    if len(ld) == 1 and _complement_applies(rates[ld[0]]):
        X, Q, Rk = _ld1_general(np.where(active, D, 0.0), delay, Z, N, ld[0], rates[ld[0]], keep)
        Rk[:, ~active] = 0.0
        Rk[:, delay] = D[delay]
        return X, Q, Rk
    return _ld_convolution_general(D, delay, Z, N, rates, keep, active, ld)


def _ld_convolution_general(D, delay, Z, N, rates, keep, active, ld):
    """The log-space convolution (module docstring), shared with the multi-server solver."""
    return convolution_arrays(D, delay, Z, N, keep, ld, [rates[k] for k in ld])


def mva_ld_general(
    net: Any, N: int, keep: str = "all", rate_multipliers: Sequence | None = None
) -> MVAResult:
    """Exact MVA of a closed single-class network with general load-dependent stations.

    Parameters
    ----------
    net : Network
        Queueing (single- or multi-server), delay and load-dependent stations, think
        time Z. A station's rate multipliers come from ``net.rate_multipliers`` (or
        the ``rate_multipliers`` argument).
    N : int
        Largest population (>= 1); every n = 1..N is computed.
    keep : {"all", "last"}
        Keep every population or only n = N.
    rate_multipliers : sequence (K,) of None or sequence of float, optional
        Overrides the network's rate multipliers (None entries: the station's servers).

    Returns
    -------
    MVAResult
        ``method="mva.ld_general"``; X(n), R(n), Q_k(n), R_k(n), and
        U_k(n) = X(n) D_k / max_j r_k(j) (the fraction of the station's peak rate in use;
        X(n) D_k / m_k for m servers).

    Notes
    -----
    One load-dependent station with a non-decreasing curve: the complement recursion
    of :func:`qnmodel.solvers.mva.mva_load_dependent` (its Notes A) with min(j, m)
    replaced by r(j), O(N (K + L)). Otherwise the log-space convolution of the station
    factors (module docstring; [Buz73], [BGMT] sec. 8.1), O(N K) plus O(L N^2) for L
    load-dependent stations (multi-server stations included), memory O(L N) plus
    chunks of 32 MiB. Both are subtraction-free: full relative precision at
    utilisations arbitrarily close to 1 (tested against 60-digit convolution and
    against each other to 1e-10).
    """
    net = single_class(net, "mva")
    N = as_population(N, "N")
    as_choice(keep, "keep", ("all", "last"))
    D = np.asarray(net.demands, dtype=np.float64)
    Z = float(net.think_time)
    check_has_demand(D.sum(), Z)
    rates = ld_rates(net, rate_multipliers, n_max=N)
    X, Q, Rk = ld_general_arrays(D, net.is_delay, Z, N, rates, keep)
    cap = ld_peak_capacity(net, rate_multipliers)
    U = X[:, None] * (D / cap)[None, :]
    return result("mva.ld_general", net, N, keep, X, Rk.sum(axis=1), Q, U, Rk)


def ld_seidmann_split(D: np.ndarray, delay: np.ndarray, rates: Sequence):
    """Seidmann-like split of load-dependent stations for multi-class models (approximate).

    Station k with curve r becomes a queue of demand D_ck / r_max plus an added delay of
    demand D_ck (1 / r(1) - 1 / r_max) (0 when r(1) = r_max). Returns (D2 (C, K + L),
    delay2 (K + L,), owner (L,)) like :func:`qnmodel.solvers.seidmann_split`.
    """
    D = np.atleast_2d(np.asarray(D, dtype=np.float64))
    ld = [k for k in range(D.shape[1]) if rates[k] is not None and not delay[k]]
    D2 = np.array(D)
    extra = np.zeros((D.shape[0], len(ld)))
    for i, k in enumerate(ld):
        r = rates[k]
        rmax = float(r.max())
        D2[:, k] = D[:, k] / rmax
        extra[:, i] = D[:, k] * max(0.0, 1.0 / float(r[0]) - 1.0 / rmax)
    return (
        np.hstack([D2, extra]),
        np.concatenate([np.asarray(delay, dtype=bool), np.ones(len(ld), dtype=bool)]),
        np.array(ld, dtype=np.int64),
    )
