"""Networked RAID whose stages overlap: pipelined transfers, (device, then link) branches.

Where a storage server's disk and the links are of the same speed, the stages of one request
overlap, and product-form stations in series -- which charge their sum -- overstate a lone
request's time (issue 28: 24.5 ms from MVA against 12.6 ms measured for a RAID0 full-stripe
read at N = 1). This module holds the overlapped structure of :class:`~qnmodel.NetworkedRAID`
(``form="corrected"``), closed and open, and bounds that stay bounds with overlap.

The structure (ours)
--------------------
A request runs the master's serial stations (its CPU, the other link direction), then forks
into one branch per chunk: k chunks on k of the K members. A branch is

* a *pipelined transfer* of the chunk: it crosses the member's link and the master's link
  *at once* (a TCP flow through two shaped links, each carrying it as fast as the slower of
  its shares allows), so a lone chunk takes the slower stage's time and not the sum, while
  each link spends its own time on it (the slowest stage governs an isolated transfer; every
  stage consumes capacity: the utilisation law, [LZGS84] eq. 3.1, holds at each);
* the member's disk: one FCFS server of mean d per chunk, shared by every request's chunks
  to that member.

Reads run the disk then the transfer; writes the transfer then the disk; a RAID5 write
smaller than a stripe (read-modify-write) runs two such fork-joins in turn over the same
members: its k touched chunks (data and parity) read back over ``link_in``, then written over
``link_out``. A disk's time per chunk has mean d and SCV ``disk_scv`` (1 exponential, 0
constant, otherwise the lognormal the simulator draws, :func:`qnmodel.model.laws.law_for_scv`):
the last-chunk law below holds for any such law (the order statistics of iid members), and the
closed solution gives the member in service a residual ``d (1 + scv) / 2`` ([Kle75] sec.
5.2). The master link is
shared by every branch of every request. With ``NetworkedRAID``'s one ``link_rate`` the
member link is as fast as the master's and carries one member's chunks only: it never
holds a chunk back more than the master's link does, and the request's time is governed by
the members' race and the master link (the member link's stage is always covered by the
term ``T_(k) + c`` of the link's Lindley recursion). The master link moves k chunks of
``c = D_link / k`` each; its discipline (FCFS, or TCP's processor sharing) does not change
when it empties, so the *last* chunk's departure of a lone request is exact either way.

Solutions
---------
* closed, n = 1..N: :func:`qnmodel.models.storage_forkjoin.fork_join_overlap` (Varki's mean
  value technique [Var99] for the members, the exact last-chunk departure law of a lone
  request [Lin52], [DN03], the arrival theorem [RL80] for what a request finds ahead), with k
  chunks over K members (each member sees a share k / K of the requests);
* open, Poisson arrivals at rate lambda (:func:`open_overlap`, ours, approximate): the serial
  stations are M/M/1 (``D / (1 - lambda D)``); a member is an M/M/1 queue of utilisation ``rho_d
  = lambda v d`` (v = k / K), whose sojourn is exponential of mean ``T_m = d / (1 - rho_d)``;
  the members' race of a read is Nelson and Tantawi's R_k(rho_d) ([NT88],
  :func:`qnmodel.solvers.forkjoin.nelson_tantawi`; exact for k = 2), spread as k independent
  exponentials of mean ``R_k / H_k`` (so that their maximum keeps that mean); the master link
  shares its rate among the chunks in flight (TCP: processor sharing), where a job of size x
  spends ``x / (1 - rho)`` on average whatever the others' sizes ([Kle76] sec. 4.4), so each
  chunk takes ``c' = c / (1 - rho_L)``, rho_L = lambda D_link; a read then leaves at ``E[L_k]``
  of those members and chunks (:func:`~qnmodel.models.storage_forkjoin.last_chunk_departure`), a
  write at ``E[max_j (j c' + S_j)]``, S_j independent exponentials of mean ``R_k / H_k`` again
  (the master sends its chunks one after the other; each then waits at its member). At lambda ->
  0 it is the exact isolated time R0. Why not the closed equations with time averages: a fixed
  point of the arrival-theorem backlogs at the link read 13-30 % low against the simulation when
  the link was the bottleneck (a FCFS backlog, where TCP shares);
* bounds (:func:`overlap_bounds`, ours): every stage consumes capacity, so the asymptotic
  bound X <= 1 / D_max of [LZGS84] sec. 5.2 holds with D_max over all stages (master CPU,
  each master link direction, the busiest member link and disk); a request is never faster
  than alone, so R(n) >= R0, the *overlapped* isolated time (:func:`isolated_time`, exact for
  exponential members), not the sum of demands D (which overlap makes a wrong floor: the
  issue's measured R(1) lay below BJB's lower bound). Together: ``R(n) >= max(R0, n D_max -
  Z)`` and ``X(n) <= min(n / (R0 + Z), 1 / D_max)``. Pessimistic: ``R(n) <= n R_ser``, with
  R_ser the isolated time with nothing overlapped (serial stations, the members' whole race,
  then all k chunks one after another), the time of a schedule that serves the n requests
  one after the other and overlaps nothing (an argument, not a proof for every discipline);
  ``X(n) >= n / (n R_ser + Z)``.

Notes
-----
Measured against the event simulation of the overlapped system
(:func:`qnmodel.simulate_storage`, which :func:`simulate` builds from the same parts: fluid
max-min links, FCFS exponential disks), over d / c = 1/4 .. 4, RAID0 reads and writes over
3 members and RAID5 full-stripe reads over 4, N = 1, 2, 4, 16 and open loads 30-80 % (table
and command in ``docs/explanation/overlap.md``): closed R within 0.7 % at N = 1 (exact up to the
simulation's noise), -1.5 ... -14.5 % at N = 2 for d / c >= 1 (optimistic: the mean backlog
inside Lindley's max, then the asymptotic cap), within 4.5 % at N >= 4 except RAID0 writes at
d / c = 2 (-8.0 % at N = 4), within 2.7 % at N = 16; open R within 7.8 % up to 60 % load, and
-16.3 ... +6.5 % at 80 %, where the simulation's 95 % half-widths are 10-40 % of R. 59 of 60
simulated closed points lie inside :func:`overlap_bounds` with their 95 % intervals (the
other: the simulation's X estimator 0.025 % above 1 / D_max at saturation).

Constant disks and read-modify-writes (``tests/models/overlap_table.py const rmw``, the same
grid, closed only): N = 1 exact; constant disks within 3.8 % for RAID0 reads and writes, RAID5
reads within 0.7 % except d / c = 4 (+6.4 % at N = 2, -9.3 % at N = 4); RAID5 one-chunk
read-modify-writes (two phases, 2 of 4 members) within 7.0 % at N = 16 but -22.3 ... +9.6 %
at N = 2-4 (mostly optimistic: two processor-sharing links in tandem, whose queues the
Lindley view of the work ahead undercounts; docs/explanation/overlap.md). 88 of 100 points
inside :func:`overlap_bounds`, the 12 others constant-disk points at an attained bound, beyond
it by at most 0.019 %.

References
----------
.. [Var99] E. Varki, "Mean value technique for closed fork-join networks", Proc. ACM
   SIGMETRICS 1999, Perf. Eval. Review 27(1):103-112.
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed multichain queuing
   networks", J. ACM 27(2):313-322, 1980.
.. [Lin52] D. V. Lindley, "The theory of queues with a single server", Proc. Cambridge
   Philos. Soc. 48(2):277-289, 1952.
.. [DN03] H. A. David, H. N. Nagaraja, *Order Statistics*, 3rd ed., Wiley 2003, sec. 2.2.
.. [NT88] R. Nelson, A. N. Tantawi, "Approximate analysis of fork/join synchronization in
   parallel queues", IEEE Trans. Computers 37(6):739-743, 1988.
.. [Kle75] L. Kleinrock, *Queueing Systems, Vol. 1: Theory*, Wiley 1975, sec. 5.2 (mean
   residual life).
.. [Kle76] L. Kleinrock, *Queueing Systems, Vol. 2: Computer Applications*, Wiley 1976,
   sec. 4.4 (processor sharing: E[T | x] = x / (1 - rho)).
.. [LZGS84] E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative System
   Performance*, Prentice-Hall 1984, eq. 3.1 (utilisation law) and sec. 5.2 (asymptotic
   bounds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import as_population, as_quantity, as_scv, check_fit_scv, check_size
from ..errors import InvalidModelError
from ..results.closed import BoundsResult
from ..solvers.forkjoin import (
    ForkJoinResult,
    expected_order_statistic,
    harmonic,
    nelson_tantawi,
)
from .storage_forkjoin import (
    _result,
    branch_times,
    expected_max,
    fork_join_overlap,
    last_chunk_departure,
)

__all__ = [
    "METHOD_OPEN",
    "METHOD_BOUNDS",
    "OverlapParts",
    "overlap_parts",
    "isolated_time",
    "serial_time",
    "open_overlap",
    "overlap",
    "overlap_bounds",
    "simulate",
]

METHOD_OPEN = (
    "approximate open fork-join with the master link inside the fork (overlapped stages: "
    "Nelson-Tantawi members, processor-sharing link slowdown)"
)
METHOD_BOUNDS = "overlap bounds (asymptotic over every stage; overlapped isolated time R0)"


@dataclass(frozen=True)
class OverlapParts:
    """The overlapped structure of one :class:`~qnmodel.NetworkedRAID` request.

    Attributes
    ----------
    stations : tuple of (str, float)
        The master's stations in order (name, demand in s), the data link among them.
    link : str
        The data link's station (``link_in`` for reads, ``link_out`` for writes).
    member : float
        d, one touched member's time per chunk (disk and server CPU), s.
    k : int
        Chunks (branches) per request.
    members : int
        K, the members they are spread over (k <= K).
    op : str
        ``"read"``, ``"write"`` or ``"read_modify_write"`` (a RAID5 write smaller than a
        stripe: the k touched chunks, data and parity, read back over ``link_in``, then
        written over ``link_out``; ``link`` is then ``link_in``).
    scv : float
        The member's SCV of service (1 exponential, the default; 0 constant; otherwise the
        lognormal of :func:`qnmodel.model.laws.law_for_scv`).
    """

    stations: tuple
    link: str
    member: float
    k: int
    members: int
    op: str
    scv: float = 1.0

    @property
    def phases(self) -> tuple:
        """The request's fork-joins in order, each ``(link, op)``."""
        if self.op == "read_modify_write":
            return (("link_in", "read"), ("link_out", "write"))
        return ((self.link, self.op),)

    @property
    def chunk_time(self) -> float:
        """c, one chunk's time on the master's data link (``link``), s."""
        return dict(self.stations)[self.link] / self.k


