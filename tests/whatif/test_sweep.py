"""What-if sweeps: vectorised grid results equal per-point solutions."""

from __future__ import annotations

import contextlib
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qnmodel as qn
from qnmodel.errors import InvalidModelError, InvalidTypeError, UnitError
from qnmodel.models.storage import NetworkedRAID
from qnmodel.whatif import RESULT_COLUMNS, executor_map, solve_grid, sweep
from tests._ci import IN_CI
from tests._tol import closed_form, recursion

# The grid's vectorised kernels against the per-point solvers: two exact MVA recursions, at
# most N = 64 steps on K <= 6 stations (4 K + 2 operations a step); the bounds are closed
# forms of sums over K demands and a few operations more.
RTOL = recursion(64, 4 * 6 + 2)
BOUNDS_RTOL = closed_form(2 * 6 + 8)
BOUND_FIELDS = [
    "throughput_lower",
    "throughput_upper",
    "response_time_lower",
    "response_time_upper",
]


def _column(field: str, method: str) -> str:
    """``throughput_lower`` of the ``aba`` bounds is the column ``throughput_aba_lower``."""
    quantity, side = field.rsplit("_", 1)
    return f"{quantity}_{method}_{side}"


def check_rows_against_solvers(df: pd.DataFrame, net: qn.Network, n_values):
    rows = df.set_index("n").loc[list(n_values)]
    for meth in ("aba", "bjb"):
        b = qn.bounds(net, max(n_values), method=meth)
        for f in BOUND_FIELDS:
            want = getattr(b, f)[np.asarray(n_values) - 1]
            np.testing.assert_allclose(rows[_column(f, meth)], want, rtol=BOUNDS_RTOL)
    m = qn.mva(net, max(n_values))
    idx = np.asarray(n_values) - 1
    np.testing.assert_allclose(rows["throughput_mva"], m.throughput[idx], rtol=RTOL)
    np.testing.assert_allclose(rows["response_time_mva"], m.response_time[idx], rtol=RTOL)


def test_networked_raid_grid_equals_per_point_solutions():
    sys = NetworkedRAID.cui2006()
    rates = ["10 Mbit/s", "100 Mbit/s", "1 Gbit/s", "10 Gbit/s"]
    hits = [0.0, 0.5, 0.9]
    df = sweep(sys, N=range(1, 33), link_rate=rates, master_cache_hit=hits)
    assert len(df) == 4 * 3 * 32
    assert list(df.columns) == (
        ["link_rate", "master_cache_hit", "n"]
        + RESULT_COLUMNS["aba"] + RESULT_COLUMNS["bjb"] + RESULT_COLUMNS["mva"] + ["bottleneck"]
    )  # fmt: skip
    # order: first key slowest, then n
    assert df["link_rate"].iloc[0] == 1.25e6 and df["master_cache_hit"].iloc[32] == 0.5
    for r in rates:
        for h in hits:
            point = sys.replace(link_rate=r, master_cache_hit=h)
            sub = df[(df.link_rate == qn.units.parse(r)) & (df.master_cache_hit == h)]
            check_rows_against_solvers(sub, point.network(), range(1, 33))
            d = point.demands()
            assert set(sub.bottleneck) == {max(d, key=d.get)}


def test_no_grid_is_one_point():
    sys = NetworkedRAID.cui2006()
    df = sweep(sys, N=5)
    assert len(df) == 5 and list(df.columns[:1]) == ["n"]
    check_rows_against_solvers(df, sys.network(), range(1, 6))


def test_bottleneck_moves_off_the_network_when_it_gets_fast():
    df = sweep(NetworkedRAID.cui2006(form="paper"), N=[1], TRate_e=["100 Mbit/s", "1 Gbit/s"])
    assert df.bottleneck.tolist() == ["nic_master", "disk"]
    df = sweep(NetworkedRAID.cui2006(), N=[1], TRate_e=["100 Mbit/s", "1 Gbit/s"])
    assert df.bottleneck.tolist() == ["link_out", "disk"]


