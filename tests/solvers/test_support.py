"""What each solver supports (qnmodel.solvers.support): refusals that name the feature, where
the model uses it and what solves it; the approximate answers' labels; and the two
approximations outside product form against their references:

* AMVA's FCFS class-dependent heuristic ([Rei79]; a waiting class-r job costs an arrival
  S_rk) against ``qn.simulate`` on a closed network of 2 classes and 2 FCFS stations;
* open_network's M/G/1 stations: exact for one station (Pollaczek-Khinchine, [Kle75]
  eq. 5.101: W = sum_c lambda_c E[S_c^2] / (2 (1 - rho))), approximate in a tandem (the first
  station's departures are not Poisson), against ``qn.simulate``.
"""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError
from qnmodel.model import FEATURES
from qnmodel.solvers.support import SUPPORT, Support, require, supports
from tests._tol import closed_form

S, C, O, N = qn.Station, qn.ClosedClass, qn.OpenClass, qn.Network
TWO = [C("a", 2), C("b", 1)]


def _fj():
    return qn.ForkJoin("fj", [S("m0", 0.01), S("m1", 0.01)])


# ---------------------------------------------------------------------------------------
# the declarations
# ---------------------------------------------------------------------------------------


def test_every_public_solver_declares_known_features():
    assert set(SUPPORT) >= {"mva", "mva_multiclass", "amva", "open_network", "mixed_network",
                            "fork_join", "bounds_aba", "bounds_bjb", "simulate"}  # fmt: skip
    for s in SUPPORT.values():
        assert (s.exact | s.approximate) <= set(FEATURES)
    with pytest.raises(ValueError, match=r"x: unknown features \['telepathy'\]"):
        Support("x", frozenset({"telepathy"}))


def test_require_says_whether_the_answer_is_approximate():
    exact = N([S("cpu", {"a": 0.01, "b": 0.02}, discipline="PS"), S("z", 1.0, kind="delay")],
              classes=TWO).compiled  # fmt: skip
    assert require(exact, "mva_multiclass") is False and supports(exact, "amva")
    fcfs = N([S("cpu", {"a": 0.01, "b": 0.02})], classes=TWO).compiled
    assert require(fcfs, "amva") is True and not supports(fcfs, "mva_multiclass")
    # a single-class network's open or closed class is decided by the call
    single = N([S("d", 0.01)]).compiled
    assert require(single, "mva", drop=("closed",)) is False
    assert require(single, "open_network", drop=("open",)) is False


# ---------------------------------------------------------------------------------------
# refusals: the feature, where, and the alternative
# ---------------------------------------------------------------------------------------

_NON_EXP = r"non-exponential service \(SCV != 1\) at FCFS stations"
_SIM_OR_PS = (
    r"use qnmodel\.mva \(one closed class, single-server stations\) or qnmodel\.amva "
    r"\(approximate: the residual-life correction\), qnmodel\.open_network \(open, "
    r"approximate\), qnmodel\.simulate \(or discipline='PS' / 'LCFS-PR', where the service "
    r"law does not change the means\)$"
)
_FCFS_DEP = r"FCFS stations whose classes have different service times"
_FCFS_ALT = (
    r"use qnmodel\.amva or qnmodel\.open_network \(approximate\), qnmodel\.simulate; or "
    r"discipline='PS' if the device shares its capacity among the jobs present, or give visits "
    r"and one service_time if the classes differ only in visits$"
)
_FJ = (
    r"fork-join elements \(station 'fj'\): use qnmodel\.fork_join \(approximate\) or "
    r"qnmodel\.simulate$"
)