#: The largest closed population the overlapped model is solved for (n = 1..N in turn).
MAX_OVERLAP_N = 10_000
#: The largest disk SCV the overlapped model takes: from about 30 on its R(n) is no longer
#: increasing in n (RAID0 read over 3 disks, N = 4: R(2) = 21 ms > R(3) = 14 ms).
MAX_OVERLAP_SCV = 10.0


def overlap_parts(system, disk_scv=1.0) -> OverlapParts:
    """The overlapped structure of a ``form="corrected"`` NetworkedRAID (module docstring).

    Supported: RAID0 reads and writes of at most a stripe (k = the request's chunks), RAID5
    reads of at most a stripe's data (k chunks over K members), RAID5 full-stripe writes
    (k = K, data and parity) and RAID5 writes smaller than a stripe (read-modify-write: the
    request's data chunks and the parity, k = chunks + 1, read back, then written: two
    phases). ``disk_scv``: the SCV of a member's time per chunk (>= 0; 1 exponential, 0
    constant), which ``NetworkedRAID``'s demands do not carry.
    """
    scv = as_scv(disk_scv, "disk_scv")
    check_fit_scv(scv, "disk_scv", "the overlapped model", MAX_OVERLAP_SCV)
    return _parts(system, scv)


def _parts(system, scv: float) -> OverlapParts:
    """:func:`overlap_parts` of a validated SCV, any size (the simulation takes any)."""
    if system.form != "corrected":
        raise InvalidModelError(
            "the overlapped structure needs form='corrected' (one master link station per "
            f"direction); got form={system.form!r}"
        )
    K = int(system.stripe_width)
    chunks = int(math.ceil(system.job_size / system.stripe_unit - 1e-9))
    data = K - 1 if system.raid == "raid5" else K
    if system.raid not in ("raid0", "raid5"):
        raise InvalidModelError(
            f"the overlapped structure models raid0 and raid5, got raid={system.raid!r}: use "
            "mva() or fork_join(structure='forkjoin')"
        )
    if chunks > data:
        raise InvalidModelError(
            f"the overlapped structure models requests of at most one stripe's data ({data} "
            f"chunks), got {chunks} chunks: use mva() or fork_join(structure='forkjoin')"
        )
    rmw = bool(system.intermediates().get("read_modify_write", 0.0))
    op = "read_modify_write" if rmw else system.op
    if rmw or (system.raid == "raid5" and system.op == "write"):
        k = chunks + 1 if rmw else K  # data and parity
    else:
        k = chunks
    net = system.network(0.0, structure="forkjoin")
    stations = tuple((st.name, float(st.demand)) for st in net.stations
                     if not hasattr(st, "branches"))  # fmt: skip
    # per touched chunk: one chunk per member and phase (two phases for a read-modify-write)
    member = float(net.stations[-1].branches[0].demand) * K / (k * (2 if rmw else 1))
    link = "link_in" if system.op == "read" or rmw else "link_out"
    return OverlapParts(stations, link, member, k, K, op, scv)


