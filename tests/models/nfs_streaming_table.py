"""Seed 001's NFS misses with one request in flight: series network against streaming server.

Run ``.venv/bin/python tests/models/nfs_streaming_table.py`` from the worktree root after
``make install`` (a second; docs/explanation/nfs-validation.md, "Streaming servers"). For each
recorded study (``data/validation/nfs*.json``: one 1 MiB READ in flight over an evicted file,
the ``miss_single`` case) it rebuilds the study's model, ``NFSBandwidth(b1, b2, b3 = b1, b4)``
from the calibration recorded with it (b2 the link's goodput, b4 the disk read directly),
and predicts the bandwidth of one client at N = 1 with
:func:`qnmodel.models.nfs_network.aggregate_bandwidth`, ``structure="series"`` (the disk
then the link: 1 / (1/b2 + 1/b3 + 1/b4)) and ``structure="streaming"`` (the server streams
its disk into the link: 1 / (1/b3 + max(1/b2, 1/b4))).
"""

from __future__ import annotations

import json
from pathlib import Path

from qnmodel.models.nfs import NFSBandwidth, NFSSystem
from qnmodel.models.nfs_network import aggregate_bandwidth

DATA = Path(__file__).resolve().parents[2] / "data" / "validation"
FILES = ("nfs_20261123.json", "nfs_cases_20261124.json", "nfs_components_20261124.json",
         "nfs_slowdisk_20261124.json")  # fmt: skip
MiB = 1 << 20


def _runs(doc: dict) -> list[dict]:
    return doc["runs"] if "runs" in doc else [doc]


def rows() -> list[dict]:
    """One row per recorded miss with one request in flight: measured, series, streaming."""
    out = []
    for name in FILES:
        for r, run in enumerate(_runs(json.loads((DATA / name).read_text()))):
            cal = {c["config"]: c for c in run["calibration"]}
            for row in run["three_case"]:
                if row["case"] != "miss_single":
                    continue
                c = cal[row["config"]]
                b1 = c["b1"]
                system = NFSSystem(NFSBandwidth(b1=b1, b2=c["b2"], b3=b1, b4=c["b4"]),
                                   rsize=MiB)  # fmt: skip
                pred = {s: float(aggregate_bandwidth(system, 1, 64 * MiB, "read", 0.0, 0.0,
                                                     structure=s).bandwidth[0])
                        for s in ("series", "streaming")}  # fmt: skip
                m = row["measured"]
                out.append(dict(file=name, run=r, label=row["label"], measured=m, **pred,
                                err_series=pred["series"] / m - 1.0,
                                err_streaming=pred["streaming"] / m - 1.0))  # fmt: skip
    return out


def main() -> None:
    print("| recording | link, disk | measured [MB/s] | series [MB/s] | error | "
          "streaming [MB/s] | error |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    rs = rows()
    for x in rs:
        run = f" run {x['run'] + 1}" if x["file"].startswith("nfs_components") else ""
        print(f"| {x['file']}{run} | {x['label']} | {x['measured'] / 1e6:.2f} | "
              f"{x['series'] / 1e6:.2f} | {100 * x['err_series']:+.1f} % | "
              f"{x['streaming'] / 1e6:.2f} | {100 * x['err_streaming']:+.1f} % |")  # fmt: skip
    for k in ("series", "streaming"):
        e = [abs(x[f"err_{k}"]) for x in rs]
        print(
            f"{k}: MAPE {100 * sum(e) / len(e):.1f} %, worst {100 * max(e):.1f} % "
            f"over {len(e)} recorded misses"
        )


if __name__ == "__main__":
    main()
