"""Open queueing networks: single and multi-class, queueing, delay, multi-server and
general load-dependent stations; FCFS stations with class-dependent or non-exponential service
approximately.

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
(exact for BCMP processor sharing and LCFS-PR; for FCFS, BCMP requires equal exponential
class service times). The capacity c_k of a station is 1, m, or r_L; the network is
stable iff a_k < c_k at every queueing station, and the largest sustainable single-class
rate is lambda_sat = min_k c_k / D_k, attained at the bottleneck.

FCFS stations outside product form (approximate)
------------------------------------------------
A FCFS station whose classes have different service times S_ck, or whose service is not
exponential (SCV c_ck^2 != 1), is solved as an isolated M/G/1 queue fed by the superposed
Poisson visit streams of the classes ([Kle75] sec. 5.6, Pollaczek-Khinchine): with visit
rates lambda_c V_ck, E[S] and E[S^2] = sum of the classes' (1 + c^2) S^2 weighted by them,
every class waits W_k = lambda_k E[S^2] / (2 (1 - U_k)) per visit and
R_ck = V_ck (S_ck + W_k). With m servers the M/M/m wait is scaled by E[S^2] / (2 E[S]^2)
(Allen-Cunneen, [All90] eq. 6.103). Exact for one station with Poisson arrivals; in a
network the departures of such a station are not Poisson, and the label says
"approximate". Its error against the simulator (``docs/explanation/open-and-mixed.md``, 17
networks of 2-6 stations): median 16 % of a class's R, worst +35 % (deterministic service
in series, over-estimated) and -30 % (a mix of short and long jobs, under-estimated).

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
.. [Kle75] L. Kleinrock, *Queueing Systems, Volume 1: Theory*, Wiley 1975, sec. 5.6
   (the M/G/1 queue, Pollaczek-Khinchine mean-value formula).
.. [All90] A. O. Allen, *Probability, Statistics, and Queueing Theory*, 2nd ed., Academic
   Press 1990, eq. 6.103 (the Allen-Cunneen approximation for G/G/m).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._validate import as_choice, as_quantity
from ..errors import (
    InvalidModelError,
    InvalidTypeError,
    NumericalInstabilityWarning,
    UnstableModelError,
)
from ..model import Network
from ..results._laws import LawOf, attach_law
from ..results.closed import handover
from ..results.open import OpenResult
from .open_stations import engset, erlang_b, erlang_c, station_capacity, stretch
from .support import require

__all__ = [
    "erlang_b",
    "erlang_c",
    "engset",
    "station_capacity",
    "stretch",
    "open_network",
    "open_kernel",
    "common_direction",
]

_UNSTABLE = ("raise", "inf")


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


def common_direction(rates: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(s (P,), base (C,)) with rates[p] == s[p] * base to rounding, or None.

    ``base`` is the first row with a non-zero rate and s[p] = rates[p, c*] / base[c*]
    (c*: the class with the largest base rate); every entry must agree with s[p] base to
    8 units in the last place (``np.linspace(a, b, P)[:, None] * lam`` passes, though
    its rows are not bitwise multiples of the first), so the loads s a differ from
    lambda D by rounding only.
    """
    nz = np.flatnonzero(rates.any(axis=1))
    if nz.size == 0:
        return None
    base = rates[nz[0]]
    c = int(np.argmax(base))
    with np.errstate(over="ignore", invalid="ignore"):  # a subnormal base: s = inf, and the
        s = rates[:, c] / base[c]  # check below fails on the inf or NaN it leaves
        diff = np.multiply.outer(s, base)
        diff -= rates
    np.abs(diff, out=diff)
    tol = np.abs(rates)
    tol *= 8.0 * np.finfo(np.float64).eps
    if np.all(diff <= tol):
        return s, base
    return None