def _split(parts: OverlapParts):
    names = [s for s, _ in parts.stations]
    D = np.array([v for _, v in parts.stations], dtype=np.float64)
    li = names.index(parts.link)
    return names, D, li, parts.chunk_time


def _phase_links(parts: OverlapParts) -> list[tuple[int, float, str]]:
    """(index of the link among the stations, chunk time c on it, op) of each phase."""
    names = [n for n, _ in parts.stations]
    return [(names.index(ln), dict(parts.stations)[ln] / parts.k, op) for ln, op in parts.phases]


def isolated_time(parts: OverlapParts) -> float:
    """R0, the mean time of a lone request with its stages overlapped, s.

    ``sum of the serial stations' demands + E[L_k]`` for reads (the last chunk's departure
    from the master link, :func:`~qnmodel.models.storage_forkjoin.last_chunk_departure`),
    ``+ E[max_j (j c + S_j)]`` for writes (the master sends its chunks one after another and
    each member serves its chunk on arrival), both for a read-modify-write (its read phase,
    then its write phase). Exact for members of the given law (exponential, constant or
    lognormal), FCFS or processor-sharing links of the same rate (module docstring).
    """
    names, D, li, c = _split(parts)
    ph = _phase_links(parts)
    serial = float(D.sum() - sum(D[i] for i, _c, _op in ph))
    return serial + sum(branch_times(parts.member, cp, parts.k, op, 0.0, 0.0, parts.scv)[0]
                        for _i, cp, op in ph)  # fmt: skip


