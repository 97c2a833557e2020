"""MVA and AMVA of closed networks with non-exponential FCFS stations: the residual-life
correction (:mod:`qnmodel.solvers.mva_residual`).

Closed forms of the method, the exponential case against the exact recursion, limits, the
refusals, the capacity questions that use it, and a fixed-seed subset of the simulation
family of ``tests/accuracy/amva_scv.py`` (whose full table is in
docs/explanation/assumptions.md)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError
from qnmodel.solvers import mva_residual
from tests._tol import closed_form

S = qn.Station
amva_mod = importlib.import_module("qnmodel.solvers.amva")  # the module, not the function


def _net(scvs, demands=(0.004, 0.007, 0.002), Z=0.0):
    pairs = zip(demands, scvs, strict=True)
    return qn.Network([S(f"s{k}", d, scv=c) for k, (d, c) in enumerate(pairs)], think_time=Z)


def _two_class(scvs, N=(4, 3)):
    rows = zip((0.004, 0.006, 0.003), scvs, (1.0, 0.5, 2.0), (1.5, 1.0, 0.7), strict=True)
    st = [
        S(f"s{k}", service_time=t, scv=c, visits={"a": va, "b": vb})
        for k, (t, c, va, vb) in enumerate(rows)
    ]
    classes = [qn.ClosedClass("a", N[0], think_time=0.01), qn.ClosedClass("b", N[1])]
    return qn.Network(st, classes=classes)


def test_labels_say_approximate_and_name_the_correction():
    net = _net((0.0, 4.0, 1.0))
    assert qn.mva(net, 5).method == "mva.exact+residual-life (approximate)"
    assert qn.amva(net, 5).method == "amva.schweitzer+residual-life (approximate)"
    two = _two_class((0.0, 4.0, 1.0))
    assert qn.amva(two, method="linearizer").method == (
        "amva.linearizer+residual-life (approximate)"
    )
    # exponential FCFS and any law at PS: exact MVA, as before
    assert qn.mva(_net((1.0, 1.0, 1.0)), 5).method == "mva.exact"
    ps = qn.Network([S("cpu", 0.003, discipline="PS", scv=0.0), S("d", 0.005)])
    assert qn.mva(ps, 5).method == "mva.exact"


@pytest.mark.parametrize("Z", [0.0, 0.05])
def test_one_job_sees_an_empty_network(Z):
    """N = 1: nobody ahead, so R = sum_k D_k and X = 1 / (Z + R) exactly, any SCV."""
    net = _net((0.0, 10.0, 0.25), Z=Z)
    D = sum(s.demand for s in net.stations)
    for res in (qn.mva(net, 1), qn.amva(net, 1), qn.amva(net, 1, method="linearizer")):
        assert res.response_time[0] == pytest.approx(D, rel=closed_form(3))
        assert res.throughput[0] == pytest.approx(1 / (Z + D), rel=closed_form(5))


def test_exponential_recursion_is_exact_mva():
    """With c^2 = 1 the corrected recursion is the Reiser-Lavenberg recursion."""
    net = _net((1.0, 1.0, 1.0), Z=0.02)
    ref = qn.mva(net, 40)
    D = np.array(net.demands)
    X, R, Rk, Q, U = mva_residual._recursion(D, D, np.zeros(3), 0.02, 40, True)
    np.testing.assert_allclose(X, ref.throughput, rtol=1e-12, atol=0)
    np.testing.assert_allclose(Rk, ref.residence_time, rtol=1e-12, atol=0)
    np.testing.assert_allclose(Q, ref.queue_length, rtol=1e-12, atol=0)


@pytest.mark.parametrize("method", ["schweitzer", "linearizer"])
def test_exponential_amva_core_is_the_old_core(method):
    """A zero residual term (c^2 = 1) gives the Schweitzer/Linearizer answers unchanged."""
    two = _two_class((1.0, 1.0, 1.0))
    old = qn.amva(two, method=method)
    cm = two.compiled
    V = np.array(cm.V)
    G = np.broadcast_to((cm.D / np.where(V > 0, V, 1))[:, None, :], (2, 2, 3)).copy()
    D = np.array(cm.D)
    fcfs = (V, G, np.zeros((2, 3)))
    X, R, ok, _, _ = amva_mod._solve_point(
        cm.N.astype(float), D, D, np.array(cm.Z), method, 1e-10, 100_000, None, fcfs
    )
    assert ok
    np.testing.assert_allclose(X, old.throughput, rtol=1e-8, atol=0)
    np.testing.assert_allclose(R, old.residence_time, rtol=1e-8, atol=0)


def test_single_station_closed_form_of_the_method():
    """One FCFS station, Z = 0: Q(n-1) = n - 1 and U(n-1) = (n-1) D / R(n-1), so the
    correction gives R(n) = n D + D U(n-1) (c^2 - 1) / 2 (the true value is n D: a job
    arriving at Z = 0 starts a fresh service behind the one ahead, not a residual one; the
    correction's known bias, -> D (n + (c^2 - 1) / 2)). Below c^2 = 1 that passes
    X <= 1 / D, and the projection onto the bound gives n D."""
    D, n = 0.005, np.arange(1, 21)
    res = qn.mva(qn.Network([S("d", D, scv=4.0)]), 20)
    expect = [D]
    for m in range(2, 21):
        expect.append(m * D + D * ((m - 1) * D / expect[-1]) * 1.5)
    np.testing.assert_allclose(res.response_time, expect, rtol=closed_form(8 * 20))
    res = qn.mva(qn.Network([S("d", D, scv=0.0)]), 20)
    np.testing.assert_allclose(res.response_time, D * n, rtol=closed_form(8 * 20))
    np.testing.assert_allclose(res.utilization[:, 0], 1.0, rtol=closed_form(8 * 20))


@pytest.mark.parametrize("c2", [0.0, 0.25, 4.0, 10.0])
def test_heavy_load_throughput_tends_to_one_over_dmax(c2):
    """X(n) -> 1 / D_max (the bottleneck saturates), within (c^2 - 1) / (2 n) relative from
    below (the single-station closed form above), never past the bound."""
    net = _net((c2, c2, 1.0), Z=0.01)
    for res in (qn.mva(net, 2000, keep="last"), qn.amva(net, 2000, keep="last")):
        X = res.throughput[-1]
        assert X <= (1 / 0.007) * (1 + 1e-12)
        assert X == pytest.approx(1 / 0.007, rel=max(c2 - 1, 0) / 4000 + 1e-3)
    curve = qn.mva(net, 60)  # non-decreasing in n, below both asymptotic bounds
    assert np.all(np.diff(curve.throughput) >= -1e-12 * curve.throughput[1:])
    assert np.all(np.diff(curve.response_time) > 0)
    n = np.arange(1, 61)
    assert np.all(curve.throughput <= np.minimum(n / (0.013 + 0.01), 1 / 0.007) * (1 + 1e-12))
    assert np.all(curve.utilization <= 1 + 1e-12)
    two = qn.amva(_two_class((c2, c2, 1.0), N=(40, 40)))
    assert np.all(two.utilization.sum(axis=0) <= 1 + 1e-9)


def test_lower_variability_means_shorter_queues():
    """Constant service waits less than exponential, which waits less than SCV 10."""
    R = [qn.mva(_net((c2, c2, c2)), 10, keep="last").response_time[-1] for c2 in (0, 1, 10)]
    assert R[0] < R[1] < R[2]
    R2 = [qn.amva(_two_class((c2, c2, c2))).response_time for c2 in (0, 1, 10)]
    assert np.all(R2[0] < R2[1]) and np.all(R2[1] < R2[2])


def test_schweitzer_single_class_agrees_with_the_recursion():
    net = _net((0.0, 4.0, 0.25), Z=0.01)
    a, m = qn.amva(net, 30), qn.mva(net, 30)
    np.testing.assert_allclose(a.throughput, m.throughput, rtol=0.03)


def test_littles_law_and_utilisation_law():
    res = qn.amva(_two_class((0.0, 10.0, 0.25)))
    np.testing.assert_allclose(res.queue_length.sum(axis=1) + res.throughput * [0.01, 0.0],
                               [4, 3], rtol=1e-8)  # fmt: skip
    np.testing.assert_allclose(res.utilization, res.throughput[:, None] * res.demands, rtol=1e-12)


def test_multiserver_exponential_with_single_server_non_exponential_in_amva():
    net = qn.Network([S("cpu", 0.004, servers=2), S("disk", 0.006, scv=0.0)])
    res = qn.amva(net, 8)
    assert res.method == "amva.schweitzer+seidmann+residual-life (approximate)"
    assert res.throughput[0] == pytest.approx(1 / 0.01, rel=closed_form(4))


def test_refusals():
    multi = qn.Network([S("disk", 0.006, servers=2, scv=0.0)])
    for call in (lambda: qn.mva(multi, 4), lambda: qn.amva(multi, 4)):
        with pytest.raises(InvalidModelError, match=r"station 'disk' has 2 servers and "
                           r"non-exponential service \(scv = \[0\.0\]\); the residual-life "
                           r"correction is for one server: use qnmodel\.simulate"):  # fmt: skip
            call()
    mixed = qn.Network([S("cpu", 0.004, servers=2), S("disk", 0.006, scv=0.0)])
    with pytest.raises(InvalidModelError, match=r"mva with non-exponential FCFS stations "
                       r"\(residual-life correction, \['disk'\]\) takes single-server and delay "
                       r"stations; \['cpu'\] have several servers: use qnmodel\.amva"):  # fmt: skip
        qn.mva(mixed, 4)
    with pytest.raises(InvalidModelError, match=r"mva_multiclass cannot solve non-exponential "
                       r"service \(SCV != 1\) at FCFS stations \(station 's0'\): use "
                       r"qnmodel\.mva \(one closed class"):  # fmt: skip
        qn.mva_multiclass(_two_class((0.0, 1.0, 1.0)))
    with pytest.raises(InvalidModelError, match=r"mva cannot solve non-exponential service"):
        qn.mva_exact(_net((0.0, 1.0, 1.0)), 3)


def test_capacity_questions_use_the_corrected_law():
    net = _net((0.0, 10.0, 1.0))
    R = qn.mva(net, 200).response_time
    t = 0.2
    assert qn.max_population(net, f"R <= {t} s") == int(np.flatnonzero(R > t)[0])
    # the exponential answer differs: the law matters
    R1 = qn.mva(_net((1.0, 1.0, 1.0)), 200).response_time
    assert int(np.flatnonzero(R1 > t)[0]) != int(np.flatnonzero(R > t)[0])
    X = qn.mva(net, 30).throughput
    assert qn.min_servers(net, "s0", f"X >= {X[-1] * 0.99}/s", N=30) == 1
    many = r"station 's\d' has 2 servers and non-exponential service"
    with pytest.raises(InvalidModelError, match=many):
        qn.min_servers(net, "s1", "R <= 150 ms", N=30)
    with pytest.raises(InvalidModelError, match=many):
        qn.best_upgrade(net, N=10)
    with pytest.raises(InvalidModelError, match=r"response_time_law of a closed network with "
                       r"non-exponential FCFS service .* is not supported"):  # fmt: skip
        qn.max_population(net, "p95 <= 200 ms")


def _family_case(kind: str, i: int):
    """Case i of the seeded family of tests/accuracy/amva_scv.py (the same draws)."""
    from tests.accuracy import amva_scv as fam

    rng = np.random.default_rng(2027)
    cases = [fam.single_case(rng) for _ in range(40)]
    if kind == "single":
        return fam, cases[i]
    return fam, [fam.two_class_case(rng) for _ in range(i + 1)][-1]


# (case, |X error| and |R error| bounds): the measured errors of those rows of the table in
# docs/explanation/open-and-mixed.md, rounded up by 0.2 percentage points (the simulation is
# seeded, so the same numbers come back)
SIM_SINGLE = [(15, 0.030, 0.062), (1, 0.051, 0.052)]
SIM_TWO = [(2, 0.027, 0.028)]


@pytest.mark.parametrize(("i", "tx", "tr"), SIM_SINGLE)
def test_single_class_against_the_simulator(i, tx, tr):
    fam, (net, N) = _family_case("single", i)
    res = qn.mva(net, N, keep="last")
    sim = fam._sim(net, N, res.throughput, 500 + i)
    assert abs(res.throughput[-1] / sim.throughput[0] - 1) <= tx
    assert abs(res.response_time[-1] / sim.response_time[0] - 1) <= tr


@pytest.mark.parametrize(("i", "tx", "tr"), SIM_TWO)
def test_two_classes_against_the_simulator(i, tx, tr):
    fam, net = _family_case("two", i)
    res = qn.amva(net)
    sim = fam._sim(net, None, res.throughput, 900 + i)
    assert np.all(np.abs(res.throughput / sim.throughput - 1) <= tx)
    assert np.all(np.abs(res.response_time / sim.response_time - 1) <= tr)
