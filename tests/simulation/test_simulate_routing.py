"""The routed simulator: each job draws its next (class, node) from the routing matrix.

Checks: exact chain MVA (:func:`qnmodel.mva_chains`) on random closed networks with routing
and class switching (product form: PS, delay, and FCFS with class-independent service times);
a deterministic routing against the class routes, bit for bit; the one-of-k array's
exponential response law against its closed form; Ciw on an open network with a feedback
loop (mean and p90 response time, and the exact Jackson mean); the refusals.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import gamma
from scipy.stats import t as student_t

import qnmodel as qn
from qnmodel import ClosedClass, Network, OpenClass, Station
from qnmodel.errors import InvalidModelError
from qnmodel.solvers import mva_chains


def _close(sim, hw, exact, floor):
    """|sim - exact| <= 3 half-widths plus a small floor, elementwise."""
    sim, hw, exact = np.asarray(sim), np.asarray(hw), np.asarray(exact)
    assert np.all(np.abs(sim - exact) <= 3 * hw + floor), (sim, hw, exact)


def _random_switching_network(seed: int) -> Network:
    """Three closed classes: "a" and "b" switch into each other (one chain), "c" alone."""
    rng = np.random.default_rng(seed)
    cls = ["a", "b", "c"]
    nodes = ["cpu", "disk", "raid", "lan"]
    st = {c: rng.uniform(0.005, 0.03) for c in cls}
    stations = [
        Station("cpu", service_time={c: rng.uniform(0.002, 0.02) for c in cls}, discipline="PS"),
        Station("disk", service_time=rng.uniform(0.01, 0.03)),  # FCFS: one S for all classes
        Station("raid", service_time=0.02, servers=2),
        Station("lan", service_time=st, kind="delay"),
    ]

    def row(members, here):
        dst = [(c, n) for c in members for n in [*nodes, "think"] if (c, n) != here]
        p = rng.dirichlet(np.ones(len(dst)))
        return {d: float(v) for d, v in zip(dst, p, strict=True)}

    routing = {}
    for c in cls:
        members = ["a", "b"] if c in ("a", "b") else ["c"]
        for n in [*nodes, "think"]:
            routing[(c, n)] = row(members, (c, n))
    classes = [ClosedClass("a", int(rng.integers(1, 4))), ClosedClass("b", 1),
               ClosedClass("c", int(rng.integers(1, 4)))]  # fmt: skip
    return Network(stations, classes=classes, routing=routing)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_class_switching_matches_mva_chains(seed):
    net = _random_switching_network(seed)
    cm = net.compiled
    exact = mva_chains(cm.D, cm.N, cm.chains, delay=cm.is_delay, servers=cm.servers)
    sim = qn.simulate(net, seed=seed, replications=8)
    assert sim.chains.tolist() == cm.chains.tolist() == [0, 0, 1]
    _close(sim.chain_throughput, sim.chain_throughput_halfwidth, exact.chain_throughput,
           1e-3 * exact.chain_throughput)  # fmt: skip
    _close(sim.queue_length, sim.queue_length_halfwidth, exact.queue_length, 0.01)
    _close(sim.residence_time, sim.residence_time_halfwidth, exact.residence_time, 1e-4)
    _close(sim.utilization, sim.utilization_halfwidth, exact.utilization, 0.005)
    # a chain's cycles split among its classes by the class they start as
    np.testing.assert_allclose(sim.throughput[:2].sum(), sim.chain_throughput[0], rtol=1e-12)
    # Little's law over a chain: N* = X* R* (no think time)
    assert sim.chain_response_time[0] * sim.chain_throughput[0] == pytest.approx(
        exact.chain_population[0], rel=0.02
    )


def test_jobs_of_a_class_without_an_outside_row_start_as_its_chain_mate():
    """Class "b" is entered only from "a" at the cpu: its job starts its first cycle as "a";
    only the chain's population (3) matters."""
    net = Network(
        [Station("cpu", service_time=0.01), Station("disk", service_time=0.05)],
        classes=[ClosedClass("a", 2), ClosedClass("b", 1)],
        routing={("a", "think"): {("a", "cpu"): 1.0}, ("a", "cpu"): {("b", "disk"): 1.0},
                 ("b", "disk"): {("a", "think"): 1.0}},
    )  # fmt: skip
    cm = net.compiled
    exact = mva_chains(cm.D, cm.N, cm.chains)
    sim = qn.simulate(net, seed=1, replications=5)
    assert exact.chain_population.tolist() == [3]
    _close(sim.chain_throughput, sim.chain_throughput_halfwidth, exact.chain_throughput, 0.01)
    _close(sim.queue_length, sim.queue_length_halfwidth, exact.queue_length, 0.01)
    assert sim.throughput[1] == 0.0  # every cycle starts as "a"