def open_kernel(
    D: np.ndarray,
    lam: np.ndarray,
    delay: np.ndarray,
    servers: np.ndarray,
    multipliers: Sequence,
    names: Sequence[str],
    class_names: Sequence[str],
    *,
    V: np.ndarray | None = None,
    scv: np.ndarray | None = None,
    mg1: np.ndarray | None = None,
    single: bool = False,
    unstable: str = "raise",
    method: str = "open",
) -> OpenResult:
    """Mean values of an open network at P vectors of class arrival rates, in one call.

    Parameters
    ----------
    D : ndarray (C, K)
        Demands D_ck, seconds.
    lam : ndarray (P, C)
        lambda_pc, jobs/s (finite, >= 0).
    delay, servers, multipliers, names, class_names
        Per station: delay flags (K,), servers (K,), rate curves (K,) or None each;
        station names (K,) and class names (C,).
    V, scv : ndarray (C, K), optional
        Visits and service-time SCVs, for the stations of ``mg1``.
    mg1 : ndarray (K,) of bool, optional
        FCFS stations solved as M/G/1 (M/G/m) queues (module docstring; approximate).
    single : bool
        The result drops its class axis (a network without classes).
    unstable : {"raise", "inf"}
        At a row where a queueing station has U >= 1: raise :class:`UnstableModelError`
        naming it (default) or fill that row's response times with inf.

    Notes
    -----
    Rows that are multiples of one vector (to rounding, :func:`common_direction`) take an
    outer product for the loads (a = s lambda D), and for single-server queues
    g = 1 / (1 - s a1) needs no further work; class response times are then one matrix
    product R = g D^T, O(P K C) multiply-adds. The result does not depend on the path.
    """
    as_choice(unstable, "unstable", _UNSTABLE)
    D = np.atleast_2d(np.asarray(D, dtype=np.float64))
    C, K = D.shape
    delay = np.asarray(delay, dtype=bool)
    servers = np.asarray(servers, dtype=np.int64)
    multipliers = tuple(multipliers)
    cap = station_capacity(delay, servers, multipliers)
    V = (D > 0).astype(np.float64) if V is None else np.asarray(V, dtype=np.float64)
    mg1 = np.zeros(K, dtype=bool) if mg1 is None else np.asarray(mg1, dtype=bool)
    plain = (~delay & (servers == 1)).all() and all(r is None for r in multipliers)
    direction = common_direction(lam)
    queueing_load = np.where(delay, 0.0, 1.0 / cap)  # U per unit of offered load
    a = a1 = s = None
    if direction is not None:
        s, base = direction
        a1 = base @ D
        load1 = a1 * queueing_load
        kmax = np.full(s.size, int(np.argmax(load1)), dtype=np.int64)
        umax = s * load1[kmax[0]]
    else:
        a = lam @ D
        load = a * queueing_load[None, :]
        kmax = np.argmax(load, axis=1)
        umax = load[np.arange(load.shape[0]), kmax]
        del load
    with np.errstate(divide="ignore", over="ignore"):  # a subnormal load: s_max = inf
        s_max = np.where(umax > 0, 1.0 / np.where(umax > 0, umax, 1.0), np.inf)
    if not (umax > 0).all():  # a row without load: the station that saturates first as all
        # the classes' rates grow alike (for one class, the bottleneck min_k c_k / D_k)
        kmax = np.where(umax > 0, kmax, int(np.argmax(D.sum(axis=0) * queueing_load)))
    bad_rows = umax >= 1.0
    if bad_rows.any() and unstable == "raise":
        p = int(np.flatnonzero(bad_rows)[0])
        k = int(kmax[p])
        where = (
            f"at arrival rate {lam[p, 0]:.6g}/s" if single
            else "under the arrival rates " + ", ".join(
                f"{n}={x:.6g}/s" for n, x in zip(class_names, lam[p], strict=True))
        )  # fmt: skip
        limit = (
            f"the network sustains at most {s_max[p] * lam[p, 0]:.6g}/s (bottleneck "
            f"{names[k]!r})" if single
            else f"scale the rates by less than {s_max[p]:.6g} to keep the network stable"
        )  # fmt: skip
        raise UnstableModelError(_unstable_message(names[k], float(umax[p]), where, limit))
    s_ok = s if s is None or not bad_rows.any() else np.where(bad_rows, 0.0, s)
    if plain and a is None:  # single-server queues along one vector: g = 1 / (1 - s a1)
        g = np.multiply.outer(s_ok, -a1)
        g += 1.0
        np.reciprocal(g, out=g)
        a_ok = None
    else:
        if a is None:
            a_ok = np.multiply.outer(s_ok, a1)
        else:
            a_ok = np.where(bad_rows[:, None], 0.0, a) if bad_rows.any() else a
        if plain:
            g = np.subtract(1.0, a_ok)
            np.reciprocal(g, out=g)
        else:
            g = stretch(a_ok, delay, servers, multipliers)
    if np.any(umax > 1.0 - NEAR_SATURATION):  # some station may be that close: look
        U = (np.multiply.outer(s_ok, a1) if a_ok is None else a_ok) * queueing_load[None, :]
        _warn_near_saturation(U, delay, names)
    w = np.zeros(g.shape)  # untouched pages until an M/G/1 station writes them
    if mg1.any():
        lam_ok = np.where(bad_rows[:, None], 0.0, lam) if bad_rows.any() else lam
        _mg1_waits(lam_ok, D, V, scv, servers, cap, mg1, g, w)
    R = g @ D.T
    if mg1.any():
        R += w @ V.T
    if bad_rows.any():
        g[bad_rows] = np.inf
        w[bad_rows] = np.inf
        R[bad_rows] = np.inf
    handover(g, w, R, s_max, kmax)  # built here: the result adopts them without a copy
    return OpenResult(
        method=method,
        class_names=tuple(class_names),
        single=single,
        rates=lam,
        response=R,
        stretch=g,
        wait=w,
        station_names=tuple(names),
        demands=D,
        visits=V,
        is_delay=delay,
        capacity=cap,
        saturation_scale=s_max,
        bottleneck_index=kmax,
    )


