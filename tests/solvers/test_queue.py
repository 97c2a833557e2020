"""Single queues (qnmodel.single_queue and the queue_* kernels): closed forms, exact
rationals, 50-digit arithmetic, invariants, numerics at extreme sizes, the front door's
dispatch and every refusal. The Octave blocks and random peer batches are in
``test_peers_octave_queue.py``; approximations in ``test_queue_approx.py``."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import qnmodel as qn
from qnmodel._validate import as_integers, as_scv, as_scvs
from qnmodel.errors import (
    InvalidModelError,
    InvalidTypeError,
    LatticeTooLargeError,
    UnitError,
    UnstableModelError,
)
from tests.reference import load_case

# ---- exact oracles ------------------------------------------------------------------------


def _bd_fractions(lam, S, m, K):
    """p_n, n = 0..K, of the M/M/m/K queue in exact rationals."""
    a = Fraction(lam) * Fraction(S)
    w = [Fraction(1)]
    for n in range(1, K + 1):
        w.append(w[-1] * a / min(n, m))
    Z = sum(w)
    return [x / Z for x in w]


def _mmm_mp(lam: float, S: float, m: int, ks):
    """p_0, Erlang C, L and p_k of M/M/m in 50-digit arithmetic from the definitions."""
    with mpmath.workdps(50):
        a = mpmath.mpf(lam) * mpmath.mpf(S)
        rho = a / m
        terms = [a**k / mpmath.factorial(k) for k in range(m)]
        top = a**m / mpmath.factorial(m) / (1 - rho)
        p0 = 1 / (mpmath.fsum(terms) + top)
        C = top * p0
        L = a + rho / (1 - rho) * C
        pk = [
            p0 * a**k / mpmath.factorial(k)
            if k <= m
            else p0 * a**m / mpmath.factorial(m) * rho ** (k - m)
            for k in ks
        ]
        return float(p0), float(C), float(L), [float(x) for x in pk]


# ---- closed forms -------------------------------------------------------------------------


def test_mm1_closed_forms_and_units():
    r = qn.single_queue("80/s", "10 ms")
    assert r.method == "mm1"
    assert r.utilization == pytest.approx(0.8, rel=1e-15)
    assert r.response_time == pytest.approx(0.05, rel=1e-14)  # S / (1 - rho)
    assert r.waiting_time == pytest.approx(0.04, rel=1e-14)
    assert r.queue_length == pytest.approx(4.0, rel=1e-14)
    assert r.waiting_jobs == pytest.approx(3.2, rel=1e-14)
    assert r.empty_probability == pytest.approx(0.2, rel=1e-14)
    assert r.wait_probability == pytest.approx(0.8, rel=1e-15)
    assert r.states is None and r.state_probabilities is None
    assert qn.single_queue("80 Hz", 0.01).response_time == r.response_time


def test_md1_is_half_the_mm1_wait():
    """Pollaczek-Khinchine: W(M/D/1) = W(M/M/1) / 2; L = rho + rho^2 / (2 (1 - rho))."""
    d = qn.single_queue(80, 0.01, scv=0.0)
    m = qn.single_queue(80, 0.01)
    assert d.method == "mg1"
    assert d.waiting_time == pytest.approx(m.waiting_time / 2, rel=1e-14)
    assert d.queue_length == pytest.approx(0.8 + 0.64 / 0.4, rel=1e-14)
    assert d.empty_probability == pytest.approx(0.2, rel=1e-14)


def test_mg1_with_scv_one_is_mm1():
    a, b = qn.queue_mg1(50, 0.015, 1.0), qn.queue_mm1(50, 0.015)
    for f in ("response_time", "queue_length", "waiting_time", "waiting_jobs"):
        assert getattr(a, f) == pytest.approx(getattr(b, f), rel=1e-14)


def test_mh1_uses_the_hyperexponential_second_moment():
    """H2 with alpha = (0.9, 0.1), means (1 ms, 19 ms): E[S] = 2.8 ms, E[S^2] =
    2 (0.9e-6 + 0.1 x 361e-6) = 74e-6 s^2, so c^2 = 74 / 7.84 - 1."""
    r = qn.queue_mh1("200/s", ["1 ms", "19 ms"], [0.9, 0.1])
    assert r.method == "mh1"
    assert r.service_time == pytest.approx(2.8e-3, rel=1e-14)
    assert r.scv == pytest.approx(74 / 7.84 - 1, rel=1e-13)
    rho = 0.56
    assert r.waiting_time == pytest.approx(200 * 74e-6 / (2 * (1 - rho)), rel=1e-13)
    # one phase is M/M/1 (Octave's qsmh1 gives M/D/1 here)
    one = qn.queue_mh1(50, [0.015], [1.0])
    assert one.response_time == pytest.approx(qn.queue_mm1(50, 0.015).response_time, rel=1e-14)
    assert one.scv == pytest.approx(1.0, rel=1e-15)


def test_mh1_equals_mg1_with_its_moments():
    r = qn.queue_mh1(3.0, [0.05, 0.2, 0.4], [0.5, 0.3, 0.2])
    S = 0.5 * 0.05 + 0.3 * 0.2 + 0.2 * 0.4
    E2 = 2 * (0.5 * 0.05**2 + 0.3 * 0.2**2 + 0.2 * 0.4**2)
    g = qn.queue_mg1(3.0, S, E2 / S**2 - 1)
    assert r.response_time == pytest.approx(g.response_time, rel=1e-13)


@pytest.mark.parametrize("m", [1, 2, 3, 8, 64, 500, 5000])
@pytest.mark.parametrize("rho", [0.01, 0.5, 0.9, 0.999])
def test_mmm_matches_the_definitions_in_50_digits(m, rho):
    S = 0.01
    lam = rho * m / S
    ks = [0, 1, m // 2, m, m + 1, m + 50]
    p0, C, L, pk = _mmm_mp(lam, S, m, ks)
    r = qn.single_queue(lam, S, m, states=ks)
    assert r.method == ("mm1" if m == 1 else "mmm")
    # the log-space weights keep about sqrt(m) eps (m = 5000: 1e-13); C as test_open
    assert r.empty_probability == pytest.approx(p0, rel=1e-12, abs=1e-300)
    assert r.wait_probability == pytest.approx(C, rel=max(1e-12, 1e-13 / (1 - rho)))
    assert r.queue_length == pytest.approx(L, rel=max(1e-12, 1e-13 / (1 - rho)))
    np.testing.assert_allclose(r.state_probabilities, pk, rtol=1e-11, atol=1e-300)


def test_mminf_poisson_state_probabilities_at_huge_load():
    """a = 1e6 jobs in service: the window a +- 40 sqrt(a) + 60 holds the mass; p_k at the
    mode and 3 standard deviations away against 50-digit Poisson probabilities."""
    a = 1e6
    ks = [int(a), int(a) + 3000, int(a) - 3000, 0]
    r = qn.single_queue(a, 1.0, math.inf, states=ks)
    assert r.method == "mminf"
    with mpmath.workdps(50):
        ref = [float(mpmath.exp(-a + k * mpmath.log(a) - mpmath.loggamma(k + 1))) for k in ks]
    np.testing.assert_allclose(r.state_probabilities, ref, rtol=1e-10, atol=0)
    assert r.state_probabilities[-1] == 0.0  # e^-1e6 underflows, honestly
    assert r.queue_length == a and r.response_time == 1.0 and r.waiting_time == 0.0


def test_mginf_is_insensitive():
    r = qn.single_queue(30, 0.2, math.inf, scv=4.0, states=range(10))
    e = qn.single_queue(30, 0.2, math.inf, states=range(10))
    assert r.method == "mginf" and r.scv == 4.0
    np.testing.assert_array_equal(r.state_probabilities, e.state_probabilities)
    assert r.utilization == pytest.approx(6.0, rel=1e-15)  # mean busy servers


def test_mmmk_matches_exact_rationals():
    for lam, S, m, K in [(3, 0.5, 2, 5), (40, 0.025, 3, 7), (7, 1, 4, 12), (1, 1, 1, 10)]:
        p = _bd_fractions(lam, S, m, K)
        r = qn.queue_mmmk(lam, S, m, K)
        np.testing.assert_allclose(r.state_probabilities, [float(x) for x in p], rtol=1e-14)
        X = Fraction(lam) * (1 - p[-1])
        L = sum(n * x for n, x in enumerate(p))
        Lq = sum(max(n - m, 0) * x for n, x in enumerate(p))
        assert r.throughput == pytest.approx(float(X), rel=1e-14)
        assert r.queue_length == pytest.approx(float(L), rel=1e-14)
        assert r.waiting_jobs == pytest.approx(float(Lq), rel=1e-13)
        assert r.response_time == pytest.approx(float(L / X), rel=1e-14)
        waits = sum(p[m:K]) / (1 - p[-1]) if K > m else 0
        assert r.wait_probability == pytest.approx(float(waits), rel=1e-13)


def test_reference_case_mm2_5():
    """data/reference/mmmk_web_example_3_2_2_5.json (exact rationals; Octave's digits)."""
    case = load_case("mmmk_web_example_3_2_2_5")
    inp = case["inputs"]
    r = qn.single_queue(inp["arrival_rate"], inp["service_time"], inp["servers"], inp["capacity"])
    for key, value in case["expected"].items():
        tol = case["tolerance"]
        np.testing.assert_allclose(
            getattr(r, key), value, rtol=tol["rel"], atol=tol["abs"], err_msg=key
        )
    p = _bd_fractions(3, Fraction(1, 2), 2, 5)
    assert float(p[0]) == pytest.approx(case["expected"]["empty_probability"], rel=1e-15)


def test_loss_system_is_erlang_b_for_any_service_law():
    for scv in (0.0, 1.0, 3.0):
        r = qn.single_queue(12, 0.5, 8, 8, scv=scv)
        assert r.method == ("mmmk" if scv == 1.0 else "mgmm")
        assert r.loss_probability == pytest.approx(float(qn.erlang_b(8, 6.0)), rel=1e-13)
        assert r.waiting_time == 0.0 and r.wait_probability == 0.0
        assert r.response_time == pytest.approx(0.5, rel=1e-14)


def test_mm1k_overloaded_is_stable():
    r = qn.queue_mm1k(300, 0.01, 20)  # a = 3
    a = 3.0
    pK = (1 - a) * a**20 / (1 - a**21)
    assert r.loss_probability == pytest.approx(pK, rel=1e-13)
    assert r.throughput == pytest.approx(300 * (1 - pK), rel=1e-13)
    assert r.utilization == pytest.approx(1 - r.empty_probability, rel=1e-13)


def test_no_traffic_limits():
    r = qn.queue_mmmk(0, 0.1, 2, 4)
    assert (r.empty_probability, r.throughput, r.response_time, r.waiting_time) == (1, 0, 0.1, 0)
    np.testing.assert_array_equal(r.state_probabilities, [1, 0, 0, 0, 0])
    r = qn.queue_mmm(0, 0.1, 3, states=[0, 1])
    assert r.empty_probability == 1.0 and r.response_time == 0.1
    np.testing.assert_array_equal(r.state_probabilities, [1, 0])
    assert qn.queue_mminf(0, 0.1).empty_probability == 1.0


# ---- invariants ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lam", "S", "m", "K"),
    [(3, 0.5, 2, 5), (90, 0.01, 1, 30), (1e4, 1e-3, 8, 40), (5, 1, 3, 3), (0.3, 2, 6, 50)],
)
def test_finite_queue_laws(lam, S, m, K):
    r = qn.single_queue(lam, S, m, K)
    assert r.state_probabilities.sum() == pytest.approx(1.0, rel=1e-14)
    n = np.arange(K + 1)
    assert r.queue_length == pytest.approx(n @ r.state_probabilities, rel=1e-13)
    assert r.queue_length == pytest.approx(r.throughput * r.response_time, rel=1e-13)  # Little
    assert r.waiting_jobs == pytest.approx(r.throughput * r.waiting_time, rel=1e-13)
    busy = np.minimum(n, m) @ r.state_probabilities
    assert r.busy_servers == pytest.approx(busy, rel=1e-13)  # utilisation law X S
    assert r.utilization == pytest.approx(busy / m, rel=1e-13)
    assert r.response_time == pytest.approx(r.waiting_time + S, rel=1e-13)


