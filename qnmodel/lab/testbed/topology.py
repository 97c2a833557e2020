"""The declarative testbed topology: a TOML file read and validated into plain dataclasses.

A testbed is a star: every node (client or storage server) is its own network namespace with
one interface ``eth0``, joined by a veth pair to a switch namespace that routes between the
nodes. Each node's link rate shapes both directions of its veth pair (the node's egress and the
switch port's egress), so a node's link is its NIC: all traffic to and from the node shares it.

Format (every rate, size and time a number in SI units or a unit string)::

    [testbed]
    name = "demo"                    # [a-z][a-z0-9_]*, at most 12 characters
    subnet = "10.213.0.0/16"         # optional: a private /16, used only inside the namespaces
    priority = "high"                # optional: "high" (default) puts every testbed process in
                                     # one cgroup weighted 256 busy processes ("normal": none),
                                     # so other work on the machine barely delays the testbed

    [[clients]]
    name = "c1"
    link = { rate = "1 Gbit/s" }     # optional link; also delay = "5 ms" (one way, each
                                     # direction: a TAP delay line), mtu = 9000 and
                                     # burst = "1514 B" (the shaper's bucket, see Link)

    [[servers]]
    name = "s1"
    service = "nfs"                  # "nfs" (nfs-ganesha), "tcp" (qnbench tcp server), "none"
    link = { rate = "100 Mbit/s" }
    disk = { kind = "tmpfs", size = "256 MiB" }
    # kinds: tmpfs {size}; dir {path}; throttled {path, read_rate, write_rate};
    #        memory (tcp only: replies from memory);
    #        emu {latency, rate, dist, servers} (tcp only: qnbench's emulated device, below)
    port = 5300                      # tcp only (default 5300)
    file_size = "64 MiB"             # tcp with a disk: size of the file it serves

An ``emu`` disk is qnbench's emulated device inside the block server (``--serve emu``): every
request the server receives, from all its clients, queues at one FCFS station of ``servers``
identical servers, each request of B bytes served in ``latency + B / rate`` seconds, constant
(``dist = "const"``) or exponential with that mean (``dist = "exp"``)::

    disk = { kind = "emu", latency = "4 ms", rate = "100 MB/s", dist = "exp", servers = 1 }

The keys are qnbench's ``--dev-latency``, ``--dev-rate``, ``--dev-dist`` and ``--dev-servers``;
``rate`` may be left out (no transfer term), ``latency`` too when ``rate`` is given.

Nothing here touches the system; :mod:`qnmodel.lab.testbed.lifecycle` brings a topology up.
"""

from __future__ import annotations

import ipaddress
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._validate import as_quantity, read_text_file
from ...errors import InvalidModelError, InvalidTypeError, UnitError

__all__ = [
    "DISK_KINDS",
    "EMU_DISTS",
    "MAX_NODES",
    "PRIORITIES",
    "SERVICES",
    "Disk",
    "Link",
    "Node",
    "Topology",
    "load_topology",
    "parse_topology",
]

#: disk kinds a server may have
DISK_KINDS = ("tmpfs", "dir", "throttled", "memory", "emu")
#: service laws of an ``emu`` disk (qnbench ``--dev-dist``), with the spellings accepted
EMU_DISTS = {"const": "const", "constant": "const", "deterministic": "const",
             "exp": "exp", "exponential": "exp"}  # fmt: skip
#: most servers of one emulated device (qnbench QNB_EMU_MAX_SERVERS)
EMU_MAX_SERVERS = 4096
#: services a server may run
SERVICES = ("nfs", "tcp", "none")
#: at most this many nodes (one /24 of the /16 each, and one switch namespace besides)
MAX_NODES = 250
#: the namespace prefix of every testbed: ``qnm-<name>-<node>``
PREFIX = "qnm-"
#: testbed.priority values (:mod:`qnmodel.lab.testbed.cgroups`)
PRIORITIES = ("high", "normal")
SWITCH = "switch"

#: link MTU range (Ethernet minimum for IPv4 .. jumbo frames)
MTU_MIN, MTU_MAX = 576, 9000
#: the longest link delay (one way), seconds
MAX_DELAY = 10.0

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_TOPO_NAME_MAX = 12  # "qnm-" + 12 + "-" + 14 stays a readable namespace name
_NODE_NAME_MAX = 14


