"""The testbed's NFS misses at 1 and 4 requests in flight: series network against streaming server.

Run ``.venv/bin/python tests/models/nfs_streaming_table.py`` from the worktree root after
``make install`` (a second; docs/explanation/nfs-validation.md, "Streaming servers"). For each
recorded study (``data/validation/nfs*.json``: one 1 MiB READ in flight over an evicted file,
the ``miss_single`` case, and 4 clients each with one READ in flight over its own evicted
file, the ``miss`` case) it rebuilds the study's model, ``NFSBandwidth(b1, b2, b3 = b1, b4)``
from the calibration recorded with it (b2 the link's goodput, b4 the disk read directly),
and predicts the bandwidth at N = 1 and N = 4 with
:func:`qnmodel.lab.validation._nfs_more.miss_bandwidth` (the study's own rows):
``structure="series"`` (the disk then the link: 1 / (1/b2 + 1/b3 + 1/b4) at N = 1) and
``structure="streaming"`` (the server streams its disk into the link: 1 / (1/b3 +
max(1/b2, 1/b4)) at N = 1, tending to min(b2, b4) as N grows).
"""

from __future__ import annotations

import json
from pathlib import Path

from qnmodel.lab.validation._nfs_more import miss_bandwidth
from qnmodel.models.nfs import NFSBandwidth

DATA = Path(__file__).resolve().parents[2] / "data" / "validation"
FILES = ("nfs_20261123.json", "nfs_cases_20261124.json", "nfs_components_20261124.json",
         "nfs_slowdisk_20261124.json")  # fmt: skip
MiB = 1 << 20


def _runs(doc: dict) -> list[dict]:
    return doc["runs"] if "runs" in doc else [doc]


def rows() -> list[dict]:
    """One row per recorded miss: in flight, measured, series, streaming."""
    out = []
    for name in FILES:
        for r, run in enumerate(_runs(json.loads((DATA / name).read_text()))):
            cal = {c["config"]: c for c in run["calibration"]}
            for row in run["three_case"]:
                if row["case"] not in ("miss_single", "miss"):
                    continue
                n = 1 if row["case"] == "miss_single" else row.get("in_flight", 4)
                c = cal[row["config"]]
                model = NFSBandwidth(b1=c["b1"], b2=c["b2"], b3=c["b1"], b4=c["b4"])
                pred = {s: miss_bandwidth(model, n, s) for s in ("series", "streaming")}
                m = row["measured"]
                out.append(dict(file=name, run=r, label=row["label"], n=n, measured=m, **pred,
                                err_series=pred["series"] / m - 1.0,
                                err_streaming=pred["streaming"] / m - 1.0))  # fmt: skip
    return out


def main() -> None:
    print("| recording | link, disk | in flight | measured [MB/s] | series [MB/s] | error | "
          "streaming [MB/s] | error |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    rs = rows()
    for x in rs:
        run = f" run {x['run'] + 1}" if x["file"].startswith("nfs_components") else ""
        print(f"| {x['file']}{run} | {x['label']} | {x['n']} | {x['measured'] / 1e6:.2f} | "
              f"{x['series'] / 1e6:.2f} | {100 * x['err_series']:+.1f} % | "
              f"{x['streaming'] / 1e6:.2f} | {100 * x['err_streaming']:+.1f} % |")  # fmt: skip
    for n in sorted({x["n"] for x in rs}):
        for k in ("series", "streaming"):
            e = [x[f"err_{k}"] for x in rs if x["n"] == n]
            worst = max(e, key=abs)
            print(
                f"{n} in flight, {k}: MAPE {100 * sum(map(abs, e)) / len(e):.1f} %, "
                f"worst {100 * worst:+.1f} % over {len(e)} recorded misses"
            )


if __name__ == "__main__":
    main()