@pytest.mark.parametrize(("lam", "S", "m"), [(80, 0.01, 1), (30, 0.1, 4), (900, 1.0, 1000)])
def test_infinite_queue_laws(lam, S, m):
    r = qn.single_queue(lam, S, m, states=range(m + 3000))
    assert r.state_probabilities.sum() == pytest.approx(1.0, rel=1e-12)
    assert r.queue_length == pytest.approx(np.arange(m + 3000) @ r.state_probabilities, rel=1e-10)
    assert r.queue_length == pytest.approx(r.throughput * r.response_time, rel=1e-14)
    assert r.busy_servers == pytest.approx(lam * S, rel=1e-15)
    assert r.empty_probability == r.state_probabilities[0]


def test_finite_capacity_tends_to_the_infinite_queue():
    inf = qn.single_queue(30, 0.1, 4)  # rho = 0.75
    last = None
    for K in (4, 8, 16, 32, 64, 128, 256):
        r = qn.single_queue(30, 0.1, 4, K)
        err = abs(r.response_time - inf.response_time)
        assert last is None or err < last
        last = err
    assert r.response_time == pytest.approx(inf.response_time, rel=1e-14)
    assert r.empty_probability == pytest.approx(inf.empty_probability, rel=1e-14)
    assert r.wait_probability == pytest.approx(inf.wait_probability, rel=1e-13)


