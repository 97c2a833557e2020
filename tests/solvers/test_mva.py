"""Exact single-class MVA: cited textbook cases, exact-rational oracles, limits and shapes."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.solvers.mva import mva_exact, mva_load_dependent
from tests.reference import actual_values, case_network, exact_mva, load_cases

MVA_CASES = load_cases("mva")


def _solve(case):
    net = case_network(case)
    return qn.mva(net, case["inputs"]["N"])


@pytest.mark.parametrize("case", MVA_CASES, ids=[c["id"] for c in MVA_CASES])
def test_reference_case(case):
    """Every data/reference MVA case: values at N and/or whole curves within its tolerance."""
    res = _solve(case)
    tol = case["tolerance"]
    for key, expected in case.get("expected", {}).items():
        np.testing.assert_allclose(
            actual_values(case, res, key), expected, rtol=tol["rel"], atol=tol["abs"], err_msg=key
        )
    for key, expected in case.get("expected_curve", {}).items():
        np.testing.assert_allclose(
            np.asarray(getattr(res, key)),
            np.asarray(expected),
            rtol=tol["rel"],
            atol=tol["abs"],
            err_msg=key,
        )


@pytest.mark.parametrize("case", MVA_CASES, ids=[c["id"] for c in MVA_CASES])
def test_reference_case_against_exact_rationals(case):
    """The same cases recomputed by the rational convolution oracle, to 1e-12 relative.

    This checks both the solver and the rounded book numbers' inputs: if a case's inputs
    were mistyped, the book tolerance test above would fail while this one passes.
    """
    inp = case["inputs"]
    if "demands" in inp:
        D = [Fraction(str(d)) for d in inp["demands"]]
    else:
        D = [
            Fraction(str(s)) * Fraction(str(v))
            for s, v in zip(inp["service_times"], inp["visits"], strict=True)
        ]
    N = inp["N"]
    ex = exact_mva(
        D, N, Fraction(str(inp.get("think_time", 0))), inp.get("kinds"), inp.get("servers")
    )
    res = _solve(case)
    np.testing.assert_allclose(res.throughput, [float(x) for x in ex["X"]], rtol=1e-12)
    np.testing.assert_allclose(
        res.queue_length, [[float(q) for q in r] for r in ex["Q"]], rtol=1e-12
    )
    np.testing.assert_allclose(
        res.residence_time, [[float(q) for q in r] for r in ex["R"]], rtol=1e-12
    )


def test_exact_fractions_of_machine_repairman_are_consistent():
    """The stored exact fractions and the stored doubles of the closed-form case agree."""
    (case,) = [c for c in MVA_CASES if c["id"] == "machine_repairman_mm1"]
    exact = [float(Fraction(x)) for x in case["expected_exact"]["throughput"]]
    assert exact == case["expected_curve"]["throughput"]
    # Hand check of n = 2: P(j) ~ 81/2, 9, 1 -> X = (9 + 1) / (81/2 + 10) = 20/101.
    assert Fraction(case["expected_exact"]["throughput"][1]) == Fraction(20, 101)


def test_single_queue_saturates_linearly():
    """One queue, Z = 0: every job is at the queue, X = 1/D, R(n) = n D, Q = n."""
    res = qn.mva(qn.Network.from_demands([0.5]), 7)
    np.testing.assert_allclose(res.throughput, 2.0, rtol=1e-15)
    np.testing.assert_allclose(res.response_time, 0.5 * np.arange(1, 8), rtol=1e-15)
    np.testing.assert_allclose(res.queue_length[:, 0], np.arange(1, 8), rtol=1e-15)


def test_hand_recursion_two_stations_with_think_time():
    """Reiser-Lavenberg by hand in rationals: D = (1, 2), Z = 3, n = 1, 2.

    n=1: R = (1, 2), X = 1/6, Q = (1/6, 1/3).
    n=2: R = (7/6, 8/3), X = 2 / (3 + 23/6) = 12/41, Q = (14/41, 32/41).
    """
    net = qn.Network.from_demands([1.0, 2.0], think_time=3.0)
    res = qn.mva(net, 2)
    np.testing.assert_allclose(res.throughput, [1 / 6, 12 / 41], rtol=1e-15)
    np.testing.assert_allclose(res.residence_time, [[1, 2], [7 / 6, 8 / 3]], rtol=1e-15)
    np.testing.assert_allclose(res.queue_length, [[1 / 6, 1 / 3], [14 / 41, 32 / 41]], rtol=1e-15)
    np.testing.assert_allclose(res.utilization, [[1 / 6, 1 / 3], [12 / 41, 24 / 41]], rtol=1e-15)
    np.testing.assert_allclose(res.response_time, [3.0, 23 / 6], rtol=1e-15)


def test_n_is_one_to_N_and_keep_last_matches_last_row():
    net = qn.Network.from_demands([0.01, 0.02, 0.005], think_time=0.1)
    full = qn.mva(net, 50)
    last = qn.mva(net, 50, keep="last")
    np.testing.assert_array_equal(full.n, np.arange(1, 51))
    np.testing.assert_array_equal(last.n, [50])
    assert last.queue_length.shape == (1, 3)
    np.testing.assert_allclose(last.throughput, full.throughput[-1:], rtol=1e-15)
    np.testing.assert_allclose(last.queue_length, full.queue_length[-1:], rtol=1e-15)
    np.testing.assert_allclose(last.residence_time, full.residence_time[-1:], rtol=1e-15)


def test_unit_strings_and_seconds_give_the_same_answer():
    a = qn.mva(qn.Network.from_demands(["5 ms", "8 ms", "2 ms"], think_time="100 ms"), 10)
    b = qn.mva(qn.Network.from_demands([0.005, 0.008, 0.002], think_time=0.1), 10)
    np.testing.assert_allclose(a.throughput, b.throughput, rtol=1e-15)
    # Exact value (rational convolution oracle): X(10) = 78.91676290990569 jobs/s.
    assert a.throughput[-1] == pytest.approx(78.91676290990569, rel=1e-13)


def test_delay_station_is_think_time():
    """A delay station of demand d and think time Z + d give the same throughput."""
    with_delay = qn.Network.from_demands([0.2, 0.3, 1.5], kinds=["queue", "queue", "delay"])
    with_think = qn.Network.from_demands([0.2, 0.3], think_time=1.5)
    a, b = qn.mva(with_delay, 30), qn.mva(with_think, 30)
    np.testing.assert_allclose(a.throughput, b.throughput, rtol=1e-14)
    np.testing.assert_allclose(a.queue_length[:, :2], b.queue_length, rtol=1e-14)
    np.testing.assert_allclose(a.residence_time[:, 2], 1.5, rtol=0)
    np.testing.assert_allclose(a.response_time, b.response_time + 1.5, rtol=1e-14)


def test_zero_demand_station_is_inert():
    a = qn.mva(qn.Network.from_demands([0.2, 0.0, 0.3], think_time=1.0), 20)
    b = qn.mva(qn.Network.from_demands([0.2, 0.3], think_time=1.0), 20)
    np.testing.assert_allclose(a.throughput, b.throughput, rtol=1e-15)
    assert np.all(a.queue_length[:, 1] == 0.0)
    assert np.all(a.utilization[:, 1] == 0.0)


def test_large_population_and_many_stations_stay_finite():
    """N = 10^5 on 1000 stations (keep='last'): no overflow, X at the bottleneck asymptote."""
    rng = np.random.default_rng(7)
    D = rng.uniform(1e-4, 1e-3, size=1000)
    D[123] = 2e-3
    net = qn.Network.from_demands(D, think_time=1.0)
    res = qn.mva(net, 100_000, keep="last")
    assert np.all(np.isfinite(res.queue_length))
    # Far beyond N* the bottleneck holds nearly all jobs and X -> 1 / D_max; the gap decays
    # like (D_2 / D_max)^N, far below rounding at N = 10^5 (measured: equal to the last bit).
    assert res.throughput[0] == pytest.approx(1 / 2e-3, rel=4 * np.finfo(float).eps)
    assert res.queue_length.sum() + res.throughput[0] * 1.0 == pytest.approx(100_000, rel=1e-12)


def test_mva_dispatches_on_multiserver():
    li = qn.Network.from_demands([0.1, 0.2])
    ld = qn.Network.from_demands([0.1, 0.2], servers=[1, 2])
    assert qn.mva(li, 3).method == "mva.exact"
    assert qn.mva(ld, 3).method == "mva.ld"


def test_mva_exact_rejects_multiserver_and_names_the_alternative():
    net = qn.Network.from_demands([0.1, 0.2], servers=[1, 2])
    with pytest.raises(qn.InvalidModelError, match="mva_load_dependent"):
        mva_exact(net, 3)


def test_mva_load_dependent_equals_exact_when_single_server():
    net = qn.Network.from_demands(
        [0.3, 0.1, 0.7, 2.0], kinds=["queue", "queue", "queue", "delay"], think_time=0.5
    )
    a, b = mva_exact(net, 60), mva_load_dependent(net, 60)
    for f in ("throughput", "response_time", "queue_length", "utilization", "residence_time"):
        np.testing.assert_allclose(getattr(b, f), getattr(a, f), rtol=1e-11, err_msg=f)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: qn.mva(qn.Network.from_demands([0.1]), 0), r"N must be an integer >= 1, got 0"),
        (lambda: qn.mva(qn.Network.from_demands([0.1]), 2.5), r"N must be .* got 2.5"),
        (lambda: qn.mva(qn.Network.from_demands([0.1]), 3, keep="first"), r"keep must be one of"),
        (lambda: qn.mva(qn.Network.from_demands([0.0, 0.0]), 3), r"all demands and the think"),
    ],
    ids=["N=0", "N=2.5", "keep", "all-zero"],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_net_of_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match=r"net must be a Network, got list"):
        qn.mva([0.1, 0.2], 3)


def test_one_million_jobs_reach_the_asymptotic_queue_lengths():
    """N = 10^6 (SPEC §2: stable at 10^6 jobs). Far past N*, the bottleneck sets X = 1/D_max
    and every other queue behaves as an open M/M/1 fed at that rate:
    Q_k = rho_k / (1 - rho_k) with rho_k = D_k / D_max; a delay station holds X D_k."""
    D = [0.002, 0.005, 0.001, 0.0005, 0.05]
    net = qn.Network.from_demands(D, kinds=["queue"] * 4 + ["delay"], think_time=1.0)
    res = qn.mva(net, 1_000_000, keep="last")
    assert res.throughput[0] == pytest.approx(200.0, rel=1e-12)
    for k in (0, 2, 3):
        rho = D[k] / 0.005
        assert res.queue_length[0, k] == pytest.approx(rho / (1 - rho), rel=1e-12)
    assert res.queue_length[0, 4] == pytest.approx(10.0, rel=1e-12)
    assert res.queue_length[0].sum() + 200.0 * 1.0 == pytest.approx(1e6, rel=1e-12)