@dataclass(frozen=True)
class Link:
    """A node's link: ``rate`` in bytes/s (None: not shaped), ``delay`` in seconds, ``mtu``.

    ``delay`` is added once in each direction of the node's link (a round trip through it
    gains ``2 * delay``) by a user-space TAP delay line (:mod:`qnmodel.lab.testbed.delay`).

    ``burst`` is the shaper's token bucket in bytes (None: the default of
    :func:`qnmodel.lab.testbed.lifecycle.shaper_burst`, 10 frames or 1 ms at the rate, whichever
    is larger). A real link has no burst: after an idle gap its first frame still leaves at
    the line rate, while the shaper lets a full bucket pass at veth speed. ``burst`` of one
    frame (``mtu + 14`` bytes) is a faithful link; htb reaches the configured rate with it at
    100 Mbit/s but not at 1 Gbit/s on a 2-core machine (measured 4 % short).
    """

    rate: float | None = None
    delay: float = 0.0
    mtu: int = 1500
    burst: float | None = None


@dataclass(frozen=True)
class Disk:
    """A server's disk: ``kind`` in :data:`DISK_KINDS` with its parameters (SI units).

    ``emu`` disks: ``latency`` (s), ``rate`` (B/s, None: no transfer term), ``dist``
    (``"const"`` or ``"exp"``) and ``servers``.
    """

    kind: str = "memory"
    path: str | None = None
    size: float | None = None
    read_rate: float | None = None
    write_rate: float | None = None
    latency: float = 0.0
    rate: float | None = None
    dist: str = "const"
    servers: int = 1

    def service_time(self, nbytes: float) -> float:
        """Mean service time (s) of an ``emu`` disk for one request of ``nbytes`` bytes:
        ``latency + nbytes / rate`` (qnbench ``engines/emu.c``)."""
        if self.kind != "emu":
            raise InvalidModelError(f"a {self.kind} disk has no configured service time")
        return self.latency + (nbytes / self.rate if self.rate else 0.0)


@dataclass(frozen=True)
class Node:
    """A client or storage server: one network namespace with interface ``eth0``."""

    name: str
    role: str  # "client" or "server"
    index: int  # position in the topology (clients first): the node's /24 is subnet + index + 1
    link: Link = field(default_factory=Link)
    service: str = "none"
    disk: Disk = field(default_factory=Disk)
    port: int = 5300
    file_size: float = 64 * 1024**2


@dataclass(frozen=True)
class Topology:
    """A validated testbed topology (see the module docstring for the TOML format)."""

    name: str
    subnet: ipaddress.IPv4Network
    clients: tuple[Node, ...]
    servers: tuple[Node, ...]
    source: str = "<dict>"
    #: "high": one cpu cgroup of the largest weight for the testbed's processes
    #: (:mod:`qnmodel.lab.testbed.cgroups`); "normal": none
    priority: str = "high"

    @property
    def nodes(self) -> tuple[Node, ...]:
        return self.clients + self.servers

    @property
    def prefix(self) -> str:
        """The prefix of every name this testbed creates: ``qnm-<name>-``."""
        return f"{PREFIX}{self.name}-"

    def namespace(self, node: str) -> str:
        """The network namespace of a node (or of the switch, ``node="switch"``)."""
        return self.prefix + node

    @property
    def switch_namespace(self) -> str:
        return self.namespace(SWITCH)

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise InvalidModelError(f"testbed {self.name!r} has no node named {name!r}")

    def address(self, node: str) -> str:
        """The IPv4 address of a node's ``eth0``."""
        return str(self._net(self.node(node).index)[2])

    def gateway(self, node: str) -> str:
        """The switch-side address of a node's link (its default route)."""
        return str(self._net(self.node(node).index)[1])

    @property
    def stripe_address(self) -> str:
        """The address every ``tcp`` server also answers on, each on its own port.

        A striping client (qnbench ``stripe --member tcp --host ADDR --port P``) reaches member
        m at ``ADDR:P+m``; the switch routes each port to its server (policy routing on the
        destination port), so K servers in K namespaces form one networked RAID.
        """
        return str(ipaddress.IPv4Address(int(self.subnet.network_address) + (255 << 8) + 1))

    def _net(self, index: int) -> ipaddress.IPv4Network:
        base = int(self.subnet.network_address)
        return ipaddress.IPv4Network((base + ((index + 1) << 8), 24))


