"""The ``raid`` validation study: seed 002's networked RAID on a real testbed.

A master (a client node) stripes RAID0 or RAID5 chunks over the topology's ``tcp`` block
servers (qnbench ``stripe --member tcp``), each server in its own namespace behind its own
shaped link. For every case (RAID level, operation, number of servers, request size) the
study calibrates the model bottom-up (:mod:`qnmodel.lab.validation.bottomup`: link rates, disk
rates, master CPU per stripe unit -- never the end-to-end curve), predicts X(n) and R(n) with
:class:`~qnmodel.NetworkedRAID` (``form="corrected"``, one station per server), bounds them
(BJB, [Cui06] eq. 1), solves exact MVA and the fork-join model, measures the closed loop at
each population n with repeats and compares.

Study file keys (``[raid]``)::

    client = "master"          # the node that stripes (default: the first client)
    chunk = "64 KiB"           # stripe unit
    populations = [1, 2, 4, 8, 16, 32]
    runtime = "1 s"            # measured time per point and repeat, at least
    warmup = "500 ms"          # at least
    cycles = 8                 # runtime >= cycles x R(n) of the model
    warmup_cycles = 16         # warm-up >= warmup_cycles x R(n)
    repeat = 3                 # repeats per point (the 95 % CIs come from them)
    form = "corrected"         # or "paper": the model's demand composition
    forkjoin = "forkjoin"      # or "forkjoin_overlap": the fork-join model beside MVA
                               # (the master link inside the fork; form = "corrected" only)
    access = "sequential"      # or "random": where each client's next request goes
    simulate = false           # true: also x_sim, r_sim from NetworkedRAID.simulate (the
                               # event simulation of the overlapped structure, < 1 s a point)
    max_steal = 0.03           # a repeat with more of the CPU stolen is re-run (1 = never)
    steal_retries = 3          # rounds of re-runs per population, at most

    [[raid.cases]]
    raid = "raid0"             # "raid0" or "raid5"
    op = "read"                # "read" or "write"
    servers = 3                # members: the first K tcp servers of the topology
    chunks = 3                 # request size in chunks (default: a stripe's data)

The measured window of each population grows with the model's R(n): with a 1 s window at
N = 32 over 100 Mbit/s (R about 0.35-0.7 s, p99 over 1 s) a client completes two or three
requests, the clients still run in the phase they all started in together (a RAID5
read-modify-write's two phases load opposite link directions, so in step they use one
direction at a time), and the long requests in flight at the window's end are left out.
Measured on the testbed: one-chunk RAID5 writes over 4 servers at N = 32 read R = 444-490 ms
in 1 s windows after 0.5 s of warm-up and 357-361 ms in 8 s windows after 3 s (model 360 ms).
The warm-up grows the most: the clients start together and one-chunk writes stay in step for
seconds. Over 3 servers at N = 16 (model 0.187 s), six repeats each: R = 0.201-0.223 s after
0.56 s (3 R) of warm-up, 0.179-0.207 s after 3 s; in the recorded grids the writes at N >= 12
read +2.2 ... +11.1 % above the model with 3 R(n) (``raid_100mbit_run7.json``) and
-1.8 ... +1.9 % with 16 R(n), the default (``raid_100mbit_run8.json``; -3.3 ... +3.9 % in the
next grid, ``raid_100mbit.json``).

``access``: with ``"sequential"`` (the default) every client walks the array from its start,
so at the same moment all clients' requests go to the same members; ``"random"`` places each
request at a uniformly random aligned offset (qnbench ``randread``/``randwrite``), the
independent placement a product-form model assumes. Measured once each on an idle machine
(100 Mbit/s, RAID5 over 3 servers, N = 1, 3, 4, 8, 16): the same picture either way --
one-chunk writes +0.6 ... +9.8 % (sequential) and +1.8 ... +10.0 % (random) above the
model's R at N >= 3, full-stripe reads -1.5 ... +0.1 % and -0.3 ... +3.4 %; 8 of 10 points
inside the bounds and MAPE X 2.4 % in both.

``max_steal``: on a virtual machine the hypervisor takes CPU time from under the testbed
(``steal`` in /proc/stat, reported by qnbench per repeat as ``cpu.host_steal_s``), and a
shaped link loses time while its CPUs are stolen (the shaper's timers and the packets' softirq
work wait with them). In a recorded 100 Mbit/s grid (``data/validation/raid_100mbit_run8.json``,
load average 0.5, which does not show it) the 55 repeats set aside, 3.1-15.0 % stolen, read R
+0.3 ... +16.2 % above the model (median +3.6 %, correlation 0.85 with the stolen share); in
an earlier one (``raid_100mbit_run7.json``) full-stripe reads over 3 servers at N = 16 read
+4.6, +7.9 and +10.2 % with 7.5, 9.6 and 15.4 % stolen, +0.5 % over the repeats kept. A repeat
whose steal share exceeds ``max_steal`` is re-run, in up to ``steal_retries`` further rounds;
every point keeps the steal share of each repeat it used (``steal``) and the repeats it set
aside (``rejected``: x, r, steal). When the rounds run out, the least disturbed repeats are
used and counted in ``disturbed``. Repeats kept at 2.8 % stolen still read slow: two points
of ``raid_100mbit_run8.json`` (3 % limit) at N = 4 that kept repeats with 2.8-3.7 % stolen
read R +2.1 and +2.5 % above the model, and +0.1 and +0.9 % in the next grid
(``raid_100mbit.json``, nothing over 0.5 % stolen), which sets ``max_steal = 0.01``.

The bounds carry the calibration's uncertainty: ``r_lower`` and ``x_upper`` come from the
link rate plus the half-width of its 95 % interval (over the repeats of the case's link
calibrations), ``r_upper`` and ``x_lower`` from the rate minus it; the bounds of the point
calibration alone are kept as ``r_lower_point`` etc. and their share as
``inside_bounds_share_point``.

The testbed's links are htb token buckets: after an idle gap a link passes its bucket
(``link.burst``; 1514 B at 100 Mbit/s and 15 140 B at 1 Gbit/s in the RAID topologies) at veth
speed, where a real link sends every frame at its rate. A request then finishes up to
burst / rate sooner per phase that finds the master's link idle (one phase; two for a RAID5
read-modify-write), 121 us in both topologies: at N = 1, where BJB's bounds meet (R = D), that
is 0.5-1.1 % of R at 100 Mbit/s and 3-10 % at 1 Gbit/s. :func:`bucket_credit` is that time;
each point carries ``r_lower_bucket`` (``r_lower`` less the credit) and the summary
``inside_bounds_share_bucket`` beside the pure BJB share.

References
----------
.. [Cui06] Cui B., Liu J., Wang G., Liu J., "Study on I/O response time bounds of network
   storage systems", Journal on Communications 27(1):69-74, 2006.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..._validate import as_quantity
from ...bench.trace import steal_share
from ...errors import InvalidModelError
from ...model import Network
from ...models.storage import NetworkedRAID
from ...models.storage_forkjoin import FORKJOIN_STRUCTURES
from ...models.storage_overlap import overlap_bounds, overlap_parts
from ...solvers.bounds import bounds as _bounds
from ...solvers.mva import mva as _mva
from ..testbed import GOODPUT_FACTOR, Topology, bench_in, down, stripe_options, up
from . import LOG
from ._common import machine_info, mean_ci, summarize
from ._raid_sim import sim_columns
from ._raid_summary import (
    _calibration_errors,
    bucket_credit,
    calibration_rows,
    inside_bucket,
    inside_overlap,
    inside_point,
    model_structure,
    overlap_mape,
    regime_rows,
    sim_mape,
    steal_summary,
    with_bucket,
)
from .bottomup import disk_rate, link_rate, master_cpu_per_unit
from .crosscheck import cross_checks, flag_notes, flags

__all__ = [
    "run",
    "parse",
    "case_model",
    "predict",
    "disk_scv",
    "measure",
    "windows",
    "inside_point",
    "inside_bucket",
    "inside_overlap",
    "overlap_mape",
    "bucket_credit",
    "steal_summary",
    "machine_info",
    "calibration_rows",
    "model_structure",
    "regime_rows",
]

_KEYS = (
    "client",
    "chunk",
    "populations",
    "runtime",
    "warmup",
    "repeat",
    "form",
    "forkjoin",
    "access",
    "max_steal",
    "steal_retries",
    "cases",
    "cycles",
    "warmup_cycles",
    "simulate",
)
_CASE_KEYS = ("raid", "op", "servers", "chunks")
#: TCP payload and Ethernet frame at MTU 1500 with timestamps (what tc counts)
MSS, FRAME = 1448.0, 1514.0
#: defaults of ``max_steal`` and ``steal_retries`` (also for a hand-made ``p`` given to measure)
MAX_STEAL, STEAL_RETRIES = 0.03, 3
#: measured time of each calibration run (three repeats each)
CAL_RUNTIME = "0.5 s"


def parse(spec: dict, topology: Topology | None) -> dict:
    """Validate the ``[raid]`` table against the topology; returns it with defaults filled."""
    if topology is None:
        raise InvalidModelError("a raid study needs study.topology (its testbed)")
    raw = spec.get("raid")
    if not isinstance(raw, dict):
        raise InvalidModelError("a raid study needs a [raid] table")
    for k in raw:
        if k not in _KEYS:
            raise InvalidModelError(f"raid.{k}: unknown key (allowed: {', '.join(_KEYS)})")
    tcp = [s for s in topology.servers if s.service == "tcp"]
    if not tcp:
        raise InvalidModelError(f"{topology.source}: a raid study needs tcp servers")
    client = raw.get("client", topology.clients[0].name)
    if not isinstance(client, str) or client not in {n.name for n in topology.clients}:
        raise InvalidModelError(f"raid.client: {client!r} is not a client of the topology")
    pops = raw.get("populations", [1, 2, 4, 8, 16, 32])
    if (
        not isinstance(pops, list)
        or not pops
        or not all(isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 256 for n in pops)
    ):
        raise InvalidModelError(f"raid.populations must be integers 1..256, got {pops!r}")
    repeat = raw.get("repeat", 3)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= 50:
        raise InvalidModelError(f"raid.repeat must be an integer 1..50, got {repeat!r}")
    cyc = {}
    for key, default in (("cycles", 8.0), ("warmup_cycles", 16.0)):
        v = raw.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1000:
            raise InvalidModelError(f"raid.{key} must be a number 0..1000, got {v!r}")
        cyc[key] = float(v)
    form = raw.get("form", "corrected")
    if not isinstance(form, str) or form not in ("paper", "corrected"):
        raise InvalidModelError(f"raid.form must be 'paper' or 'corrected', got {form!r}")
    fj = raw.get("forkjoin", "forkjoin")
    if not isinstance(fj, str) or fj not in FORKJOIN_STRUCTURES:
        raise InvalidModelError(
            f"raid.forkjoin must be 'forkjoin' or 'forkjoin_overlap', got {fj!r}"
        )
    if fj == "forkjoin_overlap" and form != "corrected":
        raise InvalidModelError(
            "raid.forkjoin = 'forkjoin_overlap' needs raid.form = 'corrected' (one master link "
            f"per direction), got form {form!r}"
        )
    access = raw.get("access", "sequential")
    if not isinstance(access, str) or access not in ("sequential", "random"):
        raise InvalidModelError(f"raid.access must be 'sequential' or 'random', got {access!r}")
    max_steal = raw.get("max_steal", MAX_STEAL)
    if (
        isinstance(max_steal, bool)
        or not isinstance(max_steal, int | float)
        or not (0 < max_steal <= 1)
    ):
        raise InvalidModelError(
            f"raid.max_steal must be a share of the CPU time in (0, 1], got {max_steal!r}"
        )
    sim = raw.get("simulate", False)
    if not isinstance(sim, bool):
        raise InvalidModelError(f"raid.simulate must be true or false, got {sim!r}")
    retries = raw.get("steal_retries", STEAL_RETRIES)
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 20:
        raise InvalidModelError(f"raid.steal_retries must be an integer 0..20, got {retries!r}")
    out = dict(
        client=client, max_steal=float(max_steal), steal_retries=retries,
        chunk=as_quantity(raw.get("chunk", 65536), "raid.chunk", "size", positive=True),
        populations=sorted(set(pops)), repeat=repeat, form=form, forkjoin=fj, access=access,
        simulate=sim,
        **cyc,
        runtime=as_quantity(raw.get("runtime", "1 s"), "raid.runtime", "time", positive=True),
        warmup=as_quantity(raw.get("warmup", "500 ms"), "raid.warmup", "time"),
    )  # fmt: skip
    cases = raw.get("cases") or [{"raid": "raid0", "op": "read", "servers": len(tcp)}]
    if not isinstance(cases, list):
        raise InvalidModelError(f"raid.cases must be a list of [[raid.cases]] tables: {cases!r}")
    out["cases"] = [_case(c, i, len(tcp)) for i, c in enumerate(cases)]
    return out


def _case(c: Any, i: int, k_max: int) -> dict:
    name = f"raid.cases[{i}]"
    if not isinstance(c, dict):
        raise InvalidModelError(f"{name} must be a table, got {c!r}")
    for k in c:
        if k not in _CASE_KEYS:
            raise InvalidModelError(f"{name}.{k}: unknown key (allowed: {', '.join(_CASE_KEYS)})")
    raid = c.get("raid", "raid0")
    if isinstance(raid, int) and not isinstance(raid, bool):
        raid = {0: "raid0", 5: "raid5"}.get(raid, raid)
    if not isinstance(raid, str) or raid not in ("raid0", "raid5"):
        raise InvalidModelError(f"{name}.raid must be 'raid0' or 'raid5', got {c.get('raid')!r}")
    op = c.get("op", "read")
    if not isinstance(op, str) or op not in ("read", "write"):
        raise InvalidModelError(f"{name}.op must be 'read' or 'write', got {op!r}")
    k = c.get("servers", k_max)
    low = 3 if raid == "raid5" else 2
    if isinstance(k, bool) or not isinstance(k, int) or not low <= k <= k_max:
        raise InvalidModelError(
            f"{name}.servers must be {low}..{k_max} (the topology's tcp servers) for {raid}, "
            f"got {k!r}"
        )
    data = k - 1 if raid == "raid5" else k
    chunks = c.get("chunks", data)
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
        raise InvalidModelError(f"{name}.chunks must be a positive integer, got {chunks!r}")
    label = f"{raid.upper()} {op}, {k} servers, {chunks} x chunk"
    return dict(raid=raid, op=op, servers=k, chunks=chunks, label=label)


def case_model(case: dict, cal: dict, chunk: float, form: str = "corrected") -> NetworkedRAID:
    """The bottom-up :class:`NetworkedRAID` of one case from the calibration ``cal``.

    ``cal`` holds ``link_rate`` (bytes/s), ``disk_rate`` (bytes/s) and ``time_per_unit``
    (master CPU seconds per stripe unit moved). Servers' own CPU is in the loopback time
    (see :mod:`qnmodel.lab.validation.bottomup`); seek and rotation are zero (memory disks).
    """
    return NetworkedRAID(
        job_size=case["chunks"] * chunk, stripe_unit=chunk, stripe_width=case["servers"],
        master_time_per_unit=cal["time_per_unit"], master_time_per_packet=0.0,
        server_time_per_unit=0.0, server_time_per_packet=0.0, link_rate=cal["link_rate"],
        disk_seek=0.0, disk_latency=0.0, disk_rate=cal["disk_rate"], mss=MSS,
        frame_size=FRAME, raid=case["raid"], op=case["op"], server_terms="one_server",
        form=form,
    )  # fmt: skip


def _network(model: NetworkedRAID) -> Network:
    """One station per server (the physical topology), stations of zero demand left out."""
    net = model.network(expand_servers=True)
    keep = [(s.name, s.demand) for s in net.stations if s.demand > 0.0]
    return Network.from_demands([d for _, d in keep], names=[n for n, _ in keep])


def predict(model: NetworkedRAID, populations: list[int], *,
            fast: NetworkedRAID | None = None,
            slow: NetworkedRAID | None = None,
            forkjoin: str = "forkjoin", disk_scv: float = 1.0,
            simulate: bool = False) -> dict[int, dict]:  # fmt: skip
    """Exact MVA, BJB bounds and fork-join MVA of ``model`` at each population.

    ``fast`` and ``slow``: the model at the ends of the calibration's interval (module
    docstring); the bounds then span both (``r_lower`` from ``fast``, ``r_upper`` from
    ``slow``) and the point calibration's bounds are kept with the suffix ``_point``.
    ``forkjoin``: the structure of :meth:`NetworkedRAID.fork_join` behind ``x_forkjoin`` and
    ``r_forkjoin``. Where the overlapped structure models the case
    (:func:`qnmodel.models.storage_overlap.overlap_parts`: at most a stripe; RAID5
    read-modify-writes as two phases), also its closed solution (``x_overlap``,
    ``r_overlap``) with members of SCV ``disk_scv`` (:func:`disk_scv`) and the bounds that hold
    with overlapped stages (``x_lower_overlap`` .. ``r_upper_overlap``); with ``simulate``
    the event simulation of that structure, ``x_sim``, ``r_sim`` and their half-widths
    (:func:`qnmodel.lab.validation._raid_sim.sim_columns`).
    """
    net = _network(model)
    top = max(populations)
    m, b = _mva(net, top), _bounds(net, top, method="bjb")
    bf = _bounds(_network(fast), top, method="bjb") if fast is not None else b
    bs = _bounds(_network(slow), top, method="bjb") if slow is not None else b
    fj = model.fork_join(top, structure=forkjoin)
    out = {}
    for n in populations:
        i = n - 1
        out[n] = dict(
            x_model=float(m.throughput[i]), r_model=float(m.response_time[i]),
            x_lower=float(bs.throughput_lower[i]), x_upper=float(bf.throughput_upper[i]),
            r_lower=float(bf.response_time_lower[i]), r_upper=float(bs.response_time_upper[i]),
            x_lower_point=float(b.throughput_lower[i]),
            x_upper_point=float(b.throughput_upper[i]),
            r_lower_point=float(b.response_time_lower[i]),
            r_upper_point=float(b.response_time_upper[i]),
            x_forkjoin=float(fj.throughput[i]), r_forkjoin=float(fj.response_time[i]),
        )  # fmt: skip
    try:
        parts = overlap_parts(model, disk_scv)
    except InvalidModelError:  # more than a stripe, or a RAID level it does not model
        return out
    ob, ov = overlap_bounds(parts, top), model.overlap(top, disk_scv=disk_scv)
    for n in populations:
        i = n - 1
        out[n].update(
            x_overlap=float(ov.throughput[i]), r_overlap=float(ov.response_time[i]),
            x_lower_overlap=float(ob.throughput_lower[i]),
            x_upper_overlap=float(ob.throughput_upper[i]),
            r_lower_overlap=float(ob.response_time_lower[i]),
            r_upper_overlap=float(ob.response_time_upper[i]),
        )  # fmt: skip
    if simulate:
        for n, cols in sim_columns(model, populations, disk_scv).items():
            out[n].update(cols)
    return out


def _calibrate(topo: Topology, p: dict) -> dict:
    """Links and disks once, master CPU per case (module docstring)."""
    client = p["client"]
    used = max(c["servers"] for c in p["cases"])
    tcp = [s for s in topo.servers if s.service == "tcp"][:used]
    links = {}
    for s in tcp:
        links[s.name] = {op: link_rate(topo, client, s.name, op=op) for op in ("read", "write")}
        LOG.info("link %s: read %.4g B/s, write %.4g B/s", s.name,
                 links[s.name]["read"]["rate"], links[s.name]["write"]["rate"])  # fmt: skip
    # an emulated disk's rate depends on the request size (latency + bytes / rate): calibrate
    # it at the study's chunk, the request its members serve; media of a fixed rate at 1 MiB
    disks = {s.name: disk_rate(topo, s.name, runtime=CAL_RUNTIME,
                               bs=p["chunk"] if s.disk.kind == "emu" else "1 MiB")
             for s in tcp}  # fmt: skip
    cpu = {}
    for c in p["cases"]:
        cpu[c["label"]] = master_cpu_per_unit(topo, client, raid=c["raid"], op=c["op"],
                                              chunks=c["chunks"], chunk=p["chunk"],
                                              servers=c["servers"],
                                              runtime=CAL_RUNTIME)  # fmt: skip
        LOG.info("master CPU, %s: %.3g s per chunk", c["label"],
                 cpu[c["label"]]["time_per_unit"])  # fmt: skip
    return {"links": links, "disks": disks, "cpu": cpu}


def _case_calibration(cal: dict, case: dict, tcp_names: list[str]) -> dict:
    """The case's demands' inputs: medians over its servers, and the link rate's interval.

    ``link_rate_ci``: half-width of the 95 % Student-t interval of the mean wire rate over
    every repeat of the case's link calibrations (both directions of each member link).
    """
    names = tcp_names[: case["servers"]]
    rates = [cal["links"][s][op]["rate"] for s in names for op in ("read", "write")]
    reps = [g / GOODPUT_FACTOR for s in names for op in ("read", "write")
            for g in cal["links"][s][op].get("repeats", [])]  # fmt: skip
    ci = mean_ci(reps)[1] if len(reps) > 1 else 0.0
    return dict(
        link_rate=float(np.median(rates)),
        link_rate_ci=float(ci),
        disk_rate=float(np.median([cal["disks"][s]["rate"] for s in names])),
        time_per_unit=cal["cpu"][case["label"]]["time_per_unit"],
    )


def windows(p: dict, r_model: dict[int, float]) -> dict[int, tuple[float, float]]:
    """(runtime, warm-up) per population: the study's, or ``cycles`` x R(n) when longer."""
    return {
        n: (max(p["runtime"], p["cycles"] * r_model[n]),
            max(p["warmup"], p["warmup_cycles"] * r_model[n]))
        for n in p["populations"]
    }  # fmt: skip


