"""Seed 003's RAID study on qnbench stripe (qnmodel.lab.experiments.raid_study): a live subset."""

from __future__ import annotations

import os
import subprocess
import warnings

import pytest

from qnmodel.errors import InvalidModelError, MeasurementArtefactWarning
from qnmodel.lab.experiments import raid_study as rs
from qnmodel.lab.experiments.search import stripe_demands
from tests._tol import closed_form

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def test_emulated_speedup_matches_the_demand_model(rt):
    """RAID0 of 4 emulated members (a = 1 ms, r = 1 GB/s), 8 clients, sequential reads:
    the saturated speedup is the single member's request time over the array's busiest
    member time per request (stripe_demands). Measured within 10 % (see below)."""
    a, r = 1e-3, 1e9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeasurementArtefactWarning)
        g = rs.measure_grid("emu", levels=(0,), chunks=["64 KiB"], blocks=["16 KiB", "1 MiB"],
                            ops=("read",), repeat=3, runtime="0.3 s", dev_latency=a, dev_rate=r,
                            realtime=bool(rt))  # fmt: skip
    assert len(g) == 2
    for row in g.itertuples():
        D, _ = stripe_demands(0, 4, 65536, row.bs, a, r, "read")
        expected = (a + row.bs / r) / D.max()
        # 16 KiB sequential streams stay 4 requests on one member, so 8 clients do not keep all
        # 4 members busy every moment: measured S = 3.68-3.98 for 4.0 over 7 runs (a at
        # 100 us and at 1 ms alike), hence 10 %, not the 5 % first claimed
        assert row.S == pytest.approx(expected, rel=0.10), g
        assert row.T == 4.0 and row.E == pytest.approx(row.S / 4)
    # 1 MiB in 64 KiB chunks: 4 pieces per member, each paying a: E well below 1
    assert g.loc[g.bs == 2**20, "E"].item() < 0.75


def test_tables_and_bad_input():
    import pandas as pd

    grid = pd.DataFrame(
        {
            "medium": "emu",
            "level": "raid5",
            "op": "read",
            "chunk": [4096, 4096, 65536],
            "bs": [4096, 65536, 4096],
            "S": [3.3, 2.0, 2.9],
            "T": 3.0,
        }  # fmt: skip
    ).assign(E=lambda f: f["S"] / f["T"])
    tab = rs.efficiency_table(grid, "emu", "raid5", "read")
    assert tab.loc[4096, 4096] == pytest.approx(1.1, rel=closed_form(2))  # S / T
    md = rs.table_markdown(grid, "emu", "raid5", "read")
    assert "| 4 KiB | 1.10* | 0.97 |" in md
    with pytest.raises(InvalidModelError, match="no rows"):
        rs.efficiency_table(grid, "tmpfs", "raid5", "read")
    with pytest.raises(InvalidModelError, match="repeat must be >= 3"):
        rs.measure_grid("emu", repeat=2)


@pytest.mark.skipif(not IS_ROOT, reason="a loop device needs root (losetup, mount)")
def test_loop_filesystem_is_created_used_and_removed():
    with rs.loop_filesystem(size=64 * 2**20) as mnt:
        dev = subprocess.run(["findmnt", "-n", "-o", "SOURCE", str(mnt)], capture_output=True,
                             text=True, check=True).stdout.strip()  # fmt: skip
        assert dev.startswith("/dev/loop")
        (mnt / "probe").write_bytes(b"x" * 4096)
    assert not mnt.exists()
    listed = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    assert str(mnt.parent / "image") not in listed


@pytest.mark.skipif(not IS_ROOT, reason="a loop device needs root (losetup, mount)")
def test_tmpfs_and_loop_points(rt):
    """One point per file medium: the array and the single member both measured, S > 0,
    T from the table; file members are served one after the other by the client, so the
    speedup of 4 members over memory-backed files stays near 1 (E near 1/4)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeasurementArtefactWarning)
        for medium in ("tmpfs", "loop"):
            g = rs.measure_grid(medium, levels=(0,), chunks=["64 KiB"], blocks=["256 KiB"],
                                ops=("read",), repeat=3, runtime="0.05 s", jobs=2,
                                realtime=bool(rt))  # fmt: skip
            assert len(g) == 1 and g["S"].item() > 0 and g["T"].item() == 4.0
