"""Print the measured error table of the overlapped NetworkedRAID (docs/explanation/overlap.md).

Run ``.venv/bin/python tests/models/overlap_table.py`` from the worktree root after
``make install`` (about 10 minutes on two cores). Model: :mod:`qnmodel.models.storage_overlap`
(closed: the overlapped fork-join MVA; open: Nelson-Tantawi members and a processor-sharing
link); reference: the event simulation of tests/models/storage_sim.py (3 runs of 3000
requests after warm-up per point, 95 % half-widths). A chunk's master-link time c = 0.5 ms,
master CPU 0.05 ms per request, exponential disks of mean d = ratio x c.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from storage_sim import Spec, simulate_storage  # noqa: E402

from qnmodel.models.storage_forkjoin import fork_join_overlap  # noqa: E402
from qnmodel.models.storage_overlap import OverlapParts, open_overlap, overlap_bounds  # noqa: E402

C, CHUNK, CPU = 0.5e-3, 65536.0, 0.05e-3
RATIOS = (0.25, 0.5, 1.0, 2.0, 4.0)
CASES = (("raid0", "read", 3, 3), ("raid0", "write", 3, 3), ("raid5", "read", 4, 3))
POPS = (1, 2, 4, 16)
LOADS = (0.3, 0.6, 0.8)


def _rows(task: tuple) -> list[tuple]:
    """The table rows of one (case, ratio): (name, kind, text, |error of R|, inside)."""
    (level, op, K, k), ratio, jobs, reps = task
    link = "link_in" if op == "read" else "link_out"
    d = ratio * C
    p = OverlapParts((("cpu_master", CPU), (link, k * C)), link, d, k, K, op)
    spec = Spec(K=K, d=d, chunk=CHUNK, master_rate=CHUNK / C, serial=[CPU], op=op, raid=level)
    fj = fork_join_overlap(list(p.stations), d, link, k, op, max(POPS), 0.0, members=K)
    b = overlap_bounds(p, max(POPS))
    name = f"{level} {op}, {k} of {K}"
    out = []
    for n in POPS:
        s = simulate_storage(spec, N=n, jobs=jobs, reps=reps, seed=n)
        r, x = fj.response_time[n - 1], fj.throughput[n - 1]
        er, ex = r / s["R"] - 1, x / s["X"] - 1
        ok = (b.response_time_lower[n - 1] <= s["R"] + s["R_hw"]
              and s["R"] - s["R_hw"] <= b.response_time_upper[n - 1]
              and b.throughput_lower[n - 1] <= s["X"] + s["X_hw"]
              and s["X"] - s["X_hw"] <= b.throughput_upper[n - 1])  # fmt: skip
        out.append((name, "closed", f"| {name} | {ratio:g} | N = {n} | {1e3 * s['R']:.3f} ± "
                    f"{1e3 * s['R_hw']:.3f} | {1e3 * r:.3f} | {100 * er:+.1f} % | "
                    f"{100 * ex:+.1f} % | {'yes' if ok else 'NO'} |", abs(er), ok))  # fmt: skip
    dmax = max(CPU, k * C, d * k / K)
    for load in LOADS:
        lam = load / dmax
        s = simulate_storage(spec, arrival_rate=lam, jobs=jobs, reps=reps, seed=99)
        r = open_overlap(p, lam).response_time[0]
        er = r / s["R"] - 1
        out.append((name, "open", f"| {name} | {ratio:g} | open {int(100 * load)} % | "
                    f"{1e3 * s['R']:.3f} ± {1e3 * s['R_hw']:.3f} | {1e3 * r:.3f} | "
                    f"{100 * er:+.1f} % | | |", abs(er), True))  # fmt: skip
    return out


def main(jobs: int = 3000, reps: int = 3, processes: int = 2) -> None:
    from multiprocessing import Pool

    tasks = [(case, ratio, jobs, reps) for case in CASES for ratio in RATIOS]
    with Pool(processes) as pool:
        rows = [r for rs in pool.map(_rows, tasks) for r in rs]
    print("| case | d/c | point | R sim [ms] | R model [ms] | error R | error X | in bounds |")
    print("|---|---|---|---|---|---|---|---|")
    worst: dict = {}
    for name, kind, text, err, _ok in rows:
        print(text)
        worst[name, kind] = max(worst.get((name, kind), 0.0), err)
    print()
    for (name, kind), e in worst.items():
        print(f"worst |error of R|, {name}, {kind}: {100 * e:.1f} %")
    inside = [ok for _n, kind, _t, _e, ok in rows if kind == "closed"]
    print(f"closed points inside the overlap bounds (with 95 % CIs): {sum(inside)} of "
          f"{len(inside)}")  # fmt: skip


if __name__ == "__main__":
    main()
