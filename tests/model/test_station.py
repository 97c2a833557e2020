"""The description floor's new parts: disciplines, service time and visits, service laws and
capacity on a Station, its validation messages, Station.replace, the compiled form and its
features, and ForkJoin.busy_demand."""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError, InvalidTypeError
from qnmodel.model import DISCIPLINES, FEATURES, ForkJoin, Lognormal, Network, Station
from tests._tol import closed_form

# ---------------------------------------------------------------------------------------
# disciplines, service time and visits, laws, capacity
# ---------------------------------------------------------------------------------------


def test_disciplines_and_kinds_agree():
    assert DISCIPLINES == ("FCFS", "PS", "LCFS-PR", "IS", "HOL", "PRIO-PR")
    assert Station("d", 0.1).discipline == "FCFS"  # the default of a queue
    assert Station("d", 0.1, discipline="ps").discipline == "PS"  # case is ignored
    z = Station("z", 1.0, kind="delay")
    assert (z.discipline, z.is_delay) == ("IS", True)
    i = Station("z", 1.0, discipline="IS")
    assert (i.kind, i.is_delay) == ("delay", True) and i == z
    for d in DISCIPLINES:
        s = Station("d", 0.1, discipline=d)
        assert s.kind == ("delay" if d == "IS" else "queue")


def test_service_time_and_visits_make_the_demand():
    s = Station("disk", service_time="2 ms", visits=3)
    assert (s.service_time, s.visits) == (0.002, 3.0)
    assert s.demand == pytest.approx(0.006, rel=closed_form(1))
    assert Station("disk", service_time=0.002).visits == 1.0  # one visit by default
    # per class: a class not named does not visit
    p = Station("disk", service_time={"a": "2 ms", "b": 0.004}, visits={"a": 2})
    assert dict(p.demand) == {"a": 0.004, "b": 0.0}
    assert p.visits_of("a") == 2.0 and p.visits_of("b") == 0.0
    net = Network(
        [p, Station("cpu", {"a": 0.001, "b": 0.001})],
        classes=[qn.ClosedClass("a", 1), qn.ClosedClass("b", 1, think_time=1.0)],
    )
    c = net.compiled
    np.testing.assert_array_equal(c.V, [[2.0, 1.0], [0.0, 1.0]])
    np.testing.assert_array_equal(c.S, [[0.002, 0.001], [0.0, 0.001]])
    np.testing.assert_array_equal(c.D, [[0.004, 0.001], [0.0, 0.001]])


def test_laws_and_scv():
    assert Station("d", 0.1).scv == 1.0 and Station("d", 0.1).law == qn.model.Exponential()
    s = Station("d", 0.1, service="deterministic")
    assert s.scv == 0.0 and s.law == qn.model.Deterministic()
    assert Station("d", 0.1, scv=0.0).law == qn.model.Deterministic()
    ln = Station("d", 0.1, service=Lognormal(2.0))
    assert ln.scv == pytest.approx(4.0, rel=closed_form(1))
    per = Station("d", {"a": 0.1, "b": 0.2}, scv={"a": 0.5})
    assert per.per_class and per.scv_of("a") == 0.5 and per.scv_of("b") == 1.0


