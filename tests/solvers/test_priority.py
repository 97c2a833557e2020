"""The M/G/1 priority queue (qnmodel.priority_queue): closed-form reductions, exact
rationals, Kleinrock's conservation law, stability per level, refusals, and Ciw's
simulation with priority classes (non-preemptive and preemption "resume")."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError, InvalidTypeError
from tests.reference import load_case

DISCIPLINES = ("nonpreemptive", "preemptive_resume")


def _cobham_fractions(lam, S, scv, prio, preemptive):
    """R_c of Cobham's (non-preemptive) or the preemptive-resume formula, in rationals."""
    lam, S, scv = ([Fraction(str(x)) for x in v] for v in (lam, S, scv))  # decimal inputs
    E2 = [s * s * (1 + c) for s, c in zip(S, scv, strict=True)]
    rho = [x * s for x, s in zip(lam, S, strict=True)]
    out = []
    for c, p in enumerate(prio):
        above = sum((rho[i] for i in range(len(prio)) if prio[i] < p), Fraction(0))
        upto = above + sum((rho[i] for i in range(len(prio)) if prio[i] == p), Fraction(0))
        if preemptive:
            w0 = sum(lam[i] * E2[i] / 2 for i in range(len(prio)) if prio[i] <= p)
            out.append(S[c] / (1 - above) + w0 / ((1 - above) * (1 - upto)))
        else:
            w0 = sum(lam[i] * E2[i] / 2 for i in range(len(prio)))
            out.append(w0 / ((1 - above) * (1 - upto)) + S[c])
    return out


# ---- reductions ---------------------------------------------------------------------------


@pytest.mark.parametrize("discipline", DISCIPLINES)
def test_one_class_is_pollaczek_khinchine(discipline):
    r = qn.priority_queue(["70/s"], ["10 ms"], scv=[0.3], discipline=discipline)
    g = qn.queue_mg1(70, 0.01, 0.3)
    assert r.response_time[0] == pytest.approx(g.response_time, rel=1e-14)
    assert r.waiting_time[0] == pytest.approx(g.waiting_time, rel=1e-14)
    assert r.queue_length[0] == pytest.approx(g.queue_length, rel=1e-14)
    assert r.method == f"priority.{discipline}"


@pytest.mark.parametrize("discipline", DISCIPLINES)
def test_equal_priorities_are_fcfs_with_the_mixed_service_law(discipline):
    lam, S, scv = np.array([30.0, 10.0, 5.0]), np.array([0.01, 0.03, 0.02]), [1.0, 0.0, 4.0]
    r = qn.priority_queue(lam, S, [2, 2, 2], scv, discipline=discipline)
    E2 = S**2 * (1 + np.asarray(scv))
    W = float(lam @ E2) / 2 / (1 - float(lam @ S))  # M/G/1 FCFS: lambda E[S^2] / (2 (1 - rho))
    np.testing.assert_allclose(r.waiting_time, W, rtol=1e-14)
    np.testing.assert_allclose(r.response_time, W + S, rtol=1e-14)


def test_preemptive_top_class_sees_only_itself():
    r = qn.priority_queue(
        [40, 30], [0.01, 0.02], [0, 1], [0.5, 2.0], discipline="preemptive_resume"
    )
    alone = qn.queue_mg1(40, 0.01, 0.5)
    assert r.response_time[0] == pytest.approx(alone.response_time, rel=1e-14)


def test_identical_exponential_classes_keep_the_mm1_total():
    """Work-conserving order of exponential jobs of one rate does not change how many are
    in the system: sum_c L_c is M/M/1's rho / (1 - rho) for both disciplines."""
    for disc in DISCIPLINES:
        r = qn.priority_queue([20, 30, 25], [0.01, 0.01, 0.01], [1, 0, 2], discipline=disc)
        assert r.queue_length.sum() == pytest.approx(0.75 / 0.25, rel=1e-13)


