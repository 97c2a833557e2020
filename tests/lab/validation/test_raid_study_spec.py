"""The raid study's file, model and predictions, without a testbed (hand values)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qnmodel.errors import InvalidModelError
from qnmodel.lab import testbed
from qnmodel.lab.validation import load_study, summarize
from qnmodel.lab.validation import raid as rs

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "testbed"


def spec(**raid):
    return {"study": {"kind": "raid"}, "raid": raid}


@pytest.fixture(scope="module")
def topo():
    return testbed.load_topology(EXAMPLES / "raid_100mbit.toml")


def test_example_studies_parse(topo):
    for name in ("raid_study.toml", "raid_study_quick.toml", "raid_study_1gbit.toml"):
        doc, t = load_study(EXAMPLES / name)
        assert t.name.startswith("tr") and len(t.servers) == 4
        p = rs.parse(doc, t)
        assert p["chunk"] == 65536.0 and max(p["populations"]) <= 32
    p = rs.parse(load_study(EXAMPLES / "raid_study.toml")[0], topo)
    assert len(p["cases"]) == 10
    assert {(c["raid"], c["op"]) for c in p["cases"]} == {
        ("raid0", "read"),
        ("raid0", "write"),
        ("raid5", "read"),
        ("raid5", "write"),
    }
    # defaults: a stripe's data per request
    assert [c["chunks"] for c in p["cases"][:3]] == [2, 3, 4]
    assert p["cases"][6]["chunks"] == 2 and p["cases"][8]["chunks"] == 1


@pytest.mark.parametrize(
    "raid, match",
    [
        (dict(bogus=1), "raid.bogus: unknown key"),
        (dict(populations=[0, 2]), "raid.populations must be integers"),
        (dict(repeat=0), "raid.repeat must be"),
        (dict(form="pipelined"), "raid.form must be"),
        (dict(forkjoin="overlap"), "raid.forkjoin must be 'forkjoin' or 'forkjoin_overlap'"),
        (dict(forkjoin=1), "raid.forkjoin must be"),
        (dict(access="rand"), "raid.access must be 'sequential' or 'random', got 'rand'"),
        (dict(access=True), "raid.access must be"),
        (dict(form="paper", forkjoin="forkjoin_overlap"), "needs raid.form = 'corrected'"),
        (dict(client="m1"), "raid.client: 'm1' is not a client"),
        (dict(chunk="0 KiB"), "raid.chunk"),
        (dict(cases=[dict(raid="raid6")]), r"raid.cases\[0\].raid must be"),
        (dict(cases=[dict(op="trim")]), r"raid.cases\[0\].op must be"),
        (dict(cases=[dict(raid="raid5", servers=2)]), r"servers must be 3..4 .* for raid5"),
        (dict(cases=[dict(servers=5)]), r"servers must be 2..4"),
        (dict(cases=[dict(chunks=0)]), r"chunks must be a positive integer"),
        (dict(cases=[dict(size=1)]), r"raid.cases\[0\].size: unknown key"),
        (dict(cycles=-1), r"raid.cycles must be a number 0..1000"),
        (dict(warmup_cycles="3"), r"raid.warmup_cycles must be a number"),
    ],
)
def test_bad_raid_tables(topo, raid, match):
    with pytest.raises(InvalidModelError, match=match):
        rs.parse(spec(**raid), topo)


def test_needs_a_topology_with_tcp_servers(topo, tmp_path):
    with pytest.raises(InvalidModelError, match="needs study.topology"):
        rs.parse(spec(), None)
    nfs = testbed.parse_topology({
        "testbed": {"name": "trnone"}, "clients": [{"name": "c"}],
        "servers": [{"name": "s", "service": "none"}],
    })  # fmt: skip
    with pytest.raises(InvalidModelError, match="needs tcp servers"):
        rs.parse(spec(), nfs)


def test_case_model_from_calibrated_values():
    case = dict(raid="raid0", op="read", servers=3, chunks=3, label="x")
    cal = dict(link_rate=12.5e6, disk_rate=5e9, time_per_unit=100e-6)
    m = rs.case_model(case, cal, 65536.0)
    d = m.demands()
    # 3 chunks moved: 0.3 ms CPU; 136 frames in; each server copies its chunk at 5 GB/s
    assert d["cpu_master"] == pytest.approx(3e-4)
    assert d["link_in"] == pytest.approx(136 * 1514 / 12.5e6)
    assert d["disk"] == pytest.approx(65536 / 5e9)
    pred = rs.predict(m, [1, 2, 8, 32])
    for n, p in pred.items():
        # BJB encloses exact MVA; N = 1 has R = D exactly
        assert p["r_lower"] * (1 - 1e-9) <= p["r_model"] <= p["r_upper"] * (1 + 1e-9)
        assert p["x_lower"] * (1 - 1e-9) <= p["x_model"] <= p["x_upper"] * (1 + 1e-9)
        assert p["x_model"] * p["r_model"] == pytest.approx(n, rel=1e-9)  # Little, Z = 0
    assert pred[1]["r_model"] == pytest.approx(sum(d.values()) + 2 * d["disk"], rel=1e-9)
    assert pred[32]["x_model"] == pytest.approx(1 / d["link_in"], rel=0.01)
    paper = rs.case_model(case, cal, 65536.0, form="paper")
    assert rs.predict(paper, [1])[1]["x_model"] < 0.55 * pred[1]["x_model"]


def test_predict_adds_the_overlapped_structure_where_it_applies():
    from qnmodel.models.storage_overlap import isolated_time, overlap_parts

    # the regime: emulated 2.155 ms disks, a chunk 0.53 ms on a 1 Gbit/s link
    case = dict(raid="raid0", op="read", servers=3, chunks=3, label="x")
    cal = dict(link_rate=125e6, disk_rate=65536 / 2.155e-3, time_per_unit=30e-6)
    m = rs.case_model(case, cal, 65536.0)
    pred = rs.predict(m, [1, 2, 8])
    assert pred[1]["r_lower_overlap"] == pytest.approx(isolated_time(overlap_parts(m)))
    assert pred[1]["r_overlap"] == pytest.approx(pred[1]["r_lower_overlap"], rel=1e-12)
    for q in pred.values():
        assert q["r_lower_overlap"] <= q["r_overlap"] <= q["r_upper_overlap"]
        assert q["x_lower_overlap"] <= q["x_overlap"] <= q["x_upper_overlap"] * (1 + 1e-12)
    pts = [dict(q, n=n, r_measured=q["r_overlap"], r_ci=0.0, x_measured=q["x_overlap"])
           for n, q in pred.items()]  # fmt: skip
    assert rs.inside_overlap(pts) == 1.0
    assert rs.overlap_mape(pts) == {"mape_x_overlap": 0.0, "mape_r_overlap": 0.0}
    pts[0]["x_measured"] = pts[0]["x_overlap"] / 1.1  # the model 10 % high at one of 3 points
    assert rs.overlap_mape(pts)["mape_x_overlap"] == pytest.approx(10.0 / 3)
    # a RAID5 one-chunk write is a read-modify-write: two overlapped phases, exact at N = 1
    rmw = dict(raid="raid5", op="write", servers=3, chunks=1, label="y")
    m5 = rs.case_model(rmw, cal, 65536.0)
    p5 = rs.predict(m5, [1], disk_scv=0.0)
    assert p5[1]["r_overlap"] == pytest.approx(isolated_time(overlap_parts(m5, 0.0)), rel=1e-12)
    # two stripes: not modelled by the overlapped structure, no overlapped prediction
    two = dict(raid="raid0", op="read", servers=3, chunks=6, label="z")
    p5 = rs.predict(rs.case_model(two, cal, 65536.0), [1])
    assert "r_overlap" not in p5[1]
    assert rs.inside_overlap([dict(p5[1], n=1, r_measured=1.0, r_ci=0.0)]) is None
    assert rs.overlap_mape([dict(p5[1], n=1)]) == {}


def test_disk_scv_reads_the_emulated_disks_law():
    from types import SimpleNamespace as NS

    def topo(*disks):
        return NS(servers=[NS(name=f"s{i}", disk=d) for i, d in enumerate(disks)])

    const, exp = NS(kind="emu", dist="const"), NS(kind="emu", dist="exp")
    assert rs.disk_scv(topo(const, const, exp), ["s0", "s1"]) == 0.0
    assert rs.disk_scv(topo(const, const, exp), ["s0", "s1", "s2"]) == 1.0
    assert rs.disk_scv(topo(NS(kind="memory", dist=None)), ["s0"]) == 1.0


#: the cases of each study of issue 28's regime grid (docs/explanation/overlap.md)
GRID_CASES = [
    "RAID0 read, 3 servers, 3 x chunk",
    "RAID0 read, 2 servers, 2 x chunk",
    "RAID0 read, 4 servers, 4 x chunk",
    "RAID5 read, 4 servers, 3 x chunk",
    "RAID0 write, 3 servers, 3 x chunk",
    "RAID5 write, 4 servers, 1 x chunk",
]


def test_overlap_example_studies_parse():
    for name, rate in (("raid_study_emu_overlap.toml", 125e6),
                       ("raid_study_emu_overlap_100mbit.toml", 12.5e6),
                       ("raid_study_emu_ratio_q.toml", 12.5e6),
                       ("raid_study_emu_ratio_1.toml", 12.5e6)):  # fmt: skip
        doc, t = load_study(EXAMPLES / name)
        p = rs.parse(doc, t)
        assert p["forkjoin"] == "forkjoin_overlap"
        if name == "raid_study_emu_overlap_100mbit.toml":
            assert p["populations"] == [1, 2, 4, 8, 16]
        else:  # issue 28's regime grid: every case at N = 1..32
            assert p["populations"] == [1, 2, 4, 8, 16, 32]
            assert [c["label"] for c in p["cases"]] == GRID_CASES
        assert all(s.disk.kind == "emu" and s.link.rate == rate for s in t.servers)
        assert rs.disk_scv(t, [s.name for s in t.servers]) == 1.0  # exponential disks
    # the constant-law twin of the d/c = 1 point: the overlapped model takes SCV 0
    doc, t = load_study(EXAMPLES / "raid_study_emu_ratio_1_const.toml")
    assert [c["label"] for c in rs.parse(doc, t)["cases"]] == GRID_CASES
    assert all(s.disk.dist == "const" for s in t.servers)
    assert rs.disk_scv(t, [s.name for s in t.servers]) == 0.0
    # the regime grid's disk/link demand ratios per 64 KiB chunk (TCP goodput 0.95 of 100 Mbit/s)
    c = 65536 / (0.95 * 12.5e6)
    for name, ratio in (("raid_study_emu_ratio_q.toml", 0.25), ("raid_study_emu_ratio_1.toml", 1)):
        _doc, t = load_study(EXAMPLES / name)
        d = t.servers[0].disk
        assert (d.latency + 65536 / d.rate) / c == pytest.approx(ratio, rel=0.05)


def test_windows_grow_with_the_models_response_time(topo):
    p = rs.parse(load_study(EXAMPLES / "raid_study.toml")[0], topo)
    assert (p["cycles"], p["warmup_cycles"]) == (8.0, 16.0)
    assert rs.parse(spec(), topo)["warmup_cycles"] == 16.0  # the default
    # 2 x 64 KiB over 100 Mbit/s: D = 91 frames x 1514 B / 12.5 MB/s = 11.02 ms per job
    case = p["cases"][0]
    cal = dict(link_rate=12.5e6, disk_rate=1e12, time_per_unit=0.0)
    pred = rs.predict(rs.case_model(case, cal, p["chunk"]), p["populations"])
    w = rs.windows(p, {n: pred[n]["r_model"] for n in p["populations"]})
    assert w[1] == (1.0, 0.5)  # the study's floor while 8 R(n) is shorter
    d = 91 * 1514 / 12.5e6
    assert w[32][0] == pytest.approx(8 * 32 * d, rel=1e-9)  # R(32) = 32 D: one station
    assert w[32][1] == pytest.approx(16 * 32 * d, rel=1e-9)
    assert w[2][1] == 0.5  # 16 x 2 D = 0.35 s: the study's floor
    assert w[3][1] == pytest.approx(16 * 3 * d, rel=1e-9)


def test_calibration_band_widens_the_bounds(topo):
    p = rs.parse(load_study(EXAMPLES / "raid_study.toml")[0], topo)
    case = p["cases"][8]  # RAID5 one-chunk write over 3 servers
    cal = dict(link_rate=12.5e6, disk_rate=1e12, time_per_unit=2e-5)
    mk = lambda rate: rs.case_model(case, dict(cal, link_rate=rate), p["chunk"])  # noqa: E731
    pred = rs.predict(mk(12.5e6), p["populations"], fast=mk(12.6e6), slow=mk(12.4e6))
    for q in pred.values():
        eps = 1e-12 * q["r_model"]  # at N = 1 the three are one sum, to rounding
        assert q["r_lower"] < q["r_lower_point"] <= q["r_model"] + eps
        assert q["r_model"] <= q["r_upper_point"] + eps
        assert q["r_upper_point"] < q["r_upper"]
        assert q["x_lower"] < q["x_lower_point"] and q["x_upper_point"] < q["x_upper"]
    # at N = 1 the bounds are the sum of the demands: the band is the rate's +-0.8 %
    link = 2 * 91 * 1514  # bytes on the wire, both directions
    rest = 4 * 2e-5 + 4 * 65536 / 1e12  # CPU per chunk moved, memory disks
    assert pred[1]["r_lower"] == pytest.approx(link / 12.6e6 + rest, rel=1e-9)
    assert pred[1]["r_upper"] == pytest.approx(link / 12.4e6 + rest, rel=1e-9)
    # a point inside the band but outside the point calibration's bounds counts only once
    pt = dict(pred[1], r_measured=pred[1]["r_lower"] * 1.001, r_ci=0.0)
    assert rs.inside_point([pt]) == 0.0
    both = summarize([dict(pt, n=1, x_measured=1 / pt["r_measured"], x_ci=0.0)])
    assert both["inside_bounds_share"] == 1.0


def test_the_access_pattern_is_a_study_key(topo):
    assert rs.parse(spec(), topo)["access"] == "sequential"  # the default is unchanged
    assert rs.parse(spec(access="random"), topo)["access"] == "random"


def test_the_fork_join_structure_is_a_study_key(topo):
    p = rs.parse(spec(), topo)
    assert p["forkjoin"] == "forkjoin"  # the default is unchanged
    assert rs.parse(spec(forkjoin="forkjoin_overlap"), topo)["forkjoin"] == "forkjoin_overlap"
    case = dict(raid="raid0", op="read", servers=3, chunks=3, label="x")
    cal = dict(link_rate=125e6, disk_rate=65536 / 2.155e-3, time_per_unit=30e-6)
    m = rs.case_model(case, cal, 65536.0)
    old, new = rs.predict(m, [1, 8]), rs.predict(m, [1, 8], forkjoin="forkjoin_overlap")
    assert old[1]["r_forkjoin"] == pytest.approx(m.fork_join(1).response_time[0], rel=0)
    r1 = m.fork_join(1, structure="forkjoin_overlap").response_time[0]
    assert new[1]["r_forkjoin"] == pytest.approx(r1, rel=0)
    # the overlap: 4.69 ms against 5.69 ms at N = 1 (tests/models/test_storage_forkjoin_overlap)
    assert new[1]["r_forkjoin"] < old[1]["r_forkjoin"] - 0.9e-3
    assert new[1]["r_model"] == old[1]["r_model"]  # MVA and bounds do not change


def test_the_shaper_bucket_credit(topo):
    """burst / rate of the master's link per phase: 1514 B at 12.5 MB/s, 15 140 B at 125 MB/s."""
    read = dict(raid="raid0", op="read", servers=3, chunks=3)
    rmw = dict(raid="raid5", op="write", servers=3, chunks=1)
    full = dict(raid="raid5", op="write", servers=3, chunks=2)  # a full stripe: no read phase
    assert rs.bucket_credit(topo, "master", read) == 1514 / 12.5e6
    assert rs.bucket_credit(topo, "master", rmw) == 2 * 1514 / 12.5e6
    assert rs.bucket_credit(topo, "master", full) == 1514 / 12.5e6
    fast = testbed.load_topology(EXAMPLES / "raid4_1gbit.toml")
    assert rs.bucket_credit(fast, "master", read) == 15140 / 125e6
    # the lower bound moves down by the credit, never below 0; the share counts CIs
    pts = [dict(r_measured=0.98, r_ci=0.0, r_lower=1.0, r_upper=1.1),
           dict(r_measured=0.5, r_ci=0.01, r_lower=0.05, r_upper=0.6)]  # fmt: skip
    got = rs.with_bucket(pts, 0.1)
    assert [q["r_lower_bucket"] for q in got] == [1.0 - 0.1, 0.0]
    assert rs.inside_bucket(got) == 1.0
    assert rs.inside_bucket(rs.with_bucket(pts, 0.01)) == 0.5


