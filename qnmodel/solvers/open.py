"""Open queueing networks: single and multi-class, queueing, delay, multi-server and
general load-dependent stations.

In an open product-form network ([Jac63]; BCMP [BCMP75]) each station behaves as an
isolated queue fed by a Poisson stream. With arrival rates lambda_c and demands
D_ck = V_ck S_ck the offered load of station k is a_k = sum_c lambda_c D_ck
(Erlangs) and everything follows from the mean number of jobs Q_k(a_k) of that
isolated station. Writing g_k = Q_k / a_k (the stretch factor: residence time
over demand),

    R_ck = D_ck g_k,   Q_ck = lambda_c D_ck g_k,   U_ck = lambda_c D_ck / c_k,

([LZGS] sec. 6.4 and 7.4.1; [MAD04] ch. 13) with, per kind of station,

* single-server queue (M/M/1, PS, LCFS-PR): g = 1 / (1 - a);
* delay (infinite server): g = 1;
* m identical servers (M/M/m): g = 1 + C(m, a) / (m - a), with Erlang's C formula
  C(m, a), the probability that an arrival waits ([BGMT] sec. 6.2.2); it is computed
  from the Erlang B recursion B(0) = 1, B(j) = a B(j-1) / (j + a B(j-1)) and
  C = B / (1 - (a/m)(1 - B)) ([Jag74]), a loop over positive numbers only, stable
  for any m (tested at m = 5000 against 50-digit arithmetic);
* general load-dependent station, service rate r(j)/D with j jobs: a birth-death
  chain, p(j) = p(0) prod_{i<=j} a / r(i) ([BGMT] sec. 6.2; [LZGS] sec. 8.2); the last
  multiplier r_L holds beyond j = L, so the tail is geometric with ratio a / r_L and
  is summed in closed form. Terms are summed in log-scaled form (no overflow).

For several classes at one multi-server or load-dependent station the service rate
depends on the total number of jobs, the class shares of which are lambda_c D_ck / a_k
(exact for BCMP processor sharing; for FCFS, BCMP requires equal class service
times). The capacity c_k of a station is 1, m, or r_L; the network is stable iff
a_k < c_k at every queueing station, and the largest sustainable single-class rate is
lambda_sat = min_k c_k / D_k, attained at the bottleneck.

References
----------
.. [Jac63] J. R. Jackson, "Jobshop-like queueing systems", Management Science
   10(1):131-142, 1963, doi:10.1287/mnsc.10.1.131.
.. [BCMP75] F. Baskett, K. M. Chandy, R. R. Muntz, F. G. Palacios, "Open, closed and
   mixed networks of queues with different classes of customers", J. ACM 22(2):248-260,
   1975, doi:10.1145/321879.321887.
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, ch. 6-8.
.. [BGMT] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and
   Markov Chains*, 2nd ed., Wiley 2006, sec. 6.2 and 7.1.
.. [MAD04] D. A. Menasce, V. A. F. Almeida, L. W. Dowdy, *Performance by Design*,
   Prentice Hall 2004, ch. 13 (open multi-class models).
.. [Jag74] D. L. Jagerman, "Some properties of the Erlang loss function", Bell System
   Technical Journal 53(3):525-551, 1974 (the recursion for B).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validate import as_choice, as_positive_int, as_servers
from ..errors import (
    InvalidModelError,
    InvalidTypeError,
    NumericalInstabilityWarning,
    UnstableModelError,
)
from ..results.open import OpenMultiClassResult, OpenResult
from ._open_model import _class_rates, _sweep_rates, as_multipliers, network_model

__all__ = [
    "erlang_b",
    "erlang_c",
    "engset",
    "station_capacity",
    "stretch",
    "open_single",
    "open_multiclass",
    "open_network",
    "as_multipliers",
    "network_model",
]

_UNSTABLE = ("raise", "inf")


# --------------------------------------------------------------------------------------
# One station in isolation
# --------------------------------------------------------------------------------------


def _erlang_loads(a: Any, name: str = "a") -> np.ndarray:
    """Offered loads in Erlangs: a number or an array of numbers, each finite and >= 0."""
    if isinstance(a, str | bytes) or a is None or isinstance(a, bool | np.bool_):
        raise InvalidTypeError(
            f"{name} must be an offered load in Erlangs (a number >= 0, or an array of them), "
            f"got {a!r} of type {type(a).__name__}"
        )
    try:
        arr = np.asarray(a)
    except (TypeError, ValueError):  # ragged sequences
        arr = np.asarray(a, dtype=object)
    if arr.dtype.kind not in "iuf":
        raise InvalidTypeError(
            f"{name} must be an offered load in Erlangs (a number >= 0, or an array of them), "
            f"got an array of dtype {arr.dtype}: {a!r:.80}"
        )
    arr = arr.astype(np.float64)
    bad = ~(np.isfinite(arr) & (arr >= 0.0))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"{name}[{', '.join(map(str, idx))}]" if idx else name
        raise InvalidModelError(
            f"{where} must be a finite offered load >= 0 Erlangs (arrival rate times mean "
            f"service time), got {float(arr[idx])!r}"
        )
    return arr


def erlang_b(m: int, a: Any) -> np.ndarray:
    """Erlang's loss probability B(m, a) for m servers and offered load a (Erlangs).

    The M/G/m/m loss system (m servers, no waiting room, Poisson arrivals) refuses a job
    with probability

        B(m, a) = (a^m / m!) / sum_{k=0}^{m} a^k / k!,

    whatever the service-time law (insensitivity, [Iv15] on Erlang's loss system).

    Parameters
    ----------
    m : int
        Servers, an integer >= 1.
    a : float or array_like
        Offered load a = lambda S in Erlangs (arrival rate times mean service time),
        finite and >= 0; B(m, 0) = 0.

    Returns
    -------
    ndarray
        B(m, a), the shape of ``a`` (0-d for a number).

    Raises
    ------
    InvalidModelError
        ``m`` not an integer >= 1; a load that is negative, NaN or infinite.
    InvalidTypeError
        A load that is not a number (a string, a boolean).

    Notes
    -----
    The recursion B(0) = 1, B(j) = a B(j-1) / (j + a B(j-1)) ([Jag74]; [Zen03]) adds and
    multiplies positive numbers only: no overflow (a^m / m! never appears) and no
    cancellation, O(m) per value. Vectorised over ``a``. GNU Octave's ``erlangb(A, m)``
    takes the arguments the other way round and refuses a = 0 (returned here as 0, the
    limit).

    References
    ----------
    .. [Jag74] D. L. Jagerman, "Some properties of the Erlang loss function", Bell System
       Technical Journal 53(3):525-551, 1974.
    .. [Zen03] G. Zeng, "Two common properties of the Erlang-B function, Erlang-C function,
       and Engset blocking function", Mathematical and Computer Modelling 37(12-13):
       1287-1296, 2003.
    .. [Iv15] V. B. Iversen, *Teletraffic Engineering and Network Planning*, DTU Fotonik,
       2015: the chapters on Erlang's loss system, on Engset's loss system (finite
       sources) and on Erlang's delay system.
    """
    m = as_servers(m, "m")
    a = _erlang_loads(a)
    B = np.ones_like(a)
    for j in range(1, m + 1):
        aB = a * B
        B = aB / (j + aB)
        if not B.any():  # underflowed to 0 (j far above a): it stays 0, stop (m may be 10^9)
            break
    return B


def erlang_c(m: int, a: Any) -> np.ndarray:
    """Erlang's delay probability C(m, a): an arrival to an M/M/m queue waits.

    C(m, a) = B / (1 - rho (1 - B)) with rho = a / m < 1 and B = :func:`erlang_b`
    ([BGMT] eq. 6.28; [Jag74]).

    Parameters
    ----------
    m : int
        Servers, an integer >= 1.
    a : float or array_like
        Offered load a = lambda S in Erlangs, finite, >= 0 and < m (C(m, 0) = 0).

    Returns
    -------
    ndarray
        C(m, a), the shape of ``a``.

    Raises
    ------
    UnstableModelError
        A load a >= m: the queue grows without bound (C would be 1); the message names it.
    InvalidModelError, InvalidTypeError
        As :func:`erlang_b`.
    """
    m = as_servers(m, "m")
    a = _erlang_loads(a)
    over = a >= m
    if over.any():
        idx = tuple(int(i) for i in np.argwhere(over)[0])
        where = f"a[{', '.join(map(str, idx))}]" if idx else "a"
        raise UnstableModelError(
            f"{where} = {float(a[idx])!r} Erlangs >= m = {m} servers: an M/M/m queue is "
            f"stable only below a = m (utilisation a / m < 1); lower the load or use more "
            f"than {float(a[idx]):.6g} servers"
        )
    B = erlang_b(m, a)
    rho = a / m
    return B / (1.0 - rho * (1.0 - B))


def engset(m: int, a: Any, sources: int) -> np.ndarray:
    """Engset's loss (call congestion): the probability that a request is refused by m
    servers without waiting room, offered by a finite population of ``sources``.

    Each idle source requests service after an exponential time of rate lambda; a
    request finding all m servers busy is lost and the source becomes idle again; service
    has mean S (any law: the loss system is insensitive, [Iv15]). With a = lambda S,
    the offered load of one idle source, the probability that a request is refused is the
    time congestion of a system with ``sources - 1`` sources ([Iv15]; [Zen03]):

        P(m, a, n) = a^m C(n-1, m) / sum_{k=0}^{m} a^k C(n-1, k),   n = ``sources``,

    0 when m >= n (an arrival never finds all m busy: at most n - 1 others hold a server).

    Parameters
    ----------
    m : int
        Servers, an integer >= 1.
    a : float or array_like
        Offered load per idle source, a = lambda S (Erlangs), finite and >= 0.
    sources : int
        Number of sources n, an integer >= 1.

    Returns
    -------
    ndarray
        P(m, a, n), the shape of ``a``.

    Notes
    -----
    The recursion E(0) = 1, E(i) = a (n - i) E(i-1) / (i + a (n - i) E(i-1)),
    i = 1..m ([Zen03]), of positive terms only: no overflow of the binomials, no
    cancellation. As the sources n grow with n a held fixed, P tends to Erlang's B(m, n a).
    GNU Octave's ``engset(A, m, n)`` computes the same recursion (its help text shows the
    formula with C(n, k), its code with n - 1: the call congestion, as here).
    """
    m = as_servers(m, "m")
    n = as_positive_int(sources, "sources", 1)
    a = _erlang_loads(a)
    if m >= n:
        return np.zeros_like(a)
    E = np.ones_like(a)
    for i in range(1, m + 1):
        t = a * (n - i) * E
        E = t / (i + t)
        if not E.any():
            break
    return E


def station_capacity(delay: np.ndarray, servers: np.ndarray, multipliers: Sequence) -> np.ndarray:
    """c_k: 1 for a single server (and, by convention, a delay station), m for m
    servers, the last rate multiplier r_L for a load-dependent station (the rate it
    tends to as its queue grows)."""
    cap = np.where(delay, 1.0, np.asarray(servers, dtype=np.float64))
    for k, r in enumerate(multipliers):
        if r is not None and not delay[k]:
            cap[k] = float(r[-1])
    return cap


def _ld_stretch(a: np.ndarray, r: np.ndarray) -> np.ndarray:
    """g = Q / a of a birth-death station with rates r(j) (last one holding), load a < r_L.

    p(j) proportional to t_j = prod_{i<=j} a / r(i); for j >= L-1, t_j = t_{L-1} rho^(j-L+1)
    with rho = a / r_L, so (with every term scaled by exp(-max log t))

        sum_j t_j   = sum_{j<L-1} t_j + t_{L-1} / (1 - rho)
        sum_j j t_j = sum_{j<L-1} j t_j + t_{L-1} ((L-1) / (1 - rho) + rho / (1 - rho)^2).

    The second is divided by a term by term (t_j / a is finite for every j >= 1), so
    g keeps full precision at light load, where it tends to 1 / r(1).
    """
    L = r.size
    rL = float(r[-1])
    pos = a > 0
    asafe = np.where(pos, a, 0.5 * rL)  # placeholder load where a = 0 (overwritten)
    la = np.log(asafe)
    cs = np.concatenate([[0.0], np.cumsum(np.log(r[:-1]))])  # sum_{i<=j} log r(i), j=0..L-1
    j = np.arange(L, dtype=np.float64)
    lt = j[None, :] * la[:, None] - cs[None, :]  # log t_j, (P, L)
    mx = lt.max(axis=1, keepdims=True)
    w = np.exp(lt - mx)
    one_m = (rL - asafe) / rL  # 1 - rho, without forming rho first
    S0 = w[:, : L - 1].sum(axis=1) + w[:, L - 1] / one_m
    wa = np.exp(lt[:, 1:] - la[:, None] - mx)  # t_j / a for j >= 1, scaled
    S1a = (j[1 : L - 1] * wa[:, : L - 2]).sum(axis=1) if L > 2 else np.zeros(a.size)
    if L > 1:
        S1a = S1a + (L - 1) * wa[:, L - 2] / one_m
    S1a = S1a + w[:, L - 1] / (rL * one_m * one_m)
    g = S1a / S0
    return np.where(pos, g, 1.0 / float(r[0]))


def stretch(
    a: np.ndarray, delay: np.ndarray, servers: np.ndarray, multipliers: Sequence
) -> np.ndarray:
    """g_k = Q_k / a_k = R_ck / D_ck for offered loads a (P, K), each station in isolation.

    The caller guarantees a_k < c_k at queueing stations (see :func:`station_capacity`).
    """
    a = np.asarray(a, dtype=np.float64)
    single = ~delay & (np.asarray(servers) == 1)
    if single.all() and all(r is None for r in multipliers):
        return 1.0 / (1.0 - a)  # single-server queues only: one pass
    g = np.ones_like(a)
    for k, r in enumerate(multipliers):
        if r is not None and not delay[k]:
            single[k] = False
            g[:, k] = _ld_stretch(a[:, k], np.asarray(r, dtype=np.float64))
    g[:, single] = 1.0 / (1.0 - a[:, single])
    ms = [k for k in np.flatnonzero(~delay & (np.asarray(servers) > 1)) if multipliers[k] is None]
    if ms:  # every M/M/m station at once: the Erlang B recursion, frozen past each station's m
        m = np.asarray(servers, dtype=np.float64)[ms]
        am = a[:, ms]
        B = np.ones_like(am)
        for j in range(1, int(m.max()) + 1):
            aB = am * B
            live = (j <= m)[None, :]
            np.copyto(B, aB / (j + aB), where=live)
            # B of a station underflows to 0 once j is far above its load and stays 0: stop
            # when every station still recursing is there (a station of 10^9 servers at a
            # load of 10 takes ~200 steps, not 10^9); the result is bit-identical.
            if not (B * live).any():
                break
        C = B / (1.0 - (am / m) * (1.0 - B))
        g[:, ms] = 1.0 + C / (m - am)
    return g


# --------------------------------------------------------------------------------------
# Array kernels
# --------------------------------------------------------------------------------------


def _station_arguments(K: int, C: int, delay, servers, multipliers, names, class_names):
    """The per-station and per-class arguments of the open solvers, with their defaults filled in.

    Returns ``(delay, servers, multipliers, names, class_names, capacity)``: boolean and int64
    arrays of length K, a K-tuple of rate multipliers (None for load-independent), station names
    ``s0..`` and class names ``class0..`` where none were given, and :func:`station_capacity`.
    """
    delay = np.asarray(delay, dtype=bool)
    servers = np.asarray(servers, dtype=np.int64)
    multipliers = tuple(multipliers) if multipliers is not None else (None,) * K
    names = tuple(names) if names is not None else tuple(f"s{i}" for i in range(K))
    class_names = (
        tuple(class_names) if class_names is not None else tuple(f"class{c}" for c in range(C))
    )
    return (
        delay,
        servers,
        multipliers,
        names,
        class_names,
        station_capacity(delay, servers, multipliers),
    )


def _saturation(load_per_unit: np.ndarray, cap: np.ndarray, delay: np.ndarray, names):
    """(s_max, bottleneck): the largest factor s with s * load < cap at every queueing station."""
    with np.errstate(divide="ignore", over="ignore"):
        s = np.where(
            ~delay & (load_per_unit > 0),
            cap / np.where(load_per_unit > 0, load_per_unit, 1.0),
            np.inf,
        )
    k = int(np.argmin(s))
    if not np.isfinite(s[k]):
        k = int(np.argmax(np.where(delay, -np.inf, load_per_unit))) if (~delay).any() else 0
    return float(s[k]), names[k]


#: 1 - U below which an open station's figures are flagged: R_k = D_k / (1 - U_k) turns a
#: relative change e of lambda or D into U / (1 - U) e, so past 1e8 more than half of the 16
#: significant digits of double precision are noise.
NEAR_SATURATION = 1e-8


def _warn_near_saturation(U: np.ndarray, delay: np.ndarray, names: Sequence[str]) -> None:
    """Warn (:class:`~qnmodel.errors.NumericalInstabilityWarning`) when a stable queueing
    station is within :data:`NEAR_SATURATION` of U = 1: its R and Q are then ill-conditioned."""
    U = np.atleast_2d(U)
    slack = np.where(delay[None, :] | (U >= 1.0), np.inf, 1.0 - U)
    if not (slack < NEAR_SATURATION).any():
        return
    p, k = np.unravel_index(int(np.argmin(slack)), slack.shape)
    s = float(slack[p, k])
    cond = (1.0 - s) / s
    digits = max(0, int(np.floor(-np.log10(np.finfo(float).eps * cond))))
    warnings.warn(
        f"station {names[k]!r} is at utilisation U = 1 - {s:.3g}: its response time "
        f"D / (1 - U) amplifies a relative change of the arrival rate or demand by "
        f"U / (1 - U) = {cond:.3g}, so only about {digits} significant digits of R and Q are "
        "meaningful (the inputs' own rounding already moves them)",
        NumericalInstabilityWarning,
        stacklevel=3,
    )


def _unstable_message(name: str, u: float, where: str, limit: str) -> str:
    return f"station {name!r} is saturated: utilisation U = {u:.6g} >= 1 {where}; {limit}"


def open_single(
    D: np.ndarray,
    arrival_rate: np.ndarray,
    delay: np.ndarray,
    servers: np.ndarray,
    multipliers: Sequence | None = None,
    names: Sequence[str] | None = None,
    unstable: str = "raise",
) -> OpenResult:
    """Open single-class network for one or many arrival rates (a sweep, one row each).

    Parameters
    ----------
    D : ndarray (K,)
        Demands D_k, seconds.
    arrival_rate : ndarray (P,)
        lambda, jobs/s (>= 0).
    delay : ndarray (K,) of bool
    servers : ndarray (K,) of int
    multipliers : sequence (K,) of None or ndarray, optional
        Rate multipliers of load-dependent stations (they take precedence over servers).
    names : sequence of str (K,), optional
    unstable : {"raise", "inf"}
        At a rate where some station has U >= 1: raise :class:`UnstableModelError`
        (default) or fill that row's R, R_k and Q_k with inf.

    Returns
    -------
    OpenResult
    """
    as_choice(unstable, "unstable", _UNSTABLE)
    D = np.asarray(D, dtype=np.float64)
    K = D.size
    lam = np.asarray(arrival_rate, dtype=np.float64).reshape(-1)
    delay, servers, multipliers, names, _, cap = _station_arguments(
        K, 1, delay, servers, multipliers, names, None
    )
    lam_sat, bn = _saturation(D, cap, delay, names)
    a = lam[:, None] * D[None, :]
    U = a / cap[None, :]
    bad = (U >= 1.0) & ~delay[None, :]
    bad_rows = bad.any(axis=1)
    if bad_rows.any() and unstable == "raise":
        p = int(np.flatnonzero(bad_rows)[0])
        k = int(np.argmax(np.where(delay, -np.inf, U[p])))
        raise UnstableModelError(
            _unstable_message(
                names[k],
                float(U[p, k]),
                f"at arrival rate {lam[p]:.6g}/s",
                f"the network sustains at most {lam_sat:.6g}/s (bottleneck {bn!r})",
            )
        )
    _warn_near_saturation(U, delay, names)
    a_ok = np.where(bad_rows[:, None], 0.0, a) if bad_rows.any() else a
    g = stretch(a_ok, delay, servers, multipliers)
    Rk = D[None, :] * g
    Q = a * g
    if bad_rows.any():
        Rk[bad_rows] = np.inf
        Q[bad_rows] = np.inf
    R = Rk.sum(axis=1)
    return OpenResult(
        method="open",
        arrival_rate=lam,
        throughput=lam.copy(),
        response_time=R,
        queue_length=Q,
        utilization=U,
        residence_time=Rk,
        station_names=names,
        demands=D,
        is_delay=delay,
        capacity=cap,
        saturation_arrival_rate=lam_sat,
        bottleneck=bn,
    )


def open_multiclass(
    D: np.ndarray,
    arrival_rate: np.ndarray,
    delay: np.ndarray,
    servers: np.ndarray,
    multipliers: Sequence | None = None,
    names: Sequence[str] | None = None,
    class_names: Sequence[str] | None = None,
) -> OpenMultiClassResult:
    """Open multi-class network at one vector of arrival rates.

    Parameters
    ----------
    D : ndarray (C, K)
        Demands D_ck, seconds.
    arrival_rate : ndarray (C,)
        lambda_c, jobs/s (>= 0).
    delay, servers, multipliers, names
        As in :func:`open_single`.
    class_names : sequence of str (C,), optional

    Raises
    ------
    UnstableModelError
        A queueing station with U_k = sum_c lambda_c D_ck / c_k >= 1, named with U_k.
    """
    D = np.atleast_2d(np.asarray(D, dtype=np.float64))
    C, K = D.shape
    lam = np.asarray(arrival_rate, dtype=np.float64).reshape(-1)
    delay, servers, multipliers, names, class_names, cap = _station_arguments(
        K, C, delay, servers, multipliers, names, class_names
    )
    a = lam @ D  # (K,) offered load
    Uk = a / cap
    s_max, bn = _saturation(a, cap, delay, names)
    bad = (Uk >= 1.0) & ~delay
    if bad.any():
        k = int(np.argmax(np.where(delay, -np.inf, Uk)))
        raise UnstableModelError(
            _unstable_message(
                names[k],
                float(Uk[k]),
                "under the given arrival rates "
                + ", ".join(f"{n}={x:.6g}/s" for n, x in zip(class_names, lam, strict=True)),
                f"scale every rate by less than {s_max:.6g} to keep the network stable",
            )
        )
    _warn_near_saturation(Uk, delay, names)
    g = stretch(a[None, :], delay, servers, multipliers)[0]
    Rk = D * g[None, :]
    Q = lam[:, None] * Rk
    U = lam[:, None] * D / cap[None, :]
    return OpenMultiClassResult(
        method="open",
        class_names=class_names,
        is_open=np.ones(C, dtype=bool),
        arrival_rate=lam,
        population=np.zeros(C, dtype=np.int64),
        think_time=np.zeros(C),
        throughput=lam.copy(),
        response_time=Rk.sum(axis=1),
        queue_length=Q,
        utilization=U,
        residence_time=Rk,
        station_names=names,
        demands=D,
        is_delay=delay,
        capacity=cap,
        saturation_scale=s_max,
        bottleneck=bn,
    )


def open_network(net: Any, arrival_rate: Any = None, *, unstable: str = "raise", **mixed: Any):
    """Solve an open (or mixed) queueing network.

    Parameters
    ----------
    net : Network or MultiClassNetwork
        A single-class :class:`~qnmodel.model.network.Network` is read as one open class
        with the network's stations and demands; its think time describes terminals
        of the closed model and is **not used** (an open model has no terminals).
        A multi-class network with open classes; if it also has closed classes with
        jobs, it is solved as a mixed network (:func:`qnmodel.mixed_network`).
    arrival_rate : float, str, sequence or mapping
        Single class: a rate in jobs/s (number or unit string such as ``"40000/s"``,
        ``"40 kHz"``, ``"1e3 IOPS"``) or a 1-D sequence/array of rates: a sweep, one
        result row per rate. Several classes: a mapping ``{class_name: rate}`` (other
        open classes keep the network's rates), a sequence with one rate per class
        (0 for closed classes) or one per open class; default the network's rates.
        Several open classes swept: a 2-D array (P, C) or (P, number of open classes)
        of rates in jobs/s, one row per point (one call, see
        :func:`qnmodel.solvers.open_sweep.open_multiclass_sweep`;
        rows that are multiples of one vector are fastest).
    unstable : {"raise", "inf"}
        Sweeps only: at a rate that saturates a station, raise (default) or fill that
        row's response and residence times and queue lengths with inf.
    **mixed
        Options of :func:`qnmodel.mixed_network` (``N``, ``method``, ``max_memory``)
        when the network has closed classes.

    Returns
    -------
    OpenResult
        Single class: X = lambda, R, and per station U_k, Q_k, R_k for every rate;
        ``saturation_arrival_rate`` and ``bottleneck``.
    OpenMultiClassResult
        Several classes: per class X_c, R_c and per class and station U_ck, Q_ck, R_ck.
    OpenSweepResult
        Several classes and a 2-D array of rates: per point and class R_pc, per point
        and station U, Q and the stretch g (R_pck = D_ck g_pk on request).

    Raises
    ------
    UnstableModelError
        Some queueing station has U >= 1; the message names it, its utilisation and the
        largest sustainable rate.
    InvalidModelError, UnitError, InvalidTypeError
        Negative, NaN or infinite rates, a rate with a unit that is not a frequency
        (``"40 MB/s"``), a mapping naming an unknown or closed class.

    Examples
    --------
    >>> import qnmodel as qn
    >>> net = qn.Network.from_demands(["5 ms", "8 ms"])
    >>> res = qn.open_network(net, "100/s")
    >>> round(float(res.response_time[0]), 6)  # 5/(1-0.5) + 8/(1-0.8) ms
    0.05
    """
    model = network_model(net)
    if model.single:
        if mixed:
            raise InvalidModelError(f"unexpected options {sorted(mixed)} for an open network")
        lam = _sweep_rates(arrival_rate)
        return open_single(
            model.D[0],
            lam,
            model.delay,
            model.servers,
            model.multipliers,
            model.names,
            unstable=unstable,
        )
    if (~model.is_open & (model.population > 0)).any() or mixed.get("N") is not None:
        from .mixed import mixed_network

        return mixed_network(net, arrival_rate, **mixed)
    if np.ndim(arrival_rate) == 2 and not isinstance(arrival_rate, str):
        if mixed:
            raise InvalidModelError(f"unexpected options {sorted(mixed)} for an open network")
        return _open_sweep(model, arrival_rate, unstable)
    lam = _class_rates(model, arrival_rate, net)
    if mixed:
        raise InvalidModelError(f"unexpected options {sorted(mixed)} for an open network")
    if not model.is_open.any():
        raise InvalidModelError(
            "the network has no open class: solve closed networks with qnmodel.mva_multiclass "
            "or qnmodel.amva"
        )
    keep = model.is_open
    res = open_multiclass(
        model.D[keep],
        lam[keep],
        model.delay,
        model.servers,
        model.multipliers,
        model.names,
        tuple(n for n, o in zip(model.class_names, keep, strict=True) if o),
    )
    return res


def _open_sweep(model, arrival_rate, unstable: str):
    """A 2-D sweep of open-class rates (P, C) or (P, open classes) of a multi-class model."""
    from .open_sweep import open_multiclass_sweep

    if (~model.is_open & (model.population > 0)).any():
        raise InvalidModelError(
            "a 2-D sweep of arrival rates needs an open network; this one has closed "
            "classes with jobs: solve each point with qnmodel.mixed_network"
        )
    rates = np.asarray(arrival_rate, dtype=np.float64)
    keep = model.is_open
    if rates.shape[-1] == keep.size:
        if (rates[:, ~keep] != 0).any():
            raise InvalidModelError("arrival_rate sweep gives a rate to a closed class")
        rates = rates[:, keep]
    elif rates.shape[-1] != int(keep.sum()):
        raise InvalidModelError(
            f"arrival_rate sweep has {rates.shape[-1]} columns; give one per class "
            f"({keep.size}) or one per open class ({int(keep.sum())})"
        )
    return open_multiclass_sweep(
        model.D[keep],
        rates,
        model.delay,
        model.servers,
        model.multipliers,
        model.names,
        tuple(n for n, o in zip(model.class_names, keep, strict=True) if o),
        unstable=unstable,
    )
