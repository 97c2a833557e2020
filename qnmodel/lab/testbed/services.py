"""Disks, blkio throttles and server processes of a testbed's storage servers.

* disks: a tmpfs mounted in the testbed's state directory, or our own new directory
  ``qnm-<name>-<server>`` inside a given directory of a real file system;
* throttled disks: a cgroup-v1 blkio group ``qnm-<name>-<server>`` with read/write bps limits on
  the block device under the directory; the server process joins it before it execs;
* ``tcp``: qnbench's TCP block server (``--engine tcp --tcp-role server``); with an ``emu``
  disk it serves every request through one emulated device (``--serve emu --dev-*``);
* ``nfs``: rpcbind + nfs-ganesha (VFS FSAL) in a private mount namespace whose ``/run`` is a
  fresh tmpfs, so each server has its own rpcbind socket and nothing lands in the host's /run.
  ``Graceless = true`` makes ganesha ready in about 0.1 s.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .cgroups import BLKIO, spawn
from .state import State
from .system import TestbedError, netns_inode, run
from .topology import Disk, Node, Topology

__all__ = [
    "NFS_EXPORT",
    "PROBE_PORT_OFFSET",
    "disk_dir",
    "emu_options",
    "link_probe",
    "make_disk",
    "start_server",
    "nfs_url",
]

#: the path under which every NFS server exports its disk
NFS_EXPORT = "/export"
#: a link probe (:func:`link_probe`) listens on the server's port plus this
PROBE_PORT_OFFSET = 10000


def disk_dir(topo: Topology, node: Node, state_dir: Path) -> Path | None:
    """The directory a server serves (None for a memory disk)."""
    d = node.disk
    if d.kind == "tmpfs":
        return state_dir / node.name / "disk"
    if d.kind in ("dir", "throttled"):
        return Path(d.path) / topo.namespace(node.name)
    return None


def _block_device(path: Path) -> str:
    """``MAJ:MIN`` of the whole disk holding ``path`` (blkio throttles whole disks)."""
    st = os.stat(path)
    mm = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    sysdev = Path(f"/sys/dev/block/{mm}")
    if not sysdev.exists():
        raise TestbedError(
            f"{path} is on device {mm}, which is not a block device (tmpfs, overlay?): a "
            "throttled disk needs a directory on a real disk"
        )
    if (sysdev / "partition").exists():
        mm = (sysdev.resolve().parent / "dev").read_text().strip()
    return mm


def make_disk(topo: Topology, node: Node, state: State) -> Path | None:
    """Create a server's disk (recorded in ``state`` first); returns the served directory."""
    d = node.disk
    path = disk_dir(topo, node, state.dir)
    if path is None:
        return None
    if d.kind == "tmpfs":
        path.mkdir(parents=True, exist_ok=True)
        state.record("mounts", str(path))
        run(
            [
                "mount",
                "-t",
                "tmpfs",
                "-o",
                f"size={int(d.size)},mode=0755",
                topo.namespace(node.name),
                str(path),
            ]
        )
        return path
    parent = Path(d.path)
    if not parent.is_dir():
        raise TestbedError(f"servers.{node.name}.disk.path: {parent} is not a directory")
    state.record("dirs", str(path))
    try:
        path.mkdir(mode=0o755)
    except FileExistsError:
        raise TestbedError(
            f"{path} already exists: left by an earlier testbed? run 'qnmodel testbed down' first"
        ) from None
    if d.kind == "throttled":
        mm = _block_device(path)
        cg = BLKIO / topo.namespace(node.name)
        if not BLKIO.is_dir():
            raise TestbedError(f"no cgroup-v1 blkio hierarchy at {BLKIO}: cannot throttle a disk")
        state.record("cgroups", str(cg))
        cg.mkdir(exist_ok=True)
        for key, rate in (("read", d.read_rate), ("write", d.write_rate)):
            if rate is not None:
                (cg / f"blkio.throttle.{key}_bps_device").write_text(f"{mm} {int(rate)}\n")
    return path


