"""Fork-join elements and their approximate solver (qnmodel.fork_join).

Known answers (exact): one request through n identical exponential branches takes d H_n
(mean of the maximum), d (H_n - H_{n-k}) with a k-of-n join; different branches give
the inclusion-exclusion sum; the open two-way fork-join is Flatto-Hahn's
(12 - rho)/8 R_MM1. Invariants: Little's law, the utilisation law, X <= 1/D_max,
Varki's mean value equation on the solver's own arrays. Accuracy: against the seeded
pure-Python reference simulation in ``fj_sim.py`` (tolerances from the errors measured
there, see docs/explanation/fork-join.md).
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.solvers.forkjoin import (
    busy_per_request,
    expected_order_statistic,
    harmonic,
    nelson_tantawi,
)
from qnmodel.solvers.percentiles import order_statistic_ph
from tests._tol import COPY, PH_QUANTILE, closed_form, recursion

sys.path.insert(0, str(Path(__file__).parent))
from fj_sim import simulate_net  # noqa: E402

S = qn.Station

# Unequal branch means go through scipy quad at epsrel 1e-11 (expected_order_statistic,
# busy_per_request); quad's estimate is not a bound, hence 100x.
QUAD = 100 * 1e-11


def stripe(n, d=1.0, k=None, name="stripe"):
    return qn.ForkJoin(name, [S(f"m{i}", d) for i in range(n)], k=k)


# ------------------------------------------------------------------ known answers
@pytest.mark.parametrize("n", [1, 2, 3, 4, 8, 16])
def test_single_request_is_d_times_harmonic_number(n):
    d = 0.004
    r = qn.fork_join(qn.Network([stripe(n, d)]), 1)
    # d H_n: n divisions and n - 1 additions each side, and the product (1/x: one more)
    h = d * math.fsum(1 / i for i in range(1, n + 1))
    assert r.response_time[0] == pytest.approx(h, rel=closed_form(2 * n + 2))
    assert r.throughput[0] == pytest.approx(1 / (d * harmonic(n)), rel=closed_form(2 * n + 3))


def test_single_request_adds_other_stations_and_ignores_think_time():
    net = qn.Network([S("cpu", 0.002), stripe(4, 0.005), S("lan", 0.001, kind="delay")], 0.1)
    r = qn.fork_join(net, 1)
    assert r.response_time[0] == pytest.approx(0.002 + 0.005 * 25 / 12 + 0.001, rel=closed_form(12))


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_k_of_n_single_request_is_kth_order_statistic(k):
    d, n = 2.0, 5
    r = qn.fork_join(qn.Network([stripe(n, d, k=k)]), 1)
    expected = d * sum(1.0 / (n - j) for j in range(k))  # k stages of the race
    assert r.response_time[0] == pytest.approx(expected, rel=1e-12)
    # H_n - H_{n-k} cancels: its rounding is amplified by (H_n + H_{n-k}) / (H_n - H_{n-k}),
    # at most 22 here (k = 1), times gamma(n + 2) each side: 2 * 22 * 7 = 308 operations
    assert expected == pytest.approx(d * (harmonic(n) - harmonic(n - k)), rel=closed_form(308))


def _max_inclusion_exclusion(means):
    rates = [1 / m for m in means]
    total = 0.0
    for size in range(1, len(rates) + 1):
        for sub in itertools.combinations(rates, size):
            total += (-1) ** (size + 1) / sum(sub)
    return total


def test_different_branches_single_request_is_mean_of_maximum():
    means = [0.5, 1.0, 1.5, 3.0]
    fj = qn.ForkJoin("fj", [S(f"b{i}", m) for i, m in enumerate(means)])
    r = qn.fork_join(qn.Network([fj]), 1)
    assert r.response_time[0] == pytest.approx(_max_inclusion_exclusion(means), rel=QUAD)
    # an LU solve on 15 phases against 15 alternating terms (sum |terms| / total = 3.04):
    # 3 * gamma(16) + the solve's 15 * 16 operations, say 512
    assert order_statistic_ph(means).mean == pytest.approx(
        _max_inclusion_exclusion(means), rel=closed_form(512)
    )


def test_order_statistic_integral_matches_phase_type_mean():
    means = [0.5, 1.0, 1.0, 2.0]
    for k in range(1, 5):
        assert expected_order_statistic(means, k) == pytest.approx(
            order_statistic_ph(means, k).mean, rel=QUAD
        )


def test_busy_time_of_a_cancelling_join():
    assert busy_per_request([1.0] * 4, 2) == pytest.approx([0.5] * 4, rel=closed_form(2))  # k d / n
    # 1-of-2: both branches are busy until the first finishes, E = 1 / (r1 + r2)
    assert busy_per_request([1.0, 3.0], 1) == pytest.approx([0.75, 0.75], rel=QUAD)
    assert busy_per_request([1.0, 3.0], 2) == pytest.approx([1.0, 3.0], rel=COPY)  # D_i itself


def test_naive_models_are_off_by_a_factor_of_two():
    """Issue 13: 4 exponential members of mean d, one client: d H_4 = 2.083 d, not 4d or d."""
    d = 0.01
    fj = qn.fork_join(qn.Network([stripe(4, d)]), 1).response_time[0]
    series = qn.mva(qn.Network.from_demands([d] * 4), 1).response_time[0]
    one = qn.mva(qn.Network.from_demands([d]), 1).response_time[0]
    assert fj / d == pytest.approx(25 / 12, rel=closed_form(10))  # H_4 = 25/12
    assert series / d == pytest.approx(4.0, rel=closed_form(5))  # one MVA step: 4 D summed
    assert one / d == pytest.approx(1.0, rel=closed_form(2))


@pytest.mark.parametrize("rho", [0.05, 0.3, 0.6, 0.9])
def test_open_two_way_is_flatto_hahn_exact(rho):
    d = 0.004
    r = qn.fork_join(qn.Network([stripe(2, d)]), arrival_rate=rho / d)
    # a few operations, but the code's rho = lambda d differs from the test's by a rounding
    # that 1 / (1 - rho) amplifies by rho / (1 - rho): closed_form(10) / (1 - rho)
    tol = closed_form(10) / (1 - rho)
    assert r.response_time[0] == pytest.approx((12 - rho) / 8 * d / (1 - rho), rel=tol)
    assert r.synchronization_delay[0, 0] == pytest.approx(
        0.5 * (1 - rho / 4) * d / (1 - rho), rel=2 * tol
    )


def test_nelson_tantawi_published_form_and_limits():
    # [NT88] eq. (13) as restated by Thomasian (2014) Table I eq. (3)
    n, rho, d = 8, 0.5, 1.0
    h = harmonic(n) / 1.5
    expected = (h + (1 - h) * 4 * rho / 11) * (12 - rho) / 8 * d / (1 - rho)
    # H_8 (15 operations) and 12 more, amplified by 1 / (1 - rho) = 2 through rho
    assert nelson_tantawi(n, rho, d) == pytest.approx(expected, rel=closed_form(27) / (1 - rho))
    # light load: the formula's first-order term in rho (coefficient < 1 here; measured 7.5e-13
    # at rho = 1e-12) plus rounding
    assert nelson_tantawi(n, 1e-12, d) == pytest.approx(harmonic(n) * d, rel=10 * 1e-12)
    r = qn.fork_join(qn.Network([stripe(n, d)]), arrival_rate=rho / d)
    assert r.response_time[0] == pytest.approx(expected, rel=closed_form(54) / (1 - rho))


def test_open_nearly_identical_branches_agree_with_nelson_tantawi():
    d, lam = 1.0, 0.7
    fj = qn.ForkJoin("fj", [S("a", d), S("b", d * (1 + 1e-9)), S("c", d), S("e", d)])
    het = qn.fork_join(qn.Network([fj]), arrival_rate=lam).response_time[0]
    assert het == pytest.approx(nelson_tantawi(4, lam * d, d), rel=1e-6)


def test_open_without_forkjoin_is_an_mm1_tandem():
    net = qn.Network.from_demands([0.01, 0.02, 0.005], think_time=5.0)  # Z ignored
    lam = 30.0
    r = qn.fork_join(net, arrival_rate="30/s")
    expected = sum(d / (1 - lam * d) for d in (0.01, 0.02, 0.005))
    # 3 stations of 3 operations summed, amplified through rho by 1 / (1 - rho_max) = 2.5
    assert r.response_time[0] == pytest.approx(expected, rel=closed_form(12) / (1 - 0.6))
    assert r.n[0] == pytest.approx(lam * expected, rel=closed_form(13) / (1 - 0.6))  # Little


def test_closed_without_forkjoin_equals_exact_mva():
    net = qn.Network.from_demands(["5 ms", "8 ms", "2 ms"], think_time="100 ms",
                                  kinds=["queue", "queue", "delay"])  # fmt: skip
    a, b = qn.fork_join(net, 30), qn.mva(net, 30)
    # two exact MVA recursions, N = 30 steps on K = 3 stations (4 K + 2 operations a step)
    np.testing.assert_allclose(a.response_time, b.response_time, rtol=recursion(30, 14))
    np.testing.assert_allclose(a.throughput, b.throughput, rtol=recursion(30, 14))


# ------------------------------------------------------------------ invariants
@pytest.fixture(scope="module")
def mixed():
    fj = qn.ForkJoin("stripe", [S("a", 0.004), S("b", 0.006), S("c", 0.005)])
    net = qn.Network([S("cpu", 0.002), fj, S("nic", 0.001)], think_time=0.02)
    return net, qn.fork_join(net, 40)


def test_littles_law_and_utilisation_law(mixed):
    net, r = mixed
    n = np.arange(1, 41)
    # X = n / (Z + sum_k R_k) over 3 stations (2 K + 4 operations, and Q_k = X R_k summed)
    np.testing.assert_allclose(
        r.throughput * (r.response_time + net.think_time), n, rtol=closed_form(10)
    )
    np.testing.assert_allclose(
        r.queue_length.sum(axis=1) + r.throughput * net.think_time, n, rtol=closed_form(16)
    )
    np.testing.assert_allclose(
        r.branch_utilization,
        r.throughput[:, None] * np.array([0.004, 0.006, 0.005]),
        rtol=closed_form(2),
    )
    Tb = r.branch_response_time
    np.testing.assert_allclose(
        r.branch_queue_length, r.throughput[:, None] * Tb, rtol=closed_form(2)
    )
    assert np.all(r.utilization <= 1.0)


def test_throughput_below_bottleneck_and_monotone(mixed):
    net, r = mixed
    assert np.all(r.throughput <= 1 / 0.006 + 1e-12)
    assert r.throughput[-1] == pytest.approx(1 / 0.006, rel=0.02)  # saturates at the bottleneck
    assert np.all(np.diff(r.throughput) > 0)
    assert np.all(r.response_time >= r.response_time[0] - 1e-15)
    assert np.all(r.throughput <= np.arange(1, 41) / (net.think_time + r.response_time[0]) + 1e-9)


def test_varki_mean_value_equation_on_identical_branches():
    d = 0.5
    r = qn.fork_join(qn.Network([S("cpu", 0.3), stripe(4, d)], think_time=2.0), 12)
    Rfj, Qfj = r.residence_time[:, 1], r.queue_length[:, 1]
    # [Var99]: d (H_4 + Q) -- H_4 (7 operations) and 2 more, each side
    np.testing.assert_allclose(Rfj[1:], d * (harmonic(4) + Qfj[:-1]), rtol=closed_form(9))


def test_result_labels_frames_and_read_only(mixed):
    _net, r = mixed
    assert "approximate" in r.method and "Varki" in r.method
    assert r.forkjoin_names == ("stripe",)
    assert r.branch_names == ("stripe.a", "stripe.b", "stripe.c")
    assert list(r.to_frame().columns) == ["n", "throughput", "response_time"]
    assert len(r.to_frame("branch")) == 40 * 3
    assert len(r.to_frame("station")) == 40 * 3
    with pytest.raises(ValueError):
        r.throughput[0] = 1.0
    o = qn.fork_join(qn.Network([stripe(4)]), arrival_rate=0.5)
    assert "approximate" in o.method and "Nelson-Tantawi" in o.method


def test_network_holds_a_forkjoin_like_a_station():
    fj = stripe(3, 0.01, k=2)
    net = qn.Network([S("cpu", 0.002), fj])
    assert net.names == ("cpu", "stripe")
    assert net.demands[1] == 0.01 and (fj.n, fj.k) == (3, 2)
    assert "k=2" in repr(fj)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "kwargs, exc, words",
    [
        (dict(branches=[]), qn.InvalidModelError, "branches is empty"),
        (dict(branches=[S("a", 1.0)], k=2), qn.InvalidModelError, "k must be between 1"),
        (dict(branches=[S("a", 1.0)], k=0), qn.InvalidModelError, "k must be an integer >= 1"),
        (dict(branches=[S("a", 1.0, kind="delay")]), qn.InvalidModelError, "delay"),
        (dict(branches=[S("a", 1.0), S("a", 2.0)]), qn.InvalidModelError, "unique"),
        (dict(branches=[1.0]), qn.InvalidTypeError, "branches[0] must be a Station"),
        (dict(branches="disk"), qn.InvalidTypeError, "sequence of Station"),
    ],
)
def test_bad_forkjoin_is_refused_naming_the_field(kwargs, exc, words):
    with pytest.raises(exc, match=None) as info:
        qn.ForkJoin("stripe", **kwargs)
    assert words in str(info.value) and "stripe" in str(info.value)


@pytest.mark.parametrize(
    ("solver", "solve"),
    [
        ("mva", lambda net: qn.mva(net, 3)),
        ("mva", lambda net: qn.mva_exact(net, 3)),
        ("bounds_bjb", lambda net: qn.bounds(net, 3)),
        ("bounds_aba", lambda net: qn.bounds(net, 3, method="aba")),
        ("amva", lambda net: qn.amva(net, 3)),
        ("mva_multiclass", lambda net: qn.mva_multiclass(net, 3)),
        ("open_network", lambda net: qn.open_network(net, 1.0)),
    ],
)
def test_solvers_without_a_join_refuse_forkjoin(solver, solve):
    net = qn.Network([S("cpu", 0.1), stripe(4)])
    with pytest.raises(
        qn.InvalidModelError,
        match=rf"^{solver} cannot solve fork-join elements \(station 'stripe'\): use "
        r"qnmodel.fork_join \(approximate\) or qnmodel.simulate$",
    ):
        solve(net)


def test_fork_join_bad_arguments():
    net = qn.Network([stripe(2)])
    with pytest.raises(qn.InvalidModelError, match="exactly one of N"):
        qn.fork_join(net)
    with pytest.raises(qn.InvalidModelError, match="exactly one of N"):
        qn.fork_join(net, 3, arrival_rate=1.0)
    with pytest.raises(qn.UnstableModelError, match="stripe.m0.*saturated"):
        qn.fork_join(net, arrival_rate=1.0)
    multi = qn.ForkJoin("fj", [S("a", 1.0, servers=2), S("b", 1.0)], k=1)
    with pytest.raises(qn.InvalidModelError, match="'fj' is a k-of-n join.*multi-server"):
        qn.fork_join(qn.Network([multi]), 2)
    with pytest.raises(qn.InvalidTypeError):
        qn.fork_join("net", 2)
    with pytest.raises(qn.InvalidModelError, match="N must be an integer"):
        qn.fork_join(net, 0)


# ------------------------------------------------------------------ vs simulation
# Reference: tests/solvers/fj_sim.py (seeded, 20 000 requests after 2 000 of warm-up).
# Long-run errors measured there (python tests/solvers/fj_sim.py): <= 5 % for full joins,
# <= 8 % for identical k-of-n joins; tolerances add the sampling error of a short run.
@pytest.mark.parametrize(
    "net, N, tol",
    [
        (qn.Network([stripe(4)]), 4, 0.08),
        (qn.Network([S("cpu", 0.3), stripe(4)], think_time=2.0), 4, 0.08),
        (qn.Network([qn.ForkJoin("fj", [S("a", 0.5), S("b", 1.0), S("c", 1.5)])], 1.0), 8, 0.08),
        (qn.Network([stripe(4, k=2)], think_time=1.0), 4, 0.12),
    ],
)
def test_closed_mean_response_time_vs_reference_simulation(net, N, tol):
    sim = simulate_net(net, N=N, jobs=20_000, warmup=2_000, seed=11)
    model = qn.fork_join(net, N)
    assert model.response_time[-1] == pytest.approx(sim["R"].mean(), rel=tol)
    assert model.throughput[-1] == pytest.approx(sim["X"], rel=tol)


@pytest.mark.parametrize(
    "branches, lam",
    [
        ([1.0] * 4, 0.6),
        ([0.5, 1.0, 0.8], 0.6),
        ([1.0, 0.9, 0.8, 0.7], 0.6),
    ],
)
def test_open_mean_response_time_vs_reference_simulation(branches, lam):
    net = qn.Network([qn.ForkJoin("fj", [S(f"b{i}", d) for i, d in enumerate(branches)])])
    sim = simulate_net(net, arrival_rate=lam, jobs=40_000, warmup=4_000, seed=11)
    model = qn.fork_join(net, arrival_rate=lam)
    assert model.response_time[0] == pytest.approx(sim["R"].mean(), rel=0.05)


def test_zero_demand_branch_finishes_at_once():
    fj = qn.ForkJoin("fj", [S("a", 0.0), S("b", 1.0), S("c", 1.0)])
    r = qn.fork_join(qn.Network([fj]), 3)
    assert r.response_time[0] == pytest.approx(1.5, rel=QUAD)  # max of the two others: d H_2
    q50 = -math.log(1 - 0.5**0.5)
    assert r.response_time_quantile(0.5, n=1) == pytest.approx(q50, rel=PH_QUANTILE)
    two_of_three = qn.fork_join(qn.Network([qn.ForkJoin("g", fj.branches, k=2)]), 1)
    # first of the two others
    assert two_of_three.response_time[0] == pytest.approx(0.5, rel=QUAD)


def test_multiclass_network_holds_a_forkjoin_and_its_solvers_refuse_it():
    net = qn.Network(
        [S("cpu", {"r": 0.1, "w": 0.2}, discipline="PS"), stripe(3, 0.5)],
        classes=[qn.ClosedClass("r", N=2), qn.ClosedClass("w", N=1)],
    )
    assert net.names == ("cpu", "stripe")
    np.testing.assert_allclose(net.demands[:, 1], [0.5, 0.5], rtol=COPY)  # D_max for every class
    with pytest.raises(
        qn.InvalidModelError,
        match=r"^mva_multiclass cannot solve fork-join elements \(station "
        r"'stripe'\): use qnmodel.fork_join",
    ):
        qn.mva_multiclass(net, [2, 1])
    with pytest.raises(
        qn.InvalidModelError, match=r"^fork_join cannot solve several classes \(classes 'r', 'w'\)"
    ):
        qn.fork_join(net, 2)
