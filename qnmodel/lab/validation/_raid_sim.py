"""The RAID study's simulated columns: ``NetworkedRAID.simulate`` beside the overlapped model.

With ``[raid] simulate = true`` every point whose case the overlapped structure models gets
``x_sim``, ``r_sim`` and their 95 % half-widths (``x_sim_halfwidth``, ``r_sim_halfwidth``):
the event simulation (:func:`qnmodel.simulation.storage.simulate_storage`) of the same
calibrated system as ``x_overlap``; every such case ``mape_x_sim``, ``mape_r_sim``.
:func:`resimulate` rebuilds them offline from a recorded study's calibration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import InvalidModelError
from ...models.storage import NetworkedRAID
from ...models.storage_overlap import overlap_parts
from ._common import mape

__all__ = ["SIM_JOBS", "SIM_REPS", "SIM_SEED", "sim_columns", "sim_mape", "resimulate"]

#: Counted requests per run, runs per point and the seed of the study's simulations: about
#: 0.2-0.4 s per point at N = 32 over 4 members (docs/explanation/overlap.md).
SIM_JOBS, SIM_REPS, SIM_SEED = 3000, 3, 1


def sim_columns(model: NetworkedRAID, populations: list[int], disk_scv: float, *,
                jobs: int = SIM_JOBS, reps: int = SIM_REPS,
                seed: int = SIM_SEED) -> dict[int, dict]:  # fmt: skip
    """``x_sim``, ``x_sim_halfwidth``, ``r_sim``, ``r_sim_halfwidth`` per population, or
    an empty dict where the overlapped structure does not model the case (more than a
    stripe, another RAID level)."""
    try:
        overlap_parts(model, disk_scv)
    except InvalidModelError:
        return {}
    s = model.simulate(list(populations), disk_scv=disk_scv, jobs=jobs, reps=reps, seed=seed)
    return {
        int(n): dict(
            x_sim=float(s.throughput[i]),
            x_sim_halfwidth=float(s.throughput_halfwidth[i]),
            r_sim=float(s.response_time[i]),
            r_sim_halfwidth=float(s.response_time_halfwidth[i]),
        )  # fmt: skip
        for i, n in enumerate(s.n)
    }


def sim_mape(points: list[dict]) -> dict:
    """MAPE (percent) of X and R of the simulation against the measured means
    (``mape_x_sim``, ``mape_r_sim``); empty where no point has ``x_sim``."""
    pts = [q for q in points if "x_sim" in q]
    if not pts:
        return {}
    return dict(
        mape_x_sim=mape([q["x_sim"] for q in pts], [q["x_measured"] for q in pts]),
        mape_r_sim=mape([q["r_sim"] for q in pts], [q["r_measured"] for q in pts]),
    )


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
    from ._raid_summary import overlap_mape
    from .raid import case_model

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
