"""Approximate analysis of networks with fork-join elements (striping, erasure-coded reads).

A :class:`~qnmodel.model.network.ForkJoin` element forks a request into one
sub-request per branch and lets it go when k of the n sub-requests have
finished (k = n: a full-stripe RAID read or write). Queueing networks with
such synchronisation have no product form, so every method here is an
approximation and says so in its label.

Closed networks (population N): fork-join mean value technique
------------------------------------------------------------------
Varki's technique ([Var99]) iterates on the population like MVA, with a mean
value equation that gives the fork-join's response time at population n from
the mean service times and the mean queue length at population n - 1 (the
arrival theorem, exact only for product-form networks; [Var99] reports that
the technique is pessimistic, a lower bound on performance, and within 5 % of
simulation in most cases). We use it in this form: an arriving request finds
A_i requests ahead of it at branch i, each of which costs the branch its
per-request busy time d_i', and then races its own sub-requests,

    A_i(n)    = max(Q_fj(n-1), q_i(n-1))        (requests in the element, or
                                                 sub-requests at branch i)
    R_fj(n)   = E[ k-th order statistic of { d_i' A_i(n) + S_i } ],  S_i ~ Exp(D_i)
    T_i(n)    = d_i' (1 + q_i(n-1))             (sub-request sojourn at branch i)
    R_k(n)    = D_k (1 + Q_k(n-1))  at other queues, D_k at delays   ([RL80])
    X(n)      = n / (Z + sum_k R_k(n) + sum_fj R_fj(n))
    Q_k(n)    = X(n) R_k(n),  Q_fj(n) = X(n) R_fj(n),  q_i(n) = X(n) T_i(n)  (Little)

For n identical branches of demand d and k = n this is the mean value
equation R_fj(n) = d (H_n + Q_fj(n-1)): the mean of the maximum of n
exponential services, d H_n, plus d per request ahead (the element serves
requests at rate 1/d when busy) -- our reading of [Var99]'s equation, whose
text we quote from its abstract only. At n = 1 nothing is ahead and
R_fj(1) = d H_n exactly (the mean of the maximum of n exponentials, [Tri02]
sec. 3.4); a k-of-n join gives d (H_n - H_{n-k}), the mean k-th order
statistic. With different branches the order statistic of the shifted
exponentials is integrated numerically (its survival function is a
Poisson-binomial tail).

A k-of-n join cancels the other n - k sub-requests when the request leaves
(queued or in service), so branch i is busy d_i' = E[min(S_i, T_(k))] per
request, k d / n for identical branches and D_i for k = n
(:func:`busy_per_request`); U_i = X d_i' and X <= 1 / max_i d_i'.
Errors measured against simulation: ``docs/explanation/fork-join.md``.

Random fan-out (``ForkJoin(fanout=f)``, f < n identical branches): a request forks to a
uniformly random f of the n branches (RAID5 with rotating parity), so a branch sees a
fraction p = f / n of the requests: busy time p d' per request, q_i = X p T_i,
A_i = max(p Q_fj, q_i), and the race is over f branches (within 0.2 % of simulation).
Multi-server and load-dependent queues and branches: :mod:`qnmodel.solvers._forkjoin_ld`.
Branches whose service is not exponential (``scv`` other than 1; full joins of single-server
branches): the race is over gamma laws of the branches' SCV, and open branches are M/G/1
queues, :mod:`qnmodel.solvers._forkjoin_scv` (approximate; exponential branches keep the
formulas here exactly).

Open networks (arrival rate lambda)
-----------------------------------
Other queues are M/M/1: R_k = D_k / (1 - rho_k). A fork-join of n >= 2
identical single-server exponential branches (k = n) uses Nelson and Tantawi's
scaling approximation ([NT88]; as restated in [Tho14] Table I, eq. (3)):

    R_n(rho) ~= [ H_n / H_2 + (1 - H_n / H_2) * 4 rho / 11 ] * (12 - rho) / 8 * R(rho),

with R(rho) = D / (1 - rho) the M/M/1 response time; for n = 2 it is the exact
result R_2 = (12 - rho) / 8 * R(rho) of Flatto and Hahn ([FH84]; [NT88]).
Different branches, or k < n, use the join of independent exponential branch
sojourn times (means T_i = D_i / (1 - rho_i); for k = n and identical
branches the maximum is Nelson and Tantawi's upper bound H_n R(rho), [Tho14]
eq. (1)). For k = n it is multiplied by 1 + (phi - 1) w, where
phi = R_n(rho*) / (H_n R(rho*)) is the correction of the identical-branch
approximation at the largest branch
utilisation rho* and w = (sum_i T_i / max_i T_i - 1) / (n - 1) measures how
alike the branches are (this blend is ours, not [NT88]'s): identical branches
(w = 1) recover [NT88] exactly; one dominant branch (w -> 0) keeps the
independent maximum, which then tends to that branch's own M/M/1 sojourn; at
light load phi -> 1 and the independent maximum is exact. k-of-n joins cancel
the other sub-requests, so branch i is busy d_i' = E[min(S_i, T_(k))] per
request (k d / n for identical branches) and rho_i = lambda d_i'.

References
----------
.. [Var99] E. Varki, "Mean value technique for closed fork-join networks",
   Proc. ACM SIGMETRICS 1999, Perf. Eval. Review 27(1):103-112,
   doi:10.1145/301453.301484.
.. [NT88] R. Nelson, A. N. Tantawi, "Approximate analysis of fork/join
   synchronization in parallel queues", IEEE Trans. Computers 37(6):739-743,
   1988, doi:10.1109/12.2213.
.. [FH84] L. Flatto, S. Hahn, "Two parallel queues created by arrivals with
   two demands I", SIAM J. Appl. Math. 44(5):1041-1053, 1984.
.. [Tho14] A. Thomasian, "Analysis of fork/join and related queueing
   systems", ACM Computing Surveys 47(2), article 17, 2014, Table I.
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed
   multichain queuing networks", J. ACM 27(2):313-322, 1980.
.. [Tri02] K. S. Trivedi, *Probability and Statistics with Reliability,
   Queuing and Computer Science Applications*, 2nd ed., Wiley 2002, sec. 3.4.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import (
    as_population,
    as_quantity,
    check_fit_scv,
    check_memory,
    check_not_subnormal,
    check_size,
)
from ..errors import InvalidModelError, UnstableModelError
from ..model import ForkJoin, Network
from ..model.laws import law_for_scv
from ..results.forkjoin import ForkJoinResult
from . import _forkjoin_ld as _ld
from . import _forkjoin_scv as _scv
from . import percentiles as _ph
from ._forkjoin_terms import fewer_than, harmonic, nelson_tantawi
from ._mva_core import single_class

#: The most non-exponential branches of one element (the join's quadrature costs O(n^2)
#: per point: 1000 branches take seconds).
MAX_SCV_BRANCHES = 1000

__all__ = [
    "ForkJoinResult",
    "fork_join",
    "harmonic",
    "expected_order_statistic",
    "nelson_tantawi",
]

METHOD_CLOSED = "approximate fork-join MVA (Varki mean value technique)"
METHOD_OPEN = "approximate open fork-join (M/M/1 stations, Nelson-Tantawi join)"
METHOD_LD = "; multi-server/load-dependent queues: MVA-LD residence given the queue ahead"
METHOD_LD_OPEN = "; multi-server/load-dependent queues: exact birth-death sojourns"
METHOD_SCV = "; non-exponential branches: join of gamma two-moment laws (approximate)"


def _survival(t: float, shifts: np.ndarray, means: np.ndarray, k: int) -> float:
    """P(fewer than k of the shifted exponentials shift_i + Exp(mean_i) are <= t)."""
    with np.errstate(divide="ignore"):  # a zero-demand branch is done at its shift
        # (t - shifts) clipped at 0: the masked-out branches must not overflow expm1
        done = np.where(t > shifts, -np.expm1(-np.maximum(t - shifts, 0.0) / means), 0.0)
    return fewer_than(done, k)


def expected_order_statistic(means: Any, k: int | None = None, shifts: Any = None) -> float:
    """E[k-th smallest of {shift_i + Exp(mean_i)}], independent (k = n: the maximum).

    Closed forms where they exist: equal means d and equal shifts c give
    c + d (H_n - H_{n-k}) ([Tri02] sec. 3.4). Otherwise the integral of the
    survival function, piecewise between the shifts (scipy ``quad``).
    """
    d = np.asarray(means, dtype=np.float64).ravel()
    n = d.size
    k = n if k is None else int(k)
    c = np.zeros(n) if shifts is None else np.asarray(shifts, dtype=np.float64).ravel()
    if n == 0 or not 1 <= k <= n or c.size != n:
        raise InvalidModelError(f"order statistic k={k} of n={n} values is undefined")
    if np.all(d == d[0]) and np.all(c == c[0]):
        return float(c[0] + d[0] * (harmonic(n) - harmonic(n - k)))
    from scipy.integrate import quad

    cuts = np.unique(np.concatenate(([0.0], c)))
    total = 0.0
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        v, _ = quad(_survival, a, b, args=(c, d, k), epsabs=0.0, epsrel=1e-11, limit=200)
        total += v
    v, _ = quad(_survival, cuts[-1], np.inf, args=(c, d, k), epsabs=0.0, epsrel=1e-11, limit=200)
    return float(total + v)


def busy_per_request(means: Any, k: int | None = None) -> np.ndarray:
    """Mean busy time per request of each branch of a k-of-n join that cancels the rest.

    E[min(S_i, T_(k))] for independent S_i ~ Exp(D_i), T_(k) the k-th completion:
    the integral of P(S_i > t) P(fewer than k of the others done by t). Equal to
    D_i for k = n, and k d / n for n identical branches of demand d (each of the k
    stages of the race keeps the running branches busy for d in total).
    """
    d = np.asarray(means, dtype=np.float64).ravel()
    n = d.size
    k = n if k is None else int(k)
    if k == n:
        return d.copy()
    if np.all(d == d[0]):
        return np.full(n, k * d[0] / n)
    from scipy.integrate import quad

    out = np.empty(n)
    zeros = np.zeros(n - 1)
    for i in range(n):
        if d[i] == 0.0:
            out[i] = 0.0
            continue
        others = np.delete(d, i)
        out[i], _ = quad(
            lambda t, i=i, others=others: math.exp(-t / d[i]) * _survival(t, zeros, others, k),
            0.0, np.inf, epsabs=0.0, epsrel=1e-11, limit=200,
        )  # fmt: skip
    return out


# ---------------------------------------------------------------------------- model
@dataclass(frozen=True)
class _FJ:
    """One fork-join element: branch service means, join, cancellation and fan-out."""

    idx: int  # position among the network's elements
    d: np.ndarray  # (n,) branch demand: mean service of one sub-request
    k: int  # sub-requests to wait for
    busy: np.ndarray  # (n,) busy time per sub-request (cancelling k-of-n: < d)
    fan: int  # branches a request forks to (a random subset when < n)
    alpha: tuple[np.ndarray | None, ...]  # rate multipliers per branch (None: one server)
    scv: np.ndarray  # (n,) squared coefficient of variation of each branch's service
    laws: tuple  # service-time law of each branch (for its third moment)

    @property
    def exponential(self) -> bool:
        """True when every branch serves exponentially (the exponential formulas apply)."""
        return bool(np.all(self.scv == 1.0))

    @property
    def share(self) -> float:
        """Fraction of requests that visit a given branch, fanout / n."""
        return self.fan / self.d.size

    def own(self) -> np.ndarray:
        """Mean service of this request's own sub-requests in the race (fan of them)."""
        first = np.array([1.0 if a is None else float(a[0]) for a in self.alpha])
        return (self.d / first)[: self.fan]


