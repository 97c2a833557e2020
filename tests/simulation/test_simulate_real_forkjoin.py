"""The simulator and the analytic fork-join solver on the same L1 ForkJoin element: they
agree where both are exact (one request, a full join), and each refuses the k-of-n join
semantics it does not model (cancelling vs stragglers) instead of answering for another
system."""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError, InvalidTypeError
from tests._tol import closed_form

D = 0.01  # seconds per member request


def stripe(k=None, cancel=True, n=4):
    return qn.ForkJoin("stripe", [qn.Station(f"m{i}", D) for i in range(n)], k=k, cancel=cancel)


def test_one_request_full_join_is_d_h_n_in_both():
    net = qn.Network([stripe()])
    h4 = 1 + 1 / 2 + 1 / 3 + 1 / 4
    assert qn.fork_join(net, 1).response_time[0] == pytest.approx(D * h4, rel=closed_form(10))
    sim = qn.simulate(net, N=1, run_length=400.0, warmup=2.0, replications=10, seed=3)
    half = float(np.ravel(sim.response_time_halfwidth)[0])
    r = float(np.ravel(sim.response_time)[0])
    assert abs(r - D * h4) <= 3 * half and half < 0.02 * r


def test_each_solver_refuses_the_k_of_n_semantics_it_does_not_model():
    with pytest.raises(InvalidModelError, match="cancel=False.*simulate"):
        qn.fork_join(qn.Network([stripe(k=2, cancel=False)]), 3)
    with pytest.raises(InvalidModelError, match="cancel=True.*stragglers"):
        qn.simulate(qn.Network([stripe(k=2, cancel=True)]), N=1, run_length=1.0, warmup=0.1)
    # a full join has no stragglers: both take it, whatever cancel says
    qn.fork_join(qn.Network([stripe(cancel=False)]), 2)
    qn.simulate(qn.Network([stripe(cancel=True)]), N=1, run_length=1.0, warmup=0.1, seed=1)
    with pytest.raises(InvalidTypeError, match="cancel must be True or False"):
        stripe(cancel="yes")