@pytest.mark.parametrize(
    ("solve", "match"),
    [
        (
            lambda: qn.mva_exact(N([S("cpu", 0.001), S("disk", 0.005, scv=0.0)]), 4),
            rf"^mva cannot solve {_NON_EXP} \(station 'disk'\): {_SIM_OR_PS}",
        ),
        (
            lambda: qn.bounds(N([S("disk", 0.01, scv=0.0)]), 3),
            rf"^bounds_bjb cannot solve {_NON_EXP} \(station 'disk'\): {_SIM_OR_PS}",
        ),
        (
            lambda: qn.mva_multiclass(N([S("disk", {"a": 0.01, "b": 0.01}, scv=0.5)], classes=TWO)),
            rf"^mva_multiclass cannot solve {_NON_EXP} \(station 'disk'\): {_SIM_OR_PS}",
        ),
        (
            lambda: qn.mixed_network(
                N([S("disk", 0.01, scv=2.0)], classes=[C("a", 2), O("b", 1.0)])
            ),
            rf"^mixed_network cannot solve {_NON_EXP} \(station 'disk'\): {_SIM_OR_PS}",
        ),
        (
            lambda: qn.mva_multiclass(N([S("disk", {"a": 0.01, "b": 0.02})], classes=TWO)),
            rf"^mva_multiclass cannot solve {_FCFS_DEP} \(station 'disk'\): {_FCFS_ALT}",
        ),
        (
            lambda: qn.mixed_network(
                N([S("disk", {"a": 0.01, "b": 0.02})], classes=[C("a", 2), O("b", 1.0)])
            ),
            rf"^mixed_network cannot solve {_FCFS_DEP} \(station 'disk'\): {_FCFS_ALT}",
        ),
        (
            lambda: qn.mva_multiclass(N([S("cpu", 0.01, discipline="HOL")], classes=TWO)),
            r"^mva_multiclass cannot solve priority scheduling \(HOL, PRIO-PR\) \(station 'cpu'\): "
            r"use qnmodel\.amva or qnmodel\.mixed_network \(approximate: priority MVA\), "
            r"qnmodel\.priority_queue \(one open station\) or qnmodel\.simulate$",
        ),
        (  # amva and mixed_network answer (tests/solvers/test_amva_priority.py)
            lambda: qn.open_network(
                N([S("disk", 0.01, discipline="PRIO-PR")], classes=[O("a", 2), O("b", 1.0)])
            ),
            r"^open_network cannot solve priority scheduling \(HOL, PRIO-PR\) \(station 'disk'\)",
        ),
        (
            lambda: qn.open_network(N([S("disk", 0.01, discipline="HOL")]), 10.0),
            r"^open_network cannot solve priority scheduling \(HOL, PRIO-PR\) \(station 'disk'\)",
        ),
        (
            lambda: qn.mva(N([S("q", 0.01, capacity=4)]), 3),
            r"^mva cannot solve finite capacity \(a station's capacity\) \(station 'q'\): use "
            r"qnmodel\.mva_blocking \(closed, approximate\), qnmodel\.queue_mm1k / queue_mmmk "
            r"\(one station\) or qnmodel\.simulate$",
        ),
        (
            lambda: qn.open_network(N([S("disk", 0.01, capacity=3)]), 10.0),
            r"^open_network cannot solve finite capacity \(a station's capacity\) "
            r"\(station 'disk'\)",
        ),
        (
            lambda: qn.mva_multiclass(N([S("disk", 0.01)], classes=[C("a", 2), O("b", 1.0)])),
            r"^mva_multiclass cannot solve open classes \(class 'b'\): use qnmodel\.open_network "
            r"\(open classes\) or qnmodel\.mixed_network \(open and closed\)$",
        ),
        (
            lambda: qn.mva(N([S("disk", 0.01)], classes=TWO), 3),
            r"^mva cannot solve several classes \(classes 'a', 'b'\): use qnmodel\.mva_multiclass "
            r"\(exact\), qnmodel\.amva \(approximate\) or qnmodel\.simulate$",
        ),
        (
            lambda: qn.open_network(N([S("d", 0.01)], classes=[C("b", 2), O("w", 1.0)])),
            r"^open_network solves open classes; classes \['b'\] are closed: use "
            r"qnmodel\.mixed_network \(open and closed classes\)$",
        ),
        (
            lambda: qn.open_network(N([S("disk", 0.01, rate_multipliers=[1, 2], scv=0.0)]), 10.0),
            r"^open_network cannot solve FCFS station 'disk' outside product form "
            r"\(class-dependent or non-exponential service\) with a rate curve: use "
            r"qnmodel\.simulate, or "
            r"discipline='PS'$",
        ),
        (
            lambda: qn.fork_join(N([S("cpu", 0.01, discipline="PS"), _fj()]), 3),
            r"^fork_join cannot solve processor-sharing \(PS\) stations \(station 'cpu'\)",
        ),
        # fork-join elements: every solver without a join
        (lambda: qn.mva(N([S("cpu", 0.01), _fj()]), 2), rf"^mva cannot solve {_FJ}"),
        (lambda: qn.amva(N([S("cpu", 0.01), _fj()]), 2), rf"^amva cannot solve {_FJ}"),
        (lambda: qn.bounds(N([S("cpu", 0.01), _fj()]), 2), rf"^bounds_bjb cannot solve {_FJ}"),
        (
            lambda: qn.bounds(N([S("cpu", 0.01), _fj()]), 2, method="aba"),
            rf"^bounds_aba cannot solve {_FJ}",
        ),
        (
            lambda: qn.open_network(N([S("cpu", 0.01), _fj()]), 5.0),
            rf"^open_network cannot solve {_FJ}",
        ),
        (
            lambda: qn.mixed_network(N([S("cpu", 0.01), _fj()], classes=[C("a", 2), O("b", 1.0)])),
            rf"^mixed_network cannot solve {_FJ}",
        ),
    ],
)
def test_refusals_name_the_feature_where_and_the_alternative(solve, match):
    with pytest.raises(InvalidModelError, match=match):
        solve()