def test_choices_and_think_time_axes():
    sys = NetworkedRAID.cui2006()
    df = sweep(sys, N=[1, 5, 20], raid=["raid5", "raid6"], op=["read", "write"], STP_m=[4, 6],
               think_time=["0 s", "30 s"])  # fmt: skip
    assert len(df) == 2 * 2 * 2 * 2 * 3
    assert isinstance(df.raid.dtype, pd.CategoricalDtype)
    for raid in ("raid5", "raid6"):
        for op in ("read", "write"):
            for w in (4, 6):
                for z in (0.0, 30.0):
                    net = sys.replace(raid=raid, op=op, STP_m=w).network(think_time=z)
                    sub = df[
                        (df.raid == raid) & (df.op == op) & (df.STP_m == w) & (df.think_time == z)
                    ]
                    check_rows_against_solvers(sub, net, [1, 5, 20])


def test_combinations_are_checked_per_point_not_per_axis():
    base = NetworkedRAID.cui2006()  # stripe_width 3: raid1 alone would be invalid
    df = sweep(base, N=[4], raid=["raid1", "raid5"], STP_m=[2])
    for raid in ("raid1", "raid5"):
        want = base.replace(raid=raid, STP_m=2).mva(4).response_time[-1]
        assert df[df.raid == raid].response_time_mva.item() == pytest.approx(want, rel=RTOL)
    with pytest.raises(InvalidModelError, match="must be 2 for raid1"):
        sweep(base, N=[4], raid=["raid1"], STP_m=[2, 3])


def test_sweep_a_network_by_station_name():
    kinds = ["queue", "queue", "delay"]
    net = qn.Network.from_demands(
        ["5 ms", "8 ms", "2 ms"], think_time="100 ms", names=["cpu", "disk", "net"], kinds=kinds
    )
    df = sweep(net, N=12, disk=["4 ms", "8 ms", "16 ms"])
    for d in (0.004, 0.008, 0.016):
        point = qn.Network.from_demands([0.005, d, 0.002], 0.1, names=net.names,
                                        kinds=["queue", "queue", "delay"])  # fmt: skip
        check_rows_against_solvers(df[df.disk == d], point, range(1, 13))


def _factory(rate, hit):
    return NetworkedRAID.cui2006(link_rate=rate, P_m=hit)


def test_factory_through_a_thread_pool_equals_vectorised_path():
    grid = {"rate": [1.25e7, 1.25e8], "hit": [0.0, 0.25]}
    with ThreadPoolExecutor(2) as ex:
        a = sweep(_factory, N=16, executor=ex, chunk_size=1, **grid)
    b = sweep(NetworkedRAID.cui2006(), N=16, link_rate=grid["rate"], P_m=grid["hit"])
    np.testing.assert_allclose(a[RESULT_COLUMNS["mva"]], b[RESULT_COLUMNS["mva"]], rtol=RTOL)
    np.testing.assert_allclose(a[RESULT_COLUMNS["bjb"]], b[RESULT_COLUMNS["bjb"]], rtol=BOUNDS_RTOL)


def test_chunks_through_a_process_pool_equal_one_call():
    sys = NetworkedRAID.cui2006()
    grid = dict(link_rate=np.linspace(1e6, 1e9, 7), P_m=[0.0, 0.3, 0.6])
    one = sweep(sys, N=10, **grid)
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(2, mp_context=ctx) as ex:
        many = sweep(sys, N=10, executor=ex, chunk_size=4, **grid)
    pd.testing.assert_frame_equal(one, many)


def _dask_distributed():
    """dask.distributed, or skip (locally) / fail (CI=true): Dask is the optional extra ``dask``."""
    try:
        import dask.distributed as dd
    except ImportError as exc:
        reason = f"dask[distributed] is not installed (optional extra 'dask'): {exc}"
        if IN_CI:
            pytest.fail(f"under CI the Dask sweep test must run: {reason}")
        pytest.skip(reason)
    return dd


def _hit_rate_network(rate, hit):
    return NetworkedRAID.cui2006(link_rate=rate, P_m=hit).network()


