"""Finite capacities: open arrivals lost at a full station, closed jobs blocked after service.

* One open station: the exact M/M/1/K and M/M/m/K queues (:func:`qnmodel.queue_mm1k`,
  :func:`qnmodel.queue_mmmk`; L. Kleinrock, *Queueing Systems*, vol. 1, Wiley 1975,
  sec. 3.6-3.7): loss probability, carried throughput, mean number present; the loss system
  M/G/m/m for a non-exponential law (Erlang's loss formula is insensitive).
* A closed cyclic network with blocking after service against the exact Markov chain of
  ``tests/solvers/_blocking_ctmc.py`` (I. F. Akyildiz, IEEE TSE 14(4):418-428, 1988): a job
  finishing at a station whose successor is full keeps its server until room appears.
* Terminals in front of a station of capacity c: a job whose think time ends while the
  station is full waits at its terminal, and that wait is part of its response time; exact by
  the chain over (jobs at the station, jobs waiting at terminals).

Tolerances: 3 half-widths of the 95 % interval plus 0.2 %, with intervals that are narrow.
"""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.simulation import Lognormal
from tests.solvers._blocking_ctmc import solve_blocking_ctmc


def near(est, hw, exact, *, slack=2e-3, width=0.04):
    est, hw, exact = (np.asarray(a, dtype=float) for a in (est, hw, exact))
    assert np.all(np.abs(est - exact) <= 3 * hw + slack * np.abs(exact)), (est, hw, exact)
    assert np.all(hw <= width * np.abs(exact) + 1e-12), (hw, exact)


@pytest.mark.parametrize(
    ("lam", "S", "m", "K"),
    [(90.0, 0.01, 1, 5), (150.0, 0.01, 1, 3), (150.0, 0.01, 2, 4), (300.0, 0.01, 3, 6)],
)
def test_open_station_matches_mmmk(lam, S, m, K):
    exact = qn.queue_mmmk(lam, S, m, K) if m > 1 else qn.queue_mm1k(lam, S, K)
    net = qn.Network([qn.Station("q", S, servers=m, capacity=K)])
    r = qn.simulate(net, arrival_rate=lam, seed=2, replications=10, run_length=300.0)
    near(r.loss_probability[0], r.loss_probability_halfwidth[0], exact.loss_probability, width=0.1)
    near(r.throughput[0], r.throughput_halfwidth[0], exact.throughput)
    near(r.queue_length[0, 0], r.queue_length_halfwidth[0, 0], exact.queue_length)
    near(r.response_time[0], r.response_time_halfwidth[0], exact.response_time)
    # losses per second at the station = offered - carried
    near(r.loss_rate[0, 0], r.loss_rate_halfwidth[0, 0], lam * exact.loss_probability, width=0.1)


def test_loss_system_is_insensitive():
    lam, S, m = 200.0, 0.01, 3  # M/G/3/3: Erlang's loss formula for any law
    exact = qn.queue_mmmk(lam, S, m, m)
    net = qn.Network([qn.Station("trunks", S, servers=m, capacity=m, service=Lognormal(2.0))])
    r = qn.simulate(net, arrival_rate=lam, seed=6, replications=10, run_length=300.0)
    near(r.loss_probability[0], r.loss_probability_halfwidth[0], exact.loss_probability)
    near(r.queue_length[0, 0], r.queue_length_halfwidth[0, 0], exact.queue_length)


def test_overloaded_finite_station_is_not_refused():
    # offered load 3 >> 1: no steady state without the limit, a loss system with it
    lam, S, K = 300.0, 0.01, 4
    exact = qn.queue_mm1k(lam, S, K)
    net = qn.Network([qn.Station("q", S, capacity=K)])
    r = qn.simulate(net, arrival_rate=lam, seed=3, replications=10, run_length=100.0)
    near(r.throughput[0], r.throughput_halfwidth[0], exact.throughput)
    near(r.loss_probability[0], r.loss_probability_halfwidth[0], exact.loss_probability)


def test_loss_downstream_is_counted_where_it_happens():
    # tandem: unlimited M/M/1 (Burke: Poisson output) into an M/M/1/K
    lam, S1, S2, K = 60.0, 0.01, 0.012, 3
    net = qn.Network([qn.Station("a", S1), qn.Station("b", S2, capacity=K)])
    r = qn.simulate(net, arrival_rate=lam, seed=4, replications=10, run_length=300.0)
    exact = qn.queue_mm1k(lam, S2, K)
    assert r.loss_rate[0, 0] == 0.0
    near(r.loss_rate[0, 1], r.loss_rate_halfwidth[0, 1], lam * exact.loss_probability, width=0.1)
    near(r.loss_probability[0], r.loss_probability_halfwidth[0], exact.loss_probability, width=0.1)
    near(r.throughput[0], r.throughput_halfwidth[0], exact.throughput)


