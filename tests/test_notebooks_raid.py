"""Execute the networked-RAID what-if notebook (seed 002) in a temporary directory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ._notebooks import execute_notebook, outputs_text
from ._user_env import drop_source_tree

nbformat = pytest.importorskip("nbformat", reason="nbformat is needed to run notebooks")
nbclient = pytest.importorskip("nbclient", reason="nbclient is needed to run notebooks")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "networked_raid_whatif.ipynb"


@pytest.mark.notebook
def test_networked_raid_whatif_notebook(tmp_path, monkeypatch):
    drop_source_tree(monkeypatch)  # the kernel imports the installed package
    monkeypatch.delenv("MPLBACKEND", raising=False)  # draw inline, as a reader sees it
    work = tmp_path / NOTEBOOK.name
    shutil.copy(NOTEBOOK, work)
    nb = execute_notebook(work, tmp_path)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    text = outputs_text(outputs)
    images = sum("image/png" in o.get("data", {}) for o in outputs)
    assert images == 2  # fig. 3 (bounds and MVA) and figs. 4-8 (what-if panels)
    # the test-bed demands and the readings table
    assert "nic_master   24.9535" in text and "network      24" in text
    assert "disk 35 Mbit/s as printed" in text and "23.6713" in text
    # the sensitivity conclusions, computed in the notebook
    assert "dominant hardware factor at N=1 : network bandwidth (TRate_e)" in text
    assert "dominant hardware factor at N=64: network bandwidth (TRate_e)" in text
    assert "1 Gbit/s, dominant hardware factor at N=64: disk positioning (seek, latency)" in text
    assert "agrees    High N: network bandwidth is the key factor" in text
    assert "DISAGREES Low N: master CPU is the key factor" in text
    assert "agrees    Master cache hit rate matters at every N" in text
    assert "agrees    Disk sustained rate matters little at every N" in text
    # the last section: the default, corrected form beside the paper's (200 MB RAID5 writes)
    assert "paper (eqs. 2-10)" in text and "corrected (default)" in text
    assert "link_out" in text and "52.4055" in text and "79.0133" in text
    assert not list(tmp_path.glob("*.png"))  # figures stay inline; nothing written to disk
