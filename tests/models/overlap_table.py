"""Print the measured error table of the overlapped NetworkedRAID (docs/explanation/overlap.md).

Run ``.venv/bin/python tests/models/overlap_table.py`` from the worktree root after
``make install`` (57 s on two cores for every group; the exponential one-phase grid, ``exp``;
``const`` the constant-disk cases, ``rmw`` the RAID5 read-modify-writes, ``all`` every one:
``.venv/bin/python tests/models/overlap_table.py const rmw``). Model:
:mod:`qnmodel.models.storage_overlap` (closed: the overlapped fork-join MVA; open:
Nelson-Tantawi members and a processor-sharing link, exponential one-phase cases only);
reference: the event simulation qnmodel.simulate_storage (3 runs of 3000 requests after
warm-up per point, 95 % half-widths). A chunk's master-link time c = 0.5 ms, master CPU
0.05 ms per request, disks of mean d = ratio x c, exponential (SCV 1) or constant (SCV 0).
"""

from __future__ import annotations

import sys

import qnmodel as qn
from qnmodel.models.storage_forkjoin import fork_join_overlap
from qnmodel.models.storage_overlap import OverlapParts, open_overlap, overlap_bounds

C, CHUNK, CPU = 0.5e-3, 65536.0, 0.05e-3
RATIOS = (0.25, 0.5, 1.0, 2.0, 4.0)
#: (RAID level, op, members K, chunks k, disk law); "rmw": a one-chunk RAID5 write (data and
#: parity read back, then written: k = 2 chunks over K members, two phases)
GROUPS = {
    "exp": (("raid0", "read", 3, 3, "exp"), ("raid0", "write", 3, 3, "exp"),
            ("raid5", "read", 4, 3, "exp")),
    "const": (("raid0", "read", 3, 3, "const"), ("raid0", "write", 3, 3, "const"),
              ("raid5", "read", 4, 3, "const")),
    "rmw": (("raid5", "rmw", 4, 2, "exp"), ("raid5", "rmw", 4, 2, "const")),
}  # fmt: skip
POPS = (1, 2, 4, 16)
LOADS = (0.3, 0.6, 0.8)


def case_parts(level: str, op: str, K: int, k: int, law: str, d: float) -> OverlapParts:
    """The model's structure of one table case (chunk time C, master CPU CPU)."""
    scv = 0.0 if law == "const" else 1.0
    if op == "rmw":
        st = (("cpu_master", CPU), ("link_in", k * C), ("link_out", k * C))
        return OverlapParts(st, "link_in", d, k, K, "read_modify_write", scv)
    link = "link_in" if op == "read" else "link_out"
    return OverlapParts((("cpu_master", CPU), (link, k * C)), link, d, k, K, op, scv)


def case_spec(level: str, op: str, K: int, k: int, law: str, d: float) -> dict:
    """The simulated system of one table case: keywords of :func:`qnmodel.simulate_storage`."""
    base = dict(members=K, disk_time=d, chunk_size=CHUNK, link_rate=CHUNK / C, serial=[CPU],
                raid=level, disk_scv=0.0 if law == "const" else 1.0)  # fmt: skip
    if op == "rmw":
        return dict(base, op="write", chunks=k - 1)
    return dict(base, op=op)


def simulate_storage(spec: dict, **kw) -> dict:
    """One point of :func:`qnmodel.simulate_storage`: its R, X and 95 % half-widths."""
    s = qn.simulate_storage(**spec, **kw)
    return dict(R=float(s.response_time[0]), R_hw=float(s.response_time_halfwidth[0]),
                X=float(s.throughput[0]), X_hw=float(s.throughput_halfwidth[0]))  # fmt: skip


def _rows(task: tuple) -> list[tuple]:
    """The table rows of one (case, ratio): (name, kind, text, |error of R|, inside)."""
    (level, op, K, k, law), ratio, jobs, reps = task
    d = ratio * C
    p = case_parts(level, op, K, k, law, d)
    spec = case_spec(level, op, K, k, law, d)
    fj = fork_join_overlap(list(p.stations), d, p.link, k, p.phases[0][1], max(POPS), 0.0,
                           members=K, scv=p.scv, phases=p.phases)  # fmt: skip
    b = overlap_bounds(p, max(POPS))
    name = f"{level} {op}, {k} of {K}, {law}"
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
    if law != "exp" or op == "rmw":  # the open model: exponential members, one phase
        return out
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


def main(groups=("exp",), jobs: int = 3000, reps: int = 3, processes: int = 2) -> None:
    from multiprocessing import Pool

    cases = [c for g in (GROUPS if "all" in groups else groups) for c in GROUPS[g]]
    tasks = [(case, ratio, jobs, reps) for case in cases for ratio in RATIOS]
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
    main(tuple(sys.argv[1:]) or ("exp",))
