"""The simulator against exact MVA on product-form closed networks.

With exponential service, FCFS stations whose service times do not depend on the class,
delay stations and exponential think times, the network has a product-form solution
(Baskett, Chandy, Muntz, Palacios, J. ACM 22(2):248-260, 1975), which exact MVA computes. A
95 % confidence interval must then cover the MVA value in about 95 % of independent runs: over
40 seeds the number of covering intervals is Binomial(40, p) with p close to 0.95, and we ask
for at least the 0.1 % quantile of Binomial(40, 0.95) (a correct simulator fails this about
once in a thousand runs and quantity; one whose intervals cover 70 % of the time passes it for a
given quantity with probability 0.055, and a dozen quantities are checked per network).
The intervals must also be narrow, so that covering is not a matter of width.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

import qnmodel as qn

SEEDS = range(40)
MIN_COVER = int(binom.ppf(0.001, len(SEEDS), 0.95))  # = 33 of 40


def _coverage(estimates, halfwidths, exact):
    est, hw = np.array(estimates), np.array(halfwidths)
    return np.sum(np.abs(est - exact) <= hw, axis=0)


def test_min_cover_is_a_real_bound():
    assert MIN_COVER == 33
    assert binom.cdf(MIN_COVER - 1, len(SEEDS), 0.95) < 0.001
    # a simulator whose intervals cover 70 % of the time passes one quantity's check rarely
    assert binom.sf(MIN_COVER - 1, len(SEEDS), 0.70) < 0.06


def test_single_class_intervals_cover_exact_mva():
    net = qn.Network(
        (
            qn.Station("cpu", "4 ms"),
            qn.Station("disk", "9 ms", servers=2),
            qn.Station("net", "2 ms", kind="delay"),
            qn.Station("ssd", "3 ms"),
        ),
        think_time="20 ms",
    )
    N = 6
    exact = qn.mva(net, N)
    keys = {
        "throughput": exact.throughput[-1],
        "response_time": exact.response_time[-1],
    }
    est = {k: [] for k in keys} | {"Q": [], "U": [], "Rk": []}
    hw = {k: [] for k in est}
    for seed in SEEDS:
        r = qn.simulate(net, N, seed=seed, replications=10, run_length=15.0, warmup=0.5)
        for k in keys:
            est[k].append(getattr(r, k)[0])
            hw[k].append(getattr(r, f"{k}_halfwidth")[0])
        est["Q"].append(r.queue_length[0])
        hw["Q"].append(r.queue_length_halfwidth[0])
        est["U"].append(r.utilization[0])
        hw["U"].append(r.utilization_halfwidth[0])
        est["Rk"].append(r.residence_time[0])
        hw["Rk"].append(r.residence_time_halfwidth[0])
        assert r.method == "simulation"
    exact_all = keys | {
        "Q": exact.queue_length[-1],
        "U": exact.utilization[-1],
        "Rk": exact.residence_time[-1],
    }
    for k, v in exact_all.items():
        cover = np.atleast_1d(_coverage(est[k], hw[k], v))
        print(f"coverage of {k} over {len(SEEDS)} seeds: {cover.tolist()}")  # pytest -s shows it
        assert np.all(cover >= MIN_COVER), (k, cover)
        rel = np.mean(np.array(hw[k]) / np.abs(np.array(est[k])), axis=0)
        assert np.all(rel < 0.03), (k, rel)  # narrow intervals: covering is not luck of width


def test_multiclass_intervals_cover_exact_mva():
    # FCFS stations: the same demand for every class (product form); classes differ at the delay
    # station, in think time and in population.
    D = [[0.004, 0.006, 0.010], [0.004, 0.006, 0.030]]
    kinds = ["queue", "queue", "delay"]
    net = qn.Network.from_demands(
        D, classes=[qn.ClosedClass("a", 3, "20 ms"), qn.ClosedClass("b", 2, "50 ms")], kinds=kinds
    )
    exact = qn.mva_multiclass(net)
    cover_x = np.zeros(2, int)
    cover_r = np.zeros(2, int)
    cover_q = np.zeros((2, 3), int)
    for seed in SEEDS:
        r = qn.simulate(net, seed=seed, replications=10, run_length=40.0, warmup=0.5)
        cover_x += np.abs(r.throughput - exact.throughput) <= r.throughput_halfwidth
        cover_r += np.abs(r.response_time - exact.response_time) <= r.response_time_halfwidth
        cover_q += np.abs(r.queue_length - exact.queue_length) <= r.queue_length_halfwidth
        assert np.all(r.response_time_halfwidth / r.response_time < 0.03)
    print(f"coverage over {len(SEEDS)} seeds: X {cover_x.tolist()} R {cover_r.tolist()} "
          f"Q {cover_q.tolist()}")  # fmt: skip
    assert np.all(cover_x >= MIN_COVER), cover_x
    assert np.all(cover_r >= MIN_COVER), cover_r
    assert np.all(cover_q >= MIN_COVER), cover_q


def test_little_and_utilisation_laws_hold_in_every_run():
    # Time averages and counts of one run obey Little's law and the utilisation law up to the
    # edge effects of the run (jobs present at its start and end): well under 1 %.
    net = qn.Network.from_demands([0.005, 0.012, 0.003], think_time=0.05, servers=[1, 3, 1])
    r = qn.simulate(net, 8, seed=7, replications=4, run_length=30.0, warmup=1.0)
    X = r.throughput[0]
    np.testing.assert_allclose(r.queue_length[0], X * r.residence_time[0], rtol=5e-3)
    np.testing.assert_allclose(r.utilization[0], X * net.demands / net.servers, rtol=2e-2)
    # the cycle includes the sampled think times, whose mean has a 0.6 % standard error here
    np.testing.assert_allclose(X * (r.response_time[0] + 0.05), 8, rtol=2e-2)


@pytest.mark.parametrize("method", ["replications", "batch_means"])
def test_both_ci_methods_agree_with_mva(method):
    net = qn.Network.from_demands([0.01, 0.02], think_time=0.1)
    exact = qn.mva(net, 5)
    # replications: 10 runs of 400 s; batch means: one run of 4000 s in 20 batches
    length = 400.0 if method == "replications" else 4000.0
    r = qn.simulate(net, 5, seed=3, method=method, run_length=length, warmup=5.0)
    assert r.ci_method == method
    assert r.replications == (10 if method == "replications" else 20)
    # 4 half-widths: a fixed seed, so this is a deterministic check with a wide margin
    assert abs(r.response_time[0] - exact.response_time[-1]) <= 4 * r.response_time_halfwidth[0]
    assert r.response_time_halfwidth[0] / r.response_time[0] < 0.02


def test_mixed_network_matches_the_product_form_solution():
    # One closed class (N = 4, Z = 50 ms) and one open class (20/s) on FCFS stations with
    # class-independent service: product form. The closed class is exact MVA with the demands
    # inflated by 1 / (1 - U_open); the open class's residence is D (1 + Q_closed) / (1 - U_open)
    # (Lazowska, Zahorjan, Graham, Sevcik, Quantitative System Performance, 1984, sec. 7.5).
    D = np.array([[0.006, 0.010], [0.006, 0.010]])
    lam = 20.0
    net = qn.Network.from_demands(
        D, classes=[qn.ClosedClass("batch", 4, "50 ms"), qn.OpenClass("web", lam)]
    )
    u_open = lam * D[1]
    closed = qn.mva(qn.Network.from_demands(D[0] / (1 - u_open), think_time=0.05), 4)
    q_closed = closed.queue_length[-1]
    r_open = float(np.sum(D[1] * (1 + q_closed) / (1 - u_open)))
    r = qn.simulate(net, seed=4, replications=10, run_length=400.0, warmup=2.0)
    assert r.class_names == ("batch", "web")
    assert abs(r.throughput[0] - closed.throughput[-1]) <= 3 * r.throughput_halfwidth[0]
    assert abs(r.response_time[0] - closed.response_time[-1]) <= 3 * r.response_time_halfwidth[0]
    assert abs(r.response_time[1] - r_open) <= 3 * r.response_time_halfwidth[1]
    assert np.all(r.response_time_halfwidth / r.response_time < 0.02)
