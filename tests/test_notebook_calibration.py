"""Execute notebooks/calibration_own_machine.ipynb: it measures this machine with qnbench,
fits the device, predicts the closed loop and compares (its own cells assert a and r within
5 % and MAPE below 15 %)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ._notebooks import execute_notebook, outputs_text

nbformat = pytest.importorskip("nbformat", reason="nbformat is needed to run notebooks")
nbclient = pytest.importorskip("nbclient", reason="nbclient is needed to run notebooks")

from qnmodel import bench  # noqa: E402
from qnmodel.errors import BenchNotFoundError  # noqa: E402

from ._ci import IN_CI  # noqa: E402

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "calibration_own_machine.ipynb"


# Measures this machine's timing: run alone, after the parallel suite (see Makefile).
pytestmark = pytest.mark.alone


@pytest.mark.notebook
def test_calibration_notebook_runs_on_this_machine(monkeypatch):
    try:
        exe = bench.executable()
    except BenchNotFoundError as exc:
        if IN_CI:
            pytest.fail(f"qnbench must exist under CI: {exc}")
        pytest.skip(f"qnbench is not built here: {exc}")
    monkeypatch.setenv("QNMODEL_QNBENCH", str(exe))  # the kernel finds the same binary
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = execute_notebook(NOTEBOOK, NOTEBOOK.parent)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    text = outputs_text([o for o in outputs if o.get("output_type") == "stream"])
    m = re.search(r"MAPE of MVA vs measured X\(N\): ([0-9.]+)%", text)
    assert m is not None, text[-2000:]
    assert float(m.group(1)) < 15.0
    fit = re.search(r"a: ([0-9.]+) ms \(([-+0-9.]+)%\),\s+r: ([0-9.]+) MB/s \(([-+0-9.]+)%\)", text)
    assert fit is not None, text[-2000:]
    assert abs(float(fit.group(2))) < 5.0 and abs(float(fit.group(4))) < 5.0