def test_conservation_law_of_the_nonpreemptive_waits():
    """Kleinrock: sum_c rho_c W_c = rho W_0 / (1 - rho), whatever the order."""
    lam, S, scv = [30, 20, 10, 5], [0.005, 0.01, 0.02, 0.03], [0.2, 1, 3, 0]
    rho = float(np.dot(lam, S))
    for prio in ([0, 1, 2, 3], [3, 2, 1, 0], [1, 0, 1, 0], [5, -2, 7, 0]):
        r = qn.priority_queue(lam, S, prio, scv)
        lhs = float((np.asarray(lam) * np.asarray(S)) @ r.waiting_time)
        assert lhs == pytest.approx(rho * r.residual_work / (1 - rho), rel=1e-13)


@pytest.mark.parametrize("discipline", DISCIPLINES)
def test_matches_exact_rationals(discipline):
    lam, S, scv, prio = [40, 25, 10], [0.004, 0.012, 0.02], [0.5, 1, 2], [1, -3, 1]
    exact = _cobham_fractions(lam, S, scv, prio, discipline == "preemptive_resume")
    r = qn.priority_queue(lam, S, prio, scv, discipline=discipline)
    np.testing.assert_allclose(r.response_time, [float(x) for x in exact], rtol=1e-14)
    np.testing.assert_allclose(r.queue_length, np.asarray(lam) * r.response_time, rtol=1e-15)


def test_reference_case_two_levels():
    """data/reference/priority_three_classes_two_levels.json (exact rationals)."""
    case = load_case("priority_three_classes_two_levels")
    inp = case["inputs"]
    for discipline, expected in case["expected"].items():
        r = qn.priority_queue(
            inp["arrival_rates"], inp["service_times"], inp["priorities"], inp["scv"],
            discipline=discipline,
        )  # fmt: skip
        np.testing.assert_allclose(
            r.response_time, expected, rtol=case["tolerance"]["rel"], atol=case["tolerance"]["abs"]
        )
        exact = _cobham_fractions(
            inp["arrival_rates"], inp["service_times"], inp["scv"], inp["priorities"],
            discipline == "preemptive_resume",
        )  # fmt: skip
        assert expected == [float(x) for x in exact]


# ---- stability per level ------------------------------------------------------------------


@pytest.mark.parametrize("discipline", DISCIPLINES)
def test_lower_levels_can_be_unstable_while_higher_ones_are_not(discipline):
    lam, S = [50, 40, 30, 10], [0.01, 0.01, 0.01, 0.01]  # loads 0.5, 0.4, 0.3, 0.1
    r = qn.priority_queue(lam, S, [0, 1, 2, 3], discipline=discipline)
    np.testing.assert_array_equal(r.stable, [True, True, False, False])
    assert r.unstable_classes == ("class2", "class3")
    # the first unstable level gets what is left: 1 - 0.9 = 0.1 of the server
    np.testing.assert_allclose(r.throughput, [50, 40, 10, 0], rtol=1e-13)
    assert r.utilization.sum() == pytest.approx(1.0, rel=1e-13)
    assert np.isinf(r.response_time[2:]).all() and np.isinf(r.queue_length[2:]).all()
    assert np.isfinite(r.response_time[:2]).all()
    if discipline == "preemptive_resume":  # lower levels are invisible to higher ones
        top = qn.priority_queue(lam[:2], S[:2], [0, 1], discipline=discipline)
        np.testing.assert_allclose(r.response_time[:2], top.response_time, rtol=1e-14)
    else:  # the server is always busy: residual work of the carried load, all classes
        assert r.residual_work == pytest.approx(0.01 / 2 * 2, rel=1e-13)  # E[S^2]/(2 E[S])
        assert r.waiting_time[1] == pytest.approx(0.01 / (0.5 * 0.1), rel=1e-13)
    assert "unstable" in repr(r)


def test_a_shared_unstable_level_splits_the_spare_capacity_by_load():
    r = qn.priority_queue([60, 30, 30], [0.01, 0.01, 0.02], [0, 1, 1])  # 0.6 + (0.3 + 0.6)
    share = 0.4 / 0.9
    np.testing.assert_allclose(r.throughput, [60, 30 * share, 30 * share], rtol=1e-13)
    np.testing.assert_array_equal(r.stable, [True, False, False])


