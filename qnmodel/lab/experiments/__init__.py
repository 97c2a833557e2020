"""Measurement studies that join qnbench (:mod:`qnmodel.bench`) and calibration.

* :mod:`~qnmodel.lab.experiments.plan`: model-guided measurement plans (``qnmodel bench plan``);
* :mod:`~qnmodel.lab.experiments.search`: the search for the best aggregate bandwidth (seed 000's
  one-factor-at-a-time method and a model-pruned search);
* :mod:`~qnmodel.lab.experiments.raid_study`: seed 003's RAID speedup and efficiency study.
"""

from __future__ import annotations

from .plan import (
    MeasurementPlan,
    PlanComparison,
    compare_plans,
    dense_plan,
    fit_points,
    plan_sweep,
    run_plan,
)

__all__ = [
    "MeasurementPlan",
    "PlanComparison",
    "compare_plans",
    "dense_plan",
    "fit_points",
    "plan_sweep",
    "run_plan",
]
