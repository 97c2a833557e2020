"""A recorded RAID study simulated again offline, from its own calibration (no testbed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._raid_sim import SIM_JOBS, SIM_REPS, SIM_SEED, sim_columns
from ._raid_summary import overlap_mape, sim_mape
from .raid import case_model

__all__ = ["resimulate"]


def resimulate(summary: Mapping[str, Any], *, jobs: int = SIM_JOBS, reps: int = SIM_REPS,
               seed: int = SIM_SEED) -> list[dict]:  # fmt: skip
    """Simulate each case of a recorded RAID study from its recorded calibration.

    For every case of ``summary`` (a ``kind = "raid"`` summary, e.g. loaded from
    ``data/validation/raid_emu_ratio_1_20261127.json``) that the overlapped structure
    models: the :class:`NetworkedRAID` rebuilt by :func:`qnmodel.lab.validation.raid.case_model`
    from the case's ``calibration``, simulated at the recorded populations with the case's
    ``disk_scv``. Returns one dict per case: ``label``, ``points`` (the recorded points with
    the simulated columns added) and :func:`sim_mape` plus the recorded overlap MAPEs.
    """
    settings = summary["settings"]
    out = []
    for case in summary["cases"]:
        model = case_model(case, case["calibration"], settings["chunk"], settings["form"])
        pts = [p for p in summary["points"] if p["case"] == case["label"]]
        cols = sim_columns(model, [p["n"] for p in pts], case.get("disk_scv", 1.0), jobs=jobs,
                           reps=reps, seed=seed)  # fmt: skip
        if not cols:
            continue
        pts = [dict(p, **cols[p["n"]]) for p in pts]
        out.append(dict(label=case["label"], disk_scv=case.get("disk_scv", 1.0), points=pts,
                        **sim_mape(pts), **overlap_mape(pts)))  # fmt: skip
    return out