def test_engset_tends_to_erlang_b_with_many_sources():
    A = 6.0
    prev = None
    for n in (20, 200, 2000, 20000, 200000):
        e = float(qn.engset(8, A / n, n))
        err = abs(e - float(qn.erlang_b(8, A)))
        assert prev is None or err < prev
        prev = err
    assert prev < 2e-5  # the error falls as 1 / n: 1.1e-5 at n = 2e5
    assert float(qn.engset(3, 0.7, 3)) == 0.0  # m >= n: never all busy at an arrival


def test_engset_matches_the_binomial_definition():
    """P = a^m C(n-1, m) / sum_k a^k C(n-1, k): the call congestion."""
    for m, a, n in [(2, 0.3, 5), (5, 1.5, 12), (1, 0.1, 2), (10, 0.05, 40)]:
        exact = (
            Fraction(a) ** m
            * math.comb(n - 1, m)
            / sum(Fraction(a) ** k * math.comb(n - 1, k) for k in range(m + 1))
        )
        assert float(qn.engset(m, a, n)) == pytest.approx(float(exact), rel=1e-13)


def test_erlang_functions_vectorise_and_accept_zero_load():
    a = np.array([0.0, 0.5, 2.0])
    np.testing.assert_allclose(qn.erlang_b(2, a), [0.0, 0.25 / 2 / 1.625, 2 / 5], rtol=1e-14)
    assert qn.erlang_c(2, a[:2]).shape == (2,) and float(qn.erlang_c(2, 0.0)) == 0.0
    assert qn.engset(2, a, 5).shape == (3,)