@dataclass(frozen=True)
class _Model:
    """The network flattened: ordinary stations and fork-join elements, with branch arrays."""

    names: tuple[str, ...]
    kind: tuple[str, ...]  # "queue" | "delay" | "forkjoin" per element
    D: np.ndarray  # (K,) demand (forkjoin: busiest branch's busy time per request)
    fj: tuple[_FJ, ...]
    branch_names: tuple[str, ...]
    Z: float
    alpha: tuple[np.ndarray | None, ...]  # per element (queues): rate multipliers or None

    @property
    def load_dependent(self) -> bool:
        return any(a is not None for a in self.alpha) or any(
            a is not None for f in self.fj for a in f.alpha
        )


def _model(net: Network) -> _Model:
    net = single_class(net, "fork_join")
    names, kinds, fj, bnames, alphas = [], [], [], [], []
    for idx, s in enumerate(net.stations):
        names.append(s.name)
        if isinstance(s, ForkJoin):
            bnames.extend(f"{s.name}.{b.name}" for b in s.branches)
            d = s.branch_demands
            fan = s.fanout
            if s.k < fan and not s.cancel:
                raise InvalidModelError(
                    f"fork_join models cancelling k-of-n joins; {s.name!r} has k={s.k} of "
                    f"n={fan} with cancel=False (stragglers keep their branch busy): "
                    "simulate the network instead (qnmodel.simulate)"
                )
            alpha = tuple(_ld.multipliers(b) for b in s.branches)
            if s.k < fan and any(a is not None for a in alpha):
                raise InvalidModelError(
                    f"fork_join: {s.name!r} is a k-of-n join (k={s.k} of {fan}) with "
                    "multi-server or load-dependent branches; only full joins (k = n) of such "
                    "branches are modelled: simulate the network instead (qnmodel.simulate)"
                )
            scv = np.array([b.scv_of(None) for b in s.branches])
            if np.any(scv != 1.0) and (s.k < fan or any(a is not None for a in alpha)):
                raise InvalidModelError(
                    f"fork_join: {s.name!r} has non-exponential branches (SCV {scv.tolist()}) "
                    f"{'in a k-of-n join' if s.k < fan else 'with several servers or a rate curve'}"
                    "; only full joins of single-server non-exponential branches are modelled: "
                    "simulate the network instead (qnmodel.simulate)"
                )
            if np.any(scv != 1.0):
                check_fit_scv(scv, f"fork_join: {s.name!r}", "fork_join")
                check_not_subnormal(d, f"fork_join: {s.name!r} branch demands", "fork_join")
                check_size(
                    fan, MAX_SCV_BRANCHES,
                    f"fork_join: {s.name!r} has non-exponential branches, whose join is "
                    "integrated at a cost growing as the square of their number",
                    "simulate it (qnmodel.simulate) or model fewer, larger branches",
                )  # fmt: skip
            laws = tuple(b.service if b.service is not None else law_for_scv(c) for b, c in
                         zip(s.branches, scv, strict=True))  # fmt: skip
            busy = busy_per_request(d, s.k) if fan == s.n else np.full(s.n, s.k * d[0] / fan)
            fj.append(_FJ(idx, d, int(s.k), busy, fan, alpha, scv, laws))
            kinds.append("forkjoin")
            alphas.append(None)
        else:
            kinds.append("delay" if s.is_delay else "queue")
            alphas.append(None if s.is_delay else _ld.multipliers(s))
    return _Model(
        tuple(names), tuple(kinds), np.array(net.demands, dtype=np.float64), tuple(fj),
        tuple(bnames), float(net.think_time), tuple(alphas),
    )  # fmt: skip