def test_capacity():
    s = Station("nvme", "1 ms", servers=4, capacity=32)
    assert s.capacity == 32 and Station("d", 0.1).capacity is None
    assert Station("loss", 1.0, servers=3, capacity=3).capacity == 3  # Erlang loss: c = m


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (
            dict(discipline="SJF"),
            InvalidModelError,
            r"^Station 'd': discipline must be one of 'FCFS', 'PS', 'LCFS-PR', 'IS', 'HOL', "
            r"'PRIO-PR'; got 'SJF'$",
        ),
        (
            dict(discipline=3),
            InvalidModelError,
            r"^Station 'd': discipline must be one of .*got 3$",
        ),
        (
            dict(kind="delay", discipline="PS"),
            InvalidModelError,
            r"^Station 'd': kind='delay' is the discipline 'IS' \(infinite servers\), got "
            r"discipline='PS'; give one of them$",
        ),
        (
            dict(kind="queue", discipline="IS"),
            InvalidModelError,
            r"^Station 'd': discipline 'IS' is a delay station; kind='queue' contradicts it$",
        ),
        (
            dict(servers=3, capacity=2),
            InvalidModelError,
            r"^Station 'd': capacity=2 is below servers=3: the station holds at least one job "
            r"per server \(capacity counts jobs in service and waiting\)$",
        ),
        (
            dict(capacity=0),
            InvalidModelError,
            r"^Station 'd': capacity must be an integer >= 1, got 0$",
        ),
        (
            dict(kind="delay", capacity=4),
            InvalidModelError,
            r"^Station 'd': capacity applies to a queueing station; for a loss system of c "
            r"parallel servers give servers=c, capacity=c$",
        ),
        (
            dict(scv=0.5, service="deterministic"),
            InvalidModelError,
            r"^Station 'd': give scv or service \(a law, whose SCV is 0\), not both$",
        ),
        (
            dict(scv=-1),
            InvalidModelError,
            r"^Station 'd': scv must be finite and >= 0 \(the squared coefficient of variation",
        ),
        (
            dict(visits=2),
            InvalidModelError,
            r"^Station 'd': visits go with service_time, or size and rate \(the demand is visits "
            r"\* service_time\); with demand, the demand already counts the visits$",
        ),
        (
            dict(service_time=0.1),
            InvalidModelError,
            r"^Station 'd': give demand \(D = V S\) or service_time \(with visits\), not both$",
        ),
        (
            dict(demand=None, service_time="2 ms", visits="3"),
            InvalidTypeError,
            r"^Station 'd': visits must be a number of visits \(>= 0\), got the string '3'$",
        ),
        (
            dict(demand=None, service_time="2 ms", visits=-1),
            InvalidModelError,
            r"^Station 'd': visits must be >= 0, got -1$",
        ),
    ],
)
def test_station_validation_messages(kwargs, exc, match):
    kw = {"demand": 0.1, **kwargs}
    with pytest.raises(exc, match=match):
        Station("d", **kw)


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("d\x1b[31m", r"contains the invisible or control character U\+001B"),
        ("d\n", r"contains the invisible or control character U\+000A"),
        ("d\x00", r"contains the invisible or control character U\+0000"),
        ("d\u200b", r"contains the invisible or control character U\+200B"),
        ("disk ", r"begins or ends with white space: remove it"),
        (" disk", r"begins or ends with white space: remove it"),
        ("x" * 201, r"^Station name is 201 characters long; at most 200$"),
    ],
)
def test_bad_names_are_refused(name, match):
    with pytest.raises(InvalidModelError, match=match):
        Station(name, 0.1)


def test_bad_names_are_refused_for_every_element():
    with pytest.raises(InvalidModelError, match=r"^ClosedClass name 'a\\tb' contains"):
        qn.ClosedClass("a\tb")
    with pytest.raises(InvalidModelError, match=r"^OpenClass name 'web ' begins or ends"):
        qn.OpenClass("web ", 1.0)
    with pytest.raises(InvalidModelError, match=r"^ForkJoin name 'fj ' begins or ends"):
        ForkJoin("fj ", [Station("m0", 0.1)])


# ---------------------------------------------------------------------------------------
# Station.replace
# ---------------------------------------------------------------------------------------


def test_replace_keeps_the_rest_and_validates():
    s = Station("raid", "12 ms", servers=4, capacity=8)
    r = s.replace(demand="5 ms")
    assert (r.demand, r.servers, r.capacity, r.discipline) == (0.005, 4, 8, "FCFS")
    assert s.demand == 0.012  # the original is unchanged
    assert s.replace(discipline="PS").discipline == "PS"
    with pytest.raises(InvalidModelError, match="begins or ends with white space"):
        s.replace(name="raid ")
    with pytest.raises(InvalidModelError, match=r"capacity=8 is below servers=9"):
        s.replace(servers=9)
    with pytest.raises(TypeError, match="colour"):
        s.replace(colour="red")


