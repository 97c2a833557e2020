"""The O(N (K + m)) complement recursion of ``mva_load_dependent`` (one multi-server station).

It is checked against the log-space convolution (an independent exact algorithm) on random
networks, against a 60-digit computation of the normalising constants at utilisation above
0.999 with up to 64 servers, against closed forms (a lone m-server station; the open-queue
limit of the non-bottleneck stations at large N), and at N = 10^5.
"""

from __future__ import annotations

import contextlib
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qnmodel as qn
from qnmodel.solvers.mva import (
    COMPLEMENT_MAX_SERVERS,
    COMPLEMENT_MAX_STATIONS,
    mva_exact,
    mva_load_dependent,
)
from tests._tol import LOG_CONV, exact_mva
from tests.solvers.test_mva_ld import mp_mean_values

FIELDS = ("throughput", "response_time", "queue_length", "residence_time", "utilization")


def _assert_same(a, b, rtol, what=""):
    np.testing.assert_array_equal(a.n, b.n)
    assert a.method == b.method == "mva.ld"
    assert a.station_names == b.station_names
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.shape == y.shape, f
        # zero-demand stations have exactly 0 in both; compare the rest relatively
        np.testing.assert_allclose(x, y, rtol=rtol, atol=0, err_msg=f"{what} {f}")


@st.composite
def one_multiserver_network(draw):
    m = draw(st.integers(2, 64))
    k = draw(st.integers(0, 5))
    demands = [draw(st.floats(0.05, 5.0))]
    kinds, servers = ["queue"], [m]
    for _ in range(k):
        kind = draw(st.sampled_from(["queue", "queue", "delay"]))
        demands.append(draw(st.sampled_from([0.0, draw(st.floats(1e-3, 2.0))])))
        kinds.append(kind)
        servers.append(1)
    order = draw(st.permutations(range(k + 1)))
    Z = draw(st.sampled_from([0.0, draw(st.floats(0.01, 10.0))]))
    if Z == 0.0 and k == 0:
        Z = 0.5
    net = qn.Network.from_demands(
        [demands[i] for i in order],
        think_time=Z,
        kinds=[kinds[i] for i in order],
        servers=[servers[i] for i in order],
    )
    return net, draw(st.integers(1, 150))


@settings(max_examples=60, deadline=None)
@given(one_multiserver_network())
def test_complement_equals_log_space_convolution(case):
    net, N = case
    a = mva_load_dependent(net, N, algorithm="complement")
    b = mva_load_dependent(net, N, algorithm="convolution")
    # the convolution within LOG_CONV (N <= 150 here), the complement a few ulps
    _assert_same(a, b, LOG_CONV)
    # Every job is somewhere, at every n; U of a queueing station is per server (<= 1).
    np.testing.assert_allclose(
        a.queue_length.sum(axis=1) + a.throughput * net.think_time, a.n, rtol=1e-12
    )
    assert np.all(a.utilization[:, ~net.is_delay] <= 1.0 + 1e-12)
    last = mva_load_dependent(net, N, keep="last", algorithm="complement")
    for f in FIELDS:
        np.testing.assert_allclose(getattr(last, f), getattr(a, f)[-1:], rtol=1e-15, err_msg=f)


SATURATED = {
    # 64-server bottleneck (per-server demand 0.1 s) behind two single-server queues
    "m64_queues_think": dict(demands=[6.4, 0.05, 0.03], servers=[64, 1, 1], Z=2.0, N=300),
    # a lone 64-server station with a short think time (finite-source M/M/64)
    "m64_alone": dict(demands=[64.0], servers=[64], Z=0.5, N=240),
    # 48 servers, no think time, a delay and a queue
    "m48_no_think": dict(demands=[4.8, 0.3, 0.02], servers=[48, 1, 1], Z=0.0, N=260),
    # 2 servers (the smallest multi-server case) deep in saturation
    "m2_deep": dict(demands=[1.0, 0.1, 0.2], servers=[2, 1, 1], Z=1.0, N=400),
}