def measure(topo: Topology, p: dict, case: dict,
            r_model: dict[int, float] | None = None) -> dict[int, dict]:  # fmt: skip
    """The closed loop at every population: X and R means with 95 % CIs over the repeats.

    Each population runs for its own window (:func:`windows`, from the model's ``r_model``;
    without it the study's runtime and warm-up). Also the best repeat (``x_best``,
    ``r_best``): other work on the machine can only slow a repeat down, so the best one is
    the least disturbed.
    """
    opts = stripe_options(topo, raid=5 if case["raid"] == "raid5" else 0, chunk=p["chunk"])
    opts["members"] = case["servers"]
    opts.update(rw=("rand" if p.get("access") == "random" else "") + case["op"],
                bs=case["chunks"] * p["chunk"])  # fmt: skip
    win = windows(p, r_model or {n: 0.0 for n in p["populations"]})
    out: dict[int, dict] = {}
    for n in p["populations"]:
        runtime, warmup = win[n]

        def run_k(k: int) -> list[dict]:  # called at once, in this iteration
            return bench_in(topo, p["client"], "stripe", jobs=n, runtime=runtime,  # noqa: B023
                            warmup=warmup, repeat=k, **opts).results  # noqa: B023  # fmt: skip

        rs, rejected, disturbed = _repeats(p, run_k)
        x, x_ci = mean_ci([r["throughput_ops_s"] for r in rs])
        r, r_ci = mean_ci([r["latency_s"]["mean"] for r in rs])
        out[n] = dict(x_measured=x, x_ci=x_ci, r_measured=r, r_ci=r_ci,
                      r_p99=max(r["latency_s"]["p99"] for r in rs), x_little=n / r,
                      x_best=max(r["throughput_ops_s"] for r in rs),
                      r_best=min(r["latency_s"]["mean"] for r in rs),
                      repeats=len(rs), runtime=runtime, warmup=warmup,
                      steal=[steal_share(r) for r in rs], rejected=rejected,
                      disturbed=disturbed)  # fmt: skip
    return out


