"""Bring a testbed up, tear it down, report its status.

``up`` creates, in this order, recording each resource in the state file before creating it:
the switch namespace (IPv4 forwarding on), one namespace per node joined to the switch by a veth
pair created directly inside the two namespaces (no interface ever appears in the host's
namespace), a TAP delay line in the node's namespace when its link has a delay
(:mod:`qnmodel.lab.testbed.delay`), addresses from the topology's private /16, a default route per
node, an htb shaper at the link rate on both ends' egress, the servers' disks and blkio
throttles, and the servers.

``down`` removes everything of the testbed: the resources in the state file and, in case the
state file is lost, every namespace, cgroup and mount whose name carries the testbed's prefix
``qnm-<name>-`` -- and nothing else. Processes are found by their network namespace (only ours).

The shaped TCP goodput is ``rate x 1448 / 1514`` at MTU 1500 (TCP payload per Ethernet frame
with timestamps; htb counts the 14-byte Ethernet header), 0.956 x rate.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .cgroups import CPU, CPU_SHARES, cpu_group, our_cgroups, rt_runtime_free
from .delay import delay_executable, splice_delay
from .services import disk_dir, make_disk, start_server
from .state import State
from .system import (
    TestbedError,
    ensure_commands,
    kill_pids,
    netns_inode,
    netns_of,
    pids_in_netns,
    process_start_time,
    require_root,
    run,
)
from .topology import PREFIX, SWITCH, Topology

__all__ = ["up", "down", "status", "shaper_burst", "GOODPUT_FACTOR"]

#: TCP goodput / shaped rate at MTU 1500: 1448 B of payload per 1514 B frame counted by tc
GOODPUT_FACTOR = 1448.0 / 1514.0

Log = Callable[[str], None] | None


def _say(log: Log, msg: str) -> None:
    if log:
        log(msg)


def _ns_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(PREFIX + name)}-[a-z][a-z0-9_]*$")


def _our_namespaces(name: str) -> list[str]:
    """Named network namespaces of testbed ``name`` (by prefix; node names have no '-')."""
    pat = _ns_pattern(name)
    try:
        names = os.listdir("/run/netns")
    except OSError:
        return []
    return sorted(n for n in names if pat.match(n))


def _our_cgroups(name: str) -> list[str]:
    return our_cgroups(_ns_pattern(name))


def _mounts_under(path: Path) -> list[str]:
    out = []
    root = str(path).rstrip("/") + "/"
    with open("/proc/self/mounts") as f:
        for line in f:
            mp = line.split()[1].replace("\\040", " ")
            if mp.startswith(root):
                out.append(mp)
    return sorted(out, key=len, reverse=True)


def shaper_burst(rate: float, burst: float | None = None) -> int:
    """The htb bucket in bytes: ``burst`` when the topology gives one, else the default.

    The default is at least 10 full frames and 1 ms at the rate, so a timer tick does not
    starve htb; it lets that many bytes pass at veth speed after an idle gap, which a real
    link does not (see :class:`qnmodel.lab.testbed.topology.Link`).
    """
    if burst is not None:
        return int(burst)
    return max(15140, int(rate * 1e-3))


def _shape(ns: str, dev: str, rate: float, burst: float | None = None) -> None:
    """htb at ``rate`` bytes/s on the egress of ``dev`` in namespace ``ns``."""
    bits = int(round(rate * 8))
    burst = shaper_burst(rate, burst)
    quantum = max(1514, min(200000, int(rate / 10)))
    run(["ip", "-n", ns, "link", "set", dev, "txqueuelen", "1000"])
    run(
        [
            "tc",
            "-n",
            ns,
            "qdisc",
            "replace",
            "dev",
            dev,
            "root",
            "handle",
            "1:",
            "htb",
            "default",
            "1",
        ]
    )
    run(
        [
            "tc",
            "-n",
            ns,
            "class",
            "replace",
            "dev",
            dev,
            "parent",
            "1:",
            "classid",
            "1:1",
            "htb",
            "rate",
            f"{bits}bit",
            "ceil",
            f"{bits}bit",
            "burst",
            str(burst),
            "cburst",
            str(burst),
            "quantum",
            str(quantum),
        ]
    )


def up(
    topo: Topology,
    *,
    log: Log = None,
    timeout: float = 60.0,
    install: bool = True,
    state_root: Path | None = None,
) -> dict:
    """Create the testbed of ``topo``; returns :func:`status`. On any error tears it down.

    Raises
    ------
    TestbedError
        not root; missing packages that cannot be installed; a testbed of the same name is
        already up (or was left by a crash: run :func:`down`); a server that does not start.
    """
    require_root("up")
    if any(n.link.delay > 0.0 for n in topo.nodes):
        delay_executable()  # built? (a clear error before anything is created)
    commands = ["ip", "tc"]
    files: list[str] = []
    if any(s.service == "nfs" for s in topo.servers):
        commands += ["rpcbind", "ganesha.nfsd"]
        files.append("/usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so")
    if install:
        ensure_commands(commands, files, log=log)
    state = State(topo.name, state_root)
    if state.exists() or _our_namespaces(topo.name):
        raise TestbedError(
            f"testbed {topo.name!r} is already up (or a crashed 'up' left parts of it): run "
            f"'qnmodel testbed down {topo.source}' first"
        )
    try:
        limit = int(Path("/proc/sys/user/max_net_namespaces").read_text())
    except (OSError, ValueError):
        limit = None
    if limit is not None and len(topo.nodes) + 1 > limit:
        raise TestbedError(
            f"too many namespaces: the topology needs {len(topo.nodes) + 1}, this machine allows "
            f"{limit} (/proc/sys/user/max_net_namespaces)"
        )
    t0 = time.monotonic()
    state.create(source=topo.source, prefix=topo.prefix, pid=os.getpid())
    try:
        _build(topo, state, log, timeout)
    except BaseException:
        _say(log, "up failed: tearing down what was created")
        down(topo.name, log=log, state_root=state_root)
        raise
    state.set("complete", True)
    _say(log, f"testbed {topo.name!r} up in {time.monotonic() - t0:.2f} s")
    return status(topo.name, state_root=state_root)


def _cpu_group(topo: Topology, state: State, log: Log) -> str:
    """Create the testbed's cpu group for ``priority = "high"``; returns the priority in force.

    With real-time group scheduling (``cpu.rt_runtime_us``) a new group may run no SCHED_FIFO
    thread until it is given real-time time: the group gets what its parent has not given to
    other groups, so the testbed's real-time clients and servers (``--realtime``) still work.
    """
    if topo.priority != "high":
        return "normal"
    if not (CPU / "cpu.shares").exists():
        _say(log, f"no cgroup-v1 cpu hierarchy at {CPU}: the testbed runs at normal priority "
                  "(other work on this machine can delay its servers and clients)")  # fmt: skip
        return "normal"
    free = rt_runtime_free()
    if free is not None and free <= 0:
        _say(log, f"no real-time time left in {CPU} (other groups hold it all): the testbed "
                  "runs at normal priority")  # fmt: skip
        return "normal"
    cg = cpu_group(topo)
    state.record("cgroups", str(cg))
    cg.mkdir(exist_ok=True)
    (cg / "cpu.shares").write_text(f"{CPU_SHARES}\n")
    if free is not None and not _give_rt_runtime(cg, free):
        os.rmdir(cg)
        _say(log, f"{cg}: the kernel gives it no real-time time: the testbed runs at normal "
                  "priority")  # fmt: skip
        return "normal"
    return "high"


def _give_rt_runtime(cg: Path, free: int) -> bool:
    """Write ``free`` us of real-time time to ``cg``; True once the kernel accepts it.

    A group removed a moment ago still counts against its parent until the kernel lets it go
    (a testbed brought up just after another one went down): try again for a second, then
    with half.
    """
    for runtime in (free, free // 2):
        for _ in range(50):
            try:
                (cg / "cpu.rt_runtime_us").write_text(f"{runtime}\n")
                return True
            except OSError:
                time.sleep(0.02)
    return False


def _build(topo: Topology, state: State, log: Log, timeout: float) -> None:
    state.set("priority", _cpu_group(topo, state, log))
    sw = topo.switch_namespace
    state.record("namespaces", sw)
    run(["ip", "netns", "add", sw])
    run(["ip", "-n", sw, "link", "set", "lo", "up"])
    run(["ip", "netns", "exec", sw, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"])
    nodes_info: dict[str, Any] = {}
    for n in topo.nodes:
        ns = topo.namespace(n.name)
        port = f"p{n.index}"
        state.record("namespaces", ns)
        run(["ip", "netns", "add", ns])
        run(
            [
                "ip",
                "link",
                "add",
                "eth0",
                "netns",
                ns,
                "type",
                "veth",
                "peer",
                "name",
                port,
                "netns",
                sw,
            ]
        )
        addr, gw = topo.address(n.name), topo.gateway(n.name)
        if n.link.mtu != 1500:
            for where, dev in ((ns, "eth0"), (sw, port)):
                run(["ip", "-n", where, "link", "set", dev, "mtu", str(n.link.mtu)])
        extra = splice_delay(topo, n, state, timeout) if n.link.delay > 0.0 else {}
        nic = extra.get("nic", "eth0")
        run(["ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", nic])
        run(["ip", "-n", sw, "addr", "add", f"{gw}/24", "dev", port])
        for where, dev in ((ns, "lo"), (ns, "eth0"), (sw, port)):
            run(["ip", "-n", where, "link", "set", dev, "up"])
        run(["ip", "-n", ns, "route", "add", "default", "via", gw])
        if n.link.rate is not None:
            _shape(ns, "eth0", n.link.rate, n.link.burst)  # the node's uplink
            _shape(sw, port, n.link.rate, n.link.burst)  # its downlink
        nodes_info[n.name] = {
            "role": n.role,
            "namespace": ns,
            "address": addr,
            "rate_B_s": n.link.rate,
            "burst_B": shaper_burst(n.link.rate, n.link.burst) if n.link.rate else None,
            "mtu": n.link.mtu,
            **extra,
        }
        _say(log, f"{n.role} {n.name}: namespace {ns}, {addr}")
    state.set("nodes", nodes_info)
    # IPv4 forwarding in the switch without reverse-path filtering (the stripe address below
    # is routed by port, so a reply's source has no plain route back)
    for key in ("all", "default", *[f"p{n.index}" for n in topo.nodes]):
        run(["ip", "netns", "exec", sw, "sysctl", "-q", "-w", f"net.ipv4.conf.{key}.rp_filter=0"])
    qnbench = None
    for s in topo.servers:
        disk = make_disk(topo, s, state)
        if s.service == "tcp" and qnbench is None:
            from ...bench import executable

            qnbench = str(executable())
        info = start_server(topo, s, state, disk, qnbench or "", timeout)
        if os.environ.get("QNMODEL_TESTBED_CRASH_AFTER") == s.name:
            # test hook: die like a killed 'up' (no cleanup), to test 'down' after a crash
            os.kill(os.getpid(), signal.SIGKILL)
        info["disk"] = {"kind": s.disk.kind, "path": str(disk) if disk else None}
        if s.disk.kind == "emu":  # the emulated device's configuration (SI units)
            info["disk"].update(latency=s.disk.latency, rate=s.disk.rate, dist=s.disk.dist,
                                servers=s.disk.servers)  # fmt: skip
        nodes_info[s.name].update(info)
        state.set("nodes", nodes_info)
        _say(log, f"server {s.name}: {s.service} on {topo.address(s.name)} ({s.disk.kind} disk)")
    stripe = _stripe_routes(topo)
    state.set("stripe", stripe)
    if stripe:
        _say(
            log,
            f"tcp servers also on {stripe['address']}, ports "
            f"{', '.join(str(m['port']) for m in stripe['members'])} (qnbench stripe)",
        )


def _stripe_routes(topo: Topology) -> dict | None:
    """Make every tcp server answer on ``topo.stripe_address`` at its own port (see there)."""
    tcp = [s for s in topo.servers if s.service == "tcp"]
    ports = [s.port for s in tcp]
    if not tcp or len(set(ports)) != len(ports):
        return None
    sw, vip = topo.switch_namespace, topo.stripe_address
    for i, s in enumerate(tcp):
        run(["ip", "-n", topo.namespace(s.name), "addr", "add", f"{vip}/32", "dev", "lo"])
        table = str(100 + i)
        run(["ip", "-n", sw, "route", "add", f"{vip}/32", "via", topo.address(s.name),
             "table", table])  # fmt: skip
        run(["ip", "-n", sw, "rule", "add", "ipproto", "tcp", "dport", str(s.port),
             "to", f"{vip}/32", "table", table])  # fmt: skip
    return {"address": vip, "members": [{"server": s.name, "port": s.port} for s in tcp]}


def down(name: str | Topology, *, log: Log = None, state_root: Path | None = None) -> dict:
    """Remove everything testbed ``name`` created (also after a crashed ``up``).

    Returns what was removed. Raises :class:`TestbedError` if something of ours could not be
    removed (the message names it); running ``down`` again is always safe.
    """
    require_root("down")
    topo = name if isinstance(name, Topology) else None
    name = topo.name if topo else str(name)
    state = State.load(name, state_root) or State(name, state_root)
    removed: dict[str, list] = {
        "processes": [],
        "mounts": [],
        "cgroups": [],
        "namespaces": [],
        "dirs": [],
    }
    pat = _ns_pattern(name)
    namespaces = sorted(
        {n for n in state["namespaces"] if pat.match(n)} | set(_our_namespaces(name))
    )
    # 1. processes: every process in one of our namespaces, and recorded ones still alive
    inodes = [i for i in (netns_inode(n) for n in namespaces) if i is not None]
    pids = set(pids_in_netns(inodes))
    # A recorded server is still the one we started (same start time) and runs in a testbed
    # namespace; a process in the host's own namespace was never ours, whatever the state
    # file says (a corrupt or forged file must not make down kill it).
    host = netns_of(os.getpid())
    for p in state["processes"]:
        if (
            p.get("start") is not None
            and process_start_time(p["pid"]) == p["start"]
            and netns_of(p["pid"]) not in (None, host)
        ):
            pids.add(p["pid"])
    left = kill_pids(sorted(pids))
    removed["processes"] = sorted(pids)
    # 2. mounts: tmpfs disks in our state directory
    for mp in sorted(set(state["mounts"]) | set(_mounts_under(state.dir)), key=len, reverse=True):
        if mp in _mounts_under(state.dir):
            run(["umount", "-l", mp], check=False)
            removed["mounts"].append(mp)
    # 3. cgroups (empty once the processes are gone)
    for cg in sorted(set(state["cgroups"]) | set(_our_cgroups(name))):
        if pat.match(Path(cg).name) and Path(cg).is_dir():
            for _ in range(50):
                try:
                    os.rmdir(cg)
                    break
                except OSError:
                    time.sleep(0.02)
            removed["cgroups"].append(cg)
    # 4. namespaces (their veth pairs and shapers go with them)
    for ns in namespaces:
        if netns_inode(ns) is not None:
            run(["ip", "netns", "delete", ns], check=False)
            removed["namespaces"].append(ns)
    # 5. our own directories inside the servers' disk directories
    dirs = set(state["dirs"])
    if topo is not None:
        dirs |= {
            str(d)
            for s in topo.servers
            if s.disk.kind in ("dir", "throttled")
            for d in [disk_dir(topo, s, state.dir)]
        }
    for d in sorted(dirs):
        if pat.match(Path(d).name) and Path(d).is_dir() and not Path(d).is_symlink():
            shutil.rmtree(d, ignore_errors=True)
            removed["dirs"].append(d)
    # 6. the state directory itself
    if state.dir.is_dir() and not _mounts_under(state.dir):
        shutil.rmtree(state.dir, ignore_errors=True)
    problems = []
    if left:
        problems.append(f"processes still alive: {left}")
    problems += [f"namespace {n}" for n in _our_namespaces(name)]
    problems += [f"cgroup {c}" for c in _our_cgroups(name)]
    problems += [f"mount {m}" for m in _mounts_under(state.dir)]
    if problems:
        raise TestbedError(f"testbed {name!r}: could not remove {', '.join(problems)}")
    _say(
        log,
        f"testbed {name!r} down: removed {len(removed['namespaces'])} namespaces, "
        f"{len(removed['processes'])} processes, {len(removed['cgroups'])} cgroups, "
        f"{len(removed['mounts'])} mounts, {len(removed['dirs'])} directories",
    )
    return removed


def status(name: str | Topology, *, state_root: Path | None = None) -> dict:
    """What testbed ``name`` has now: ``up`` (complete and every part present), nodes, leftovers."""
    name = name.name if isinstance(name, Topology) else str(name)
    state = State.load(name, state_root)
    present = _our_namespaces(name)
    doc: dict[str, Any] = {"name": name, "state_file": str(State(name, state_root).path)}
    if state is None:
        doc.update(
            up=False,
            complete=False,
            nodes={},
            namespaces=present,
            leftovers=bool(present or _our_cgroups(name)),
        )
        return doc
    nodes = state.data.get("nodes", {})
    procs_alive: dict[str, bool] = {}  # every process of the node (server, delay line) alive
    for p in state["processes"]:
        ok = process_start_time(p["pid"]) == p["start"]
        procs_alive[p["node"]] = procs_alive.get(p["node"], True) and ok
    for n, info in nodes.items():
        info["namespace_present"] = info["namespace"] in present
        if "pid" in info or "delay_pid" in info:
            info["running"] = procs_alive.get(n, False)
    all_ok = all(i["namespace_present"] and i.get("running", True) for i in nodes.values())
    doc.update(
        up=bool(state["complete"] and all_ok and f"{PREFIX}{name}-{SWITCH}" in present),
        complete=bool(state["complete"]),
        nodes=nodes,
        namespaces=present,
        switch=f"{PREFIX}{name}-{SWITCH}",
        stripe=state.data.get("stripe"),
        priority=state.data.get("priority", "normal"),
        leftovers=False,
    )
    return doc
