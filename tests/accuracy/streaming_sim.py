"""Error of ``streaming_mva`` against the event simulation of streaming stages.

Prints a Markdown table: NFS-like read misses (server CPU serial; the disk's read-ahead, the
network and the client link streaming; think time 2 ms) in three balances of the stages,
R(n) of :func:`qnmodel.models.streaming.streaming_mva` against
:func:`qnmodel.simulate_streaming` (3 runs of 3000 cycles per point, seed n), n = 1..16.
Pasted into docs/explanation/overlap.md.

Run: ``.venv/bin/python tests/accuracy/streaming_sim.py`` (about 30 s).
"""

from __future__ import annotations

import qnmodel as qn
from qnmodel.models.streaming import streaming_mva

#: name: (demands cpu, disk, net, client in ms; streamed disk, net, client in ms)
CASES = {
    "disk slowest": ((0.3, 4.0, 3.0, 3.2), (4.0, 2.0, 3.2)),
    "balanced": ((0.3, 3.0, 3.0, 3.0), (3.0, 3.0, 3.0)),
    "network slowest": ((0.3, 1.5, 4.0, 3.0), (1.5, 4.0, 3.0)),
}
POPS = (1, 2, 4, 8, 16)


def main() -> None:
    print("| case | n | R sim [ms] | R model [ms] | error R | X sim [1/s] | X model |")
    print("|---|---|---|---|---|---|---|")
    worst: dict = {}
    for name, (d, g) in CASES.items():
        net = qn.Network.from_demands(
            [1e-3 * v for v in d], names=["cpu", "disk", "net", "client"], think_time=2e-3
        )
        streamed = dict(zip(("disk", "net", "client"), (1e-3 * v for v in g), strict=True))
        m = streaming_mva(net, streamed, max(POPS))
        for n in POPS:
            s = qn.simulate_streaming(net, streamed, n, jobs=3000, reps=3, seed=n)
            r, x = m.response_time[n - 1], m.throughput[n - 1]
            err = r / s.response_time[0] - 1
            worst[name] = max(worst.get(name, 0.0), abs(err))
            print(f"| {name} | {n} | {1e3 * s.response_time[0]:.3f} ± "
                  f"{1e3 * s.response_time_halfwidth[0]:.3f} | {1e3 * r:.3f} | "
                  f"{100 * err:+.1f} % | {s.throughput[0]:.1f} | {x:.1f} |")  # fmt: skip
    print()
    for name, e in worst.items():
        print(f"worst |error of R|, {name}: {100 * e:.1f} %")


if __name__ == "__main__":
    main()