def test_dask_client_as_executor_gives_the_in_process_frame():
    dd = _dask_distributed()
    sys = NetworkedRAID.cui2006()
    grid = dict(link_rate=np.geomspace(1e6, 1e9, 9), P_m=[0.0, 0.3, 0.6], STP_m=[3, 5])
    one = sweep(sys, N=24, **grid)
    fgrid = {"rate": [1.25e6, 1.25e7, 1.25e8], "hit": [0.0, 0.5]}
    # Two in-process workers talking to the scheduler over real TCP on loopback, so the
    # tasks and results are serialised as on a real cluster.
    with dd.LocalCluster(
        processes=False, n_workers=2, threads_per_worker=1, protocol="tcp", host="127.0.0.1",
        dashboard_address=None,
    ) as cluster, dd.Client(cluster) as client:  # fmt: skip
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        with dd.get_task_stream(client) as stream:
            many = sweep(sys, N=24, executor=client, chunk_size=7, **grid)  # 54 points, 8 tasks
            fac = sweep(_hit_rate_network, N=24, executor=client, chunk_size=2, **fgrid)
        squares = executor_map(client, pow, range(6), [2] * 6)
        via_executor = sweep(sys, N=24, executor=client.get_executor(), chunk_size=20, **grid)
        assert len(client.scheduler_info()["workers"]) == 2
    pd.testing.assert_frame_equal(one, many)  # same values, columns, dtypes and order
    pd.testing.assert_frame_equal(one, via_executor)  # the concurrent.futures face of Dask
    want = sweep(sys, N=24, link_rate=fgrid["rate"], P_m=fgrid["hit"])
    assert list(fac[["rate", "hit"]].drop_duplicates().itertuples(index=False)) == list(
        want[["link_rate", "P_m"]].drop_duplicates().itertuples(index=False)
    )
    cols = RESULT_COLUMNS["aba"] + RESULT_COLUMNS["bjb"] + RESULT_COLUMNS["mva"] + ["bottleneck"]
    pd.testing.assert_frame_equal(fac[cols], want[cols])
    assert squares == [0, 1, 4, 9, 16, 25]
    # the work ran as Dask tasks: 8 + 3 grid chunks, 6 factory calls (inside the task stream)
    names = [t["key"][0] if isinstance(t["key"], tuple) else t["key"] for t in stream.data]
    assert sum(str(k).startswith("_solve_chunk") for k in names) == 8 + 3
    assert sum(str(k).startswith("_call_factory") for k in names) == 6


def test_executor_map_keeps_order_for_pools_and_none():
    assert executor_map(None, divmod, [7, 9], [2, 4]) == [(3, 1), (2, 1)]
    with ThreadPoolExecutor(2) as ex:
        assert executor_map(ex, divmod, iter([7, 9, 11]), [2, 4, 5]) == [(3, 1), (2, 1), (2, 1)]


def test_multiserver_network_falls_back_exactly_and_bjb_is_nan():
    net = qn.Network((qn.Station("cpu", 0.01, servers=4), qn.Station("disk", 0.02)), think_time=0.5)
    df = sweep(net, N=[1, 10, 40], cpu=[0.01, 0.04])
    assert df[RESULT_COLUMNS["bjb"]].isna().all().all()
    for d in (0.01, 0.04):
        point = qn.Network((qn.Station("cpu", d, servers=4), qn.Station("disk", 0.02)), 0.5)
        m = qn.mva_load_dependent(point, 40)
        sub = df[df.cpu == d]
        # load-dependent MVA: 40 steps, each ~3 n operations more for the 4-server marginals
        tol = recursion(40, 4 * 2 + 2 + 3 * 40)
        np.testing.assert_allclose(sub.throughput_mva, m.throughput[[0, 9, 39]], rtol=tol)
        b = qn.bounds(point, 40, method="aba")
        np.testing.assert_allclose(
            sub.throughput_aba_upper, b.throughput_upper[[0, 9, 39]], rtol=BOUNDS_RTOL
        )


def test_rate_curves_are_honoured_and_bounded():
    """A station with a rate curve [1, 2, 3], S = 1 ms, Z = 2 ms, N = 5: the sweep gave
    X = 963.3/s (the curve ignored) against 1642.7/s from mva (1643.8 +- 4.2 simulated).
    Now the same number as qn.mva, inside the ABA bounds; BJB (single-server, load-independent
    queues only) is NaN."""
    net = qn.Network([qn.Station("d", "1 ms", rate_multipliers=[1, 2, 3])], think_time="2 ms")
    ref = qn.mva(net, 5)
    df = sweep(net, 5, think_time=["2 ms", "4 ms"])
    first = df[df.think_time == 0.002]
    np.testing.assert_allclose(first.throughput_mva, ref.throughput, rtol=recursion(5, 8))
    assert first.throughput_mva.iloc[-1] == pytest.approx(1642.7289048473967, rel=1e-12)
    assert (df.throughput_aba_lower <= df.throughput_mva * (1 + 1e-12)).all()
    assert (df.throughput_mva <= df.throughput_aba_upper * (1 + 1e-12)).all()
    assert df[RESULT_COLUMNS["bjb"]].isna().all().all()
    other = qn.mva(net.with_think_time("4 ms"), 5)
    np.testing.assert_allclose(df[df.think_time == 0.004].throughput_mva, other.throughput,
                               rtol=recursion(5, 8))  # fmt: skip