def serial_time(parts: OverlapParts) -> float:
    """R_ser, a lone request's mean time with nothing overlapped, s.

    The serial stations, the members' whole race ``E[max of k S]`` (``d H_k`` for
    exponential members, d for constant ones) per phase and all k chunks of each phase on
    its master link one after another: ``D_serial + phases x E[max S] + sum of the links``.
    """
    names, D, li, c = _split(parts)
    race = expected_max(parts.member, np.zeros(parts.k), parts.scv)
    return float(D.sum()) + race * len(parts.phases)


def _dmax(parts: OverlapParts) -> tuple[float, str]:
    """The largest demand over every stage that consumes capacity, and its name."""
    names, D, li, c = _split(parts)
    v = parts.k / parts.members
    nph = len(parts.phases)
    cands = [
        *zip(D.tolist(), names, strict=True),
        (parts.member * v * nph, "disk (per member)"),
        *((cp * v, "member link (per member)") for _i, cp, _op in _phase_links(parts)),
    ]
    dm, name = max(cands)
    return float(dm), name


def open_overlap(parts: OverlapParts, arrival_rate) -> ForkJoinResult:
    """The open overlapped fork-join at Poisson rate ``arrival_rate`` (module docstring).

    Parameters
    ----------
    parts : OverlapParts
        The structure (:func:`overlap_parts`).
    arrival_rate : float or str
        lambda, requests/s (> 0; ``"40 Hz"``), below the saturation rate 1 / D_max.

    Returns
    -------
    ForkJoinResult
        One row; method :data:`METHOD_OPEN` (approximate).
    """
    lam = as_quantity(arrival_rate, "arrival_rate", "frequency", positive=True)
    if parts.op == "read_modify_write" or parts.scv != 1.0:
        raise InvalidModelError(
            "the open overlapped model takes exponential members and one phase, got "
            f"op={parts.op!r}, scv={parts.scv:g}: simulate the open system with "
            "NetworkedRAID.simulate(arrival_rate=...), or use the closed overlap(N) (which "
            "models read-modify-writes and members of any SCV) or mva()"
        )
    names, D, li, c = _split(parts)
    d, k, v = parts.member, parts.k, parts.k / parts.members
    dm, bott = _dmax(parts)
    if lam * dm >= 1.0:
        raise InvalidModelError(
            f"arrival_rate {lam:.6g}/s saturates {bott} (utilisation {lam * dm:.4g} >= 1): "
            f"give a rate below {1.0 / dm:.6g}/s"
        )
    serial = np.array([i != li for i in range(len(names))])
    r = np.where(serial, D / (1.0 - lam * D), 0.0)  # M/M/1 serial stations
    rho_d, rho_l = lam * v * d, lam * float(D[li])
    Tm = d / (1.0 - rho_d)  # a member's M/M/1 sojourn (exponential)
    c_ps = c / (1.0 - rho_l)  # a chunk's time on the processor-sharing link [Kle76]
    if parts.op == "read":
        race = nelson_tantawi(k, rho_d, d) if k > 1 else Tm  # [NT88]
        r_el = last_chunk_departure(race / harmonic(k), c_ps, k)
    else:  # chunk j sent after chunk j - 1, then its member's sojourn
        shifts = c_ps * np.arange(1, k + 1)
        spread = (nelson_tantawi(k, rho_d, d) if k > 1 else Tm) / harmonic(k)
        r_el = expected_order_statistic(np.full(k, spread), k, shifts=shifts)
        race = r_el - k * c_ps
    r[li] = r_el - race
    Rk = np.append(r, race)[None, :]
    return _result(METHOD_OPEN, np.array([lam]), Rk, np.array([Tm]), D, d, v, k, names, 0.0,
                   lam)  # fmt: skip


