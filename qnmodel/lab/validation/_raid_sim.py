"""The RAID study's simulated columns: ``NetworkedRAID.simulate`` beside the overlapped model.

With ``[raid] simulate = true`` every point whose case the overlapped structure models gets
``x_sim``, ``r_sim`` and their 95 % half-widths (``x_sim_halfwidth``, ``r_sim_halfwidth``):
the event simulation (:func:`qnmodel.simulation.storage.simulate_storage`) of the same
calibrated system as ``x_overlap``; every such case ``mape_x_sim``, ``mape_r_sim``.
:func:`qnmodel.lab.validation._raid_records.resimulate` rebuilds them offline from a
recorded study's calibration; their MAPEs are
:func:`~qnmodel.lab.validation._raid_summary.sim_mape`.
"""

from __future__ import annotations

from ...errors import InvalidModelError
from ...models.storage import NetworkedRAID
from ...models.storage_overlap import overlap_parts

__all__ = ["SIM_JOBS", "SIM_REPS", "SIM_SEED", "sim_columns"]

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