def _res(x, steal):
    """A qnbench result as the stripe engine writes it: throughput, mean latency, CPU times."""
    cpu = {"user_s": 0.1, "sys_s": 0.1, "host_total_s": 2.0, "host_idle_s": 1.0,
           "host_steal_s": None if steal is None else 2.0 * steal}  # fmt: skip
    return {"throughput_ops_s": x, "latency_s": {"mean": 1.0 / x}, "cpu": cpu}


def test_repeats_with_too_much_cpu_stolen_are_measured_again(topo):
    p = rs.parse(spec(), topo)
    assert (p["max_steal"], p["steal_retries"]) == (0.03, 3)  # the defaults
    assert rs.parse(spec(max_steal=0.1, steal_retries=0), topo)["max_steal"] == 0.1
    # round 1: two of three repeats over 3 %; round 2 asks for exactly the two missing ones
    rounds = iter([[_res(60, 0.01), _res(55, 0.07), _res(57, 0.04)],
                   [_res(61, 0.02), _res(59, 0.0)]])  # fmt: skip
    asked = []

    def run_k(k):
        asked.append(k)
        return next(rounds)

    used, rejected, disturbed = rs._repeats(p, run_k)
    assert asked == [3, 2] and disturbed == 0
    assert [r["throughput_ops_s"] for r in used] == [60, 61, 59]
    # set aside, least stolen first
    assert [(r["x"], round(r["steal"], 6)) for r in rejected] == [(57, 0.04), (55, 0.07)]
    # the rounds run out: the least disturbed repeats are used and counted
    p0 = dict(p, steal_retries=1)
    rounds = iter(
        [[_res(50, 0.10), _res(52, 0.05), _res(58, 0.0)], [_res(51, 0.08), _res(49, 0.2)]]
    )
    used, rejected, disturbed = rs._repeats(p0, lambda k: next(rounds))
    assert disturbed == 2
    assert [r["throughput_ops_s"] for r in used] == [58, 52, 51]
    assert [r["x"] for r in rejected] == [50, 49]
    # a hand-made p without the keys (measure is public; the emulated-disk test builds one):
    # the defaults
    bare = {k: v for k, v in p.items() if k not in ("max_steal", "steal_retries")}
    rounds = iter([[_res(60, 0.05), _res(58, 0.0), _res(57, 0.0)], [_res(59, 0.01)]])
    used, rejected, disturbed = rs._repeats(bare, lambda k: next(rounds))
    assert [r["throughput_ops_s"] for r in used] == [58, 57, 59] and disturbed == 0
    assert (rs.MAX_STEAL, rs.STEAL_RETRIES) == (0.03, 3)
    # no host CPU times (an older qnbench, no /proc/stat): counts as no steal
    used, rejected, disturbed = rs._repeats(p, lambda k: [_res(60, None)] * k)
    assert len(used) == 3 and rejected == [] and disturbed == 0


def test_the_summary_of_stolen_cpu():
    pts = [dict(steal=[0.01, 0.02, 0.0], rejected=[dict(x=1, r=1, steal=0.07)], disturbed=0),
           dict(steal=[0.05, 0.01, 0.0], rejected=[], disturbed=1),
           dict(n=1)]  # fmt: skip  # a point recorded before steal was measured
    s = rs.steal_summary(pts, 0.03)
    assert s == dict(max_steal=0.03, median=0.01, max=0.05, rejected=1, disturbed_points=1)
    assert rs.steal_summary([dict(n=1)], 0.03)["median"] is None