def _repeats(p: dict, run_k) -> tuple[list[dict], list[dict], int]:
    """``p["repeat"]`` repeats of one point, re-running those with too much CPU stolen.

    ``run_k(k)`` measures ``k`` repeats (qnbench results). A repeat whose steal share
    (:func:`~qnmodel.bench.trace.steal_share`; NaN, not measured, counts as none) exceeds
    ``p["max_steal"]`` is set aside and measured again, in up to ``p["steal_retries"]``
    rounds (:data:`MAX_STEAL` and :data:`STEAL_RETRIES` when ``p`` lacks them). Returns the
    repeats used, the ones set aside (x, r, steal) and how many of the used ones are over the
    limit (the least disturbed, when the rounds ran out).
    """
    limit = p.get("max_steal", MAX_STEAL)
    good: list[dict] = []
    bad: list[tuple[float, dict]] = []  # (steal share, result)
    for _ in range(p.get("steal_retries", STEAL_RETRIES) + 1):
        for res in run_k(p["repeat"] - len(good)):
            s = steal_share(res)
            if s > limit:
                bad.append((s, res))
            else:
                good.append(res)
        if len(good) >= p["repeat"]:
            break
    bad.sort(key=lambda sr: sr[0])
    disturbed = max(0, p["repeat"] - len(good))
    used = good + [res for _, res in bad[:disturbed]]
    rejected = [dict(x=res["throughput_ops_s"], r=res["latency_s"]["mean"], steal=s)
                for s, res in bad[disturbed:]]  # fmt: skip
    return used, rejected, disturbed