def test_zero_rate_classes_and_frame():
    r = qn.priority_queue([0, 50], [0.01, 0.01], class_names=["rebuild", "io"])
    assert r.throughput[0] == 0 and r.queue_length[0] == 0
    assert r.response_time[0] == pytest.approx(0.01 + 50 * 0.0002 / 2, rel=1e-13)
    df = r.to_frame()
    assert list(df["class"]) == ["rebuild", "io"] and list(df["priority"]) == [0, 1]
    with pytest.raises(ValueError, match="read-only"):
        r.response_time[0] = 1.0
    assert "rebuild(p=0): R=" in repr(r)


# ---- refusals -----------------------------------------------------------------------------


def test_refusals():
    cases = [
        (([1, 1], [0.1, 0.1], [0, 1.5]), {}, InvalidModelError,
         r"priorities\[1\] must be an integer, got 1\.5"),
        (([1, 1], [0.1, 0.1], [0, "1"]), {}, InvalidTypeError,
         r"priorities\[1\] must be an integer, got '1'"),
        (([1, 1], [0.1, 0.1], [0]), {}, InvalidModelError,
         r"priorities has 1 entries but arrival_rates has 2: give one per class"),
        (([1, 1], [0.1]), {}, InvalidModelError,
         r"service_times has 1 entries but arrival_rates has 2"),
        (([1, -1], [0.1, 0.1]), {}, InvalidModelError, r"arrival_rates\[1\] must be >= 0"),
        (([1, 1], [0.1, 0.0]), {}, InvalidModelError, r"service_times\[1\] must be > 0, got 0\.0"),
        (([1, 1], [0.1, 0.1], None, [1, -0.5]), {}, InvalidModelError,
         r"scv\[1\] must be finite and >= 0"),
        (([1, 1], [0.1, 0.1], None, [1]), {}, InvalidModelError, r"scv has 1 entries"),
        (([], []), {}, InvalidModelError, r"arrival_rates is empty"),
        (([1], [0.1]), {"discipline": "preemptive"}, InvalidModelError,
         r"discipline must be one of 'nonpreemptive', 'preemptive_resume'; got 'preemptive'"),
        (([1, 1], [0.1, 0.1]), {"class_names": ["a", "a"]}, InvalidModelError,
         r"class names must be unique; 'a' appears twice"),
        (([1, 1], [0.1, 0.1]), {"class_names": ["a"]}, InvalidModelError,
         r"class_names has 1 entries but arrival_rates has 2"),
        (([1, 1], [0.1, 0.1]), {"class_names": "ab"}, InvalidTypeError,
         r"class_names must be a sequence of 2 strings"),
        (([1, 1], [0.1, 0.1]), {"class_names": ["a", 2]}, InvalidTypeError,
         r"class_names\[1\] must be a string, got 2"),
        (([1, 1], ["1 MB", 0.1]), {}, qn.UnitError, r"service_times\[0\]"),
    ]  # fmt: skip
    for args, kwargs, exc, pattern in cases:
        with pytest.raises(exc, match=pattern):
            qn.priority_queue(*args, **kwargs)


# ---- Ciw ----------------------------------------------------------------------------------


def _ciw_response_times(lam, laws, prio, preemptive, horizon, reps, seed):
    """Per-class mean sojourn times of Ciw runs (records after a tenth of the horizon), and
    their 95 % Student-t half-widths over the replications."""
    import ciw

    names = [f"c{c}" for c in range(len(lam))]
    pc = {n: int(p) for n, p in zip(names, prio, strict=True)}
    means = []
    for rep in range(reps):
        ciw.seed(seed + rep)
        net = ciw.create_network(
            arrival_distributions={
                n: [ciw.dists.Exponential(rate=x)] for n, x in zip(names, lam, strict=True)
            },
            service_distributions={n: [d] for n, d in zip(names, laws, strict=True)},
            number_of_servers=[1],
            priority_classes=(pc, ["resume"]) if preemptive else pc,
        )  # fmt: skip
        sim = ciw.Simulation(net)
        sim.simulate_until_max_time(horizon)
        recs = [
            r for r in sim.get_all_records()
            if r.record_type == "service" and r.arrival_date > horizon / 10
        ]  # fmt: skip
        means.append([
            np.mean([r.exit_date - r.arrival_date for r in recs if r.customer_class == n])
            for n in names
        ])  # fmt: skip
    means = np.array(means)
    from scipy.stats import t

    half = t.ppf(0.975, reps - 1) * means.std(axis=0, ddof=1) / math.sqrt(reps)
    return means.mean(axis=0), half


