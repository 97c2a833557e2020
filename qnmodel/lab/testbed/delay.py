"""A link's fixed delay: the user-space TAP delay line ``qndelay`` spliced into a node's link.

This kernel has no netem, so a delay is added in user space. In the node's namespace::

    stack -- tap0 ==[qndelay: FIFO, +delay each way]== tap1 -- br0 -- eth0 (veth) -- switch

The node's address lives on ``tap0``; ``tap1`` and the veth ``eth0`` are bridged; ``qndelay``
(built with the package beside qnbench, ``qnmodel/bench/csrc/delayline/qndelay.c``) forwards
every frame between the two TAP devices after ``delay`` seconds, in FIFO order per direction.
The htb shaper stays on ``eth0`` and on the switch port, so a frame is delayed and then
serialised at the link rate, as on a long wire. A round trip through one delayed link gains
``2 * delay``; two delayed nodes add their delays.

Each frame costs the line two copies and a wake-up; at MTU 9000 (``link.mtu = 9000``) a
1 Gbit/s stream is ~14 000 frames/s, a few per cent of one core.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from .cgroups import spawn
from .state import State
from .system import TestbedError, run
from .topology import Node, Topology

__all__ = ["ENV_VAR", "delay_executable", "splice_delay", "goodput_factor"]

#: environment variable naming a qndelay executable to use instead of the bundled one
ENV_VAR = "QNMODEL_QNDELAY"


def goodput_factor(mtu: int = 1500) -> float:
    """TCP goodput / shaped rate at ``mtu``: (mtu - 52) / (mtu + 14).

    52 B of IPv4 + TCP headers with timestamps per frame, 14 B of Ethernet header counted by
    tc: 0.956 at MTU 1500, 0.993 at MTU 9000.
    """
    return (mtu - 52.0) / (mtu + 14.0)


def delay_executable() -> Path:
    """Path of ``qndelay``: ``$QNMODEL_QNDELAY``, the package's ``_bin/qndelay``, or PATH."""
    env = os.environ.get(ENV_VAR)
    if env:
        p = Path(env)
        if p.is_file() and os.access(p, os.X_OK):
            return p
        raise TestbedError(f"{ENV_VAR}={env!r} is not an executable file")
    bundled = Path(__file__).resolve().parents[2] / "_bin" / "qndelay"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return bundled
    found = shutil.which("qndelay")
    if found:
        return Path(found)
    raise TestbedError(
        "the delay line qndelay is not built: reinstall the package (pip install .), which "
        "builds it beside qnbench, or point QNMODEL_QNDELAY at a built one"
    )


def splice_delay(topo: Topology, node: Node, state: State, timeout: float = 10.0) -> dict:
    """Put the delay line into ``node``'s link (its eth0 exists, has no address yet).

    Returns the node's info (``delay_s``, ``delay_pid``, ``nic`` = the device of its address).
    """
    ns = topo.namespace(node.name)
    exe = str(delay_executable())
    for tap in ("tap0", "tap1"):
        run(["ip", "-n", ns, "tuntap", "add", "mode", "tap", "name", tap])
    run(["ip", "-n", ns, "link", "add", "br0", "type", "bridge"])
    for dev in ("tap0", "tap1", "br0"):
        run(["ip", "-n", ns, "link", "set", dev, "mtu", str(node.link.mtu)])
    for dev in ("tap1", "eth0"):
        run(["ip", "-n", ns, "link", "set", dev, "master", "br0"])
    cmd = [exe, "--a", "tap0", "--b", "tap1", "--delay", repr(node.link.delay),
           "--mtu", str(node.link.mtu)]  # fmt: skip
    proc, out_path, err_path = spawn(topo, node.name, state, "delay", cmd)
    deadline = time.monotonic() + timeout
    while b"ready" not in out_path.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            why = " ".join(err_path.read_text(errors="replace").split()) or "(no output)"
            raise TestbedError(
                f"the delay line of {node.name!r} ({node.link.delay:g} s) did not start: {why}"
            )
        time.sleep(0.01)
    for dev in ("tap0", "tap1", "br0"):
        run(["ip", "-n", ns, "link", "set", dev, "up"])
    return {"delay_s": node.link.delay, "delay_pid": proc.pid, "nic": "tap0"}
