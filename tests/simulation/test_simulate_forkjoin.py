"""Fork-join (k of n) elements against order statistics of exponentials.

One job forking into n identical exponential branches of mean d, joined when all have finished,
spends the mean of the maximum of n exponentials, d H_n (H_n the harmonic number; the k-th
order statistic of n Exp(1) has mean H_n - H_{n-k}: H. A. David, H. N. Nagaraja, *Order
Statistics*, 3rd ed., Wiley 2003, eq. 3.3.7 and the Renyi representation). The simulator keeps
the n - k stragglers of a k-of-n join running (``ForkJoin(..., cancel=False)``).
"""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn


def H(n: int) -> float:
    return float(sum(1.0 / i for i in range(1, n + 1)))


def forkjoin(name, demands, k=None, servers=1):
    branches = tuple(qn.Station(f"m{i}", d, servers=servers) for i, d in enumerate(demands))
    return qn.ForkJoin(name, branches, k=k, cancel=False)


def net_of(*elements, think_time=0.0):
    return qn.Network(elements, think_time=think_time)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_full_join_one_job_is_d_times_harmonic(n):
    d = 0.004
    net = net_of(forkjoin("stripe", [d] * n))
    r = qn.simulate(net, 1, seed=n, replications=10, run_length=200.0, warmup=1.0)
    exact = d * H(n)
    assert abs(r.response_time[0] - exact) <= 3 * r.response_time_halfwidth[0]
    assert r.response_time_halfwidth[0] / exact < 0.01
    # the fork-join element's residence time is the whole response time here
    assert r.residence_time[0, 0] == pytest.approx(r.response_time[0], rel=1e-9)
    assert r.branch_names == tuple(f"stripe/m{i}" for i in range(n))
    # every branch is busy for d per response (utilisation law per branch)
    np.testing.assert_allclose(r.branch_utilization, r.throughput[0] * d, rtol=0.02)


@pytest.mark.parametrize(("n", "k"), [(4, 1), (4, 2), (5, 3), (6, 5)])
def test_k_of_n_join_is_the_kth_order_statistic(n, k):
    # The n - k stragglers keep their branches busy after the join; a long think time
    # (Z = 5000 d) lets them finish before the next fork, except with probability below
    # (n - k) d / (d + Z) < 0.06 %, which adds less than 0.001 d to the mean. About 8000 cycles
    # per replication.
    d = 0.004
    Z = 5000 * d
    net = net_of(forkjoin("ec", [d] * n, k=k), think_time=Z)
    r = qn.simulate(net, 1, seed=10 * n + k, replications=10, run_length=8000 * Z, warmup=Z)
    exact = d * (H(n) - H(n - k))
    assert abs(r.response_time[0] - exact) <= 3 * r.response_time_halfwidth[0] + 0.001 * d
    assert r.response_time_halfwidth[0] / exact < 0.01


def test_k_of_n_stragglers_occupy_their_branches():
    # With Z = 0 the next fork finds the stragglers still running: the k-of-n response time of a
    # lone job is then longer than the order statistic d (H_n - H_{n-k}).
    d, n, k = 0.004, 4, 2
    net = net_of(forkjoin("ec", [d] * n, k=k))
    r = qn.simulate(net, 1, seed=3, replications=10, run_length=200.0)
    iso = d * (H(n) - H(n - k))
    assert r.response_time[0] - r.response_time_halfwidth[0] > 1.05 * iso
    # branch work is conserved: each branch serves d per fork
    np.testing.assert_allclose(r.branch_utilization, r.throughput[0] * d, rtol=0.02)


def test_forkjoin_in_a_tandem_with_a_queue():
    # A job visits a queue (one server, S) and then a 2-way fork-join; with N = 1 the two are
    # visited in turn, so R = S + d H_2, the visit at each element its own part.
    S, d = 0.003, 0.005
    net = net_of(qn.Station("cpu", S), forkjoin("fj", [d, d]))
    r = qn.simulate(net, 1, seed=1, replications=10, run_length=200.0)
    assert abs(r.response_time[0] - (S + 1.5 * d)) <= 3 * r.response_time_halfwidth[0]
    assert abs(r.residence_time[0, 0] - S) <= 3 * r.residence_time_halfwidth[0, 0]
    assert abs(r.residence_time[0, 1] - 1.5 * d) <= 3 * r.residence_time_halfwidth[0, 1]
    assert r.station_names == ("cpu", "fj")
    assert np.isnan(r.utilization[0, 1])


def test_heterogeneous_branches_one_job():
    # max of Exp(mean a) and Exp(mean b): a + b - ab / (a + b)
    a, b = 0.002, 0.006
    net = net_of(forkjoin("fj", [a, b]))
    r = qn.simulate(net, 1, seed=2, replications=10, run_length=200.0)
    exact = a + b - a * b / (a + b)
    assert abs(r.response_time[0] - exact) <= 3 * r.response_time_halfwidth[0]


def test_forkjoin_bad_input():
    # the description refuses them before the simulator sees them
    with pytest.raises(qn.InvalidModelError, match=r"k must be between 1 and .* got k=3"):
        forkjoin("fj", [0.01, 0.01], k=3)
    with pytest.raises(qn.InvalidModelError, match="branches is empty"):
        forkjoin("fj", [])
    with pytest.raises(qn.InvalidModelError, match=r"branches\[0\] \('d'\) is a 'delay'"):
        qn.ForkJoin("fj", (qn.Station("d", 0.01, kind="delay"),))
    # a cancelling k-of-n join is fork_join's, not the simulator's
    cancelling = qn.ForkJoin("fj", [qn.Station(f"m{i}", 0.01) for i in range(3)], k=2)
    with pytest.raises(qn.InvalidModelError, match=r"k=2 of n=3 with cancel=True.*cancel=False"):
        qn.simulate(net_of(cancelling), 1, seed=1)


def test_open_two_way_fork_join_nelson_tantawi():
    # Poisson arrivals into a fork onto two identical M/M/1 branches: the mean response time is
    # exactly (12 - rho) / 8 / (mu - lambda) (L. Flatto, S. Hahn, SIAM J. Appl. Math. 44(5),
    # 1984; R. Nelson, A. N. Tantawi, IEEE Trans. Computers 37(6):739-743, 1988, eq. 6).
    d, rho = 0.01, 0.6
    lam = rho / d
    net = net_of(forkjoin("fj", [d, d]))
    r = qn.simulate(net, arrival_rate=lam, seed=6, replications=10, run_length=3000.0)
    exact = (12 - rho) / 8 / (1 / d - lam)
    assert abs(r.response_time[0] - exact) <= 3 * r.response_time_halfwidth[0]
    assert r.response_time_halfwidth[0] / exact < 0.015


def test_open_k_of_n_conserves_work_and_obeys_little():
    # 2 of 4 under load: parents leave while stragglers run on (their job slots are reused);
    # every branch still serves d per arrival, and Little's law holds at the element.
    d, lam = 0.01, 60.0
    net = net_of(forkjoin("fj", [d] * 4, k=2))
    r = qn.simulate(net, arrival_rate=lam, seed=12, replications=10, run_length=500.0)
    np.testing.assert_allclose(r.branch_utilization, lam * d, rtol=0.02)
    np.testing.assert_allclose(r.queue_length[0, 0], r.throughput[0] * r.residence_time[0, 0],
                               rtol=5e-3)  # fmt: skip
    # between the 2nd order statistic of an idle system and the full join of a loaded one
    assert d * (H(4) - H(2)) < r.response_time[0] < (12 - lam * d) / 8 / (1 / d - lam) * 2