@pytest.mark.parametrize(
    ("N", "S", "M"),
    [(4, (0.01, 0.02, 0.015), (2, 2, 3)), (5, (0.01, 0.01, 0.02), (2, 3, 2))],
)
def test_closed_cyclic_blocking_matches_the_markov_chain(N, S, M):
    K = len(S)
    P = [[1.0 if j == (i + 1) % K else 0.0 for j in range(K)] for i in range(K)]
    exact = solve_blocking_ctmc(N, list(S), list(M), P)
    net = qn.Network([qn.Station(f"s{k}", S[k], capacity=M[k]) for k in range(K)])
    r = qn.simulate(net, N, seed=4, replications=10, run_length=200.0, warmup=2.0)
    near(r.throughput[0], r.throughput_halfwidth[0], exact.X0)
    near(r.queue_length[0], r.queue_length_halfwidth[0], exact.Q)  # blocked jobs included
    near(r.utilization[0], r.utilization_halfwidth[0], exact.U)  # serving, not blocked
    assert r.loss_probability[0] != r.loss_probability[0]  # NaN: closed jobs are never lost
    assert not np.any(r.loss_rate)


def _terminals_with_capacity(N, Z, S, c):
    """Throughput of N terminals (think Z) at one exponential station (mean S) of capacity c:
    state (n at the station, w waiting at terminals for room; w > 0 only when n = c)."""
    states = [(n, 0) for n in range(c + 1)] + [(c, w) for w in range(1, N - c + 1)]
    idx = {s: i for i, s in enumerate(states)}
    Q = np.zeros((len(states), len(states)))
    for (n, w), i in idx.items():
        moves = []
        thinking = N - n - w
        if thinking:
            moves.append(((n + 1, w) if n < c else (n, w + 1), thinking / Z))
        if n:
            moves.append(((n, w - 1) if w else (n - 1, w), 1 / S))
        for s, rate in moves:
            Q[i, idx[s]] += rate
            Q[i, i] -= rate
    A = np.vstack([Q.T, np.ones(len(states))])
    p = np.linalg.lstsq(A, np.r_[np.zeros(len(states)), 1.0], rcond=None)[0]
    return sum(p[i] for (n, _), i in idx.items() if n) / S


def test_terminals_wait_for_room_and_the_wait_is_response_time():
    N, Z, S, c = 6, 0.03, 0.01, 2
    net = qn.Network([qn.Station("q", S, capacity=c)], think_time=Z)
    X = _terminals_with_capacity(N, Z, S, c)
    r = qn.simulate(net, N, seed=12, replications=10, run_length=200.0, warmup=2.0)
    near(r.throughput[0], r.throughput_halfwidth[0], X)
    near(r.response_time[0], r.response_time_halfwidth[0], N / X - Z)  # R = N / X - Z
    assert r.queue_length[0, 0] <= c
    # the terminal wait is outside the station: its residence time is shorter than R
    assert r.residence_time[0, 0] < r.response_time[0] - 10 * r.response_time_halfwidth[0]


def test_no_capacity_no_loss_fields():
    r = qn.simulate(qn.Network.from_demands([0.01]), arrival_rate=30.0, seed=1, run_length=5.0)
    assert r.loss_probability is None and r.loss_rate is None
    assert "loss" not in repr(r)


def test_loss_in_result_frames_and_repr():
    net = qn.Network([qn.Station("q", 0.01, capacity=2)])
    r = qn.simulate(net, arrival_rate=80.0, seed=1, run_length=20.0)
    assert "loss=" in repr(r)
    assert {"loss_probability", "loss_probability_halfwidth"} <= set(r.to_frame().columns)
    assert {"loss_rate", "loss_rate_halfwidth"} <= set(r.to_frame("station").columns)


def test_deadlock_is_reported():
    # 3 jobs, capacities 2 and 1: both stations full, each job waiting for the other's place
    net = qn.Network([qn.Station("a", 0.02, capacity=2), qn.Station("b", 0.01, capacity=1)])
    with pytest.raises(qn.InvalidModelError, match="the network deadlocked: every closed job"):
        qn.simulate(net, 3, seed=1, run_length=50.0)