# ---- numerics -----------------------------------------------------------------------------


def test_a_million_servers_at_light_load():
    r = qn.single_queue(10, 1.0, 10**6, states=[0, 10, 10**6, 10**6 + 5])
    assert r.empty_probability == pytest.approx(math.exp(-10), rel=1e-13)
    assert r.state_probabilities[1] == pytest.approx(math.exp(-10) * 10**10 / 3628800, rel=1e-12)
    assert r.state_probabilities[2] == 0.0 and r.state_probabilities[3] == 0.0
    assert r.response_time == 1.0


def test_near_saturation_and_geometric_tail():
    r = qn.single_queue(0.999999, 1.0, 1, states=[0, 10**7])
    assert r.state_probabilities[1] == pytest.approx(1e-6 * 0.999999**1e7, rel=1e-8)
    r = qn.single_queue(3.999999, 1.0, 4, states=[4, 4 + 10**6])
    ratio = r.state_probabilities[1] / r.state_probabilities[0]
    assert ratio == pytest.approx((3.999999 / 4) ** 10**6, rel=1e-9)
    assert np.isfinite(r.response_time) and r.response_time > 1e5


def test_huge_capacity_at_overload_does_not_overflow():
    r = qn.queue_mmmk(2.0, 1.0, 1, 100_000)  # a = 2: mass at K, a^K overflows
    assert r.loss_probability == pytest.approx(0.5, rel=1e-12)
    assert r.throughput == pytest.approx(1.0, rel=1e-12)
    assert np.isfinite(r.state_probabilities).all() and r.empty_probability == 0.0


