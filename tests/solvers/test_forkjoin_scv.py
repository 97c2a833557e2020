"""Fork-join members with non-exponential service (issue 27): the join of gamma two-moment
laws (``qnmodel.solvers._forkjoin_scv``). Measured errors against the simulator:
``tests/accuracy/forkjoin_scv.py``, docs/explanation/fork-join.md."""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError
from qnmodel.solvers._forkjoin_scv import expected_order_statistic_scv
from qnmodel.solvers.forkjoin import METHOD_SCV, expected_order_statistic, nelson_tantawi

D = 0.005


def _fj(k: int, scv: float, **kw) -> qn.ForkJoin:
    return qn.ForkJoin("fj", [qn.Station(f"m{i}", D, scv=scv, **kw) for i in range(k)])


@pytest.mark.parametrize("k", [2, 5, 8])
def test_constant_members_finish_a_lone_request_in_one_service_time(k):
    res = qn.fork_join(qn.Network([_fj(k, 0.0)]), 1)
    assert float(res.response_time[0]) == pytest.approx(D, rel=1e-9)  # not D H_k
    assert res.method.endswith(METHOD_SCV) and "approximate" in res.method


@pytest.mark.parametrize("k", [2, 4, 8])
def test_constant_members_without_think_time_take_n_service_times(k):
    # N requests and nothing else in the cycle: they go through in lock step, R(N) = N d
    # (measured by qnbench stripe over emulated constant members: data/validation/stripe.json)
    res = qn.fork_join(qn.Network([_fj(k, 0.0)]), 6)
    np.testing.assert_allclose(res.response_time, D * np.arange(1, 7), rtol=1e-9)


def test_open_constant_members_see_one_md1_queue():
    # identical constant members fed by the same arrivals hold identical queues: the join
    # is one M/D/1 sojourn, d + rho d / (2 (1 - rho)) ([Kle75] eq. 5.101 with scv 0)
    rho = 0.6
    res = qn.fork_join(qn.Network([_fj(4, 0.0)]), arrival_rate=rho / D)
    assert float(res.response_time[0]) == pytest.approx(D + rho * D / (2 * (1 - rho)), rel=1e-8)


def test_order_statistic_of_gamma_laws_closed_forms():
    # exponential members: the exponential order statistic
    d = np.array([1.0, 2.0, 3.0])
    assert expected_order_statistic_scv(d, np.ones(3)) == pytest.approx(
        expected_order_statistic(d), rel=1e-8
    )
    assert expected_order_statistic_scv(d, np.ones(3), 2, shifts=[0.5, 0.0, 1.0]) == (
        pytest.approx(expected_order_statistic(d, 2, shifts=[0.5, 0.0, 1.0]), rel=1e-8)
    )
    # two Erlang-2 laws of mean d (scv 0.5): E[max] = 2 d - E[min] = 11 d / 8
    assert expected_order_statistic_scv([2.0, 2.0], [0.5, 0.5]) == pytest.approx(2.75, rel=1e-9)
    # constant members with shifts: the largest shift + its member's time
    assert expected_order_statistic_scv([1.0, 2.0], [0.0, 0.0], shifts=[3.0, 1.0]) == (
        pytest.approx(4.0, rel=1e-9)
    )


def test_exponential_members_keep_the_old_answers_exactly():
    given = qn.Network([_fj(4, 1.0)], think_time=0.01)
    default = qn.Network([qn.ForkJoin("fj", [qn.Station(f"m{i}", D) for i in range(4)])],
                         think_time=0.01)  # fmt: skip
    a, b = qn.fork_join(given, 6), qn.fork_join(default, 6)
    np.testing.assert_array_equal(a.response_time, b.response_time)
    assert a.method == b.method and METHOD_SCV not in a.method
    o = qn.fork_join(given, arrival_rate=100.0)
    assert float(o.response_time[0]) == nelson_tantawi(4, 0.5, D)


def test_unsupported_non_exponential_joins_are_refused():
    k_of_n = qn.ForkJoin("fj", [qn.Station(f"m{i}", D, scv=0.0) for i in range(4)], k=2)
    with pytest.raises(InvalidModelError, match="non-exponential branches .* k-of-n join"):
        qn.fork_join(qn.Network([k_of_n]), 2)
    with pytest.raises(InvalidModelError, match="several servers or a rate curve"):
        qn.fork_join(qn.Network([_fj(3, 0.5, servers=2)]), 2)
    res = qn.fork_join(qn.Network([_fj(3, 0.0)]), 2)
    with pytest.raises(InvalidModelError, match="distribution of a fork-join with non-exp"):
        res.response_time_distribution()


# fixed-seed subset of tests/accuracy/forkjoin_scv.py (measured errors in the comments)
@pytest.mark.parametrize(
    ("k", "scv", "load", "tol"),
    [
        (4, 0.0, {"N": 6, "Z": 0.0399}, 0.04),  # measured -1.1 %
        (3, 0.05, {"arrival_rate": 30.0}, 0.04),  # measured -0.8 %
        (4, 4.0, {"arrival_rate": 100.0}, 0.12),
    ],
)
def test_fork_join_scv_against_simulation(k, scv, load, tol):
    net = qn.Network([_fj(k, scv)], think_time=load.get("Z", 0.0))
    if "N" in load:
        r = float(qn.fork_join(net, load["N"]).response_time[-1])
    else:
        r = float(qn.fork_join(net, arrival_rate=load["arrival_rate"]).response_time[0])
    sim = qn.simulate(
        net, N=load.get("N"), arrival_rate=load.get("arrival_rate"), seed=9, replications=10,
        run_length=100.0, warmup=5.0,
    )  # fmt: skip
    assert r == pytest.approx(float(sim.response_time[0]), rel=tol)
