"""The cited reference cases of the network kernels (``data/reference/*.json``), each solved
by its kernel and compared within the case's tolerance."""

from __future__ import annotations

import json

import numpy as np
import pytest

from qnmodel.solvers import (
    bounds_geometric,
    mva_chains,
    mva_multiclass_ld_exact,
    normconst_convolution,
    visits_closed,
)
from qnmodel.solvers.mva_blocking import mvablo
from tests.reference import REFERENCE_DIR


def _case(case_id):
    return json.loads((REFERENCE_DIR / f"{case_id}.json").read_text(encoding="utf-8"))


def _close(actual, expected, tol):
    np.testing.assert_allclose(actual, expected, rtol=tol["rel"], atol=tol["abs"])


def test_bolch1998_ex8_1_convolution():
    c = _case("bolch1998_ex8_1_convolution")
    i, e = c["inputs"], c["expected"]
    V = np.array(i["visits"])
    r = normconst_convolution(i["service_times"], i["N"], servers=i["servers"], visits=V)
    _close(r.normalizing_constant, e["normalizing_constant"], c["tolerance"])
    _close(r.throughput * V, e["station_throughput"], c["tolerance"])
    _close(r.queue_length, e["queue_length"], c["tolerance"])
    _close(r.residence_time / V, e["per_visit_response_time"], c["tolerance"])


def test_bolch1998_ex9_5_multiclass_multiserver():
    c = _case("bolch1998_ex9_5_multiclass_multiserver")
    i, e = c["inputs"], c["expected"]
    r = mva_multiclass_ld_exact(
        i["service_times"], i["N"], delay=i["delay"], servers=i["servers"], visits=i["visits"]
    )
    _close(r.queue_length, e["queue_length"], c["tolerance"])
    _close(r.throughput, e["throughput"], c["tolerance"])  # visits to station 1 are 1


def test_schwetman1982_fig9_class_switching():
    c = _case("schwetman1982_fig9_class_switching")
    i, e = c["inputs"], c["expected"]
    P = np.zeros((2, 3, 2, 3))
    for r_, k, s, j, p in i["routing_entries"]:
        P[int(r_), int(k), int(s), int(j)] = p
    v = visits_closed(P)
    res = mva_chains(i["service_times"], i["N"], v.chains, visits=v.visits)
    V = v.visits
    _close(res.residence_time / V, e["per_visit_response_time"], c["tolerance"])
    _close(res.throughput[:, None] * V, e["station_throughput"], c["tolerance"])
    _close(res.queue_length, e["queue_length"], c["tolerance"])
    _close(res.utilization, e["utilization"], c["tolerance"])


def test_akyildiz1988_example2_mvablo():
    c = _case("akyildiz1988_example2_mvablo")
    i = c["inputs"]
    r = mvablo(i["N"], i["service_times"], i["capacity"], i["routing"])
    _close(r.response_time_per_visit, c["expected"]["response_time_per_visit"], c["tolerance"])


@pytest.mark.parametrize("side", ["throughput_lower", "throughput_upper"])
def test_casale2008_table_iv_geometric(side):
    c = _case("casale2008_table_iv_geometric")
    i, e = c["inputs"], c["expected"]
    b = bounds_geometric(i["demands"], i["N"])
    _close(getattr(b, side)[np.array(e["n"]) - 1], e[side], c["tolerance"])
