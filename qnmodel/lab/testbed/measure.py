"""Measurements on a running testbed: qnbench inside a node's namespace, and the networked RAID.

The networked RAID is seed 002's system in miniature (Cui et al. 2006, ENBD): a master (a client
node) runs qnbench's ``stripe`` engine with ``--member tcp``; its K members are the topology's
``tcp`` servers, each in its own namespace behind its own shaped link, reached at the testbed's
stripe address (:attr:`Topology.stripe_address`, one port per server).

References
----------
.. [Cui06] Cui, Z. et al. (2006). I/O response-time bounds of networked storage systems
   (seed 002 of this project): the NetworkedRAID model compared here.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from typing import Any

from ...bench import BenchTrace, build_command, executable
from ...bench.launch import mpi_env, mpirun_command
from .cgroups import cpu_group, exec_argv, in_groups
from .lifecycle import status
from .system import TestbedError
from .topology import Topology

__all__ = [
    "bench_in",
    "bench_ranks_in",
    "mpi_argv",
    "stripe_options",
    "raid_model",
    "compare_raid0_reads",
]


def bench_in(topo: Topology, node: str, engine: str, *, timeout: float = 600.0,
             throttled: bool = False, **options: Any) -> BenchTrace:  # fmt: skip
    """Run qnbench ``engine`` with ``options`` (as :func:`qnmodel.bench.run`) inside ``node``.

    ``throttled=True`` runs it inside the blkio group of the node's throttled disk too (as
    the node's server runs), so file I/O to that disk sees the configured read/write rates.
    """
    if throttled and topo.node(node).disk.kind != "throttled":
        raise TestbedError(f"{node!r} has no throttled disk (throttled=True)")
    argv = exec_argv(topo, node, build_command(engine, options, executable()), blkio=throttled)
    cp = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if cp.returncode != 0:
        raise TestbedError(
            f"qnbench --engine {engine} in {node!r} failed (exit {cp.returncode}): "
            f"{' '.join(cp.stderr.split())[-600:]}"
        )
    return BenchTrace.from_json(cp.stdout)


def mpi_argv(topo: Topology, clients: Sequence[str], argv: Sequence[str]) -> list[str]:
    """The ``mpirun`` command running qnbench's MPI build with one rank per client node.

    Rank i joins client i's namespace (qnbench ``--netns``) before it measures, so each rank's
    traffic leaves through its own shaped link and the aggregate rank 0 reports crosses real
    links, as seed 002's and 004's multi-node runs did; ``argv`` are qnbench's options.
    """
    clients = list(clients)
    if not clients:
        raise TestbedError("mpi_argv needs at least one client node")
    known = {c.name for c in topo.clients}
    for c in clients:
        if c not in known:
            raise TestbedError(
                f"{c!r} is not a client of testbed {topo.name!r} (clients: {sorted(known)})"
            )
    if len(set(clients)) != len(clients):
        raise TestbedError(f"clients {clients} name a node twice: one rank per client namespace")
    names = ",".join(topo.namespace(c) for c in clients)
    return [*mpirun_command(len(clients)), str(executable(mpi=True)), *map(str, argv),
            "--netns", names]  # fmt: skip


def bench_ranks_in(topo: Topology, clients: Sequence[str], engine: str, *,
                   timeout: float = 600.0, **options: Any) -> BenchTrace:  # fmt: skip
    """Run qnbench ``engine`` on one MPI rank per client node (see :func:`mpi_argv`).

    Every point starts on all ranks together (a barrier); the document's ``mpi.aggregate``
    holds the sum over ranks per point and each rank's own figures.
    """
    argv = mpi_argv(topo, clients, build_command(engine, options, "qnbench")[1:])
    # the ranks are mpirun's children: they start in the testbed's cpu group
    argv = in_groups([g / "cgroup.procs" for g in (cpu_group(topo),) if g.is_dir()], argv)
    cp = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=mpi_env())
    if cp.returncode != 0:
        raise TestbedError(
            f"qnbench --engine {engine} on ranks {list(clients)} failed (exit {cp.returncode}): "
            f"{' '.join(cp.stderr.split())[-600:]}"
        )
    return BenchTrace.from_json(cp.stdout)


def stripe_options(topo: Topology, *, raid: int = 0, chunk: Any = "64 KiB") -> dict:
    """qnbench ``stripe`` options that use the testbed's ``tcp`` servers as the RAID members."""
    doc = status(topo)
    stripe = doc.get("stripe")
    if not doc["up"] or not stripe:
        raise TestbedError(
            f"testbed {topo.name!r} is not up with tcp servers on distinct ports: no stripe "
            "address (give every tcp server its own port)"
        )
    ports = [m["port"] for m in stripe["members"]]
    if ports != list(range(ports[0], ports[0] + len(ports))):
        raise TestbedError(
            f"the stripe engine reaches member m at port P+m: the tcp servers' ports {ports} "
            "must be consecutive in the topology's order"
        )
    return dict(raid=raid, members=len(ports), chunk=chunk, member="tcp", tcp_role="client",
                host=stripe["address"], port=ports[0])  # fmt: skip


