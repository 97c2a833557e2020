"""qnmodel.thread_pool / thread_pool_open: a subsystem with a population limit (a server's
thread pool, a device's queue depth) by the flow-equivalent server, against the exact Markov
chain of the whole network and against closed forms."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import qnmodel as qn

sys.path.insert(0, str(Path(__file__).parent))
from _threadpool_ctmc import solve_pool_ctmc  # noqa: E402

EXACT = "fes (exact: flow-equivalent server)"


def _net(D, Z=0.0, names=("cpu", "disk")):
    return qn.Network([qn.Station(n, d) for n, d in zip(names, D, strict=True)], think_time=Z)


APPROX = "fes (approximate: flow-equivalent server)"


def _check_against_chain(r, n, c, rtol):
    i = n - 1
    assert r.throughput[i] == pytest.approx(c.X, rel=rtol)
    np.testing.assert_allclose(r.queue_length[i, : c.Q.size], c.Q, rtol=rtol, atol=1e-12)
    assert r.thread_queue[i] == pytest.approx(c.waiting, rel=rtol, abs=1e-12)
    assert r.threads_busy[i] == pytest.approx(c.busy, rel=rtol)
    assert r.thread_wait[i] == pytest.approx(c.waiting / c.X, rel=rtol, abs=1e-12)


@pytest.mark.parametrize(
    ("D", "Z", "N", "T", "route"),
    [
        ((0.3, 0.7), 1.0, 6, 2, {"a": (0.5, 0.5), "e": 0.5}),
        ((0.5, 0.2), 0.4, 7, 3, {"a": (0.2, 0.8), "e": 0.25}),
        ((0.05, 0.4), 2.0, 8, 4, {"series": True}),
    ],
)
def test_closed_exact_while_the_limit_does_not_bind(D, Z, N, T, route):
    # n <= T: the limit never binds, the network is product form and the FES exact
    r = qn.thread_pool(_net(D, Z), N, threads=T)
    assert r.method == APPROX  # some n > T are solved
    for n in range(1, T + 1):
        _check_against_chain(r, n, solve_pool_ctmc(D, T, N=n, Z=Z, **route), 1e-9)
    assert qn.thread_pool(_net(D, Z), T, threads=T).method == EXACT


@pytest.mark.parametrize("route", [{"a": (0.7, 0.3), "e": 1.0}, {"series": True}])
def test_closed_exact_without_think_time(route):
    # no think time, nothing outside: the pool holds every request, min(n, T) inside
    D, N, T = (0.5, 0.2), 5, 2
    r = qn.thread_pool(_net(D, 0.0), N, threads=T)
    assert r.method == EXACT
    for n in range(1, N + 1):
        _check_against_chain(r, n, solve_pool_ctmc(D, T, N=n, Z=0.0, **route), 1e-9)


def test_queue_depth_limit_of_one_device_equals_markov_chain():
    # a 4-server device (4 channels) whose queue depth is limited to 2, behind a link
    dev = qn.Station("ssd", 0.4, servers=4)
    net = qn.Network([dev, qn.Station("link", 0.25)], think_time=1.5)
    r = qn.thread_pool(net, 7, threads=2, subsystem="ssd")
    assert r.method == EXACT
    for n in (1, 2, 4, 7):
        c = solve_pool_ctmc((0.4,), 2, N=n, Z=1.5, D_out=0.25, servers=(4,))
        _check_against_chain(r, n, c, 1e-9)
        assert r.queue_length[n - 1, 1] == pytest.approx(c.outer, rel=1e-9)


def test_closed_with_a_station_outside_equals_markov_chain_while_not_binding():
    # clients -> pool (cpu, disk; 3 threads) -> network link outside the pool -> clients
    D, D_out, Z, T = (0.3, 0.6), 0.25, 1.5, 3
    net = qn.Network(
        [qn.Station("cpu", D[0]), qn.Station("disk", D[1]), qn.Station("link", D_out)],
        think_time=Z,
    )
    r = qn.thread_pool(net, 3, threads=T, subsystem=["cpu", "disk"])
    assert r.in_subsystem.tolist() == [True, True, False] and r.method == EXACT
    for n in (1, 2, 3):
        c = solve_pool_ctmc(D, T, N=n, Z=Z, D_out=D_out)
        _check_against_chain(r, n, c, 1e-9)
        assert r.queue_length[n - 1, 2] == pytest.approx(c.outer, rel=1e-9)


def test_approximate_where_the_limit_binds_error_as_documented():
    # T = 1, CPU then disk: the pool is M/E2-like//N; the FES is M/M/1//N (module
    # docstring). Errors of the documented size, and the sign: a sum of exponentials is
    # less variable than one exponential, so the true pool does better than the FES.
    D, Z, T = (0.3, 0.7), 1.0, 1
    r = qn.thread_pool(_net(D, Z), 6, threads=T)
    assert r.method == APPROX
    for n in range(2, 7):
        c = solve_pool_ctmc(D, T, N=n, Z=Z, series=True)
        assert 0 < 1 - r.throughput[n - 1] / c.X < 0.02
    # random routing with feedback (more variable than exponential): the FES does better
    c = solve_pool_ctmc(D, T, N=2, Z=Z, a=(0.5, 0.5), e=0.2)
    assert 0 < r.throughput[1] / c.X - 1 < 0.03


def test_documented_accuracy_fixed_seed_subset():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "accuracy"))
    from thread_pool import closed_errors, open_errors  # noqa: PLC0415

    c = closed_errors(2026, 12)
    o = open_errors(2027, 8)
    # the first cases of the documented families (module docstring's table), whose worst
    # errors bound them; CPU-then-disk pools: X always low, within 3.1 %
    series = c["series"]
    assert series.any() and (~series).any()
    assert np.all(c["X"][series] < 0) and np.all(c["X"][series] > -0.031)
    assert np.all(c["R"][series] > 0) and np.all(c["R"][series] < 0.066)
    assert np.max(np.abs(c["X"])) < 0.161 and np.max(np.abs(c["R"])) < 0.257
    assert np.max(np.abs(o["X"])) < 0.274 and np.max(np.abs(o["R"])) < 0.334


def test_enough_threads_is_plain_mva():
    net = qn.Network(
        [qn.Station("cpu", "2 ms"), qn.Station("d1", "9 ms"), qn.Station("d2", "7 ms"),
         qn.Station("lan", "1 ms", servers=2)],
        think_time="50 ms",
    )  # fmt: skip
    N = 12
    m = qn.mva(net, N)
    for T in (N, N + 5):
        r = qn.thread_pool(net, N, threads=T)
        np.testing.assert_allclose(r.throughput, m.throughput, rtol=1e-12)
        np.testing.assert_allclose(r.queue_length, m.queue_length, rtol=1e-11)
        np.testing.assert_allclose(r.response_time, m.response_time, rtol=1e-11)
        np.testing.assert_allclose(r.utilization, m.utilization, rtol=1e-12)
        assert np.max(r.thread_wait) < 1e-12 * np.max(r.response_time)


def test_one_thread_is_one_server_of_the_summed_demand():
    # T = 1: one request at a time in the subsystem, so the pool is a single server of
    # demand sum D_k (exponential sojourn? no, but product form only needs the mean: the
    # FES rate is X_S(1) = 1 / sum D_k at every population).
    D, Z, N = (0.002, 0.009, 0.007), 0.05, 15
    net = qn.Network([qn.Station(f"s{k}", d) for k, d in enumerate(D)], think_time=Z)
    r = qn.thread_pool(net, N, threads=1)
    m = qn.mva(qn.Network([qn.Station("pool", sum(D))], think_time=Z), N)
    np.testing.assert_allclose(r.throughput, m.throughput, rtol=1e-12)
    np.testing.assert_allclose(r.response_time, m.response_time, rtol=1e-12)
    np.testing.assert_allclose(r.threads_busy, m.utilization[:, 0], rtol=1e-12)
    # inside, each station holds the request a share D_k / sum D of the busy time
    np.testing.assert_allclose(
        r.queue_length, m.utilization[:, :1] * (np.array(D) / sum(D))[None, :], rtol=1e-12
    )


def test_queue_depth_limit_truncates_the_rate_curve():
    # A device whose rate grows with its queue depth (r(j) = 1, 1.8, 2.4, 2.8, 3): a
    # queue-depth limit of 2 makes it the same device with the curve cut at depth 2.
    curve = [1.0, 1.8, 2.4, 2.8, 3.0]
    net = qn.Network(
        [qn.Station("host", "0.2 ms"), qn.Station("ssd", "1 ms", rate_multipliers=curve)],
        think_time="1 ms",
    )
    r = qn.thread_pool(net, 10, threads=2, subsystem="ssd")
    cut = qn.Network(
        [qn.Station("host", "0.2 ms"), qn.Station("ssd", "1 ms", rate_multipliers=curve[:2])],
        think_time="1 ms",
    )
    m = qn.mva(cut, 10)
    np.testing.assert_allclose(r.throughput, m.throughput, rtol=1e-12)
    np.testing.assert_allclose(r.queue_length[:, 0], m.queue_length[:, 0], rtol=1e-11)
    # the device's queue (OS queue + device) is the FES queue; inside at most 2
    np.testing.assert_allclose(r.thread_queue + r.threads_busy, m.queue_length[:, 1], rtol=1e-11)
    assert np.all(r.threads_busy <= 2.0 + 1e-12)


def test_invariants():
    net = qn.Network(
        [qn.Station("cpu", "1 ms", servers=2), qn.Station("d1", "6 ms"),
         qn.Station("d2", "4 ms"), qn.Station("lan", "0.5 ms")],
        think_time="20 ms",
    )  # fmt: skip
    N, T = 40, 5
    r = qn.thread_pool(net, N, threads=T, subsystem=["cpu", "d1", "d2"])
    n = np.arange(1, N + 1)
    # Little's law over the whole network, and for the pool
    np.testing.assert_allclose(r.throughput * (r.response_time + 0.02), n, rtol=1e-11)
    np.testing.assert_allclose(r.queue_length[:, :3].sum(axis=1), r.threads_busy, rtol=1e-11)
    np.testing.assert_allclose(r.throughput * r.thread_wait, r.thread_queue, rtol=1e-12)
    # utilisation law
    np.testing.assert_allclose(
        r.utilization, r.throughput[:, None] * np.array([0.0005, 0.006, 0.004, 0.0005]),
        rtol=1e-12,
    )  # fmt: skip
    assert np.all(r.threads_busy <= T + 1e-12)
    assert r.pool_distribution.sum() == pytest.approx(1.0, rel=1e-12)
    # the throughput never passes the pool's saturation X_S(T)
    assert np.all(r.throughput <= r.subsystem_throughput[-1] * (1 + 1e-12))
    # the throughput grows with n (to X_S(T), within rounding) and with the thread count
    assert np.all(np.diff(r.throughput) > -1e-12 * r.throughput[-1])
    r6 = qn.thread_pool(net, N, threads=T + 1, subsystem=["cpu", "d1", "d2"])
    assert np.all(r6.throughput >= r.throughput * (1 - 1e-12))


def test_large_population_keeps_littles_law():
    # the tail of the pool (j > T) comes from running sums; 3000 clients, 16 threads
    net = qn.Network(
        [qn.Station("cpu", "0.3 ms")] + [qn.Station(f"d{i}", "2 ms") for i in range(4)]
        + [qn.Station("lan", "0.1 ms")],
        think_time="50 ms",
    )  # fmt: skip
    N = 3000
    r = qn.thread_pool(net, N, threads=16, subsystem=["cpu", "d0", "d1", "d2", "d3"])
    n = np.arange(1, N + 1)
    np.testing.assert_allclose(r.throughput * (r.response_time + 0.05), n, rtol=1e-11)
    assert r.pool_distribution.sum() == pytest.approx(1.0, rel=1e-11)
    assert float(r.pool_distribution @ np.arange(N + 1)) == pytest.approx(
        r.threads_busy[-1] + r.thread_queue[-1], rel=1e-11
    )
    # far past saturation: X = X_S(16), nearly every client waits for a thread
    assert r.throughput[-1] == pytest.approx(r.subsystem_throughput[-1], rel=1e-12)
    assert r.threads_busy[-1] == pytest.approx(16.0, rel=1e-12)


@pytest.mark.parametrize(("lam", "T", "cap"), [(5.0, 2, 5), (8.0, 3, 7), (2.0, 1, 4)])
def test_open_queue_depth_limit_equals_markov_chain(lam, T, cap):
    # one 4-server device, depth limited to T, at most cap requests queued in all: exact
    net = qn.Network([qn.Station("ssd", 0.4, servers=4)])
    r = qn.thread_pool_open(net, lam, threads=T, capacity=cap)
    assert r.method == EXACT
    c = solve_pool_ctmc((0.4,), T, lam=lam, capacity=cap, servers=(4,))
    assert r.throughput == pytest.approx(c.X, rel=1e-9)
    assert r.loss_probability == pytest.approx(1 - c.X / lam, rel=1e-9)
    np.testing.assert_allclose(r.queue_length, c.Q, rtol=1e-9)
    assert r.thread_queue == pytest.approx(c.waiting, rel=1e-9)
    assert r.response_time == pytest.approx((c.busy + c.waiting) / c.X, rel=1e-9)
    # the same device as an M/M/min(4,T)/cap queue
    q = qn.queue_mmmk(lam, 0.4, min(4, T), cap)
    assert r.response_time == pytest.approx(q.response_time, rel=1e-12)


def test_open_unlimited_is_the_limit_of_large_capacity():
    D = (0.3, 0.7)
    r = qn.thread_pool_open(_net(D), 0.8, threads=2)
    big = qn.thread_pool_open(_net(D), 0.8, threads=2, capacity=400)
    assert r.loss_probability == 0.0 and r.capacity is None
    assert r.response_time == pytest.approx(big.response_time, rel=1e-12)
    np.testing.assert_allclose(r.queue_length, big.queue_length, rtol=1e-12)
    # one thread: M/M/1 with service time sum D
    one = qn.thread_pool_open(_net(D), 0.5, threads=1)
    assert one.response_time == pytest.approx(1.0 / (1.0 / 1.0 - 0.5), rel=1e-12)
    # plenty of threads: the open product-form network, R = sum D_k / (1 - lam D_k)
    many = qn.thread_pool_open(_net(D), 1.2, threads=200)
    assert many.response_time == pytest.approx(sum(d / (1 - 1.2 * d) for d in D), rel=1e-12)


def test_open_unstable_refused():
    with pytest.raises(qn.UnstableModelError, match=r"saturation throughput X_S\(T\)"):
        qn.thread_pool_open(_net((0.3, 0.7)), 2.0, threads=2)


def test_labels_repr_and_frames():
    net = _net(("1 ms", "8 ms"), "100 ms")
    r = qn.thread_pool(net, 20, threads=2)
    assert r.throughput[-1] == pytest.approx(121.70, abs=0.005)  # the docstring's example
    assert "T=2" in repr(r) and "thread wait" in repr(r)
    f = r.to_frame()
    assert list(f.columns)[:3] == ["n", "throughput", "response_time"] and len(f) == 20
    assert len(r.to_frame("station")) == 40
    with pytest.raises(qn.InvalidModelError, match="level must be"):
        r.to_frame("nope")
    o = qn.thread_pool_open(_net(("1 ms", "8 ms")), "100/s", threads=1)
    assert o.method == APPROX and "loss=0" in repr(o) and len(o.to_frame()) == 2
    assert math.isclose(o.response_time, 0.09, rel_tol=1e-12)


# -- refusals, one per message ---------------------------------------------------------


def test_refuses_several_classes():
    net = qn.Network(
        [qn.Station("cpu", "1 ms")],
        classes=[qn.ClosedClass("a", 2), qn.ClosedClass("b", 3)],
    )
    with pytest.raises(qn.InvalidModelError, match="solves one class; this network has 2"):
        qn.thread_pool(net, 5, threads=2)
    with pytest.raises(qn.InvalidModelError, match="solves one class"):
        qn.thread_pool_open(net, 1.0, threads=2)


def test_refuses_bad_subsystem():
    net = _net((0.1, 0.2))
    with pytest.raises(qn.InvalidModelError, match="'tape', which is not a station"):
        qn.thread_pool(net, 3, threads=1, subsystem=["tape"])
    with pytest.raises(qn.InvalidModelError, match="names station 'cpu' twice"):
        qn.thread_pool(net, 3, threads=1, subsystem=["cpu", "cpu"])
    with pytest.raises(qn.InvalidModelError, match="non-empty list of station names"):
        qn.thread_pool(net, 3, threads=1, subsystem=[])
    with pytest.raises(qn.InvalidTypeError, match="must hold station names"):
        qn.thread_pool(net, 3, threads=1, subsystem=[0])
    z = qn.Network([qn.Station("cpu", 0.0), qn.Station("disk", 0.1)], think_time=1.0)
    with pytest.raises(qn.InvalidModelError, match="the subsystem has no demand"):
        qn.thread_pool(z, 3, threads=1, subsystem="cpu")


def test_refuses_bad_numbers_and_models():
    net = _net((0.1, 0.2), 1.0)
    with pytest.raises(qn.InvalidModelError, match="threads must be an integer >= 1"):
        qn.thread_pool(net, 3, threads=0)
    with pytest.raises(qn.InvalidTypeError, match="net must be a Network"):
        qn.thread_pool([0.1], 3, threads=1)
    with pytest.raises(qn.InvalidModelError, match="capacity = 1 is below threads = 2"):
        qn.thread_pool_open(_net((0.1, 0.2)), 1.0, threads=2, capacity=1)
    with pytest.raises(qn.LatticeTooLargeError, match="the open pool of threads = 10000000000"):
        qn.thread_pool_open(_net((0.1, 0.2)), 1.0, threads=10**10)
    with pytest.raises(qn.InvalidModelError, match="arrival_rate must be > 0"):
        qn.thread_pool_open(_net((0.1, 0.2)), 0.0, threads=2)
    ne = qn.Network([qn.Station("disk", "5 ms", scv=0.0)], think_time=1.0)
    with pytest.raises(qn.InvalidModelError, match="thread_pool cannot solve non-exponential"):
        qn.thread_pool(ne, 3, threads=1)
    open_cls = qn.Network([qn.Station("cpu", "1 ms")], classes=[qn.OpenClass("a", "10/s")])
    with pytest.raises(qn.InvalidModelError, match="thread_pool_open takes a network without"):
        qn.thread_pool_open(open_cls, 1.0, threads=1)


def test_refuses_past_the_memory_limit(monkeypatch):
    monkeypatch.setenv("QNMODEL_MAX_MEMORY", "1 MiB")
    with pytest.raises(qn.LatticeTooLargeError, match="the thread pool of N = 10000 clients"):
        qn.thread_pool(_net((0.1, 0.2), 1.0), 10_000, threads=2)


def test_docstring_examples():
    import doctest

    from qnmodel.solvers import population_limit as module

    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 4 and result.failed == 0


def test_open_pool_at_extreme_arrival_rates():
    """Found by a hostile try: lambda (1 - p(C)) cancelled to 0 at lambda = 1e300 (a
    ZeroDivisionError) and R underflowed to 0 at lambda = 5e-324. X is now the departure
    rate sum_j p(j) X_S(min(j, T)) and R a ratio of sums scaled by their largest term."""
    net = qn.Network([qn.Station("cpu", "1 ms"), qn.Station("disk", "8 ms")])
    full = qn.thread_pool_open(net, 1e300, threads=2, capacity=3)
    xs2 = float(full.subsystem_throughput[-1])  # the pool always full: X = X_S(2)
    assert full.throughput == pytest.approx(xs2, rel=1e-12)
    assert full.response_time == pytest.approx(3.0 / xs2, rel=1e-12)  # Little: C / X
    assert full.loss_probability == pytest.approx(1.0, rel=1e-12)
    for lam in (5e-324, 1e-300):  # an empty pool: R = the FES time of one request, 9 ms
        r = qn.thread_pool_open(net, lam, threads=2)
        assert r.response_time == pytest.approx(0.009, rel=1e-12)
        assert r.thread_wait == 0.0
        np.testing.assert_allclose(r.residence_time, [0.001, 0.008], rtol=1e-12)
    # the departure rate equals lambda (1 - p(C)) where that does not cancel
    mid = qn.thread_pool_open(net, 150.0, threads=2, capacity=6)
    assert mid.throughput == pytest.approx(150.0 * (1.0 - mid.loss_probability), rel=1e-12)
