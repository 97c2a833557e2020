"""Single queues and the Erlang functions against GNU Octave's ``queueing`` 1.2.7.

Two parts:

* Every ``%!test`` and ``%!demo`` block of ``qsmm1``, ``qsmmm``, ``qsmminf``, ``qsmm1k``,
  ``qsmmmk``, ``qsmg1``, ``qsmh1``, ``qsammm``, ``erlangb``, ``erlangc`` and ``engset``
  (``/usr/share/octave/packages/queueing-1.2.7/*.m``), translated by hand: each test names
  its block; ``fail(...)`` lines become our refusals. ``qsmg1`` and ``qsmh1`` have no
  blocks. The demos plot; here their numbers are asserted against closed forms (and, in
  the peer part, against Octave itself).
* One Octave process (``tests/octave.py``) runs >= 50 seeded random cases per function and
  the demos; each function's outputs are compared to 1e-12 relative (the worst difference
  is printed). Octave's ``qsmg1`` p_0 (exp(-rho)) and ``qsmh1`` (a second moment half the
  hyperexponential's) differ from ours on purpose: the tests pin down exactly what Octave
  computes instead.

Argument orders differ: Octave takes service *rates* mu = 1/S and ``erlangb(A, m)``; we take
mean service times and ``erlang_b(m, a)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError, InvalidTypeError, UnstableModelError
from tests.octave import octave_missing_reason, octave_vec, parse_tagged, run_octave

from .._ci import IN_CI

N_CASES = 60
#: Exact formulas in double precision on both sides (different but stable evaluation
#: orders): the brief's 1e-12 relative. Measured worst per function: see the printed lines.
RTOL = 1e-12


def _ctmc_birth_death(birth, death) -> np.ndarray:
    """Stationary vector of the birth-death generator (Octave's ``ctmc(ctmcbd(b, d))``),
    by a dense linear solve: pi Q = 0, sum pi = 1."""
    n = len(birth) + 1
    Q = np.zeros((n, n))
    for i, b in enumerate(birth):
        Q[i, i + 1] = b
    for i, d in enumerate(death):
        Q[i + 1, i] = d
    Q -= np.diag(Q.sum(axis=1))
    A = np.vstack([Q.T[:-1], np.ones(n)])
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    return np.linalg.solve(A, rhs)


# =========================================================================================
# Part 1: the Octave blocks, by hand
# =========================================================================================

# ---- qsmm1.m -----------------------------------------------------------------------------


def test_qsmm1_test1_capacity_exceeded_and_sizes():
    """qsmm1.m %!test 1: fail("qsmm1(10,5)"), fail("qsmm1(1,1)") ("capacity exceeded"),
    fail("qsmm1([2 2], [1 1 1])") ("incompatible size")."""
    with pytest.raises(UnstableModelError, match=r"rho = .* = 2 >= 1.*arrival_rate < m / S = 5/s"):
        qn.queue_mm1(10, 1 / 5)
    with pytest.raises(UnstableModelError, match=r"= 1 >= 1"):
        qn.queue_mm1(1, 1)
    # our kernels solve one queue: a vector of rates is refused by type, naming it
    with pytest.raises(InvalidTypeError, match="arrival_rate must be a number"):
        qn.queue_mm1([2, 2], [1, 1, 1])


def test_qsmm1_test2_no_arrivals():
    """qsmm1.m %!test 2: qsmm1(0, 1) gives U = 0, R = 1, Q = 0, X = 0, p0 = 1."""
    r = qn.queue_mm1(0, 1)
    assert (r.utilization, r.response_time, r.queue_length, r.throughput) == (0, 1, 0, 0)
    assert r.empty_probability == 1


def test_qsmm1_test3_p0_is_pk_at_zero():
    """qsmm1.m %!test 3: p0 of qsmm1(0.2, 1.0) equals pk = qsmm1(0.2, 1.0, 0)."""
    r = qn.queue_mm1(0.2, 1.0, states=[0])
    assert r.empty_probability == r.state_probabilities[0] == pytest.approx(0.8, rel=1e-15)


def test_qsmm1_demo1_state_probabilities():
    """qsmm1.m %!demo 1: lambda = 0.2, mu = 0.25, pk for k = 0..10 (plotted there)."""
    r = qn.queue_mm1(0.2, 1 / 0.25, states=range(11))
    rho = 0.8
    np.testing.assert_allclose(r.state_probabilities, (1 - rho) * rho ** np.arange(11), rtol=1e-14)


# ---- qsmmm.m -----------------------------------------------------------------------------


def test_qsmmm_demo1_bolch_figure_6_4():
    """qsmmm.m %!demo 1 (Bolch et al. figure 6.4, p. 220): rho = 0.9, lambda = 0.9,
    m = 1..21, mu = lambda / (rho m); jobs in the system Q and waiting X (R - 1/mu)."""
    lam, rho = 0.9, 0.9
    for m in range(1, 22):
        S = rho * m / lam
        r = qn.queue_mmm(lam, S, m)
        assert r.utilization == pytest.approx(rho, rel=1e-15)
        # Q = m rho + rho / (1 - rho) C  (the queue Octave plots), Lq = X (R - S)
        assert r.queue_length == pytest.approx(m * rho + rho / (1 - rho) * r.wait_probability)
        assert r.waiting_jobs == pytest.approx(r.throughput * (r.response_time - S), rel=1e-13)
    # the plotted curve starts at M/M/1: Q = rho / (1 - rho) = 9 and falls with m
    assert qn.queue_mmm(lam, rho / lam, 1).queue_length == pytest.approx(9.0, rel=1e-13)


def test_qsmmm_demo2_state_probabilities():
    """qsmmm.m %!demo 2: lambda = 0.5, mu = 0.15, m = 5, pk for k = 0..10."""
    lam, S, m = 0.5, 1 / 0.15, 5
    r = qn.queue_mmm(lam, S, m, states=range(11))
    a, rho = lam * S, lam * S / m
    p0 = 1 / (
        sum(a**k / math.factorial(k) for k in range(m)) + a**m / math.factorial(m) / (1 - rho)
    )
    expect = [
        p0 * a**k / math.factorial(k) if k <= m else p0 * a**m / math.factorial(m) * rho ** (k - m)
        for k in range(11)
    ]
    np.testing.assert_allclose(r.state_probabilities, expect, rtol=1e-13)
    assert r.empty_probability == pytest.approx(p0, rel=1e-13)


# ---- qsmminf.m ---------------------------------------------------------------------------


def test_qsmminf_test1_sizes_and_negative_rates():
    """qsmminf.m %!test 1: fail("qsmminf([1 2], [1 2 3])") (incompatible size) and
    fail("qsmminf([-1 -1], [1 1])") (">0")."""
    with pytest.raises(InvalidTypeError, match="arrival_rate must be a number"):
        qn.queue_mminf([1, 2], [1, 2, 3])
    with pytest.raises(InvalidModelError, match="arrival_rate must be >= 0, got -1"):
        qn.queue_mminf(-1, 1)


def test_qsmminf_demo1_poisson_and_mm5():
    """qsmminf.m %!demo 1: lambda = 5, mu = 1.1, k = 0..20: pk of M/M/inf and M/M/5."""
    lam, S = 5.0, 1 / 1.1
    inf = qn.queue_mminf(lam, S, states=range(21)).state_probabilities
    a = lam * S
    np.testing.assert_allclose(
        inf, [math.exp(-a) * a**k / math.factorial(k) for k in range(21)], rtol=1e-13
    )
    m5 = qn.queue_mmm(lam, S, 5, states=range(21)).state_probabilities
    assert m5.sum() < 1 and inf.sum() < 1
    # five servers queue more than infinitely many: more mass on large k
    assert m5[10:].sum() > inf[10:].sum()


# ---- qsmm1k.m ----------------------------------------------------------------------------


def test_qsmm1k_test1_balanced_load():
    """qsmm1k.m %!test 1: lambda = mu = 1, K = 10: Q = K/2, U = 1 - p0 (1e-7 there)."""
    r = qn.queue_mm1k(1, 1, 10)
    assert r.queue_length == pytest.approx(5.0, rel=1e-14)
    assert r.utilization == pytest.approx(1 - r.empty_probability, rel=1e-14)


def test_qsmm1k_test2_p0_and_pK_are_the_ends_of_pn():
    """qsmm1k.m %!test 2: lambda = 1, mu = 1.2, K = 10: p0 = prob(1), pK = prob(K+1)."""
    r = qn.queue_mm1k(1, 1 / 1.2, 10)
    assert r.empty_probability == r.state_probabilities[0]
    assert r.loss_probability == r.state_probabilities[10]
    a = 1 / 1.2
    assert r.empty_probability == pytest.approx((1 - a) / (1 - a**11), rel=1e-14)


def test_qsmm1k_test3_equals_the_markov_chain():
    """qsmm1k.m %!test 3: lambda = mu = 0.8, K = 10 against the birth-death CTMC
    (Octave: U, Q to 1e-4; here to 1e-13)."""
    r = qn.queue_mm1k(0.8, 1 / 0.8, 10)
    q = _ctmc_birth_death([0.8] * 10, [0.8] * 10)
    assert r.utilization == pytest.approx(1 - q[0], rel=1e-13)
    assert r.queue_length == pytest.approx(np.arange(11) @ q, rel=1e-13)


def test_qsmm1k_demo1_state_probabilities():
    """qsmm1k.m %!demo 1: lambda = 0.2, mu = 0.25, K = 10, pn for n = 0..10."""
    r = qn.queue_mm1k(0.2, 1 / 0.25, 10)
    a = 0.8
    np.testing.assert_allclose(
        r.state_probabilities, (1 - a) * a ** np.arange(11) / (1 - a**11), rtol=1e-14
    )


# ---- qsmmmk.m ----------------------------------------------------------------------------


def test_qsmmmk_test1_one_server_balanced():
    """qsmmmk.m %!test 1: lambda = mu = m = 1, k = 10: Q = k/2, U = 1 - p0."""
    r = qn.queue_mmmk(1, 1, 1, 10)
    assert r.queue_length == pytest.approx(5.0, rel=1e-14)
    assert r.utilization == pytest.approx(1 - r.empty_probability, rel=1e-14)


def test_qsmmmk_test2_one_server_equals_mm1k():
    """qsmmmk.m %!test 2: lambda = [1 0.8 2 9.2 0.01], mu = lambda + 0.17, k = 12:
    qsmm1k and qsmmmk(m = 1) agree (1e-5 there; bit for bit here: one kernel)."""
    for lam in (1, 0.8, 2, 9.2, 0.01):
        a, b = qn.queue_mm1k(lam, 1 / (lam + 0.17), 12), qn.queue_mmmk(lam, 1 / (lam + 0.17), 1, 12)
        for f in ("utilization", "response_time", "queue_length", "throughput"):
            assert getattr(a, f) == getattr(b, f)


def test_qsmmmk_test3_one_server_equals_mm1k_with_p0():
    """qsmmmk.m %!test 3: lambda = 0.9, mu = 0.75, k = 10: U R Q X p0 agree."""
    a, b = qn.queue_mmmk(0.9, 1 / 0.75, 1, 10), qn.queue_mm1k(0.9, 1 / 0.75, 10)
    for f in ("utilization", "response_time", "queue_length", "throughput", "empty_probability"):
        assert getattr(a, f) == getattr(b, f)


def test_qsmmmk_test4_equals_the_markov_chain():
    """qsmmmk.m %!test 4: lambda = 0.8, mu = 0.85, m = 3, k = 5 against the CTMC:
    U = sum q_n min(n, m) / m, Q = sum n q_n, p0 = q_0 (Octave: 1e-4; here 1e-13)."""
    lam, mu, m, k = 0.8, 0.85, 3, 5
    r = qn.queue_mmmk(lam, 1 / mu, m, k)
    q = _ctmc_birth_death([lam] * k, [mu * min(i, m) for i in range(1, k + 1)])
    n = np.arange(k + 1)
    assert r.utilization == pytest.approx(q @ (np.minimum(n, m) / m), rel=1e-13)
    assert r.queue_length == pytest.approx(n @ q, rel=1e-13)
    assert r.empty_probability == pytest.approx(q[0], rel=1e-13)


def test_qsmmmk_test5_web_example_40_30_3_7():
    """qsmmmk.m %!test 5 ("an example I found on the web"): lambda = 40, mu = 30, m = 3,
    k = 7: p0 = 0.255037, R = 0.036517 (printed to 6 decimals, checked to 1e-6 there)."""
    r = qn.queue_mmmk(40, 1 / 30, 3, 7)
    assert r.empty_probability == pytest.approx(0.255037, abs=1e-6)
    assert r.response_time == pytest.approx(0.036517, abs=1e-6)


def test_qsmmmk_test6_web_example_50_10_4_6():
    """qsmmmk.m %!test 6: lambda = 50, mu = 10, m = 4, k = 6: pK = 0.293543."""
    r = qn.queue_mmmk(50, 1 / 10, 4, 6)
    assert r.loss_probability == pytest.approx(0.293543, abs=1e-6)


def test_qsmmmk_test7_web_example_3_2_2_5():
    """qsmmmk.m %!test 7: lambda = 3, mu = 2, m = 2, k = 5: p0 = 0.179334, pK = 0.085113,
    Q = 2.00595 (1e-5), waiting time R - 1/mu = 0.230857."""
    r = qn.queue_mmmk(3, 1 / 2, 2, 5)
    assert r.empty_probability == pytest.approx(0.179334, abs=1e-6)
    assert r.loss_probability == pytest.approx(0.085113, abs=1e-6)
    assert r.queue_length == pytest.approx(2.00595, abs=1e-5)
    assert r.response_time - 0.5 == pytest.approx(0.230857, abs=1e-6)
    assert r.waiting_time == pytest.approx(0.230857, abs=1e-6)


def test_qsmmmk_demo1_state_probabilities():
    """qsmmmk.m %!demo 1: lambda = 0.2, mu = 0.25, m = 5, K = 20, pn for n = 0..10."""
    r = qn.queue_mmmk(0.2, 1 / 0.25, 5, 20)
    a = 0.8
    w = np.array([a**n / math.factorial(min(n, 5)) / 5 ** max(n - 5, 0) for n in range(21)])
    np.testing.assert_allclose(r.state_probabilities[:11], (w / w.sum())[:11], rtol=1e-13)


# ---- qsammm.m ----------------------------------------------------------------------------


def test_qsammm_test1_five_servers():
    """qsammm.m %!test 1: qsammm(73, [10 15 20 20 25]): U = 0.81 (1e-2), Q = 6.5278 (1e-4)."""
    r = qn.queue_ammm(73, [1 / 10, 1 / 15, 1 / 20, 1 / 20, 1 / 25], method="approximate")
    assert r.utilization == pytest.approx(0.81, abs=1e-2)
    assert r.queue_length == pytest.approx(6.5278, abs=1e-4)
    assert r.method == "ammm.approximate"


# ---- erlangb.m, erlangc.m, engset.m ------------------------------------------------------


def test_erlangb_test1_refusals():
    """erlangb.m %!test 1, line by line (Octave's erlangb(A, m) is our erlang_b(m, a))."""
    with pytest.raises(InvalidModelError, match="m must be an integer >= 1, got -1"):
        qn.erlang_b(-1, 1)  # erlangb(1, -1)
    with pytest.raises(InvalidModelError, match=r"a must be a finite offered load >= 0 .* -1"):
        qn.erlang_b(1, -1)  # erlangb(-1, 1)
    with pytest.raises(InvalidModelError, match="m must be an integer >= 1, got 0"):
        qn.erlang_b(0, 1)  # erlangb(1, 0)
    # erlangb(0, 1): Octave refuses a = 0; we return the limit B(m, 0) = 0 (no traffic, no
    # loss), a deliberate difference (a load sweep may start at 0)
    assert float(qn.erlang_b(1, 0)) == 0.0
    with pytest.raises(InvalidTypeError, match="a must be an offered load in Erlangs"):
        qn.erlang_b(1, "foo")  # erlangb('foo', 1)
    with pytest.raises(InvalidTypeError, match="m must be an integer >= 1"):
        qn.erlang_b("bar", 1)  # erlangb(1, 'bar')
    # erlangb([1 1], [1 1 1]) "common size": our m is one integer, a sequence is refused
    with pytest.raises(InvalidTypeError, match="m must be an integer >= 1"):
        qn.erlang_b([1, 1, 1], [1, 1])


def test_erlangc_test1_refusals():
    """erlangc.m %!test 1: fail("erlangc('foo',1)"), fail("erlangc(1,'bar')")."""
    with pytest.raises(InvalidTypeError, match="a must be an offered load in Erlangs"):
        qn.erlang_c(1, "foo")
    with pytest.raises(InvalidTypeError, match="m must be an integer >= 1"):
        qn.erlang_c("bar", 1)


def test_engset_test1_refusals():
    """engset.m %!test 1. The block calls ``erlangb`` (a copy of erlangb.m's block); its
    rules are engset's too (A > 0, m and n positive integers), so they are applied to
    :func:`qnmodel.engset` (Octave engset(A, m, n) is our engset(m, a, sources))."""
    with pytest.raises(InvalidModelError, match="m must be an integer >= 1, got -1"):
        qn.engset(-1, 1, 3)
    with pytest.raises(InvalidModelError, match=r"a must be a finite offered load >= 0 .* -1"):
        qn.engset(1, -1, 3)
    with pytest.raises(InvalidModelError, match="m must be an integer >= 1, got 0"):
        qn.engset(0, 1, 3)
    assert float(qn.engset(1, 0, 3)) == 0.0  # a = 0: the limit (Octave refuses)
    with pytest.raises(InvalidTypeError, match="a must be an offered load in Erlangs"):
        qn.engset(1, "foo", 3)
    with pytest.raises(InvalidTypeError, match="m must be an integer >= 1"):
        qn.engset("bar", 1, 3)
    with pytest.raises(InvalidModelError, match="sources must be an integer >= 1, got 0"):
        qn.engset(1, 1, 0)


# =========================================================================================
# Part 2: Octave itself, >= 50 random cases per function in one process
# =========================================================================================

_PRELUDE = r"""1;
function emit(tag, v)
  printf("%s", tag); printf(" %.17g", v); printf("\n");
end
function r = is_scalar(x)
  r = isscalar(x);
end
pkg load queueing
warning("off", "all");
"""


def _cases() -> dict[str, list[dict]]:
    """Seeded random cases, one list per Octave function."""
    rng = np.random.default_rng(20_260_427)
    c: dict[str, list[dict]] = {k: [] for k in (
        "qsmm1", "qsmmm", "qsmminf", "qsmm1k", "qsmmmk", "qsmg1", "qsmh1", "qsammm",
        "erlangb", "erlangc", "engset",
    )}  # fmt: skip
    for _ in range(N_CASES):
        S = float(10 ** rng.uniform(-4, 0))
        c["qsmm1"].append({"lam": float(rng.uniform(0.01, 0.98)) / S, "S": S})
        m = int(rng.integers(1, 21))
        c["qsmmm"].append({"lam": float(rng.uniform(0.02, 0.97)) * m / S, "S": S, "m": m})
        c["qsmminf"].append({"lam": float(rng.uniform(0.01, 60)) / S, "S": S})
        a = float(rng.uniform(0.05, 4.0))
        while abs(a - 1.0) < 0.02:  # Octave's (1-a)/(1-a^(K+1)) cancels near a = 1
            a = float(rng.uniform(0.05, 4.0))
        c["qsmm1k"].append({"lam": a / S, "S": S, "K": int(rng.integers(1, 41))})
        m = int(rng.integers(1, 11))
        # qsmmmk builds the CTMC generator and ctmcchkQ demands |row sums| <= 100 eps in
        # absolute terms: rates above a few per second fail there, so S is 1..10 s here
        S_k = float(10 ** rng.uniform(0, 1))
        c["qsmmmk"].append(
            {"lam": float(rng.uniform(0.05, 2.5)) * m / S_k, "S": S_k, "m": m,
             "K": m + int(rng.integers(0, 26))}
        )  # fmt: skip
        c["qsmg1"].append(
            {"lam": float(rng.uniform(0.01, 0.97)) / S, "S": S, "scv": float(rng.uniform(0, 5))}
        )
        k = int(rng.integers(1, 5))
        mu = 10 ** rng.uniform(-1, 2, size=k)
        alpha = rng.dirichlet(np.ones(k))
        mean = float(alpha @ (1 / mu))
        c["qsmh1"].append({"lam": float(rng.uniform(0.01, 0.95)) / mean, "mu": mu, "alpha": alpha})
        m = int(rng.integers(2, 7))
        mu = 10 ** rng.uniform(-1, 1, size=m)
        c["qsammm"].append({"lam": float(rng.uniform(0.05, 0.95) * mu.sum()), "mu": mu})
        m = int(rng.integers(1, 301))
        c["erlangb"].append({"m": m, "A": float(10 ** rng.uniform(-2, math.log10(3 * m)))})
        m = int(rng.integers(1, 301))
        c["erlangc"].append({"m": m, "A": float(rng.uniform(0.01, 0.99)) * m})
        c["engset"].append(
            {"m": int(rng.integers(1, 51)), "n": int(rng.integers(1, 81)),
             "A": float(10 ** rng.uniform(-2, 1))}
        )  # fmt: skip
    # exactly balanced M/M/1/K (Octave's a == 1 branch): lambda = mu
    for K in (1, 7, 30):
        c["qsmm1k"].append({"lam": 2.0, "S": 0.5, "K": K})
    return c


def _script(cases: dict[str, list[dict]]) -> str:
    lines = []
    for i, c in enumerate(cases["qsmm1"]):
        args = f"{c['lam']:.17g}, {1 / c['S']:.17g}"
        lines.append(f"[U R Q X p0] = qsmm1({args});")
        lines.append(f'emit("qsmm1_{i}", [U R Q X p0]);')
        lines.append(f'emit("qsmm1_{i}_pk", qsmm1({args}, 0:10));')
    for i, c in enumerate(cases["qsmmm"]):
        args = f"{c['lam']:.17g}, {1 / c['S']:.17g}, {c['m']}"
        lines.append(f"[U R Q X p0 pm] = qsmmm({args});")
        lines.append(f'emit("qsmmm_{i}", [U R Q X p0 pm]);')
        lines.append(f'emit("qsmmm_{i}_pk", qsmmm({args}, 0:{c["m"] + 10}));')
    for i, c in enumerate(cases["qsmminf"]):
        args = f"{c['lam']:.17g}, {1 / c['S']:.17g}"
        lines.append(f"[U R Q X p0] = qsmminf({args});")
        lines.append(f'emit("qsmminf_{i}", [U R Q X p0]);')
        lines.append(f'emit("qsmminf_{i}_pk", qsmminf({args}, 0:40));')
    for i, c in enumerate(cases["qsmm1k"]):
        args = f"{c['lam']:.17g}, {1 / c['S']:.17g}, {c['K']}"
        lines.append(f"[U R Q X p0 pK] = qsmm1k({args});")
        lines.append(f'emit("qsmm1k_{i}", [U R Q X p0 pK]);')
        lines.append(f'emit("qsmm1k_{i}_pk", qsmm1k({args}, 0:{c["K"]}));')
    for i, c in enumerate(cases["qsmmmk"]):
        args = f"{c['lam']:.17g}, {1 / c['S']:.17g}, {c['m']}, {c['K']}"
        lines.append(f"[U R Q X p0 pK] = qsmmmk({args});")
        lines.append(f'emit("qsmmmk_{i}", [U R Q X p0 pK]);')
        lines.append(f'emit("qsmmmk_{i}_pk", qsmmmk({args}, 0:{c["K"]}));')
    for i, c in enumerate(cases["qsmg1"]):
        x2 = c["S"] ** 2 * (1 + c["scv"])
        lines.append(f"[U R Q X p0] = qsmg1({c['lam']:.17g}, {c['S']:.17g}, {x2:.17g});")
        lines.append(f'emit("qsmg1_{i}", [U R Q X p0]);')
    for i, c in enumerate(cases["qsmh1"]):
        mu, al = octave_vec(c["mu"]), octave_vec(c["alpha"])
        lines.append(f"[U R Q X p0] = qsmh1({c['lam']:.17g}, {mu}, {al});")
        lines.append(f'emit("qsmh1_{i}", [U R Q X p0]);')
        mean = float(c["alpha"] @ (1 / c["mu"]))
        second = 2 * float(c["alpha"] @ (1 / c["mu"] ** 2))
        lines.append(f"[U R Q X p0] = qsmg1({c['lam']:.17g}, {mean:.17g}, {second:.17g});")
        lines.append(f'emit("qsmh1_{i}_g1", [U R Q X p0]);')
    for i, c in enumerate(cases["qsammm"]):
        lines.append(f"[U R Q X] = qsammm({c['lam']:.17g}, {octave_vec(c['mu'])});")
        lines.append(f'emit("qsammm_{i}", [U R Q X]);')
    for i, c in enumerate(cases["erlangb"]):
        lines.append(f'emit("erlangb_{i}", erlangb({c["A"]:.17g}, {c["m"]}));')
    for i, c in enumerate(cases["erlangc"]):
        lines.append(f'emit("erlangc_{i}", erlangc({c["A"]:.17g}, {c["m"]}));')
    for i, c in enumerate(cases["engset"]):
        lines.append(f'emit("engset_{i}", engset({c["A"]:.17g}, {c["m"]}, {c["n"]}));')
    # the demos, as Octave runs them
    lines += [
        'emit("demo_qsmm1", qsmm1(0.2, 0.25, 0:10));',
        "[U R Q X] = qsmmm(0.9, 0.9 ./ (0.9 .* (1:21)), 1:21);",
        'emit("demo_qsmmm1_Q", Q);',
        'emit("demo_qsmmm1_qlen", X .* (R - 1 ./ (0.9 ./ (0.9 .* (1:21)))));',
        'emit("demo_qsmmm2", qsmmm(0.5, 0.15, 5, 0:10));',
        'emit("demo_qsmminf_inf", qsmminf(5, 1.1, 0:20));',
        'emit("demo_qsmminf_m", qsmmm(5, 1.1, 5, 0:20));',
        'emit("demo_qsmm1k", qsmm1k(0.2, 0.25, 10, 0:10));',
        'emit("demo_qsmmmk", qsmmmk(0.2, 0.25, 5, 20, 0:10));',
    ]  # fmt: skip
    return _PRELUDE + "\n".join(lines)


@pytest.fixture(scope="module")
def octave():
    reason = octave_missing_reason("queueing")
    if reason is not None:
        msg = f"peer cross-check needs GNU Octave with 'queueing': {reason}"
        if IN_CI:
            pytest.fail(f"{msg} (CI=true: the peer must be installed)")
        pytest.skip(msg)
    cases = _cases()
    return cases, parse_tagged(run_octave(_script(cases), timeout=600))


def _compare(name: str, pairs, atol: float = 0.0) -> float:
    """Assert every (ours, theirs, label) pair to RTOL (plus ``atol``); print and return the
    worst relative difference (over values above ``atol``) and the worst absolute one."""
    worst = worst_abs = 0.0
    for ours, theirs, label in pairs:
        ours, theirs = np.atleast_1d(np.asarray(ours, float)), np.atleast_1d(theirs)
        np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=atol, err_msg=f"{name} {label}")
        if ours.size:
            diff = np.abs(ours - theirs)
            big = np.abs(theirs) > max(atol, 0.0)
            if big.any():
                worst = max(worst, float(np.max(diff[big] / np.abs(theirs[big]))))
            worst_abs = max(worst_abs, float(diff.max()))
    print(f"{name}: worst relative difference {worst:.3g}, worst absolute {worst_abs:.3g}")
    return worst


def _urqx(r):
    return [r.utilization, r.response_time, r.queue_length, r.throughput]


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")
def test_qsmm1_random(octave):
    cases, out = octave
    pairs = []
    for i, c in enumerate(cases["qsmm1"]):
        r = qn.queue_mm1(c["lam"], c["S"], states=range(11))
        pairs.append(([*_urqx(r), r.empty_probability], out[f"qsmm1_{i}"], i))
        pairs.append((r.state_probabilities, out[f"qsmm1_{i}_pk"], f"{i} pk"))
    _compare("qsmm1", pairs)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")
def test_qsmmm_random(octave):
    cases, out = octave
    pairs = []
    for i, c in enumerate(cases["qsmmm"]):
        r = qn.queue_mmm(c["lam"], c["S"], c["m"], states=range(c["m"] + 11))
        ours = [*_urqx(r), r.empty_probability, r.wait_probability]
        pairs.append((ours, out[f"qsmmm_{i}"], i))
        pairs.append((r.state_probabilities, out[f"qsmmm_{i}_pk"], f"{i} pk"))
    _compare("qsmmm", pairs)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")
def test_qsmminf_random(octave):
    cases, out = octave
    pairs = []
    for i, c in enumerate(cases["qsmminf"]):
        r = qn.queue_mminf(c["lam"], c["S"], states=range(41))
        pairs.append(([*_urqx(r), r.empty_probability], out[f"qsmminf_{i}"], i))
        pairs.append((r.state_probabilities, out[f"qsmminf_{i}_pk"], f"{i} pk"))
    _compare("qsmminf", pairs)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")
def test_qsmm1k_random(octave):
    cases, out = octave
    pairs = []
    for i, c in enumerate(cases["qsmm1k"]):
        r = qn.queue_mm1k(c["lam"], c["S"], c["K"])
        ours = [*_urqx(r), r.empty_probability, r.loss_probability]
        pairs.append((ours, out[f"qsmm1k_{i}"], i))
        pairs.append((r.state_probabilities, out[f"qsmm1k_{i}_pk"], f"{i} pk"))
    _compare("qsmm1k", pairs)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")
def test_qsmmmk_random(octave):
    """U, R, Q, X to 1e-12 relative; the probabilities to 1e-12 relative or 1e-15 absolute:
    Octave solves the chain's linear system, so its small p_n are accurate in absolute
    terms only (p_0 = 4.27e-9 differs by 6.5e-9 relative in case 0; ours match 50-digit
    arithmetic to 1.6e-14 relative, ``test_queue.py``)."""
    cases, out = octave
    means, probs = [], []
    for i, c in enumerate(cases["qsmmmk"]):
        r = qn.queue_mmmk(c["lam"], c["S"], c["m"], c["K"])
        means.append((_urqx(r), out[f"qsmmmk_{i}"][:4], i))
        probs.append(([r.empty_probability, r.loss_probability], out[f"qsmmmk_{i}"][4:], i))
        probs.append((r.state_probabilities, out[f"qsmmmk_{i}_pk"], f"{i} pk"))
    _compare("qsmmmk U R Q X", means)
    _compare("qsmmmk p_n", probs, atol=1e-15)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")
def test_qsmg1_random(octave):
    """U, R, Q, X to 1e-12; Octave's p0 is exp(-rho), ours the M/G/1 value 1 - rho."""
    cases, out = octave
    pairs = []
    for i, c in enumerate(cases["qsmg1"]):
        r = qn.queue_mg1(c["lam"], c["S"], c["scv"])
        theirs = out[f"qsmg1_{i}"]
        pairs.append((_urqx(r), theirs[:4], i))
        rho = c["lam"] * c["S"]
        assert theirs[4] == pytest.approx(math.exp(-rho), rel=1e-14)
        assert r.empty_probability == pytest.approx(1 - rho, rel=1e-15)
    _compare("qsmg1", pairs)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")
def test_qsmh1_random(octave):
    """Ours equals Octave's qsmg1 fed the hyperexponential's second moment 2 sum alpha/mu^2;
    Octave's qsmh1 equals our M/G/1 with its second moment sum alpha/mu^2 (half of it)."""
    cases, out = octave
    pairs = []
    for i, c in enumerate(cases["qsmh1"]):
        r = qn.queue_mh1(c["lam"], 1 / c["mu"], c["alpha"])
        pairs.append((_urqx(r), out[f"qsmh1_{i}_g1"][:4], f"{i} vs qsmg1"))
        S = float(c["alpha"] @ (1 / c["mu"]))
        octave_scv = float(c["alpha"] @ (1 / c["mu"] ** 2)) / S**2 - 1
        if octave_scv >= 0:  # Octave's moment can fall below S^2 (a negative "variance")
            theirs = qn.queue_mg1(c["lam"], S, octave_scv)
            pairs.append((_urqx(theirs), out[f"qsmh1_{i}"][:4], f"{i} Octave qsmh1"))
        assert out[f"qsmh1_{i}"][1] < r.response_time  # Octave's variance is too small
    _compare("qsmh1", pairs)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")
def test_qsammm_random(octave):
    cases, out = octave
    pairs = []
    for i, c in enumerate(cases["qsammm"]):
        r = qn.queue_ammm(c["lam"], 1 / c["mu"], method="approximate")
        pairs.append((_urqx(r), out[f"qsammm_{i}"], i))
    _compare("qsammm", pairs)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")
def test_erlangb_random(octave):
    """To 1e-12 relative above the smallest normal double: below it Octave's recursion on
    1 / B overflows to B = 0 where ours keeps a subnormal (2.4e-319 in case 36)."""
    cases, out = octave
    pairs = [
        (qn.erlang_b(c["m"], c["A"]), out[f"erlangb_{i}"], i)
        for i, c in enumerate(cases["erlangb"])
    ]
    _compare("erlangb", pairs, atol=np.finfo(float).tiny)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")
def test_erlangc_random(octave):
    cases, out = octave
    pairs = [
        (qn.erlang_c(c["m"], c["A"]), out[f"erlangc_{i}"], i)
        for i, c in enumerate(cases["erlangc"])
    ]
    _compare("erlangc", pairs)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")
def test_engset_random(octave):
    cases, out = octave
    assert sum(c["m"] >= c["n"] for c in cases["engset"]) >= 3  # the zero branch is hit
    pairs = [
        (qn.engset(c["m"], c["A"], c["n"]), out[f"engset_{i}"], i)
        for i, c in enumerate(cases["engset"])
    ]
    _compare("engset", pairs)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")
def test_demos_as_octave_runs_them(octave):
    """The %!demo blocks' numbers, from Octave, against ours."""
    _, out = octave
    lam = 0.9
    mm = [qn.queue_mmm(lam, 0.9 * m / lam, m) for m in range(1, 22)]
    pairs = [
        (qn.queue_mm1(0.2, 4, states=range(11)).state_probabilities, out["demo_qsmm1"], "qsmm1"),
        ([r.queue_length for r in mm], out["demo_qsmmm1_Q"], "qsmmm 1 Q"),
        ([r.waiting_jobs for r in mm], out["demo_qsmmm1_qlen"], "qsmmm 1 qlen"),
        (qn.queue_mmm(0.5, 1 / 0.15, 5, states=range(11)).state_probabilities,
         out["demo_qsmmm2"], "qsmmm 2"),
        (qn.queue_mminf(5, 1 / 1.1, states=range(21)).state_probabilities,
         out["demo_qsmminf_inf"], "qsmminf inf"),
        (qn.queue_mmm(5, 1 / 1.1, 5, states=range(21)).state_probabilities,
         out["demo_qsmminf_m"], "qsmminf m"),
        (qn.queue_mm1k(0.2, 4, 10).state_probabilities, out["demo_qsmm1k"], "qsmm1k"),
        (qn.queue_mmmk(0.2, 4, 5, 20).state_probabilities[:11], out["demo_qsmmmk"], "qsmmmk"),
    ]  # fmt: skip
    _compare("demos", pairs)
