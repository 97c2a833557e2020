"""One open station in isolation: Erlang's formulas and the stretch factor of each kind of
station, the building blocks of :mod:`qnmodel.solvers.open` (and of the mixed solver).

For an offered load a (Erlangs) the mean number of jobs Q(a) of the isolated station gives
the stretch g = Q / a = R / D ([LZGS] sec. 6.4; [BGMT] sec. 6.2):

* single-server queue (M/M/1, PS, LCFS-PR): g = 1 / (1 - a);
* delay (infinite server): g = 1;
* m identical servers (M/M/m): g = 1 + C(m, a) / (m - a), Erlang's C from the Erlang B
  recursion ([Jag74]), stable for any m;
* general load-dependent station, rate r(j)/D with j jobs: a birth-death chain with a
  geometric tail, summed in log-scaled form.

References
----------
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, ch. 6-8.
.. [BGMT] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and
   Markov Chains*, 2nd ed., Wiley 2006, sec. 6.2.
.. [Jag74] D. L. Jagerman, "Some properties of the Erlang loss function", Bell System
   Technical Journal 53(3):525-551, 1974 (the recursion for B).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validate import as_positive_int, as_servers
from ..errors import InvalidModelError, InvalidTypeError, UnstableModelError

__all__ = ["erlang_b", "erlang_c", "engset", "station_capacity", "stretch"]


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
