"""A real networked-storage testbed on one machine (root): namespaces, shaped links, servers.

>>> from qnmodel import testbed
>>> topo = testbed.load_topology("examples/testbed/nfs_100mbit.toml")     # doctest: +SKIP
>>> testbed.up(topo)                                                      # doctest: +SKIP
>>> testbed.exec_argv(topo, "c1", ["qnbench", "--engine", "tcp", ...])     # doctest: +SKIP
>>> testbed.down(topo)                                                    # doctest: +SKIP

Every client and storage server is a network namespace ``qnm-<name>-<node>`` joined to a
switch namespace by a veth pair shaped with htb at the node's link rate; servers run nfs-ganesha
(with its own rpcbind) or qnbench's TCP block server on a tmpfs, a directory of a real file
system or a blkio-throttled one. ``down`` removes all of it, also after a crashed ``up``.
See ``docs/how-to/testbed.md``.
"""

from __future__ import annotations

from .cgroups import exec_argv
from .lifecycle import GOODPUT_FACTOR, down, status, up
from .measure import (
    bench_in,
    bench_ranks_in,
    compare_raid0_reads,
    mpi_argv,
    raid_model,
    stripe_options,
)
from .services import NFS_EXPORT, nfs_url
from .system import TestbedError
from .topology import (
    DISK_KINDS,
    MAX_NODES,
    SERVICES,
    Disk,
    Link,
    Node,
    Topology,
    load_topology,
    parse_topology,
)

__all__ = [
    "DISK_KINDS",
    "GOODPUT_FACTOR",
    "MAX_NODES",
    "NFS_EXPORT",
    "SERVICES",
    "Disk",
    "Link",
    "Node",
    "TestbedError",
    "Topology",
    "bench_in",
    "bench_ranks_in",
    "compare_raid0_reads",
    "down",
    "exec_argv",
    "load_topology",
    "mpi_argv",
    "nfs_url",
    "parse_topology",
    "raid_model",
    "status",
    "stripe_options",
    "up",
]
