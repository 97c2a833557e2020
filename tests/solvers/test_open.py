"""Open networks: closed forms, Erlang C in 50-digit arithmetic, the birth-death station,
sweeps, saturation and bad input (qnmodel.open_network, qnmodel.solvers.open)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qnmodel as qn
from qnmodel.errors import InvalidModelError, InvalidTypeError, UnitError, UnstableModelError
from qnmodel.solvers.open import erlang_b, erlang_c, stretch
from qnmodel.solvers.open_stations import _ld_stretch
from tests._nets import mixed_net
from tests._tol import COPY, closed_form, recursion


def _erlang_c_mp(m: int, a: float) -> float:
    """Erlang C from its definition, in 50-digit arithmetic ([BGMT] eq. 6.28)."""
    with mpmath.workdps(50):
        a = mpmath.mpf(a)
        term = mpmath.mpf(1)
        s = mpmath.mpf(0)
        for k in range(m):
            s += term
            term = term * a / (k + 1)  # a^(k+1)/(k+1)!
        top = term * m / (m - a)
        return float(top / (s + top))


def _ld_queue_mp(a: float, r, terms: int = 4000) -> float:
    """Mean jobs of the birth-death station p(j) ~ prod a / r(min(i, L)), summed directly."""
    with mpmath.workdps(40):
        a = mpmath.mpf(a)
        t = mpmath.mpf(1)
        s0, s1 = t, mpmath.mpf(0)
        for j in range(1, terms):
            t = t * a / mpmath.mpf(float(r[min(j, len(r)) - 1]))
            s0 += t
            s1 += j * t
        return float(s1 / s0)


# ---- closed forms -------------------------------------------------------------------------


def test_single_server_network_matches_mm1_closed_form():
    net = qn.Network.from_demands(["5 ms", "8 ms", "20 ms"], kinds=["queue", "queue", "delay"])
    res = qn.open_network(net, "100/s")
    # R = D1/(1-U1) + D2/(1-U2) + D3 = 10 ms + 40 ms + 20 ms
    assert res.response_time[0] == pytest.approx(0.07, rel=1e-14)
    assert res.residence_time[0] == pytest.approx([0.01, 0.04, 0.02], rel=1e-14)
    assert res.utilization[0] == pytest.approx([0.5, 0.8, 2.0], rel=1e-14)
    assert res.queue_length[0] == pytest.approx([1.0, 4.0, 2.0], rel=1e-14)
    assert res.throughput[0] == 100.0
    assert res.saturation_arrival_rate == pytest.approx(125.0, rel=1e-15)
    assert res.bottleneck == "s1"


def test_think_time_of_a_network_is_not_used():
    a = qn.open_network(qn.Network.from_demands([0.01, 0.02]), 20.0)
    b = qn.open_network(qn.Network.from_demands([0.01, 0.02], think_time=5.0), 20.0)
    np.testing.assert_array_equal(a.response_time, b.response_time)


@pytest.mark.parametrize("m", [1, 2, 3, 8, 64, 500])
@pytest.mark.parametrize("rho", [0.01, 0.5, 0.9, 0.999])
def test_erlang_c_matches_the_definition_in_50_digits(m, rho):
    a = rho * m
    assert float(erlang_c(m, np.array([a]))[0]) == pytest.approx(_erlang_c_mp(m, a), rel=1e-12)


def test_erlang_c_is_stable_for_thousands_of_servers():
    m = 5000
    for rho in (0.9, 0.99, 0.9999):
        a = rho * m
        # Erlang B's recursion over m servers (a few operations a step, stable), then
        # C = B / (1 - rho (1 - B)), whose subtraction amplifies by up to 1 / (1 - rho)
        tol = recursion(m, 4) + closed_form(4) / (1 - rho)
        assert float(erlang_c(m, np.array([a]))[0]) == pytest.approx(_erlang_c_mp(m, a), rel=tol)
    # B at m = 5000 would overflow a^m/m! computed directly; the recursion stays in (0, 1]
    b = erlang_b(m, np.array([1e4]))
    assert 0.5 < float(b[0]) < 0.51  # B(m, 2m) ~ 1/2 for large m


def test_mmm_station_mean_jobs_is_the_textbook_formula():
    m, S, lam = 4, 0.1, 30.0  # a = 3 Erlangs, rho = 0.75
    net = qn.Network.from_demands([S], servers=[m])
    res = qn.open_network(net, lam)
    a, rho = lam * S, lam * S / m
    C = _erlang_c_mp(m, a)
    assert res.queue_length[0, 0] == pytest.approx(a + C * rho / (1 - rho), rel=1e-13)
    assert res.residence_time[0, 0] == pytest.approx(S + C * S / (m - a), rel=1e-13)
    assert res.utilization[0, 0] == pytest.approx(0.75, rel=1e-15)


@pytest.mark.parametrize(
    "r", [[1.0, 1.8, 2.4, 2.8], [0.5, 3.0, 2.0], [2.0], [1.0, 1.0, 1.0, 1.0, 1.5]]
)
@pytest.mark.parametrize("frac", [0.0001, 0.3, 0.9, 0.995])
def test_load_dependent_station_matches_direct_sum(r, frac):
    a = frac * r[-1]
    terms = 20000 if frac > 0.99 else 3000
    g = float(_ld_stretch(np.array([a]), np.array(r))[0])
    # a closed form of ~4 operations per rate multiplier; near saturation its rounding is
    # amplified by 1 / (1 - frac) (the 50-digit sum's tail past `terms` is below 1e-20)
    tol = closed_form(4 * len(r) + 4) / (1 - frac)
    assert g * a == pytest.approx(_ld_queue_mp(a, r, terms), rel=tol)


def test_load_dependent_light_load_limit_is_one_over_r1():
    g = _ld_stretch(np.array([0.0, 1e-300]), np.array([2.0, 3.0]))
    assert g == pytest.approx([0.5, 0.5], rel=1e-12)


def test_load_dependent_station_equals_multiserver_and_queue():
    a = np.linspace(0.0, 3.99, 50)[:, None]
    for m in (1, 2, 4):
        aa = np.minimum(a, 0.999 * m)
        ld = stretch(aa, np.array([False]), np.array([1]), (np.arange(1.0, m + 1),))
        ms = stretch(aa, np.array([False]), np.array([m]), (None,))
        # two closed forms of ~4 m operations at rho <= 0.999: amplified by 1 / (1 - rho)
        np.testing.assert_allclose(ld, ms, rtol=closed_form(4 * m + 4) / (1 - 0.999))


# ---- sweeps, saturation, unstable ----------------------------------------------------------


def test_sweep_equals_one_call_per_rate_and_accepts_units():
    net = qn.Network.from_demands(["2 ms", "3 ms", "1 ms"], servers=[1, 2, 1])
    rates = np.linspace(0.0, 490.0, 31)
    sweep = qn.open_network(net, rates)
    assert sweep.response_time.shape == (31,) and sweep.queue_length.shape == (31, 3)
    for i in (0, 7, 30):
        one = qn.open_network(net, float(rates[i]))
        np.testing.assert_allclose(sweep.residence_time[i], one.residence_time[0], rtol=1e-15)
    units = qn.open_network(net, ["100/s", "0.2 kHz", "300 IOPS"])
    np.testing.assert_allclose(units.arrival_rate, [100.0, 200.0, 300.0], rtol=COPY)
    frame = sweep.to_frame()
    assert list(frame.columns) == [
        "arrival_rate",
        "throughput",
        "response_time",
        "system_queue_length",
    ]
    assert len(sweep.to_frame("station")) == 31 * 3


def test_response_time_diverges_at_saturation():
    net = qn.Network.from_demands([0.004, 0.01, 0.003], servers=[1, 2, 1])
    res = qn.open_network(net, 1.0)
    lam_sat = res.saturation_arrival_rate
    assert lam_sat == pytest.approx(200.0, rel=1e-15)
    assert res.bottleneck == "s1"
    eps = np.array([1e-2, 1e-4, 1e-6])
    near = qn.open_network(net, lam_sat * (1 - eps))
    # M/M/2 at rho = 1 - eps: R ~ D / (m eps) (C -> 1)
    assert near.residence_time[:, 1] == pytest.approx(0.01 / (2 * eps), rel=2e-2)


def test_unstable_error_names_station_and_utilisation():
    net = qn.Network.from_demands([0.004, 0.01], names=["cpu", "disk"])
    with pytest.raises(UnstableModelError, match=r"'disk'.*U = 1\.2 >= 1.*at most 100/s"):
        qn.open_network(net, [50.0, 120.0])
    with pytest.raises(UnstableModelError, match=r"'disk'.*U = 1 >= 1"):
        qn.open_network(net, 100.0)
    res = qn.open_network(net, [50.0, 120.0], unstable="inf")
    assert np.isfinite(res.response_time[0]) and np.isinf(res.response_time[1])


@pytest.mark.parametrize(
    ("rate", "exc", "match"),
    [
        (-1.0, InvalidModelError, "arrival_rate must be >= 0, got -1"),
        (float("nan"), InvalidModelError, "arrival_rate must be finite"),
        (float("inf"), InvalidModelError, "arrival_rate must be finite"),
        ("40 MB/s", UnitError, "arrival_rate"),
        (np.array([1.0, -2.0]), InvalidModelError, r"arrival_rate\[1\] must be finite and >= 0"),
        ([1.0, "x"], UnitError, r"arrival_rate\[1\]"),
        ([], InvalidModelError, "arrival_rate is empty"),
        ({"a": 1.0}, InvalidTypeError, "single class"),
        (np.ones((2, 2)), InvalidModelError, "1-D"),
    ],
)
def test_bad_rates_are_named(rate, exc, match):
    net = qn.Network.from_demands([0.001])
    with pytest.raises(exc, match=match):
        qn.open_network(net, rate)


def test_bad_unstable_option_and_bad_net():
    net = qn.Network.from_demands([0.001])
    with pytest.raises(InvalidModelError, match="unstable must be one of"):
        qn.open_network(net, 1.0, unstable="ignore")
    with pytest.raises(InvalidTypeError, match="net must be a Network"):
        qn.open_network([0.1, 0.2], 1.0)


def test_fork_join_element_is_refused():
    fj = qn.ForkJoin("raid", [qn.Station(f"m{i}", 0.1) for i in range(2)])
    net = qn.Network([fj])
    with pytest.raises(
        InvalidModelError,
        match=r"^open_network cannot solve fork-join elements \(station 'raid'\): use "
        r"qnmodel.fork_join \(approximate\) or qnmodel.simulate$",
    ):
        qn.open_network(net, 1.0)


# ---- several classes --------------------------------------------------------------------------


def _multiclass(D, lam, kinds=None, servers=None):
    """Open classes "c0", "c1", ... at rates ``lam``; PS where the classes' demands differ
    (product form, [LZGS] sec. 7.4.1)."""
    C = len(lam)
    return mixed_net(D, [True] * C, lam, [0] * C, kinds=kinds, servers=servers)


def test_multiclass_textbook_values():
    # [LZGS] sec. 7.4.1: R_ck = D_ck / (1 - U_k)
    net = _multiclass(
        [[0.01, 0.02, 0.5], [0.03, 0.01, 0.1]], [10.0, 20.0], ["queue", "queue", "delay"]
    )
    res = qn.open_network(net)
    assert res.method == "open"
    U = np.array([0.1 + 0.6, 0.2 + 0.2])
    expect = np.array([[0.01 / (1 - U[0]), 0.02 / (1 - U[1]), 0.5], [0.03 / 0.3, 0.01 / 0.6, 0.1]])
    # one operating point: rows P = 1, then classes (and stations)
    assert res.residence_time.shape == (1, 2, 3) and res.throughput.shape == (1, 2)
    np.testing.assert_allclose(res.residence_time[0], expect, rtol=1e-14)
    np.testing.assert_allclose(res.class_residence_time("c1")[0], expect[1], rtol=1e-14)
    np.testing.assert_allclose(res.station_utilization[0, :2], U, rtol=1e-14)
    np.testing.assert_allclose(res.queue_length[0], res.throughput[0][:, None] * expect, rtol=1e-14)
    assert res.saturation_scale[0] == pytest.approx(1 / 0.7, rel=1e-14)
    assert res.bottleneck == "s0"
    np.testing.assert_allclose(res.saturation_arrival_rate, [[10 / 0.7, 20 / 0.7]], rtol=1e-14)
    assert res.to_frame().shape == (2, 5) and res.to_frame("station").shape == (3, 4)


def test_multiclass_rates_by_mapping_and_sequence():
    net = _multiclass([[0.01, 0.02], [0.03, 0.01]], [1.0, 1.0])
    a = qn.open_network(net, {"c1": "20/s", "c0": 10})
    b = qn.open_network(net, [10.0, "20 Hz"])
    np.testing.assert_array_equal(a.residence_time, b.residence_time)
    with pytest.raises(
        InvalidModelError, match=r"^no class named 'c9'; classes are \['c0', 'c1'\]$"
    ):
        qn.open_network(net, {"c9": 1.0})
    with pytest.raises(
        InvalidModelError,
        match=r"^arrival_rate has 1 entries but the network has 2 classes \(2 open\): give one "
        r"arrival rate per class$",
    ):
        qn.open_network(net, 3.0)
    with pytest.raises(InvalidModelError, match="3 entries"):
        qn.open_network(net, [1.0, 2.0, 3.0])
    with pytest.raises(
        UnstableModelError, match=r"station 's0' is saturated: utilisation U = 1\.3"
    ):
        qn.open_network(net, [40.0, 30.0])


def test_multiclass_multiserver_shares_by_load():
    D = np.array([[0.2, 0.01], [0.1, 0.02]])
    lam = np.array([5.0, 10.0])
    res = qn.open_network(_multiclass(D, lam, servers=[3, 1]))  # a 3-server PS station
    a = lam @ D
    Qk = a[0] + _erlang_c_mp(3, a[0]) * (a[0] / 3) / (1 - a[0] / 3)
    np.testing.assert_allclose(res.queue_length[0, :, 0], Qk * lam * D[:, 0] / a[0], rtol=1e-13)


# ---- properties --------------------------------------------------------------------------------


@st.composite
def _open_nets(draw):
    K = draw(st.integers(1, 6))
    D = np.array(draw(st.lists(st.floats(1e-4, 1.0), min_size=K, max_size=K)))
    kinds = draw(st.lists(st.sampled_from(["queue", "delay"]), min_size=K, max_size=K))
    servers = draw(st.lists(st.integers(1, 5), min_size=K, max_size=K))
    servers = [1 if k == "delay" else m for k, m in zip(kinds, servers, strict=True)]
    net = qn.Network.from_demands(D, kinds=kinds, servers=servers)
    frac = np.array(draw(st.lists(st.floats(0.0, 0.99), min_size=1, max_size=8)))
    return net, frac


@settings(max_examples=60, deadline=None)
@given(_open_nets())
def test_little_and_utilisation_laws(case):
    net, frac = case
    lam_sat = qn.open_network(net, 0.0).saturation_arrival_rate
    lam = frac * (lam_sat if np.isfinite(lam_sat) else 100.0)
    res = qn.open_network(net, lam)
    np.testing.assert_allclose(res.queue_length, lam[:, None] * res.residence_time, rtol=1e-13)
    cap = np.where(net.is_delay, 1.0, net.servers)
    np.testing.assert_allclose(res.utilization, lam[:, None] * net.demands / cap, rtol=1e-14)
    np.testing.assert_allclose(res.response_time, res.residence_time.sum(axis=1), rtol=1e-14)
    assert np.all(res.residence_time >= net.demands[None, :] * (1 - 1e-14))


@settings(max_examples=60, deadline=None)
@given(_open_nets())
def test_response_time_increases_with_arrival_rate(case):
    net, _ = case
    lam_sat = qn.open_network(net, 0.0).saturation_arrival_rate
    if not np.isfinite(lam_sat):
        return
    lam = lam_sat * np.linspace(0.0, 0.999, 40)
    res = qn.open_network(net, lam)
    assert np.all(np.diff(res.response_time) > 0)
    b = net.names.index(res.bottleneck)  # diverges there: R_b >= D_b / (m (1 - rho)) C
    assert res.residence_time[-1, b] > 100 * net.demands[b]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=6), st.floats(0.0, 0.98))
def test_ld_station_all_ones_is_a_queue(r_tail, frac):
    ones = np.ones(len(r_tail))
    D = np.array([0.01, 0.02])
    lam = np.array([frac / 0.02])
    ld = qn.open_network(
        qn.Network([qn.Station("s0", D[0]), qn.Station("s1", D[1], rate_multipliers=ones)]), lam
    )
    q = qn.open_network(qn.Network.from_demands(D), lam)
    # closed forms of ~4 operations per multiplier at rho = frac: amplified by 1 / (1 - frac)
    tol = closed_form(4 * len(r_tail) + 4) / (1 - frac)
    np.testing.assert_allclose(ld.residence_time, q.residence_time, rtol=tol)