def test_deterministic_routing_is_the_class_route_bit_for_bit():
    """Rows with one destination draw no random number: a tandem given by its routing runs
    the very events of the same tandem given by demands."""
    stations = [Station("cpu", service_time=0.01), Station("disk", service_time=0.03),
                Station("ps", service_time=0.02, discipline="PS")]  # fmt: skip
    routed = Network(stations, routing={"think": {"cpu": 1.0}, "cpu": {"disk": 1.0},
                                        "disk": {"ps": 1.0}, "ps": {"think": 1.0}})  # fmt: skip
    plain = Network(stations)
    for kw in ({"N": 5}, {"arrival_rate": 20.0}):
        a = qn.simulate(routed, seed=7, replications=3, run_length=50.0, **kw)
        b = qn.simulate(plain, seed=7, replications=3, run_length=50.0, **kw)
        assert a.events == b.events
        np.testing.assert_array_equal(a.response_time_quantiles, b.response_time_quantiles)
        np.testing.assert_array_equal(a.queue_length, b.queue_length)
        # per cycle here, per completed visit there: only the batch edges differ
        np.testing.assert_allclose(a.residence_time, b.residence_time, rtol=2e-3)
        np.testing.assert_array_equal(a.chain_throughput, b.throughput)


LAM, MU = 40.0, 100.0  # arrivals per second; one disk's service rate


def _array(k: int, one_of_k: bool) -> Network:
    disks = [Station(f"d{i}", service_time=1 / MU) for i in range(k)]
    if one_of_k:  # a request goes to one disk of k, at random
        routing = {("r", "source"): {("r", f"d{i}"): 1 / k for i in range(k)}}
        routing |= {("r", f"d{i}"): {("r", "sink"): 1.0} for i in range(k)}
    else:  # a request visits every disk, one after the other
        routing = {("r", "source"): {("r", "d0"): 1.0}}
        routing |= {("r", f"d{i}"): {("r", f"d{i + 1}" if i + 1 < k else "sink"): 1.0}
                    for i in range(k)}  # fmt: skip
    return Network(disks, classes=[OpenClass("r", LAM)], routing=routing)


def test_one_of_k_has_the_exponential_law_and_the_series_the_erlang():
    """An M/M/1 member's sojourn is Exp(mu - lambda_i): a one-of-k choice of identical
    members is Exp(mu - lambda/k), p99 = -ln(0.01) / (mu - lambda/k); k members in series
    sum to Erlang(k, mu - lambda)."""
    k, qs = 4, (0.5, 0.9, 0.99)
    one = qn.simulate(_array(k, True), seed=3, replications=10, quantiles=qs)
    ser = qn.simulate(_array(k, False), seed=3, replications=10, quantiles=qs)
    rate1 = MU - LAM / k
    exact1 = [-math.log(1 - q) / rate1 for q in qs]
    exact_s = [gamma.ppf(q, k, scale=1 / (MU - LAM)) for q in qs]
    for q, e in zip(qs, exact1, strict=True):
        lo, hi = one.response_time_quantile_ci(q)
        assert lo - 0.01 * e <= e <= hi + 0.01 * e, (q, lo, e, hi)
    for q, e in zip(qs, exact_s, strict=True):
        lo, hi = ser.response_time_quantile_ci(q)
        assert lo - 0.01 * e <= e <= hi + 0.01 * e, (q, lo, e, hi)
    assert one.response_time_quantile(0.99) == pytest.approx(-math.log(0.01) / rate1, rel=0.03)
    # each member gets lambda / k: per-class throughput and utilisation
    _close(one.utilization[0], one.utilization_halfwidth[0], np.full(k, LAM / k / MU), 1e-3)
    _close(one.throughput, one.throughput_halfwidth, [LAM], 1e-3 * LAM)


