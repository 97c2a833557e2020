"""Reproducibility, the result object and bad input of ``qn.simulate``."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.simulation import Empirical, Lognormal, SimulationResult

NET = qn.Network.from_demands(["4 ms", "9 ms", "2 ms"], think_time="30 ms", servers=[1, 2, 1])


def _same(a: SimulationResult, b: SimulationResult) -> bool:
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            if x.tobytes() != y.tobytes():  # bit for bit, NaNs included
                return False
        elif x != y:
            return False
    return True


@pytest.mark.parametrize("method", ["replications", "batch_means"])
def test_fixed_seed_reproduces_bit_for_bit(method):
    kw = dict(seed=12345, method=method, run_length=20.0, warmup=1.0,
              service={"s1": Lognormal(1.5)})  # fmt: skip
    a, b = qn.simulate(NET, 5, **kw), qn.simulate(NET, 5, **kw)
    assert _same(a, b)
    c = qn.simulate(NET, 5, **(kw | {"seed": 12346}))
    assert c.response_time[0] != a.response_time[0]
    assert a.seed == 12345


def test_replications_are_independent_streams_of_one_seed():
    # replication r always uses stream r of the seed: more replications extend, never reshuffle
    a = qn.simulate(NET, 5, seed=9, replications=2, run_length=5.0, warmup=0.5)
    b = qn.simulate(NET, 5, seed=9, replications=3, run_length=5.0, warmup=0.5)
    assert a.events < b.events
    c = qn.simulate(NET, 5, seed=9, replications=3, run_length=5.0, warmup=0.5)
    assert _same(b, c)


def test_a_random_seed_is_recorded_and_replays():
    a = qn.simulate(NET, 3, run_length=5.0, warmup=0.5, replications=2)
    b = qn.simulate(NET, 3, seed=a.seed, run_length=5.0, warmup=0.5, replications=2)
    assert _same(a, b)


def test_result_object():
    r = qn.simulate(NET, 4, seed=1, run_length=5.0, warmup=0.5, quantiles=(0.5, 0.99))
    assert r.method == "simulation"
    assert r.station_names == ("s0", "s1", "s2") and r.class_names == ("class0",)
    assert r.response_time_quantile(0.5) < r.response_time_quantile(0.99)
    lo, hi = r.response_time_quantile_ci(0.99)
    assert lo < r.response_time_quantile(0.99) < hi
    with pytest.raises(qn.InvalidModelError, match=r"q=0\.9 was not estimated"):
        r.response_time_quantile(0.9)
    with pytest.raises(AttributeError):
        r.seed = 3
    with pytest.raises(ValueError, match="read-only"):
        r.throughput[0] = 1.0
    f = r.to_frame()
    assert list(f.columns[:3]) == ["class", "population", "arrival_rate"]
    assert {"p50", "p99_halfwidth", "response_time_halfwidth"} <= set(f.columns)
    assert len(r.to_frame("station")) == 3
    assert r.events > r.visits > 0
    assert "simulation" not in repr(r) or "seed=1" in repr(r)


def test_target_relative_halfwidth_is_met_or_refused():
    r = qn.simulate(NET, 4, seed=2, run_length=2.0, warmup=0.5, target_relative_halfwidth=0.01)
    rel = r.response_time_halfwidth / r.response_time
    assert rel[0] <= 0.01 and r.replications > 10
    with pytest.raises(qn.ConvergenceError, match="not reached.*max_replications"):
        qn.simulate(NET, 4, seed=2, run_length=0.2, warmup=0.1,
                    target_relative_halfwidth=1e-4, max_replications=12)  # fmt: skip
    with pytest.raises(qn.ConvergenceError, match="not reached.*run_length"):
        qn.simulate(NET, 4, seed=2, method="batch_means", run_length=0.5, warmup=0.1,
                    target_relative_halfwidth=1e-5)  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"run_length": 0}, "run_length must be > 0"),
        ({"run_length": "0 s"}, "run_length must be > 0"),
        ({"warmup": 0.0}, "warmup must be > 0"),
        ({"warmup": -1.0}, "warmup must be > 0"),
        ({"replications": 1}, "replications must be >= 2"),
        ({"method": "batch_means", "batches": 1}, "batches must be >= 2"),
        ({"method": "regenerative"}, "method must be one of"),
        ({"service": "weibull"}, r"service: unknown service distribution 'weibull'"),
        ({"service": {"s9": "exponential"}}, r"key 's9' names no station"),
        ({"service": {"s1": "lognormal"}}, r"service\['s1'\]: 'lognormal' needs a coefficient"),
        ({"quantiles": (0.5, 1.0)}, "quantiles must each be in"),
        ({"confidence": 1.5}, "confidence must be in"),
        ({"seed": -3}, "seed must be a non-negative integer"),
    ],
)
def test_bad_input_names_the_field(kwargs, match):
    with pytest.raises(qn.InvalidModelError, match=match):
        qn.simulate(NET, 3, **kwargs)


def test_bad_population_or_rates():
    with pytest.raises(qn.InvalidModelError, match="needs N"):
        qn.simulate(NET)
    with pytest.raises(qn.InvalidModelError, match="N must be a positive integer"):
        qn.simulate(NET, 0)
    with pytest.raises(qn.InvalidModelError, match="not both"):
        qn.simulate(NET, 3, arrival_rate=1.0)
    with pytest.raises(qn.UnitError, match="arrival_rate"):
        qn.simulate(NET, arrival_rate="5 ms")
    r = qn.simulate(NET, arrival_rate="20/s", seed=1, run_length=20.0)
    assert r.arrival_rate[0] == 20.0


def test_histogram_errors():
    from tests.simulation.test_simulate_open import qnbench_doc

    with pytest.raises(qn.InvalidModelError, match="histogram of qnbench results\\[0\\] is empty"):
        Empirical.from_qnbench(qnbench_doc([]))
    with pytest.raises(qn.InvalidModelError, match="the histogram is empty"):
        Empirical.from_qnbench(qnbench_doc([[0.001, 0.002, 0]]))
    with pytest.raises(qn.InvalidModelError, match="not a qnbench document"):
        Empirical.from_qnbench(qnbench_doc([[0.001, 0.002, 1]]) | {"schema": "fio"})
    with pytest.raises(qn.InvalidModelError, match="no 'latency_s.histogram'"):
        doc = qnbench_doc([[0.001, 0.002, 1]])
        del doc["results"][0]["latency_s"]["histogram"]
        Empirical.from_qnbench(doc)
    with pytest.raises(qn.InvalidModelError, match="overlap"):
        Empirical.from_qnbench(qnbench_doc([[0.001, 0.003, 1], [0.002, 0.004, 1]]))
    with pytest.raises(qn.InvalidModelError, match="bucket 0 .*not a qnbench bucket"):
        Empirical.from_qnbench(qnbench_doc([[0.002, 0.001, 1]]))
    with pytest.raises(qn.InvalidModelError, match=r"service\['s1'\]: .*not a qnbench"):
        qn.simulate(NET, 3, service={"s1": {"latency": [1, 2]}})
    # a document accepted as the service of every station
    r = qn.simulate(NET, 3, seed=1, run_length=5.0, service=qnbench_doc([[0.001, 0.002, 5]]))
    assert r.response_time[0] > 0


def test_class_with_nothing_to_do_is_refused():
    net = qn.Network([qn.Station("a", 0.0)])
    with pytest.raises(
        qn.InvalidModelError,
        match="class 'class0': no demand at any station and no think time; nothing to simulate",
    ):
        qn.simulate(net, 2, seed=1)


def test_missing_library_is_a_clear_error(monkeypatch, tmp_path):
    from qnmodel.simulation import SimulatorUnavailableError, _engine

    monkeypatch.setitem(_engine._state, "lib", None)
    monkeypatch.setenv("QNMODEL_SIM_LIB", str(tmp_path / "nope.so"))
    with pytest.raises(
        SimulatorUnavailableError, match="no compiled simulator.*no Python fallback"
    ):
        qn.simulate(NET, 2, seed=1)
