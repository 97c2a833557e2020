"""The capacity questions in one call: how much load meets a response-time target, how
many servers a station needs, and which single upgrade helps most.

Each answer rests on a monotonicity of the product-form solution, so a search over one
variable finds it exactly (to the resolution stated):

* open network: R(lambda) is continuous and strictly increasing on [0, lambda_sat)
  and diverges at lambda_sat ([LZGS] sec. 6.4), so the largest lambda with
  R(lambda) <= R_target is found by bisection to a relative width of 1e-12;
* closed network: R(n) is non-decreasing in n ([LZGS] sec. 6.3; exact MVA), so the
  largest population is read off one MVA curve (extended by doubling);
* adding a server to a station never increases R (open: C(m, a)/(m - a) decreases in
  m; closed: the station's rate min(j, m) grows pointwise), so the fewest servers are
  found by doubling then bisection.

Only mean response times are targeted; percentiles need the response-time
distribution and are not offered here.

References
----------
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, ch. 5-6.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._validate import as_population, as_positive_int, as_quantity
from ..errors import InvalidModelError, InvalidTypeError, UnstableModelError
from ..network import Network
from ..results_open import UpgradeResult
from .mva import mva
from .open import open_network

__all__ = ["max_arrival_rate", "max_population", "min_servers", "best_upgrade"]


def _target(value: Any) -> float:
    return as_quantity(value, "target (response time)", "time", positive=True)


def _check_net(net: Any) -> Network:
    if not isinstance(net, Network):
        raise InvalidTypeError(f"net must be a single-class Network, got {type(net).__name__}")
    return net


def _open_R(net: Network, lam: float) -> float:
    try:
        return float(open_network(net, lam).response_time[0])
    except UnstableModelError:
        return float("inf")


def max_arrival_rate(net: Network, target: Any) -> float:
    """Largest arrival rate (jobs/s) at which the open network's mean response time is
    at most ``target``.

    Parameters
    ----------
    net : Network
        Read as an open single-class network (think time not used).
    target : float or str
        Response-time target, seconds or a unit string (``"50 ms"``).

    Returns
    -------
    float
        lambda* with R(lambda*) = target to a relative width of 1e-12 (always below
        the saturation rate).

    Raises
    ------
    InvalidModelError
        Even a lone job takes longer than ``target`` (the message gives R(0)).
    """
    net = _check_net(net)
    t = _target(target)
    base = open_network(net, 0.0)
    R0 = float(base.response_time[0])
    if R0 > t:
        raise InvalidModelError(
            f"target {t:.6g} s cannot be met: a lone job already takes R = {R0:.6g} s"
        )
    hi = base.saturation_arrival_rate
    if not np.isfinite(hi):  # only delay stations: R does not depend on lambda
        return float("inf")
    lo = 0.0
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if _open_R(net, mid) <= t:
            lo = mid
        else:
            hi = mid
    return lo


def max_population(net: Network, target: Any, n_max: int = 1_000_000) -> int:
    """Largest population n (closed network, exact MVA) with R(n) <= ``target``.

    Returns 0 when even one job takes longer than ``target``; raises
    :class:`InvalidModelError` if R(n) stays within ``target`` up to ``n_max``
    (a network of delay stations only, or a target above the heavy-load asymptote
    seen so far).
    """
    net = _check_net(net)
    t = _target(target)
    n_max = as_population(n_max, "n_max")
    N = 64
    while True:
        N = min(N, n_max)
        R = mva(net, N).response_time
        over = np.flatnonzero(R > t)
        if over.size:
            return int(over[0])  # R(n) for n = over[0] + 1 is the first above
        if N == n_max:
            raise InvalidModelError(
                f"R(n) <= {t:.6g} s for every n up to n_max = {n_max}: raise n_max or "
                "check the target"
            )
        N *= 4


def _with_station(net: Network, k: int, **changes: Any) -> Network:
    stations = list(net.stations)
    stations[k] = dataclasses.replace(stations[k], **changes)
    return dataclasses.replace(net, stations=tuple(stations))


def _workload_R(net: Network, arrival_rate: Any, population: Any) -> float:
    if (arrival_rate is None) == (population is None):
        raise InvalidModelError("give exactly one of arrival_rate (open) or population (closed)")
    if arrival_rate is not None:
        try:
            return float(open_network(net, arrival_rate).response_time[0])
        except UnstableModelError:
            return float("inf")
    return float(mva(net, population, keep="last").response_time[-1])


def min_servers(
    net: Network,
    station: str,
    target: Any,
    *,
    arrival_rate: Any = None,
    population: Any = None,
    max_servers: int = 1_000_000,
) -> int:
    """Fewest servers at ``station`` for which the mean response time meets ``target``.

    Parameters
    ----------
    net : Network
    station : str
        A queueing station of ``net``.
    target : float or str
        Response-time target.
    arrival_rate, population
        The workload: exactly one of an open arrival rate or a closed population.
    max_servers : int
        Search limit.

    Raises
    ------
    InvalidModelError
        The target cannot be met with any number of servers up to ``max_servers``
        (another station limits R), naming the limit reached.
    """
    net = _check_net(net)
    t = _target(target)
    k = net.names.index(net.station(station).name)
    if net.is_delay[k]:
        raise InvalidModelError(f"station {station!r} is a delay station: it has no servers")
    if getattr(net.stations[k], "rate_multipliers", None) is not None:
        raise InvalidModelError(
            f"station {station!r} has rate_multipliers: its servers are part of its rate "
            "curve; scale the curve instead"
        )
    max_servers = as_positive_int(max_servers, "max_servers")

    def ok(m: int) -> bool:
        return _workload_R(_with_station(net, k, servers=m), arrival_rate, population) <= t

    lo, hi = 0, 1  # invariant: ok(hi) once found; lo is known to fail (or 0)
    while not ok(hi):
        lo = hi
        if hi >= max_servers:
            raise InvalidModelError(
                f"target {t:.6g} s is not met even with {max_servers} servers at "
                f"{station!r}: another station limits the response time"
            )
        hi = min(2 * hi, max_servers)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def best_upgrade(
    net: Network,
    *,
    arrival_rate: Any = None,
    population: Any = None,
    speedup: float = 2.0,
) -> UpgradeResult:
    """Rank the single upgrades of each queueing station by the response time they buy.

    Candidates per queueing station: a device ``speedup`` times faster (demand divided
    by ``speedup``) and one more server (not for a station with rate multipliers,
    whose curve already describes its parallelism). Each is solved at the given workload (an
    open ``arrival_rate`` or a closed ``population``); an upgrade that leaves an open
    network unstable has R = inf.

    Returns
    -------
    UpgradeResult
        The candidates sorted by response time (best first), with the baseline.
    """
    net = _check_net(net)
    if isinstance(speedup, bool) or not isinstance(speedup, int | float) or not speedup > 1.0:
        raise InvalidModelError(f"speedup must be a number > 1, got {speedup!r}")
    speedup = float(speedup)
    if not np.isfinite(speedup):
        raise InvalidModelError(f"speedup must be finite, got {speedup!r}")
    base = _workload_R(net, arrival_rate, population)
    options, R = [], []
    for k, s in enumerate(net.stations):
        if net.is_delay[k] or s.demand == 0:
            continue
        options.append(f"{s.name}: {speedup:g}x faster")
        R.append(
            _workload_R(_with_station(net, k, demand=s.demand / speedup), arrival_rate, population)
        )
        if getattr(s, "rate_multipliers", None) is not None:
            continue  # its curve already says how it serves more requests at once
        options.append(f"{s.name}: {int(s.servers) + 1} servers")
        R.append(
            _workload_R(_with_station(net, k, servers=int(s.servers) + 1), arrival_rate, population)
        )
    order = np.argsort(np.asarray(R), kind="stable")
    return UpgradeResult(
        options=tuple(options[i] for i in order),
        response_time=np.asarray(R, dtype=np.float64)[order],
        baseline_response_time=base,
        workload=(
            f"arrival_rate={arrival_rate}"
            if arrival_rate is not None
            else f"population={population}"
        ),
    )