# -- Ciw: an open network with a feedback loop --------------------------------------------
FB_LAM, FB_S, FB_BACK = 20.0, (0.015, 0.02), 0.3
FB_WARM, FB_T, FB_REPS = 20.0, 150.0, 4


def _ciw_responses(seed: int) -> np.ndarray:
    ciw = pytest.importorskip("ciw", reason="Ciw is not installed (pip install ciw)")
    net = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(rate=FB_LAM), None],
        service_distributions=[ciw.dists.Exponential(rate=1 / s) for s in FB_S],
        routing=[[0.0, 1.0], [FB_BACK, 0.0]],
        number_of_servers=[1, 1],
    )
    ciw.seed(seed)
    sim = ciw.Simulation(net)
    sim.simulate_until_max_time(FB_WARM + FB_T)
    first: dict[int, float] = {}
    last: dict[int, float] = {}
    for r in sim.get_all_records():
        i = r.id_number
        first[i] = min(first.get(i, math.inf), r.arrival_date)
        if r.node == 2 and r.exit_date > last.get(i, -math.inf):
            last[i] = r.exit_date
    # a customer is done when its last record leaves node 2 to the exit: those that left
    gone = {ind.id_number for ind in sim.nodes[-1].all_individuals}
    return np.array([last[i] - first[i] for i in gone if first[i] >= FB_WARM], dtype=float)


@pytest.mark.peer
def test_feedback_loop_agrees_with_ciw_and_jackson():
    runs = [_ciw_responses(seed) for seed in range(FB_REPS)]
    means = np.array([r.mean() for r in runs])
    tq = student_t.ppf(0.975, FB_REPS - 1)
    ciw_mean, ciw_hw = means.mean(), tq * means.std(ddof=1) / math.sqrt(FB_REPS)
    ciw_p90 = float(np.mean([np.quantile(r, 0.9) for r in runs]))

    net = Network(
        [Station("A", service_time=FB_S[0]), Station("B", service_time=FB_S[1])],
        routing={"source": {"A": 1.0}, "A": {"B": 1.0},
                 "B": {"A": FB_BACK, "sink": 1 - FB_BACK}},
    )  # fmt: skip
    ours = qn.simulate(net, arrival_rate=FB_LAM, seed=2, replications=10, run_length=FB_T,
                       warmup=FB_WARM)  # fmt: skip
    V = 1 / (1 - FB_BACK)  # visits to each station per job
    exact = sum(V * s / (1 - FB_LAM * V * s) for s in FB_S)  # Jackson: V_k R_k of M/M/1s
    both = math.hypot(ours.response_time_halfwidth[0], ciw_hw)
    assert abs(ours.response_time[0] - ciw_mean) <= 3 * both
    assert abs(ours.response_time[0] - exact) <= 3 * ours.response_time_halfwidth[0]
    assert abs(ciw_mean - exact) <= 3 * ciw_hw
    assert both / exact < 0.08  # the comparison is tight enough to mean something
    assert ours.response_time_quantile(0.9) == pytest.approx(ciw_p90, rel=0.05)
    # per chain cycle: V_k x (time per visit) at each station
    _close(ours.residence_time[0], ours.residence_time_halfwidth[0],
           [V * s / (1 - FB_LAM * V * s) for s in FB_S], 1e-4)  # fmt: skip


def test_refusals():
    with pytest.raises(InvalidModelError, match="its probabilities sum to 0.9"):
        Network([Station("d", service_time=0.01)],
                routing={"source": {"d": 0.9}, "d": {"sink": 1.0}})  # fmt: skip
    capped = Network([Station("d", service_time=0.01, capacity=3)],
                     routing={"think": {"d": 1.0}, "d": {"think": 1.0}})  # fmt: skip
    with pytest.raises(InvalidModelError, match="'d' has a finite capacity and the network a "
                       "routing"):  # fmt: skip
        qn.simulate(capped, N=2, seed=1)
