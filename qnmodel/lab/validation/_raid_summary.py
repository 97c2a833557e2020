"""The RAID study's summary pieces: shares inside bounds, the bucket credit, steal, the
calibration's rows and errors, the model structures (see :mod:`qnmodel.lab.validation.raid`,
which re-exports them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..testbed import Topology
from ..testbed.lifecycle import shaper_burst
from ._common import inside, mape, summarize

__all__ = [
    "model_structure",
    "steal_summary",
    "bucket_credit",
    "with_bucket",
    "inside_bucket",
    "inside_overlap",
    "overlap_mape",
    "inside_point",
    "calibration_rows",
    "regime_rows",
]


def model_structure(p: dict) -> str:
    """Which model structures a case's predictions come from (for the report)."""
    fj = {
        "forkjoin": "fork-join MVA, master link after the join",
        "forkjoin_overlap": "fork-join MVA, master link inside the fork (overlapped stages)",
    }[p["forkjoin"]]
    return (
        f"NetworkedRAID(form={p['form']!r}): exact MVA over one station per server (x_model, "
        f"r_model), BJB bounds; {fj} (x_forkjoin, r_forkjoin); where it applies, the "
        "overlapped structure (pipelined chunk transfers; x_overlap, r_overlap) and its bounds"
        + ("; the event simulation of that structure (max-min fair links; x_sim, r_sim)"
           if p.get("simulate") else "")
    )  # fmt: skip


def steal_summary(points: list[dict], max_steal: float) -> dict:
    """The hypervisor's share of the CPU over the study's repeats (see ``max_steal``).

    ``max_steal`` the limit, ``median`` and ``max`` of the repeats used, ``rejected`` how
    many repeats were set aside and re-run, ``disturbed_points`` how many points had to use
    repeats over the limit. Points recorded before steal was measured count as none.
    """
    used = [s for p in points for s in p.get("steal", []) if s == s]
    return dict(max_steal=max_steal,
                median=float(np.median(used)) if used else None,
                max=max(used) if used else None,
                rejected=sum(len(p.get("rejected", [])) for p in points),
                disturbed_points=sum(1 for p in points if p.get("disturbed")))  # fmt: skip


def bucket_credit(topo: Topology, client: str, case: dict) -> float:
    """Seconds a request can gain from the master link's token bucket (module docstring).

    ``burst / rate`` of the ``client``'s link per phase that crosses it after an idle gap: two
    for a RAID5 write of fewer chunks than a stripe's data (read old data and parity, then
    write), one otherwise; 0 for an unshaped link.
    """
    link = topo.node(client).link
    if link.rate is None:
        return 0.0
    rmw = case["raid"] == "raid5" and case["op"] == "write" and case["chunks"] < case["servers"] - 1
    return (2 if rmw else 1) * shaper_burst(link.rate, link.burst) / link.rate


def with_bucket(points: list[dict], credit: float) -> list[dict]:
    """The points with ``r_lower_bucket = r_lower - credit`` (at least 0)."""
    return [dict(q, r_lower_bucket=max(0.0, q["r_lower"] - credit)) for q in points]


def _r_share(points: list[dict], lower: str, upper: str) -> float:
    """Share of R points whose interval meets [``lower``, ``upper``] (``r_lower``/``r_upper``
    where a point lacks them)."""
    got = [inside(q["r_measured"], q["r_ci"], q.get(lower, q["r_lower"]),
                  q.get(upper, q["r_upper"])) for q in points]  # fmt: skip
    return float(np.mean(got)) if got else float("nan")


def inside_bucket(points: list[dict]) -> float:
    """Share of R points inside [r_lower_bucket, r_upper] (with their CIs)."""
    return _r_share([q for q in points if "r_lower_bucket" in q], "r_lower_bucket", "r_upper")


def overlap_mape(points: list[dict]) -> dict:
    """MAPE (percent) of X and R of the overlapped structure (``mape_x_overlap``,
    ``mape_r_overlap``); empty where the points have no overlapped prediction."""
    pts = [q for q in points if "x_overlap" in q]
    if not pts:
        return {}
    return dict(
        mape_x_overlap=mape([q["x_overlap"] for q in pts], [q["x_measured"] for q in pts]),
        mape_r_overlap=mape([q["r_overlap"] for q in pts], [q["r_measured"] for q in pts]),
    )


def inside_overlap(points: list[dict]) -> float | None:
    """Share of R points inside the overlap bounds (with their CIs); None where no point has
    them (:func:`predict`)."""
    pts = [q for q in points if "r_lower_overlap" in q]
    return _r_share(pts, "r_lower_overlap", "r_upper_overlap") if pts else None


def inside_point(points: list[dict]) -> float:
    """Share of R points inside the bounds of the point calibration (no calibration band)."""
    return _r_share(points, "r_lower_point", "r_upper_point")


def _rate_error(m: dict) -> float | None:
    """A measured rate's relative error against its configured value (None without one)."""
    c = m.get("configured")
    return m["rate"] / c - 1.0 if c else None