def _mg1_waits(lam, D, V, scv, servers, cap, mg1, g, w) -> None:
    """The FCFS stations of ``mg1`` as M/G/1 (M/G/m) queues: h = 1 and the wait per visit w
    (module docstring), written into g and w (P, K)."""
    S = np.divide(D, V, out=np.zeros_like(D), where=V > 0)
    m2 = (1.0 + scv) * S * S  # E[S^2] per class
    for k in np.flatnonzero(mg1):
        flow = lam * V[None, :, k]  # visit rates per class (P, C)
        tot = flow.sum(axis=1)
        live = tot > 0
        ES = np.divide(flow @ S[:, k], tot, out=np.zeros_like(tot), where=live)
        ES2 = np.divide(flow @ m2[:, k], tot, out=np.zeros_like(tot), where=live)
        a = tot * ES  # offered load, Erlangs
        m = int(servers[k])
        if m == 1:
            wk = tot * ES2 / (2.0 * (1.0 - a))  # Pollaczek-Khinchine ([Kle75] eq. 5.101)
        else:  # Allen-Cunneen ([All90] eq. 6.103): the M/M/m wait times (1 + c^2) / 2
            Cw = erlang_c(m, np.minimum(a, np.nextafter(m, 0)))
            with np.errstate(invalid="ignore", divide="ignore"):
                wk = np.where(live, Cw * ES / (m - a) * ES2 / (2.0 * ES * ES), 0.0)
        g[:, k] = 1.0
        w[:, k] = np.where(live, wk, 0.0)