# ---------------------------------------------------------------------------- solvers
def _closed(m: _Model, N: int):
    K = len(m.names)
    B = len(m.branch_names)
    queue = np.array([k == "queue" for k in m.kind])
    delay = np.array([k == "delay" for k in m.kind])
    X = np.empty(N)
    Rk = np.zeros((N, K))
    Tb = np.zeros((N, B))
    Q = np.zeros(K)
    q = np.zeros(B)
    x_prev = 0.0
    for i in range(N):
        n = i + 1
        r = np.where(queue, m.D * (1.0 + Q), np.where(delay, m.D, 0.0))
        for j, a in enumerate(m.alpha):  # multi-server / load-dependent: eq. (1) of _ld
            if a is not None:
                r[j] = _ld.response_given_ahead(float(m.D[j]), a, float(Q[j]))
        col = 0
        for f in m.fj:
            sl = slice(col, col + f.d.size)
            # [Var99]: the requests in the element at n - 1 that use this branch are ahead
            ahead = np.maximum(f.share * Q[f.idx], q[sl])
            if all(a is None for a in f.alpha):
                Tb[i, sl] = f.busy * (1.0 + q[sl])
                shifts = f.busy * ahead
                if not f.exponential:  # residual life of the one in service: _forkjoin_scv
                    away = 1.0 - min(f.share * Q[f.idx] / i, 1.0) if i > 0 else 1.0
                    extra = away * x_prev * f.share * f.busy * f.busy * (f.scv - 1.0) / 2.0
                    Tb[i, sl] = np.maximum(Tb[i, sl] + extra, f.d)
                    shifts = np.maximum(shifts + extra, 0.0)
            else:
                own = f.own() if f.fan == f.d.size else np.resize(f.own(), f.d.size)
                Tb[i, sl] = [
                    _ld.response_binomial(float(f.d[b]), f.alpha[b], float(q[col + b]), n - 1)
                    for b in range(f.d.size)
                ]
                shifts = np.maximum(
                    [
                        _ld.response_binomial(float(f.d[b]), f.alpha[b], float(q[col + b]), n - 1)
                        for b in range(f.d.size)
                    ]
                    - own,
                    0.0,
                )
            if f.exponential:
                r[f.idx] = expected_order_statistic(f.own(), f.k, shifts=shifts[: f.fan])
            else:
                r[f.idx] = _scv.expected_order_statistic_scv(
                    f.own(), f.scv[: f.fan], f.k, shifts=shifts[: f.fan]
                )
            col += f.d.size
        x = n / (m.Z + r.sum())
        X[i] = x_prev = x
        Rk[i] = r
        Q = x * r
        q = x * Tb[i] * np.concatenate([np.full(f.d.size, f.share) for f in m.fj] or [[]])
    n = np.arange(1, N + 1, dtype=np.float64)
    return n, X, Rk, Tb, len(m.fj)


