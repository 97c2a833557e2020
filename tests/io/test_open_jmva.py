"""JMT JMVA XML export and import (qnmodel.io.jmva): round trips of closed, open, mixed and
load-dependent models give the same arrays and the same solutions; a hand-written
JMVA document is read as written; bad documents are named."""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError
from qnmodel.io.jmva import from_jmva, read_jmva, to_jmva, write_jmva
from qnmodel.solvers.mva_ld_general import mva_ld_general
from tests._nets import pf_disciplines
from tests._tol import COPY, closed_form, recursion


def _multi(D, is_open, lam, N, Z, kinds, servers=None):
    """Stations "st0", ..., classes "cl0", ...: open at ``lam`` or closed with N and Z; PS
    where the classes' demands differ (product form)."""
    D = np.atleast_2d(np.asarray(D, dtype=float))
    classes = [
        qn.OpenClass(f"cl{c}", float(lam[c])) if is_open[c]
        else qn.ClosedClass(f"cl{c}", int(N[c]), float(Z[c]))
        for c in range(D.shape[0])
    ]  # fmt: skip
    return qn.Network.from_demands(
        D,
        classes=classes,
        names=[f"st{k}" for k in range(D.shape[1])],
        kinds=kinds,
        servers=servers,
        disciplines=pf_disciplines(D, kinds),
    )


def test_closed_network_round_trip(tmp_path):
    net = qn.Network.from_demands(
        [0.0123456789012345, 0.02, 0.3],
        think_time=1.5,
        names=["cpu", "disk", "lan"],
        kinds=["queue", "queue", "delay"],
        servers=[1, 4, 1],
    )
    path = write_jmva(net, tmp_path / "m.jmva", N=12)
    model = read_jmva(path)
    back = model.class_network(0)
    np.testing.assert_array_equal(back.demands, net.demands)  # repr() keeps every bit
    assert back.names == net.names and back.think_time == 1.5
    np.testing.assert_array_equal(back.servers, net.servers)
    assert model.N.tolist() == [12]
    np.testing.assert_array_equal(qn.mva(back, 12).throughput, qn.mva(net, 12).throughput)


def test_mixed_model_round_trip_solves_the_same():
    net = _multi(
        [[0.02, 0.05, 0.3], [0.01, 0.03, 0.1]],
        [False, True],
        [0.0, 7.0],
        [5, 0],
        [0.5, 0.0],
        ["queue", "queue", "delay"],
    )
    model = from_jmva(to_jmva(net))
    assert model.class_names == ("cl0", "cl1")
    assert model.is_open.tolist() == [False, True]
    assert model.compiled.discipline == ("PS", "PS", "IS")  # the classes' service times differ
    np.testing.assert_array_equal(model.demands, net.demands)
    np.testing.assert_array_equal(model.think_time, [0.5, 0.0])
    a, b = qn.mixed_network(net), qn.mixed_network(model)
    np.testing.assert_array_equal(a.residence_time, b.residence_time)


def test_open_multiserver_round_trip():
    net = _multi([[0.02, 0.05]], [True], [30.0], [0], [0.0], ["queue", "queue"], [1, 3])
    model = from_jmva(to_jmva(net))
    assert model.servers.tolist() == [1, 3]
    np.testing.assert_array_equal(
        qn.open_network(net).residence_time, qn.open_network(model).residence_time
    )
    assert qn.open_network(model).residence_time.shape == (1, 1, 2)  # point, class, station


