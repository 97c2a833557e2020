"""TOML model files: schema, unit strings, error messages with file, key path and line."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qnmodel as qn
from qnmodel.errors import InvalidModelError
from qnmodel.io import modelfile
from qnmodel.io.modelfile import ModelFileError, load, loads, with_values
from tests._nets import pf_net
from tests._tol import closed_form


def toml(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


BASIC = toml(
    """
    [model]
    name = "basic"
    think_time = "1 s"
    N = 5

    [[station]]
    name = "cpu"
    demand = "5 ms"

    [[station]]
    name = "link"
    size = "1500 B"
    rate = "100 Mbit/s"
    visits = 10

    [[station]]
    name = "disk"
    service_time = "8 ms"
    visits = 0.25
    servers = 2

    [[station]]
    name = "terminal_lag"
    demand = "20 ms"
    kind = "delay"
    """
)


def test_basic_model_demands_in_seconds():
    spec = loads(BASIC)
    net = spec.network
    assert net.names == ("cpu", "link", "disk", "terminal_lag")
    # 1500 B over 12.5e6 B/s is 120 us, ten visits: 1.2 ms; the disk: 0.25 * 8 ms = 2 ms.
    np.testing.assert_allclose(net.demands, [5e-3, 1.2e-3, 2e-3, 0.02], rtol=1e-15)
    assert net.servers.tolist() == [1, 1, 2, 1]
    assert net.is_delay.tolist() == [False, False, False, True]
    assert net.think_time == 1.0
    assert spec.populations.tolist() == [1, 2, 3, 4, 5]
    assert spec.name == "basic"


def test_multiserver_model_solves_with_aba_only():
    sol = loads(BASIC).solve()
    assert sol.bjb is None
    frame = sol.to_frame()
    assert "throughput_bjb_lower" not in frame.columns
    ref = qn.mva(loads(BASIC).network, 5)
    np.testing.assert_array_equal(frame["throughput"].to_numpy(), ref.throughput)


def test_load_uses_file_stem_as_default_name(tmp_path):
    f = tmp_path / "my_system.toml"
    f.write_text(BASIC.replace('name = "basic"\n', ""))
    spec = load(f)
    assert spec.name == "my_system" and spec.source == str(f)


@pytest.mark.parametrize(
    ("populations", "expected"),
    [
        ("N = 3", [1, 2, 3]),
        ("populations = [50, 1, 10]", [1, 10, 50]),
        ("populations = { start = 10, stop = 50, step = 20 }", [10, 30, 50]),
        ("populations = { start = 10, stop = 45, step = 20 }", [10, 30, 45]),
        ("populations = { start = 2, stop = 4 }", [2, 3, 4]),
    ],
)
def test_population_forms(populations, expected):
    spec = loads(BASIC.replace("N = 5", populations))
    assert spec.populations.tolist() == expected
    assert spec.max_population == expected[-1]


def line_of(text: str, fragment: str) -> int:
    """1-based line of the last line containing ``fragment``."""
    hits = [i for i, line in enumerate(text.splitlines(), start=1) if fragment in line]
    assert hits, fragment
    return hits[-1]


# Each bad model: (replacement old -> new, expected key path, the line fragment, message part).
BAD = [
    (('demand = "5 ms"', 'demand = "5 Mb"'), "station[0].demand", 'demand = "5 Mb"', "ambiguous"),
    (
        ('demand = "5 ms"', 'demand = "5 MB"'),
        "station[0].demand",
        'demand = "5 MB"',
        "a time (s) is required",
    ),
    (('demand = "5 ms"', "demand = -1"), "station[0].demand", "demand = -1", ">= 0"),
    (('demand = "5 ms"', 'demand = "5"'), "station[0].demand", 'demand = "5"', "has no unit"),
    # issue 26 item 1: a bare number is refused (20 ms or 20 s?), with the fix
    (
        ('think_time = "1 s"', "think_time = 20"),
        "model.think_time",
        "think_time = 20",
        "got the bare number 20: a time needs its unit: write '20 ms' or '20 s'",
    ),
    (
        ('demand = "5 ms"', "demand = 0.005"),
        "station[0].demand",
        "demand = 0.005",
        "got the bare number 0.005: a time needs its unit: write '0.005 ms' or '0.005 s'",
    ),
    (
        ('size = "1500 B"', "size = 1500"),
        "station[1].size",
        "size = 1500",
        "got the bare number 1500: a size needs its unit: write '1500 KiB' or '1500 B'",
    ),
    (
        ('rate = "100 Mbit/s"', "rate = 12500000"),
        "station[1].rate",
        "rate = 12500000",
        "a rate needs its unit: write '12500000 MB/s' or '12500000 Mbit/s'",
    ),
    (('rate = "100 Mbit/s"', 'rate = "0 Mbit/s"'), "station[1].rate", 'rate = "0 Mbit/s"', "> 0"),
    (("visits = 10", "visits = -1"), "station[1].visits", "visits = -1", ">= 0"),
    (("servers = 2", "servers = 0"), "station[2].servers", "servers = 0", "integer >= 1"),
    (("servers = 2", "servers = 1.5"), "station[2].servers", "servers = 1.5", "integer >= 1"),
    (('kind = "delay"', 'kind = "fifo"'), "station[3].kind", 'kind = "fifo"', "'queue', 'delay'"),
    (("N = 5", "N = 0"), "model.N", "N = 0", "integer >= 1"),
    (("N = 5", "populations = []"), "model.populations", "populations = []", "empty"),
    (
        ('think_time = "1 s"', 'think_time = "1 KiB"'),
        "model.think_time",
        "think_time",
        "a time (s) is required",
    ),
    (('think_time = "1 s"', 'thinktime = "1 s"'), "model.thinktime", "thinktime", "unknown key"),
    (("visits = 0.25", "visit = 0.25"), "station[2].visit", "visit = 0.25", "unknown key"),
    (('name = "disk"', 'name = "cpu"'), "station[2].name", 'name = "cpu"', "duplicate"),
    (
        ('service_time = "8 ms"', 'demand = "8 ms"'),
        "station[2].visits",
        "visits = 0.25",
        "already includes the visits",
    ),
    (
        ('size = "1500 B"', 'demand = "1 ms"'),
        "station[1].rate",
        'rate = "100 Mbit/s"',
        "rate goes with size",
    ),
]


@pytest.mark.parametrize(("change", "key", "fragment", "message"), BAD)
def test_errors_name_file_key_and_line(change, key, fragment, message):
    text = BASIC.replace(*change)
    assert text != BASIC
    with pytest.raises(ModelFileError) as exc:
        loads(text, source="sys.toml")
    err = exc.value
    assert err.key == key
    assert err.line == line_of(text, fragment)
    assert str(err).startswith(f"sys.toml:{err.line}: {key}: ")
    assert message in str(err)
    assert isinstance(err, ValueError)


def test_station_needs_one_demand_form():
    text = BASIC.replace('service_time = "8 ms"\n', "")
    with pytest.raises(ModelFileError, match=r"station\[2\]: station 'disk' needs exactly one"):
        loads(text)
    text = BASIC.replace('demand = "5 ms"', 'demand = "5 ms"\nservice_time = "1 ms"')
    with pytest.raises(ModelFileError, match="got demand, service_time"):
        loads(text)


def test_syntax_error_reports_line():
    text = BASIC.replace('name = "cpu"', 'name = "cpu')
    with pytest.raises(ModelFileError) as exc:
        loads(text, source="x.toml")
    assert exc.value.line == line_of(text, 'name = "cpu')
    assert "not valid TOML" in str(exc.value)


def test_missing_pieces():
    with pytest.raises(ModelFileError, match=r"missing \[model\]"):
        loads('[[station]]\nname = "a"\ndemand = "1 ms"\n')
    with pytest.raises(ModelFileError, match="no stations"):
        loads("[model]\nN = 3\n")
    with pytest.raises(ModelFileError, match=r"write \[\[station\]\], not \[station\]"):
        loads('[model]\nN = 3\n[station]\nname = "a"\n')
    with pytest.raises(ModelFileError, match="missing population"):
        loads('[model]\n[[station]]\nname = "a"\ndemand = "1 ms"\n')
    with pytest.raises(ModelFileError, match="either N or populations"):
        loads('[model]\nN = 3\npopulations = [1]\n[[station]]\nname="a"\ndemand=1\n')
    with pytest.raises(ModelFileError, match="all demands and the think time are zero"):
        loads('[model]\nN = 3\n[[station]]\nname = "a"\ndemand = 0\n')
    with pytest.raises(ModelFileError, match="stop.*must be >= start"):
        loads(BASIC.replace("N = 5", "populations = {start = 5, stop = 2}"))


def test_missing_file(tmp_path):
    with pytest.raises(ModelFileError, match="no such model file"):
        load(tmp_path / "nope.toml")


def test_with_values_revalidates_and_replaces_forms():
    spec = loads(BASIC)
    s2 = with_values(spec, {"link.rate": "1 Gbit/s", "think_time": "10 ms", "N": 2})
    assert s2.network.station("link").demand == pytest.approx(10 * 1500 / 125e6, rel=1e-15)
    assert s2.network.think_time == 0.01 and s2.populations.tolist() == [1, 2]
    s3 = with_values(spec, {"disk.demand": "3 ms"})  # replaces service_time and visits
    assert s3.network.station("disk").demand == 3e-3
    assert spec.network.station("disk").demand == 2e-3  # original untouched
    with pytest.raises(ModelFileError, match=r"station\[1\]\.rate.*ambiguous"):
        with_values(spec, {"link.rate": "1 Gb/s"})
    with pytest.raises(qn.InvalidModelError, match="cannot set 'nic.rate'"):
        with_values(spec, {"nic.rate": "1 Gbit/s"})
    with pytest.raises(qn.InvalidModelError, match="station keys are"):
        with_values(spec, {"link.speed": "1 Gbit/s"})


def test_demo_model_is_valid_and_documented_numbers():
    spec = loads(modelfile.DEMO_MODEL_TOML)
    assert spec.network.station("network").demand == 65536 / 12.5e6
    assert spec.network.station("disk").demand == pytest.approx(0.5 * 9.763e-3, rel=1e-15)


names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(
    demands=st.lists(st.floats(min_value=1e-6, max_value=10.0), min_size=1, max_size=6),
    think=st.floats(min_value=0.0, max_value=100.0),
    N=st.integers(min_value=1, max_value=30),
)
def test_roundtrip_equals_python_api(demands, think, N):
    """A model file in seconds solves exactly like the Python API (plain numbers, SI)."""
    lines = ["[model]", f'think_time = "{think!r} s"', f"N = {N}"]
    for i, d in enumerate(demands):
        lines += ["[[station]]", f'name = "s{i}"', f'demand = "{d!r} s"']
    spec = loads("\n".join(lines) + "\n")
    net = qn.Network.from_demands(demands, think_time=think)
    np.testing.assert_array_equal(spec.network.demands, net.demands)
    frame = spec.solve().to_frame()
    ref = qn.mva(net, N)
    np.testing.assert_array_equal(frame["throughput"].to_numpy(), ref.throughput)
    np.testing.assert_array_equal(frame["response_time"].to_numpy(), ref.response_time)
    bjb = qn.bounds(net, N, "bjb")
    np.testing.assert_array_equal(frame["throughput_bjb_lower"].to_numpy(), bjb.throughput_lower)


@settings(max_examples=60, deadline=None)
@given(
    value=st.floats(min_value=1e-3, max_value=1e4),
    unit=st.sampled_from([("ms", 1e-3), ("us", 1e-6), ("s", 1.0)]),
)
def test_unit_strings_parse_like_units_module(value, unit):
    text = BASIC.replace('demand = "5 ms"', f'demand = "{value!r} {unit[0]}"')
    assert loads(text).network.station("cpu").demand == qn.units.parse(f"{value!r} {unit[0]}")


# -- named systems ---------------------------------------------------------------------------
EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples"


def test_networked_raid_system_equals_model_class():
    from qnmodel.models.storage import NetworkedRAID

    spec = load(EXAMPLES / "networked_raid.toml")
    ref = NetworkedRAID.cui2006(
        op="write", readings={"TRate_d": "datasheet"}, link_rate="100 Mbit/s", master_cache_hit=0
    ).network()
    assert spec.network.names == ref.names
    np.testing.assert_array_equal(spec.network.demands, ref.demands)
    frame = spec.solve().to_frame()
    np.testing.assert_array_equal(frame["throughput"].to_numpy(), qn.mva(ref, 30).throughput)
    # form = "corrected" (the default): the master link carries ceil(300e6 / 1460) frames
    assert spec.network.station("link_out").demand == pytest.approx(
        205480 * 1518 / 12.5e6, rel=closed_form(3)
    )
    # form = "paper", eq. (9): D_Net = (1 - P_m) S_mR5 / TRate_e = 200e6 * 3/2 / 12.5e6 = 24 s.
    paper = loads(spec.text.replace('form = "corrected"', 'form = "paper"'))
    assert paper.network.station("network").demand == pytest.approx(24.0, rel=closed_form(8))
    assert paper.network.names == NetworkedRAID.cui2006(form="paper").network().names


def test_networked_raid_without_reference_and_with_values():
    text = toml(
        """
        [model]
        N = 4
        [system]
        type = "networked_raid"
        job_size = "1 MiB"
        stripe_unit = "64 KiB"
        stripe_width = 4
        T_mpro = "0.02 ms"
        T_mp = "0.04 ms"
        T_snpro = "0.03 ms"
        T_snp = "0.03 ms"
        link_rate = "1 Gbit/s"
        disk_seek = "4 ms"
        disk_latency = "2 ms"
        disk_rate = "150 MB/s"
        raid = "raid0"
        op = "read"
        """
    )
    from qnmodel.models.storage import NetworkedRAID

    spec = loads(text)
    ref = NetworkedRAID(
        job_size="1 MiB", stripe_unit="64 KiB", stripe_width=4, master_time_per_unit="0.02 ms",
        master_time_per_packet="0.04 ms", server_time_per_unit="0.03 ms",
        server_time_per_packet="0.03 ms", link_rate="1 Gbit/s", disk_seek="4 ms",
        disk_latency="2 ms", disk_rate="150 MB/s", raid="raid0", op="read",
    )  # fmt: skip
    np.testing.assert_array_equal(spec.network.demands, ref.network().demands)
    faster = with_values(spec, {"system.link_rate": "10 Gbit/s"})
    np.testing.assert_allclose(
        faster.network.station("link_in").demand,
        ref.replace(link_rate="10 Gbit/s").demands()["link_in"],
        rtol=1e-15,
    )
    # a model file without form gets the default, corrected form; "paper" on request
    assert ref.form == "corrected" and spec.network.names == ref.network().names
    paper = with_values(spec, {"system.form": "paper"})
    np.testing.assert_array_equal(
        paper.network.demands, ref.replace(form="paper").network().demands
    )


def test_networked_raid_without_reference_names_every_missing_parameter(tmp_path):
    path = tmp_path / "nr.toml"
    path.write_text(
        toml(
            """
            [model]
            N = 4
            [system]
            type = "networked_raid"
            link_rate = "1 Gbit/s"
            stripe_width = 4
            """
        )
    )
    with pytest.raises(ModelFileError) as info:
        load(path)
    err = info.value
    assert (err.key, err.line) == ("system", 3)
    assert str(err).startswith(f"{path}:3: system: a networked_raid system without reference")
    # Exactly the fields without a default that the file does not give, in field order.
    assert (
        "needs job_size, stripe_unit, master_time_per_unit, master_time_per_packet, "
        "server_time_per_unit, server_time_per_packet, disk_seek, disk_latency, disk_rate "
    ) in str(err)


def test_raid_system_plus_extra_stations():
    from qnmodel.models.raid import disk_demands

    spec = load(EXAMPLES / "raid_array.toml")
    assert spec.network.names == ("disk1", "disk2", "disk3", "disk4", "host_cpu", "controller")
    d = disk_demands("8 ms", "raid5", 4, "write", "random")
    np.testing.assert_array_equal(spec.network.demands[:4], d)
    # RAID5 random writes: speedup N/4 = 1, so each member carries the single-disk demand.
    assert spec.network.demands[:4].tolist() == [0.008] * 4
    assert spec.populations.tolist() == [1, 8, 15, 22, 29, 36, 43, 50, 57, 64]


def test_nfs_system_equals_model_class():
    from qnmodel.models.nfs import NFSBandwidth, NFSSystem

    spec = load(EXAMPLES / "nfs.toml")
    system = NFSSystem(
        NFSBandwidth("5 GB/s", "1 Gbit/s", "5 GB/s", "80 MB/s"),
        client_link="100 Mbit/s", rsize="32 KiB", server_cpu_per_request="40 us",
        disk_access_time="1 ms",
    )  # fmt: skip
    ref = system.network("64 MiB", op="read", client_hit=0.0, server_hit=0.5)
    assert spec.network.names == ref.names
    np.testing.assert_array_equal(spec.network.demands, ref.demands)
    assert spec.network.is_delay.tolist() == ref.is_delay.tolist()


def test_nfs_system_drive_count():
    """issue 26 item 4: `server_disks` in the file is NFSSystem(server_disks=...): the
    server disk station gets that many servers (drives fed from one queue)."""
    from qnmodel.models.nfs import NFSBandwidth, NFSSystem
    from qnmodel.models.nfs_network import aggregate_bandwidth

    base = (EXAMPLES / "nfs.toml").read_text()
    spec = loads(base.replace('b4 = "80 MB/s"', 'b4 = "80 MB/s"\nserver_disks = 4'))
    system = NFSSystem(
        NFSBandwidth("5 GB/s", "1 Gbit/s", "5 GB/s", "80 MB/s"),
        client_link="100 Mbit/s", rsize="32 KiB", server_cpu_per_request="40 us",
        disk_access_time="1 ms", server_disks=4,
    )  # fmt: skip
    ref = system.network("64 MiB", op="read", client_hit=0.0, server_hit=0.5)
    assert spec.network.station("server_disk").servers == 4
    assert spec.network.servers.tolist() == ref.servers.tolist()
    np.testing.assert_array_equal(spec.network.demands, ref.demands)
    # a disk-bound read (no cache hits, a slow drive): four drives saturate at four times one
    slow = NFSBandwidth("5 GB/s", "10 Gbit/s", "5 GB/s", "20 MB/s")
    one, four = NFSSystem(slow), NFSSystem(slow, server_disks=4)
    assert one.bottleneck("read", 0.0, 0.0) == four.bottleneck("read", 0.0, 0.0) == "server_disk"
    assert four.asymptotic_bandwidth("read", 0.0, 0.0) == pytest.approx(
        4 * one.asymptotic_bandwidth("read", 0.0, 0.0), rel=closed_form(2)
    )
    agg = aggregate_bandwidth(four, 64, "64 MiB", "read", 0.0, 0.0)
    assert agg.bandwidth[-1] <= 4 * 20e6 * (1 + 1e-12)
    assert agg.bandwidth[-1] > 3.9 * 20e6  # 64 clients: near the 4-drive asymptote
    # one streaming client is unchanged: one request at a time finds a free drive
    assert four.bandwidth("read", 0.0, 0.0) == one.bandwidth("read", 0.0, 0.0)
    with pytest.raises(ModelFileError, match=r"system\.server_disks: server_disks must be"):
        loads(base.replace('b4 = "80 MB/s"', 'b4 = "80 MB/s"\nserver_disks = 0'))


def test_nfs_system_read_cpu_per_byte_from_a_model_file():
    from qnmodel.models.nfs import NFSBandwidth, NFSSystem

    text = (
        (EXAMPLES / "nfs.toml")
        .read_text()
        .replace('op = "read"', 'op = "read"\nread_cpu_per_byte = 2.5e-10')
    )
    spec = loads(text)
    system = NFSSystem(
        NFSBandwidth("5 GB/s", "1 Gbit/s", "5 GB/s", "80 MB/s"),
        client_link="100 Mbit/s", rsize="32 KiB", server_cpu_per_request="40 us",
        disk_access_time="1 ms", read_cpu_per_byte=2.5e-10,
    )  # fmt: skip
    ref = system.network("64 MiB", op="read", client_hit=0.0, server_hit=0.5)
    np.testing.assert_array_equal(spec.network.demands, ref.demands)
    # the client delay carries 64 MiB x 0.25 ns/B = 16.8 ms more than without the term
    plain = load(EXAMPLES / "nfs.toml").network
    i = spec.network.names.index("client")
    assert spec.network.demands[i] - plain.demands[i] == pytest.approx(
        64 * 2**20 * 2.5e-10, rel=1e-12
    )


@pytest.mark.parametrize(
    ("change", "key", "fragment", "message"),
    [
        (
            ('link_rate = "100 Mbit/s"', 'link_rate = "100 Mb/s"'),
            "system.link_rate",
            "link_rate",
            "ambiguous",
        ),
        (
            ("master_cache_hit = 0.0", "master_cache_hit = 1.5"),
            "system.master_cache_hit",
            "master_cache_hit",
            "1.5",
        ),
        (("master_cache_hit = 0.0", "cache_hit = 0.5"), "system.cache_hit", "cache_hit", "unknown"),
        (('type = "networked_raid"', 'type = "san"'), "system.type", "type =", "must be one of"),
    ],
)
def test_system_errors_point_at_the_key(change, key, fragment, message):
    text = (EXAMPLES / "networked_raid.toml").read_text()
    bad = text.replace(*change)
    assert bad != text
    with pytest.raises(ModelFileError) as exc:
        loads(bad, source="nr.toml")
    assert exc.value.key == key
    assert exc.value.line == line_of(bad, fragment)
    assert message in str(exc.value)


def test_raid_system_errors():
    base = (EXAMPLES / "raid_array.toml").read_text()
    with pytest.raises(ModelFileError, match=r"system\.disks: must be an integer >= 1"):
        loads(base.replace("disks = 4", "disks = 0"))
    with pytest.raises(ModelFileError, match="a raid system needs disk_demand"):
        loads(base.replace('disk_demand = "8 ms"', ""))
    with pytest.raises(ModelFileError, match=r"system\.level"):
        loads(base.replace('level = "raid5"', 'level = "raid7"'))
    with pytest.raises(ModelFileError, match="duplicate station name 'disk1'"):
        loads(base.replace('name = "host_cpu"', 'name = "disk1"'))


def test_raid_system_read_write_mix():
    """issue 26 item 4: `op = { read = 0.7, write = 0.3 }`, as disk_demands takes it."""
    from qnmodel.models.raid import disk_demands

    base = (EXAMPLES / "raid_array.toml").read_text()
    assert 'op = "write"' in base
    spec = loads(base.replace('op = "write"', "op = { read = 0.7, write = 0.3 }"))
    py = disk_demands("8 ms", "raid5", 4, {"read": 0.7, "write": 0.3}, "random")
    np.testing.assert_array_equal(spec.network.demands[:4], py)
    # RAID5 random, 4 disks: reads T = 4 (m = 1/4), writes T = N/4 = 1 (m = 1):
    # 0.7 x 8 ms / 4 + 0.3 x 8 ms = 3.8 ms per member (3 operations a side)
    assert spec.network.demands[:4].tolist() == pytest.approx([3.8e-3] * 4, rel=closed_form(5))
    for mix, message in [
        ("{ read = 0.7, write = 0.2 }", r"system\.op: op: the mix's fractions sum to 0\.9, not 1"),
        ("{ read = 1.5, write = -0.5 }", r"system\.op: op\['read'\] must be in \[0, 1\]"),
        ("{ read = 0.5, trim = 0.5 }", r"system\.op: op: unknown operation 'trim' in the mix"),
    ]:
        with pytest.raises(ModelFileError, match=message):
            loads(base.replace('op = "write"', f"op = {mix}"))
    with pytest.raises(InvalidModelError, match="sum to 0.9, not 1"):
        disk_demands("8 ms", "raid5", 4, {"read": 0.7, "write": 0.2}, "random")


# -- multi-class models ----------------------------------------------------------------------
def _mix_ps() -> str:
    """examples/read_write_mix.toml with its link and CPU processor-shared: the classes'
    service times differ there, so under FCFS the model is not product form."""
    text = (EXAMPLES / "read_write_mix.toml").read_text()
    out = text.replace('rate = "1 Gbit/s"\n', 'rate = "1 Gbit/s"\ndiscipline = "PS"\n', 1)
    out = out.replace("servers = 2\n", 'servers = 2\ndiscipline = "PS"\n', 1)
    assert out.count('discipline = "PS"') == 2
    return out


def test_multiclass_model_equals_python_api():
    from qnmodel.solvers.mva_multiclass import mva_multiclass

    spec = loads(_mix_ps())
    mc = spec.multiclass  # the Network with classes
    assert spec.is_multiclass and mc.class_names == ("read", "write")
    assert mc.N.tolist() == [40, 10] and mc.think_time.tolist() == [0.2, 1.0]
    expected = np.array(
        [
            [65536 / 125e6, 0.3e-3, 0.4 * 6e-3, 0.0],
            [262144 / 125e6, 0.9e-3, 6e-3, 6e-3],
        ]
    )
    np.testing.assert_allclose(mc.demands, expected, rtol=1e-15)
    ref = mva_multiclass(
        pf_net(expected, [40, 10], [0.2, 1.0], servers=[1, 2, 1, 1],
               names=["network", "server_cpu", "disk", "mirror_disk"])
    )  # fmt: skip
    sol = spec.solve()
    assert sol.result.method == "mva.multiclass.ld"  # exact with the two-core CPU
    np.testing.assert_allclose(sol.result.throughput, ref.throughput, rtol=1e-14)
    frame = sol.to_frame()
    assert list(frame["class"]) == ["read", "write"]
    np.testing.assert_allclose(frame["response_time"], ref.response_time, rtol=1e-14)
    # Little's law per class: X_c = N_c / (Z_c + R_c).
    # the solver's X_c = N_c / (Z_c + sum_k R_ck) against the frame's: 2 K + 4 operations, K <= 6
    np.testing.assert_allclose(
        frame["throughput"],
        frame["population"] / (frame["think_time"] + frame["response_time"]),
        rtol=closed_form(16),
    )
    assert sol.summary()["bottleneck"] == "disk"


def test_multiclass_fcfs_with_class_dependent_service_is_solved_approximately():
    spec = load(EXAMPLES / "read_write_mix.toml")
    # the disk gives one service time and per-class visits: it stays product form
    assert spec.multiclass.compiled.features["fcfs_class_dependent"] == ("network", "server_cpu")
    sol = spec.solve()
    assert sol.result.method == "amva.linearizer+seidmann+fcfs (approximate)"
    ref = qn.amva(spec.multiclass, method="linearizer")
    np.testing.assert_array_equal(sol.result.throughput, ref.throughput)
    with pytest.raises(
        qn.InvalidModelError,
        match=r"^mva_multiclass cannot solve FCFS stations whose classes have different service "
        r"times \(stations 'network', 'server_cpu'\): use qnmodel.amva",
    ):
        qn.mva_multiclass(spec.multiclass)


def test_station_discipline_key():
    text = _mix_ps()
    spec = loads(text)
    assert spec.multiclass.compiled.discipline == ("PS", "PS", "FCFS", "FCFS")
    np.testing.assert_array_equal(spec.multiclass.compiled.S[:, 2], [6e-3, 6e-3])
    np.testing.assert_array_equal(spec.multiclass.compiled.V[:, 2], [0.4, 1.0])
    with pytest.raises(ModelFileError) as exc:
        loads(text.replace('discipline = "PS"', 'discipline = "SJF"', 1))
    assert exc.value.key == "station[0].discipline"
    assert "must be one of ['FCFS', 'PS', 'LCFS-PR', 'IS', 'HOL', 'PRIO-PR'], got 'SJF'" in str(
        exc.value
    )
    with pytest.raises(ModelFileError) as exc:
        loads(text.replace('discipline = "PS"', 'discipline = "PS"\nkind = "delay"', 1))
    assert exc.value.key == "station[0].discipline"
    assert "kind = 'delay' contradicts discipline = 'PS'" in str(exc.value)
    one = loads(BASIC.replace('demand = "5 ms"', 'demand = "5 ms"\ndiscipline = "IS"'))
    assert one.network.is_delay.any()


def test_one_class_model_equals_single_class_mva():
    text = toml(
        """
        [model]
        think_time = "1 s"
        [[class]]
        name = "only"
        N = 25
        [[station]]
        name = "a"
        demand = { only = "10 ms" }
        [[station]]
        name = "b"
        demand = "30 ms"
        """
    )
    sol = loads(text).solve()
    ref = qn.mva(qn.Network.from_demands(["10 ms", "30 ms"], think_time="1 s"), 25)
    assert sol.result.throughput[0] == pytest.approx(ref.throughput[-1], rel=1e-13)
    assert sol.result.response_time[0] == pytest.approx(ref.response_time[-1], rel=1e-13)


@pytest.mark.parametrize(
    ("change", "key", "message"),
    [
        (
            ('demand = { read = "0.3 ms", write = "0.9 ms" }', 'demand = { read = "0.3 ms" }'),
            "station[1].demand",
            "no value for class 'write'",
        ),
        (
            (
                'demand = { read = "0.3 ms", write = "0.9 ms" }',
                'demand = { read = "0.3 ms", write = "0.9 ms", scan = "1 ms" }',
            ),
            "station[1].demand.scan",
            "unknown class",
        ),
        (
            ("visits = { read = 0.4, write = 1 }", "visits = { read = -0.4, write = 1 }"),
            "station[2].visits.read",
            ">= 0",
        ),
        (
            ('name = "write"\nN = 10', 'name = "write"\nN = -1'),
            "class[1].N",
            "integer >= 0",
        ),
        (
            ('think_time = "200 ms"', 'think_time = "200 ms"\nN = 5'),
            "model.N",
            "from the [[class]] tables",
        ),
        (('name = "write"', 'name = "read"'), "class[1].name", "duplicate class"),
    ],
)
def test_multiclass_errors(change, key, message):
    text = (EXAMPLES / "read_write_mix.toml").read_text()
    bad = text.replace(*change)
    assert bad != text
    with pytest.raises(ModelFileError) as exc:
        loads(bad, source="mix.toml")
    assert exc.value.key == key
    assert message in str(exc.value)
    assert exc.value.line is not None


def test_per_class_table_in_single_class_model_is_an_error():
    with pytest.raises(ModelFileError, match="needs \\[\\[class\\]\\] tables"):
        loads(BASIC.replace('demand = "5 ms"', 'demand = { a = "5 ms" }'))


def test_with_values_class_population():
    spec = loads(_mix_ps())
    s2 = with_values(spec, {"class.write.N": 0})
    assert s2.multiclass.N.tolist() == [40, 0]
    assert s2.solve().result.throughput[1] == 0.0
    with pytest.raises(qn.InvalidModelError, match="class.<name>.N"):
        with_values(spec, {"class.scan.N": 3})


def test_multiclass_file_builds_the_l1_description():
    spec = loads(_mix_ps())
    net = spec.multiclass
    assert isinstance(net, qn.Network) and not net.single
    assert net.class_names == ("read", "write") and net.N.tolist() == [40, 10]
    assert net.think_time.tolist() == [0.2, 1.0] and net.servers.tolist() == [1, 2, 1, 1]
    # The same model written with the Python API: per-class demands, closed classes.
    ref = qn.Network(
        [
            qn.Station("network", {"read": 65536 / 125e6, "write": 262144 / 125e6},
                       discipline="PS"),
            qn.Station("server_cpu", {"read": "0.3 ms", "write": "0.9 ms"}, servers=2,
                       discipline="PS"),
            qn.Station("disk", service_time="6 ms", visits={"read": 0.4, "write": 1}),
            qn.Station("mirror_disk", {"write": "6 ms"}),
        ],
        classes=[qn.ClosedClass("read", 40, "200 ms"), qn.ClosedClass("write", 10, "1 s")],
    )  # fmt: skip
    np.testing.assert_allclose(net.demands, ref.demands, rtol=1e-15)
    a, b = spec.solve().result, qn.mva_multiclass(ref)
    np.testing.assert_allclose(a.throughput, b.throughput, rtol=1e-14)
    assert load(EXAMPLES / "demo_storage.toml").multiclass is None


# -- rate_multipliers (issue 26 item 4) ----------------------------------------------------
NVME = toml(
    """
    [model]
    name = "nvme"
    N = 32

    [[station]]
    name = "nvme"
    demand = "102 us"
    rate_multipliers = [1, 1.888, 2.6, 3.367, 4.5, 5.306]
    """
)


def test_rate_multipliers_in_a_model_file_equal_the_python_station():
    spec = loads(NVME)
    st = spec.network.station("nvme")
    assert st.rate_multipliers.tolist() == [1, 1.888, 2.6, 3.367, 4.5, 5.306]
    py = qn.Network([qn.Station("nvme", "102 us", rate_multipliers=[1, 1.888, 2.6, 3.367, 4.5,
                                                                   5.306])])  # fmt: skip
    sol = spec.solve()
    got = sol.mva
    assert sol.bjb is None  # BJB assume load-independent stations; ABA hold (max r / D)
    ref = qn.mva(py, 32)
    assert got.throughput.tolist() == ref.throughput.tolist()
    # one station, no think time: X(j) = r(min(j, L)) / D (the last multiplier holds beyond)
    assert got.throughput[0] == pytest.approx(1 / 102e-6, rel=closed_form(2))
    assert got.throughput[-1] == pytest.approx(5.306 / 102e-6, rel=closed_form(2))
    # an open model takes it too (the birth-death chain of open_network)
    open_spec = loads(NVME.replace("N = 32", 'arrival_rate = "20000/s"'))
    assert open_spec.solve().result.response_time[0] == pytest.approx(
        qn.open_network(py, 20000).response_time[0], rel=1e-15
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("[1, 0, 2]", r"rate_multipliers\[1\] must be finite and > 0"),
        ("[]", "is empty: give the rate multiplier at 1, 2, ... jobs"),
        ('"1.8"', "must be a sequence of positive numbers, one per queue depth"),
        ('[1, "2"]', r"rate_multipliers\[1\] must be a number, got '2'"),
    ],
)
def test_rate_multipliers_errors_are_the_python_validators(value, message):
    text = NVME.replace("[1, 1.888, 2.6, 3.367, 4.5, 5.306]", value)
    with pytest.raises(ModelFileError, match=r"<string>:8: station\[0\]\.rate_multipliers: "):
        loads(text)
    with pytest.raises(ModelFileError, match=message):
        loads(text)


def test_rate_multipliers_with_servers_or_on_a_delay_are_refused():
    with pytest.raises(ModelFileError, match=r"rate_multipliers: give either servers = 2 or "):
        loads(NVME.replace("rate_multipliers", "servers = 2\nrate_multipliers"))
    with pytest.raises(ModelFileError, match="rate_multipliers apply to a queueing station"):
        loads(NVME.replace("rate_multipliers", 'kind = "delay"\nrate_multipliers'))


# -- open multi-class files (issue 26 item 4) -----------------------------------------------
OPEN_MIX = toml(
    """
    [model]
    name = "open-mix"

    [[class]]
    name = "read"
    arrival_rate = "50/s"

    [[class]]
    name = "write"
    arrival_rate = "20/s"

    [[station]]
    name = "cpu"
    demand = { read = "1 ms", write = "2 ms" }
    discipline = "PS"

    [[station]]
    name = "disk"
    demand = { read = "4 ms", write = "8 ms" }
    discipline = "PS"
    """
)


def test_open_multiclass_file_equals_the_python_description():
    spec = loads(OPEN_MIX)
    assert spec.is_open and spec.is_multiclass
    py = qn.Network(
        [qn.Station("cpu", {"read": "1 ms", "write": "2 ms"}, discipline="PS"),
         qn.Station("disk", {"read": "4 ms", "write": "8 ms"}, discipline="PS")],
        classes=[qn.OpenClass("read", 50), qn.OpenClass("write", 20)],
    )  # fmt: skip
    ref = qn.open_network(py)
    frame = spec.solve().to_frame()
    assert frame["class"].tolist() == ["read", "write"]
    assert frame["arrival_rate"].tolist() == [50.0, 20.0]
    assert frame["response_time"].tolist() == ref.response_time[0].tolist()
    # BCMP: U = sum_c lambda_c D_c = 0.05 + 0.04 (cpu), 0.2 + 0.16 (disk); R_c = sum_k D_ck/(1-U_k)
    assert frame["response_time"][0] == pytest.approx(
        1e-3 / (1 - 0.09) + 4e-3 / (1 - 0.36), rel=closed_form(10)
    )
    assert spec.solve().summary()["bottleneck"] == "disk"
    sol = spec.solve()
    assert sol.to_dict()["summary"]["bottleneck_utilization"] == pytest.approx(0.36, rel=1e-15)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('arrival_rate = "20/s"', "N = 3"),
         r"class: the classes of a model file are all closed \(N\) or all open"),
        (('arrival_rate = "20/s"', 'arrival_rate = "20/s"\nN = 3'),
         r"class\[1\]: every class needs a name and either a population N \(closed\) or an "
         r"arrival_rate \(open\)"),
        (('arrival_rate = "20/s"', 'arrival_rate = "20 MB/s"'), r"class\[1\]\.arrival_rate: "),
        (('arrival_rate = "20/s"', 'arrival_rate = ["20/s", "30/s"]'),
         r"class\[1\]\.arrival_rate: must be one rate"),
        (('arrival_rate = "20/s"', 'arrival_rate = "20/s"\nthink_time = "1 s"'),
         r"class\[1\]\.think_time: an open class \(arrival_rate\) has no think time"),
        (('name = "open-mix"', 'name = "open-mix"\narrival_rate = "5/s"'),
         r"model\.arrival_rate: arrival_rate under \[model\] makes a single-class open model; "
         r"with \[\[class\]\] tables, give each class its own arrival_rate"),
    ],
)  # fmt: skip
def test_open_multiclass_file_errors(change, message):
    with pytest.raises(ModelFileError, match=message):
        loads(OPEN_MIX.replace(*change))


def test_open_multiclass_file_from_the_command_line(tmp_path):
    import contextlib
    import io

    from qnmodel.cli import main

    path = tmp_path / "mix.toml"
    path.write_text(OPEN_MIX)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["solve", str(path)]) == 0
    text = out.getvalue()
    assert "lambda [jobs/s]" in text and "read" in text and "write" in text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["solve", str(path), "--set", "class.write.arrival_rate=40/s"]) == 0
    assert "write" in out.getvalue()
    assert with_values(loads(OPEN_MIX), {"class.write.arrival_rate": "40/s"}).multiclass.classes[
        1
    ].arrival_rate == pytest.approx(40.0)
    grid = modelfile.sweep_model(loads(OPEN_MIX), {"class.read.arrival_rate": ["10/s", "60/s"]})
    assert grid.columns.tolist()[:3] == ["class.read.arrival_rate", "bottleneck", "class"]
    assert grid["arrival_rate"].tolist() == [10.0, 20.0, 60.0, 20.0]