@pytest.mark.parametrize("name", list(SATURATED))
def test_complement_matches_60_digit_oracle_above_0999_utilisation(name):
    spec = SATURATED[name]
    D, m, Z, N = spec["demands"], spec["servers"], spec["Z"], spec["N"]
    kinds = ["delay" if name == "m48_no_think" and i == 1 else "queue" for i in range(len(D))]
    net = qn.Network.from_demands(D, think_time=Z, servers=m, kinds=kinds)
    res = mva_load_dependent(net, N, algorithm="complement")
    assert res.utilization[-1, 0] > 0.999
    X_mp, Q_mp, _ = mp_mean_values(D, m, [k == "delay" for k in kinds], Z, N)
    # the complement recursion against 60 digits: 4 K eps (tests/_tol.py exact_mva)
    np.testing.assert_allclose(res.throughput[-1], X_mp, rtol=exact_mva(len(D)))
    np.testing.assert_allclose(res.queue_length[-1], Q_mp, rtol=exact_mva(len(D)))
    assert np.all(res.queue_length >= 0) and np.all(np.isfinite(res.residence_time))
    assert np.all(np.diff(res.throughput) >= -1e-13 * res.throughput[1:])


def test_lone_m_server_station_closed_form():
    """No think time, one m-server station: X(n) = min(n, m)/D, Q = n, R = n/X (exact)."""
    D, m, N = 2.5, 7, 40
    res = mva_load_dependent(qn.Network.from_demands([D], servers=[m]), N, algorithm="complement")
    n = np.arange(1, N + 1)
    np.testing.assert_allclose(res.throughput, np.minimum(n, m) / D, rtol=1e-14)
    np.testing.assert_allclose(res.queue_length[:, 0], n, rtol=1e-14)
    np.testing.assert_allclose(res.residence_time[:, 0], n * D / np.minimum(n, m), rtol=1e-14)


def test_hundred_thousand_jobs_in_seconds_and_the_open_queue_limit():
    """N = 10^5 with a 32-server bottleneck: finite, every job accounted for at every n, X at
    m/D, and the single-server queues at their open M/M/1 values U/(1 - U)."""
    D = [3.2, 0.05, 0.01, 0.04]
    net = qn.Network.from_demands(D, servers=[32, 1, 1, 1], think_time=1.0)
    N = 100_000
    t0 = time.perf_counter()
    res = mva_load_dependent(net, N)
    seconds = time.perf_counter() - t0
    print(f"\nN = 10^5, one 32-server station: {seconds:.3f} s ({qn.solvers._kernels.status()})")
    assert res.n.size == N and np.all(np.isfinite(res.queue_length))
    np.testing.assert_allclose(
        res.queue_length.sum(axis=1) + res.throughput * 1.0, res.n, rtol=1e-12
    )
    assert res.throughput[-1] == pytest.approx(10.0, rel=1e-13)
    U = 10.0 * np.array(D[1:])
    np.testing.assert_allclose(res.queue_length[-1, 1:], U / (1 - U), rtol=1e-12)
    np.testing.assert_allclose(res.queue_length[-1, 0], N - 10.0 - (U / (1 - U)).sum(), rtol=1e-13)