def _table(value: Any, name: str) -> dict:
    if not isinstance(value, dict):
        raise InvalidTypeError(f"{name} must be a table, got {value!r}")
    return value


def _check_keys(table: dict, name: str, allowed: tuple[str, ...]) -> None:
    for key in table:
        if key not in allowed:
            raise InvalidModelError(f"{name}.{key}: unknown key (allowed: {', '.join(allowed)})")


def _name(value: Any, field_name: str, maximum: int) -> str:
    if not isinstance(value, str) or not _NAME_RE.match(value) or len(value) > maximum:
        raise InvalidModelError(
            f"{field_name} must be a lower-case name [a-z][a-z0-9_]* of at most {maximum} "
            f"characters, got {value!r}"
        )
    return value


def check_testbed_name(name: Any) -> str:
    """A testbed name as the topology file's ``testbed.name`` allows it, or InvalidModelError:
    it becomes a directory name and a namespace prefix, so ``../x`` or ``/etc`` never pass."""
    return _name(name, "testbed.name", _TOPO_NAME_MAX)


def _rate(value: Any, name: str) -> float:
    v = as_quantity(value, name, "rate", positive=True)
    if v < 1000.0:
        raise InvalidModelError(f"{name} must be at least 8 kbit/s (1000 B/s), got {value!r}")
    return v


def _link(value: Any, name: str) -> Link:
    if value is None:
        return Link()
    t = _table(value, name)
    _check_keys(t, name, ("rate", "delay", "mtu", "burst"))
    rate = _rate(t["rate"], f"{name}.rate") if "rate" in t else None
    delay = _delay(t.get("delay", 0.0), f"{name}.delay")
    mtu = t.get("mtu", 1500)
    if isinstance(mtu, bool) or not isinstance(mtu, int) or not MTU_MIN <= mtu <= MTU_MAX:
        raise InvalidModelError(f"{name}.mtu must be an integer {MTU_MIN}..{MTU_MAX}, got {mtu!r}")
    burst = None
    if "burst" in t:
        burst = as_quantity(t["burst"], f"{name}.burst", "size", positive=True)
        if burst < mtu + 14 or burst > 2**31:
            raise InvalidModelError(
                f"{name}.burst must hold one frame (mtu + 14 = {mtu + 14} B) and be at most "
                f"2 GiB, got {t['burst']!r}"
            )
    return Link(rate=rate, delay=delay, mtu=mtu, burst=burst)