def disk_scv(topo: Topology, names: list[str]) -> float:
    """The SCV of the members' disks for the overlapped model: 0 when every one of ``names``
    has an emulated disk of constant law (``dist = "const"``), else 1 (exponential: emulated
    ``exp`` disks, and the exponential reading of a real or memory disk)."""
    disks = [s.disk for s in topo.servers if s.name in names]
    if disks and all(d.kind == "emu" and d.dist == "const" for d in disks):
        return 0.0
    return 1.0


def run(spec: dict, topology: Topology | None, out_dir: Path) -> dict:
    """Up, calibrate bottom-up, predict, measure, compare, down (always); the summary."""
    p = parse(spec, topology)
    topo = topology
    tcp_names = [s.name for s in topo.servers if s.service == "tcp"]
    machine = machine_info()
    LOG.info("testbed %s up", topo.name)
    up(topo)
    try:
        cal = _calibrate(topo, p)
        points, cases = [], []
        for case in p["cases"]:
            ccal = _case_calibration(cal, case, tcp_names)
            model = case_model(case, ccal, p["chunk"], p["form"])
            d = ccal["link_rate_ci"]
            fast, slow = (case_model(case, dict(ccal, link_rate=ccal["link_rate"] + s * d),
                                     p["chunk"], p["form"]) for s in (1.0, -1.0))  # fmt: skip
            scv = disk_scv(topo, tcp_names[: case["servers"]])
            pred = predict(model, p["populations"], fast=fast, slow=slow,
                           forkjoin=p["forkjoin"], disk_scv=scv,
                           simulate=p.get("simulate", False))  # fmt: skip
            LOG.info("measuring %s at n = %s", case["label"], p["populations"])
            meas = measure(topo, p, case, {n: pred[n]["r_model"] for n in p["populations"]})
            pts = [dict(n=n, case=case["label"], **meas[n], **pred[n]) for n in p["populations"]]
            credit = bucket_credit(topo, p["client"], case)
            pts = with_bucket(pts, credit)
            points += pts
            cases.append(dict(case, calibration=ccal, demands=model.demands(), disk_scv=scv,
                              model_structure=model_structure(p),
                              **summarize(pts),
                              inside_bounds_share_point=inside_point(pts),
                              inside_bounds_share_bucket=inside_bucket(pts),
                              inside_overlap_bounds_share=inside_overlap(pts),
                              **overlap_mape(pts), **sim_mape(pts),
                              bucket_credit=credit))  # fmt: skip
            LOG.info("%s: MAPE X %.1f %%, R %.1f %%", case["label"], cases[-1]["mape_x"],
                     cases[-1]["mape_r"])  # fmt: skip
            if "mape_x_overlap" in cases[-1]:
                LOG.info("%s, overlapped structure: MAPE X %.1f %%, R %.1f %%", case["label"],
                         cases[-1]["mape_x_overlap"], cases[-1]["mape_r_overlap"])  # fmt: skip
            if "mape_x_sim" in cases[-1]:
                LOG.info("%s, simulation: MAPE X %.1f %%, R %.1f %%", case["label"],
                         cases[-1]["mape_x_sim"], cases[-1]["mape_r_sim"])  # fmt: skip
    finally:
        down(topo)
        LOG.info("testbed %s down", topo.name)
    machine["load_average_after"] = list(os.getloadavg())
    calibration = _calibration_errors(cal)
    checks = cross_checks(calibration, cases, points)
    summary = dict(
        kind="raid", title=spec["study"].get("title", "networked RAID (seed 002)"),
        topology=topo.source, machine=machine,
        settings={k: v for k, v in p.items() if k != "cases"},
        calibration=calibration, calibration_rows=calibration_rows(cal),
        cross_checks=checks, calibration_flags=flags(checks),
        cases=cases, points=points, **summarize(points), goodput_factor=GOODPUT_FACTOR,
        inside_bounds_share_point=inside_point(points),
        inside_bounds_share_bucket=inside_bucket(points),
        inside_overlap_bounds_share=inside_overlap(points),
    )  # fmt: skip
    summary["steal"] = steal_summary(points, p["max_steal"])
    mf = [abs(c["mape_x"]) for c in cases]
    summary["notes"] = [
        f"model: NetworkedRAID(form={p['form']!r}) per case, exact MVA over one station per "
        f"server; BJB bounds; fork-join MVA (Varki, structure {p['forkjoin']!r}) beside it",
        f"worst case MAPE of X: {max(mf):.1f} % ({cases[int(np.argmax(mf))]['label']})",
        *flag_notes(checks),
    ]
    st = summary["steal"]
    if st["median"] is not None:
        summary["notes"].append(
            f"CPU stolen by the hypervisor: median {100 * st['median']:.1f} %, at most "
            f"{100 * st['max']:.1f} % of a kept repeat; {st['rejected']} repeats over "
            f"{100 * p['max_steal']:.0f} % set aside and re-run; {st['disturbed_points']} "
            "points had to keep some (raid.max_steal)"
        )
    return summary
