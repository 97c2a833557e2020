"""Seed 003's RAID study on this machine: speedup, theoretical speedup and efficiency tables.

Measures qnbench's ``stripe`` engine (RAID0 and RAID5 of 4 members) against one member over
chunk sizes 4 KiB .. 1 MiB and block sizes 4 KiB .. 2 MiB, sequential read (bandwidth) and
random write (IOPS), on emulated devices, tmpfs files and files on a loop device (root), with
seed 003's steady-state rule, then writes

* ``<out>/grid.csv``: one row per (medium, level, op, chunk, block): S, T, E, artefact;
* ``<out>/machine.json``: where and when (host, kernel, CPUs, date);
* ``<out>/fits.csv``: the speedup fit S(B) per (medium, level, op, chunk), with intervals;
* ``<figure>``: E against block size, one panel per medium;

and prints the paper's tables (rows B, columns C) as Markdown.

    python examples/raid_study_seed003.py data/raid_study --full --media emu,tmpfs,loop \
        --realtime --figure docs/assets/raid-efficiency.png
    python examples/raid_study_seed003.py /tmp/raid     # quick: emu, 2 chunks x 2 blocks
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import pandas as pd

from qnmodel.calibration.raid import fit_raid_speedup
from qnmodel.errors import MeasurementArtefactWarning
from qnmodel.lab.experiments import raid_study as rs

#: the quick subset (default without --full): 2 chunks x 2 blocks
QUICK_CHUNKS = ("16 KiB", "128 KiB")
QUICK_BLOCKS = ("16 KiB", "1 MiB")


def fits(grid: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (medium, level, op, chunk), g in grid.groupby(["medium", "level", "op", "chunk"]):
        opname, pattern = rs.OPS[op]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MeasurementArtefactWarning)
            try:
                res = fit_raid_speedup(
                    g["bs"], g["S"], level=level, disks=4, op=opname, pattern=pattern
                )
            except Exception as exc:  # too few sizes without artefacts: say so in the table
                rows.append({"medium": medium, "level": level, "op": op, "chunk": chunk,
                             "note": str(exc)[:120]})  # fmt: skip
                continue
        row = {"medium": medium, "level": level, "op": op, "chunk": chunk, "note": ""}
        for p in ("s0", "s_inf", "E0", "E_inf"):
            ci = res.confidence_intervals.get(p)
            row[p] = res.values[p]
            row[f"{p}_low"], row[f"{p}_high"] = ci if ci else (float("nan"), float("nan"))
        rows.append(row)
    return pd.DataFrame(rows)


def figure(grid: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    media = list(dict.fromkeys(grid["medium"]))
    fig, axes = plt.subplots(1, len(media), figsize=(4.2 * len(media), 3.6), sharey=True)
    axes = [axes] if len(media) == 1 else list(axes)
    for ax, medium in zip(axes, media, strict=True):
        g = grid[(grid.medium == medium) & (grid.chunk == 131072)]
        for (level, op), h in g.groupby(["level", "op"]):
            h = h.sort_values("bs")
            ax.plot(h["bs"] / 1024, h["E"], marker="o", label=f"{level} {op}")
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("block size B (KiB)")
        ax.set_title(f"{medium}, chunk 128 KiB")
    axes[0].set_ylabel("efficiency E = S / T")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="directory for grid.csv, machine.json, fits.csv")
    ap.add_argument("--full", action="store_true", help="the whole grid (default: a quick subset)")
    ap.add_argument("--figure", help="PNG of E against block size")
    ap.add_argument("--media", default="emu", help="comma list of emu, tmpfs, loop (root)")
    ap.add_argument("--repeat", type=int, default=None, help="repeats per point (4; quick: 3)")
    ap.add_argument("--runtime", default="0.1 s")
    ap.add_argument("--realtime", action="store_true", help="SCHED_FIFO clients (root)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    repeat = args.repeat or (4 if args.full else 3)
    parts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeasurementArtefactWarning)
        for medium in args.media.split(","):
            print(f"measuring {medium} ...", flush=True)
            grid = {} if args.full else {"chunks": QUICK_CHUNKS, "blocks": QUICK_BLOCKS}
            parts.append(
                rs.measure_grid(
                    medium, repeat=repeat, runtime=args.runtime, realtime=args.realtime, **grid
                )
            )
    grid = pd.concat(parts, ignore_index=True)
    grid.to_csv(out / "grid.csv", index=False)
    info = rs.machine_info()
    info.update(members=4, jobs=8, repeat=repeat, runtime=args.runtime, media=args.media,
                realtime=args.realtime)  # fmt: skip
    (out / "machine.json").write_text(json.dumps(info, indent=2) + "\n")
    fits(grid).to_csv(out / "fits.csv", index=False)
    if args.figure:
        figure(grid, Path(args.figure))
    for medium in dict.fromkeys(grid["medium"]):
        for level in ("raid0", "raid5"):
            for op in rs.OPS:
                if grid[(grid.medium == medium) & (grid.level == level) & (grid.op == op)].empty:
                    continue
                print(f"\n{medium}, {level}, {op}: E = S/T (* marks E > 1)\n")
                print(rs.table_markdown(grid, medium, level, op))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
