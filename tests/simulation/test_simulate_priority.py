"""Static priorities (HOL, PRIO-PR) against exact results.

* One open station, one server: the M/G/1 priority formulas of
  :func:`qnmodel.priority_queue` (A. Cobham, Oper. Res. 2(1):70-76, 1954; L. Kleinrock,
  *Queueing Systems*, vol. 2, Wiley 1976, sec. 3.6 non-preemptive and 3.7
  preemptive-resume), for three classes and three service laws.
* One open station, m servers, exponential service of one rate for every class: with
  preemptive resume the classes 1..k see an M/M/m queue of their own arrivals alone, so
  L_{<=k} = L_{M/M/m}(Lambda_k) and L_k = L_{<=k} - L_{<=k-1}; without preemption the wait
  of level k is C(m, a) / (m mu) / ((1 - sigma_{k-1}) (1 - sigma_k)), C Erlang's C and
  sigma_k the load of levels 1..k per server (D. Gross, C. M. Harris, *Fundamentals of
  Queueing Theory*, 3rd ed., Wiley 1998, sec. 3.4.1).
* Closed: two classes of terminals in front of one priority station, against the global
  balance equations of the Markov chain; and one class at a priority station, which is FCFS,
  against exact MVA.

Tolerances: 3 half-widths of the simulation's 95 % interval plus 0.2 % (see
``test_simulate_disciplines.py``), with intervals narrow enough to matter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.simulation import Deterministic, Lognormal


def near(est, hw, exact, *, slack=2e-3, width=0.04):
    est, hw, exact = (np.asarray(a, dtype=float) for a in (est, hw, exact))
    assert np.all(np.abs(est - exact) <= 3 * hw + slack * np.abs(exact)), (est, hw, exact)
    assert np.all(hw <= width * np.abs(exact) + 1e-12), (hw, exact)


LAM, S, PRIO = (60.0, 40.0, 30.0), (0.004, 0.006, 0.008), (1, 0, 2)  # rho = 0.24 + 0.24 + 0.24


def _open_station(disc, law, servers=1):
    classes = [qn.OpenClass(f"c{i}", arrival_rate=LAM[i], priority=PRIO[i]) for i in range(3)]
    st = qn.Station("q", {f"c{i}": S[i] for i in range(3)}, discipline=disc, servers=servers,
                    service=law)  # fmt: skip
    return qn.Network([st], classes=classes)


@pytest.mark.parametrize(("disc", "formula"), [("HOL", "nonpreemptive"),
                                               ("PRIO-PR", "preemptive_resume")])  # fmt: skip
@pytest.mark.parametrize(
    ("law", "scv"),
    [("exponential", 1.0), (Deterministic(), 0.0), (Lognormal(1.5), 2.25)],
    ids=["M", "D", "LN"],
)
def test_open_single_server_matches_the_mg1_priority_formulas(disc, formula, law, scv):
    exact = qn.priority_queue(LAM, S, PRIO, [scv] * 3, discipline=formula)
    r = qn.simulate(_open_station(disc, law), seed=5, replications=10, run_length=700.0)
    near(r.response_time, r.response_time_halfwidth, exact.response_time)
    near(r.queue_length[:, 0], r.queue_length_halfwidth[:, 0], exact.queue_length, width=0.06)
    near(r.utilization[:, 0], r.utilization_halfwidth[:, 0], exact.utilization)


def _mmm(lam, mu, m):
    """(Erlang C, mean number in system) of M/M/m."""
    a = lam / mu
    top = a**m / math.factorial(m) / (1 - a / m)
    pw = top / (sum(a**j / math.factorial(j) for j in range(m)) + top)
    return pw, pw * (a / m) / (1 - a / m) + a


@pytest.mark.parametrize("disc", ["HOL", "PRIO-PR"])
def test_open_multiserver_equal_rates_exact(disc):
    m, s = 3, 0.02  # one exponential service time for every class
    lam = np.array([40.0, 50.0, 30.0])  # levels 0, 1, 2 (class order); total load 0.8
    classes = [qn.OpenClass(f"c{i}", arrival_rate=lam[i], priority=i) for i in range(3)]
    net = qn.Network([qn.Station("pool", s, servers=m, discipline=disc)], classes=classes)
    r = qn.simulate(net, seed=11, replications=10, run_length=1000.0)
    mu = 1 / s
    if disc == "PRIO-PR":
        cum = [_mmm(lam[: k + 1].sum(), mu, m)[1] for k in range(3)]
        L = np.diff(np.r_[0.0, cum])
        R = L / lam
    else:
        pw = _mmm(lam.sum(), mu, m)[0]
        sigma = np.r_[0.0, np.cumsum(lam / (m * mu))]
        R = pw / (m * mu) / ((1 - sigma[:-1]) * (1 - sigma[1:])) + s
    near(r.response_time, r.response_time_halfwidth, R)
    near(r.utilization[:, 0], r.utilization_halfwidth[:, 0], lam * s / m)


def _terminals_ctmc(disc, N, Z, s):
    """Throughputs of two closed classes of terminals (N_c, think Z_c) at one exponential
    station (mean s_c) where class 0 has priority, by the global balance equations. HOL: the
    state also says which class is in service."""
    states = []
    for n0 in range(N[0] + 1):
        for n1 in range(N[1] + 1):
            if disc == "PRIO-PR":
                states.append((n0, n1, None))
            else:
                for srv in (0, 1):
                    if (n0, n1)[srv] > 0:
                        states.append((n0, n1, srv))
                if n0 == n1 == 0:
                    states.append((0, 0, -1))
    idx = {st: i for i, st in enumerate(states)}
    Q = np.zeros((len(states), len(states)))

    def add(a, b, rate):
        Q[idx[a], idx[b]] += rate
        Q[idx[a], idx[a]] -= rate

    for st in states:
        n0, n1, srv = st
        n = [n0, n1]
        for c in (0, 1):  # a think time ends
            if n[c] < N[c]:
                m = list(n)
                m[c] += 1
                if disc == "PRIO-PR":
                    add(st, (m[0], m[1], None), (N[c] - n[c]) / Z[c])
                else:
                    add(st, (m[0], m[1], c if srv == -1 else srv), (N[c] - n[c]) / Z[c])
        if disc == "PRIO-PR":  # class 0 served whenever present
            c = 0 if n0 > 0 else (1 if n1 > 0 else None)
            if c is not None:
                m = list(n)
                m[c] -= 1
                add(st, (m[0], m[1], None), 1 / s[c])
        elif srv >= 0:  # a completion; the next is class 0 if any waits
            m = list(n)
            m[srv] -= 1
            nxt = 0 if m[0] > 0 else (1 if m[1] > 0 else -1)
            add(st, (m[0], m[1], nxt), 1 / s[srv])
    A = np.vstack([Q.T, np.ones(len(states))])
    p = np.linalg.lstsq(A, np.r_[np.zeros(len(states)), 1.0], rcond=None)[0]
    X = np.zeros(2)
    for st, i in idx.items():
        n0, n1, srv = st
        if disc == "PRIO-PR":
            c = 0 if n0 > 0 else (1 if n1 > 0 else None)
        else:
            c = srv if srv >= 0 else None
        if c is not None:
            X[c] += p[i] / s[c]
    return X


@pytest.mark.parametrize("disc", ["HOL", "PRIO-PR"])
def test_closed_two_classes_of_terminals_match_the_markov_chain(disc):
    N, Z, s = (3, 4), (0.05, 0.04), (0.01, 0.015)
    classes = [
        qn.ClosedClass("hi", N=N[0], think_time=Z[0], priority=0),
        qn.ClosedClass("lo", N=N[1], think_time=Z[1], priority=1),
    ]
    net = qn.Network([qn.Station("q", {"hi": s[0], "lo": s[1]}, discipline=disc)],
                     classes=classes)  # fmt: skip
    X = _terminals_ctmc(disc, N, Z, s)
    r = qn.simulate(net, seed=21, replications=10, run_length=200.0, warmup=2.0)
    near(r.throughput, r.throughput_halfwidth, X)
    near(r.response_time, r.response_time_halfwidth, np.array(N) / X - np.array(Z), width=0.05)


@pytest.mark.parametrize("disc", ["HOL", "PRIO-PR"])
def test_one_class_at_a_priority_station_is_fcfs(disc):
    cpu = qn.Station("cpu", "4 ms", servers=2)
    fcfs = qn.Network((cpu, qn.Station("disk", "9 ms")), think_time="20 ms")
    net = qn.Network((cpu.replace(discipline=disc), qn.Station("disk", "9 ms")), think_time="20 ms")
    exact = qn.mva(fcfs, 6)
    r = qn.simulate(net, 6, seed=9, replications=10, run_length=100.0, warmup=1.0)
    near(r.throughput[0], r.throughput_halfwidth[0], exact.throughput[-1])
    near(r.queue_length[0], r.queue_length_halfwidth[0], exact.queue_length[-1], width=0.05)


@pytest.mark.parametrize("disc", ["HOL", "PRIO-PR"])
def test_priority_station_with_a_rate_curve_is_refused(disc):
    net = qn.Network([qn.Station("q", "3 ms", discipline=disc, rate_multipliers=(1, 2))])
    with pytest.raises(qn.InvalidModelError, match=rf"discipline '{disc}' with rate_multipliers"):
        qn.simulate(net, 3, seed=1)