def test_auto_takes_the_complement_only_where_it_applies():
    one = qn.Network.from_demands([0.8, 0.1], servers=[4, 1], think_time=1.0)
    two = qn.Network.from_demands([0.8, 0.3, 0.1], servers=[4, 3, 1], think_time=1.0)
    wide = qn.Network.from_demands([60.0, 0.1], servers=[COMPLEMENT_MAX_SERVERS + 1, 1])
    many = qn.Network.from_demands(
        [0.2 * (i + 1) for i in range(COMPLEMENT_MAX_STATIONS + 1)],
        servers=[2] * (COMPLEMENT_MAX_STATIONS + 1),
    )
    for net in (one, two, wide, many):
        auto = mva_load_dependent(net, 40)
        conv = mva_load_dependent(net, 40, algorithm="convolution")
        _assert_same(auto, conv, LOG_CONV)  # N = 40
    with pytest.raises(qn.InvalidModelError, match=r"algorithm='complement'.*has 7 .*\[2, 2,"):
        mva_load_dependent(many, 10, algorithm="complement")
    with pytest.raises(qn.InvalidModelError, match="at most 512 servers"):
        mva_load_dependent(wide, 10, algorithm="complement")
    with pytest.raises(ValueError, match="algorithm"):
        mva_load_dependent(one, 10, algorithm="fast")
    # the dispatcher in mva() reaches the same path
    _assert_same(qn.mva(one, 60), mva_load_dependent(one, 60, algorithm="complement"), 0)
    _assert_same(qn.mva(two, 60), mva_load_dependent(two, 60, algorithm="complement"), 0)


@st.composite
def several_multiserver_network(draw):
    L = draw(st.integers(2, 3))
    demands = [draw(st.floats(0.05, 5.0)) for _ in range(L)]
    servers = [draw(st.integers(2, 24)) for _ in range(L)]
    kinds = ["queue"] * L
    for _ in range(draw(st.integers(0, 3))):
        kinds.append(draw(st.sampled_from(["queue", "queue", "delay"])))
        demands.append(draw(st.sampled_from([0.0, draw(st.floats(1e-3, 2.0))])))
        servers.append(1)
    order = draw(st.permutations(range(len(demands))))
    Z = draw(st.sampled_from([0.0, draw(st.floats(0.01, 10.0))]))
    net = qn.Network.from_demands(
        [demands[i] for i in order],
        think_time=Z,
        kinds=[kinds[i] for i in order],
        servers=[servers[i] for i in order],
    )
    return net, draw(st.integers(1, 120))


@settings(max_examples=40, deadline=None)
@given(several_multiserver_network())
def test_subset_complement_equals_log_space_convolution(case):
    """L = 2 or 3 multi-server stations: every subset of them steps per n, same numbers."""
    net, N = case
    a = mva_load_dependent(net, N, algorithm="complement")
    b = mva_load_dependent(net, N, algorithm="convolution")
    _assert_same(a, b, LOG_CONV)  # N <= 120
    last = mva_load_dependent(net, N, keep="last", algorithm="complement")
    for f in FIELDS:
        np.testing.assert_allclose(getattr(last, f), getattr(a, f)[-1:], rtol=1e-15, err_msg=f)


def test_two_multiserver_stations_at_large_N():
    """An 8-server and a 32-server station, N = 2 10^4: linear time, jobs conserved, X at the
    saturation of the 32-server bottleneck, the 8-server station at its open M/M/8 mean."""
    net = qn.Network.from_demands([3.2, 0.4, 0.05], servers=[32, 8, 1], think_time=1.0)
    N = 20_000
    res = mva_load_dependent(net, N, keep="last")
    assert res.throughput[0] == pytest.approx(10.0, rel=1e-13)
    assert res.queue_length.sum() + res.throughput[0] == pytest.approx(N, rel=1e-13)
    # open M/M/c limit of the 8-server station at arrival rate 10/s, service rate 1/0.4 = 2.5
    c, a = 8, 10.0 * 0.4
    rho = a / c
    terms = [a**k / math.factorial(k) for k in range(c)]
    tail = a**c / math.factorial(c) / (1 - rho)
    erlang_c = tail / (sum(terms) + tail)
    L_mmc = a + erlang_c * rho / (1 - rho)
    assert res.queue_length[0, 1] == pytest.approx(L_mmc, rel=1e-12)