def test_replace_switches_between_the_forms_it_was_given_in():
    st = Station("d", service_time="2 ms", visits=3)
    d = st.replace(demand="1 ms")  # a demand drops service time and visits
    assert (d.demand, d.service_time, d.visits) == (0.001, None, None)
    v = st.replace(visits=2)  # the service time stays
    assert v.demand == pytest.approx(0.004, rel=closed_form(1)) and v.service_time == 0.002
    t = Station("d", 0.1).replace(service_time=0.01, visits=4)
    assert t.demand == pytest.approx(0.04, rel=closed_form(1))


def test_replace_kind_discipline_and_law():
    s = Station("raid", "12 ms", servers=4, capacity=8)
    z = s.replace(kind="delay")  # a delay has no servers, capacity or curve
    assert (z.discipline, z.servers, z.capacity) == ("IS", 1, None)
    q = Station("z", 1.0, kind="delay").replace(discipline="PS")
    assert (q.kind, q.discipline) == ("queue", "PS")
    assert Station("p", 0.1, discipline="PS").replace(kind="queue").discipline == "FCFS"
    ln = Station("d", 0.1, service=Lognormal(2.0))
    a = ln.replace(scv=0.5)  # a new SCV drops the law
    assert (a.service, a.scv) == (None, 0.5)
    b = Station("d", 0.1, scv=0.5).replace(service="deterministic")  # and the reverse
    assert (b.scv, b.law) == (0.0, qn.model.Deterministic())
    c = ln.replace(demand=0.2)  # the law stays
    assert c.service == ln.service and c.scv == ln.scv
    m = Station("d", 0.1, rate_multipliers=[1, 2]).replace(servers=3)
    assert (m.servers, m.rate_multipliers) == (3, None)


# ---------------------------------------------------------------------------------------
# the compiled form and its features
# ---------------------------------------------------------------------------------------


def _every_feature() -> Network:
    return Network(
        [
            Station("cpu", {"a": 0.01, "b": 0.02}),  # FCFS, class-dependent service
            Station("disk", {"a": 0.01, "b": 0.01}, scv=0.0),  # FCFS, deterministic
            Station("ps", {"a": 0.01, "b": 0.03}, discipline="PS"),
            Station("lcfs", 0.01, discipline="LCFS-PR"),
            Station("hol", 0.01, discipline="HOL"),
            Station("mm", 0.01, servers=2),
            Station("ld", 0.01, rate_multipliers=[1, 1.5]),
            Station("cap", 0.01, capacity=3),
            Station("z", 1.0, kind="delay"),
            ForkJoin("fj", [Station("m0", 0.01), Station("m1", 0.02)]),
        ],
        classes=[qn.ClosedClass("a", 2, think_time=0.5, priority=1), qn.OpenClass("b", 1.0)],
    )


def test_compiled_features_name_where_each_feature_is_used():
    c = _every_feature().compiled
    assert set(c.features) == set(FEATURES) - {"class_switching"}
    assert dict(c.features) == {
        "open": ("b",),
        "closed": ("a",),
        "multiclass": ("a", "b"),
        "delay": ("z",),
        "multiserver": ("mm",),
        "load_dependent": ("ld",),
        "ps": ("ps",),
        "lcfs_pr": ("lcfs",),
        "fcfs_class_dependent": ("cpu",),
        "non_exponential": ("disk",),
        "priority": ("hol",),
        "finite_capacity": ("cap",),
        "forkjoin": ("fj",),
    }
    assert c.uses("forkjoin") and not Network([Station("d", 0.1)]).compiled.uses("delay")
    # a network without classes: open or closed is decided when it is solved
    assert dict(Network([Station("d", 0.1)]).compiled.features) == {}
    # equal service times per visit at a FCFS station are product form, whatever the visits
    same = Network(
        [Station("disk", service_time=0.005, visits={"a": 1, "b": 3})],
        classes=[qn.ClosedClass("a", 1), qn.ClosedClass("b", 1)],
    )
    assert "fcfs_class_dependent" not in same.compiled.features