def raid_model(topo: Topology, client: str, *, chunk: float, raid: str = "raid0",
               op: str = "read", form: str = "corrected"):  # fmt: skip
    """Today's :class:`~qnmodel.NetworkedRAID` of the testbed: full-stripe jobs, no CPU costs.

    Link rate from the client's link, MSS 1448 B (TCP timestamps) in 1514 B frames (what tc
    counts), memory disks (no seek, no rotation, unlimited rate). CPU times are set to 0: they
    are not calibrated yet, which is part of what the comparison shows. ``form`` is
    NetworkedRAID's demand composition: ``"corrected"`` (default) or ``"paper"``.
    """
    from ...models.storage import NetworkedRAID

    node = topo.node(client)
    k = sum(1 for s in topo.servers if s.service == "tcp")
    width = k - 1 if raid == "raid5" else k
    if node.link.rate is None:
        raise TestbedError(f"client {client!r} has no link rate: the model needs one")
    return NetworkedRAID(
        job_size=width * chunk, stripe_unit=chunk, stripe_width=k,
        master_time_per_unit=0.0, master_time_per_packet=0.0,
        server_time_per_unit=0.0, server_time_per_packet=0.0,
        link_rate=node.link.rate, disk_seek=0.0, disk_latency=0.0, disk_rate=1e15,
        mss=1448.0, frame_size=1514.0, raid=raid, op=op, form=form,
    )  # fmt: skip


def compare_raid0_reads(topo: Topology, client: str, jobs, *, chunk: float = 65536.0,
                        runtime: str = "2 s", warmup: str = "300 ms",
                        form: str = "corrected") -> list[dict]:  # fmt: skip
    """Measure full-stripe RAID0 reads at N = ``jobs`` and put exact MVA of today's model beside.

    The model is :func:`raid_model` in ``form`` (``"corrected"``, the default, or ``"paper"``).

    Returns one row per N: measured X (jobs/s, completions in the window), ``X_little`` = N / R
    (Little's law without think time; free of the +-N completions edge effect of a short
    window), R (s), p99 (s), and MVA's X and R with the relative errors
    (model - measured) / measured.
    """
    from ...solvers import mva

    opts = stripe_options(topo, raid=0, chunk=chunk)
    k = opts["members"]
    trace = bench_in(topo, client, "stripe", rw="read", bs=k * chunk, jobs=list(jobs),
                     runtime=runtime, warmup=warmup, **opts)  # fmt: skip
    model = raid_model(topo, client, chunk=chunk, form=form)
    res = mva(model.network(), max(jobs))
    rows = []
    for r in trace.results:
        n = r["jobs"]
        x_m, r_m = float(res.throughput[n - 1]), float(res.response_time[n - 1])
        x, rt = r["throughput_ops_s"], r["latency_s"]["mean"]
        rows.append(dict(N=n, X_measured=x, X_little=n / rt, R_measured=rt,
                         R_p99=r["latency_s"]["p99"], X_mva=x_m, R_mva=r_m,
                         err_X=(x_m - x) / x, err_R=(r_m - rt) / rt,
                         goodput_B_s=r["throughput_B_s"]))  # fmt: skip
    return rows