@pytest.mark.peer
@pytest.mark.parametrize(
    ("name", "lam", "law", "scv", "prio", "discipline"),
    [
        ("exp-2-np", [0.3, 0.35], ("exp", "exp"), [1, 1], [0, 1], "nonpreemptive"),
        ("exp-2-pr", [0.3, 0.35], ("exp", "exp"), [1, 1], [0, 1], "preemptive_resume"),
        ("det-gamma-3-np", [0.2, 0.2, 0.15], ("det", "gamma", "exp"), [0, 0.25, 1], [1, 0, 2],
         "nonpreemptive"),
        ("det-gamma-3-pr", [0.2, 0.2, 0.15], ("det", "gamma", "exp"), [0, 0.25, 1], [1, 0, 2],
         "preemptive_resume"),
    ],
)  # fmt: skip
def test_against_ciw(name, lam, law, scv, prio, discipline):
    """Ciw 3.2.7, one server, priority classes (smaller number first, as here); preemption
    "resume" for preemptive-resume. Mean service times 1, 1 (and 0.8); 4 replications of
    20,000 time units; our exact R_c must lie within the 95 % interval plus 2 %."""
    import ciw

    S = [1.0, 1.0, 0.8][: len(lam)]
    laws = []
    for kind, s, c2 in zip(law, S, scv, strict=True):
        if kind == "det":
            laws.append(ciw.dists.Deterministic(value=s))
        elif kind == "gamma":  # shape 1 / c^2, scale c^2 s: mean s, SCV c^2
            laws.append(ciw.dists.Gamma(shape=1 / c2, scale=c2 * s))
        else:
            laws.append(ciw.dists.Exponential(rate=1 / s))
    ours = qn.priority_queue(lam, S, prio, scv, discipline=discipline)
    mean, half = _ciw_response_times(
        lam, laws, prio, discipline == "preemptive_resume", 20000.0, 4, 7000
    )
    print(f"{name}: ours {np.round(ours.response_time, 3)}, Ciw {np.round(mean, 3)} +- "
          f"{np.round(half, 3)}")  # fmt: skip
    assert (np.abs(ours.response_time - mean) <= half + 0.02 * ours.response_time).all()


@pytest.mark.peer
def test_overloaded_low_class_against_ciw():
    """Class 1 offers 0.8 to a server that class 0 already loads to 0.4: class 1 is unstable
    and the server never idles. Non-preemptive class 0 then waits for the residual work of
    the *carried* load, W_0 = (0.4 + 0.6) E[S^2] / (2) = 1 s, so R_0 = 1 / 0.6 + 1 = 2.667 s
    (the offered load would give 3.0 s). Ciw agrees; its class-1 backlog grows."""
    import ciw

    ours = qn.priority_queue([0.4, 0.8], [1.0, 1.0], [0, 1])
    assert ours.unstable_classes == ("class1",)
    assert ours.response_time[0] == pytest.approx(1 / 0.6 + 1, rel=1e-14)
    mean, half = _ciw_response_times(
        [0.4, 0.8], [ciw.dists.Exponential(rate=1.0)] * 2, [0, 1], False, 8000.0, 4, 7100
    )
    print(f"overloaded: ours R_0 = {ours.response_time[0]:.3f}, Ciw {mean[0]:.3f} +- {half[0]:.3f}")
    assert abs(mean[0] - ours.response_time[0]) <= half[0] + 0.02 * ours.response_time[0]
    assert abs(mean[0] - 3.0) > half[0]  # the offered-load residual would be wrong