def test_load_dependent_station_round_trip_rescales_to_r1_one():
    rm = [[2.0, 3.0, 3.5], None]
    net = qn.Network(
        [qn.Station("nvme", 0.04, rate_multipliers=rm[0]), qn.Station("cpu", 0.01)],
        think_time=0.2,
    )
    text = to_jmva(net, N=9)
    assert "<ldstation" in text and text.count(";") == 8  # S(1..9)
    model = from_jmva(text)
    # written with a round-tripping repr and read back
    assert model.stations[0].rate_multipliers == pytest.approx(
        [1.0, 1.5, 1.75, 1.75, 1.75, 1.75, 1.75, 1.75, 1.75], rel=COPY
    )
    assert model.demands[0, 0] == pytest.approx(0.02, rel=closed_form(2))  # D / r(1)
    base = qn.Network.from_demands([0.04, 0.01], think_time=0.2, names=["nvme", "cpu"])
    a = mva_ld_general(base, 9, rate_multipliers=rm)
    b = qn.mva(model.class_network(0), 9)
    np.testing.assert_allclose(b.throughput, a.throughput, rtol=1e-13)
    # two exact load-dependent recursions, N = 9 steps of 4 K + 2 + 3 n operations
    np.testing.assert_allclose(b.queue_length, a.queue_length, rtol=recursion(9, 37))


def test_reads_a_jmva_document_as_written():
    text = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<model xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
       xsi:noNamespaceSchemaLocation="JMTmodel.xsd">
  <parameters>
    <classes number="2">
      <closedclass name="Batch" population="3"/>
      <openclass name="Web" rate="2.5"/>
    </classes>
    <stations number="2">
      <listation name="Disk" servers="1">
        <servicetimes>
          <servicetime customerclass="Batch">0.04</servicetime>
          <servicetime customerclass="Web">0.02</servicetime>
        </servicetimes>
        <visits>
          <visit customerclass="Batch">5.0</visit>
          <visit customerclass="Web">2.0</visit>
        </visits>
      </listation>
      <delaystation name="Terminals">
        <servicetimes>
          <servicetime customerclass="Batch">1.0</servicetime>
          <servicetime customerclass="Web">0.0</servicetime>
        </servicetimes>
        <visits>
          <visit customerclass="Batch">1.0</visit>
          <visit customerclass="Web">0.0</visit>
        </visits>
      </delaystation>
    </stations>
    <ReferenceStation number="2">
      <Class name="Batch" refStation="Terminals"/>
      <Class name="Web" refStation="Disk"/>
    </ReferenceStation>
  </parameters>
  <algParams><algType maxSamples="10000" name="MVA" tolerance="1.0E-7"/></algParams>
</model>"""
    m = from_jmva(text)
    assert m.names == ("Disk", "Terminals")
    np.testing.assert_allclose(m.demands, [[0.2, 1.0], [0.04, 0.0]], rtol=1e-15)
    assert m.is_delay.tolist() == [False, True]
    assert m.N.tolist() == [3, 0] and m.arrival_rate.tolist() == [0.0, 2.5]
    assert isinstance(m, qn.Network) and not m.single
    # the service times and visits are kept: the classes' service times differ at the disk
    np.testing.assert_array_equal(m.compiled.S[:, 0], [0.04, 0.02])
    np.testing.assert_array_equal(m.compiled.V[:, 0], [5.0, 2.0])
    assert m.compiled.discipline == ("PS", "IS")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("<model", "not a JMVA XML document"),
        ("<sim/>", "expected <model><parameters>"),
        ("<model><parameters/></model>", "no <classes>"),
        (
            '<model><parameters><classes><closedclass name="a" population="x"/></classes>'
            "</parameters></model>",
            r"class 'a' population: 'x' is not a number",
        ),
        (
            '<model><parameters><classes><closedclass name="a" population="1"/></classes>'
            '<stations><listation name="d"><servicetimes><servicetime customerclass="b">1'
            "</servicetime></servicetimes></listation></stations></parameters></model>",
            "unknown customerclass 'b'",
        ),
    ],
)
def test_bad_documents_are_named(text, match):
    with pytest.raises(InvalidModelError, match=match):
        from_jmva(text)


def test_export_needs_a_population_for_a_network():
    with pytest.raises(
        InvalidModelError, match=r"N \(the population\) is required.*to_jmva\(net, N=...\)"
    ):
        to_jmva(qn.Network.from_demands([0.1]))
