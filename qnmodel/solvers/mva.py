"""Exact mean value analysis (MVA) of closed single-class networks.

Two algorithms, one function each:

* :func:`mva_exact` -- load-independent queueing stations and delay stations
  with think time: the Reiser-Lavenberg recursion, O(N K).
* :func:`mva_load_dependent` -- adds multi-server stations (m identical
  servers, rate min(j, m)/D with j jobs present). Exact, and numerically
  sound at any utilisation: see its Notes. O(N (K + m)) with one
  multi-server station, O(2^L N (K + L m)) with L <= 6 of them (the
  complement recursion), O(L N^2) beyond (log-space convolution).

:func:`mva` picks the right one for a :class:`~qnmodel.network.Network`.

References
----------
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed
   multichain queuing networks", J. ACM 27(2):313-322, 1980,
   doi:10.1145/322186.322195.
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984,
   ch. 6 (Algorithm 6.1, exact MVA with terminals) and ch. 8 (load-dependent
   centres, sec. 8.3).
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
import sys

import numpy as np

from .._validate import as_choice, as_population
from ..errors import InvalidModelError, InvalidTypeError, NumericalInstabilityWarning
from ..network import Network
from ..results import MVAResult, handover
from . import _kernels

__all__ = ["mva_exact", "mva_load_dependent", "mva", "log_convolve"]

_KEEP = ("all", "last")


def _check(net: Network, N: int, keep: str) -> int:
    if not isinstance(net, Network):
        raise InvalidTypeError(f"net must be a Network, got {type(net).__name__}")
    N = as_population(N, "N")
    as_choice(keep, "keep", _KEEP)
    if net.total_demand + net.think_time <= 0.0:
        raise InvalidModelError(
            "all demands and the think time are zero: throughput is unbounded; "
            "give at least one station a demand > 0"
        )
    return N


def _mva_recursion(D: np.ndarray, delay: np.ndarray, Z: float, N: int, keep: str):
    """Reiser-Lavenberg recursion ([RL80]; [LZGS] Algorithm 6.1).

    R_k(n) = D_k (1 + Q_k(n-1)) at queueing stations, D_k at delay stations;
    X(n) = n / (Z + sum_k R_k(n)); Q_k(n) = X(n) R_k(n).
    Returns X (P,), R_k (P, K) for the kept populations.
    """
    if _kernels.available():  # compiled loop (qnmodel/solvers/_csrc), same arithmetic
        return _kernels.mva_single(D, np.where(delay, 0.0, D), Z, N, keep == "all")
    K = D.size
    rows = N if keep == "all" else 1
    X = np.empty(rows)
    Rk = np.empty((rows, K))
    Dq = np.where(delay, 0.0, D)
    Q = np.zeros(K)
    r = np.empty(K)
    for n in range(1, N + 1):
        np.multiply(Dq, Q, out=r)
        r += D  # D_k (1 + Q_k) at queues; delay stations have Q-term 0 and keep D_k
        x = n / (Z + r.sum())
        np.multiply(r, x, out=Q)
        i = n - 1 if keep == "all" else 0
        X[i] = x
        Rk[i] = r
    return X, Rk


# glibc serves blocks above a dynamic threshold (initially 128 KiB, at most 32 MiB on
# 64-bit) with mmap, and returns freed memory above twice that threshold to the OS.
# Freeing one mmap-served block raises the threshold to its size (mallopt(3),
# "M_MMAP_THRESHOLD"). The whole curve is three N x K arrays; without this, every call
# maps them afresh and pays a page fault per 4 KiB, which costs three times the
# recursion. One block of their total size, allocated and freed once per process (and
# again only when a larger curve comes), makes glibc keep that much memory for reuse.
_ALLOC_WARM = {"bytes": 0}
_GLIBC_MMAP_THRESHOLD_MAX = 32 << 20


def _warm_allocator(nbytes: int) -> None:
    if _ALLOC_WARM["bytes"] < nbytes <= _GLIBC_MMAP_THRESHOLD_MAX and sys.platform == "linux":
        np.empty(nbytes // 8 + 4096)  # allocated and freed at once
        _ALLOC_WARM["bytes"] = nbytes


def _mva_curve(D: np.ndarray, delay: np.ndarray, Du: np.ndarray, Z: float, N: int):
    """The whole curve n = 1..N of the Reiser-Lavenberg recursion, fully packaged.

    Returns n, X, R (N,) and R_k, Q_k, U_k (N, K), each a fresh array written once:
    R_k(n) = D_k (1 + Q_k(n-1)) (D_k at delay stations), R(n) = sum_k R_k(n),
    X(n) = n / (Z + R(n)), Q_k(n) = R_k(n) X(n), U_k(n) = X(n) Du_k with Du = D / m.
    The compiled kernel and the numpy loop do the same arithmetic in the same order
    (only the summation order of R(n) differs, within a few ulps).
    """
    Dq = np.where(delay, 0.0, D)
    _warm_allocator(3 * 8 * N * D.size)
    if _kernels.available():
        return _kernels.mva_curve(D, Dq, Du, Z, N)
    K = D.size
    n_arr = np.arange(1, N + 1, dtype=np.float64)
    X, R = np.empty(N), np.empty(N)
    Rk, Q = np.empty((N, K)), np.empty((N, K))
    q = np.zeros(K)
    for i in range(N):
        r = Rk[i]
        np.multiply(Dq, q, out=r)
        r += D
        s = r.sum()
        x = (i + 1) / (Z + s)
        q = Q[i]
        np.multiply(r, x, out=q)
        X[i] = x
        R[i] = s
    U = X[:, None] * Du[None, :]  # the same products as the kernel's x * Du_k, in one pass
    return n_arr, X, R, Rk, Q, U


def _result(method, net, n, X, R, Q, U, Rk) -> MVAResult:
    handover(n, X, R, Q, U, Rk)  # solver-owned: the result adopts them without copies
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


def _package(method, net, N, keep, X, Rk, Qk=None) -> MVAResult:
    D = net.demands
    m = net.servers.astype(np.float64)
    n = np.arange(1, N + 1, dtype=np.float64) if keep == "all" else np.array([float(N)])
    Q = X[:, None] * Rk if Qk is None else Qk
    U = X[:, None] * (D / m)[None, :]  # one multiply per element (a divide costs ~8x)
    R = Rk.sum(axis=1)
    return _result(method, net, n, X, R, Q, U, Rk)


def mva_exact(net: Network, N: int, keep: str = "all") -> MVAResult:
    """Exact MVA of a closed single-class network of queueing and delay stations.

    Parameters
    ----------
    net : Network
        Single-server queueing stations (``kind="queue"``, ``servers=1``) and
        delay stations; think time Z = ``net.think_time`` (s, >= 0).
    N : int
        Largest population (>= 1). Every n = 1..N is computed.
    keep : {"all", "last"}
        Keep per-station arrays for every n (memory N x K) or only for n = N
        (memory K; use it for N x K beyond ~10^7).

    Returns
    -------
    MVAResult
        X(n), R(n), and per station Q_k(n), U_k(n) = X(n) D_k, R_k(n).
        System metrics derive as R = sum_k R_k and X = n / (R + Z).

    Raises
    ------
    InvalidModelError
        A multi-server station (use :func:`mva_load_dependent`), N < 1, or all
        demands and Z zero.

    Notes
    -----
    The recursion adds and multiplies positive numbers only, so it neither
    cancels nor overflows: Q_k(n) <= n and X(n) <= 1 / D_max. It is exact for
    product-form networks (FCFS exponential, PS, LCFS-PR, IS) [RL80].
    Cost O(N K) time; memory O(N K) (``keep="all"``) or O(K).
    """
    N = _check(net, N, keep)
    if net.has_multiserver:
        raise InvalidModelError(
            "mva_exact handles single-server and delay stations; this network has "
            "multi-server stations: use mva_load_dependent() or mva()"
        )
    if keep == "all":
        Du = net.demands / net.servers.astype(np.float64)
        n, X, R, Rk, Q, U = _mva_curve(net.demands, net.is_delay, Du, net.think_time, N)
        return _result("mva.exact", net, n, X, R, Q, U, Rk)
    X, Rk = _mva_recursion(net.demands, net.is_delay, net.think_time, N, keep)
    return _package("mva.exact", net, N, keep, X, Rk)


# --------------------------------------------------------------------------------------
# Load-dependent (multi-server) exact MVA in log space
# --------------------------------------------------------------------------------------

_CHUNK_CELLS = 1 << 22  # cells per block of the chunked log-convolutions (~32 MiB)


def log_convolve(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """c[n] = log sum_{j=0..n} exp(la[j] + lb[n-j]) for n = 0..len-1, in log space.

    Both inputs have equal length L (entries may be -inf). Cost O(L^2) time,
    memory O(_CHUNK_CELLS). Every term is positive, so no cancellation occurs
    and the log form cannot overflow.
    """
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
        As in :func:`mva_exact`.
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
    multi-server stations (with all load-independent stations and Z) is
    solved once, in increasing order of its bit mask, so that the
    throughputs X_{S-k}(n) of its subsets are ready; each pass carries the
    marginals of the stations in S and gives X_S(n). The derivation above
    holds in each subnetwork word for word (G_{-k} is then the normalising
    constant of S - k). Cost O(2^L N (K + L m)): linear in N, exponential in
    L, so it is used up to L = 6 (64 passes); beyond, B.

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
    N = _check(net, N, keep)
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
        Z = net.think_time
        if ld.size == 1:
            s = int(ld[0])
            X, R, Rk, Q, U = _ld1_recursion(D, net.is_delay, Du, Z, N, s, int(m[s]), keep)
        else:
            X, R, Rk, Q, U = _ld_subsets(D, net.is_delay, Du, Z, N, ld, m, keep)
        n = np.arange(1, N + 1, dtype=np.float64) if keep == "all" else np.array([float(N)])
        return _result("mva.ld", net, n, X, R, Q, U, Rk)
    return _ld_convolution(net, N, keep)


def _ld1_recursion(D, delay, Du, Z: float, N: int, s: int, m: int, keep: str):
    """Notes A of :func:`mva_load_dependent`: X, R (P,), R_k, Q_k, U_k (P, K).

    The compiled kernel ``qnk_mva_ld1`` does the same arithmetic in the same
    order (only the summation order of the sums over stations differs).
    """
    Dq = np.where(delay, 0.0, D)
    K = D.size
    rows = N if keep == "all" else 1
    _warm_allocator(3 * 8 * rows * K)
    if _kernels.available():
        return _kernels.mva_ld1(D, Dq, Du, Z, N, s, m, keep == "all")
    X, R = np.empty(rows), np.empty(rows)
    Rk, Q, U = np.empty((rows, K)), np.empty((rows, K)), np.empty((rows, K))
    L = min(m - 1, N)
    p = np.zeros(L)  # p_s(j | n-1), j = 0..L-1
    p[0] = 1.0
    wts = (m - 1 - np.arange(L)).astype(np.float64)
    jdiv = np.arange(1, L, dtype=np.float64)
    Ds, Dm = float(D[s]), float(D[s]) / m
    q, qc = np.zeros(K), np.zeros(K)
    r, rc = np.empty(K), np.empty(K)
    for n in range(1, N + 1):
        np.multiply(Dq, q, out=r)
        r += D
        r[s] = Dm * ((1.0 + q[s]) + float(np.dot(wts, p)))
        S = float(r.sum())
        x = n / (Z + S)
        np.multiply(r, x, out=q)
        np.multiply(Dq, qc, out=rc)
        rc += D
        rc[s] = 0.0
        Sc = float(rc.sum())
        ratio = 0.0  # X(n) / X_c(n); 0 when the complement is empty
        if Z + Sc > 0.0:
            xc = n / (Z + Sc)
            np.multiply(rc, xc, out=qc)
            ratio = x / xc
        if L > 1:
            p[1:] = ((Ds * x) / jdiv) * p[:-1]
        p[0] = p[0] * ratio
        if keep == "all" or n == N:
            i = n - 1 if keep == "all" else 0
            Rk[i] = r
            Q[i] = q
            np.multiply(Du, x, out=U[i])
            X[i] = x
            R[i] = S
    return X, R, Rk, Q, U


def _ld_subsets(D, delay, Du, Z: float, N: int, ld: np.ndarray, m: np.ndarray, keep: str):
    """Notes A for L >= 2 multi-server stations: one pass per subset of them.

    Subset S (a bit mask over ``ld``) is the network of the load-independent
    stations plus the multi-server stations in S. Its pass needs, for each k
    in S, the cycle time T_{S-k}(n) = n / X_{S-k}(n) of the subset without k,
    computed earlier (a subset's sub-subsets are smaller integers), and gives
    T_S(n). The pass of the full set gives the result. Returns X, R (P,),
    R_k, Q_k, U_k (P, K).
    """
    L = ld.size
    full = (1 << L) - 1
    T = {}
    Dq_all = np.where(delay, 0.0, D)
    K = D.size
    rows = N if keep == "all" else 1
    _warm_allocator(3 * 8 * rows * K)
    out = None
    for mask in range(full + 1):
        inside = [i for i in range(L) if mask >> i & 1]
        gone = ld[[i for i in range(L) if not mask >> i & 1]]
        Dm, Dqm = D.copy(), Dq_all.copy()
        Dm[gone] = 0.0
        Dqm[gone] = 0.0
        idx = ld[inside].astype(np.int64)
        ms = m[idx].astype(np.int64)
        Tc = np.array([T[mask & ~(1 << i)] for i in inside]).reshape(len(inside), N)
        mode = ("all" if keep == "all" else "last") if mask == full else "none"
        T[mask], res = _ld_subset_pass(Dm, Dqm, Du, Z, N, idx, ms, Tc, mode)
        if mask == full:
            out = res
    return out


def _ld_subset_pass(D, Dq, Du, Z: float, N: int, idx, ms, Tc, mode: str):
    """One subset's recursion (numpy twin of ``qnk_mva_ldn``): T (N,), and X, R, R_k, Q_k,
    U_k for ``mode`` "all" or "last" (None for "none")."""
    if _kernels.available():
        return _kernels.mva_ldn(D, Dq, Du, Z, N, idx, ms, Tc, mode)
    K = D.size
    rows = N if mode == "all" else 1
    T = np.empty(N)
    X, R = np.empty(rows), np.empty(rows)
    Rk, Q, U = np.empty((rows, K)), np.empty((rows, K)), np.empty((rows, K))
    nin = idx.size
    Lk = [int(min(mk - 1, N)) for mk in ms]
    p = [np.zeros(n) for n in Lk]
    for v in p:
        v[0] = 1.0
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
            ratio = (x * Tc[i, n - 1]) / n  # X_S(n) / X_{S-k}(n); 0 for an empty complement
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
    return T, (None if mode == "none" else (X, R, Rk, Q, U))


def _ld_convolution(net: Network, N: int, keep: str) -> MVAResult:
    """Notes B of :func:`mva_load_dependent` (log-space convolution, any L)."""
    D = net.demands
    K = D.size
    m = net.servers
    delay = net.is_delay
    active = D > 0
    ld = np.flatnonzero(active & ~delay & (m > 1))
    li = np.flatnonzero(active & ~(~delay & (m > 1)))
    Z = net.think_time

    # 1. Load-independent part: MVA throughputs -> log G_LI(n), n = 0..N.
    lG_li = np.full(N + 1, -np.inf)
    lG_li[0] = 0.0
    if li.size or Z > 0:
        X_li, _ = _mva_recursion(D[li], delay[li], Z, N, "all")
        lG_li[1:] = -np.cumsum(np.log(X_li))

    # 2. Multi-server factors, prefix/suffix convolutions and complements.
    lf = [_log_f(float(D[k]), int(m[k]), False, N) for k in ld]
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
        X_all = np.exp(lG[:-1] - lG[1:])  # X(n) = G(n-1)/G(n), n = 1..N
    if not np.all(np.isfinite(X_all)):  # pragma: no cover - guarded by _check
        raise InvalidModelError("throughput is unbounded: every demand and Z are zero")

    rows = N if keep == "all" else 1
    sel = slice(None) if keep == "all" else slice(N - 1, N)
    Q = np.zeros((rows, K))

    # 3a. Single-server queues: Q_k(n) = D_k X(n) (1 + Q_k(n-1)); delay: X D_k.
    qs = np.flatnonzero(active & ~delay & (m == 1))
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

    # 3b. Multi-server stations: Q_k(n) = sum_j j f_k(j) G_{-k}(n-j) / G(n).
    for i, k in enumerate(ld):
        comp = log_convolve(prefix[i], suffix[i + 1])
        n_idx = np.arange(1, N + 1) if keep == "all" else np.array([N])
        Q[:, k] = _ld_queue_length(lf[i], comp, lG, n_idx)

    X = X_all[sel]
    with np.errstate(invalid="ignore", divide="ignore"):
        Rk = np.where(X[:, None] > 0, Q / X[:, None], 0.0)
    # Residence time of delay stations and idle (D=0) stations is exact: D_k.
    Rk[:, delay] = D[delay]
    n_vec = np.arange(1, N + 1) if keep == "all" else np.array([N])
    err = np.abs(Q.sum(axis=1) + X * Z - n_vec) / n_vec
    if err.max() > 1e-8:  # pragma: no cover - a consistency guard, not expected
        import warnings

        warnings.warn(
            f"load-dependent MVA: job count off by {err.max():.2e} (relative)",
            NumericalInstabilityWarning,
            stacklevel=2,
        )
    return _package("mva.ld", net, N, keep, X, Rk, Q)


def _ld_queue_length(lf: np.ndarray, comp: np.ndarray, lG: np.ndarray, n_idx: np.ndarray):
    """sum_j j exp(lf[j] + comp[n-j] - lG[n]) for each n in n_idx (chunked)."""
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


def mva(net: Network, N: int, keep: str = "all") -> MVAResult:
    """Exact MVA for n = 1..N: :func:`mva_exact`, or :func:`mva_load_dependent`
    when the network has multi-server stations."""
    if np.any(getattr(net, "is_load_dependent", False)):  # general rate curves (issue 12)
        from .mva_ld_general import mva_ld_general

        return mva_ld_general(net, N, keep)
    if isinstance(net, Network) and net.has_multiserver:
        return mva_load_dependent(net, N, keep)
    return mva_exact(net, N, keep)