def test_refusal_lists_at_most_four_stations():
    net = N([S(f"d{i}", 0.01, scv=0.0) for i in range(6)])
    with pytest.raises(
        InvalidModelError, match=r"\(stations 'd0', 'd1', 'd2', 'd3', \.\.\.\): use"
    ):
        qn.mva_exact(net, 3)


def test_what_is_supported_is_answered():
    # a network with one closed class is mva's; PS stations have BJB bounds; ABA bounds hold
    # whatever the service law
    assert qn.mva(N([S("disk", 0.01)], classes=[C("a", 3)]), 3).method == "mva.exact"
    assert qn.bounds(N([S("disk", 0.01, discipline="PS")]), 3).method == "bjb"
    assert qn.bounds(N([S("disk", 0.01, scv=0.0)]), 3, method="aba").method == "aba"


# ---------------------------------------------------------------------------------------
# AMVA's FCFS class-dependent approximation against the simulator
# ---------------------------------------------------------------------------------------

# Measured (seeds 1-4, 10 replications of 2000 s, half-widths <= 0.4 %): Schweitzer X within
# 0.9 % / 1.9 %, R +2.9 % / +12.3 % (classes a / b); Linearizer X +0.7 % / -1.5 %, R -2.4 % /
# +9.5 %. Tolerances: the maxima rounded up by about 10 % of themselves.
FCFS_TOL = {"schweitzer": (0.021, 0.135), "linearizer": (0.017, 0.105)}


def _fcfs_net():
    return N(
        [
            S("cpu", {"a": "2 ms", "b": "8 ms"}),  # FCFS, the classes' service times differ
            S("disk", {"a": "10 ms", "b": "4 ms"}),
        ],
        classes=[C("a", 3, "50 ms"), C("b", 2, "100 ms")],
    )


def test_amva_fcfs_class_dependent_against_simulation():
    net = _fcfs_net()
    assert net.compiled.features["fcfs_class_dependent"] == ("cpu", "disk")
    sim = qn.simulate(net, seed=1, replications=10, run_length=2000.0, warmup=2.0)
    assert np.all(sim.response_time_halfwidth / sim.response_time < 0.005)
    for method, (tx, tr) in FCFS_TOL.items():
        a = qn.amva(net, method=method, tol=1e-12)
        assert a.method == f"amva.{method}+fcfs (approximate)"
        ex = a.throughput / sim.throughput - 1
        er = a.response_time / sim.response_time - 1
        print(f"{method}: X error {ex.round(4).tolist()}, R error {er.round(4).tolist()}")
        assert np.all(np.abs(ex) <= tx) and np.all(np.abs(er) <= tr)
        # the laws hold in the approximation (X_c = N_c / (Z_c + R_c): 2 K + 4 operations)
        np.testing.assert_allclose(a.throughput * (a.think_time + a.response_time), [3, 2],
                                   rtol=closed_form(8))  # fmt: skip


def test_amva_fcfs_reduces_to_product_form_with_equal_service_times():
    # equal service times per visit: the heuristic is the product-form AMVA, bit for bit the
    # PS network's
    fcfs = N([S("cpu", service_time="5 ms", visits={"a": 1, "b": 3}),
              S("d", {"a": 0.01, "b": 0.01})], classes=[C("a", 4), C("b", 2, 0.1)])  # fmt: skip
    ps = N([S("cpu", service_time="5 ms", visits={"a": 1, "b": 3}, discipline="PS"),
            S("d", {"a": 0.01, "b": 0.01})], classes=[C("a", 4), C("b", 2, 0.1)])  # fmt: skip
    a, b = qn.amva(fcfs, tol=1e-12), qn.amva(ps, tol=1e-12)
    assert a.method == b.method == "amva.schweitzer (approximate)"
    np.testing.assert_array_equal(a.throughput, b.throughput)


