"""Capacity plan for the networked RAID5 of Cui et al. (2006) under a response-time SLA.

Question: how many concurrent 200 MB writes can the test bed serve while the mean response time
stays within the SLA, what limits it, and which single upgrade buys the most concurrency?

    python examples/capacity_plan_networked_raid.py                 # SLA 10 min
    python examples/capacity_plan_networked_raid.py --sla "5 min" --op read
    python examples/capacity_plan_networked_raid.py --sla "10 min" out/   # also write a CSV
    python examples/capacity_plan_networked_raid.py --form paper    # the paper's eqs. 2-10

The answer uses exact MVA of NetworkedRAID's closed network: by default the corrected form
(``form="corrected"``: one pipelined station per link direction, measured on a testbed);
``--form paper`` takes the paper's six single-server stations with the demands of its
eqs. 2-10 as printed. The balanced job bounds of the same network (paper eq. 1) bracket
that answer from the demands' total, mean and maximum alone: the BJB upper bound on R stays
within the SLA up to "guaranteed" jobs, the BJB lower bound up to "at most" jobs. All three
are statements about the model; how close the model is to a real system is what the
calibration workflow checks. Concurrency is searched up to --nmax; a result equal to it is
reported as "at least".
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from qnmodel import units
from qnmodel.models.storage import NetworkedRAID
from qnmodel.whatif import sweep

BASE = NetworkedRAID.cui2006()  # form="corrected", the default

#: one upgrade each: label -> changes to the test bed
UPGRADES = {
    "none (test bed)": {},
    "network 100 Mbit/s -> 1 Gbit/s": {"link_rate": "1 Gbit/s"},
    "master CPU 2x faster": {
        "T_mpro": BASE.master_time_per_unit / 2,
        "T_mp": BASE.master_time_per_packet / 2,
    },
    "server CPUs 2x faster": {
        "T_snpro": BASE.server_time_per_unit / 2,
        "T_snp": BASE.server_time_per_packet / 2,
    },
    "disks 2x sustained rate": {"disk_rate": BASE.disk_rate * 2},
    "disks 15k rpm (seek 3.6 ms, latency 2 ms)": {"seek": "3.6 ms", "latency": "2 ms"},
    "master cache hit rate 0 -> 0.3": {"P_m": 0.3},
    "jumbo frames (MSS 8960 B, frame 9018 B)": {"MSS": "8960 B", "Frame_e": "9018 B"},
}


def jobs(n: int, nmax: int) -> str:
    """``n`` as text, ``">= nmax"`` when the search hit its upper end."""
    return f">= {n}" if n >= nmax else f"{n}"


def largest_n(values: np.ndarray, sla: float) -> int:
    """Largest n (1-based) with values[n-1] <= sla, 0 if none (values increase with n)."""
    ok = np.flatnonzero(values <= sla)
    return int(ok[-1] + 1) if ok.size else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", help="directory for capacity_plan.csv (optional)")
    ap.add_argument("--sla", default="10 min", help="mean response-time SLA, e.g. '10 min'")
    ap.add_argument("--op", default="write", choices=["write", "read"])
    ap.add_argument("--nmax", type=int, default=512, help="largest concurrency examined")
    ap.add_argument(
        "--form",
        default="corrected",
        choices=["corrected", "paper"],
        help="demand composition: corrected (default) or the paper's eqs. 2-10 as printed",
    )
    args = ap.parse_args(argv)
    sla = units.parse(args.sla, "time")

    def system(upgrade: str) -> NetworkedRAID:
        return BASE.replace(op=args.op, form=args.form, **UPGRADES[upgrade])

    df = sweep(system, N=args.nmax, upgrade=list(UPGRADES), methods=("bjb", "mva"))
    rows = []
    for name in UPGRADES:
        g = df[df.upgrade == name]
        rows.append(
            {
                "upgrade": name,
                "n_mva": largest_n(g.response_time_mva.to_numpy(), sla),
                "n_guaranteed": largest_n(g.response_time_bjb_upper.to_numpy(), sla),
                "n_at_most": largest_n(g.response_time_bjb_lower.to_numpy(), sla),
                "R1_s": float(g.response_time_mva.iloc[0]),
                "bottleneck": str(g.bottleneck.iloc[0]),
            }
        )
    base, *ups = rows
    best = max(ups, key=lambda r: (r["n_mva"], -r["R1_s"]))
    d = system("none (test bed)").demands()

    print(
        f"networked RAID5 test bed (Cui et al. 2006, {args.form} form), 200 MB {args.op}s, "
        f"SLA R <= {args.sla}"
    )
    print(f"  lone job response time      : {base['R1_s']:.1f} s")
    if base["n_mva"] == 0:
        print("  the SLA cannot be met even by a single job")
    else:
        nmax = args.nmax
        print(
            f"  largest concurrency (MVA)   : {jobs(base['n_mva'], nmax)} jobs"
            f"  (BJB: guaranteed {jobs(base['n_guaranteed'], nmax)},"
            f" at most {jobs(base['n_at_most'], nmax)})"
        )
        if base["n_at_most"] >= nmax:
            print(f"  (the search stopped at --nmax {nmax}: raise it for the exact figure)")
    print(
        f"  bottleneck                  : {base['bottleneck']}"
        f" ({d[base['bottleneck']]:.2f} s per job; saturation {1 / max(d.values()):.4f} jobs/s)"
    )
    print("  single upgrades (largest concurrency within the SLA, exact MVA):")
    for r in sorted(ups, key=lambda r: -r["n_mva"]):
        gain = r["n_mva"] - base["n_mva"]
        print(
            f"    {r['upgrade']:<43} {jobs(r['n_mva'], args.nmax):>4} jobs ({gain:+d})"
            f"  bottleneck {r['bottleneck']}"
        )
    if best["n_mva"] > base["n_mva"]:
        print(f"  best single upgrade         : {best['upgrade']}")
    else:
        fastest = min(ups, key=lambda r: r["R1_s"])
        print(
            "  best single upgrade         : none raises the concurrency within the SLA; "
            f"the lowest lone-job time comes with {fastest['upgrade']}"
            f" ({fastest['R1_s']:.1f} s)"
        )
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        import pandas as pd

        pd.DataFrame(rows).to_csv(out / "capacity_plan.csv", index=False)
        print(f"  table written to {out / 'capacity_plan.csv'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
