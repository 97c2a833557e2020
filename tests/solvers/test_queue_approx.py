"""Approximate single queues and the exact asymmetric M/M/m chain
(qnmodel.solvers.queue_approx): limits where the approximations are exact, their error
measured against the simulator (M/G/m, Allen-Cunneen) and against the exact chain (GNU
Octave's asymmetric M/M/m approximation, ``qsammm``), the chain against Ciw's simulation,
and the refusals.

The measured errors quoted in the docstrings of :func:`qnmodel.queue_mgm` and
:func:`qnmodel.queue_ammm` are what these tests compute (seeded: they reproduce them)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError, UnstableModelError
from qnmodel.simulation import Deterministic, Lognormal

# ---- Allen-Cunneen M/G/m -----------------------------------------------------------------


def test_allen_cunneen_is_exact_for_one_server_and_exponential_service():
    for scv in (0.0, 0.5, 4.0):
        a, b = qn.queue_mgm(70, 0.01, 1, scv), qn.queue_mg1(70, 0.01, scv)
        assert a.response_time == pytest.approx(b.response_time, rel=1e-14)
    a, b = qn.queue_mgm(250, 0.01, 3, 1.0), qn.queue_mmm(250, 0.01, 3)
    assert a.response_time == pytest.approx(b.response_time, rel=1e-14)
    assert a.method == "mgm.allen_cunneen.approximate"
    assert math.isnan(a.empty_probability) and a.states is None


#: the documented family: m uniform in 2..8, rho uniform in [0.3, 0.95], service laws in
#: turn constant (c^2 = 0) and lognormal with c^2 = 0.25, 2.25, 4; S = 10 ms
AC_CASES, AC_SEED = 36, 20260
#: the documented errors of R (relative, %): median and worst, and the slack that covers
#: another platform's libm (the seeds fix everything else)
AC_MEDIAN, AC_WORST, AC_SLACK = 0.78, 9.20, 0.3


def _ac_family():
    rng = np.random.default_rng(AC_SEED)
    laws = [(Deterministic(), 0.0), (Lognormal(0.5), 0.25), (Lognormal(1.5), 2.25),
            (Lognormal(2.0), 4.0)]  # fmt: skip
    for i in range(AC_CASES):
        m = int(rng.integers(2, 9))
        rho = float(rng.uniform(0.3, 0.95))
        law, scv = laws[i % 4]
        yield i, m, rho, law, scv


def test_allen_cunneen_error_against_the_simulator():
    """The error quoted in ``queue_mgm``'s docstring: 10 replications of ~100,000
    completions each per queue (the response time's 95 % half-width is printed)."""
    S = 0.01
    errs_R, errs_W, hw = [], [], []
    for i, m, rho, law, scv in _ac_family():
        lam = rho * m / S
        net = qn.Network.from_demands([S], servers=[m])
        sim = qn.simulate(
            net, arrival_rate=lam, service=law, seed=AC_SEED + i, run_length=1e5 / lam
        )
        R_sim = float(sim.response_time[0])
        ac = qn.single_queue(lam, S, m, scv=scv)
        errs_R.append(100 * (ac.response_time - R_sim) / R_sim)
        errs_W.append(100 * (ac.waiting_time - (R_sim - S)) / (R_sim - S))
        hw.append(100 * float(sim.response_time_halfwidth[0]) / R_sim)
        print(
            f"m={m} rho={rho:.3f} scv={scv}: R error {errs_R[-1]:+.2f} % (+-{hw[-1]:.2f} %),"
            f" W error {errs_W[-1]:+.1f} %"
        )
    aR, aW = np.abs(errs_R), np.abs(errs_W)
    k = int(np.argmax(aR))
    print(
        f"Allen-Cunneen R: median |error| {np.median(aR):.2f} %, worst {errs_R[k]:+.2f} % "
        f"(case {k}); W: median {np.median(aW):.1f} %, worst {aW.max():.1f} %; "
        f"CI half-width median {np.median(hw):.2f} %"
    )
    assert abs(np.median(aR) - AC_MEDIAN) <= AC_SLACK
    assert abs(aR.max() - AC_WORST) <= AC_SLACK


# ---- asymmetric M/M/m ---------------------------------------------------------------------


def test_exact_asymmetric_chain_with_equal_servers_is_mmm():
    for m, rho in [(1, 0.5), (2, 0.3), (4, 0.9), (6, 0.99)]:
        S = 0.02
        lam = rho * m / S
        a, b = qn.queue_ammm(lam, [S] * m), qn.single_queue(lam, S, m)
        for f in ("response_time", "queue_length", "waiting_jobs", "empty_probability",
                  "wait_probability", "busy_servers"):  # fmt: skip
            assert getattr(a, f) == pytest.approx(getattr(b, f), rel=1e-11), (m, rho, f)
        np.testing.assert_allclose(a.server_utilization, rho, rtol=1e-11)


def test_exact_asymmetric_chain_laws():
    s = np.array([0.01, 0.03, 0.05])
    lam = 0.8 * (1 / s).sum()
    r = qn.queue_ammm(lam, s)
    assert r.method == "ammm"
    # every arrival is served: sum_i U_i / s_i = lambda; Little's law; busy = sum U_i
    assert (r.server_utilization / s).sum() == pytest.approx(lam, rel=1e-12)
    assert r.queue_length == pytest.approx(lam * r.response_time, rel=1e-14)
    assert r.busy_servers == pytest.approx(r.server_utilization.sum(), rel=1e-14)
    assert r.queue_length - r.waiting_jobs == pytest.approx(r.busy_servers, rel=1e-12)
    # a lone job takes a random server: R -> mean(s_i) as lambda -> 0
    assert qn.queue_ammm(0, s).response_time == pytest.approx(s.mean(), rel=1e-15)
    assert qn.queue_ammm(1e-9, s).response_time == pytest.approx(s.mean(), rel=1e-6)
    assert qn.queue_ammm(0, s).empty_probability == 1.0


#: the documented family of the Octave approximation's error
AMMM_CASES, AMMM_SEED = 400, 20261


def test_octave_asymmetric_approximation_error():
    """The error quoted in ``queue_ammm``'s docstring: Octave's qsammm (method
    "approximate") against the exact chain, on m in 2..6, s_i spread 25:1, rho 0.05..0.95."""
    rng = np.random.default_rng(AMMM_SEED)
    errs, heavy = [], []
    for _ in range(AMMM_CASES):
        m = int(rng.integers(2, 7))
        s = 0.01 * np.exp(rng.uniform(math.log(0.2), math.log(5.0), size=m))
        rho = float(rng.uniform(0.05, 0.95))
        lam = rho * (1 / s).sum()
        ex, ap = qn.queue_ammm(lam, s), qn.queue_ammm(lam, s, method="approximate")
        e = 100 * (ap.response_time - ex.response_time) / ex.response_time
        errs.append(e)
        if rho >= 0.8:
            heavy.append(e)
    errs, heavy = np.array(errs), np.array(heavy)
    print(
        f"qsammm R error: median {np.median(errs):+.1f} %, worst {errs.min():+.1f} % "
        f"(max {errs.max():+.2f} %); rho >= 0.8: worst {heavy.min():+.1f} %"
    )
    assert np.median(errs) == pytest.approx(-12.4, abs=0.05)
    assert errs.min() == pytest.approx(-61.4, abs=0.05)
    assert heavy.min() == pytest.approx(-10.8, abs=0.05)
    assert errs.max() <= 1e-9  # never above the exact value


@pytest.mark.peer
def test_exact_asymmetric_chain_against_ciw():
    """Ciw (3.2.7) simulates the same queue: the service time is drawn for the server the
    job gets (it is attached before the draw), a free server is picked at random
    (``server_priority_functions`` returning a random number)."""
    import ciw

    s = [0.5, 1.0, 3.0]
    lam = 0.5 * sum(1 / x for x in s)  # rho = 0.5: the chain and Octave's differ by 14 %

    class PerServer(ciw.dists.Distribution):
        def sample(self, t=None, ind=None):
            return random.expovariate(1.0 / s[ind.server.id_number - 1])

    exact = qn.queue_ammm(lam, s)
    means = []
    for rep in range(6):
        ciw.seed(100 + rep)
        random.seed(200 + rep)
        net = ciw.create_network(
            arrival_distributions=[ciw.dists.Exponential(rate=lam)],
            service_distributions=[PerServer()],
            number_of_servers=[3],
            server_priority_functions=[lambda srv, ind: random.random()],
        )
        sim = ciw.Simulation(net)
        sim.simulate_until_max_time(8000.0)
        recs = [r for r in sim.get_all_records() if r.arrival_date > 800.0]
        means.append(np.mean([r.waiting_time + r.service_time for r in recs]))
    mean, sd = float(np.mean(means)), float(np.std(means, ddof=1))
    half = 2.571 * sd / math.sqrt(len(means))  # Student t, 5 degrees of freedom, 95 %
    approx = qn.queue_ammm(lam, s, method="approximate").response_time
    print(f"Ciw R = {mean:.4f} +- {half:.4f}; exact chain {exact.response_time:.4f}; "
          f"Octave's approximation {approx:.4f}")  # fmt: skip
    assert abs(mean - exact.response_time) <= half + 0.01 * exact.response_time
    assert abs(mean - approx) > half  # the simulation tells the two apart


def test_refusals_of_the_approximations():
    with pytest.raises(InvalidModelError, match="method must be one of 'exact', 'approximate'"):
        qn.queue_ammm(1, [0.1, 0.2], method="octave")
    with pytest.raises(InvalidModelError, match=r"service_times has 17 servers: the exact .*2\^m"):
        qn.queue_ammm(1, [0.1] * 17)
    assert qn.queue_ammm(1, [0.1] * 17, method="approximate").servers == 17
    with pytest.raises(InvalidModelError, match="service_times is empty"):
        qn.queue_ammm(1, [])
    with pytest.raises(InvalidModelError, match=r"service_times\[1\] must be > 0, got 0\.0"):
        qn.queue_ammm(1, [0.1, 0.0])
    with pytest.raises(UnstableModelError, match=r"asymmetric M/M/2 queue is saturated"):
        qn.queue_ammm(30, [0.1, 0.05])
    with pytest.raises(UnstableModelError, match=r"M/G/3 queue is saturated"):
        qn.queue_mgm(30, 0.1, 3, 0.5)
