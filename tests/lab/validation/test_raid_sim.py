"""The RAID study's simulated columns (``[raid] simulate = true``), offline: hand values and
the recorded studies' calibrations (data/validation/raid_emu_*_20261127.json), no testbed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qnmodel.errors import InvalidModelError
from qnmodel.lab import testbed
from qnmodel.lab.validation import _raid_records as records
from qnmodel.lab.validation import _raid_sim as sim
from qnmodel.lab.validation import _raid_summary as summary_mod
from qnmodel.lab.validation import raid as rs
from qnmodel.lab.validation import write_outputs

ROOT = Path(__file__).resolve().parents[3]
RECORD = ROOT / "data" / "validation" / "raid_emu_ratio_1_const_20261127.json"


@pytest.fixture(scope="module")
def topo():
    return testbed.load_topology(ROOT / "examples" / "testbed" / "raid_100mbit.toml")


def test_the_simulate_key(topo):
    assert rs.parse({"study": {"kind": "raid"}, "raid": {}}, topo)["simulate"] is False
    assert rs.parse({"study": {"kind": "raid"}, "raid": {"simulate": True}}, topo)["simulate"]
    with pytest.raises(InvalidModelError, match="raid.simulate must be true or false, got 1"):
        rs.parse({"study": {"kind": "raid"}, "raid": {"simulate": 1}}, topo)


def test_predict_adds_the_simulation_of_the_same_system():
    case = dict(raid="raid0", op="read", servers=3, chunks=3, label="x")
    cal = dict(link_rate=125e6, disk_rate=65536 / 2.155e-3, time_per_unit=30e-6)
    m = rs.case_model(case, cal, 65536.0)
    pred = rs.predict(m, [1, 4], disk_scv=0.0, simulate=True)
    assert "x_sim" not in rs.predict(m, [1])[1]  # off by default
    for q in pred.values():
        assert {"x_sim", "x_sim_halfwidth", "r_sim", "r_sim_halfwidth"} <= set(q)
    # N = 1 is exact in the model (constant disks): the simulation agrees within its noise
    # (the serial stations are exponential)
    r, hw = pred[1]["r_sim"], pred[1]["r_sim_halfwidth"]
    assert abs(pred[1]["r_overlap"] - r) <= hw + 0.005 * r
    pts = [dict(q, n=n, x_measured=q["x_sim"], r_measured=q["r_sim"] * 1.1)
           for n, q in pred.items()]  # fmt: skip
    got = summary_mod.sim_mape(pts)
    assert got["mape_x_sim"] == 0.0
    assert got["mape_r_sim"] == pytest.approx(100 * (1 - 1 / 1.1), rel=1e-9)
    assert summary_mod.sim_mape([dict(n=1, x_measured=1.0)]) == {}
    # two stripes: not the overlapped structure, no simulated columns
    two = rs.case_model(dict(case, chunks=6), cal, 65536.0)
    assert "x_sim" not in rs.predict(two, [1], simulate=True)[1]


def test_resimulate_a_recorded_study_and_report_it(tmp_path):
    summary = json.loads(RECORD.read_text())
    cases = records.resimulate(summary, jobs=400, reps=2, seed=3)
    assert [c["label"] for c in cases] == [c["label"] for c in summary["cases"]]  # all six
    c = cases[0]
    assert c["label"] == "RAID0 read, 3 servers, 3 x chunk" and c["disk_scv"] == 0.0
    assert [p["n"] for p in c["points"]] == [1, 2, 4, 8, 16, 32]
    # the recorded overlapped MAPEs are recomputed from the points, unchanged
    rec = summary["cases"][0]
    assert c["mape_x_overlap"] == pytest.approx(rec["mape_x_overlap"], rel=1e-12)
    # constant disks at d/c = 1: the simulation is within 2 % of the measured X and R
    # (MAPE 0.7 % / 0.6 % with the study's 3 x 3000 requests, docs/explanation/overlap.md)
    assert c["mape_x_sim"] < 2.0 and c["mape_r_sim"] < 2.0
    out = dict(summary, points=c["points"])
    write_outputs(out, tmp_path)
    report = (tmp_path / "report.md").read_text()
    assert "Simulated: MAPE X" in report and "R simulated [ms]" in report
    ov = f"Overlap: MAPE X {rec['mape_x_overlap']:.1f} %, R {rec['mape_r_overlap']:.1f} %"
    assert ov in report
    assert (rec["mape_x_overlap"], rec["mape_r_overlap"]) == (
        pytest.approx(0.7, abs=0.05),
        pytest.approx(0.6, abs=0.05),
    )


def test_the_recorded_simulated_columns_are_the_studys_own():
    """The record's x_sim, r_sim, simulated during the study, are what the same call gives
    offline from the record's calibration: one model, one seed, the same run lengths."""
    summary = json.loads(RECORD.read_text())
    assert summary["settings"]["simulate"] is True
    case = next(c for c in summary["cases"] if c["label"] == "RAID0 read, 2 servers, 2 x chunk")
    st = summary["settings"]
    model = rs.case_model(case, case["calibration"], st["chunk"], st["form"])
    pts = [p for p in summary["points"] if p["case"] == case["label"]]
    cols = sim.sim_columns(model, [p["n"] for p in pts], case["disk_scv"])
    for p in pts:
        for k in ("x_sim", "r_sim", "x_sim_halfwidth", "r_sim_halfwidth"):
            assert cols[p["n"]][k] == p[k], (p["n"], k)
    assert summary_mod.sim_mape(pts)["mape_x_sim"] == pytest.approx(case["mape_x_sim"], rel=1e-12)
