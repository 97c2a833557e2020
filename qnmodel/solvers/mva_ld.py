"""Exact MVA of closed single-class networks with multi-server (load-dependent) stations.

:func:`mva_load_dependent` has two exact, subtraction-free algorithms (Notes A and B
of its docstring): the complement recursion, the kernel
:func:`qnmodel.solvers._mva_core.complement` (one step per population for each subset
of the multi-server stations), and the log-space convolution. Its names are also
importable from :mod:`qnmodel.solvers.mva`.

References
----------
.. [RL80] Reiser and Lavenberg, J. ACM 27(2):313-322, 1980 (the arrival theorem, exact
   MVA), doi:10.1145/322186.322195.
.. [LZGS] Lazowska et al., *Quantitative System Performance*, 1984, sec. 8.3
   (load-dependent centres).
.. [Buz73] J. P. Buzen, "Computational algorithms for closed queueing
   networks with exponential servers", CACM 16(9):527-531, 1973,
   doi:10.1145/362342.362345 (normalising constant, marginal probabilities).
.. [BGMT] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing
   Networks and Markov Chains*, 2nd ed., Wiley 2006, sec. 8.2 (MVA for
   multi-server nodes and its numerical instability).
.. [Cas08] G. Casale, "A note on stable flow-equivalent aggregation in closed
   networks", Queueing Systems 60:193-202, 2008, doi:10.1007/s11134-008-9093-6
   (conditional MVA, a stable load-dependent recursion).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._validate import as_choice
from ..errors import InvalidModelError, NumericalInstabilityWarning
from ..model import Network
from ..results.closed import MVAResult
from . import _kernels
from ._mva_core import check, complement, exact, result

__all__ = [
    "mva_load_dependent",
    "log_convolve",
    "COMPLEMENT_MAX_SERVERS",
    "COMPLEMENT_MAX_STATIONS",
]

_CHUNK_CELLS = 1 << 22  # cells per block of the chunked log-convolutions (~32 MiB)


def log_convolve(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """c[n] = log sum_{j=0..n} exp(la[j] + lb[n-j]) for n = 0..len-1, in log space.

    Both inputs have equal length L (entries may be -inf). Cost O(L^2) time,
    memory O(_CHUNK_CELLS). Every term is positive, so no cancellation occurs
    and the log form cannot overflow. With the compiled kernels loaded this runs
    in C (``qnk_log_convolve``: exp only for terms within 60 of the largest of their
    sum, < 1e-17 relative; for log-concave inputs -- the factors of non-decreasing rate
    curves, log G of load-independent stations, and their convolutions -- the terms are
    unimodal and the peak moves right with n, so each sum is taken outward from the
    tracked peak, O(window) instead of O(L); tested against this numpy path).
    """
    if _kernels.available():
        return _kernels.log_convolve(la, lb)
    L = la.size
    out = np.empty(L)
    rows = max(1, _CHUNK_CELLS // L)
    j = np.arange(L)
    for n0 in range(0, L, rows):
        n = np.arange(n0, min(L, n0 + rows))
        idx = n[:, None] - j[None, :]
        valid = idx >= 0
        terms = np.where(valid, la[None, :] + lb[np.where(valid, idx, 0)], -np.inf)
        out[n0 : n0 + n.size] = _logsumexp_rows(terms)
    return out


def _logsumexp_rows(t: np.ndarray) -> np.ndarray:
    mx = t.max(axis=1)
    safe = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore"):
        s = np.log(np.exp(t - safe[:, None]).sum(axis=1)) + safe
    return np.where(np.isfinite(mx), s, -np.inf)


def _log_f(D: float, servers: int, delay: bool, N: int) -> np.ndarray:
    """log of the station factor f(j) = D^j / prod_{i=1..j} a(i), j = 0..N.

    a(i) = min(i, m) for m servers, a(i) = i for a delay station ([Buz73]).
    """
    j = np.arange(N + 1, dtype=np.float64)
    if delay:
        cap = j
    else:
        cap = np.minimum(j, float(servers))
    log_a = np.log(np.maximum(cap, 1.0))
    log_a[0] = 0.0
    return j * math.log(D) - np.cumsum(log_a)


_ALGORITHMS = ("auto", "complement", "convolution")
COMPLEMENT_MAX_SERVERS = 512
"""Largest server count the complement recursion takes (see :func:`mva_load_dependent`)."""
COMPLEMENT_MAX_STATIONS = 6
"""Most multi-server stations the complement recursion takes (it runs 2^L passes)."""


def mva_load_dependent(
    net: Network, N: int, keep: str = "all", algorithm: str = "auto"
) -> MVAResult:
    """Exact MVA of a closed network with multi-server (load-dependent) stations.

    Parameters
    ----------
    net : Network
        Queueing stations with any number of servers m_k >= 1, delay stations,
        think time Z (s). A station of m servers and demand D_k serves at rate
        min(j, m)/D_k with j jobs present.
    N : int
        Largest population (>= 1); every n = 1..N is computed.
    keep : {"all", "last"}
        As in :func:`~qnmodel.solvers.mva.mva_exact`.
    algorithm : {"auto", "complement", "convolution"}
        ``"complement"``: the recursion of Notes A, O(N (K + m)) with one
        multi-server station and O(2^L N (K + L m)) with L of them, for
        1 <= L <= :data:`COMPLEMENT_MAX_STATIONS` stations of at most
        :data:`COMPLEMENT_MAX_SERVERS` servers each. ``"convolution"``: the
        log-space convolution of Notes B, any network, O(L N^2). ``"auto"``
        (default) takes the complement recursion whenever it applies. Both
        are exact and subtraction-free and return the same fields (tested to
        1e-10 relative against each other).

    Returns
    -------
    MVAResult
        X(n), R(n), Q_k(n), R_k(n) and the per-server utilisation
        U_k(n) = X(n) D_k / m_k; ``method`` is ``"mva.ld"`` for both algorithms.

    Raises
    ------
    InvalidModelError
        ``algorithm="complement"`` on a network it does not apply to; N < 1; all
        demands and Z zero.

    Notes
    -----
    The textbook load-dependent MVA ([LZGS] sec. 8.3, [BGMT] sec. 8.2)
    computes the idle probability as p_k(0|n) = 1 - sum_{j>=1} p_k(j|n). Near
    saturation that difference cancels catastrophically and the recursion
    produces negative probabilities (documented as unsolved in Octave's
    ``qncsmvald``). Neither algorithm here obtains anything by subtraction.

    **A. The complement recursion (one multi-server station first).** Let station k
    have m servers and f_k(j) = D_k^j / prod_{i<=j} min(i, m); let G(n) be the
    normalising constant of the network and G_{-k}(n) that of its complement
    (the network without k: single-server queues, delays and Z only). Product
    form gives the marginal p_k(j|n) = f_k(j) G_{-k}(n-j) / G(n) ([Buz73];
    [BGMT] sec. 8.1), and X(n) = G(n-1)/G(n), X_{-k}(n) = G_{-k}(n-1)/G_{-k}(n).
    Hence, for n >= 1,

    * j = 0: p_k(0|n) = G_{-k}(n)/G(n)
      = (G_{-k}(n-1)/X_{-k}(n)) (X(n)/G(n-1)) = p_k(0|n-1) X(n) / X_{-k}(n);
    * j >= 1: f_k(j) = f_k(j-1) D_k / min(j, m), so
      p_k(j|n) = (D_k X(n) / min(j, m)) p_k(j-1|n-1);

    the second is the textbook marginal recursion ([LZGS] sec. 8.3), the first
    the complement-ratio form that makes p_k(0|n) a product of positive
    ratios (compare the conditional MVA of [Cas08]). The arrival theorem
    ([RL80]; [BGMT] sec. 8.2) gives
    R_k(n) = D_k sum_{j=1..n} (j / min(j, m)) p_k(j-1|n-1); splitting
    j / min(j, m) = j/m + (1 - j/m) [j < m] and using
    sum_j j p_k(j-1|n-1) = 1 + Q_k(n-1):

        R_k(n) = (D_k/m) (1 + Q_k(n-1) + sum_{j=0..m-2} (m-1-j) p_k(j|n-1)).

    So only p_k(j|n) for j <= m-2 are carried. X_{-k}(n) comes from the
    ordinary MVA recursion of the complement run alongside, and the rest is
    [RL80]: R_i(n) = D_i (1 + Q_i(n-1)), X(n) = n / (Z + sum_i R_i(n)),
    Q_i(n) = X(n) R_i(n). Every step is a sum, product or quotient of positive
    numbers: there is no cancellation, and X(n) <= X_{-k}(n) keeps p_k(0|n)
    non-increasing. The idle probability is a product of n ratios, so its
    relative rounding error grows at most linearly in n (a few ulps per step).
    It may underflow near saturation (1e-600 is typical); that is harmless
    because p_k(j|n) <= (m^j / j!) p_k(0|n-j), so for m <= 512 (m^m/m! < 1e223)
    a p_k(0) below the double range implies every carried p_k(j) < 1e-80,
    negligible against 1 + Q_k. Cost O(N (K + min(m, N))) time, O(K + m)
    memory besides the result.

    With L >= 2 multi-server stations the complement of k still holds the
    other L - 1 and is itself solved the same way. Every subset S of the
    multi-server stations (with all load-independent stations and Z) takes
    one step per n, in increasing order of its bit mask, so that the
    throughputs X_{S-k}(n) of its subsets are ready; each subset carries the
    marginals of the stations in S and gives X_S(n). The derivation above
    holds in each subnetwork word for word (G_{-k} is then the normalising
    constant of S - k). One multi-server station is the case L = 1 (the
    complement is the empty subset), computed by the same kernel. Cost
    O(2^L N (K + L m)): linear in N, exponential in L, so it is used up to
    L = 6 (64 subsets); beyond, B.

    **B. Log-space convolution (any network).**

    1. The load-independent part (single-server queues, delay stations and
       the think time) is solved by the ordinary MVA recursion, whose
       throughputs give its normalising constant exactly,
       log G_LI(n) = -sum_{i<=n} log X_LI(i).
    2. Each multi-server station's factor f_k(j) is convolved in **log
       space** ([Buz73]): log G(n) = log sum_j f_k(j) G_{-k}(n - j), a sum of
       positive terms.
    3. X(n) = G(n-1)/G(n); single-server stations follow the MVA form
       Q_k(n) = D_k X(n) (1 + Q_k(n-1)); a multi-server station's queue length
       is sum_j j p_k(j|n) with p_k(j|n) = f_k(j) G_{-k}(n-j) / G(n), where
       the complement G_{-k} comes from prefix/suffix convolutions.

    All terms are positive, so the result keeps full relative precision at
    utilisations arbitrarily close to 1 and for any m. Cost: O(N K) for the
    load-independent part plus O(L N^2) for L multi-server stations.
    """
    net, N = check(net, N, keep)
    as_choice(algorithm, "algorithm", _ALGORITHMS)
    D = net.demands
    m = net.servers
    ld = np.flatnonzero((D > 0) & ~net.is_delay & (m > 1))
    fits = 1 <= ld.size <= COMPLEMENT_MAX_STATIONS and all(
        int(m[k]) <= COMPLEMENT_MAX_SERVERS for k in ld
    )
    if algorithm == "complement" and not fits:
        raise InvalidModelError(
            f"algorithm='complement' needs 1 to {COMPLEMENT_MAX_STATIONS} multi-server "
            f"stations of at most {COMPLEMENT_MAX_SERVERS} servers each; this network has "
            f"{ld.size} (servers {[int(m[k]) for k in ld]}): use algorithm='convolution' or 'auto'"
        )
    if fits and algorithm != "convolution":
        Du = D / m.astype(np.float64)
        Dq = np.where(net.is_delay, 0.0, D)
        X, R, Rk, Q, U = complement(D, Dq, Du, net.think_time, N, ld, m[ld], keep)
        return result("mva.ld", net, N, keep, X, R, Q, U, Rk)
    return _ld_convolution(net, N, keep)


def _ld_convolution(net: Network, N: int, keep: str) -> MVAResult:
    """Notes B of :func:`mva_load_dependent` (log-space convolution, any L)."""
    D = net.demands
    m = net.servers
    delay = net.is_delay
    ld = np.flatnonzero((D > 0) & ~delay & (m > 1))
    # m servers serve at rate min(n, m): with at most N jobs the curve 1..min(m, N) is exact
    # (its last value holds beyond), and 10^9 servers need no 7 GiB array.
    rates = [np.arange(1.0, min(int(m[k]), N) + 1.0) for k in ld]
    Z = net.think_time
    X, Q, Rk = convolution_arrays(D, delay, Z, N, keep, ld, rates)
    n_vec = np.arange(1, N + 1) if keep == "all" else np.array([N])
    err = np.abs(Q.sum(axis=1) + X * Z - n_vec) / n_vec
    if err.max() > 1e-8:  # pragma: no cover - a consistency guard, not expected
        warnings.warn(
            f"load-dependent MVA: job count off by {err.max():.2e} (relative)",
            NumericalInstabilityWarning,
            stacklevel=2,
        )
    U = X[:, None] * (D / m.astype(np.float64))[None, :]  # one multiply per element
    return result("mva.ld", net, N, keep, X, Rk.sum(axis=1), Q, U, Rk)


def _tilted_log_factor(D: float, r: np.ndarray, N: int, alpha: float) -> np.ndarray:
    """log f(j) - alpha j, j = 0..N, for f(j) = D^j / prod_{i<=j} r(min(i, L)) ([Buz73]).

    Summed from the per-job increments log D - log r(i) - alpha (a short cumulative sum
    up to L, then one multiplication per j), never as j log D minus a long sum: the
    value near the largest terms keeps full relative precision at any N.
    """
    L = min(r.size, N)
    inc = math.log(D) - np.log(r[:L]) - alpha
    out = np.empty(N + 1)
    out[0] = 0.0
    out[1 : L + 1] = np.cumsum(inc)
    if N > L:
        c = math.log(D) - math.log(float(r[-1])) - alpha
        out[L + 1 :] = out[L] + c * np.arange(1, N - L + 1, dtype=np.float64)
    return out


def convolution_arrays(D, delay, Z: float, N: int, keep: str, ld, rates):
    """Exact MVA of load-dependent stations by log-space convolution, on arrays.

    The one convolution of the load-dependent solvers (multi-server stations here,
    general rate curves in :mod:`qnmodel.solvers.mva_ld_general`): ``ld`` are the indices
    of the load-dependent stations and ``rates`` their rate curves r_k(1..L_k) (the last
    value holding beyond L_k; 1, 2, ..., m for m servers); every other station with a
    demand is a single-server queue or a delay station, whose normalising constant comes
    from the exact single-class kernel (X(n) -> log G_LI(n)). Returns X (P,), Q (P, K)
    and R_k (P, K) for n = 1..N (``keep="all"``) or n = N.
    """
    D = np.asarray(D, dtype=np.float64)
    delay = np.asarray(delay, dtype=bool)
    K = D.size
    active = D > 0
    is_ld = np.zeros(K, dtype=bool)
    is_ld[np.asarray(ld, dtype=np.int64)] = True
    li = np.flatnonzero(active & ~is_ld)

    # 1. Load-independent part: MVA throughputs -> log G_LI(n), n = 0..N.
    lG_li = np.full(N + 1, -np.inf)
    lG_li[0] = 0.0
    # Exponential tilting: every factor times exp(-alpha j) multiplies G(n) by exp(-alpha n)
    # and leaves every ratio f_k(j) G_{-k}(n-j) / G(n) unchanged. With alpha the steepest
    # asymptotic growth rate of a factor, log G stays small instead of O(N |log D|), so
    # the differences log G(n-1) - log G(n) keep their relative precision at large N.
    pairs = list(zip(ld, rates, strict=True))
    slopes = [math.log(float(D[k])) - math.log(float(r[-1])) for k, r in pairs]
    X_li = None
    if li.size or Z > 0:
        X_li = exact(D[li], np.where(delay[li], 0.0, D[li]), Z, N, per_station=False)[0]
        slopes.append(-math.log(float(X_li[-1])))
    alpha = max(slopes) if slopes else 0.0
    if X_li is not None:  # log G_LI(n) - alpha n, summed from small increments
        lG_li[1:] = -np.cumsum(np.log(X_li) + alpha)
    lf = [_tilted_log_factor(float(D[k]), r, N, alpha) for k, r in pairs]

    # 2. Prefix/suffix convolutions of the load-dependent factors and complements.
    prefix = [lG_li]
    for f in lf:
        prefix.append(log_convolve(prefix[-1], f))
    lG = prefix[-1]
    delta = np.full(N + 1, -np.inf)
    delta[0] = 0.0
    suffix = [delta]
    for f in reversed(lf):
        suffix.append(log_convolve(suffix[-1], f))
    suffix = suffix[::-1]  # suffix[i] = conv of lf[i:], suffix[L] = delta

    with np.errstate(over="ignore"):
        X_all = np.exp(lG[:-1] - lG[1:] - alpha)  # X(n) = G(n-1)/G(n), n = 1..N
    if not np.all(np.isfinite(X_all)):  # pragma: no cover - guarded by the checks
        raise InvalidModelError("throughput is unbounded: every demand and Z are zero")

    rows = N if keep == "all" else 1
    sel = slice(None) if keep == "all" else slice(N - 1, N)
    n_idx = np.arange(1, N + 1) if keep == "all" else np.array([N])
    Q = np.zeros((rows, K))

    # 3a. Single-server queues: Q_k(n) = D_k X(n) (1 + Q_k(n-1)); delay: X D_k.
    qs = np.flatnonzero(active & ~delay & ~is_ld)
    if qs.size:
        Dq = D[qs]
        q = np.zeros(qs.size)
        for n in range(1, N + 1):
            q = Dq * X_all[n - 1] * (1.0 + q)
            if keep == "all":
                Q[n - 1, qs] = q
        if keep == "last":
            Q[0, qs] = q
    ds = np.flatnonzero(active & delay)
    if ds.size:
        Q[:, ds] = X_all[sel, None] * D[None, ds]

    # 3b. Load-dependent stations: Q_k(n) = sum_j j f_k(j) G_{-k}(n-j) / G(n).
    for i, k in enumerate(ld):
        comp = log_convolve(prefix[i], suffix[i + 1])
        Q[:, k] = _ld_queue_length(lf[i], comp, lG, n_idx)

    X = X_all[sel]
    with np.errstate(invalid="ignore", divide="ignore"):
        Rk = np.where(X[:, None] > 0, Q / X[:, None], 0.0)
    # Residence time of delay stations and idle (D=0) stations is exact: D_k.
    Rk[:, delay] = D[delay]
    return X, Q, Rk


def _ld_queue_length(lf: np.ndarray, comp: np.ndarray, lG: np.ndarray, n_idx: np.ndarray):
    """sum_j j exp(lf[j] + comp[n-j] - lG[n]) for each n in n_idx (chunked; in C with
    the compiled kernels, ``qnk_log_moment``)."""
    if _kernels.available():
        return _kernels.log_moment(lf, comp, lG, n_idx)
    L = lf.size
    out = np.empty(n_idx.size)
    rows = max(1, _CHUNK_CELLS // L)
    j = np.arange(L)
    for s in range(0, n_idx.size, rows):
        n = n_idx[s : s + rows]
        idx = n[:, None] - j[None, :]
        valid = idx >= 0
        t = np.where(valid, lf[None, :] + comp[np.where(valid, idx, 0)] - lG[n][:, None], -np.inf)
        out[s : s + n.size] = (np.exp(t) * j[None, :]).sum(axis=1)
    return out
