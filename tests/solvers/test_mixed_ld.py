"""Mixed networks with multi-server and load-dependent stations: the approximation of
qnmodel.solvers.mixed (open share removed from the capacity the closed classes see; open
jobs at the total load), its exact limits, and its error against qn.simulate."""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.solvers.mva_ld_general import mva_ld_general
from tests._tol import closed_form, recursion


def _net(lam: float, two_closed: bool) -> qn.Network:
    def dem(b, b2, web):
        d = {"b": b, "web": web}
        if two_closed:
            d["b2"] = b2
        return d

    # the nic sends packets of one service time, 5, 8 and 4 per job of each class: product
    # form under FCFS (the simulator draws one visit of the whole demand per class)
    stations = [
        qn.Station("cpu", dem("10 ms", "10 ms", "10 ms"), servers=2),
        qn.Station("disk", dem("30 ms", "30 ms", "30 ms"), rate_multipliers=[1.0, 1.6, 2.0]),
        qn.Station("nic", service_time="1 ms", visits=dem(5, 8, 4)),
        qn.Station("lan", dem("50 ms", "20 ms", "20 ms"), kind="delay"),
    ]
    classes = [qn.ClosedClass("b", 6, think_time=0.3)]
    if two_closed:
        classes.append(qn.ClosedClass("b2", 4, think_time=0.5))
    classes.append(qn.OpenClass("web", lam))
    return qn.Network(stations, classes=classes)


LABEL = "mixed.mva_ld (approximate: the open load caps the servers the closed classes see)"


@pytest.mark.parametrize(("lam", "two_closed"), [(15.0, False), (25.0, True)])
def test_error_against_simulation(lam, two_closed):
    """Measured (seeded runs, half-widths <= 0.5 %): open-class R within 4.4 %, closed-class
    R 4.4 to 7.0 % too small (the capped curve is optimistic when open jobs leave servers
    idle), throughputs within 1.8 %. Tolerances: open 5 %, closed 8 %, X 2.5 %. Two closed
    classes are solved by the exact load-dependent lattice (one by the log-space
    convolution)."""
    net = _net(lam, two_closed)
    res = qn.mixed_network(net)
    assert res.method == LABEL
    sim = qn.simulate(net, seed=1, replications=10, run_length=1000.0)
    err = (res.response_time - sim.response_time) / sim.response_time
    print(f"R error {err.tolist()}, X error {(res.throughput / sim.throughput - 1).tolist()}")
    is_open = np.asarray(res.is_open)
    assert np.all(np.abs(err[is_open]) <= 0.05), err
    assert np.all((err[~is_open] <= 0.01) & (err[~is_open] >= -0.08)), err
    np.testing.assert_allclose(res.throughput, sim.throughput, rtol=0.025)
    # the laws hold exactly in the approximation too
    np.testing.assert_allclose(
        res.queue_length, res.throughput[:, None] * res.residence_time, rtol=closed_form(2)
    )


def test_without_open_load_the_closed_class_is_exact():
    net = _net(0.0, False)
    res = qn.mixed_network(net)
    closed = qn.Network.from_demands(
        [0.01, 0.03, 0.005, 0.05],
        think_time=0.3,
        kinds=["queue", "queue", "queue", "delay"],
        servers=[2, 1, 1, 1],
    )
    ref = mva_ld_general(
        closed, 6, keep="last", rate_multipliers=[None, [1.0, 1.6, 2.0], None, None]
    )
    # two exact load-dependent MVA recursions, N = 6 steps; a step is 4 K operations plus ~3 n
    # for the load-dependent station's marginal probabilities: recursion(6, 4 * 4 + 3 * 6)
    tol = recursion(6, 34)
    np.testing.assert_allclose(res.throughput[0], ref.throughput[0], rtol=tol)
    np.testing.assert_allclose(res.residence_time[0], ref.residence_time[0], rtol=tol)


def test_single_server_stations_keep_the_exact_decomposition():
    stations = [
        qn.Station("a", {"b": "10 ms", "web": "20 ms"}, discipline="PS"),
        qn.Station("d", {"b": "5 ms", "web": "5 ms"}),
    ]
    net = qn.Network(stations, classes=[qn.ClosedClass("b", 3), qn.OpenClass("web", 10.0)])
    res = qn.mixed_network(net)
    assert res.method == "mixed.mva"
    # the open job at station a: D (1 + Q_closed) / (1 - U_open), [LZGS] sec. 7.4.3
    q_cl = res.queue_length[0, 0]
    assert res.residence_time[1, 0] == pytest.approx(0.02 * (1 + q_cl) / (1 - 0.2), rel=1e-14)