def test_too_many_states_is_refused_before_allocating():
    with pytest.raises(
        LatticeTooLargeError, match=r"state probabilities p_n, n = 0\.\.10000000000"
    ):
        qn.queue_mmmk(1.0, 1.0, 1, 10**10)


# ---- results ------------------------------------------------------------------------------


def test_result_is_frozen_and_tabulates():
    r = qn.single_queue(3, 0.5, 2, 5)
    with pytest.raises(AttributeError):
        r.throughput = 1.0
    with pytest.raises(ValueError, match="read-only"):
        r.state_probabilities[0] = 1.0
    df = r.to_frame()
    assert df.loc[0, "method"] == "mmmk" and df.loc[0, "capacity"] == 5
    st = r.to_frame("states")
    assert list(st["k"]) == list(range(6)) and st["probability"].sum() == pytest.approx(1.0)
    assert qn.single_queue(3, 0.1).to_frame("states").empty
    with pytest.raises(InvalidModelError, match="level must be 'summary' or 'states'"):
        r.to_frame("station")
    text = repr(r)
    assert "method='mmmk'" in text and "k=0..5" in text and "K=5" in text
    assert "K=inf" in repr(qn.single_queue(3, 0.1)) and "m=inf" in repr(
        qn.single_queue(3, 0.1, math.inf)
    )
    assert r.offered_load == pytest.approx(1.5)


# ---- dispatch -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "method"),
    [
        ((1, 0.1), {}, "mm1"),
        ((1, 0.1), {"scv": 0.5}, "mg1"),
        ((1, 0.1, 3), {}, "mmm"),
        ((1, 0.1, 3), {"scv": 2.0}, "mgm.allen_cunneen.approximate"),
        ((1, 0.1, math.inf), {}, "mminf"),
        ((1, 0.1, math.inf), {"scv": 0.0}, "mginf"),
        ((1, 0.1, 1, 4), {}, "mm1k"),
        ((1, 0.1, 3, 4), {}, "mmmk"),
        ((1, 0.1, 3, 3), {"scv": 0.0}, "mgmm"),
        ((1, 0.1, 1, math.inf), {}, "mm1"),
    ],
)
def test_single_queue_dispatch(args, kwargs, method):
    assert qn.single_queue(*args, **kwargs).method == method


# ---- refusals: every message ---------------------------------------------------------------


