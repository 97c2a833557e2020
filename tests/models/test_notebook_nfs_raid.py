"""Execute notebooks/nfs_and_raid.ipynb and check the numbers it reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from .._notebooks import outputs_text
from .._user_env import drop_source_tree

nbformat = pytest.importorskip("nbformat", reason="nbformat is needed to run notebooks")
nbclient = pytest.importorskip("nbclient", reason="nbclient is needed to run notebooks")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "nfs_and_raid.ipynb"


def _text(cell) -> str:
    return outputs_text([cell])


@pytest.mark.notebook
def test_notebook_executes_and_reports_the_models_numbers(monkeypatch):
    # the kernel imports the installed package and draws inline (not the suite's Agg default)
    drop_source_tree(monkeypatch)  # the kernel imports the installed package
    monkeypatch.delenv("MPLBACKEND", raising=False)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "commit the notebook without outputs"
    )
    client = nbclient.NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    text = "\n".join(_text(c) for c in nb.cells if c.cell_type == "code")
    assert "memory peak = 10.66 GB/s" in text
    # case bandwidths of the two setups, MB/s
    assert "server_hit    125.0        5000.0" in text
    assert "miss          125.0         450.0" in text
    # RAID: RAID5 random write on 4 disks is one disk; the 5.77 sequential read is flagged
    assert "1 MeasurementArtefactWarning(s)" in text
    assert "RAID0 sequential read, max    5.770  5.00  1.154      True" in text
    # RAID5 random write at the paper's efficiency bound E < 0.13 on the derived N = 5 disks
    assert "RAID5 random write, E = 0.13  0.163  1.25  0.130     False" in text
    assert "peak at 18.0" in text
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 3
