"""Property-based tests (hypothesis) of bounds and exact MVA on random networks.

Invariants, for every population n = 1..N:

* ABA and BJB bracket exact MVA (X and R), with think time and delay stations;
* Little's law per station, Q_k = X R_k, and for the system, n = X (R + Z);
* utilisation law U_k = X D_k / m_k (per server for multi-server stations);
* X non-decreasing in n and R(1) = D (a lone job never waits), R_k(1) = D_k;
* delay stations never queue: R_k(n) = D_k;
* an m-server station with m >= N behaves exactly as a delay station;
* the load-dependent solver equals the exact solver when every m = 1.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import qnmodel as qn
from qnmodel.solvers.mva import mva_exact, mva_load_dependent
from tests._tol import COPY, LOG_CONV, closed_form, recursion
from tests.reference import exact_mva

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Error budgets of the networks drawn below (K <= 6 stations, N <= 40): exact single-server MVA
# is a recursion of N steps of 4 K + 2 operations; the load-dependent solver is within LOG_CONV
# (its log-space convolution; the complement recursion is tighter); the bounds are closed forms
# of sums over K demands.
EXACT = recursion(40, 4 * 6 + 2)
BOUNDS = closed_form(2 * 6 + 8)
REL = LOG_CONV + BOUNDS  # a bound against (load-dependent) MVA, up to both roundings

demand = st.one_of(
    st.floats(min_value=1e-3, max_value=10.0, allow_nan=False, allow_infinity=False),
    st.just(0.0),  # an idle station must change nothing
)
think = st.one_of(st.just(0.0), st.floats(min_value=1e-3, max_value=50.0))


@st.composite
def networks(draw, multiserver: bool = False, max_k: int = 6):
    """A random network of queues and delays (and multi-servers when asked) and an N."""
    K = draw(st.integers(1, max_k))
    D = draw(st.lists(demand, min_size=K, max_size=K))
    kinds = draw(st.lists(st.sampled_from(["queue", "queue", "delay"]), min_size=K, max_size=K))
    if multiserver:
        servers = draw(st.lists(st.integers(1, 8), min_size=K, max_size=K))
        servers = [1 if k == "delay" else m for k, m in zip(kinds, servers, strict=True)]
    else:
        servers = [1] * K
    Z = draw(think)
    assume(sum(D) + Z > 0)
    N = draw(st.integers(1, 40))
    net = qn.Network.from_demands(D, think_time=Z, kinds=kinds, servers=servers)
    return net, N


def _le(a, b):
    """a <= b up to relative rounding."""
    return np.all(a <= b + REL * np.abs(b))


@SETTINGS
@given(networks(), st.sampled_from(["aba", "bjb"]))
def test_bounds_bracket_exact_mva(case, method):
    net, N = case
    ex = qn.mva(net, N)
    b = qn.bounds(net, N, method=method)
    assert _le(b.throughput_lower, ex.throughput)
    assert _le(ex.throughput, b.throughput_upper)
    assert _le(b.response_time_lower, ex.response_time)
    assert _le(ex.response_time, b.response_time_upper)


@SETTINGS
@given(networks(multiserver=True))
def test_aba_brackets_load_dependent_mva(case):
    net, N = case
    ex = qn.mva(net, N)
    b = qn.bounds(net, N, method="aba")
    assert _le(b.throughput_lower, ex.throughput)
    assert _le(ex.throughput, b.throughput_upper)
    assert _le(b.response_time_lower, ex.response_time)
    assert _le(ex.response_time, b.response_time_upper)


@SETTINGS
@given(networks(multiserver=True))
def test_littles_law_and_utilisation_law(case):
    net, N = case
    res = qn.mva(net, N)
    X = res.throughput[:, None]
    n = np.arange(1, N + 1)
    # Q = X R (a product a side); X = n / (Z + sum_k R_k) (2 K + 4 operations) and the jobs
    # sum_k Q_k + X Z (3 K + 4) -- except that with multi-servers X comes from the
    # load-dependent solver's own quantities (G(n-1)/G(n) in log space): LOG_CONV
    ld = bool(np.any(net.servers > 1))
    cycle = LOG_CONV if ld else closed_form(2 * 6 + 4)
    jobs = LOG_CONV if ld else closed_form(3 * 6 + 4)
    np.testing.assert_allclose(
        res.queue_length, X * res.residence_time, rtol=closed_form(2), atol=0
    )
    np.testing.assert_allclose(res.throughput * (res.response_time + net.think_time), n, rtol=cycle)
    np.testing.assert_allclose(
        res.queue_length.sum(axis=1) + res.throughput * net.think_time, n, rtol=jobs
    )
    np.testing.assert_allclose(res.utilization, X * net.demands / net.servers, rtol=1e-15)
    # A server is never more than fully busy (delay stations: U is the mean busy servers).
    q = ~net.is_delay
    assert np.all(res.utilization[:, q] <= 1.0 + 1e-12)


@SETTINGS
@given(networks(multiserver=True))
def test_throughput_non_decreasing_and_lone_job_never_waits(case):
    net, N = case
    res = qn.mva(net, N)
    assert np.all(np.diff(res.throughput) >= -1e-12 * res.throughput[1:])
    # n = 1: R_k = D_k (1 + 0) or D_k / r(1); their sum in the solver's order and in the
    # network's; X = 1 / (D + Z)
    np.testing.assert_allclose(res.residence_time[0], net.demands, rtol=closed_form(2))
    np.testing.assert_allclose(res.response_time[0], net.total_demand, rtol=closed_form(2 * 6))
    np.testing.assert_allclose(
        res.throughput[0], 1.0 / (net.total_demand + net.think_time), rtol=closed_form(2 * 6 + 2)
    )


@SETTINGS
@given(networks(multiserver=True))
def test_delay_stations_never_queue(case):
    net, N = case
    res = qn.mva(net, N)
    d = net.is_delay
    np.testing.assert_allclose(
        res.residence_time[:, d], np.broadcast_to(net.demands[d], (N, d.sum())), rtol=COPY
    )


@SETTINGS
@given(networks(), st.data())
def test_station_with_at_least_N_servers_is_a_delay(case, data):
    net, N = case
    k = data.draw(st.integers(0, net.K - 1))
    m = data.draw(st.integers(N, N + 5))
    st_k = net.stations[k]
    as_multi = [
        qn.Station(s.name, s.demand, "queue", m) if i == k else s
        for i, s in enumerate(net.stations)
    ]
    as_delay = [
        qn.Station(s.name, s.demand, "delay") if i == k else s for i, s in enumerate(net.stations)
    ]
    if st_k.kind == "delay" or m == 1:
        return  # nothing to compare: already a delay, or m = N = 1 is an ordinary queue
    a = mva_load_dependent(qn.Network(as_multi, net.think_time), N)
    b = mva_exact(qn.Network(as_delay, net.think_time), N)
    # load-dependent (m >= N servers never queue) against exact MVA with a delay there
    np.testing.assert_allclose(a.throughput, b.throughput, rtol=LOG_CONV + EXACT)
    np.testing.assert_allclose(a.queue_length, b.queue_length, rtol=LOG_CONV + EXACT, atol=1e-300)
    np.testing.assert_allclose(a.residence_time[:, k], st_k.demand, rtol=LOG_CONV)


@SETTINGS
@given(networks())
def test_load_dependent_solver_equals_exact_when_all_single_server(case):
    net, N = case
    a, b = mva_exact(net, N), mva_load_dependent(net, N)
    tol = LOG_CONV + EXACT
    np.testing.assert_allclose(b.throughput, a.throughput, rtol=tol)
    np.testing.assert_allclose(b.queue_length, a.queue_length, rtol=tol, atol=1e-300)
    np.testing.assert_allclose(b.residence_time, a.residence_time, rtol=tol, atol=1e-300)
    np.testing.assert_allclose(b.utilization, a.utilization, rtol=tol)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(1, 40), min_size=1, max_size=3),
    st.lists(st.integers(1, 4), min_size=3, max_size=3),
    st.lists(st.sampled_from(["queue", "delay"]), min_size=3, max_size=3),
    st.integers(0, 30),
    st.integers(1, 8),
)
def test_solver_equals_exact_rational_oracle(tenths, servers, kinds, z_tenths, N):
    """Random small networks with rational demands against the Fraction convolution oracle."""
    K = len(tenths)
    D = [Fraction(t, 10) for t in tenths]
    kinds = kinds[:K]
    m = [1 if k == "delay" else s for k, s in zip(kinds, servers[:K], strict=True)]
    Z = Fraction(z_tenths, 10)
    ex = exact_mva(D, N, Z, kinds, m)
    net = qn.Network.from_demands([float(d) for d in D], float(Z), kinds=kinds, servers=m)
    res = qn.mva(net, N)
    # against exact rationals: the solver's own error only (plus rounding D to floats)
    tol = LOG_CONV if max(m) > 1 else recursion(N, 4 * K + 2) + closed_form(1)
    np.testing.assert_allclose(res.throughput, [float(x) for x in ex["X"]], rtol=tol)
    np.testing.assert_allclose(res.queue_length, np.array(ex["Q"], dtype=float), rtol=tol)