def _open(m: _Model, lam: float):
    K = len(m.names)
    B = len(m.branch_names)
    r = np.zeros(K)
    Tb = np.zeros(B)
    for j, kind in enumerate(m.kind):
        if kind == "queue":
            r[j] = _ld.open_response(float(m.D[j]), m.alpha[j], lam, f"station {m.names[j]}")
        elif kind == "delay":
            r[j] = m.D[j]
    col = 0
    for f in m.fj:
        d, k, nb = f.d, f.k, f.d.size
        lam_b = lam * f.share  # sub-requests per second at each branch
        if all(a is None for a in f.alpha):
            rho = lam_b * f.busy
            if np.any(rho >= 1.0):
                b = int(np.argmax(rho))
                raise UnstableModelError(
                    f"branch {m.branch_names[col + b]!r} is saturated: utilisation "
                    f"lambda*D = {rho[b]:.6g} >= 1"
                )
            T = d / (1.0 - rho)  # sojourn of a sub-request that is not cancelled
            if not f.exponential:  # M/G/1 members (full joins only: _model)
                mv = [_scv.mg1_sojourn_moments(lam_b, float(d[b]), float(f.scv[b]), f.laws[b])
                      for b in range(nb)]  # fmt: skip
                T = np.array([a for a, _ in mv])
                T_scv = np.array([v / (a * a) for a, v in mv])
        else:
            rho = None
            T = np.array([
                _ld.open_response(float(d[b]), f.alpha[b], lam_b, m.branch_names[col + b])
                for b in range(nb)
            ])  # fmt: skip
        Tb[col : col + nb] = T
        col += nb
        fan = f.fan
        if not f.exponential:  # M/G/1 members: _forkjoin_scv
            r[f.idx] = _scv.open_join(d[:fan], f.scv[:fan], T[:fan], T_scv[:fan], rho[:fan])
        elif rho is not None and k == fan and np.all(d == d[0]):
            r[f.idx] = nelson_tantawi(fan, float(rho[0]), float(d[0]))
        else:
            r[f.idx] = expected_order_statistic(T[:fan], k)
            if rho is not None and k == fan and fan > 1:  # heterogeneous: blend toward [NT88]
                rs = float(rho.max())
                phi = nelson_tantawi(fan, rs, 1.0) / (harmonic(fan) / (1.0 - rs))
                w = (float(T.sum() / T.max()) - 1.0) / (fan - 1.0)
                r[f.idx] *= 1.0 + (phi - 1.0) * w
    return r, Tb