def test_class_switching_is_a_feature_of_the_classes_of_one_chain():
    # a read (class a) at the cpu turns into a write-back (class b) at the disk
    net = Network(
        [Station("cpu", service_time=0.01), Station("disk", service_time=0.05)],
        classes=[qn.ClosedClass("a", 2), qn.ClosedClass("b", 1)],
        routing={
            ("a", "think"): {("a", "cpu"): 1.0},
            ("a", "cpu"): {("b", "disk"): 1.0},
            ("b", "disk"): {("a", "think"): 1.0},
        },
    )
    assert net.compiled.features["class_switching"] == ("a", "b")
    assert "class_switching" not in _every_feature().compiled.features


def test_compiled_arrays():
    c = _every_feature().compiled
    assert c.station_names == ("cpu", "disk", "ps", "lcfs", "hol", "mm", "ld", "cap", "z", "fj")
    assert c.class_names == ("a", "b") and not c.single and (c.C, c.K) == (2, 10)
    assert c.discipline == ("FCFS", "FCFS", "PS", "LCFS-PR", "HOL", "FCFS", "FCFS", "FCFS",
                            "IS", "forkjoin")  # fmt: skip
    np.testing.assert_array_equal(c.D[:, 0], [0.01, 0.02])
    np.testing.assert_array_equal(c.D[:, 9], [0.02, 0.02])  # the fork-join's busy_demand
    np.testing.assert_array_equal(c.scv[:, 1], [0.0, 0.0])
    np.testing.assert_array_equal(c.servers, [1, 1, 1, 1, 1, 2, 1, 1, 1, 1])
    np.testing.assert_array_equal(c.capacity, [0, 0, 0, 0, 0, 0, 0, 3, 0, 0])
    assert np.flatnonzero(c.is_delay).tolist() == [8]
    assert np.flatnonzero(c.is_ld).tolist() == [6]
    assert np.flatnonzero(c.is_forkjoin).tolist() == [9]
    assert c.is_open.tolist() == [False, True] and c.N.tolist() == [2, 0]
    assert c.Z.tolist() == [0.5, 0.0] and c.arrival_rate.tolist() == [0.0, 1.0]
    assert c.priority.tolist() == [1, 0]
    for a in (c.D, c.V, c.S, c.scv, c.servers, c.capacity, c.is_open, c.N, c.Z):
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 1


# ---------------------------------------------------------------------------------------
# ForkJoin.busy_demand
# ---------------------------------------------------------------------------------------


def test_forkjoin_busy_demand():
    fj = ForkJoin("stripe", [Station(f"m{i}", "5 ms") for i in range(4)])
    assert (fj.n, fj.k, fj.busy_demand) == (4, 4, 0.005)
    mixed = ForkJoin("fj", [Station("a", 0.01), Station("b", 0.03)])
    assert mixed.busy_demand == 0.03  # the busiest branch
    # a request forks to fanout of the n branches: a branch serves fanout / n of them
    r5 = ForkJoin("r5", [Station(f"m{i}", 1.0) for i in range(4)], fanout=2)
    assert r5.busy_demand == pytest.approx(0.5, rel=closed_form(2))
    per = ForkJoin("fj", [Station("a", {"r": 0.01, "w": 0.02}), Station("b", {"r": 0.03})])
    assert per.busy_demand == {"r": 0.03, "w": 0.02}
    for gone in ("demand", "kind", "servers", "is_delay", "rate_multipliers"):
        assert not hasattr(fj, gone)
    net = Network([Station("cpu", 0.001), fj])
    np.testing.assert_array_equal(net.demands, [0.001, 0.005])
