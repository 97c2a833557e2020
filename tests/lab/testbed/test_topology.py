"""Topology validation: the parsed values, and one clear error (naming the field) per mistake."""

from __future__ import annotations

import copy
import ipaddress

import pytest

from qnmodel.errors import InvalidModelError, InvalidTypeError, UnitError
from qnmodel.lab.testbed import MAX_NODES, load_topology, parse_topology

pytestmark = pytest.mark.testbed

BASE = {
    "testbed": {"name": "unit"},
    "clients": [{"name": "c1", "link": {"rate": "100 Mbit/s"}}],
    "servers": [
        {
            "name": "s1",
            "service": "nfs",
            "link": {"rate": "1 Gbit/s"},
            "disk": {"kind": "tmpfs", "size": "64 MiB"},
        },
        {
            "name": "s2",
            "service": "tcp",
            "port": 5400,
            "disk": {"kind": "throttled", "path": "/var/tmp", "read_rate": "50 MB/s"},
        },
    ],
}


def doc(**changes):
    d = copy.deepcopy(BASE)
    for path, value in changes.items():
        *head, last = path.split("__")
        t = d
        for k in head:
            t = t[int(k)] if k.isdigit() else t[k]
        if value is None:
            del t[last]
        else:
            t[last] = value
    return d


def test_parsed_values_are_si_and_addresses_are_in_the_subnet():
    topo = parse_topology(BASE)
    assert topo.name == "unit" and topo.prefix == "qnm-unit-" and topo.priority == "high"
    assert topo.namespace("c1") == "qnm-unit-c1" and topo.switch_namespace == "qnm-unit-switch"
    assert topo.clients[0].link.rate == 12.5e6  # 100 Mbit/s in bytes/s
    assert topo.servers[0].link.rate == 125e6
    assert topo.servers[1].link.rate is None  # no link table: unshaped
    assert topo.servers[0].disk.size == 64 * 1024**2
    assert topo.servers[1].disk.read_rate == 50e6 and topo.servers[1].disk.write_rate is None
    assert topo.servers[1].port == 5400
    addrs = [topo.address(n.name) for n in topo.nodes]
    gws = [topo.gateway(n.name) for n in topo.nodes]
    assert addrs == ["10.213.1.2", "10.213.2.2", "10.213.3.2"]
    assert gws == ["10.213.1.1", "10.213.2.1", "10.213.3.1"]
    net = ipaddress.IPv4Network("10.213.0.0/16")
    assert all(ipaddress.IPv4Address(a) in net for a in addrs + gws)


def test_load_topology_reads_toml(tmp_path):
    p = tmp_path / "t.toml"
    p.write_text(
        '[testbed]\nname = "file"\nsubnet = "192.168.0.0/16"\n'
        '[[clients]]\nname = "c1"\n'
        '[[servers]]\nname = "s1"\nservice = "tcp"\nlink = { rate = "1 Gbit/s" }\n'
    )
    topo = load_topology(p)
    assert topo.source == str(p) and topo.address("s1") == "192.168.2.2"
    assert topo.servers[0].disk.kind == "memory"


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        # overlapping names, between roles and within one
        ({"servers__1__name": "c1"}, InvalidModelError, r"servers\[1\]\.name.*'c1'.*clients\[0\]"),
        ({"servers__1__name": "s1"}, InvalidModelError, r"servers\[1\]\.name.*'s1'.*servers\[0\]"),
        ({"clients__0__name": "switch"}, InvalidModelError, r"clients\[0\]\.name.*reserved"),
        ({"clients__0__name": "C-1"}, InvalidModelError, r"clients\[0\]\.name.*'C-1'"),
        ({"testbed__name": "a-b"}, InvalidModelError, r"testbed\.name.*'a-b'"),
        # zero and negative rates
        ({"clients__0__link__rate": 0}, InvalidModelError, r"clients\[0\]\.link\.rate.*> 0"),
        ({"clients__0__link__rate": "-1 Mbit/s"}, InvalidModelError, r"clients\[0\]\.link\.rate"),
        ({"clients__0__link__rate": -5.0}, InvalidModelError, r"clients\[0\]\.link\.rate.*> 0"),
        ({"servers__1__disk__read_rate": "0 MB/s"}, InvalidModelError, r"disk\.read_rate"),
        ({"clients__0__link__rate": "5 ms"}, UnitError, r"clients\[0\]\.link\.rate.*time"),
        # unknown kinds, services, keys
        (
            {"servers__0__disk__kind": "raid"},
            InvalidModelError,
            r"servers\[0\]\.disk\.kind.*'raid'",
        ),
        ({"servers__0__service": "smb"}, InvalidModelError, r"servers\[0\]\.service.*'smb'"),
        ({"servers__0__disk__colour": "red"}, InvalidModelError, r"servers\[0\]\.disk\.colour"),
        ({"servers__0__disk": {"kind": "memory"}}, InvalidModelError, r"disk\.kind.*NFS"),
        ({"servers__1__disk__path": "var/tmp"}, InvalidModelError, r"disk\.path.*absolute"),
        ({"servers__1__disk__read_rate": None}, InvalidModelError, r"servers\[1\]\.disk.*rate"),
        ({"servers__1__port": 70000}, InvalidModelError, r"servers\[1\]\.port.*70000"),
        ({"testbed__subnet": "8.8.0.0/16"}, InvalidModelError, r"testbed\.subnet.*private"),
        ({"testbed__subnet": "10.1.0.0/24"}, InvalidModelError, r"testbed\.subnet.*/16"),
        (
            {"testbed__priority": "realtime"},
            InvalidModelError,
            r"testbed\.priority must be one of 'high', 'normal', got 'realtime'",
        ),
        ({"testbed__priority": 1}, InvalidModelError, r"testbed\.priority.*got 1"),
        ({"clients": []}, InvalidModelError, r"clients.*at least one"),
        ({"servers": {"name": "x"}}, InvalidTypeError, r"servers must be an array"),
    ],
)
def test_each_mistake_is_a_clear_error_naming_the_field(changes, error, match):
    with pytest.raises(error, match=match):
        parse_topology(doc(**changes))


def test_too_many_namespaces():
    clients = [{"name": f"c{i}"} for i in range(MAX_NODES - 1)]  # + 2 servers = MAX_NODES + 1
    with pytest.raises(InvalidModelError, match=rf"too many namespaces: {MAX_NODES + 1} nodes"):
        parse_topology(doc(clients=clients))
    # the largest allowed topology is fine, and its last address is still in the subnet
    topo = parse_topology(doc(clients=clients[: MAX_NODES - 2]))
    assert topo.address("s2") == f"10.213.{MAX_NODES}.2"


def test_unreadable_and_invalid_files(tmp_path):
    with pytest.raises(InvalidModelError, match="cannot read topology"):
        load_topology(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[testbed\nname=")
    with pytest.raises(InvalidModelError, match="not valid TOML"):
        load_topology(bad)
