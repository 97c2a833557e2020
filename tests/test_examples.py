"""Every examples/*.py script runs to completion; every examples/*.toml model solves."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import qnmodel as qn
from qnmodel.io import modelfile

from ._user_env import user_env

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "examples").glob("*.py"))
MODELS = sorted((ROOT / "examples").glob("*.toml"))


def run_script(script: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = user_env(MPLBACKEND="Agg")
    return subprocess.run(
        [sys.executable, str(script), str(tmp_path / "out")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_there_are_examples():
    assert SCRIPTS and MODELS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_example_script_runs(script, tmp_path):
    proc = run_script(script, tmp_path)
    assert proc.returncode == 0, f"{script.name} failed:\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), f"{script.name} printed nothing"
    assert "Traceback" not in proc.stderr


def test_demo_storage_script_numbers(tmp_path):
    proc = run_script(ROOT / "examples" / "demo_storage.py", tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # Numbers recomputed independently: D_max = 64 KiB / 12.5e6 B/s; disk = 0.5 (4.9 + 2.99 +
    # 65536 / 35e6 * 1e3) ms; X_max = 1 / D_max.
    net = qn.Network.from_demands(
        [0.4e-3, 65536 / 125e6, 65536 / 12.5e6, 0.7e-3, 0.5 * (7.89e-3 + 65536 / 35e6)],
        think_time=0.05,
    )
    res = qn.mva(net, 1000)
    within = int(res.n[res.response_time <= 0.05].max())
    m = re.search(r"X_max = ([\d.]+) jobs/s.*clients within a 50 ms SLA: (\d+)", lines[0])
    assert m, lines[0]
    assert float(m.group(1)) == pytest.approx(12.5e6 / 65536, abs=0.05)
    assert int(m.group(2)) == within == 17
    assert "bottleneck disk" in lines[1]  # the faster link moves the bottleneck
    assert (tmp_path / "out" / "demo_storage_bounds.png").stat().st_size > 20_000


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.name)
def test_example_model_solves(model):
    spec = modelfile.load(model)
    frame = spec.solve().to_frame()
    rows = len(spec.multiclass.classes) if spec.is_multiclass else len(spec.populations)
    assert len(frame) == rows
    assert (frame["throughput"] > 0).all()
