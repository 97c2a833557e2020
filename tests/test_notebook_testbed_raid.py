"""Execute notebooks/testbed_raid.ipynb on the recorded networked-RAID study.

The notebook reads data/validation/raid_100mbit.json (no testbed needed); what it prints must
agree with the recorded summary, recomputed here from the points.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from qnmodel.validation import summarize

from ._notebooks import outputs_text
from ._user_env import drop_source_tree

nbformat = pytest.importorskip("nbformat", reason="nbformat is needed to run notebooks")
nbclient = pytest.importorskip("nbclient", reason="nbclient is needed to run notebooks")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "testbed_raid.ipynb"
DATA = ROOT / "data" / "validation" / "raid_100mbit.json"


def test_recorded_summary_is_consistent():
    doc = json.loads(DATA.read_text())
    s = summarize(doc["points"])
    assert s["mape_x"] == pytest.approx(doc["mape_x"], rel=1e-9)
    assert s["inside_bounds_share"] == pytest.approx(doc["inside_bounds_share"], rel=1e-9)
    # the recorded grid: RAID0 and RAID5, read and write, 2-4 servers, N up to 32
    labels = {(c["raid"], c["op"], c["servers"]) for c in doc["cases"]}
    assert {("raid0", "read", 2), ("raid0", "write", 4), ("raid5", "write", 3)} <= labels
    assert max(p["n"] for p in doc["points"]) == 32
    assert doc["machine"]["date"] and doc["calibration"]["max_abs_error"] < 0.05
    for c in doc["cases"]:
        pts = [p for p in doc["points"] if p["case"] == c["label"]]
        # Little's law in the measurement (no think time), over a case's points: completions
        # counted in 1 s windows (+-N at the edges) against N / R
        little = sum(p["x_little"] for p in pts) / sum(p["x_measured"] for p in pts)
        assert little == pytest.approx(1.0, abs=0.1), c["label"]
        if c["raid"] == "raid0":
            # RAID0 saturates at the TCP goodput, the model's X_max (median over N >= 8)
            top = sorted(p["x_little"] / p["x_upper"] for p in pts if p["n"] >= 8)
            assert top[len(top) // 2] == pytest.approx(1.0, abs=0.05), c["label"]


@pytest.mark.notebook
def test_testbed_raid_notebook(tmp_path, monkeypatch):
    drop_source_tree(monkeypatch)
    monkeypatch.delenv("MPLBACKEND", raising=False)  # draw inline, as a reader sees it
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "commit the notebook without outputs"
    )
    nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    ).execute()  # fmt: skip
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = outputs_text(outputs)
    doc = json.loads(DATA.read_text())
    m = re.search(r"MAPE X ([0-9.]+) %, R ([0-9.]+) %", text)
    assert m and float(m[1]) == pytest.approx(doc["mape_x"], abs=0.051), text[:2000]
    assert float(m[2]) == pytest.approx(doc["mape_r"], abs=0.051)
    assert f"{100 * doc['inside_bounds_share']:.0f} % of R points" in text
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 1
    # the paper's form from the same calibration misses far more than the corrected one
    rows = re.findall(r"^(RAID\S+ \S+ .*?)\s+([0-9.]+)%\s+([0-9.]+)%\s+\d+%\s+([0-9.]+)%$",
                      text, re.M)  # fmt: skip
    assert len(rows) == len(doc["cases"])
    assert all(float(paper) > float(corr) for _, corr, _, paper in rows)