def test_solve_grid_keeps_the_order_of_n_and_brackets_mva():
    rng = np.random.default_rng(7)
    D = rng.uniform(0.001, 0.1, size=(500, 5))
    n = [64, 1, 17, 3]
    out = solve_grid(D, n, think_time=rng.uniform(0, 2, 500))
    x = out["throughput_mva"]
    for meth in ("aba", "bjb"):
        assert np.all(out[f"throughput_{meth}_lower"] <= x * (1 + 1e-12))
        assert np.all(x <= out[f"throughput_{meth}_upper"] * (1 + 1e-12))
    net = qn.Network.from_demands(list(D[42]), think_time=0.0)
    one = solve_grid(D[42:43], n)
    np.testing.assert_allclose(
        one["throughput_mva"][0], qn.mva(net, 64).throughput[np.array(n) - 1], rtol=RTOL
    )


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: sweep(NetworkedRAID.cui2006(), N=4, bandwidth=[1]), InvalidModelError,
         "unknown NetworkedRAID parameter 'bandwidth'"),
        (lambda: sweep(NetworkedRAID.cui2006(), N=4, link_rate=[]), InvalidModelError,
         "grid 'link_rate' is empty"),
        (lambda: sweep(NetworkedRAID.cui2006(), N=4, link_rate=["100 Mb/s"]), UnitError,
         "ambiguous"),
        (lambda: sweep(NetworkedRAID.cui2006(), N=[]), InvalidModelError, "N is empty"),
        (lambda: sweep(NetworkedRAID.cui2006(), N=0), InvalidModelError,
         "N must be an integer >= 1"),
        (lambda: sweep(NetworkedRAID.cui2006(), N=4, methods=["exact"]), InvalidModelError,
         "methods must be a subset"),
        (lambda: sweep(NetworkedRAID.cui2006(), N=4, executor=object()), InvalidTypeError,
         "executor must have a map method"),
        (lambda: sweep(qn.Network.from_demands([1.0]), N=4, disk=[1.0]), InvalidModelError,
         "grid 'disk' is not a station"),
        (lambda: sweep(42, N=4), InvalidTypeError, "system_or_factory must be"),
        (lambda: sweep(lambda k: qn.Network.from_demands([1.0] * k), N=4, k=[1, 2]),
         InvalidModelError, "differ in structure"),
        (lambda: sweep(qn.Network.from_demands([1.0, 2.0], names=["a", "b"]), N=4,
                       a=[0.0], b=[0.0]),
         InvalidModelError, r"at grid point 0 every demand and the think time are zero"),
        (lambda: solve_grid([[1.0, 2.0], [0.0, 0.0]], [1]), InvalidModelError,
         r"at grid point 1 every demand and the think time are zero"),
        (lambda: solve_grid([[1.0, 2.0], [0.5, np.nan]], [1]), InvalidModelError,
         r"demands\[1, 1\] \(grid point 1, station 1\) must be finite and >= 0 seconds, got nan"),
        (lambda: solve_grid([[1.0, -2.0]], [1]), InvalidModelError,
         r"demands\[0, 1\] .* got -2.0"),
        (lambda: solve_grid([[1.0, 2.0]] * 3, [1], think_time=[0.0, -1.0, 2.0]),
         InvalidModelError, r"think_time at grid point 1 must be finite and >= 0 seconds, got -1"),
        (lambda: solve_grid([[1.0, 2.0]] * 3, [1], think_time=[0.0, 1.0]), InvalidModelError,
         r"think_time must be one value or 3 \(one per grid point\), got shape \(2,\)"),
        (lambda: solve_grid([[1.0, 2.0]], [1], is_delay=[True]), InvalidModelError,
         r"is_delay must be 2 booleans \(one per station\), got \[True\]"),
        (lambda: solve_grid([[1.0, 2.0]], [1], servers=[1, 0]), InvalidModelError,
         r"servers must be 2 integers >= 1 \(one per station\), got \[1, 0\]"),
        (lambda: solve_grid([[1.0, 2.0]], [1], servers=[1, 1.5]), InvalidModelError,
         r"servers must be 2 integers >= 1"),
        (lambda: solve_grid([[1.0, 2.0]], [0]), InvalidModelError, r"N must be an integer >= 1"),
    ],
)  # fmt: skip
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@settings(max_examples=40, deadline=None)
@given(
    demands=st.lists(
        st.lists(st.one_of(st.just(0.0), st.floats(1e-6, 10.0)), min_size=3, max_size=3),
        min_size=1,
        max_size=6,
    ),
    z=st.one_of(st.just(0.0), st.floats(1e-6, 50.0)),
    delay=st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_solve_grid_equals_the_solvers_property(demands, z, delay):
    D = np.array(demands)
    kinds = ["delay" if d else "queue" for d in delay]
    if np.any(D.sum(axis=1) + z <= 0):
        return  # all-zero networks are rejected (tested in test_errors)
    n = [1, 2, 7, 30]
    out = solve_grid(D, n, think_time=z, is_delay=np.array(delay))
    for p in range(D.shape[0]):
        net = qn.Network.from_demands(list(D[p]), z, names=["a", "b", "c"], kinds=kinds)
        m = qn.mva(net, 30)
        idx = np.array(n) - 1
        tol = recursion(30, 4 * 3 + 2)  # N = 30 on K = 3
        np.testing.assert_allclose(out["throughput_mva"][p], m.throughput[idx], rtol=tol)
        np.testing.assert_allclose(out["response_time_mva"][p], m.response_time[idx], rtol=tol)
        for meth in ("aba", "bjb"):
            b = qn.bounds(net, 30, method=meth)
            for f in BOUND_FIELDS:
                np.testing.assert_allclose(
                    out[_column(f, meth)][p], getattr(b, f)[idx], rtol=BOUNDS_RTOL
                )


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
def test_sweep_and_mva_give_identical_numbers_through_the_shared_kernel(compiled):
    """solve_grid runs the batched kernel over all points, mva over one: per point the same
    arithmetic in the same order, so X(n) and R(n) are equal to the last bit."""
    from qnmodel.solvers import _kernels

    if compiled:  # the installed package ships them (tests/solvers/test_kernels.py)
        assert _kernels.available(), _kernels.status()
    rng = np.random.default_rng(3)
    P, K = 40, 7
    D = rng.uniform(0.0, 0.05, (P, K)) + 1e-4
    delay = np.array([False, True, False, False, True, False, False])
    Z = rng.uniform(0.0, 3.0, P)
    Z[::3] = 0.0
    n = [500, 1, 37, 37, 2]
    kinds = ["delay" if d else "queue" for d in delay]
    with contextlib.nullcontext() if compiled else _kernels.force_numpy():
        out = solve_grid(D, n, think_time=Z, is_delay=delay, methods=["mva"])
        df = sweep(qn.Network.from_demands(list(D[0]), float(Z[0]), kinds=kinds), N=n)
        for p in range(P):
            m = qn.mva(qn.Network.from_demands(list(D[p]), float(Z[p]), kinds=kinds), 500)
            idx = np.array(n) - 1
            np.testing.assert_array_equal(out["throughput_mva"][p], m.throughput[idx])
            np.testing.assert_array_equal(out["response_time_mva"][p], m.response_time[idx])
            if p == 0:
                np.testing.assert_array_equal(df["throughput_mva"], m.throughput[idx])


def test_qnmodel_sweep_is_the_function_and_no_module_hides_it():
    import sys

    import qnmodel.whatif as w

    assert qn.sweep is w.sweep is sweep and callable(qn.sweep)
    assert "qnmodel.sweep" not in sys.modules  # no alias module written at import
    with pytest.raises(ModuleNotFoundError):
        import qnmodel.sweep  # noqa: F401
