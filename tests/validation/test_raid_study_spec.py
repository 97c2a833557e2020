"""The raid study's file, model and predictions, without a testbed (hand values)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qnmodel import testbed
from qnmodel.errors import InvalidModelError
from qnmodel.validation import load_study
from qnmodel.validation import raid as rs

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "testbed"


def spec(**raid):
    return {"study": {"kind": "raid"}, "raid": raid}


@pytest.fixture(scope="module")
def topo():
    return testbed.load_topology(EXAMPLES / "raid_100mbit.toml")


def test_example_studies_parse(topo):
    for name in ("raid_study.toml", "raid_study_quick.toml"):
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
        (dict(client="m1"), "raid.client: 'm1' is not a client"),
        (dict(chunk="0 KiB"), "raid.chunk"),
        (dict(cases=[dict(raid="raid6")]), r"raid.cases\[0\].raid must be"),
        (dict(cases=[dict(op="trim")]), r"raid.cases\[0\].op must be"),
        (dict(cases=[dict(raid="raid5", servers=2)]), r"servers must be 3..4 .* for raid5"),
        (dict(cases=[dict(servers=5)]), r"servers must be 2..4"),
        (dict(cases=[dict(chunks=0)]), r"chunks must be a positive integer"),
        (dict(cases=[dict(size=1)]), r"raid.cases\[0\].size: unknown key"),
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
