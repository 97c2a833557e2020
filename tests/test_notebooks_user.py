"""Execute the user notebooks (tutorial, capacity planning) and check what they report."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ._notebooks import execute_notebook, outputs_text
from ._user_env import drop_source_tree

nbformat = pytest.importorskip("nbformat", reason="nbformat is needed to run notebooks")
nbclient = pytest.importorskip("nbclient", reason="nbclient is needed to run notebooks")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def _text(nb) -> str:
    return outputs_text(nb.cells)


def execute(name: str, monkeypatch) -> tuple[object, str, float]:
    drop_source_tree(monkeypatch)  # the kernel imports the installed package
    monkeypatch.delenv("MPLBACKEND", raising=False)  # draw inline, as a user sees it
    start = time.monotonic()
    nb = execute_notebook(NOTEBOOKS / name, NOTEBOOKS)
    elapsed = time.monotonic() - start
    images = sum(
        1 for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})
    )
    return nb, _text(nb), elapsed, images


@pytest.mark.notebook
def test_tutorial_notebook(monkeypatch):
    nb, text, elapsed, images = execute("tutorial.ipynb", monkeypatch)
    print(f"notebook ran in {elapsed:.1f} s")  # a speed target belongs in the benchmarks
    assert images >= 2  # the bounds band and the utilisation plot are drawn
    assert "bottleneck: network" in text
    assert "saturation throughput 1/D_max = 190.7 jobs/s" in text
    assert "knee N* = 11.8 clients" in text
    assert "X(40) = 189.0 jobs/s, R(40) = 161.7 ms" in text
    assert "exact curve inside the BJB band: True" in text
    assert "10 Gbit/s: X(40) =  204.9 jobs/s" in text and "bottleneck disk" in text
    assert "largest relative difference from the notebook's network: 1.9e-05" in text
    assert "refused: unit 'Mb/s'" in text


@pytest.mark.notebook
def test_capacity_planning_notebook(monkeypatch):
    nb, text, elapsed, images = execute("capacity_planning.ipynb", monkeypatch)
    print(f"notebook ran in {elapsed:.1f} s")  # a speed target belongs in the benchmarks
    assert images >= 2
    assert "R(200) = 58.8 ms: the SLA of 50 ms is missed" in text
    assert "bottleneck: disk0" in text
    assert "cheapest option that meets the SLA: add a third disk" in text
    assert "largest allowed demand: 5.25 ms" in text  # (R_SLA + Z) / N = 1.05 s / 200
    assert "add a third disk: 281 clients" in text
    assert "today: 190 clients" in text
    # The heatmap's prose says only two disks with a cold cache miss the SLA.
    assert "configurations that miss the SLA: [(2, 0.9), (2, 1.0)]" in text
    for line in text.splitlines():  # upgrading a non-bottleneck device does not help
        if line.strip().startswith(("10 GbE network card", "4-core CPU")) and "$" not in line:
            assert line.split()[-1] in ("disk0", "clients"), line
            assert " yes " not in line, line
