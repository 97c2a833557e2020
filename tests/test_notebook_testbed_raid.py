"""Execute notebooks/testbed_raid.ipynb on the recorded networked-RAID studies.

The notebook reads data/validation/raid_100mbit.json and raid_1gbit.json (no testbed needed);
what it prints must agree with the recorded summaries, recomputed here from the points, and
the recorded numbers quoted in docs/explanation/validation.md are asserted here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from qnmodel.lab.validation import inside, summarize
from qnmodel.lab.validation.raid import inside_point

from ._notebooks import execute_notebook, outputs_text
from ._user_env import drop_source_tree

nbformat = pytest.importorskip("nbformat", reason="nbformat is needed to run notebooks")
nbclient = pytest.importorskip("nbclient", reason="nbclient is needed to run notebooks")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "testbed_raid.ipynb"
DATA = ROOT / "data" / "validation"
FILES = ("raid_100mbit.json", "raid_1gbit.json")


def load(name):
    return json.loads((DATA / name).read_text())


@pytest.mark.parametrize("name", FILES)
def test_recorded_summary_is_consistent(name):
    doc = load(name)
    s = summarize(doc["points"])
    assert s["mape_x"] == pytest.approx(doc["mape_x"], rel=1e-9)
    assert s["inside_bounds_share"] == pytest.approx(doc["inside_bounds_share"], rel=1e-9)
    assert inside_point(doc["points"]) == pytest.approx(doc["inside_bounds_share_point"])
    # the band of the link calibration's interval only widens the point calibration's bounds
    for p in doc["points"]:
        assert p["r_lower"] <= p["r_lower_point"] * (1 + 1e-12)
        assert p["r_upper"] >= p["r_upper_point"] * (1 - 1e-12)
        # each population measured for at least 8 x R(n) after 3 x R(n)
        assert p["runtime"] >= 8 * p["r_model"] * (1 - 1e-9)
        assert p["warmup"] >= 3 * p["r_model"] * (1 - 1e-9)
    # the recorded grid: RAID0 and RAID5, read and write, 2-4 servers, N up to 32
    labels = {(c["raid"], c["op"], c["servers"]) for c in doc["cases"]}
    assert {("raid0", "read", 2), ("raid0", "write", 4), ("raid5", "write", 3)} <= labels
    assert len(doc["cases"]) == 10 and max(p["n"] for p in doc["points"]) == 32
    # every link direction and disk within 1 % of its configured rate (the target is
    # 5 %): one SCHED_FIFO stream, two request sizes, the best of 5 repeats; measured within
    # 0.53 % at 1 Gbit/s (the two-stream medians of raid_1gbit_run1.json: 6.4 %)
    assert doc["machine"]["date"] and doc["calibration"]["max_abs_error"] < 0.01
    for c in doc["cases"]:
        pts = [p for p in doc["points"] if p["case"] == c["label"]]
        # Little's law in the measurement (no think time), over a case's points: completions
        # counted in windows of at least 8 R(n) against N / R. Measured within 2 % per case
        # at 100 Mbit/s (the 1 s windows of raid_100mbit_run4.json: within 2.4 %)
        little = sum(p["x_little"] for p in pts) / sum(p["x_measured"] for p in pts)
        assert little == pytest.approx(1.0, abs=0.03), c["label"]
        if c["raid"] == "raid0":
            # RAID0 saturates at the TCP goodput, the model's X_max (median over N >= 8)
            top = sorted(p["x_little"] / p["x_upper"] for p in pts if p["n"] >= 8)
            assert top[len(top) // 2] == pytest.approx(1.0, abs=0.05), c["label"]


def test_recorded_100mbit_numbers():
    """The numbers docs/explanation/validation.md quotes for the 100 Mbit/s grid."""
    new = load("raid_100mbit.json")
    prev, old = load("raid_100mbit_run5.json"), load("raid_100mbit_run4.json")
    run6, run7, run8 = (load(f"raid_100mbit_run{k}.json") for k in (6, 7, 8))
    assert (round(new["mape_x"], 2), round(new["mape_r"], 2)) == (1.22, 0.78)
    assert (new["inside_bounds_share"], new["inside_bounds_share_point"]) == (0.89, 0.87)
    assert new["inside_bounds_share_bucket"] == 0.95  # the target, met with the bucket
    assert new["machine"]["load_average"][0] < 1.0  # recorded on a quiet machine
    s = new["settings"]
    assert (s["warmup_cycles"], s["max_steal"], s["steal_retries"]) == (16, 0.01, 4)
    # nothing over 1 % stolen: no repeat set aside, the most stolen kept 0.5 %
    st = new["steal"]
    assert (st["rejected"], st["disturbed_points"]) == (0, 0) and st["max"] < 0.006

    def err(doc, prefix, n):
        (p,) = [p for p in doc["points"] if p["case"].startswith(prefix) and p["n"] == n]
        return p["r_measured"] / p["r_model"] - 1, max(p["steal"])

    # the two N = 4 points of run8 that kept repeats with 2.8-3.7 % stolen read R +2.1 and
    # +2.5 % above the model; with nothing stolen, +0.1 and +0.9 %
    for prefix, hi_before, lo_after in (
        ("RAID0 read, 3", 0.02, 0.0),
        ("RAID0 write, 4", 0.025, 0.0),
    ):
        (e8, s8), (e, s_) = err(run8, prefix, 4), err(new, prefix, 4)
        assert e8 > hi_before and 0.028 < s8 < 0.038 and lo_after < e < 0.01 and s_ < 0.01
    # run8 (3 % limit, load average 0.5): 55 repeats set aside, 3 points kept some over 3 %
    assert (round(run8["mape_x"], 2), round(run8["mape_r"], 2)) == (1.51, 1.04)
    assert (run8["inside_bounds_share"], run8["inside_bounds_share_point"]) == (0.85, 0.83)
    assert run8["inside_bounds_share_bucket"] == 0.94 and run8["settings"]["max_steal"] == 0.03
    st = run8["steal"]
    assert (st["rejected"], st["disturbed_points"]) == (55, 3) and st["max"] < 0.04
    # the repeats set aside ran slower the more was stolen: over 10 % stolen, R 4-16 % above
    # the model; the correlation over all of them is clearly positive
    rej = [(r["steal"], r["r"] / p["r_model"] - 1) for p in run8["points"] for r in p["rejected"]]
    assert len(rej) == 55 and all(s > 0.03 for s, _ in rej)
    assert np.corrcoef(np.array(rej).T)[0, 1] > 0.5
    assert all(e > 0.04 for s, e in rej if s > 0.1)
    # 16 R(n) of warm-up, not 3: one-chunk RAID5 writes at N >= 12 went from +2.2 ... +11.1 %
    # above the model (run7, the same calibration method and steal limit) to -1.8 ... +1.9 %
    # (run8); the new grid, with 16 R(n) too, read -3.3 ... +3.9 %
    for doc, lo, hi in ((run7, 0.02, 0.12), (run8, -0.02, 0.02), (new, -0.04, 0.04)):
        errs = [p["r_measured"] / p["r_model"] - 1 for p in doc["points"]
                if p["case"].startswith("RAID5 write") and p["n"] >= 12]  # fmt: skip
        assert len(errs) == 8 and lo < min(errs) and max(errs) < hi, errs
    assert run7["settings"]["warmup_cycles"] == 3.0
    assert (run7["inside_bounds_share"], run7["inside_bounds_share_bucket"]) == (0.85, 0.93)

    # the points outside the bucket bound: one-chunk writes at N = 4-8 (their phases partly
    # in step, +3.0 ... +5.8 % above the bound), one full-stripe write at N = 16 (+1.3 %), one
    # read 0.25 % below
    out = [p for p in new["points"] if not inside(
        p["r_measured"], p["r_ci"], p["r_lower_bucket"], p["r_upper"])]  # fmt: skip
    assert sorted((p["case"][:12], p["n"]) for p in out) == [
        ("RAID0 read, ", 32), ("RAID0 write,", 16),
        ("RAID5 write,", 4), ("RAID5 write,", 6), ("RAID5 write,", 8),
    ]  # fmt: skip
    # the earlier recordings, kept: no steal limit (run6), two-stream link medians under load
    # (run5), and 1 s windows (run4)
    assert (run6["inside_bounds_share"], run6["inside_bounds_share_bucket"]) == (0.76, 0.87)
    assert (round(prev["mape_x"], 1), prev["inside_bounds_share"]) == (2.7, 0.89)
    assert (round(old["mape_x"], 1), old["inside_bounds_share"]) == (3.5, 0.77)
    # every link direction within 0.29 % of 100 Mbit/s (best of 5; 1.9 % in run5)
    assert new["calibration"]["max_abs_error"] < 0.0029
    by = {c["label"]: c for c in new["cases"]}
    worst = by["RAID5 write, 3 servers, 1 x chunk"]["mape_x"]
    assert worst == pytest.approx(2.6, abs=0.05)
    assert max(c["mape_x"] for c in new["cases"]) == worst
    assert max(c["mape_x"] for c in new["cases"] if c["raid"] == "raid0") < 1.3
    # the master's CPU per chunk, SCHED_FIFO on loopback at N = 1: 20.2-42.1 us
    cpu = [c["calibration"]["time_per_unit"] for c in new["cases"]]
    assert 20e-6 < min(cpu) < 20.5e-6 and 42e-6 < max(cpu) < 42.5e-6


def test_recorded_1gbit_numbers():
    """The numbers docs/explanation/validation.md quotes for the 1 Gbit/s grid."""
    doc, old = load("raid_1gbit.json"), load("raid_1gbit_run1.json")
    prev = load("raid_1gbit_run2.json")
    assert (round(doc["mape_x"], 2), round(doc["mape_r"], 2)) == (1.35, 1.37)
    assert (doc["inside_bounds_share"], doc["inside_bounds_share_point"]) == (0.92, 0.65)
    # with the shaper's bucket (121 us per idle phase): every point
    assert doc["inside_bounds_share_bucket"] == 1.0
    out = [p for p in doc["points"] if not p["r_measured"] + p["r_ci"] >= p["r_lower"]]
    assert {p["n"] for p in out} == {1}  # below BJB only at N = 1, where R = D
    assert not [p for p in doc["points"] if p["r_measured"] - p["r_ci"] > p["r_upper"]]
    assert doc["machine"]["load_average"][0] < 1.0  # recorded on a quiet machine
    # two repeats set aside for stolen CPU (7.9 and 10.7 %), none kept over 3 %
    assert (doc["steal"]["rejected"], doc["steal"]["disturbed_points"]) == (2, 0)
    assert doc["steal"]["max"] < 0.03
    by = {c["label"]: c for c in doc["cases"]}
    assert by["RAID5 write, 3 servers, 1 x chunk"]["mape_x"] == pytest.approx(3.73, abs=0.005)
    assert (
        max(c["mape_x"] for c in doc["cases"]) == by["RAID5 write, 3 servers, 1 x chunk"]["mape_x"]
    )
    # master CPU per chunk, SCHED_FIFO on loopback at N = 1: 22.9-43.0 us (55-476 us before,
    # without SCHED_FIFO at load average 11-16)
    cpu = [c["calibration"]["time_per_unit"] for c in doc["cases"]]
    assert 22e-6 < min(cpu) < 23e-6 and 43e-6 < max(cpu) < 44e-6
    assert doc["calibration"]["max_abs_error"] < 0.001  # every link within 0.08 %
    # the recording before the steal limit, kept: 89 % inside, 99 % with the bucket
    assert (prev["inside_bounds_share"], prev["inside_bounds_share_bucket"]) == (0.89, 0.99)
    assert "steal" not in prev
    # the earlier recording, kept: two-stream link medians under load
    assert (round(old["mape_x"], 1), old["inside_bounds_share"]) == (7.7, 0.88)
    assert old["machine"]["load_average"][0] > 10


@pytest.mark.notebook
def test_testbed_raid_notebook(tmp_path, monkeypatch):
    drop_source_tree(monkeypatch)
    monkeypatch.delenv("MPLBACKEND", raising=False)  # draw inline, as a reader sees it
    nb = execute_notebook(NOTEBOOK, NOTEBOOK.parent)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    text = outputs_text(outputs)
    docs = [load(name) for name in FILES]
    found = re.findall(r"MAPE X ([0-9.]+) %, R ([0-9.]+) %; inside", text)
    assert len(found) == 2, text[:2000]
    for (mx, mr), doc in zip(found, docs, strict=True):
        assert float(mx) == pytest.approx(doc["mape_x"], abs=0.051)
        assert float(mr) == pytest.approx(doc["mape_r"], abs=0.051)
        assert f"{100 * doc['inside_bounds_share']:.0f} % of R points" in text
        assert f"({100 * doc['inside_bounds_share_point']:.0f} % with the point" in text
    assert "raid_100mbit_run4.json): MAPE X 3.5 %, R 3.3 %, 77 % of R points inside" in text
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 2
    # the paper's form from the same calibration misses far more than the corrected one
    rows = re.findall(r"^(RAID\S+ \S+ .*?)\s+([0-9.]+)%\s+([0-9.]+)%\s+\d+%\s+([0-9.]+)%$",
                      text, re.M)  # fmt: skip
    assert len(rows) == sum(len(d["cases"]) for d in docs)
    worse = [float(paper) > float(corr) for _, corr, _, paper in rows]
    assert all(worse)  # in every case at both rates (paper's form: 21-45 % MAPE of X)
