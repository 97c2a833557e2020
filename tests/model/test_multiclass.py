"""The L1 multi-class description: stations with per-class demands, closed and open
classes, load-dependent rate curves; every solver takes (network, N).

The two-class network has class-dependent demands at its queues: they are processor-sharing
stations (``discipline="PS"``), the product-form model; under FCFS they would not be product
form (refused by ``mva_multiclass``: ``tests/solvers/test_support.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError, InvalidTypeError, UnitError


def two_class_net():
    return qn.Network(
        [
            qn.Station("cpu", {"read": "2 ms", "write": "3 ms"}, discipline="PS"),
            qn.Station("disk", {"read": "8 ms", "write": "12 ms"}, discipline="PS"),
            qn.Station("lan", "1 ms", kind="delay"),  # one value: the demand of every class
        ],
        classes=[qn.ClosedClass("read", N=10, think_time="1 s"), qn.ClosedClass("write", N=4)],
    )


def test_compiled_arrays():
    net = two_class_net()
    np.testing.assert_array_equal(net.demands, [[0.002, 0.008, 0.001], [0.003, 0.012, 0.001]])
    assert net.names == ("cpu", "disk", "lan") and net.class_names == ("read", "write")
    assert net.N.tolist() == [10, 4] and net.think_time.tolist() == [1.0, 0.0]
    assert net.is_delay.tolist() == [False, False, True]
    assert not net.is_open.any() and net.arrival_rate.tolist() == [0.0, 0.0]
    for a in (net.demands, net.N, net.think_time, net.servers, net.is_open):
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 1


def test_solvers_take_the_network_and_match_the_matrix_form():
    net = two_class_net()
    r = qn.mva_multiclass(net)
    ref = qn.mva_multiclass(
        qn.Network.from_demands(
            net.demands,
            N=[10, 4],
            think_time=[1.0, 0.0],
            kinds=["queue", "queue", "delay"],
            disciplines=["PS", "PS", "IS"],
        )
    )
    np.testing.assert_array_equal(r.throughput, ref.throughput)
    np.testing.assert_array_equal(r.queue_length, ref.queue_length)
    assert r.class_names == ("read", "write")
    assert list(r.to_frame()["class"]) == ["read", "write"]
    # N given at call time overrides the classes' populations, by vector or by name
    np.testing.assert_array_equal(
        qn.mva_multiclass(net, [3, 2]).throughput,
        qn.mva_multiclass(net, {"read": 3, "write": 2}).throughput,
    )
    a = qn.amva(net, method="linearizer", tol=1e-12)
    np.testing.assert_allclose(a.throughput, r.throughput, rtol=5e-3)


def test_one_class_of_a_multiclass_model_equals_the_single_class_model():
    net = two_class_net()
    alone = net.with_population([10, 0])
    single = net.class_network("read")
    assert isinstance(single, qn.Network) and single.think_time == 1.0
    np.testing.assert_array_equal(single.demands, [0.002, 0.008, 0.001])
    r = qn.mva_multiclass(alone)
    e = qn.mva(single, 10)
    assert r.throughput[0] == pytest.approx(e.throughput[-1], rel=1e-13)
    np.testing.assert_allclose(r.queue_length[0], e.queue_length[-1], rtol=1e-13)
    # and Network.as_multiclass is the inverse view
    back = single.as_multiclass("read", N=10)
    np.testing.assert_array_equal(back.demands[0], single.demands)
    assert qn.mva_multiclass(back).throughput[0] == pytest.approx(e.throughput[-1], rel=1e-13)


def test_open_classes_and_rates():
    net = qn.Network(
        [qn.Station("cpu", {"batch": 0.01, "web": "2 ms"}), qn.Station("disk", 0.005)],
        classes=[qn.ClosedClass("batch", N=3), qn.OpenClass("web", "40000/s")],
    )
    assert net.is_open.tolist() == [False, True]
    assert net.arrival_rate.tolist() == [0.0, 40000.0] and net.N.tolist() == [3, 0]
    assert net.open_classes.tolist() == [1] and net.closed_classes.tolist() == [0]
    assert net.with_arrival_rate(["2 kHz"]).arrival_rate.tolist() == [0.0, 2000.0]
    assert net.with_arrival_rate({"web": "1e3 IOPS"}).arrival_rate.tolist() == [0.0, 1000.0]
    with pytest.raises(
        InvalidModelError, match=r"open classes \(class 'web'\): use .*open_network"
    ):
        qn.mva_multiclass(net)
    with pytest.raises(InvalidModelError, match="class 'batch' is closed"):
        net.with_arrival_rate({"batch": 5})
    with pytest.raises(InvalidModelError, match=r"N\[1\] = 2 but class 'web' is open"):
        net.with_population([3, 2])
    with pytest.raises(UnitError, match="arrival_rate"):
        qn.OpenClass("x", "40 MB/s")  # a byte rate where a request rate is needed


def test_rate_multipliers_describe_a_load_dependent_station():
    s = qn.Station("nvme", "1 ms", rate_multipliers=[1, 1.8, 2.4, 2.8])
    assert s.is_load_dependent
    np.testing.assert_array_equal(
        s.rate_multiplier([1, 2, 3, 4, 5, 100]), [1, 1.8, 2.4, 2.8, 2.8, 2.8]
    )
    net = qn.Network([s, qn.Station("cpu", 0.002, servers=3), qn.Station("z", 0.1, kind="delay")])
    assert net.is_load_dependent.tolist() == [True, False, False]
    np.testing.assert_array_equal(
        net.rate_table(4), [[1, 1.8, 2.4, 2.8], [1, 2, 3, 3], [1, 2, 3, 4]]
    )
    # equal stations compare and hash equal; a different curve does not
    assert s == qn.Station("nvme", 0.001, rate_multipliers=(1, 1.8, 2.4, 2.8))
    assert hash(s) == hash(qn.Station("nvme", 0.001, rate_multipliers=(1, 1.8, 2.4, 2.8)))
    assert s != qn.Station("nvme", 0.001, rate_multipliers=(1, 1.8, 2.4))
    # exact multi-class MVA with load-dependent and multi-server stations: the single-class
    # load-dependent MVA at the same population (measured 1.4e-15 relative)
    for n in (2, 7):
        r = qn.mva_multiclass(net.as_multiclass(N=n))
        e = qn.mva(net, n)
        assert r.method == "mva.multiclass.ld"
        assert r.throughput[0] == pytest.approx(e.throughput[-1], rel=1e-14)
        np.testing.assert_allclose(r.queue_length[0], e.queue_length[-1], rtol=1e-14)


@pytest.mark.parametrize(
    ("make", "exc", "match"),
    [
        (lambda: qn.Station("d", 1, rate_multipliers=[]), InvalidModelError, "is empty"),
        (
            lambda: qn.Station("d", 1, rate_multipliers=[1, 0]),
            InvalidModelError,
            r"\[1\] must be finite and > 0",
        ),
        (lambda: qn.Station("d", 1, rate_multipliers=[1, -2]), InvalidModelError, r"\[1\]"),
        (
            lambda: qn.Station("d", 1, rate_multipliers=[1, float("nan")]),
            InvalidModelError,
            r"\[1\]",
        ),
        (
            lambda: qn.Station("d", 1, rate_multipliers="1,2"),
            InvalidTypeError,
            "sequence of positive",
        ),
        (
            lambda: qn.Station("d", 1, rate_multipliers=[1, "2"]),
            InvalidTypeError,
            r"\[1\] must be a number",
        ),
        (
            lambda: qn.Station("d", 1, servers=2, rate_multipliers=[1, 2]),
            InvalidModelError,
            "not both",
        ),
        (
            lambda: qn.Station("d", 1, kind="delay", rate_multipliers=[1]),
            InvalidModelError,
            "delay station",
        ),
        (lambda: qn.Station("d", {}), InvalidModelError, "empty mapping"),
        (lambda: qn.Station("d", {"a": -1}), InvalidModelError, r"demand\['a'\]"),
        (lambda: qn.Station("d", {1: 0.1}), InvalidTypeError, "class names"),
        (
            lambda: qn.Network([qn.Station("d", {"a": 0.1})]),
            InvalidModelError,
            r"has per-class demands; .* give the classes, Network\(stations, classes=",
        ),
        (lambda: qn.ClosedClass("a", N=-1), InvalidModelError, "N must be an integer >= 0"),
        (lambda: qn.ClosedClass("a", N=2.5), InvalidModelError, "N must be an integer"),
        (lambda: qn.ClosedClass("", N=1), InvalidModelError, "non-empty"),
        (lambda: qn.ClosedClass("a", think_time=-1), InvalidModelError, "think_time"),
        (lambda: qn.OpenClass("a", -5), InvalidModelError, "arrival_rate must be >= 0"),
        (lambda: qn.OpenClass("a", float("inf")), InvalidModelError, "finite"),
        (
            lambda: qn.Network([qn.Station("d", 1)], classes=[]),
            InvalidModelError,
            "classes is empty",
        ),
        (
            lambda: qn.Network([qn.Station("d", 1)], classes=["a"]),
            InvalidTypeError,
            r"classes\[0\]",
        ),
        (
            lambda: qn.Network(
                [qn.Station("d", 1)], classes=[qn.ClosedClass("a"), qn.OpenClass("a")]
            ),
            InvalidModelError,
            "'a' appears twice",
        ),
        (
            lambda: qn.Network([qn.Station("d", {"b": 1})], classes=[qn.ClosedClass("a")]),
            InvalidModelError,
            "names class 'b'",
        ),
        (
            lambda: qn.Network([qn.Station("d", {"b": 1})], classes=[qn.ClosedClass("a", 2)]),
            InvalidModelError,
            "names class 'b'",
        ),
        (
            lambda: qn.Network(
                [qn.Station("d", {"b": 1.0})],
                classes=[qn.ClosedClass("a", 2), qn.ClosedClass("b")],
            ),
            InvalidModelError,
            "class 'a' has zero demand everywhere",
        ),
        (
            lambda: qn.Network([qn.Station("d", 1)], [qn.ClosedClass("a", 2)]),
            InvalidTypeError,
            r"give the classes by keyword, classes=\[\.\.\.\]",
        ),
        (lambda: two_class_net().class_index("nope"), InvalidModelError, "no class named 'nope'"),
        (
            lambda: two_class_net().with_population([1, 2, 3]),
            InvalidModelError,
            "one population per class",
        ),
    ],
)
def test_bad_descriptions_name_the_field(make, exc, match):
    with pytest.raises(exc, match=match):
        make()
