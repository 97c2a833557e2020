"""Mixed networks (open + closed classes): closed limit, hand-computed decomposition,
Little and utilisation laws, AMVA fallback and bad input (qnmodel.mixed_network).

Networks come from demand matrices through :func:`tests._nets.mixed_net`: processor
sharing where the classes' demands differ (the product-form model of [LZGS] sec. 7.4.3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qnmodel as qn
from qnmodel.errors import InvalidModelError, UnstableModelError
from tests._nets import mixed_net as _net
from tests._nets import pf_net
from tests._tol import COPY, closed_form, recursion


def test_zero_open_load_equals_closed_mva():
    D = [[0.02, 0.05, 0.3], [0.04, 0.01, 0.1], [0.01, 0.01, 0.5]]
    kinds = ["queue", "queue", "delay"]
    net = _net(D, [False, False, True], [0, 0, 0.0], [4, 3, 0], [1.0, 0.5, 0.0], kinds)
    res = qn.mixed_network(net)
    closed = qn.mva_multiclass(pf_net(np.array(D[:2]), [4, 3], [1.0, 0.5], kinds=kinds))
    np.testing.assert_allclose(res.throughput[:2], closed.throughput, rtol=1e-13)
    np.testing.assert_allclose(res.residence_time[:2], closed.residence_time, rtol=1e-13)
    assert res.method == "mixed.mva"
    # the idle open class sees the closed jobs: R = D (1 + Q_closed)
    # (Q summed over the 2 closed classes, 1 +, times D: 3 operations, and the code's one more)
    np.testing.assert_allclose(
        res.residence_time[2, :2],
        np.array(D[2][:2]) * (1 + closed.station_queue_length[:2]),
        rtol=closed_form(4),
    )
    assert res.throughput[2] == 0.0


def test_one_closed_job_by_hand():
    # closed class N = 1, Z = 1; open class lambda = 10 with U_open = (0.2, 0.5)
    D = [[0.1, 0.2], [0.02, 0.05]]
    res = qn.mixed_network(_net(D, [False, True], [0.0, 10.0], [1, 0], [1.0, 0.0]))
    Dstar = np.array([0.1 / 0.8, 0.2 / 0.5])
    X = 1.0 / (1.0 + Dstar.sum())
    assert res.throughput[0] == pytest.approx(X, rel=1e-14)
    np.testing.assert_allclose(res.residence_time[0], Dstar, rtol=1e-14)
    Qc = X * Dstar
    np.testing.assert_allclose(
        res.residence_time[1], np.array([0.02, 0.05]) * (1 + Qc) / np.array([0.8, 0.5]), rtol=1e-14
    )
    np.testing.assert_allclose(res.utilization[1], [0.2, 0.5], rtol=1e-14)
    np.testing.assert_allclose(res.utilization[0], X * np.array(D[0]), rtol=1e-14)
    assert res.saturation_scale == pytest.approx(2.0, rel=1e-14) and res.bottleneck == "s1"
    assert res.to_frame().shape == (2, 6)


def test_open_network_refuses_closed_classes_and_mapping_rates():
    D = [[0.1, 0.2], [0.02, 0.05]]
    net = _net(D, [False, True], [0.0, 1.0], [3, 0], [1.0, 0.0])
    with pytest.raises(
        InvalidModelError,
        match=r"^open_network solves open classes; classes \['c0'\] are closed: use "
        r"qnmodel.mixed_network \(open and closed classes\)$",
    ):
        qn.open_network(net, {"c1": "10/s"})
    a = qn.mixed_network(net, {"c1": "10/s"})
    b = qn.mixed_network(net, [0.0, 10.0])
    np.testing.assert_array_equal(a.residence_time, b.residence_time)


def test_amva_and_auto_fallback():
    D = [[0.02, 0.05], [0.04, 0.01], [0.01, 0.01]]
    net = _net(D, [False, False, True], [0, 0, 20.0], [10, 10, 0], [0.5, 0.5, 0.0])
    exact = qn.mixed_network(net, method="exact")
    approx = qn.mixed_network(net, method="amva")
    auto = qn.mixed_network(net, max_memory=64)
    label = "mixed.amva (approximate: Schweitzer-Bard AMVA for the closed classes)"
    assert approx.method == label and auto.method == label
    np.testing.assert_array_equal(auto.throughput, approx.throughput)
    np.testing.assert_allclose(approx.throughput, exact.throughput, rtol=0.05)


def test_bad_mixed_models():
    D = [[0.1, 0.2], [0.02, 0.05]]
    with pytest.raises(InvalidModelError, match="needs a closed class with population > 0"):
        qn.mixed_network(_net(D, [True, True], [1.0, 1.0], [0, 0]))
    # multi-server stations were refused; they are now solved by the labelled approximation
    ms = qn.mixed_network(_net(D, [False, True], [0.0, 1.0], [2, 0], servers=[1, 2]))
    assert ms.method == (
        "mixed.mva_ld (approximate: the open load caps the servers the closed classes see)"
    )
    with pytest.raises(
        UnstableModelError, match=r"'s1' is saturated by the open classes: .*U = 1\.25"
    ):
        qn.mixed_network(_net(D, [False, True], [0.0, 25.0], [2, 0]))
    with pytest.raises(
        InvalidModelError,
        match=r"a network without classes has no open and closed classes together: use "
        r"qnmodel.mva \(closed\) or qnmodel.open_network \(open\), or give it classes",
    ):
        qn.mixed_network(qn.Network.from_demands([0.1]))
    with pytest.raises(InvalidModelError, match="class 'c0' is closed"):
        qn.mixed_network(_net(D, [False, True], [0.0, 1.0], [2, 0]), {"c0": 3.0})
    with pytest.raises(InvalidModelError, match="method must be one of"):
        qn.mixed_network(_net(D, [False, True], [0.0, 1.0], [2, 0]), method="fast")


def test_closed_class_with_many_terminals_tends_to_the_open_class():
    """N terminals thinking Z = N / lambda offer Poisson traffic at rate lambda as N grows."""
    D = np.array([0.004, 0.006, 0.002])
    lam = 100.0
    open_R = qn.open_network(qn.Network.from_demands(D), lam).response_time[0]
    errs = []
    for N in (100, 1000, 10000):
        closed = qn.mva(qn.Network.from_demands(D, think_time=N / lam - open_R), N, keep="last")
        errs.append(abs(closed.response_time[-1] / open_R - 1))
    assert errs[2] < 2e-3 and errs[2] < errs[1] < errs[0]


@st.composite
def _mixed(draw):
    K = draw(st.integers(1, 4))
    C = draw(st.integers(2, 4))
    D = np.array(draw(st.lists(st.floats(1e-3, 0.2), min_size=C * K, max_size=C * K))).reshape(C, K)
    is_open = np.array(draw(st.lists(st.booleans(), min_size=C, max_size=C)))
    is_open[0] = False
    N = np.where(is_open, 0, draw(st.lists(st.integers(1, 5), min_size=C, max_size=C)))
    frac = draw(st.floats(0.0, 0.95))
    kinds = draw(st.lists(st.sampled_from(["queue", "queue", "delay"]), min_size=K, max_size=K))
    delay = np.array([k == "delay" for k in kinds])
    base = np.where(is_open, 1.0, 0.0)
    load = np.where(delay, 0.0, base @ D)
    scale = frac / load.max() if load.max() > 0 else 1.0
    Z = draw(st.lists(st.floats(0.0, 2.0), min_size=C, max_size=C))
    return _net(D, is_open, base * scale, N, np.where(is_open, 0.0, Z), kinds), delay


@settings(max_examples=60, deadline=None)
@given(_mixed())
def test_little_utilisation_and_job_count(case):
    net, delay = case
    res = qn.mixed_network(net)
    op = net.is_open
    K = net.demands.shape[1]
    np.testing.assert_allclose(res.throughput[op], net.arrival_rate[op], rtol=COPY)
    # Little per station (Q = X R) and the utilisation law (U = X D): one product each side
    np.testing.assert_allclose(
        res.queue_length, res.throughput[:, None] * res.residence_time, rtol=closed_form(2)
    )
    np.testing.assert_allclose(
        res.utilization, res.throughput[:, None] * net.demands, rtol=closed_form(2)
    )
    cl = ~op
    jobs = res.queue_length[cl].sum(axis=1) + res.throughput[cl] * net.think_time[cl]
    # X_c = N_c / (Z_c + sum_k R_ck), then K products summed with X Z: 2 K + 4 operations
    np.testing.assert_allclose(jobs, net.population[cl], rtol=closed_form(2 * K + 4))
    assert np.all(res.station_utilization[~delay] < 1.0 + 1e-12)


def test_multiclass_network_objects_open_and_mixed():
    """The L1 description (Network with OpenClass, ClosedClass) solves like the matrix form."""
    stations = [
        qn.Station("cpu", {"batch": "20 ms", "web": "10 ms"}, discipline="PS"),
        qn.Station("disk", {"batch": "50 ms", "web": "30 ms"}, discipline="PS"),
        qn.Station("lan", {"batch": "300 ms", "web": "100 ms"}, kind="delay"),
    ]
    mixed = qn.Network(
        stations, classes=[qn.ClosedClass("batch", 5, think_time=0.5), qn.OpenClass("web", "7/s")]
    )
    ref = _net(
        [[0.02, 0.05, 0.3], [0.01, 0.03, 0.1]],
        [False, True],
        [0.0, 7.0],
        [5, 0],
        [0.5, 0.0],
        ["queue", "queue", "delay"],
    )
    a, b = qn.mixed_network(mixed), qn.mixed_network(ref)
    np.testing.assert_allclose(a.residence_time, b.residence_time, rtol=1e-15)
    assert a.class_names == ("batch", "web") and a.station_names == ("cpu", "disk", "lan")
    c = qn.mixed_network(mixed, {"web": "3/s"}, N={"batch": 2})
    assert c.population.tolist() == [2, 0] and c.arrival_rate.tolist() == [0.0, 3.0]
    only_open = qn.Network(stations, classes=[qn.OpenClass("web", 7.0), qn.OpenClass("batch", 1.0)])
    res = qn.open_network(only_open)
    assert res.method == "open" and res.class_names == ("web", "batch")
    with pytest.raises(
        InvalidModelError, match=r"arrival_rate\['batch'\]: class 'batch' is closed"
    ):
        qn.mixed_network(mixed, {"batch": 1.0})


@settings(max_examples=60, deadline=None)
@given(_mixed())
def test_zero_open_load_equals_closed_mva_property(case):
    """Property: with every open rate set to 0 the closed classes are exactly closed
    multi-class MVA and an open job sees D (1 + Q^cl) at queueing stations."""
    net, delay = case
    res = qn.mixed_network(net, np.zeros(net.C))
    cl = ~net.is_open
    kinds = ["delay" if d else "queue" for d in delay]
    ref = qn.mva_multiclass(
        pf_net(net.demands[cl], net.population[cl], net.think_time[cl], kinds=kinds)
    )
    # two exact multiclass MVA recursions: errors add along a lattice path of sum(N) steps, each
    # step (4 K + 2) C operations
    C, K = net.demands.shape
    tol = recursion(int(net.population.sum()), (4 * K + 2) * C)
    np.testing.assert_allclose(res.throughput[cl], ref.throughput, rtol=tol)
    np.testing.assert_allclose(res.residence_time[cl], ref.residence_time, rtol=tol)
    q_cl = ref.queue_length.sum(axis=0)
    expect = np.where(delay, 1.0, 1.0 + q_cl)[None, :] * net.demands[~cl]
    np.testing.assert_allclose(res.residence_time[~cl], expect, rtol=tol + closed_form(C + 2))
