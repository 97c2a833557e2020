"""Networked RAID fork-join whose chunks cross the master's link inside the fork (overlap).

``NetworkedRAID.fork_join(N, structure="forkjoin_overlap")`` solves the networked RAID of
[Cui06] with the master's data link moved *into* the fork: every branch is one storage
server's service followed (reads) or preceded (writes) by the transfer of its own chunk over
the master's link, one FCFS server shared by all branches of all jobs. The
``structure="forkjoin"`` network (:meth:`NetworkedRAID.network`) puts the whole link
transfer after the join, so a lone full-stripe read pays the slowest member *and then* all
K chunks; in the system, the chunks of the members that finish first cross the link while
the slowest still serves. On the emulated-disk testbed (three exponential 2.155 ms disks, a
64 KiB chunk at 1 Gbit/s) that structure's R(1) is 5.7 ms against 4.1 ms measured.

Mean value equations (ours; an approximation, named so in the method label)
---------------------------------------------------------------------------
The K members are identical single-server FCFS queues of mean service d (the
``"one_server"`` reading, as the ``forkjoin`` structure), the link moves one member's chunk
in the fixed time c = D_link / K (a shaped link moves a chunk of known size in a fixed time;
D_link is the data direction's demand, ``link_in`` for reads, ``link_out`` for writes). The
other master stations stay in series as single-server queues. At population n, with the
arrival theorem's populations at n - 1 ([RL80]):

* the members: a request finds ``A = max(Q_mem, q_m)`` requests ahead at each member
  (Varki's mean value technique, [Var99], as :mod:`qnmodel.solvers.forkjoin`), so member i
  finishes at ``s + E_i``, s = d A, E_i ~ Exp(d) independent;
* the link: the request finds ``B = c q_c`` of work ahead of it at the link, q_c the chunks
  that the requests ahead still owe the link (at the link or still to come: with FCFS
  members theirs mostly reach it first);
* reads: chunk j (in completion order, T_(1) < ... < T_(K)) leaves the FCFS link at
  ``L_j = max(B + j c, max_{i <= j} (T_(i) + (j - i + 1) c))`` (Lindley's recursion for a
  FCFS server, [Lin52], unrolled over the j arrivals), and the request leaves at L_K.
  Its distribution is exact given s and B: ``P(L_j <= t)`` is the probability that the
  i-th smallest of K exponentials is below ``t - s - (j - i + 1) c`` for every i <= j, a
  multinomial count over the intervals between those thresholds (order statistics,
  [DN03] sec. 2.2), integrated for the mean by Gauss-Laguerre quadrature;
* writes: chunk j leaves the link at ``B + j c`` and member j then serves it:
  ``R = E[max_j (max(B + j c, s) + E_j)]``
  (:func:`qnmodel.solvers.forkjoin.expected_order_statistic`);
* Little's law: ``X = n / (Z + sum_serial D_k (1 + Q_k) + R_el)``; chunks owed to the
  link, each from the fork until it leaves the link, ``q_c = X sum_j E[L_j]`` (reads) or
  ``X (K B + c K (K + 1) / 2)`` (writes); requests with a member still to finish
  ``Q_mem = X E[T_(K)]`` (reads) or ``X R_el`` (writes: chunks still in the link are
  ahead at the members too); member sub-requests ``q_m = X d (1 + q_m(n - 1))``;
* the asymptotic bound ``X <= 1 / D_max`` ([LZGS84] sec. 5.2): where the equations above
  give more (a busy link: the arrival theorem undercounts the chunks ahead, which a lone
  deterministic server never catches up on), X is the bound and the excess response time
  is counted at the bottleneck station.

At n = 1 (s = B = 0) a read gives exactly E[L_K], the mean time the last of K chunks leaves a
FCFS link of fixed transfer c behind K exponential members (for K = 2: d / 2 + 2 c +
d e^{-c/d}; K = 3: d / 3 + 3 c + 5/2 d e^{-2c/d} - d e^{-3c/d}, derived in
``tests/models/test_storage_forkjoin_overlap.py``). As n grows B or s grows without bound
and the request's time tends to that of the MVA queue of the bottleneck, so X saturates at
1 / max(d, D_link, D_k) as the ``forkjoin`` structure does (the cap above makes it an
upper bound at every n).

Results are reported under the ``forkjoin`` structure's names: the serial stations, the
data link (its residence: what the link adds beyond the members' race, R_el - E[T_(K)] for
reads, R_el - (s + d H_K) for writes; its utilisation X D_link) and ``storage_servers``
(the members' race).

Notes
-----
Measured error of R against an event simulation of the same system (``simulate_overlap``
in ``tests/solvers/fj_sim.py``; N = 1, 2, 4, 8, 16; table in
``docs/explanation/fork-join.md``, section "Overlapped link"): reads within 1.1 % (the
emulated-disk testbed's d = 2.155 ms, c = 0.55 ms, K = 3; four members; a link-bound
system), writes within 10.5 % (optimistic at N = 2: the K chunks of a write enter the link
together and the members' mean shift misses their waiting in step). On the testbed itself
(``tests/testbed/test_emu_disk.py``) the MAPE of X over N = 1..16 was 4.1-5.7 % in two
runs, against 14.6-16.5 % for the ``forkjoin`` structure.

References
----------
.. [Cui06] Cui B., Liu J., Wang G., Liu J., "Study on I/O response time bounds of network
   storage systems", Journal on Communications 27(1):69-74, 2006.
.. [Var99] E. Varki, "Mean value technique for closed fork-join networks", Proc. ACM
   SIGMETRICS 1999, Perf. Eval. Review 27(1):103-112.
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed multichain queuing
   networks", J. ACM 27(2):313-322, 1980.
.. [LZGS84] E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative System
   Performance*, Prentice-Hall 1984, sec. 5.2 (asymptotic bounds).
.. [Lin52] D. V. Lindley, "The theory of queues with a single server", Proc. Cambridge
   Philos. Soc. 48(2):277-289, 1952.
.. [DN03] H. A. David, H. N. Nagaraja, *Order Statistics*, 3rd ed., Wiley 2003, sec. 2.2
   (joint distribution of order statistics), sec. 2.5 (exponential spacings) and sec. 3.1
   (moments of order statistics).
.. [Kle75] L. Kleinrock, *Queueing Systems, Vol. 1: Theory*, Wiley 1975, sec. 5.2 (the mean
   residual life of a service time, E[S^2] / (2 E[S]) = d (1 + scv) / 2).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr as _ndtr

from .._validate import as_population
from ..errors import InvalidModelError
from ..model.laws import LOGN, law_for_scv
from ..solvers.forkjoin import ForkJoinResult, expected_order_statistic

__all__ = [
    "METHOD",
    "member_law",
    "expected_max",
    "FORKJOIN_STRUCTURES",
    "last_chunk_departure",
    "branch_times",
    "fork_join_overlap",
    "overlap_fork_join",
]

METHOD = (
    "approximate fork-join MVA with the master link inside the fork (overlapped link: "
    "Varki mean value technique, FCFS link of fixed chunk transfer)"
)
#: fork-join structures of NetworkedRAID.fork_join
FORKJOIN_STRUCTURES = ("forkjoin", "forkjoin_overlap")
_LAG_X, _LAG_W = np.polynomial.laguerre.laggauss(60)
_LEG_X, _LEG_W = np.polynomial.legendre.leggauss(32)


def _prob_below(a: np.ndarray, d: float, K: int, cdf=None) -> np.ndarray:
    """P(the i-th smallest of K iid members <= a[i] for i < j), thresholds a (j, T) increasing.

    Multinomial count over the intervals [0, a_0], (a_0, a_1], ...: after interval i at
    least i + 1 of the K values must have fallen ([DN03] sec. 2.2). The members are Exp(d),
    or of the distribution function ``cdf`` (any iid law: the count does not use its form).
    """
    j, T = a.shape
    G = -np.expm1(-np.maximum(a, 0.0) / d) if cdf is None else cdf(a)  # (j, T)
    binom = np.array([[math.comb(K - m0, m1 - m0) if m1 >= m0 else 0 for m1 in range(K + 1)]
                      for m0 in range(K + 1)], dtype=np.float64)  # fmt: skip
    dp = np.zeros((K + 1, T))
    dp[0] = 1.0
    prev = np.zeros(T)
    steps = np.arange(K + 1)
    for i in range(j):
        p = G[i] - prev
        prev = G[i]
        new = np.zeros_like(dp)
        for m0 in range(K + 1):
            if not dp[m0].any():
                continue
            for m1 in range(m0, K + 1):
                new[m1] += dp[m0] * binom[m0, m1] * p ** (m1 - m0)
        new[: i + 1] = 0.0
        dp = new
    rest = 1.0 - prev
    return np.sum(dp * rest[None, :] ** (K - steps)[:, None], axis=0)


def member_law(d: float, scv: float = 1.0):
    """A member's service law of mean ``d`` (s) and SCV ``scv``: ``(cdf, upper)``.

    The law the simulator draws for that SCV (:func:`qnmodel.model.laws.law_for_scv`):
    exponential at 1, constant at 0, lognormal otherwise. ``cdf`` maps an array of times to
    P(S <= t) (``None`` for the exponential and the constant, which have their own closed
    paths); ``upper`` is a time past which ``P(S > t) < 1e-13``.
    """
    law = law_for_scv(float(scv))
    if law.kind != LOGN:
        return None, d * 32.0
    mu, sigma = law.params(d)

    def cdf(t):
        t = np.asarray(t, dtype=np.float64)
        with np.errstate(divide="ignore"):
            z = (np.log(np.maximum(t, 1e-300)) - mu) / sigma
        return np.where(t > 0.0, _ndtr(z), 0.0)

    return cdf, math.exp(mu + sigma * 7.4)  # P(Z > 7.4) ~ 7e-14


def _integrate_survival(surv, lo: float, hi: float) -> float:
    """The integral of ``surv`` (vectorised) over [lo, hi]: Gauss-Legendre, 16 panels of 32."""
    if hi <= lo:
        return 0.0
    edges = np.linspace(lo, hi, 17)
    mid, half = (edges[1:] + edges[:-1]) / 2.0, (edges[1:] - edges[:-1]) / 2.0
    t = (mid[:, None] + half[:, None] * _LEG_X[None, :]).ravel()
    w = (half[:, None] * _LEG_W[None, :]).ravel()
    return float(np.sum(w * surv(t)))


def expected_max(d: float, shifts, scv: float = 1.0) -> float:
    """E[max_j (shift_j + S_j)], S_j iid of mean ``d`` and SCV ``scv`` (:func:`member_law`).

    Exponential: :func:`qnmodel.solvers.forkjoin.expected_order_statistic`; constant:
    ``max_j shift_j + d``; otherwise ``lo + int_lo^inf (1 - prod_j F(t - shift_j)) dt``
    (the mean of a non-negative variable from its distribution, [DN03] sec. 3.1), by
    Gauss-Legendre quadrature.
    """
    sh = np.asarray(shifts, dtype=np.float64).ravel()
    if d <= 0.0 or scv == 0.0:
        return float(sh.max() + max(d, 0.0))
    if scv == 1.0:
        return expected_order_statistic(np.full(sh.size, d), sh.size, shifts=sh)
    cdf, upper = member_law(d, scv)
    lo = float(sh.min())

    def surv(t):
        return 1.0 - np.prod(cdf(t[None, :] - sh[:, None]), axis=0)

    return lo + _integrate_survival(surv, lo, float(sh.max()) + upper)


def last_chunk_departure(
    d: float,
    c: float,
    K: int,
    shift: float = 0.0,
    backlog: float = 0.0,
    j: int | None = None,
    scv: float = 1.0,
) -> float:
    """E[L_j]: when the j-th chunk (default the last, j = K) leaves the shared FCFS link.

    K members, each done at ``shift + S``, S of mean ``d`` and SCV ``scv`` (exponential by
    default; :func:`member_law`), send one chunk of fixed transfer time ``c`` to a link that
    first owes ``backlog`` of other work (module docstring):
    ``L_j = max(backlog + j c, max_{i <= j} (T_(i) + (j - i + 1) c))``. Exact for the given
    shift and backlog; the mean is the integral of P(L_j > t): exponential members by
    60-point Gauss-Laguerre quadrature past the point where every threshold is positive (the
    integrand is smooth there; ~1e-12 relative against the closed forms for K = 2, 3),
    constant members in closed form (``max(backlog, shift + d) + j c``), others by
    Gauss-Legendre quadrature up to the law's far tail.
    """
    j = K if j is None else int(j)
    if not 1 <= j <= K:
        raise InvalidModelError(f"chunk index j must be in 1..{K}, got {j}")
    if d <= 0.0 or scv == 0.0:  # every member is done at shift + d: Lindley over j arrivals
        return max(backlog, shift + max(d, 0.0)) + j * c
    t0 = max(backlog, shift) + j * c  # below t0, L_j > t surely
    i = np.arange(1, j + 1)[:, None]
    if scv != 1.0:
        cdf, upper = member_law(d, scv)

        def surv(t):
            return 1.0 - _prob_below(t[None, :] - shift - (j - i + 1) * c, d, K, cdf)

        return t0 + _integrate_survival(surv, t0, shift + j * c + upper)
    t = t0 + d * _LAG_X
    a = t[None, :] - shift - (j - i + 1) * c
    survival = 1.0 - _prob_below(a, d, K)
    return float(t0 + d * np.sum(_LAG_W * np.exp(_LAG_X) * survival))


def branch_times(d: float, c: float, k: int, op: str, s: float, B: float,
                 scv: float = 1.0) -> tuple:  # fmt: skip
    """One request's times in the overlapped fork-join, given what it finds ahead.

    ``k`` branches, each a member (``shift`` s + S, S of mean d and SCV ``scv``,
    :func:`member_law`) and one chunk of fixed link time ``c``, behind ``B`` of work ahead at
    the link (module docstring). Returns ``(r_el, race, pending)``: the request's time from
    fork to its last chunk leaving the link (reads) or its last member finishing (writes), its
    members' race ``s + E[max of k S]`` (``s + d H_k`` for exponential members), and the sum
    over its chunks of the time each is owed to the link (from the fork until it leaves it).
    """
    race = s + expected_max(d, np.zeros(k), scv)  # E[T_(k)]
    if op == "read":
        last = [last_chunk_departure(d, c, k, s, B, j, scv) for j in range(1, k + 1)]
        return last[-1], race, float(sum(last))
    shifts = np.maximum(B + c * np.arange(1, k + 1), s)
    r_el = expected_max(d, shifts, scv) if d > 0 else float(shifts.max())
    return r_el, race, k * B + c * k * (k + 1) / 2.0


def fork_join_overlap(stations, member: float, link: str, K: int, op: str, N: int, Z: float,
                      members: int | None = None, scv: float = 1.0,
                      phases=None):  # fmt: skip
    """The curve n = 1..N of the overlapped fork-join (module docstring).

    ``stations``: (name, demand) of the master's stations in order, the data ``link`` among
    them; ``member``: one touched member's time per chunk d, of SCV ``scv`` (1: exponential,
    0: constant; :func:`member_law`); ``K`` the chunks (branches) of a request; ``members``
    the members they are spread over (default K): each member then sees a share v = K /
    members of the requests per phase (a RAID5 read of K - 1 chunks over K members); ``op``:
    ``"read"`` (chunk after the member) or ``"write"`` (chunk before it). ``phases``: a
    request of several fork-joins one after the other, each ``(link, op)`` over the same K
    members (a RAID5 read-modify-write: ``(("link_in", "read"), ("link_out", "write"))``);
    default the one phase ``((link, op),)``.

    Non-exponential members (ours, approximate): a request finds ``A`` sub-requests ahead at a
    member, one of them (with the probability U that the member is busy, U = X v d at n - 1)
    in service with a mean residual ``d (1 + scv) / 2`` instead of d ([Kle75] sec. 5.2):
    ``s = d A - U d (1 - scv) / 2``; its own service is of the member's law.
    """
    names = [s for s, _ in stations]
    D = np.array([v for _, v in stations], dtype=np.float64)
    phases = tuple(phases) if phases is not None else ((link, op),)
    lis = [names.index(ln) for ln, _ in phases]
    serial = np.array([k not in lis for k in range(len(names))])
    cs = [float(D[li]) / K for li in lis]
    d = float(member)
    v1 = K / float(members or K)  # a member's share of one phase's chunks
    v = v1 * len(phases)  # its share of the request's chunks
    if float(D.sum()) + d + Z <= 0.0:
        raise InvalidModelError("all demands and the think time are zero: throughput is unbounded")
    P = len(names) + 1  # the serial stations, the links, the members' race
    busiest = np.append(D, d * v)
    bott = int(np.argmax(busiest))
    x_max = 1.0 / float(busiest[bott]) if busiest[bott] > 0 else np.inf
    X = np.empty(N)
    Rk = np.zeros((N, P))
    Tm = np.zeros(N)
    Q = np.zeros(len(names))
    q_m = u_m = 0.0
    q_c = [0.0] * len(phases)
    Q_mem = [0.0] * len(phases)
    for i in range(N):
        n = i + 1
        r = np.where(serial, D * (1.0 + Q), 0.0)
        resid = u_m * d * (1.0 - scv) / 2.0  # the one in service: residual, not d [Kle75]
        s = max(d * max(v1 * sum(Q_mem), q_m) - resid, 0.0)  # [Var99]: ahead at each member
        Tm[i] = d * (1.0 + q_m) - resid
        race, out = 0.0, []
        for p, ((_ln, p_op), li, c) in enumerate(zip(phases, lis, cs, strict=True)):
            r_el, p_race, pending = branch_times(d, c, K, p_op, s, c * q_c[p], scv)
            r[li] = r_el - p_race
            race += p_race
            out.append((r_el, p_race, pending))
        x = n / (Z + float(r.sum()) + race)
        if x > x_max:  # the asymptotic bound [LZGS84]: the excess waits at the bottleneck
            extra = n / x_max - Z - float(r.sum()) - race
            if bott < len(names):
                r[bott] += extra
            else:
                race += extra
            x = x_max
        X[i] = x
        Rk[i, :-1] = r
        Rk[i, -1] = race
        Q = x * r[: len(names)]
        Q[lis] = 0.0
        for p, ((_ln, p_op), (r_el, p_race, pending)) in enumerate(zip(phases, out, strict=True)):
            q_c[p] = x * pending
            # requests with a member still to finish: reads until the last member is done,
            # writes until they leave (their chunks still in the link are ahead at the members)
            Q_mem[p] = x * (p_race if p_op == "read" else r_el)
        q_m = x * v * Tm[i]
        u_m = min(x * v * d, 1.0)
    return _result(METHOD, X, Rk, Tm, D, d, v, K, names, Z, None)


def _result(method, X, Rk, Tm, D, d, v, K, names, Z, lam) -> ForkJoinResult:
    """The :class:`ForkJoinResult` of the overlapped fork-join (closed or open rows)."""
    R = Rk.sum(axis=1)
    Dk = np.append(D, d * v)
    U = X[:, None] * Dk[None, :]
    Tb = np.repeat(Tm[:, None], K, axis=1)
    return ForkJoinResult(
        method=method,
        n=np.arange(1, X.size + 1, dtype=np.float64) if lam is None else X * R,
        throughput=X,
        response_time=R,
        residence_time=Rk,
        queue_length=X[:, None] * Rk,
        utilization=U,
        branch_response_time=Tb,
        branch_queue_length=X[:, None] * v * Tb,
        branch_utilization=np.repeat((X * d * v)[:, None], K, axis=1),
        synchronization_delay=(Rk[:, -1] - Tm)[:, None],
        station_names=(*names, "storage_servers"),
        branch_names=tuple(f"storage_servers.server_{b}" for b in range(1, K + 1)),
        forkjoin_names=("storage_servers",),
        think_time=float(Z),
        arrival_rate=lam,
        _law=None,
    )


def overlap_fork_join(system, N: int, think_time=0.0) -> ForkJoinResult:
    """``NetworkedRAID.fork_join(N, think_time, structure="forkjoin_overlap")``.

    The stations and demands are those of ``system.network(think_time,
    structure="forkjoin")``; the data link (``link_in`` for reads, ``link_out`` for writes)
    moves into the fork (module docstring). Only the corrected form has a link per direction.
    """
    if system.form != "corrected":
        raise InvalidModelError(
            "structure='forkjoin_overlap' needs form='corrected' (one master link station per "
            f"direction, whose chunks cross it inside the fork); got form={system.form!r}"
        )
    N = as_population(N, "N")
    net = system.network(think_time, structure="forkjoin")
    serial = [(st.name, float(st.demand)) for st in net.stations if not hasattr(st, "branches")]
    fj = net.stations[-1]
    link = "link_in" if system.op == "read" else "link_out"
    return fork_join_overlap(
        serial, float(fj.branches[0].demand), link, int(fj.n), system.op, N, net.think_time
    )