@pytest.mark.parametrize("m", [128, COMPLEMENT_MAX_SERVERS])
def test_many_servers_through_the_knee_and_past_underflow_of_the_idle_probability(m):
    """Up to the largest m the complement takes: the whole curve through the knee (n ~ m) and
    far beyond, where p(0|n) underflows the double range, equals the convolution."""
    net = qn.Network.from_demands([0.1 * m, 0.05, 0.02], servers=[m, 1, 1], think_time=2.0)
    N = max(3 * m + 200, 1000)
    a = mva_load_dependent(net, N, algorithm="complement")
    b = mva_load_dependent(net, N, algorithm="convolution")
    _assert_same(a, b, 1e-10)
    assert a.utilization[-1, 0] > 0.9999
    # The regime the test is about: log p(0|N) = sum_n log(X(n) / X_c(n)) is below the
    # double range (X_c from the complement network, solved on its own).
    comp = mva_exact(qn.Network.from_demands([0.05, 0.02], think_time=2.0), N)
    log10_p0 = np.sum(np.log10(b.throughput) - np.log10(comp.throughput))
    assert log10_p0 < -308


# One multi-server station through the subset recursion with L = 1: X(n), Q_s(n) and R(n) at
# n = 1, 7 and N as the dedicated one-station recursion (qnk_mva_ld1 and its numpy twin,
# replaced by qnk_mva_ld) computed them, printed with repr. The subset recursion does the
# same arithmetic in the same order: the compiled path gives these to the last bit (checked
# to one ulp), the numpy path within a few ulps (it sums over stations pairwise, the
# compiled kernel with four partial sums, as the numpy twin of the old recursion did).
PREVIOUS_ONE_STATION = {
    "one32": (
        dict(D=[3.2, 0.05, 0.01, 0.04], servers=[32, 1, 1, 1], Z=1.0, kinds=None, N=300),
        [0.23255813953488372, 1.6255726255642702, 10.0],
        [0.7441860465116279, 5.201832401805665, 288.2222222222222],
        [3.3, 3.306174876419412, 29.0],
    ),
    "mid_delay": (
        dict(D=[0.02, 0.5, 0.3, 0.01], servers=[1, 4, 1, 1], Z=0.0,
             kinds=["queue", "queue", "delay", "queue"], N=50),
        [1.2048192771084336, 7.340206167587772, 8.0],
        [0.6024096385542168, 4.550086113857461, 47.32256728778468],
        [0.8300000000000001, 0.9536516877291507, 6.25],
    ),
    "alone": (
        dict(D=[1.0], servers=[3], Z=0.2, kinds=None, N=40),
        [0.8333333333333334, 2.9995949147017713, 3.0],
        [0.8333333333333334, 6.400081017059645, 39.400000000000006],
        [1.0, 2.1336484422250597, 13.133333333333335],
    ),
    "zero_demand": (
        dict(D=[0.0, 0.2, 0.7], servers=[1, 1, 8], Z=0.5, kinds=None, N=120),
        [0.7142857142857143, 4.074726320799619, 4.999999999999999],
        [0.5, 2.8523084245597325, 3.523244471550091],
        [0.8999999999999999, 1.2179067865903517, 23.500000000000004],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(PREVIOUS_ONE_STATION))
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
def test_subset_recursion_with_one_station_equals_the_former_one_station_kernel(name, compiled):
    from qnmodel.solvers import _kernels

    c, X, Qs, R = PREVIOUS_ONE_STATION[name]
    net = qn.Network.from_demands(c["D"], think_time=c["Z"], kinds=c["kinds"], servers=c["servers"])
    if compiled:  # the installed package ships them (tests/solvers/test_kernels.py)
        assert _kernels.available(), _kernels.status()
    with contextlib.nullcontext() if compiled else _kernels.force_numpy():
        res = mva_load_dependent(net, c["N"], algorithm="complement")
    idx = [0, 6, c["N"] - 1]
    s = int(np.argmax(c["servers"]))
    rtol = 2.3e-16 if compiled else 1e-15
    np.testing.assert_allclose(res.throughput[idx], X, rtol=rtol, atol=0)
    np.testing.assert_allclose(res.queue_length[idx, s], Qs, rtol=rtol, atol=0)
    np.testing.assert_allclose(res.response_time[idx], R, rtol=rtol, atol=0)