# ---------------------------------------------------------------------------------------
# open_network's M/G/1 stations
# ---------------------------------------------------------------------------------------


def test_open_mg1_one_station_is_pollaczek_khinchine():
    S_, c2, lam = 0.004, 0.25, 150.0
    res = qn.open_network(N([S("disk", S_, scv=c2)]), lam)
    assert (
        res.method == "open (approximate: M/G/1 waits, Poisson arrivals, at FCFS stations 'disk')"
    )
    rho = lam * S_
    pk = S_ + lam * (1 + c2) * S_ * S_ / (2 * (1 - rho))  # [Kle75] eq. 5.101
    assert res.response_time[0] == pytest.approx(pk, rel=closed_form(12))
    # two classes with their own service times and laws at one FCFS station
    net = N([S("disk", {"a": 0.002, "b": 0.006}, scv={"a": 0.0, "b": 2.0})],
            classes=[O("a", 100.0), O("b", 60.0)])  # fmt: skip
    r = qn.open_network(net)
    la, lb, Sa, Sb = 100.0, 60.0, 0.002, 0.006
    W = (la * Sa**2 + lb * 3.0 * Sb**2) / (2 * (1 - la * Sa - lb * Sb))
    np.testing.assert_allclose(r.response_time[0], [Sa + W, Sb + W], rtol=closed_form(20))
    np.testing.assert_allclose(r.wait[0], [W], rtol=closed_form(20))
    # exponential service: P-K is the M/M/1 answer, and the label says exact
    mm1 = qn.open_network(N([S("disk", S_)]), lam)
    assert mm1.method == "open" and mm1.response_time[0] == pytest.approx(
        S_ / (1 - rho), rel=closed_form(4)
    )
    same = qn.open_network(N([S("disk", S_, scv=1.0 + 1e-15)]), lam)
    assert same.response_time[0] == pytest.approx(mm1.response_time[0], rel=1e-12)


# Measured (seed 1, 10 replications of 2000 s): the first station, fed by Poisson arrivals,
# within its half-width; the second sees the first's departures, which are not Poisson:
# deterministic tandem at rho = (0.36, 0.48): R +9.5 % (the second station's wait +17 %);
# SCV 4 at the same loads: R -5.7 %; two exponential classes with class-dependent service
# times: R -6.3 % / +4.6 %.
TANDEM = [
    (N([S("cpu", 0.003, scv=0.0), S("disk", 0.004, scv=0.0)]), 120.0, 0.11),
    (N([S("cpu", 0.003, scv=4.0), S("disk", 0.004, scv=4.0)]), 120.0, 0.07),
    (
        N(
            [S("cpu", {"a": 0.001, "b": 0.006}), S("disk", {"a": 0.008, "b": 0.002})],
            classes=[O("a", 60.0), O("b", 50.0)],
        ),  # fmt: skip
        None,
        0.075,
    ),
]


@pytest.mark.parametrize(("net", "lam", "tol"), TANDEM, ids=["deterministic", "scv4", "classes"])
def test_open_mg1_tandem_against_simulation(net, lam, tol):
    res = qn.open_network(net, lam)
    assert res.method.startswith("open (approximate: M/G/1 waits")
    if lam is None:
        sim = qn.simulate(net, seed=1, replications=10, run_length=2000.0, warmup=5.0)
        R, Rk = res.response_time[0], res.residence_time[0]
    else:
        sim = qn.simulate(net, arrival_rate=lam, seed=1, replications=10, run_length=2000.0,
                          warmup=5.0)  # fmt: skip
        R, Rk = res.response_time[:1], res.residence_time[:1]
    err = R / sim.response_time - 1
    print(f"R error {err.round(4).tolist()}")
    assert np.all(np.abs(err) <= tol)
    # the first station sees Poisson arrivals: exact, within the simulation's noise
    assert np.all(
        np.abs(Rk[:, 0] - sim.residence_time[:, 0]) <= 3 * sim.residence_time_halfwidth[:, 0]
    )
