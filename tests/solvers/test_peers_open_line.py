"""Peer cross-check of mixed networks against line-solver's ``pfqn_mvamx`` (exact MVA for
mixed open/closed single-server networks), 60 random networks with think times (which
Octave's ``qnmix`` does not take), to 1e-9 relative: X_c, Q_ck, R_ck."""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from tests._nets import mixed_net

from .._ci import IN_CI

pytestmark = pytest.mark.peer

N_CASES = 60


def _need_line_solver():
    try:
        from line_solver.api.pfqn.mixed import pfqn_mvamx
    except Exception as exc:  # noqa: BLE001 - any import failure means "peer missing"
        reason = f"line-solver is not importable ({exc}); pip install line-solver"
        if IN_CI:
            pytest.fail(f"peer missing under CI: {reason}")
        pytest.skip(reason)
    return pfqn_mvamx


def _case(i):
    rng = np.random.default_rng(20_274_000 + i)
    C, K = int(rng.integers(2, 5)), int(rng.integers(1, 6))
    is_open = rng.random(C) < 0.5
    is_open[0], is_open[1] = False, True
    D = 10.0 ** rng.uniform(-3.0, -1.0, size=(C, K))
    N = np.where(is_open, 0, rng.integers(1, 6, size=C))
    Z = np.where(is_open, 0.0, rng.uniform(0.0, 0.5, size=C))
    lam = np.where(is_open, rng.uniform(0.2, 1.0, size=C), 0.0)
    lam = lam * rng.uniform(0.05, 0.9) / (lam @ D).max()
    # PS where the classes' demands differ: the product-form model pfqn_mvamx solves
    return mixed_net(D, is_open, lam, N, Z)


def test_mixed_matches_line_solver_pfqn_mvamx():
    pfqn_mvamx = _need_line_solver()
    worst = 0.0
    cases = [_case(i) for i in range(N_CASES)]
    assert sum(bool((c.think_time > 0).any()) for c in cases) >= 50
    for i, net in enumerate(cases):
        ours = qn.mixed_network(net)
        Ninf = np.where(net.is_open, np.inf, net.population).astype(float)
        X, Q, _U, R, _lG = pfqn_mvamx(net.arrival_rate, net.demands.T, Ninf, net.think_time)
        for mine, theirs in (
            (ours.throughput, np.asarray(X).ravel()),
            (ours.queue_length, np.asarray(Q).T),
            (ours.residence_time, np.asarray(R).T),
        ):
            # both sides solve the same mixed-network equations in double precision:
            # measured at most 6.3e-16 (3 ulp); bound 64 ulp = 1.4e-14 (it was 1e-9)
            np.testing.assert_allclose(
                mine, theirs, rtol=64 * np.finfo(float).eps, err_msg=f"case {i}"
            )
            worst = max(worst, float(np.max(np.abs(mine - theirs) / np.abs(theirs))))
    print(f"pfqn_mvamx: worst relative difference {worst:.3g}")


def test_general_load_dependent_matches_line_solver_pfqn_mvald():
    """line-solver's exact load-dependent MVA (``pfqn_mvald``, rates mu[k, n-1] at n jobs)
    on the 60 networks of the ``qncsmvald`` cross-check: X and Q_k at n = N to 1e-9."""
    _need_line_solver()
    from line_solver.api.pfqn.mvald import pfqn_mvald

    from qnmodel.solvers.mva_ld_general import mva_ld_general
    from tests.solvers.test_peers_open_octave import N_CASES as N_LD
    from tests.solvers.test_peers_open_octave import _ld_case, _ld_net

    worst = 0.0
    for i in range(N_LD):
        c = _ld_case(i)
        N = c["N"]
        j = np.arange(1, N + 1)
        mu = np.array(
            [
                j
                if kind == "delay"
                else (np.ones(N) if r is None else r[np.minimum(j, r.size) - 1])
                for kind, r in zip(c["kinds"], c["rm"], strict=True)
            ],
            dtype=float,
        )
        X, Q, *_ = pfqn_mvald(c["D"][:, None], np.array([N]), np.array([c["Z"]]), mu)
        ours = mva_ld_general(_ld_net(c), N, keep="last", rate_multipliers=c["rm"])
        for mine, theirs in ((ours.throughput, np.ravel(X)[:1]), (ours.queue_length[0], Q[:, 0])):
            np.testing.assert_allclose(mine, theirs, rtol=1e-9, err_msg=f"case {i}")
            worst = max(worst, float(np.max(np.abs(mine - theirs) / np.abs(theirs))))
    print(f"pfqn_mvald: worst relative difference {worst:.3g}")