def fork_join(
    net: Network, N: int | None = None, *, arrival_rate: float | str | None = None
) -> ForkJoinResult:
    """Approximate mean values of a network with fork-join elements, closed or open.

    Parameters
    ----------
    net : Network
        Stations (queues, delay stations) and :class:`~qnmodel.model.network.ForkJoin`
        elements, visited once per request. Multi-server and load-dependent queues
        and branches (full joins) use the approximation of
        :mod:`qnmodel.solvers._forkjoin_ld` (the method label says so). A network
        without fork-join is solved too (closed, single-server queues and delays:
        identical to exact MVA; open: M/M/1 tandem).
    N : int, optional
        Closed: the largest population; the curve n = 1..N is returned.
    arrival_rate : float or str, optional
        Open: requests/s (``"400/s"``); the network's think time is ignored.
        Give exactly one of ``N`` and ``arrival_rate``.

    Returns
    -------
    ForkJoinResult
        With ``method`` naming the approximation.

    Raises
    ------
    InvalidModelError
        k-of-n joins of multi-server or load-dependent branches, both or neither of
        ``N`` and ``arrival_rate``; :class:`~qnmodel.errors.UnstableModelError`
        when an open station or branch has utilisation >= 1.

    Notes
    -----
    Equations and references in the module docstring ([Var99], [NT88]).

    Examples
    --------
    >>> import qnmodel as qn
    >>> fj = qn.ForkJoin("stripe", [qn.Station(f"m{i}", 1.0) for i in range(4)])
    >>> round(float(qn.fork_join(qn.Network([fj]), 1).response_time[0]), 4)  # H_4
    2.0833
    """
    m = _model(net)
    if (N is None) == (arrival_rate is None):
        raise InvalidModelError(
            "give exactly one of N (closed population) and arrival_rate (open), got "
            f"N={N!r}, arrival_rate={arrival_rate!r}"
        )
    fj_idx = [f.idx for f in m.fj]
    if N is not None:
        N = as_population(N, "N")
        K, B = len(m.names), len(m.branch_names)
        # the curve n = 1..N: X, R, n and per station Rk, Qk, U, per branch Tb, Ub, Qb, per
        # fork-join its sync time, float64, twice (temporaries while assembling): measured
        # peak 351 B per population at K = 2, B = 4, F = 1 (N = 2e5), estimate 352 B
        check_memory(
            16.0 * N * (3 + 3 * K + 3 * B + len(m.fj)),
            f"fork_join of N = {N} jobs at {K} stations and {B} branches, keeping every n",
            "give a smaller N, or raise the limit",
        )
        if float(m.D.sum()) + m.Z <= 0.0:
            raise InvalidModelError(
                "all demands and the think time are zero: throughput is unbounded"
            )
        n, X, Rk, Tb, _F = _closed(m, N)
        lam = None
        method = METHOD_CLOSED + (METHOD_LD if m.load_dependent else "")
        method += "" if all(f.exponential for f in m.fj) else METHOD_SCV
    else:
        lam = as_quantity(arrival_rate, "arrival_rate", "frequency", positive=True)
        r, tb = _open(m, lam)
        Rk, Tb = r[None, :], tb[None, :]
        X = np.array([lam])
        n = X * Rk.sum(axis=1)
        method = METHOD_OPEN + (METHOD_LD_OPEN if m.load_dependent else "")
        method += "" if all(f.exponential for f in m.fj) else METHOD_SCV
    R = Rk.sum(axis=1)
    Qk = X[:, None] * Rk
    U = X[:, None] * m.D[None, :]  # forkjoin: its busiest branch; delay: busy servers
    Dbr = np.concatenate([f.busy * f.share for f in m.fj]) if m.fj else np.zeros(0)
    Ub = X[:, None] * Dbr[None, :]
    Qb = X[:, None] * Tb
    sync = np.zeros((X.size, len(m.fj)))
    col = 0
    for j, f in enumerate(m.fj):
        sync[:, j] = Rk[:, f.idx] - Tb[:, col : col + f.d.size].mean(axis=1)
        col += f.d.size
    return ForkJoinResult(
        method=method,
        n=n,
        throughput=X,
        response_time=R,
        residence_time=Rk,
        queue_length=Qk,
        utilization=U,
        branch_response_time=Tb,
        branch_queue_length=Qb,
        branch_utilization=Ub,
        synchronization_delay=sync,
        station_names=m.names,
        branch_names=m.branch_names,
        forkjoin_names=tuple(m.names[i] for i in fj_idx),
        think_time=m.Z,
        arrival_rate=lam,
        _law=functools.partial(_response_law, m),
    )


