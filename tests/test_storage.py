"""NetworkedRAID (seed 002) against an independent exact evaluation of eqs. (2)-(10).

Every system here is the paper's form, ``form="paper"`` (eqs. 2-10 as printed); the default
corrected form is tested in tests/models/test_storage_corrected.py.
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qnmodel as qn
from qnmodel.errors import InvalidModelError, InvalidTypeError, UnitError
from qnmodel.models.storage import CUI2006, PARAMETERS, STATIONS, SYMBOLS, NetworkedRAID

from ._tol import closed_form
from .demands._load_hand import load_hand

hand = load_hand()
# eqs. (2)-(10) of [Cui06] in floats against the same formulas in exact rationals: at most ~16
# operations a demand, sums of non-negative terms (1 - P is exact or one rounding)
REL = closed_form(16)
JSON_PATH = Path(__file__).resolve().parents[1] / "data" / "reference" / "cui2006.json"


def system_from_fractions(p: dict, **kw) -> NetworkedRAID:
    si = {k: (float(v) if k != "STP_m" else v) for k, v in p.items()}
    return NetworkedRAID.from_symbols(**si, **{"form": "paper", **kw})


def assert_demands_match(sys: NetworkedRAID, exact: dict):
    got = sys.demands()
    assert tuple(got) == STATIONS
    for k in STATIONS:
        want = float(exact[k])
        assert got[k] == pytest.approx(want, rel=REL, abs=0), k


# -- the paper's test bed: read and write, with and without cache hits ---------------------------
@pytest.mark.parametrize("op", ["write", "read"])
@pytest.mark.parametrize(("p_m", "p_sn"), [(0, 0), (F(3, 10), 0), (0, F(1, 4)), (F(1, 2), F(2, 5))])
def test_testbed_demands_match_hand_evaluation(op, p_m, p_sn):
    p = dict(hand.TESTBED, P_m=F(p_m), P_sn=F(p_sn))
    assert_demands_match(system_from_fractions(p, op=op), hand.hand_demands(p, "raid5", op))


def test_testbed_write_numbers_by_hand():
    # A few figures worth seeing: 200 MB RAID5 write over 3 servers at 100 Mbit/s.
    d = NetworkedRAID.cui2006(form="paper", op="write").demands()
    assert d["network"] == pytest.approx(24.0, rel=REL)  # 300e6 B / 12.5e6 B/s
    assert d["nic_master"] == pytest.approx(205480 * 1518 / 12.5e6, rel=REL)
    assert d["cpu_master"] == pytest.approx(0.027e-3 * 200e6 / 16384 + 0.045e-3 * 205480, rel=REL)
    # the master NIC (framing overhead 1518/1460) is the bottleneck at high concurrency
    assert max(d, key=d.get) == "nic_master"


@pytest.mark.parametrize(
    ("raid", "stp"), [("raid0", 4), ("raid1", 2), ("raid10", 4), ("raid5", 5), ("raid6", 6)]
)
@pytest.mark.parametrize("op", ["write", "read"])
@pytest.mark.parametrize("visit", ["paper", "one_server", "all_servers"])
def test_every_raid_level_and_reading(raid, stp, op, visit):
    p = dict(hand.TESTBED, STP_m=stp, P_m=F(1, 5), P_sn=F(1, 10))
    sys = system_from_fractions(p, raid=raid, op=op, server_terms=visit)
    assert_demands_match(sys, hand.hand_demands(p, raid, op, visit))


@settings(max_examples=60, deadline=None)
@given(
    s_m=st.integers(1, 10**12),
    stu=st.sampled_from([512, 4096, 16384, 65536, 1 << 20]),
    stp=st.integers(3, 16),
    mss=st.integers(500, 9000),
    t=st.lists(st.floats(1e-7, 1e-2), min_size=6, max_size=6),
    rates=st.lists(st.floats(1e5, 1e11), min_size=2, max_size=2),
    hits=st.lists(st.floats(0, 1), min_size=2, max_size=2),
    raid=st.sampled_from(["raid0", "raid10", "raid5", "raid6"]),
    op=st.sampled_from(["read", "write"]),
)
def test_random_systems_match_hand_evaluation(s_m, stu, stp, mss, t, rates, hits, raid, op):
    p = {
        "S_m": F(s_m), "STU_m": F(stu), "STP_m": stp, "MSS": F(mss), "Frame_e": F(mss + 58),
        "T_mpro": F(t[0]), "T_mp": F(t[1]), "T_snpro": F(t[2]), "T_snp": F(t[3]),
        "seek": F(t[4]), "latency": F(t[5]), "TRate_e": F(rates[0]), "TRate_d": F(rates[1]),
        "P_m": F(hits[0]), "P_sn": F(hits[1]),
    }  # fmt: skip
    sys = system_from_fractions(p, raid=raid, op=op)
    exact = hand.hand_demands(p, raid, op)
    got = sys.demands()
    for k in STATIONS:
        assert got[k] == pytest.approx(float(exact[k]), rel=REL, abs=1e-300), k


# -- the reference file --------------------------------------------------------------------------
def test_reference_file_matches_embedded_testbed_and_expected_values():
    doc = json.loads(JSON_PATH.read_text(encoding="utf-8"))
    for sym, entry in CUI2006["parameters"].items():
        for key in ("value", "readings", "default"):
            assert doc["parameters"][sym].get(key) == entry.get(key), (sym, key)
        assert SYMBOLS[sym] == doc["parameters"][sym]["name"]
    assert set(doc["parameters"]) == set(SYMBOLS)
    for case in doc["expected"]["cases"]:
        a = NetworkedRAID.from_reference(
            JSON_PATH, form="paper", op=case["op"], readings=case["readings"]
        )
        b = NetworkedRAID.cui2006(form="paper", op=case["op"], readings=case["readings"])
        assert a == b
        for k, v in case["demands"].items():
            assert a.demands()[k] == pytest.approx(v, rel=doc["expected"]["tolerance_rel"])


def test_disk_rate_readings_differ_by_exactly_eight_in_the_transfer_term():
    a = NetworkedRAID.cui2006(form="paper", readings={"TRate_d": "datasheet"})
    b = NetworkedRAID.cui2006(form="paper", readings={"TRate_d": "as_printed"})
    assert a.disk_rate == 35e6 and b.disk_rate == 35e6 / 8
    assert b.intermediates()["disk_unit_time"] - a.intermediates()["disk_unit_time"] == (
        pytest.approx(16384 / 35e6 * 7, rel=1e-12)
    )
    assert NetworkedRAID.cui2006(form="paper", readings={"S_m": "binary"}).job_size == 200 * 1024**2


def test_reading_errors():
    with pytest.raises(InvalidModelError, match=r"readings\['TRate_d'\] must be one of"):
        NetworkedRAID.cui2006(form="paper", readings={"TRate_d": "megabits"})
    with pytest.raises(InvalidModelError, match="'MSS' has no alternative readings"):
        NetworkedRAID.cui2006(form="paper", readings={"MSS": "x"})
    with pytest.raises(InvalidModelError, match="cannot read reference file"):
        NetworkedRAID.from_reference(JSON_PATH.with_name("nope.json"))


# -- units and names -----------------------------------------------------------------------------
def test_units_strings_and_si_numbers_agree():
    a = NetworkedRAID.cui2006(form="paper")
    b = NetworkedRAID(
        job_size="200 MB", stripe_unit="16 KiB", stripe_width=3,
        master_time_per_unit="27 us", master_time_per_packet="45 us",
        server_time_per_unit="33 us", server_time_per_packet="28 us",
        link_rate="100 Mbit/s", disk_seek="4.9 ms", disk_latency="2.99 ms",
        disk_rate="35 MB/s", mss="1460 B", frame_size="1518 B", form="paper",
    )  # fmt: skip
    assert a == b
    c = NetworkedRAID.from_symbols(**a.symbols(), raid="raid5", op="write", form="paper")
    assert c == a
    assert a.link_rate == 12.5e6  # a plain number is always bytes/s


def test_a_bit_rate_cannot_pass_as_a_byte_rate():
    with pytest.raises(UnitError, match=r"link_rate \(TRate_e\).*ambiguous"):
        NetworkedRAID.cui2006(form="paper", link_rate="100 Mb/s")
    with pytest.raises(UnitError, match=r"disk_rate.*is a size"):
        NetworkedRAID.cui2006(form="paper", disk_rate="35 MB")
    assert NetworkedRAID.cui2006(form="paper", TRate_e="1 Gbit/s").link_rate == 125e6
    assert NetworkedRAID.cui2006(form="paper", link_rate="1 Gbps").link_rate == 125e6


@pytest.mark.parametrize(
    ("change", "exc", "match"),
    [
        ({"P_m": 1.5}, InvalidModelError, r"master_cache_hit \(P_m\) must be in \[0, 1\]"),
        ({"STP_m": 1}, InvalidModelError, r"stripe_width \(STP_m\) must be >= 2 for raid5"),
        ({"raid": "raid1"}, InvalidModelError, r"must be == 2 for raid1, got 3"),
        ({"STP_m": 2.5}, InvalidModelError, r"stripe_width \(STP_m\) must be an integer"),
        ({"link_rate": 0}, InvalidModelError, r"link_rate \(TRate_e\) must be > 0"),
        ({"seek": -1}, InvalidModelError, r"disk_seek \(seek\) must be >= 0"),
        ({"Frame_e": 1000}, InvalidModelError, r"frame_size \(Frame_e\) must be >= mss"),
        ({"op": "append"}, InvalidModelError, r"op must be one of"),
        ({"server_terms": "both"}, InvalidModelError, r"server_terms must be one of"),
        ({"job_size": [1]}, InvalidTypeError, r"job_size \(S_m\) must be a number"),
        ({"bandwidth": 1}, InvalidModelError, r"unknown NetworkedRAID parameter 'bandwidth'"),
    ],
)
def test_bad_input_names_the_field(change, exc, match):
    with pytest.raises(exc, match=match):
        NetworkedRAID.cui2006(form="paper").replace(**change)


def test_frozen_and_hashable():
    sys = NetworkedRAID.cui2006(form="paper")
    with pytest.raises(AttributeError):
        sys.job_size = 1.0
    assert hash(sys) == hash(NetworkedRAID.cui2006(form="paper"))


def test_parameter_table_is_complete():
    assert set(PARAMETERS) | {"raid", "op", "server_terms", "form"} == {
        f.name for f in __import__("dataclasses").fields(NetworkedRAID)
    }


# -- the network and its solutions ---------------------------------------------------------------
def test_network_structure_and_think_time():
    sys = NetworkedRAID.cui2006(form="paper")
    net = sys.network(think_time="2 s")
    assert net.names == STATIONS and net.think_time == 2.0
    np.testing.assert_array_equal(net.demands, list(sys.demands().values()))
    big = sys.network(expand_servers=True)
    assert big.K == 3 + 3 * 3
    assert big.station("disk_3").demand == sys.demands()["disk"]
    with pytest.raises(InvalidTypeError, match="expand_servers"):
        sys.network(expand_servers="yes")


def test_disk_array_behind_each_server_feeds_the_network():
    # A disk-bound variant: 10 Gbit/s network, every server doing its share of every job.
    sys = NetworkedRAID.cui2006(form="paper", link_rate="10 Gbit/s", server_terms="one_server")
    exact = hand.hand_demands(
        dict(hand.TESTBED, TRate_e=F(10**10, 8)), "raid5", "write", "one_server"
    )
    d_disk = exact["disk"]
    assert max(exact, key=exact.get) == "disk"
    # one RAID0 disk is the disk itself
    one = sys.network(disk_array=("raid0", 1, "sequential"))
    assert one.names == (*STATIONS[:-1], "disk_m1")
    np.testing.assert_array_equal(one.demands, sys.network().demands)
    # RAID0 of 4: each member carries D_d / 4 (T = 4); the disk stops being the bottleneck
    net = sys.network(disk_array=("raid0", 4, "sequential"))
    assert net.names[-4:] == ("disk_m1", "disk_m2", "disk_m3", "disk_m4")
    np.testing.assert_allclose(net.demands[-4:], [float(d_disk / 4)] * 4, rtol=1e-15)
    others = max(float(v) for k, v in exact.items() if k != "disk")
    b = qn.bounds(net, 10)
    assert b.saturation_throughput == pytest.approx(1 / max(others, float(d_disk / 4)), rel=1e-13)
    # RAID5 small random writes: T = N/4 = 1 on 4 disks, so no gain over one disk
    r5 = sys.network(disk_array=("raid5", 4, "random"))
    np.testing.assert_allclose(r5.demands[-4:], [float(d_disk)] * 4, rtol=1e-15)
    assert qn.bounds(r5, 10).saturation_throughput == pytest.approx(1 / float(d_disk), rel=1e-13)
    # with expanded servers: STP_m servers x members, named per server
    big = sys.network(expand_servers=True, disk_array=("raid10", 4, "sequential"))
    assert big.K == 3 + 2 * 3 + 3 * 4
    assert "disk_3_m4" in big.names and big.station("disk_2_m1").demand == pytest.approx(
        float(d_disk / 2), rel=1e-15
    )  # raid10 sequential write: T = N/2 = 2


@pytest.mark.parametrize(
    ("array", "exc", "match"),
    [
        ("raid5", InvalidTypeError, r"disk_array must be a \(level, disks, pattern\) tuple"),
        (("raid5", 4), InvalidModelError, r"got 2 values: \('raid5', 4\)"),
        (("raid5", 2, "random"), InvalidModelError, r"disks must be >= 3 for raid5, got 2"),
        (("raid10", 5, "random"), InvalidModelError, r"disks must be even for raid10"),
        (("raid4", 4, "random"), InvalidModelError, r"level must be one of"),
        (("raid0", 4, "striped"), InvalidModelError, r"pattern must be one of"),
    ],
)
def test_disk_array_errors(array, exc, match):
    with pytest.raises(exc, match=match):
        NetworkedRAID.cui2006(form="paper").network(disk_array=array)


def test_paper_eq1_lower_bound_and_exact_mva():
    sys = NetworkedRAID.cui2006(form="paper")
    d = np.array(list(sys.demands().values()))
    N = 40
    b = sys.bounds(N)
    n = np.arange(1, N + 1)
    lower = np.maximum(n * d.max(), d.sum() + (n - 1) * d.mean())  # [Cui06] eq. (1)
    np.testing.assert_allclose(b.response_time_lower, lower, rtol=1e-13)
    m = sys.mva(N)
    assert np.all(m.response_time >= b.response_time_lower * (1 - 1e-12))
    assert np.all(m.response_time <= b.response_time_upper * (1 + 1e-12))
    # saturation: X -> 1/D_max of the master NIC
    assert m.throughput[-1] < 1 / d.max() and m.throughput[-1] > 0.97 / d.max()
    assert m.response_time[0] == pytest.approx(d.sum(), rel=1e-13)


def test_cache_hits_and_bandwidth_act_as_the_formulas_say():
    base = NetworkedRAID.cui2006(form="paper")
    half = base.replace(P_m=0.5).demands()
    for k, v in base.demands().items():
        if k == "cpu_master":
            unit_term = 0.027e-3 * 200e6 / 16384
            assert half[k] == pytest.approx(unit_term + 0.5 * (v - unit_term), rel=1e-13)
        else:
            assert half[k] == pytest.approx(0.5 * v, rel=1e-13)
    fast = base.replace(link_rate="1 Gbit/s").demands()
    for k in ("nic_master", "network", "nic_server"):
        assert fast[k] == pytest.approx(base.demands()[k] / 10, rel=1e-13)


def test_demand_grid_matches_pointwise_demands():
    sys = NetworkedRAID.cui2006(form="paper")
    rates = np.array([1.25e6, 12.5e6, 125e6, 1.25e9])[:, None]
    hits = np.array([0.0, 0.3, 0.9])[None, :]
    g = sys.demand_grid(link_rate=rates, P_m=hits)
    for i, r in enumerate(rates[:, 0]):
        for j, h in enumerate(hits[0]):
            d = sys.replace(link_rate=r, master_cache_hit=h).demands()
            for k in STATIONS:
                assert g[k][i, j] == pytest.approx(d[k], rel=1e-15)
    with pytest.raises(InvalidModelError, match="must be 2 for raid1"):
        sys.demand_grid(raid="raid1")
    # the message shows the offending pair, not the grid's extremes
    with pytest.raises(InvalidModelError, match=r"got frame_size=1400.0, mss=1460.0 bytes"):
        sys.demand_grid(frame_size=np.array([1518.0, 9018.0, 1400.0]), MSS=1460.0)


def test_describe_and_intermediates():
    sys = NetworkedRAID.cui2006(form="paper")
    text = sys.describe()
    assert "TRate_e" in text and "12.5 MB/s" in text and "nic_master" in text
    i = sys.intermediates()
    assert i["packets"] == 205480 and i["raid_bytes"] == 300e6 and i["byte_factor"] == 1.5
    assert i["server_visit_ratio"] == pytest.approx(1 / 3, rel=closed_form(2))


def test_top_level_network_is_the_foundation_class():
    assert isinstance(NetworkedRAID.cui2006(form="paper").network(), qn.Network)