def test_refusals_of_single_queue():
    cases = [
        ((1, 0.1, 3, 2), {}, InvalidModelError,
         r"capacity K = 2 is below servers m = 3: K counts the jobs in service too.*capacity >= 3"),
        ((1, 0.1, 2, 5), {"scv": 0.5}, InvalidModelError,
         r"capacity K = 5 with scv = 0\.5 \(an M/G/2/5 queue\) is not supported.*scv=1\.0"),
        ((1, 0.1), {"scv": -0.1}, InvalidModelError, r"scv must be finite and >= 0.*-0\.1"),
        ((1, 0.1), {"scv": math.nan}, InvalidModelError, r"scv must be finite and >= 0.*nan"),
        ((1, 0.1), {"scv": "1"}, InvalidTypeError, r"scv must be a number >= 0"),
        ((1, 0.1, 2.5), {}, InvalidModelError,
         r"servers must be an integer >= 1, or math\.inf .*got 2\.5"),
        ((1, 0.1, 0), {}, InvalidModelError, r"servers must be an integer >= 1.*got 0"),
        ((1, 0.1, "2"), {}, InvalidTypeError, r"servers must be an integer >= 1.*str"),
        ((1, 0.1, True), {}, InvalidTypeError, r"servers must be an integer >= 1.*True"),
        ((20, 0.1, 2), {}, UnstableModelError,
         r"M/M/2 queue is saturated: utilisation rho = .* = 1 >= 1.*arrival_rate < m / S = 20/s"),
        ((20, 0.1), {"scv": 0.2}, UnstableModelError, r"M/G/1 queue is saturated"),
        ((30, 0.1, 2), {"scv": 0.2}, UnstableModelError, r"M/G/2 queue is saturated.*1\.5 >= 1"),
        ((1, 0.1, math.inf, 5), {}, InvalidModelError,
         r"capacity = 5 with servers = inf: an infinite-server station never waits"),
        ((1, 0.1, 2, 2.5), {}, InvalidModelError, r"capacity must be an integer >= 1, got 2\.5"),
        ((1, 0.1, 2, math.nan), {}, InvalidModelError,
         r"capacity must be a finite integer K >= servers = 2"),
        ((1, 0.1, 2, "8"), {}, InvalidTypeError, r"capacity must be an integer K >= servers = 2"),
        ((1, 0.1), {"scv": 0.5, "states": [0]}, InvalidModelError,
         r"states: the state probabilities of an M/G/1 queue with scv = 0\.5 depend"),
        ((1, 0.1, 3), {"scv": 0.5, "exact_only": True}, InvalidModelError,
         r"exact_only=True, but the M/G/3 queue .* Allen-Cunneen"),
        ((1, 0.1), {"exact_only": 1}, InvalidTypeError, r"exact_only must be True or False"),
        ((1, 0.1, 2, 4), {"states": [5]}, InvalidModelError,
         r"states\[0\] = 5 exceeds the capacity K = 4"),
        ((1, 0.1), {"states": [0, -1]}, InvalidModelError,
         r"states\[1\] must be an integer >= 0, got -1"),
        ((1, 0.1), {"states": 5}, InvalidTypeError, r"states must be a sequence of numbers of"),
        ((-1, 0.1), {}, InvalidModelError, r"arrival_rate must be >= 0, got -1"),
        ((1, 0), {}, InvalidModelError, r"service_time must be > 0, got 0"),
        (("5 MB/s", 0.1), {}, UnitError, r"arrival_rate"),
        ((1, "5 MB"), {}, UnitError, r"service_time"),
    ]  # fmt: skip
    for args, kwargs, exc, pattern in cases:
        with pytest.raises(exc, match=pattern):
            qn.single_queue(*args, **kwargs)


