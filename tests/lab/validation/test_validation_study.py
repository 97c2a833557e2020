"""``qnmodel validate``: study files, dispatch to a kind, outputs, and the shared figures.

No testbed here (the live study is tests/testbed/test_raid_validation.py): a stand-in kind
module returns known points, so MAPE and the inside-bounds share are checked by hand.
"""

from __future__ import annotations

import json
import os
import sys
import types

import pytest

from qnmodel.cli import main
from qnmodel.errors import InvalidModelError
from qnmodel.lab import validation

# two points by hand: errors +10 % and -20 % in X (MAPE 15 %), 0 % and +50 % in R (25 %);
# the second R interval [0.09, 0.11] misses the bounds [0.12, 0.2]
POINTS = [
    dict(n=1, case="c", x_measured=100.0, x_ci=1.0, r_measured=0.01, r_ci=0.001,
         x_model=110.0, r_model=0.01, x_lower=90.0, x_upper=120.0, r_lower=0.008,
         r_upper=0.012),
    dict(n=4, case="c", x_measured=50.0, x_ci=2.0, r_measured=0.1, r_ci=0.01,
         x_model=40.0, r_model=0.15, x_lower=30.0, x_upper=45.0, r_lower=0.12,
         r_upper=0.2, x_forkjoin=41.0, r_forkjoin=0.14),
]  # fmt: skip


@pytest.fixture
def fake_kind(monkeypatch):
    calls = []
    mod = types.ModuleType("qnmodel.lab.validation.fake")

    def run(spec, topology, out_dir):
        calls.append((spec, topology, out_dir))
        validation.LOG.info("measured %d points", len(POINTS))
        return dict(points=POINTS, **validation.summarize(POINTS))

    mod.run = run
    monkeypatch.setitem(sys.modules, "qnmodel.lab.validation.fake", mod)
    return calls


def write(tmp_path, text, name="study.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_summary_by_hand():
    s = validation.summarize(POINTS)
    assert s["mape_x"] == pytest.approx(15.0)
    assert s["mape_r"] == pytest.approx(25.0)
    assert s["inside_bounds_share"] == 0.5
    # X: 100 +- 1 meets [90, 120]; 50 +- 2 misses [30, 45]
    assert s["inside_bounds_share_x"] == 0.5
    assert validation.inside(0.1, 0.02, 0.12, 0.2)  # the CI reaches the lower bound


def test_mean_ci_is_the_student_t_interval():
    m, h = validation.mean_ci([1.0, 2.0, 3.0])
    assert m == 2.0
    assert h == pytest.approx(4.303 * 1.0 / 3**0.5, rel=1e-4)
    assert validation.mean_ci([5.0]) == (5.0, 0.0)


def test_validate_dispatches_and_writes(tmp_path, fake_kind):
    study = write(tmp_path, '[study]\nkind = "fake"\ntitle = "by hand"\n[fake]\nx = 1\n')
    lines = []
    out = tmp_path / "out"
    s = validation.validate(study, out, log=lines.append)
    spec, topo, where = fake_kind[0]
    assert spec["fake"] == {"x": 1} and topo is None and where == out
    assert lines == ["measured 2 points"]
    doc = json.loads((out / "summary.json").read_text())
    assert doc["mape_x"] == pytest.approx(15.0) and doc["kind"] == "fake"
    assert len(doc["points"]) == 2 and s["title"] == "by hand"
    report = (out / "report.md").read_text()
    assert "MAPE of X(n): 15.0 %" in report and "50.0 %" in report
    assert (out / "c.png").stat().st_size > 10_000 and (out / "report.html").exists()
    # results are not overwritten without force
    with pytest.raises(InvalidModelError, match="already holds results"):
        validation.validate(study, out)
    validation.validate(study, out, force=True)


def test_cases_whose_names_share_a_slug_keep_their_own_figures(tmp_path, fake_kind):
    # "c" and "C!" both slug to "c": the second case's figure must not overwrite the first's
    POINTS.append(dict(POINTS[0], case="C!"))
    try:
        study = write(tmp_path, '[study]\nkind = "fake"\n')
        validation.validate(study, tmp_path / "out")
    finally:
        POINTS.pop()
    report = (tmp_path / "out" / "report.md").read_text()
    assert "![c](c.png)" in report and "![C!](c_2.png)" in report
    assert (tmp_path / "out" / "c_2.png").stat().st_size > 10_000


def test_validate_command(tmp_path, fake_kind, capsys):
    study = write(tmp_path, '[study]\nkind = "fake"\n')
    assert main(["validate", str(study), "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "MAPE X 15.0 %, R 25.0 %; inside the bounds 50.0 % of 2 points" in out
    assert main(["validate", str(study), "--out", str(tmp_path / "o")]) == 1
    assert "already holds results" in capsys.readouterr().err


@pytest.mark.parametrize(
    "text, match",
    [
        ("[study\n", "not valid TOML"),
        ("x = 1\n", r"needs a \[study\] table"),
        ('[study]\nkind = "Bad-kind"\n', "study.kind must be a name"),
        ('[study]\nkind = "nosuchkind"\n', "no validation study of kind 'nosuchkind'"),
        ('[study]\nkind = "raid"\ntopology = 3\n', "study.topology must be a path"),
        ('[study]\nkind = "raid"\ntopology = "missing.toml"\n', "cannot read topology"),
    ],
)
def test_bad_study_files(tmp_path, text, match):
    with pytest.raises(InvalidModelError, match=match):
        validation.validate(write(tmp_path, text), tmp_path / "out")


def test_missing_study_file(tmp_path):
    with pytest.raises(InvalidModelError, match="cannot read study"):
        validation.load_study(tmp_path / "none.toml")


def test_kind_without_required_keys(tmp_path, monkeypatch):
    mod = types.ModuleType("qnmodel.lab.validation.partial")
    mod.run = lambda spec, topology, out_dir: {"points": []}
    monkeypatch.setitem(sys.modules, "qnmodel.lab.validation.partial", mod)
    with pytest.raises(InvalidModelError, match="returned no mape_x, mape_r"):
        validation.validate(write(tmp_path, '[study]\nkind = "partial"\n'), tmp_path / "o")


def test_every_study_records_the_machine_the_same_way():
    from qnmodel.lab.experiments import raid_study
    from qnmodel.lab.validation import _common, raid, stripe

    m = _common.machine_info(packages=["python3", "qnmodel-no-such-package"])
    assert set(m) == {"date", "hostname", "system", "kernel", "machine", "cpu_model", "cpus",
                      "load_average", "python", "packages"}  # fmt: skip
    assert m["cpus"] == os.cpu_count() and len(m["load_average"]) == 3
    assert m["date"].endswith("+00:00") and m["packages"]["qnmodel-no-such-package"] is None
    # one home: the studies and the RAID efficiency grid use this function, not copies
    assert raid.machine_info is stripe.machine_info is raid_study.machine_info
    assert raid.machine_info is _common.machine_info