def _response_law(m: _Model, res: ForkJoinResult, i: int) -> tuple[_ph.PhaseType, str]:
    """The law behind :meth:`ForkJoinResult.response_time_distribution` at row ``i`` (its
    docstring says which structures are exact and how the others are approximated)."""
    closed = res.arrival_rate is None
    if not all(f.exponential for f in m.fj):
        raise InvalidModelError(
            "the response-time distribution of a fork-join with non-exponential branches is "
            "not modelled (its mean is, approximately); use qnmodel.simulate for quantiles"
        )
    # requests found ahead on arrival: Q(n-1) (arrival theorem), none for n = 1
    ahead = res.queue_length[i - 1] if closed and i > 0 else np.zeros(len(m.kind))
    parts = []
    fj_of = {f.idx: f for f in m.fj}
    col = 0
    for j, kind in enumerate(m.kind):
        r = float(res.residence_time[i, j])
        if kind == "forkjoin":
            f = fj_of[j]
            d, k = f.own(), f.k  # this request's own sub-requests (fanout of them)
            b = res.branch_response_time[i, col : col + f.fan]
            col += f.d.size
            k -= int(np.count_nonzero(d == 0.0))  # zero-demand branches finish at once
            b, d = b[d > 0.0], d[d > 0.0]
            if k <= 0:
                continue
            if closed:  # the queue ahead, then the race of this request's sub-requests
                own = _ph.order_statistic_ph(d, k)
                wait = r - own.mean
                if wait > 1e-12 * r:
                    # a random fan-out sends a share f/n of the requests ahead here
                    parts.append(_ph.erlang_mixture(wait, 1.0 / max(ahead[j] * f.share, 1.0)))
                parts.append(own)
            else:  # independent join: its mean is [NT88]'s upper bound, its tail fits
                parts.append(_ph.order_statistic_ph(b, k))
        elif r > 0.0:
            scv = 1.0 / (1.0 + ahead[j]) if closed and kind == "queue" else 1.0
            parts.append(_ph.erlang_mixture(r, scv))
    if not parts:
        raise InvalidModelError("every demand is zero: the response time is 0")
    exact = not closed and all(k == "queue" for k in m.kind)
    label = (
        "exact (open M/M/1 tandem: hypoexponential sum of sojourns)"
        if exact
        else (
            "approximate (closed: Erlang-mixture stages of SCV 1/(1 + Q_k(n-1)); "
            "fork-join: queue ahead then the race of exponential sub-requests)"
            if closed
            else "approximate (exponential stages; fork-join: join of independent "
            "exponential branch sojourns)"
        )
    )
    return _ph.series(*parts), label