def _delay(value: Any, name: str) -> float:
    """A link delay: a time string with its unit ("5 ms"); a bare number only when it is 0.

    A bare non-zero number is refused: "delay = 5" is milliseconds to one reader and seconds to
    another, and the SI reading (5 s) is almost never meant.
    """
    if _is_number(value) and value > 0 and math.isfinite(value):
        raise UnitError(
            f'{name} = {value!r} has no unit: give a time with its unit, e.g. "{value} ms" '
            f'or "{value} s"'
        )
    if isinstance(value, str):
        try:
            bare = float(value)
        except ValueError:
            bare = None
        if bare is not None and bare > 0 and math.isfinite(bare):
            raise UnitError(f'{name} = {value!r} has no unit: give a time like "{value} ms"')
        if bare is not None:
            value = bare  # 0, negative or NaN: as_quantity says what is wrong
    v = as_quantity(value, name, "time")
    if v > MAX_DELAY:
        raise InvalidModelError(f"{name} must be at most {MAX_DELAY:g} s, got {value!r}")
    return v


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _disk(value: Any, name: str, service: str) -> Disk:
    t = _table(value if value is not None else {"kind": "memory"}, name)
    kind = t.get("kind")
    if kind not in DISK_KINDS:
        raise InvalidModelError(
            f"{name}.kind: unknown disk kind {kind!r} (one of {', '.join(DISK_KINDS)})"
        )
    allowed = {
        "tmpfs": ("kind", "size"),
        "dir": ("kind", "path"),
        "throttled": ("kind", "path", "read_rate", "write_rate"),
        "memory": ("kind",),
        "emu": ("kind", "latency", "rate", "dist", "servers"),
    }[kind]
    _check_keys(t, name, allowed)
    if kind == "emu":
        return _emu_disk(t, name, service)
    if kind == "memory" and service == "nfs":
        raise InvalidModelError(
            f"{name}.kind: an NFS server exports a file system: use tmpfs, dir or throttled, "
            "not 'memory'"
        )
    path = None
    if kind in ("dir", "throttled"):
        if not isinstance(t.get("path"), str) or not t["path"]:
            raise InvalidModelError(f"{name}.path: a {kind} disk needs the path of a directory")
        path = t["path"]
        if not Path(path).is_absolute():
            raise InvalidModelError(f"{name}.path must be absolute, got {path!r}")
    size = None
    if kind == "tmpfs":
        size = as_quantity(t.get("size", 256 * 1024**2), f"{name}.size", "size", positive=True)
        if size < 1024**2:
            raise InvalidModelError(f"{name}.size must be at least 1 MiB, got {t['size']!r}")
    read_rate = write_rate = None
    if kind == "throttled":
        if "read_rate" not in t and "write_rate" not in t:
            raise InvalidModelError(f"{name}: a throttled disk needs read_rate and/or write_rate")
        if "read_rate" in t:
            read_rate = _rate(t["read_rate"], f"{name}.read_rate")
        if "write_rate" in t:
            write_rate = _rate(t["write_rate"], f"{name}.write_rate")
    return Disk(kind=kind, path=path, size=size, read_rate=read_rate, write_rate=write_rate)


def _emu_disk(t: dict, name: str, service: str) -> Disk:
    """An ``emu`` disk: qnbench's emulated device inside the block server (module docstring)."""
    if service != "tcp":
        why = (
            "nfs-ganesha exports a file system and an emulated device has none: use tmpfs, "
            "dir or throttled for an NFS server"
            if service == "nfs"
            else "with no service nothing would serve it"
        )
        raise InvalidModelError(
            f"{name}.kind: an emu disk lives inside qnbench's TCP block server: it needs "
            f"service = 'tcp', not {service!r} ({why})"
        )
    latency = _delay(t.get("latency", 0.0), f"{name}.latency")
    rate = _rate(t["rate"], f"{name}.rate") if "rate" in t else None
    if latency == 0.0 and rate is None:
        raise InvalidModelError(
            f'{name}: an emu disk needs latency > 0 (e.g. "4 ms") and/or a rate '
            f'(e.g. "100 MB/s"), got {t!r}'
        )
    dist = t.get("dist", "const")
    if not isinstance(dist, str) or dist.strip().lower() not in EMU_DISTS:
        raise InvalidModelError(
            f"{name}.dist: unknown service law {dist!r} (one of {', '.join(EMU_DISTS)})"
        )
    servers = t.get("servers", 1)
    if (
        isinstance(servers, bool)
        or not isinstance(servers, int)
        or not 1 <= servers <= EMU_MAX_SERVERS
    ):
        raise InvalidModelError(
            f"{name}.servers must be an integer 1..{EMU_MAX_SERVERS}, got {servers!r}"
        )
    return Disk(kind="emu", latency=latency, rate=rate, dist=EMU_DISTS[dist.strip().lower()],
                servers=servers)  # fmt: skip


def _node(value: Any, name: str, role: str, index: int) -> Node:
    t = _table(value, name)
    if role == "client":
        _check_keys(t, name, ("name", "link"))
    else:
        _check_keys(t, name, ("name", "link", "service", "disk", "port", "file_size"))
    node_name = _name(t.get("name"), f"{name}.name", _NODE_NAME_MAX)
    if node_name == SWITCH:
        raise InvalidModelError(f"{name}.name: {SWITCH!r} is reserved for the switch namespace")
    link = _link(t.get("link"), f"{name}.link")
    if role == "client":
        return Node(name=node_name, role=role, index=index, link=link)
    service = t.get("service", "none")
    if service not in SERVICES:
        raise InvalidModelError(
            f"{name}.service: unknown service {service!r} (one of {', '.join(SERVICES)})"
        )
    disk = _disk(t.get("disk"), f"{name}.disk", service)
    port = t.get("port", 5300)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise InvalidModelError(f"{name}.port must be a TCP port 1..65535, got {port!r}")
    if service == "nfs" and port != 5300 and "port" in t:
        raise InvalidModelError(f"{name}.port: an NFS server uses the NFS ports (2049, 111)")
    file_size = as_quantity(
        t.get("file_size", 64 * 1024**2), f"{name}.file_size", "size", positive=True
    )
    return Node(
        name=node_name,
        role=role,
        index=index,
        link=link,
        service=service,
        disk=disk,
        port=port,
        file_size=file_size,
    )