def open_network(net: Network, arrival_rate: Any = None, *, unstable: str = "raise") -> OpenResult:
    """Solve an open queueing network.

    Parameters
    ----------
    net : Network
        A network without classes (one open class, solved at ``arrival_rate``; its think
        time describes terminals of the closed model and is **not used**), or one whose
        classes are all open. A network with closed classes is mixed:
        :func:`qnmodel.mixed_network`.
    arrival_rate : float, str, sequence or mapping, optional
        Without classes: a rate in jobs/s (a number or a unit string such as ``"40000/s"``,
        ``"40 kHz"``, ``"1e3 IOPS"``) or a 1-D sequence of rates (a sweep, one row each).
        With classes: a mapping ``{class name: rate}`` (the others keep their rates), a
        sequence with one rate per class, or a 2-D array (P, C) of rates in jobs/s, one
        row per point; default the classes' own rates.
    unstable : {"raise", "inf"}
        At a rate that saturates a station, raise (default) or fill that row with inf.

    Returns
    -------
    OpenResult
        One row per operating point: X = lambda, R, and per station (and class) U, Q, R;
        ``saturation_scale``, ``saturation_arrival_rate``, ``bottleneck``. Exact for
        product-form networks; FCFS stations whose classes have different service times,
        or whose service is not exponential, are solved as M/G/1 (M/G/m) queues, and the
        ``method`` says "approximate" and names them (module docstring).

    Raises
    ------
    UnstableModelError
        Some queueing station has U >= 1; the message names it, its utilisation and the
        largest sustainable rate.
    InvalidModelError, UnitError, InvalidTypeError
        A feature open_network does not take (:mod:`qnmodel.solvers.support`), closed
        classes, negative, NaN or infinite rates, a rate with a unit that is not a frequency
        (``"40 MB/s"``), a mapping naming an unknown or closed class.

    Examples
    --------
    >>> import qnmodel as qn
    >>> net = qn.Network.from_demands(["5 ms", "8 ms"])
    >>> res = qn.open_network(net, "100/s")
    >>> round(float(res.response_time[0]), 6)  # 5/(1-0.5) + 8/(1-0.8) ms
    0.05
    """
    if not isinstance(net, Network):
        raise InvalidTypeError(f"net must be a Network, got {type(net).__name__}")
    cm = net.compiled
    if not net.single and (~cm.is_open).any():
        closed = [cm.class_names[c] for c in np.flatnonzero(~cm.is_open)]
        raise InvalidModelError(
            f"open_network solves open classes; classes {closed} are closed: use "
            "qnmodel.mixed_network (open and closed classes)"
        )
    approximate = require(cm, "open_network", drop=("open",))
    if net.single:
        lam = _sweep_rates(arrival_rate)[:, None]
    elif np.ndim(arrival_rate) == 2 and not isinstance(arrival_rate, str):
        lam = _rate_rows(arrival_rate, cm.C)
    else:
        lam = cm.arrival_rate_vector(arrival_rate)[None, :]
    mg1 = np.array([
        n in cm.features.get("fcfs_class_dependent", ()) + cm.features.get("non_exponential", ())
        for n in cm.station_names
    ], dtype=bool)  # fmt: skip
    if mg1.any() and any(cm.rates[k] is not None for k in np.flatnonzero(mg1)):
        k = int(next(k for k in np.flatnonzero(mg1) if cm.rates[k] is not None))
        raise InvalidModelError(
            f"open_network cannot solve FCFS station {cm.station_names[k]!r} outside product "
            "form (class-dependent or non-exponential service) with a rate curve: use "
            "qnmodel.simulate, or discipline='PS'"
        )
    method = "open"
    if approximate:
        method = (
            "open (approximate: M/G/1 waits, Poisson arrivals, at FCFS stations "
            + ", ".join(repr(cm.station_names[k]) for k in np.flatnonzero(mg1))
            + ")"
        )
    res = open_kernel(
        cm.D, lam, cm.is_delay, cm.servers, cm.rates, cm.station_names, cm.class_names,
        V=cm.V, scv=cm.scv, mg1=mg1, single=net.single, unstable=unstable, method=method,
    )  # fmt: skip
    if net.single and lam.shape[0] == 1 and np.isfinite(res.response_time).all():
        attach_law(res, LawOf(net, float(lam[0, 0])))  # response_time_quantile of one rate
    return res


def _rate(value: Any, name: str) -> float:
    return as_quantity(value, name, "frequency")


def _sweep_rates(arrival_rate: Any) -> np.ndarray:
    """One rate or a 1-D sequence of rates (numbers or unit strings) as float64 (P,)."""
    if arrival_rate is None:
        raise InvalidModelError(
            'arrival_rate is required for a network without classes (e.g. "100/s")'
        )
    if isinstance(arrival_rate, Mapping):
        raise InvalidTypeError(
            "arrival_rate is a mapping but the network has a single class: give a rate "
            "or a sequence of rates"
        )
    if isinstance(arrival_rate, str) or np.ndim(arrival_rate) == 0:
        return np.array([_rate(arrival_rate, "arrival_rate")])
    if isinstance(arrival_rate, np.ndarray) and arrival_rate.dtype.kind in "iuf":
        arr = np.asarray(arrival_rate, dtype=np.float64)
        if arr.ndim != 1 or arr.size == 0:
            raise InvalidModelError(
                f"arrival_rate must be a number or a non-empty 1-D array, got shape {arr.shape}"
            )
        bad = ~np.isfinite(arr) | (arr < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidModelError(
                f"arrival_rate[{i}] must be finite and >= 0, got {float(arr[i])!r}"
            )
        return arr.copy()
    vals = [_rate(v, f"arrival_rate[{i}]") for i, v in enumerate(arrival_rate)]
    if not vals:
        raise InvalidModelError("arrival_rate is empty: give at least one rate")
    return np.asarray(vals, dtype=np.float64)


def _rate_rows(arrival_rate: Any, C: int) -> np.ndarray:
    """A 2-D sweep of class arrival rates (P, C), jobs/s."""
    lam = np.asarray(arrival_rate, dtype=np.float64)
    if lam.ndim != 2 or lam.shape[1] != C or lam.shape[0] == 0:
        raise InvalidModelError(
            f"arrival_rate sweep must have shape (P, {C}) (one row per point, one column "
            f"per class), got {lam.shape}"
        )
    bad = ~np.isfinite(lam) | (lam < 0)
    if bad.any():
        p, c = np.argwhere(bad)[0]
        raise InvalidModelError(
            f"arrival_rate[{p}, {c}] must be finite and >= 0, got {float(lam[p, c])!r}"
        )
    return lam
