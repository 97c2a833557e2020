"""Execute the NFS-on-the-testbed notebook on the recorded study and check what it reports.

The notebook reads ``data/validation/nfs_*.json`` (the study recorded with
``python -m qnmodel.validation.nfs examples/validation/nfs.toml examples/testbed/nfs_study.toml``);
the numbers it prints must be the recorded ones, and the recorded study must show what the docs
page says it shows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .test_notebooks_user import execute

DATA = sorted((Path(__file__).resolve().parent.parent / "data" / "validation").glob("nfs_*.json"))


def recorded() -> dict:
    assert DATA, "no recorded NFS study in data/validation/"
    return json.loads(DATA[-1].read_text())


def test_recorded_study_is_complete_and_holds_what_the_docs_say():
    s = recorded()
    assert s["study"] == "nfs" and s["machine"]["date"] and s["machine"]["cpus"]
    links = {c["link"] for c in s["configs"]}
    assert links == {12.5e6, 125e6}  # 100 Mbit/s and 1 Gbit/s
    for link in links:  # disks slower and faster than each link
        disks = [c["disk"] for c in s["configs"] if c["link"] == link]
        assert min(disks) < link * 1448 / 1514 < max(disks)
    rows = s["three_case"]
    assert {r["case"] for r in rows} == {"client_hit", "server_hit", "miss", "miss_single"}
    # the page cache was really emptied before every miss pass
    assert all(max(r["resident_after_evict"]) == 0.0 for r in rows if "miss" in r["case"])
    # a server hit runs at b2 = rate x 1448/1514 in every configuration
    assert all(abs(r["err"]) <= SERVER_HIT_TOL for r in rows if r["case"] == "server_hit")
    ns = [p["N"] for p in s["points"]]
    assert ns == sorted(ns) and ns[0] == 1 and ns[-1] == 16 and len(ns) >= 6
    assert s["mape_x"] <= MAPE_X_MAX and s["usl"] is not None
    assert len(s["mixed"]) == 3


@pytest.mark.notebook
def test_testbed_nfs_notebook(monkeypatch):
    s = recorded()
    nb, text, elapsed, images = execute("testbed_nfs.ipynb", monkeypatch)
    assert images >= 2
    assert DATA[-1].name in text
    three = [r for r in s["three_case"] if r["case"] in ("client_hit", "server_hit", "miss")]
    inside = sum(abs(r["err"]) <= 0.05 for r in three)
    assert f"three-case bandwidths within 5 % of the model: {inside} of {len(three)}" in text
    assert f"MAPE X {s['mape_x']:.1f} %" in text  # percent, as every study
    rows = re.findall(r"^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+[+-][\d.]+%", text, re.M)
    assert [int(r[0]) for r in rows] == [p["N"] for p in s["points"]]


SERVER_HIT_TOL = 0.03
MAPE_X_MAX = 5.0  # percent
