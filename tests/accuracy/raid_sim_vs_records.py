"""The package simulation of overlapped networked RAID against the recorded testbed studies.

For every case of the recorded RAID studies ``data/validation/raid_emu_*_20261127.json``
that were not simulated during their run (the regime grid's were: ``[raid] simulate = true``)
and that the overlapped structure models, rebuild its :class:`~qnmodel.NetworkedRAID` from the
record's bottom-up calibration (:func:`qnmodel.lab.validation.raid.case_model`), simulate it
at the recorded populations (``NetworkedRAID.simulate``: :func:`qnmodel.simulate_storage`,
``--reps`` runs of ``--jobs`` requests, seed 1, the case's disk SCV), and print a Markdown
table: MAPE of X and R of the simulation and of the overlapped model against the measured
means, and of the model against the simulation (the model's own error on this system).
No testbed is run: everything comes from the records (pasted into
docs/explanation/overlap.md).

Run: ``.venv/bin/python tests/accuracy/raid_sim_vs_records.py [--jobs 5000] [--reps 5]``
from the worktree root after ``make install`` (about a minute).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from qnmodel.lab.validation._common import mape
from qnmodel.lab.validation._raid_records import resimulate
from qnmodel.lab.validation.raid import case_model
from qnmodel.models.storage_overlap import overlap_parts

DATA = Path(__file__).resolve().parents[2] / "data" / "validation"


def rows(path: Path, jobs: int, reps: int) -> list[dict]:
    """One row per simulated case of the recorded study at ``path``."""
    summary = json.loads(path.read_text())
    out = []
    t0 = time.perf_counter()
    cases = resimulate(summary, jobs=jobs, reps=reps)
    seconds = time.perf_counter() - t0
    npts = sum(len(c["points"]) for c in cases)
    for c in cases:
        rec = next(x for x in summary["cases"] if x["label"] == c["label"])
        st = summary["settings"]
        parts = overlap_parts(case_model(rec, rec["calibration"], st["chunk"], st["form"]),
                              c["disk_scv"])  # fmt: skip
        pts = c["points"]
        first = pts[0]
        out.append(dict(
            study=path.stem.removesuffix("_20261127"), case=c["label"],
            law="const" if c["disk_scv"] == 0.0 else "exp",
            ratio=parts.member / parts.chunk_time,
            sim_x=c["mape_x_sim"], sim_r=c["mape_r_sim"],
            ov_x=c["mape_x_overlap"], ov_r=c["mape_r_overlap"],
            ov_sim_x=mape([p["x_overlap"] for p in pts], [p["x_sim"] for p in pts]),
            ov_sim_r=mape([p["r_overlap"] for p in pts], [p["r_sim"] for p in pts]),
            r1=first["r_measured"], r1_sim=first["r_sim"], r1_ov=first["r_overlap"],
            n=[p["n"] for p in pts], seconds_per_point=seconds / npts,
        ))  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=5000)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    # the regime grid's studies simulated during the run (``[raid] simulate = true``): their
    # columns are in the records, tabled with the grid in docs/explanation/overlap.md
    files = [f for f in sorted(DATA.glob("raid_emu_*_20261127.json"))
             if not json.loads(f.read_text())["settings"].get("simulate")]  # fmt: skip
    table = [r for f in files for r in rows(f, a.jobs, a.reps)]
    print(f"{a.reps} runs of {a.jobs} requests per point, seed 1\n")
    print(
        "| study | case | disks | d/c | MAPE X sim | MAPE R sim | MAPE X overlap | "
        "MAPE R overlap | overlap vs sim X / R | R(1) measured | R(1) sim / overlap |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in table:
        print(f"| {r['study']} | {r['case']} | {r['law']} | {r['ratio']:.2f} | "
              f"{r['sim_x']:.1f} % | {r['sim_r']:.1f} % | {r['ov_x']:.1f} % | "
              f"{r['ov_r']:.1f} % | {r['ov_sim_x']:.1f} % / {r['ov_sim_r']:.1f} % | "
              f"{1e3 * r['r1']:.2f} ms | {100 * (r['r1_sim'] / r['r1'] - 1):+.1f} % / "
              f"{100 * (r['r1_ov'] / r['r1'] - 1):+.1f} % |")  # fmt: skip
    worst = max(table, key=lambda r: r["seconds_per_point"])
    print(f"\nslowest: {worst['seconds_per_point']:.2f} s per point ({worst['study']}, "
          f"N = {worst['n']})")  # fmt: skip


if __name__ == "__main__":
    main()
