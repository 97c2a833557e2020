"""Error of ``fork_join`` with non-exponential members against ``qnmodel.simulate``.

Prints a Markdown table: random fork-joins of k = 2..8 identical single-server members of
mean service d = 5 ms and SCV drawn from {0, U(0, 1), U(1, 10)} (the simulator draws a
constant for SCV 0 and a lognormal law otherwise), closed (N = 1..6 jobs, think time chosen
for a member utilisation of about 0.1..0.9) or open (member utilisation rho = 0.1..0.9);
the relative error of the mean response time against the simulator (10 replications,
seed fixed per case), with the simulator's half-width. Then the median and worst error,
and the same for the exponential formulas (the old answer, which ignored the SCV).

Run: ``.venv/bin/python tests/accuracy/forkjoin_scv.py [cases]`` (default 30);
``... forkjoin_scv.py --stripe``: the recorded qnbench stripe study with constant members.
"""

from __future__ import annotations

import sys

import numpy as np

import qnmodel as qn

D = 0.005


def case(rng: np.random.Generator):
    k = int(rng.integers(2, 9))
    c2 = float(rng.choice([0.0, rng.uniform(0.0, 1.0), rng.uniform(1.0, 10.0)]))
    u = float(rng.uniform(0.1, 0.9))
    closed = bool(rng.integers(0, 2))
    members = [qn.Station(f"m{i}", D, scv=c2) for i in range(k)]
    exp_members = [qn.Station(f"m{i}", D) for i in range(k)]
    if closed:
        N = int(rng.integers(1, 7))
        # X ~ u / D; N = X (Z + R), R ~ D (H_k + N u): Z from the target utilisation
        R0 = D * (sum(1.0 / i for i in range(1, k + 1)) + N * u)
        Z = max(N * D / u - R0, 0.0)
        load = {"N": N}
        desc = f"closed k={k} scv={c2:.2f} N={N} Z={Z * 1e3:.1f}ms"
    else:
        Z = 0.0
        load = {"arrival_rate": u / D}
        desc = f"open k={k} scv={c2:.2f} rho={u:.2f}"
    net = qn.Network([qn.ForkJoin("fj", members)], think_time=Z)
    old = qn.Network([qn.ForkJoin("fj", exp_members)], think_time=Z)
    return net, old, load, desc


def solve(net, load):
    if "N" in load:
        return float(qn.fork_join(net, load["N"]).response_time[-1])
    return float(qn.fork_join(net, arrival_rate=load["arrival_rate"]).response_time[0])


def main(cases: int = 30) -> None:
    rng = np.random.default_rng(2727)
    print("| case | error % (± sim. half-width) | exponential formula error % |")
    print("|---|--:|--:|")
    errs, olds = [], []
    for i in range(cases):
        net, old, load, desc = case(rng)
        sim = qn.simulate(
            net, N=load.get("N"), arrival_rate=load.get("arrival_rate"), seed=500 + i,
            replications=10, run_length=200.0, warmup=5.0,
        )  # fmt: skip
        s = float(sim.response_time[0])
        hw = float(sim.response_time_halfwidth[0]) / s * 100.0
        e = (solve(net, load) / s - 1.0) * 100.0
        o = (solve(old, load) / s - 1.0) * 100.0
        errs.append(e)
        olds.append(o)
        print(f"| {desc} | {e:+.1f} (±{hw:.1f}) | {o:+.1f} |")
    a, b = np.abs(errs), np.abs(olds)
    print(
        f"\n|error| over {a.size} cases: median {np.median(a):.1f} %, worst {a.max():.1f} % "
        f"(exponential formulas: median {np.median(b):.1f} %, worst {b.max():.1f} %)"
    )


if __name__ == "__main__" and "--stripe" not in sys.argv:
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)


def stripe_constant() -> None:
    """The recorded qnbench stripe study (data/validation/stripe.json): emulated members of
    constant service, the fork-join model with ``scv=0`` members against the measured mean
    response time (N = 1..32, no think time), and the exponential formulas (the old answer)."""
    from qnmodel.lab.validation import stripe

    frame, _doc = stripe.load("data/validation/stripe.json")
    emu = frame[(frame.member == "emu") & (frame.dist == "const")]
    print("\n| recorded case (constant members) | MAPE, SCV 0 members | MAPE, exponential |")
    print("|---|--:|--:|")
    alln, allo = [], []
    for case_name, g in emu.groupby("case"):
        wl, w, d = g.workload.iloc[0], int(g.width.iloc[0]), float(g.service_s.iloc[0])
        net = stripe.network(wl, w, d)
        el = net.stations[0]
        br = [qn.Station(b.name, b.demand, scv=0.0) for b in el.branches]
        const = qn.Network([qn.ForkJoin(el.name, br, k=el.k, fanout=el.fanout)])
        nmax = int(g.n.max())
        old, new = qn.fork_join(net, nmax).response_time, qn.fork_join(const, nmax).response_time
        n = g.n.to_numpy(dtype=int) - 1
        meas = g.r_measured.to_numpy(dtype=float)
        en, eo = np.abs(new[n] / meas - 1) * 100, np.abs(old[n] / meas - 1) * 100
        alln += list(en)
        allo += list(eo)
        print(f"| {case_name} | {en.mean():.1f} % | {eo.mean():.1f} % |")
    print(f"| all | {np.mean(alln):.1f} % | {np.mean(allo):.1f} % |")


if __name__ == "__main__" and "--stripe" in sys.argv:
    stripe_constant()