def overlap(system, N=None, *, arrival_rate=None, think_time=0.0,
            disk_scv=1.0) -> ForkJoinResult:  # fmt: skip
    """The overlapped NetworkedRAID, closed (n = 1..N) or open (``arrival_rate``).

    Closed: :func:`~qnmodel.models.storage_forkjoin.fork_join_overlap` over k chunks on K
    members, members of SCV ``disk_scv`` (1 exponential, 0 constant), one phase or a
    read-modify-write's two; open: :func:`open_overlap` (exponential members, one phase).
    Both approximate (module docstring); exact at N = 1.
    """
    parts = overlap_parts(system, disk_scv)
    if (N is None) == (arrival_rate is None):
        raise InvalidModelError(
            "give exactly one of N (closed population) and arrival_rate (open), got "
            f"N={N!r}, arrival_rate={arrival_rate!r}"
        )
    if N is None:
        return open_overlap(parts, arrival_rate)
    N = as_population(N, "N")
    check_size(
        N, MAX_OVERLAP_N,
        "overlap: N (each population n = 1..N is solved in turn, about 1.5 ms each)",
        "ask for a smaller N (the curve flattens long before), or the bounds",
    )  # fmt: skip
    Z = as_quantity(think_time, "think_time", "time")
    return fork_join_overlap(list(parts.stations), parts.member, parts.link, parts.k,
                             parts.phases[0][1], N, Z, members=parts.members, scv=parts.scv,
                             phases=parts.phases)  # fmt: skip


