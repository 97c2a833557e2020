"""MVA with the residual-life correction: closed networks whose FCFS stations do not serve
exponentially.

At an FCFS station the arrival theorem of exact MVA charges an arriving job one full service
time S_k for each job it finds there, also for the job in service: exact when service is
exponential (memoryless), not otherwise. The correction ([Rei79]; [Bar79]) charges the job
found in service its mean *residual* life S_k (1 + c_k^2) / 2 instead, where c_k^2 is the
squared coefficient of variation (SCV) of the station's service time. Per visit, an arrival
that sees Q_k jobs of which U_k in service (on average) waits

    S_k Q_k - S_k U_k + S_k U_k (1 + c_k^2) / 2  =  S_k (Q_k + U_k (c_k^2 - 1) / 2),

so the residence time of the single-class recursion ([LZGS] Algorithm 6.1) becomes

    R_k(n) = D_k (1 + Q_k(n-1)) + D_k U_k(n-1) (c_k^2 - 1) / 2,    U_k(n-1) = X(n-1) D_k,

at single-server FCFS stations (c_k^2 = 1 gives the exact recursion back; PS, LCFS-PR and
delay stations are insensitive to the law and keep their exact form), then projected onto
the asymptotic bounds U_k <= 1 where it passes them (:func:`clamp_to_capacity`). The answer is an
approximation at every n > 1: the queue an arrival sees in a non-product-form network is not
that of the network with one job fewer, and its residual life is taken as the time-average
one. Its error against :func:`qnmodel.simulate` is in :func:`mva_residual_life`.

The multi-class form lives in :func:`qnmodel.solvers.amva.amva` (Schweitzer and Linearizer
cores, the same correction per class of the job in service).

References
----------
.. [Rei79] M. Reiser, "A queueing network analysis of computer communication networks with
   window flow control", IEEE Trans. Commun. 27(8):1199-1209, 1979 (an arrival at an FCFS
   station waits the residual life of the job in service).
.. [Bar79] Y. Bard, "Some extensions to multiclass queueing network analysis", in
   *Performance of Computer Systems*, North-Holland, 1979 (the approximate MVA of FCFS
   stations with general service times).
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, Algorithm 6.1.
.. [Kle75] L. Kleinrock, *Queueing Systems*, vol. 1, Wiley 1975, eq. 5.86 (the mean
   residual life E[S^2] / (2 E[S]) = S (1 + c^2) / 2 of a service found in progress).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidModelError
from ..model import Network
from ..results.closed import MVAResult
from ._mva_core import check, result

__all__ = ["mva_residual_life", "residual_factors", "clamp_to_capacity", "LABEL"]

#: the method label of the single-class recursion
LABEL = "mva.exact+residual-life (approximate)"


def residual_factors(net: Network, solver: str) -> np.ndarray:
    """(c_ck^2 - 1) / 2 per class and station (C, K): the extra fraction of a service time
    that a job found in service costs an arrival, at single-server FCFS stations whose
    service is not exponential; 0 elsewhere.

    Raises InvalidModelError for a non-exponential FCFS station with several servers or a
    rate curve (the correction is for one server), naming ``solver`` and what supports it.
    """
    cm = net.compiled
    E = np.zeros((cm.C, cm.K))
    for name in cm.features.get("non_exponential", ()):
        k = cm.station_names.index(name)
        if cm.servers[k] > 1 or cm.rates[k] is not None:
            what = f"{int(cm.servers[k])} servers" if cm.servers[k] > 1 else "a rate curve"
            raise InvalidModelError(
                f"{solver}: station {name!r} has {what} and non-exponential service "
                f"(scv = {cm.scv[:, k][cm.D[:, k] > 0].tolist()}); the residual-life "
                "correction is for one server: use qnmodel.simulate, or scv=1.0 (exact "
                "multi-server MVA), or model the station as single-server"
            )
        E[:, k] = (cm.scv[:, k] - 1.0) / 2.0
    return E


def clamp_to_capacity(M, Z, Dq, R):
    """Raise the residence times R (C, K) in place so that no queueing station is used beyond
    one server: U_k = sum_c X_c Dq_ck <= 1 with X_c = M_c / (Z_c + sum_k R_ck).

    The correction can push X(n) past the asymptotic bound 1 / D_max (one FCFS station with
    constant service and Z = 0 gives X(n) = n / (D (n - 1/2)) > 1 / D: the job found in
    service there has just started, not a residual life). The asymptotic bounds hold for
    any service law ([LZGS] sec. 5.2), so the answer is projected onto them: while the
    busiest station k has U_k = s > 1, the throughput of each class visiting it is divided
    by s and the time this adds to its cycle (Little's law, N_c = X_c (Z_c + R_c)) is
    waiting at k. Other stations' utilisations only fall; at most K passes.
    """
    C, K = R.shape
    live = M > 0
    for _ in range(K):
        X = np.where(live, M / np.where(live, Z + R.sum(axis=1), 1.0), 0.0)
        U = X @ Dq
        k = int(np.argmax(U))
        if not U[k] > 1.0:
            return
        vis = live & (Dq[:, k] > 0)
        Xn = X[vis] / U[k]
        R[vis, k] += M[vis] / Xn - Z[vis] - R[vis].sum(axis=1)


def _recursion(D, Dq, E, Z, N, keep_all):
    """X, R (P,) and R_k, Q_k, U_k (P, K) of the corrected recursion at n = 1..N (or N)."""
    K = D.size
    P = N if keep_all else 1
    X, R = np.empty(P), np.empty(P)
    Rk, Q, U = np.empty((P, K)), np.empty((P, K)), np.empty((P, K))
    q = np.zeros(K)
    x = 0.0
    Zv = np.array([Z])
    for n in range(1, N + 1):
        r = D + Dq * q + Dq * (x * D) * E  # U_k(n-1) = X(n-1) D_k, one server
        clamp_to_capacity(np.array([float(n)]), Zv, Dq[None, :], r[None, :])
        s = float(r.sum())
        x = n / (Z + s)
        q = x * r
        if keep_all or n == N:
            i = n - 1 if keep_all else 0
            X[i], R[i], Rk[i], Q[i], U[i] = x, s, r, q, x * D
    return X, R, Rk, Q, U


def mva_residual_life(net: Network, N: int, keep: str = "all") -> MVAResult:
    """MVA of a closed single-class network with non-exponential FCFS stations
    (residual-life correction; approximate).

    :func:`qnmodel.mva` calls it for such a network; it is the exact recursion with one term
    more (module docstring): R_k(n) = D_k (1 + Q_k(n-1)) + D_k U_k(n-1) (c_k^2 - 1) / 2.

    Parameters
    ----------
    net : Network
        Single-server stations (FCFS with any ``scv`` or law, PS, LCFS-PR) and delay
        stations; think time Z = ``net.think_time`` (s, >= 0). The SCV c_k^2 (>= 0) is the
        station's ``scv`` (or its law's).
    N : int
        Largest population (>= 1); every n = 1..N is computed.
    keep : {"all", "last"}
        Keep every n or only n = N.

    Returns
    -------
    MVAResult
        ``method`` ``"mva.exact+residual-life (approximate)"``; X(n) (jobs/s), R(n) (s),
        per station Q_k(n), U_k(n) = X(n) D_k and R_k(n) (s).

    Raises
    ------
    InvalidModelError
        A multi-server or load-dependent station (the correction is for one server; with
        exponential multi-server stations and single-server non-exponential ones, use
        :func:`qnmodel.amva`, which takes both), a feature it does not take
        (:mod:`qnmodel.solvers.support`), N < 1.

    Notes
    -----
    Exact at n = 1 (R = sum_k D_k) and for c_k^2 = 1 (the Reiser-Lavenberg recursion, to the
    last bit in the same order of operations up to the added zero term); X(n) -> 1 / D_max
    as n grows, as every closed network's. Positive sums only (with c^2 >= 0 the corrected
    term D_k (Q_k - U_k / 2) stays >= D_k Q_k / 2 since Q_k >= U_k). Cost O(N K).

    Error against :func:`qnmodel.simulate` (``tests/accuracy/amva_scv.py``, table in
    ``docs/explanation/open-and-mixed.md``: 40 seeded single-class networks of 2-5 FCFS
    stations, SCV in {0, 0.25, 1, 4, 10}, N in 1..30, 10 replications): X median 4.3 %,
    worst 18.9 %; R median 5.7 %, worst 23.8 % (ignoring the SCV: X 3.4 % / 16.0 %, R
    4.9 % / 20.7 %). Below 0.9 utilisation of the busiest station it is the better answer
    (X median 6.2 % against 7.5 %, R 9.1 % against 11.6 %); near saturation it converges to
    X = 1 / D_max only as (c^2 - 1) / (2 n) (the single-station case: R(n) -> D (n +
    (c^2 - 1) / 2), true n D), so there it is slightly worse (X median 1.8 % against 1.5 %).
    The worst cases have a c^2 = 10 bottleneck and few jobs.

    References
    ----------
    [Rei79], [Bar79], [LZGS] Algorithm 6.1, [Kle75] eq. 5.86 (module docstring).
    """
    cm = net.compiled if isinstance(net, Network) else None
    for f in ("multiserver", "load_dependent"):
        if cm is not None and f in cm.features and "non_exponential" in cm.features:
            residual_factors(net, "mva")  # names a non-exponential multi-server station
            raise InvalidModelError(
                f"mva with non-exponential FCFS stations (residual-life correction, "
                f"{list(cm.features['non_exponential'])}) takes single-server and delay "
                f"stations; {list(cm.features[f])} "
                f"{'have several servers' if f == 'multiserver' else 'have rate curves'}: "
                "use qnmodel.amva (Seidmann's decomposition, approximate) or qnmodel.simulate"
            )
    net, N = check(net, N, keep, "mva_residual")
    E = residual_factors(net, "mva")[0]
    D = np.array(net.demands, dtype=np.float64)
    Dq = np.where(net.is_delay, 0.0, D)
    X, R, Rk, Q, U = _recursion(D, Dq, E, float(net.think_time), N, keep == "all")
    return result(LABEL, net, N, keep, X, R, Q, U, Rk)
