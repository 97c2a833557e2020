"""Open networks, general service and load-dependent stations against closed forms.

References: L. Kleinrock, *Queueing Systems*, vol. 1, Wiley 1975: M/M/1 response time
R = 1/(mu - lambda) and its distribution, exponential of that mean (eq. 3.27); M/M/m with the
Erlang-C probability of waiting (eq. 3.42); the Pollaczek-Khinchine mean for M/G/1,
W = lambda E[S^2] / (2 (1 - rho)) (eq. 5.76). Burke's theorem (P. J. Burke, Oper. Res.
4(6):699-704, 1956) and Reich's result make the response time of an open tandem of M/M/1
stations a sum of independent exponentials.

The fixed seeds make every check deterministic; the margins are a few half-widths.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.simulation import Deterministic, Empirical, Lognormal
from tests._tol import closed_form


def erlang_c(m: int, a: float) -> float:
    """Probability that an arrival waits in M/M/m with offered load a = lambda / mu."""
    rho = a / m
    top = a**m / math.factorial(m) / (1 - rho)
    return top / (sum(a**j / math.factorial(j) for j in range(m)) + top)


def test_mm1_mean_and_quantiles():
    lam, S = 50.0, 0.01  # rho = 0.5, R = 1 / (mu - lambda) = 0.02 s
    net = qn.Network.from_demands([S])
    r = qn.simulate(net, arrival_rate=lam, seed=11, replications=10, run_length=2000.0)
    exact_r = 1 / (1 / S - lam)
    assert abs(r.response_time[0] - exact_r) <= 3 * r.response_time_halfwidth[0]
    assert r.response_time_halfwidth[0] / exact_r < 0.01
    assert abs(r.throughput[0] - lam) <= 3 * r.throughput_halfwidth[0]
    assert abs(r.utilization[0, 0] - lam * S) <= 3 * r.utilization_halfwidth[0, 0]
    for q in (0.5, 0.9, 0.95, 0.99):
        exact_q = -math.log(1 - q) / (1 / S - lam)
        lo, hi = r.response_time_quantile_ci(q)
        h = (hi - lo) / 2
        assert abs(r.response_time_quantile(q) - exact_q) <= 3 * h, q
        assert h / exact_q < 0.03, q


@pytest.mark.parametrize("m", [2, 4])
def test_mmm_mean_response_time_erlang_c(m):
    S, rho = 0.02, 0.7
    lam = rho * m / S
    net = qn.Network((qn.Station("pool", S, servers=m),))
    r = qn.simulate(net, arrival_rate=lam, seed=m, replications=10, run_length=3000.0)
    exact = erlang_c(m, lam * S) / (m / S - lam) + S
    assert abs(r.response_time[0] - exact) <= 3 * r.response_time_halfwidth[0]
    assert r.response_time_halfwidth[0] / exact < 0.012


def test_load_dependent_station_as_two_servers():
    # rate multipliers (1, 2): service rate min(j, 2) / S, the M/M/2 birth-death process
    S, lam = 0.02, 70.0
    net = qn.Network((qn.Station("ld", S, rate_multipliers=(1.0, 2.0)),))
    r = qn.simulate(net, arrival_rate=lam, seed=5, replications=10, run_length=1000.0)
    exact = erlang_c(2, lam * S) / (2 / S - lam) + S
    assert abs(r.response_time[0] - exact) <= 3 * r.response_time_halfwidth[0]
    assert r.response_time_halfwidth[0] / exact < 0.015


def test_load_dependent_closed_matches_mva_load_dependent():
    # a closed network whose load-dependent station speeds up as (1, 1.5, 2.5, then 2.5 on)
    S, Z, N = 0.03, 0.05, 6
    net = qn.Network(
        (qn.Station("q", 0.01), qn.Station("ld", S, rate_multipliers=(1.0, 1.5, 2.5))),
        think_time=Z,
    )
    r = qn.simulate(net, N, seed=9, replications=10, run_length=300.0)
    # exact: the birth-death chain of the load-dependent station against the queue and think
    # time, solved by brute force over (jobs at q, jobs at ld) with exponential think times
    X = _exact_throughput(S, Z, N, (1.0, 1.5, 2.5))
    assert abs(r.throughput[0] - X) <= 3 * r.throughput_halfwidth[0]
    assert r.throughput_halfwidth[0] / X < 0.01


def _exact_throughput(S_ld, Z, N, rates, S_q=0.01):
    """Throughput of think -> q (1 server) -> ld by the global balance equations."""
    states = [(a, b) for a in range(N + 1) for b in range(N + 1 - a)]
    idx = {s: i for i, s in enumerate(states)}
    Qm = np.zeros((len(states), len(states)))
    for (a, b), i in idx.items():
        think = N - a - b
        moves = []
        if think:
            moves.append(((a + 1, b), think / Z))
        if a:
            moves.append(((a - 1, b + 1), 1 / S_q))
        if b:
            moves.append(((a, b - 1), rates[min(b, len(rates)) - 1] / S_ld))
        for s, rate in moves:
            Qm[i, idx[s]] += rate
            Qm[i, i] -= rate
    A = np.vstack([Qm.T, np.ones(len(states))])
    p = np.linalg.lstsq(A, np.r_[np.zeros(len(states)), 1.0], rcond=None)[0]
    return sum(p[idx[(a, b)]] * rates[min(b, len(rates)) - 1] / S_ld for a, b in states if b)


def _pk_response(lam, S, es2):
    return lam * es2 / (2 * (1 - lam * S)) + S


@pytest.mark.parametrize(
    ("service", "cv2"),
    [(Deterministic(), 0.0), (Lognormal(2.0), 4.0), ("exponential", 1.0)],
    ids=["M/D/1", "M/LN/1", "M/M/1"],
)
def test_mg1_pollaczek_khinchine(service, cv2):
    lam, S = 60.0, 0.01
    net = qn.Network.from_demands([S])
    r = qn.simulate(
        net, arrival_rate=lam, service=service, seed=21, replications=10, run_length=2000.0
    )
    exact = _pk_response(lam, S, S * S * (1 + cv2))
    assert abs(r.response_time[0] - exact) <= 3 * r.response_time_halfwidth[0]
    assert r.response_time_halfwidth[0] / exact < 0.03


def qnbench_doc(rows):
    """A minimal qnbench document (schema version 1) with one result and a histogram."""
    return {
        "schema": "qnbench", "schema_version": 1, "tool_version": "1.0",
        "timestamp": "2026-01-01T00:00:00Z", "complete": True,
        "host": {"hostname": "h", "sysname": "Linux", "release": "6", "machine": "x86_64",
                 "cpu_model": "cpu", "cpus": 2, "mem_total_bytes": 1},
        "engine": "emu", "options": {}, "errors": [],
        "results": [{
            "point": 0, "jobs": 1, "op": "read", "think_s": 0.0, "complete": True, "ops": 10,
            "bytes": 0, "elapsed_s": 1.0, "warmup_s": 0.0, "throughput_ops_s": 10.0,
            "throughput_B_s": 0.0, "think_s_mean": 0.0,
            "latency_s": {"count": 10, "mean": 0.01, "min": 0.0, "p50": 0.01, "p90": 0.01,
                          "p99": 0.01, "max": 0.02, "histogram": rows},
            "cpu": {"user_s": 0.0, "sys_s": 0.0}, "samples": [], "engine_stats": {},
        }],
    }  # fmt: skip


def test_empirical_histogram_pollaczek_khinchine():
    # two buckets: [1, 2) ms with 3 counts and [4, 8) ms with 1; sampled uniformly inside a
    # bucket, then rescaled to the demand
    rows = [[0.001, 0.002, 3], [0.004, 0.008, 1]]
    emp = Empirical.from_qnbench(qnbench_doc(rows))
    w = np.array([0.75, 0.25])
    lo, hi = np.array([0.001, 0.004]), np.array([0.002, 0.008])
    mean = float(np.sum(w * (lo + hi) / 2))
    assert emp.mean == pytest.approx(mean, rel=closed_form(8))  # a 2-term mixture of midpoints
    m2 = float(np.sum(w * (lo**2 + lo * hi + hi**2) / 3))  # E[U^2] of a uniform on [lo, hi)
    lam, S = 50.0, 0.01
    es2 = m2 * (S / mean) ** 2
    net = qn.Network.from_demands([S], names=["disk"])
    r = qn.simulate(
        net, arrival_rate=lam, service={"disk": emp}, seed=4, replications=10, run_length=2000.0
    )
    exact = _pk_response(lam, S, es2)
    assert abs(r.response_time[0] - exact) <= 3 * r.response_time_halfwidth[0]
    assert r.response_time_halfwidth[0] / exact < 0.03


def test_open_tandem_quantile_is_a_sum_of_exponentials():
    # two M/M/1 stations with rates 1/S - lambda = 60 and 40: the response time is the sum of
    # Exp(60) and Exp(40) (hypoexponential), P(R > t) = (60 e^{-40t} - 40 e^{-60t}) / 20
    lam = 40.0
    net = qn.Network.from_demands([0.01, 1 / 80])
    r = qn.simulate(net, arrival_rate=lam, seed=8, replications=10, run_length=2000.0)
    a, b = 1 / 0.01 - lam, 80 - lam

    def tail(t):
        return (a * math.exp(-b * t) - b * math.exp(-a * t)) / (a - b)

    for q in (0.5, 0.95, 0.99):
        lo, hi = 0.0, 1.0
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if tail(mid) > 1 - q else (lo, mid)
        exact = (lo + hi) / 2
        v = r.response_time_quantile(q)
        h = r.response_time_quantiles_halfwidth[0, list(r.quantiles).index(q)]
        assert abs(v - exact) <= 3 * h, (q, v, exact, h)
    assert abs(r.response_time[0] - (1 / a + 1 / b)) <= 3 * r.response_time_halfwidth[0]


def test_unstable_open_class_is_refused():
    net = qn.Network.from_demands([0.01, 0.03], names=["a", "b"])
    with pytest.raises(qn.UnstableModelError, match="'b'.*utilisation 1.2"):
        qn.simulate(net, arrival_rate=40.0, seed=1)
