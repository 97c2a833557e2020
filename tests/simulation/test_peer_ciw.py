"""Cross-check against Ciw (Palmer, Knight, Harper, Hawa, J. Simulation 13(1):68-82, 2019), an
independent discrete-event simulator in Python, on the same open network.

The network: Poisson arrivals at lambda = 40/s into a tandem of an M/M/1 (S = 10 ms), an M/M/2
(S = 33.3 ms per server) and an M/M/1 (S = 12.5 ms); a Jackson network, so the mean response time
is also known exactly (sum of the M/M/1 and Erlang-C M/M/2 response times). Both simulators
must agree with each other (difference within 3 combined half-widths) and with the exact mean,
and their p50/p90 response-time quantiles must agree.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import t as student_t

import qnmodel as qn

pytestmark = pytest.mark.peer

LAM = 40.0
S = (0.01, 1 / 30, 0.0125)
M = (1, 2, 1)
WARMUP, T, REPS = 20.0, 120.0, 4


def exact_mean() -> float:
    total = 0.0
    for s, m in zip(S, M, strict=True):
        a = LAM * s
        rho = a / m
        top = a**m / math.factorial(m) / (1 - rho)
        pw = top / (sum(a**j / math.factorial(j) for j in range(m)) + top)
        total += pw / (m / s - LAM) + s
    return total


def ciw_responses(seed: int) -> np.ndarray:
    ciw = pytest.importorskip("ciw", reason="Ciw is not installed (pip install ciw)")
    net = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(rate=LAM), None, None],
        service_distributions=[ciw.dists.Exponential(rate=1 / s) for s in S],
        routing=[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]],
        number_of_servers=list(M),
    )
    ciw.seed(seed)
    sim = ciw.Simulation(net)
    sim.simulate_until_max_time(WARMUP + T)
    first, last = {}, {}
    for r in sim.get_all_records():
        if r.node == 1:
            first[r.id_number] = r.arrival_date
        if r.node == 3:
            last[r.id_number] = r.exit_date
    return np.array(
        [last[i] - first[i] for i in last if i in first and first[i] >= WARMUP], dtype=float
    )


def test_open_tandem_agrees_with_ciw():
    runs = [ciw_responses(seed) for seed in range(REPS)]
    means = np.array([r.mean() for r in runs])
    tq = student_t.ppf(0.975, REPS - 1)
    ciw_mean, ciw_hw = means.mean(), tq * means.std(ddof=1) / math.sqrt(REPS)
    ciw_q = {q: np.mean([np.quantile(r, q) for r in runs]) for q in (0.5, 0.9)}

    net = qn.Network.from_demands(list(S), servers=list(M))
    ours = qn.simulate(net, arrival_rate=LAM, seed=1, replications=10, run_length=T, warmup=WARMUP)
    exact = exact_mean()
    both = math.hypot(ours.response_time_halfwidth[0], ciw_hw)
    assert abs(ours.response_time[0] - ciw_mean) <= 3 * both
    assert abs(ours.response_time[0] - exact) <= 3 * ours.response_time_halfwidth[0]
    assert abs(ciw_mean - exact) <= 3 * ciw_hw
    assert both / exact < 0.05  # the comparison is tight enough to mean something
    for q, v in ciw_q.items():
        assert ours.response_time_quantile(q) == pytest.approx(v, rel=0.05), q
