"""Processor-sharing and LCFS-PR stations against product-form mean values.

PS and LCFS-PR stations are insensitive: in a closed network of PS, LCFS-PR and delay
stations with exponential think times, the mean values depend on the service times only
through their means, whatever the law and however they differ between classes (BCMP types 2
and 4: F. Baskett, K. M. Chandy, R. R. Muntz, F. G. Palacios, J. ACM 22(2):248-260, 1975,
Theorem 1 and sec. 4), so exact MVA (single- and multi-class, with a multi-server PS station
as the load-dependent rate min(n, m)) gives the simulator's answer for deterministic and
lognormal service too. Open: the M/G/1-PS response time S / (1 - rho) for any law
(L. Kleinrock, *Queueing Systems*, vol. 2, Wiley 1976, eq. 4.17).

Tolerances are the simulation's own: |estimate - exact| <= 3 half-widths of the 95 %
interval (about 7 standard errors with 10 replications) plus 0.2 % for the warm-up's bias, and
the intervals are narrow enough for that to mean something. Seeds are fixed.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.simulation import Deterministic, Lognormal

LAWS = [Deterministic(), Lognormal(2.0)]
IDS = ["deterministic", "lognormal-cv2"]


def near(est, hw, exact, *, slack=2e-3, width=0.03):
    """Every estimate within 3 half-widths (+ slack, relative) of the exact value, and every
    interval narrower than ``width`` relative (so the check has teeth)."""
    est, hw, exact = (np.asarray(a, dtype=float) for a in (est, hw, exact))
    assert np.all(np.abs(est - exact) <= 3 * hw + slack * np.abs(exact)), (est, hw, exact)
    assert np.all(hw <= width * np.abs(exact) + 1e-12), (hw, exact)


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_single_class_ps_and_lcfs_pr_match_mva_with_any_law(law):
    net = qn.Network(
        (
            qn.Station("cpu", "4 ms", discipline="PS", servers=2, service=law),
            qn.Station("disk", "9 ms", discipline="PS", service=law),
            qn.Station("log", "3 ms", discipline="LCFS-PR", service=law),
            qn.Station("net", "2 ms", kind="delay", service=law),
        ),
        think_time="20 ms",
    )
    N = 6
    exact = qn.mva(net, N)
    r = qn.simulate(net, N, seed=3, replications=10, run_length=120.0, warmup=2.0)
    near(r.throughput[0], r.throughput_halfwidth[0], exact.throughput[-1])
    near(r.response_time[0], r.response_time_halfwidth[0], exact.response_time[-1])
    near(r.queue_length[0], r.queue_length_halfwidth[0], exact.queue_length[-1], width=0.05)
    near(r.utilization[0], r.utilization_halfwidth[0], exact.utilization[-1])
    near(r.residence_time[0], r.residence_time_halfwidth[0], exact.residence_time[-1], width=0.05)


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_multiclass_ps_and_lcfs_pr_match_mva_multiclass(law):
    # class-dependent service times at every station: product form under PS and LCFS-PR only
    classes = [qn.ClosedClass("a", N=3, think_time=0.05), qn.ClosedClass("b", N=2, think_time=0.02)]
    net = qn.Network(
        (
            qn.Station("cpu", {"a": 0.010, "b": 0.030}, discipline="PS", servers=2, service=law),
            qn.Station("disk", {"a": 0.020, "b": 0.004}, discipline="PS", service=law),
            qn.Station("log", {"a": 0.005, "b": 0.012}, discipline="LCFS-PR", service=law),
        ),
        classes=classes,
    )
    exact = qn.mva_multiclass(net)
    r = qn.simulate(net, seed=5, replications=10, run_length=150.0, warmup=2.0)
    near(r.throughput, r.throughput_halfwidth, exact.throughput)
    near(r.response_time, r.response_time_halfwidth, exact.response_time)
    near(r.queue_length, r.queue_length_halfwidth, exact.queue_length, width=0.05)
    near(r.utilization, r.utilization_halfwidth, exact.utilization)


def test_lcfs_pr_with_a_rate_curve_matches_load_dependent_mva():
    # LCFS-PR with r(n) = min(n, 2) has the mean values of two servers (BCMP type 4)
    law = Lognormal(1.5)
    net = qn.Network(
        (
            qn.Station("pool", "12 ms", discipline="LCFS-PR", rate_multipliers=(1, 2), service=law),
            qn.Station("disk", "5 ms", discipline="PS", service=law),
        ),
        think_time="10 ms",
    )
    N = 5
    exact = qn.mva(net, N)
    r = qn.simulate(net, N, seed=8, replications=10, run_length=120.0, warmup=2.0)
    near(r.throughput[0], r.throughput_halfwidth[0], exact.throughput[-1])
    near(r.queue_length[0], r.queue_length_halfwidth[0], exact.queue_length[-1], width=0.05)


@pytest.mark.parametrize("law", [Deterministic(), Lognormal(2.0), "exponential"])
def test_open_mg1_ps_response_is_insensitive(law):
    lam, S = 70.0, 0.01  # rho = 0.7: R = S / (1 - rho) for any service law
    net = qn.Network([qn.Station("cpu", S, discipline="PS", service=law)])
    r = qn.simulate(net, arrival_rate=lam, seed=2, replications=10, run_length=600.0)
    near(r.response_time[0], r.response_time_halfwidth[0], S / (1 - lam * S), width=0.05)
    near(r.queue_length[0, 0], r.queue_length_halfwidth[0, 0], lam * S / (1 - lam * S), width=0.05)
    near(r.utilization[0, 0], r.utilization_halfwidth[0, 0], lam * S)


def test_open_multiserver_ps_is_the_mmm_birth_death_process():
    # m servers shared equally: total rate min(n, m) / S, the M/M/m chain's mean for any law
    lam, S, m = 150.0, 0.02, 4
    a = lam * S
    from math import factorial

    top = a**m / factorial(m) / (1 - a / m)
    pw = top / (sum(a**j / factorial(j) for j in range(m)) + top)
    exact_L = pw * (a / m) / (1 - a / m) + a
    net = qn.Network([qn.Station("pool", S, discipline="PS", servers=m, service="deterministic")])
    r = qn.simulate(net, arrival_rate=lam, seed=4, replications=10, run_length=300.0)
    near(r.queue_length[0, 0], r.queue_length_halfwidth[0, 0], exact_L)
    near(r.utilization[0, 0], r.utilization_halfwidth[0, 0], a / m)


def _same(a, b) -> bool:
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            if x.tobytes() != y.tobytes():
                return False
        elif x != y:
            return False
    return True


def test_every_discipline_reproduces_bit_for_bit():
    classes = [
        qn.ClosedClass("a", N=3, think_time=0.01, priority=1),
        qn.OpenClass("o", arrival_rate=30.0, priority=0),
    ]
    net = qn.Network(
        (
            qn.Station("ps", {"a": 0.004, "o": 0.006}, discipline="PS", servers=2, capacity=5),
            qn.Station("lcfs", {"a": 0.003, "o": 0.002}, discipline="LCFS-PR", scv=0.5),
            qn.Station("hol", {"a": 0.002, "o": 0.003}, discipline="HOL", servers=2),
            qn.Station("prio", {"a": 0.003, "o": 0.002}, discipline="PRIO-PR", capacity=3),
        ),
        classes=classes,
    )
    kw = dict(seed=77, replications=3, run_length=20.0, warmup=1.0)
    a, b = qn.simulate(net, **kw), qn.simulate(net, **kw)
    assert _same(a, b)
    assert not _same(a, qn.simulate(net, **(kw | {"seed": 78})))


def test_lcfs_pr_with_several_servers_is_refused():
    net = qn.Network([qn.Station("log", "3 ms", discipline="LCFS-PR", servers=2)])
    with pytest.raises(qn.InvalidModelError, match=r"Station 'log': LCFS-PR with servers=2"):
        qn.simulate(net, 3, seed=1)
