"""The testbed's control groups and the one way a command runs inside a node.

* **cpu** (``priority = "high"``, the default): one cgroup-v1 ``cpu`` group
  ``qnm-<name>-testbed`` holds every process the testbed starts (servers, delay lines) and every
  measurement run inside a node. Its ``cpu.shares`` is the kernel's largest, 262144: the group
  weighs as much as 256 busy processes of the default weight 1024, so with two CPU hogs beside
  it the testbed still gets 262144 / (262144 + 2 x 1024) = 99.2 % of the CPU time it asks for,
  and a waking server or client preempts a hog at once (CFS scales the wake-up granularity by
  the waker's weight). Work outside the testbed slows it only through what no cgroup holds:
  the kernel's own threads (``ksoftirqd``, which runs deferred network work) and the
  hypervisor (``steal`` in /proc/stat, which qnbench reports per result).
* **blkio** (a ``throttled`` disk): the group ``qnm-<name>-<server>`` whose bps limits make the
  server's directory a disk of the configured rate (:func:`qnmodel.lab.testbed.services.make_disk`).

:func:`exec_argv` is the command line that joins these groups and then the node's network
namespace (in that order: inside the namespace ``/sys`` is the namespace's own).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from .state import State
from .system import process_start_time
from .topology import PREFIX, Topology

__all__ = [
    "BLKIO",
    "CPU",
    "CPU_SHARES",
    "blkio_group",
    "cpu_group",
    "exec_argv",
    "in_groups",
    "our_cgroups",
    "rt_runtime_free",
    "spawn",
]

BLKIO = Path("/sys/fs/cgroup/blkio")
CPU = Path("/sys/fs/cgroup/cpu")
#: the kernel's largest cpu.shares (MAX_SHARES = 2^18, kernel/sched/sched.h)
CPU_SHARES = 262144

# joins every cgroup.procs file given before "--", then execs the rest (the pid stays the same)
_JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


def cpu_group(topo: Topology) -> Path:
    """The testbed's cpu group (it exists while a ``priority = "high"`` testbed is up)."""
    return CPU / f"{PREFIX}{topo.name}-testbed"


def blkio_group(topo: Topology, node: str) -> Path:
    """The blkio group of ``node``'s throttled disk."""
    return BLKIO / topo.namespace(node)


def rt_runtime_free() -> int | None:
    """Microseconds of real-time time per period the cpu root has not given to a group.

    None without real-time group scheduling (no ``cpu.rt_runtime_us``): then any group may
    run SCHED_FIFO threads. A group's runtime is at most its parent's minus its siblings'
    (the kernel refuses more, ``tg_rt_schedulable``).
    """
    try:
        total = int((CPU / "cpu.rt_runtime_us").read_text())
        taken = 0
        for entry in os.scandir(CPU):
            if entry.is_dir(follow_symlinks=False):
                taken += max(0, int(Path(entry.path, "cpu.rt_runtime_us").read_text()))
    except (OSError, ValueError):
        return None
    return total - taken


def our_cgroups(pattern) -> list[str]:
    """Every cpu and blkio group whose name matches ``pattern`` (a compiled regex)."""
    out = []
    for root in (CPU, BLKIO):
        try:
            out += [str(root / n) for n in os.listdir(root) if pattern.match(n)]
        except OSError:
            pass
    return sorted(out)


def exec_argv(topo: Topology, node: str, argv: Sequence[str], *, blkio: bool = False) -> list[str]:
    """The command line that runs ``argv`` inside a node's namespace.

    It joins the testbed's cpu group when the testbed has one, and with ``blkio=True`` the
    blkio group of the node's throttled disk when there is one, before it enters the namespace.
    """
    topo.node(node)
    groups = [g / "cgroup.procs" for g in (cpu_group(topo),) if g.is_dir()]
    if blkio and blkio_group(topo, node).is_dir():
        groups.append(blkio_group(topo, node) / "cgroup.procs")
    inside = ["ip", "netns", "exec", topo.namespace(node), *map(str, argv)]
    return in_groups(groups, inside)


def in_groups(procs: Sequence[Path], argv: Sequence[str]) -> list[str]:
    """``argv`` run after joining the cgroups whose ``cgroup.procs`` files are ``procs``."""
    if not procs:
        return list(argv)
    return ["sh", "-c", _JOIN, "sh", *map(str, procs), "--", *argv]


def spawn(topo: Topology, node: str, state: State, service: str, argv: Sequence[str], *,
          blkio: bool = False) -> tuple[subprocess.Popen, Path, Path]:  # fmt: skip
    """Start a long-running process of the testbed inside ``node`` (:func:`exec_argv`).

    Its output goes to ``<state dir>/<node>/<service>.out`` and ``.err``; it runs in its own
    session and is recorded in ``state`` (pid and start time, so ``down`` stops it and only
    it). Returns the process and the two output paths.
    """
    node_dir = state.dir / node
    node_dir.mkdir(parents=True, exist_ok=True)
    out_path, err_path = node_dir / f"{service}.out", node_dir / f"{service}.err"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(exec_argv(topo, node, argv, blkio=blkio),
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True, cwd="/")  # fmt: skip
    state.record("processes", {"pid": proc.pid, "start": process_start_time(proc.pid),
                               "node": node, "service": service})  # fmt: skip
    return proc, out_path, err_path