def emu_options(disk: Disk) -> list[str]:
    """qnbench options of the block server of an ``emu`` disk (``--serve emu --dev-*``).

    ``--realtime``: the server's connection threads wake at each request's finish instant with
    SCHED_FIFO (the testbed runs as root), so a loaded machine does not stretch the replies.
    """
    return [
        "--realtime",
        "--serve", "emu", "--dev-latency", repr(float(disk.latency)),
        "--dev-rate", repr(float(disk.rate or 0.0)), "--dev-dist", disk.dist,
        "--dev-servers", str(int(disk.servers)),
    ]  # fmt: skip


def nfs_url(topo: Topology, server: str, path: str = "") -> str:
    """``nfs://ADDRESS/export/PATH`` of a file on an NFS server of the testbed."""
    return f"nfs://{topo.address(server)}{NFS_EXPORT}/{path.lstrip('/')}"


def _ganesha_conf(node_dir: Path, export: Path) -> str:
    return f"""# written by qnmodel testbed; removed by 'qnmodel testbed down'
NFS_CORE_PARAM {{ Protocols = 3, 4; Mount_Path_Pseudo = true; }}
NFSV4 {{ Graceless = true; RecoveryRoot = "{node_dir}/recovery"; }}
EXPORT {{
    Export_Id = 1;
    Path = "{export}";
    Pseudo = "{NFS_EXPORT}";
    Access_Type = RW;
    Squash = No_Root_Squash;
    SecType = sys;
    Protocols = 3, 4;
    Transports = TCP;
    FSAL {{ Name = VFS; }}
}}
LOG {{ Default_Log_Level = EVENT; }}
"""


def _nfs_script(node_dir: Path) -> str:
    conf, log, pid = node_dir / "ganesha.conf", node_dir / "ganesha.log", node_dir / "ganesha.pid"
    return f"""set -e
# private /run: this server's own rpcbind socket, nothing in the host's /run
mount -t tmpfs -o size=4m,mode=0755 qnm-run /run
mkdir -p /run/rpcbind
for cmd in rpcbind ganesha.nfsd; do
    command -v $cmd >/dev/null || {{
        echo "$cmd is not installed (Debian packages rpcbind, nfs-ganesha)" >&2; exit 127; }}
done
rpcbind -f -w &
rpcb=$!
i=0
while [ ! -S /run/rpcbind.sock ]; do
    kill -0 $rpcb 2>/dev/null || {{
        st=0; wait $rpcb || st=$?
        echo "rpcbind exited (status $st) before it listened" >&2; exit 1; }}
    i=$((i + 1)); [ $i -lt 500 ] || {{ echo "rpcbind did not start within 5 s" >&2; exit 1; }}
    sleep 0.01
done
exec ganesha.nfsd -F -f {conf} -L {log} -p {pid}
"""


def _listening(pid: int, port: int, netns: str) -> bool:
    """Whether a TCP socket in ``netns`` (a ``net:[inode]`` link) listens on ``port``.

    ``/proc/PID/net/tcp`` lists the sockets of the namespace of PID, once PID is in ``netns``.
    """
    try:
        if os.readlink(f"/proc/{pid}/ns/net") != netns:
            return False
    except OSError:
        return False
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            return False
        for line in lines:
            f = line.split()
            if f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _tail(node_dir: Path, service: str) -> str:
    """The end of a server's error output (ganesha's own log for NFS), on one line."""
    text = b""
    for name in (f"{service}.err", "ganesha.log", f"{service}.out"):
        text = _read(node_dir / name)[-1500:]
        if text.strip():
            break
    return " ".join(text.decode(errors="replace").split()) or "(no output)"