def parse_topology(doc: dict, source: str = "<dict>") -> Topology:
    """Validate a topology given as a dict (the parsed TOML) and return it.

    Raises
    ------
    InvalidModelError
        naming the field and the value: overlapping names, zero or negative rates, unknown disk
        kinds or services, too many nodes, a subnet that is not a private /16.
    """
    doc = _table(doc, "topology")
    _check_keys(doc, "topology", ("testbed", "clients", "servers"))
    tb = _table(doc.get("testbed"), "testbed")
    _check_keys(tb, "testbed", ("name", "subnet", "priority"))
    name = _name(tb.get("name"), "testbed.name", _TOPO_NAME_MAX)
    subnet_text = tb.get("subnet", "10.213.0.0/16")
    try:
        subnet = ipaddress.IPv4Network(subnet_text)
    except (ValueError, TypeError):
        raise InvalidModelError(
            f"testbed.subnet must be an IPv4 network like '10.213.0.0/16', got {subnet_text!r}"
        ) from None
    if subnet.prefixlen != 16 or not subnet.is_private or subnet.is_loopback:
        raise InvalidModelError(
            f"testbed.subnet must be a private /16 (10.x.0.0/16, 172.16-31.x.0/16 or "
            f"192.168.0.0/16), got {subnet_text!r}"
        )
    priority = tb.get("priority", "high")
    if priority not in PRIORITIES:
        raise InvalidModelError(
            f"testbed.priority must be one of {', '.join(map(repr, PRIORITIES))}, got {priority!r}"
        )
    clients_raw = doc.get("clients", [])
    servers_raw = doc.get("servers", [])
    for key, raw in (("clients", clients_raw), ("servers", servers_raw)):
        if not isinstance(raw, list):
            raise InvalidTypeError(f"{key} must be an array of tables ([[{key}]]), got {raw!r}")
    if not clients_raw:
        raise InvalidModelError("clients: a testbed needs at least one client ([[clients]])")
    if not servers_raw:
        raise InvalidModelError("servers: a testbed needs at least one server ([[servers]])")
    total = len(clients_raw) + len(servers_raw)
    if total > MAX_NODES:
        raise InvalidModelError(
            f"too many namespaces: {total} nodes (clients + servers) > {MAX_NODES}, the most one "
            "testbed holds (one /24 of its /16 subnet each, plus the switch)"
        )
    clients = tuple(_node(c, f"clients[{i}]", "client", i) for i, c in enumerate(clients_raw))
    servers = tuple(
        _node(s, f"servers[{i}]", "server", len(clients) + i) for i, s in enumerate(servers_raw)
    )
    seen: dict[str, str] = {}
    for role, nodes in (("clients", clients), ("servers", servers)):
        for i, n in enumerate(nodes):
            here = f"{role}[{i}].name"
            if n.name in seen:
                raise InvalidModelError(
                    f"{here}: name {n.name!r} overlaps with {seen[n.name]} (names must be unique)"
                )
            seen[n.name] = here
    return Topology(name=name, subnet=subnet, clients=clients, servers=servers, source=source,
                    priority=priority)  # fmt: skip


def load_topology(path: str | Path) -> Topology:
    """Read and validate a topology TOML file."""
    p = Path(path)
    try:
        text = read_text_file(p, "topology")  # missing, binary, enormous
    except InvalidModelError as exc:
        raise InvalidModelError(f"cannot read topology {str(p)!r}: {exc}") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidModelError(f"{p}: not valid TOML: {exc}") from None
    return parse_topology(doc, source=str(p))