def _with_error(m: dict) -> dict:
    e = _rate_error(m)
    return dict(m) if e is None else {**m, "error": e}


def _calibration_errors(cal: dict) -> dict:
    """A copy of the calibration with each measured rate's error against the configured one
    (the calibration itself is left as it is)."""
    links = {name: {op: _with_error(m) for op, m in ops.items()}
             for name, ops in cal["links"].items()}  # fmt: skip
    disks = {name: _with_error(m) for name, m in cal["disks"].items()}
    errs = [abs(e) for e in map(_rate_error, [m for ops in cal["links"].values()
                                              for m in ops.values()] + list(cal["disks"].values()))
            if e is not None]  # fmt: skip
    return {**cal, "links": links, "disks": disks, "max_abs_error": max(errs) if errs else None}


def calibration_rows(cal: dict) -> list[dict]:
    """One row per calibrated component: measured and configured value, relative error."""
    rows = []
    for name, ops in cal["links"].items():
        for op, m in ops.items():
            rows.append(dict(component=f"link {name} ({op}), B/s", measured=m["rate"],
                             configured=m.get("configured"), error=_rate_error(m)))  # fmt: skip
    for name, m in cal["disks"].items():
        rows.append(dict(component=f"disk {name} ({m['engine']}), B/s", measured=m["rate"],
                         configured=m.get("configured"), error=_rate_error(m)))  # fmt: skip
    for label, m in cal["cpu"].items():
        rows.append(dict(component=f"master CPU per chunk, s ({label})",
                         measured=m["time_per_unit"], configured=None, error=None))  # fmt: skip
    return rows


def regime_rows(summary: Mapping[str, Any]) -> list[dict]:
    """Where each case of a recorded RAID study sits in the overlap regime, and its errors.

    ``summary`` is a ``qnmodel validate`` RAID summary as recorded (``summary.json``, the
    files of ``data/validation/``); every number is computed again from its cases' calibrated
    demands and its points (:func:`~qnmodel.lab.validation._common.summarize`,
    :func:`overlap_mape`, :func:`inside_overlap`), not read from the stored figures.
    One row per case that has the overlapped prediction, with

    * ``label``, ``link_rate`` (calibrated, B/s), ``disk_scv`` (1 exponential, 0 constant);
    * ``disk`` the calibrated disk time per chunk (and the server's CPU per chunk, if any)
      and ``chunk_link`` the chunk's time on the calibrated master link (its rate times the
      study's TCP goodput factor), s; ``ratio`` = disk / chunk_link, the regime's d/c (per
      chunk, so the same for every case of a study whatever its chunks per member);
    * ``mape_x``, ``mape_r`` of exact MVA and ``mape_x_overlap``, ``mape_r_overlap`` of the
      overlapped structure, percent;
    * ``r1_measured`` (s) and ``r1_error``, ``r1_error_overlap``: the relative error
      (model - measured) / measured of R(1), MVA and overlapped, as fractions;
    * ``inside_overlap``, ``n_points``: R points inside the overlap bounds (with their 95 %
      intervals), of how many;
    * where the study simulated the case (``[raid] simulate = true``): ``mape_x_sim``,
      ``mape_r_sim`` (percent) and ``r1_error_sim`` (fraction) of the event simulation of the
      same structure (:mod:`qnmodel.lab.validation._raid_sim`).
    """
    rows = []
    for case in summary["cases"]:
        pts = sorted((p for p in summary["points"] if p["case"] == case["label"]),
                     key=lambda p: p["n"])  # fmt: skip
        if not pts or "x_overlap" not in pts[0]:
            continue
        # per chunk, whatever the case: one chunk's time on a member's disk (its calibrated
        # rate) and on the master's link (calibrated rate times TCP's goodput)
        chunk, cal = float(summary["settings"]["chunk"]), case["calibration"]
        disk = chunk / cal["disk_rate"] + case["demands"].get("cpu_server", 0.0)
        chunk_link = chunk / (cal["link_rate"] * summary["goodput_factor"])
        first = pts[0]
        share = inside_overlap(pts)
        rows.append(dict(
            label=case["label"], link_rate=case["calibration"]["link_rate"],
            disk_scv=case["disk_scv"], disk=disk, chunk_link=chunk_link,
            ratio=disk / chunk_link,
            **{k: v for k, v in summarize(pts).items() if k in ("mape_x", "mape_r")},
            **overlap_mape(pts),
            r1_n=first["n"], r1_measured=first["r_measured"],
            r1_error=first["r_model"] / first["r_measured"] - 1.0,
            r1_error_overlap=first["r_overlap"] / first["r_measured"] - 1.0,
            inside_overlap=round(share * len(pts)), n_points=len(pts),
        ))  # fmt: skip
        if all("x_sim" in p for p in pts):  # the simulation of the same structure
            rows[-1].update(sim_mape(pts),
                            r1_error_sim=first["r_sim"] / first["r_measured"] - 1.0)  # fmt: skip
    return rows


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