def overlap_bounds(parts: OverlapParts, N, think_time=0.0) -> BoundsResult:
    """Bounds on X(n) and R(n), n = 1..N, that stay bounds with overlapped stages.

    ``R(n) in [max(R0, n D_max - Z), n R_ser]`` and ``X(n) in [n / (n R_ser + Z),
    min(n / (R0 + Z), 1 / D_max)]`` (module docstring), R0 :func:`isolated_time`, R_ser
    :func:`serial_time`, D_max over every stage. ``parts``: :func:`overlap_parts` of a
    NetworkedRAID, or an :class:`OverlapParts` built by hand.
    """
    N = as_population(N, "N")
    Z = as_quantity(think_time, "think_time", "time")
    r0, rser = isolated_time(parts), serial_time(parts)
    dm, bott = _dmax(parts)
    n = np.arange(1, N + 1, dtype=np.float64)
    x_up = np.minimum(n / (r0 + Z), 1.0 / dm)
    r_lo = np.maximum(r0, n * dm - Z)
    r_up = n * rser
    x_lo = n / (r_up + Z)
    names = tuple(s for s, _ in parts.stations) + ("storage_servers",)
    return BoundsResult(
        method=METHOD_BOUNDS, n=n, throughput_lower=x_lo, throughput_upper=x_up,
        response_time_lower=r_lo, response_time_upper=r_up, station_names=names,
        think_time=float(Z), total_demand=float(rser), max_demand=dm, bottleneck=bott,
        saturation_throughput=1.0 / dm, n_star=(r0 + Z) / dm,
    )  # fmt: skip


def simulate(system, N=None, *, arrival_rate=None, think_time=0.0, disk_scv=1.0,
             jobs=3000, reps=3, seed=1):  # fmt: skip
    """Simulate the overlapped NetworkedRAID: the system :func:`overlap` models, by events.

    The simulation (:func:`qnmodel.simulation.storage.simulate_storage`) is built from the
    same parts as the model (:func:`overlap_parts`), so both describe one system:

    * the master's serial stations (every station of ``parts.stations`` but the phases'
      data links): FCFS exponential stations of those demands, in order;
    * the data link of each phase: a fluid max-min fair link whose rate moves one chunk
      (``stripe_unit`` bytes) in the model's chunk time c (``link_in`` for reads,
      ``link_out`` for writes; both for a read-modify-write), member links as fast
      (``NetworkedRAID`` has one ``link_rate``);
    * a member: one FCFS server of mean d per chunk (``parts.member``: disk and server CPU)
      and SCV ``disk_scv`` (exponential 1, constant 0, otherwise lognormal);
    * k chunks over K members placed as qnbench's ``stripe`` places them, the master
      sending a write's chunks one after another.

    Refused: cache hits (``master_cache_hit``, ``server_cache_hit`` > 0: a hit would make
    the member's time a mixture the simulation does not draw) and whatever
    :func:`overlap_parts` refuses (``form="paper"``, other RAID levels, requests of more
    than a stripe). ``N`` an int or a list of populations, or ``arrival_rate`` (1/s or a
    list); ``jobs``, ``reps``, ``seed`` as in ``simulate_storage``.

    Returns
    -------
    qnmodel.results.simulation.StorageSimulationResult
    """
    from ..simulation.storage import simulate_storage

    for name in ("master_cache_hit", "server_cache_hit"):
        if getattr(system, name):
            raise InvalidModelError(
                f"NetworkedRAID.simulate: {name}={getattr(system, name)!r} > 0 is not "
                "simulated (a hit would make a member's time a mixture of hit and miss): "
                f"give {name}=0, or use overlap() / mva(), which take the mean"
            )
    parts = _parts(system, as_scv(disk_scv, "disk_scv"))
    demand = dict(parts.stations)
    links = {ln for ln, _op in parts.phases}
    serial = [v for name, v in parts.stations if name not in links]
    chunk = float(system.stripe_unit)
    rate = {ln: chunk * parts.k / demand[ln] for ln in links}
    rate_out = rate.get("link_out", rate.get("link_in"))
    rate_in = rate.get("link_in", rate_out)
    if parts.op == "read_modify_write":
        raid, op, chunks = "raid5", "write", parts.k - 1
    elif system.raid == "raid5" and parts.op == "write":
        raid, op, chunks = "raid5", "write", parts.members - 1
    else:
        raid, op, chunks = system.raid, parts.op, parts.k
    return simulate_storage(
        members=parts.members, chunk_size=chunk, disk_time=parts.member, link_rate=rate_out,
        link_rate_in=rate_in, N=N, arrival_rate=arrival_rate, think_time=think_time,
        raid=raid, op=op, chunks=chunks, disk_scv=parts.scv, serial=serial, jobs=jobs,
        reps=reps, seed=seed,
    )  # fmt: skip
