"""Priorities at a multi-server station with class-dependent service rates, against Ciw.

No closed form covers an M/M/2 with two priority classes of different service rates; Ciw
(G. I. Palmer, V. A. Knight, P. R. Harper, A. L. Hawa, J. Simulation 13(1):68-82, 2019), an
independent discrete-event simulator with priority classes, non-preemptive or preemptive with
"resume", simulates the same queue. Each class's mean response time must agree within 3
combined half-widths (Ciw's interval from its own replications).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import t as student_t

import qnmodel as qn

pytestmark = pytest.mark.peer

LAM = {"hi": 30.0, "lo": 20.0}
S = {"hi": 0.02, "lo": 0.04}  # per-server load (0.6 + 0.8) / 2 = 0.7
M = 2
WARMUP, T, REPS = 20.0, 250.0, 4


def ciw_means(preemptive: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per class: mean response time over Ciw replications and its 95 % half-width."""
    ciw = pytest.importorskip("ciw", reason="Ciw is not installed (pip install ciw)")
    prio = {"hi": 0, "lo": 1}
    net = ciw.create_network(
        arrival_distributions={c: [ciw.dists.Exponential(rate=LAM[c])] for c in LAM},
        service_distributions={c: [ciw.dists.Exponential(rate=1 / S[c])] for c in S},
        routing={c: [[0.0]] for c in LAM},
        number_of_servers=[M],
        priority_classes=(prio, ["resume"]) if preemptive else prio,
    )
    obs = []
    for seed in range(REPS):
        ciw.seed(seed)
        sim = ciw.Simulation(net)
        sim.simulate_until_max_time(WARMUP + T)
        recs = [r for r in sim.get_all_records() if r.arrival_date > WARMUP]
        rows = []
        for c in ("hi", "lo"):
            # a preempted customer leaves one record per service piece: its response time runs
            # from its first arrival to its last exit
            first, last = {}, {}
            for r in recs:
                if r.customer_class == c:
                    first[r.id_number] = min(first.get(r.id_number, np.inf), r.arrival_date)
                    last[r.id_number] = max(last.get(r.id_number, -np.inf), r.exit_date)
            rows.append(np.mean([last[i] - first[i] for i in first]))
        obs.append(rows)
    obs = np.array(obs)
    hw = student_t.ppf(0.975, REPS - 1) * obs.std(axis=0, ddof=1) / np.sqrt(REPS)
    return obs.mean(axis=0), hw


@pytest.mark.parametrize("disc", ["HOL", "PRIO-PR"])
def test_two_servers_two_priority_classes_agree_with_ciw(disc):
    classes = [qn.OpenClass(c, arrival_rate=LAM[c], priority=i) for i, c in enumerate(LAM)]
    net = qn.Network([qn.Station("pool", S, servers=M, discipline=disc)], classes=classes)
    r = qn.simulate(net, seed=13, replications=10, run_length=1000.0)
    mean_c, hw_c = ciw_means(disc == "PRIO-PR")
    both = np.sqrt(r.response_time_halfwidth**2 + hw_c**2)
    print(f"{disc}: qnmodel {r.response_time} +- {r.response_time_halfwidth}, "
          f"Ciw {mean_c} +- {hw_c}")  # fmt: skip
    assert np.all(np.abs(r.response_time - mean_c) <= 3 * both), (r.response_time, mean_c, both)
    assert np.all(both / mean_c < 0.15)  # the check means something
    if disc == "PRIO-PR":  # the high class sees an M/M/2 of its own: Erlang C
        a = LAM["hi"] * S["hi"]
        top = a**2 / 2 / (1 - a / 2)
        pw = top / (1 + a + top)
        exact = pw / (2 / S["hi"] - LAM["hi"]) + S["hi"]
        assert abs(r.response_time[0] - exact) <= 3 * r.response_time_halfwidth[0] + 2e-3 * exact