def start_server(
    topo: Topology, node: Node, state: State, disk: Path | None, qnbench: str, timeout: float
) -> dict:
    """Start a server's service in its namespace and wait until it listens; returns its info."""
    node_dir = state.dir / node.name
    node_dir.mkdir(parents=True, exist_ok=True)
    if node.service == "tcp":
        cmd = [
            qnbench,
            "--engine",
            "tcp",
            "--tcp-role",
            "server",
            "--host",
            "0.0.0.0",
            "--port",
            str(node.port),
        ]
        if disk is not None:
            cmd += ["--serve", "file", "--dir", str(disk), "--size", str(int(node.file_size))]
        elif node.disk.kind == "emu":
            # its own --seed: no two servers' disks draw the same service-time sequence
            cmd += [*emu_options(node.disk), "--seed", str(node.index + 1)]
        port = node.port
    elif node.service == "nfs":
        export = disk
        (node_dir / "recovery").mkdir(exist_ok=True)
        (node_dir / "ganesha.conf").write_text(_ganesha_conf(node_dir, export))
        (node_dir / "nfs.sh").write_text(_nfs_script(node_dir))
        cmd = ["unshare", "--mount", "--propagation", "private", "sh", str(node_dir / "nfs.sh")]
        port = 2049
    else:
        return {"service": "none"}
    proc, out_path, err_path = spawn(topo, node.name, state, node.service, cmd,
                                     blkio=node.disk.kind == "throttled")  # fmt: skip
    _wait_listening(topo, node, proc, port, out_path, err_path, timeout)
    info = {"service": node.service, "pid": proc.pid, "port": port, "command": shlex.join(cmd)}
    if node.service == "nfs":
        info["url"] = nfs_url(topo, node.name)
    return info


def _wait_listening(
    topo: Topology,
    node: Node,
    proc,
    port: int,
    out_path: Path,
    err_path: Path,
    timeout: float,
    service: str | None = None,
) -> None:
    """Wait until ``proc`` listens on ``port`` in ``node``'s namespace (raise if it exits)."""
    service = service or node.service
    node_dir = out_path.parent
    netns = f"net:[{netns_inode(topo.namespace(node.name))}]"
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            out = (
                err_path.read_text(errors="replace")[-2000:]
                or out_path.read_text(errors="replace")[-2000:]
            )
            raise TestbedError(
                f"the {service} server of {node.name!r} exited with status "
                f"{proc.returncode} before listening: {' '.join(out.split())}"
            )
        # the server process (or ganesha, a child of the NFS script) listens in the namespace
        if _listening(proc.pid, port, netns) and (
            service != "nfs" or b"NFS SERVER INITIALIZED" in _read(node_dir / "ganesha.log")
        ):
            break
        if time.monotonic() > deadline:
            raise TestbedError(
                f"the {service} server of {node.name!r} does not listen on port {port} "
                f"after {timeout:g} s: {_tail(node_dir, service)}"
            )
        time.sleep(0.02)


@contextmanager
def link_probe(topo: Topology, server: str, *, state_root: Path | None = None,
               timeout: float = 10.0) -> Iterator[int]:  # fmt: skip
    """A memory-served qnbench ``tcp`` server inside ``server``'s namespace; yields its port.

    The link of a server measured *alone*: a server's own block server replies through its
    disk (an emulated device, a file, an NFS export), so a TCP sweep against it measures the
    disk too (issue 28: the links of emulated-disk servers read 10-28 % below their rate while
    the study's striped reads moved 0.95 x the rate through them). The probe replies from a
    memory buffer (qnbench ``--serve mem``) at ``server``'s address, port ``PROBE_PORT_OFFSET``
    above the server's (2049 + offset for an NFS server), through the same shaped link and
    in the same cgroups; it is stopped on exit and taken off the testbed's state (recorded
    there while it runs, so ``down`` stops it should this process die first).
    """
    from ...bench import executable

    node = topo.node(server)
    if node.role != "server":
        raise TestbedError(f"a link probe runs in a server node; {server!r} is a {node.role}")
    state = State.load(topo.name, state_root)
    if state is None:
        raise TestbedError(f"testbed {topo.name!r} is not up: no link probe without it")
    port = (node.port if node.service == "tcp" else 2049) + PROBE_PORT_OFFSET
    cmd = [str(executable()), "--engine", "tcp", "--tcp-role", "server", "--host", "0.0.0.0",
           "--port", str(port), "--serve", "mem", "--realtime"]  # fmt: skip
    proc, out_path, err_path = spawn(topo, server, state, "linkprobe", cmd)
    try:
        _wait_listening(topo, node, proc, port, out_path, err_path, timeout, "linkprobe")
        yield port
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        # gone: off the state's process list, which ``status`` requires alive on a node that is up
        state = State.load(topo.name, state_root)
        if state is not None:
            state.set("processes", [q for q in state["processes"] if q.get("pid") != proc.pid])
