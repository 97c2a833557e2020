"""Calibration cross-checks (issue 28) on recorded RAID studies, without a testbed."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from qnmodel.errors import InvalidModelError
from qnmodel.lab.validation import write_outputs
from qnmodel.lab.validation.crosscheck import (
    TOLERANCE,
    cross_checks,
    flag_notes,
    flags,
    nfs_cross_checks,
)

DATA = Path(__file__).resolve().parents[3] / "data" / "validation"


@pytest.fixture(scope="module")
def run100():
    return json.loads((DATA / "raid_100mbit.json").read_text())


def _checks(doc, **kw):
    return cross_checks(doc["calibration"], doc["cases"], doc["points"], **kw)


def test_recorded_100mbit_study_has_no_flag(run100):
    # memory disks behind 100 Mbit/s links: every link within 0.3 % of its configured rate
    rows = _checks(run100)
    conf = [r for r in rows if r["check"] == "configured"]
    assert len(conf) == 8  # 4 member links x 2 directions (memory disks have no configured rate)
    assert max(abs(r["error"]) for r in conf) < 0.003
    # the saturated master link of every case: the study moved what the calibration says
    study = [r for r in rows if r["check"] == "study"]
    assert study and all(r["component"].startswith("master link") for r in study)
    assert {r["case"] for r in study} == {c["label"] for c in run100["cases"]}
    for r in study:
        # error = calibrated / (X D r) - 1 = 1 / U - 1 with U the utilisation the study drove
        assert r["error"] == pytest.approx(1.0 / r["utilization"] - 1.0, rel=1e-12)
        assert abs(r["error"]) < TOLERANCE
    assert flags(rows) == [] and flag_notes(rows) == []


def _link_calibrated_low(doc, factor):
    """The issue's failure: every link calibrated ``factor`` x its rate (through the disk)."""
    bad = copy.deepcopy(doc)
    for ops in bad["calibration"]["links"].values():
        for m in ops.values():
            m["rate"] *= factor
    for c in bad["cases"]:
        c["calibration"]["link_rate"] *= factor
        for k in ("link_in", "link_out"):
            c["demands"][k] /= factor  # the model's demands follow the calibration
    return bad


def test_link_calibrated_through_the_disk_is_flagged_both_ways(run100):
    bad = _link_calibrated_low(run100, 0.80)
    rows = _checks(bad)
    conf = [r for r in flags(rows) if r["check"] == "configured"]
    assert len(conf) == 8
    for r in conf:  # both figures: calibrated and configured
        assert r["reference"] == 12.5e6
        assert r["error"] == pytest.approx(r["calibrated"] / 12.5e6 - 1.0)
        assert -0.203 < r["error"] < -0.197
    study = [r for r in flags(rows) if r["check"] == "study"]
    assert {r["case"] for r in study} == {c["label"] for c in bad["cases"]}
    for r in study:  # the study moved more through the link than its calibrated capacity
        assert r["utilization"] > 1.0 + TOLERANCE
        assert r["error"] == pytest.approx(1.0 / r["utilization"] - 1.0, rel=1e-12)
        assert "calibration is low" in r["note"]
    notes = flag_notes(rows)
    assert len(notes) == len(flags(rows))
    assert notes[0].startswith("CALIBRATION FLAG: link m1 (read): calibrated 1.0")
    assert "configured 1.25e+07 B/s (-19.8 %)" in notes[0]


def test_within_tolerance_is_not_flagged(run100):
    # 4 % low: over the utilisation law's 5 % only where the study itself ran the link hotter
    rows = _checks(_link_calibrated_low(run100, 0.96))
    assert not [r for r in flags(rows) if r["check"] == "configured"]


def test_a_saturated_link_that_carried_less_is_flagged(run100):
    # calibrated 10 % high: the model saturates the link, the study moved 1/1.1 of it
    bad = _link_calibrated_low(run100, 1.10)
    for q in bad["points"]:  # the model's X follows its faster link (link-bound cases)
        q["x_model"] *= 1.10
    rows = _checks(bad)
    study = [r for r in flags(rows) if r["check"] == "study"]
    assert study
    for r in study:
        assert r["utilization"] < 1.0 - TOLERANCE
        assert r["error"] > TOLERANCE
        assert "saturated in the model" in r["note"]


def test_tolerance_is_checked(run100):
    with pytest.raises(InvalidModelError, match=r"tolerance must be a relative error in \(0, 1\)"):
        _checks(run100, tolerance=5)


def test_report_shows_the_cross_checks_and_flags(run100, tmp_path):
    bad = _link_calibrated_low(run100, 0.80)
    rows = _checks(bad)
    summary = dict(
        kind="raid", title="t", topology="x.toml", mape_x=1.0, mape_r=1.0,
        inside_bounds_share=1.0, points=bad["points"][:2], cases=[
            dict(bad["cases"][0], model_structure="NetworkedRAID(form='corrected'): MVA")],
        cross_checks=rows, calibration_flags=flags(rows), notes=flag_notes(rows),
    )  # fmt: skip
    write_outputs(summary, tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "## Calibration cross-checks" in text
    assert text.count("FLAG") >= len(flags(rows))
    assert "> CALIBRATION FLAG: link m1 (read)" in text
    assert "Model: NetworkedRAID(form='corrected'): MVA" in text
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert len(doc["calibration_flags"]) == len(flags(rows))


def test_recorded_nfs_study_cross_checks():
    # data/validation/nfs_cases_20261124.json: four configurations, b4 within 0.6 % of its
    # throttle, server hits within 1.9 % of b2, disk-bound misses within 1.6 % of b4
    doc = json.loads((DATA / "nfs_cases_20261124.json").read_text())
    rows = nfs_cross_checks(doc)
    kinds = [(r["component"].split(" (")[0], r["check"]) for r in rows]
    assert kinds.count(("disk b4", "configured")) == 4
    assert kinds.count(("link b2", "study")) == 4
    assert kinds.count(("disk b4", "study")) == 2  # the two configurations bound by the disk
    assert max(abs(r["error"]) for r in rows) < 0.02
    assert flags(rows) == []
    # a throttle the server's disk did not honour (b4 read 10 % below 6 MB/s) is flagged
    bad = copy.deepcopy(doc)
    bad["calibration"][0]["b4"] *= 0.9
    for r in bad["three_case"]:
        if r["config"] == 0:
            r["b4"] *= 0.9
    got = flags(nfs_cross_checks(bad))
    assert [(r["component"], r["check"]) for r in got] == [
        ("disk b4 (100 Mbit/s, disk 6 MB/s)", "configured"),
        ("disk b4", "study"),
    ]
    assert got[0]["reference"] == 6e6 and got[0]["error"] == pytest.approx(-0.1041, abs=1e-3)
    assert flag_notes(got)[1].startswith("CALIBRATION FLAG: disk b4 (100 Mbit/s, disk 6 MB/s)")
    with pytest.raises(InvalidModelError, match="tolerance must be"):
        nfs_cross_checks(doc, tolerance=0.0)