def test_refusals_of_the_kernels():
    with pytest.raises(UnstableModelError, match=r"M/M/1 queue is saturated"):
        qn.queue_mm1(100, 0.01)
    with pytest.raises(UnstableModelError, match=r"M/H/1 queue is saturated"):
        qn.queue_mh1(100, [0.01], [1.0])
    with pytest.raises(InvalidModelError, match="phase_probabilities must sum to 1, they sum"):
        qn.queue_mh1(1, [0.1, 0.2], [0.5, 0.4])
    with pytest.raises(InvalidModelError, match="phase_probabilities has 1 entries but"):
        qn.queue_mh1(1, [0.1, 0.2], [1.0])
    with pytest.raises(InvalidModelError, match=r"phase_probabilities\[1\] must be in \[0, 1\]"):
        qn.queue_mh1(1, [0.1, 0.2], [0.5, 1.5])
    with pytest.raises(InvalidModelError, match="phase_service_times is empty"):
        qn.queue_mh1(1, [], [])
    with pytest.raises(InvalidModelError, match=r"phase_service_times\[0\] must be > 0"):
        qn.queue_mh1(1, [0.0], [1.0])
    with pytest.raises(InvalidTypeError, match="phase_probabilities must be a sequence"):
        qn.queue_mh1(1, [0.1], "1")
    with pytest.raises(InvalidModelError, match=r"capacity K = 3 with scv = 2\.0"):
        qn.queue_mmmk(1, 0.1, 2, 3, scv=2.0)
    with pytest.raises(UnstableModelError, match=r"a = 2\.0 Erlangs >= m = 2 servers"):
        qn.erlang_c(2, 2.0)
    with pytest.raises(UnstableModelError, match=r"a\[1\] = 3\.0 Erlangs >= m = 2"):
        qn.erlang_c(2, [1.0, 3.0])
    with pytest.raises(InvalidModelError, match=r"a\[0\] must be a finite offered load .* nan"):
        qn.erlang_b(2, [math.nan])
    with pytest.raises(InvalidModelError, match=r"a must be a finite offered load .* inf"):
        qn.erlang_b(2, math.inf)
    with pytest.raises(InvalidTypeError, match="a must be an offered load in Erlangs .*True"):
        qn.erlang_b(2, True)
    with pytest.raises(InvalidModelError, match="m must be an integer >= 1, got 1.5"):
        qn.erlang_b(1.5, 1.0)
    with pytest.raises(InvalidTypeError, match="got an array of dtype <U1"):
        qn.erlang_b(2, ["x"])
    with pytest.raises(InvalidTypeError, match="got an array of dtype object"):
        qn.erlang_c(2, [1.0, [2.0, 3.0]])


def test_validators_messages():
    assert as_scv(0) == 0.0
    with pytest.raises(InvalidTypeError, match=r"scv must be a number >= 0 .* got True"):
        as_scv(True)
    np.testing.assert_array_equal(as_scvs([0, 1.5], "scv"), [0, 1.5])
    with pytest.raises(InvalidModelError, match=r"scv\[1\] must be finite and >= 0.*-1"):
        as_scvs([0, -1], "scv")
    with pytest.raises(InvalidTypeError, match="scv must be a sequence of numbers >= 0"):
        as_scvs("1", "scv")
    with pytest.raises(InvalidModelError, match=r"scv must be 1-D, got shape \(1, 2\)"):
        as_scvs([[1, 2]], "scv")
    np.testing.assert_array_equal(as_integers([1, -2, 3.0], "p"), [1, -2, 3])
    with pytest.raises(InvalidModelError, match=r"p\[1\] must be an integer, got 1\.5"):
        as_integers([0, 1.5], "p")
    with pytest.raises(InvalidTypeError, match=r"p\[0\] must be an integer, got '1'"):
        as_integers(["1"], "p")
    with pytest.raises(InvalidTypeError, match=r"p\[0\] must be an integer, got True"):
        as_integers([True], "p")
    with pytest.raises(InvalidTypeError, match="p must be a sequence of integers"):
        as_integers(3, "p")
    with pytest.raises(InvalidModelError, match=r"p must be 1-D"):
        as_integers([[1]], "p")
    with pytest.raises(InvalidModelError, match=r"p\[0\] must be an integer, got nan"):
        as_integers([math.nan], "p")
    with pytest.raises(InvalidModelError, match=r"p\[0\] must be at most 2\^53"):
        as_integers([2**60], "p")
