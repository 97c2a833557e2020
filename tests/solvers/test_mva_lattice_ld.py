"""Exact multi-class MVA with multi-server and load-dependent stations.

Octave's ``qncmmva`` blocks without class switching and the ``qnsolve`` blocks with
multi-server stations, translated by hand (Octave's 1-based stations are ours minus one;
``m(k) < 1`` is our ``delay``; Octave's R is per visit, ours R_ck per cycle, so R = R_ck / V);
an exact product-form oracle by state enumeration; invariants; a peer batch.

The blocks with class switching (``qncmmva(N, S, P, ...)``) are in ``test_mva_chains.py``.
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from qnmodel.errors import InvalidModelError, InvalidTypeError, LatticeTooLargeError
from qnmodel.model import Network
from qnmodel.results.closed import MultiClassResult
from qnmodel.solvers import (
    mva_load_dependent,
    mva_multiclass,
    mva_multiclass_ld_exact,
    normconst_convolution,
    seidmann_split,
    visits_closed,
)
from qnmodel.solvers.mva_ld_general import ld_seidmann_split
from tests._nets import pf_net
from tests._tol import closed_form, exact_mva

sys.path.insert(0, str(Path(__file__).parent))
from _octave_batch import EXACT, max_rel, octave_array, run_batch  # noqa: E402

f = mva_multiclass_ld_exact
# the lattice recursion: at most a few ulps per step and station, damped by the recursion
# (as exact MVA, tests/_tol.exact_mva), against oracles summing the same positive terms
LATTICE = 1e-13


def _check_laws(r, N, Z):
    """Little's law per station and per cycle, utilisation law, population per class."""
    X, R = r.throughput, r.residence_time
    np.testing.assert_allclose(r.queue_length, X[:, None] * R, rtol=closed_form(2))
    np.testing.assert_allclose(r.response_time, R.sum(axis=1), rtol=closed_form(R.shape[1]))
    live = N > 0
    np.testing.assert_allclose(
        r.queue_length[live].sum(axis=1) + X[live] * Z[live], N[live], rtol=LATTICE
    )
    np.testing.assert_allclose(
        r.utilization, X[:, None] * r.demands / r.peak_rate[None, :], rtol=closed_form(2)
    )


# ---------------------------------------------------------------------------------------
# Octave qncmmva blocks (no class switching)
# ---------------------------------------------------------------------------------------


def test_qncmmva_block1_errors():
    S = np.array([[1, 1, 2], [1, 1, 1]])
    V = np.ones((2, 3))
    with pytest.raises(TypeError):  # fail("qncmmva(N)"): the demands are missing
        f([1, 1])
    with pytest.raises(InvalidModelError, match="station 2 has 2 servers .FCFS. and class-depend"):
        f(S, [1, 1], servers=[1, 1, 2], visits=V)
    with pytest.raises(InvalidModelError, match="at least one value > 0 for each class"):
        f([[0, 0, 0], [1, 1, 1]], [1, 1], servers=[1, 1, 2], visits=V)
    with pytest.raises(InvalidModelError, match="size mismatch"):
        f([[1, 2, 3], [1, 2, 3]], [1, 1], visits=np.zeros((3, 2, 3)))
    with pytest.raises(InvalidModelError, match=r"population\[0\] must be an integer >= 0"):
        f([[1, 2], [3, 4]], [0.3, 1])
    with pytest.raises(InvalidModelError, match=r"population\[0\] must be an integer >= 0"):
        f([[1, 2], [3, 4]], [-1, 0])


@pytest.mark.parametrize("servers", [None, [2, 2, 2]])
def test_qncmmva_blocks2_3_empty_population(servers):
    # Octave returns 0 for every field; we too for X, Q, U, and for R the residence time an
    # added job would see (the arrival theorem's convention, as mva_multiclass): D / r(1).
    S = np.ones((2, 3))
    r = f(S, [0, 0], servers=servers)
    assert not r.throughput.any() and not r.queue_length.any() and not r.utilization.any()
    np.testing.assert_array_equal(r.residence_time, S)


def test_qncmmva_block4_lazowska_p142():
    S = np.array([[1 / 10, 1 / 3], [2 / 5, 1]])
    V = np.array([[10, 9], [5, 4]])
    r = f(S, [1, 1], visits=V)
    np.testing.assert_allclose(r.queue_length, [[4 / 19, 15 / 19], [5 / 19, 14 / 19]], rtol=LATTICE)
    np.testing.assert_allclose(r.residence_time, [[4 / 3, 5], [5 / 2, 7]], rtol=LATTICE)
    np.testing.assert_allclose(r.throughput, [3 / 19, 2 / 19], rtol=LATTICE)
    assert (r.utilization <= 1).all()


def test_qncmmva_block5_bolch_example_8_3_one_class():
    S, V = np.array([0.02, 0.2, 0.4, 0.6]), np.array([1, 0.4, 0.2, 0.1])
    r = f([S], [6], visits=[V])
    np.testing.assert_allclose(r.queue_length[0], [0.244, 2.261, 2.261, 1.234], atol=1e-3)
    np.testing.assert_allclose(r.residence_time[0] / V, [0.025, 0.570, 1.140, 1.244], atol=1e-3)
    np.testing.assert_allclose(r.throughput[0] * V, [9.920, 3.968, 1.984, 0.992], atol=1e-3)
    np.testing.assert_allclose(r.utilization[0], [0.198, 0.794, 0.794, 0.595], atol=1e-3)


SCHW_S = np.array([[1, 0, 0.025], [0, 15, 0.5]])
SCHW_V = np.array([[1, 0, 1], [0, 1, 1]])


def test_qncmmva_block6_schwetman_table3():
    r = f(SCHW_S, [2, 1], delay=[True, True, False], visits=SCHW_V)
    Rv = r.residence_time / np.where(SCHW_V > 0, SCHW_V, 1)
    assert Rv[0, 0] == pytest.approx(1, abs=1e-3) and Rv[1, 1] == pytest.approx(15, abs=1e-3)
    assert Rv[0, 2] == pytest.approx(0.027, abs=1e-3) and Rv[1, 2] == pytest.approx(0.525, abs=1e-3)
    Xk = r.throughput[:, None] * SCHW_V  # Octave's X(1,1) + X(1,2), X(2,1) + X(2,2)
    assert Xk[0, :2].sum() == pytest.approx(1.949, abs=1e-3)
    assert Xk[1, :2].sum() == pytest.approx(0.064, abs=1e-3)
    np.testing.assert_allclose(r.queue_length.sum(axis=0), [1.949, 0.966, 0.085], atol=1e-3)
    assert (r.utilization[:, 2] <= 1).all()


@pytest.mark.parametrize("block", [7, 13])
def test_qncmmva_blocks7_13_schwetman_table5(block):
    # blocks 7 and 13 are the same case (Octave repeats it)
    r = f(SCHW_S, [15, 5], delay=[True, True, False], visits=SCHW_V)
    np.testing.assert_allclose(r.utilization, [[14.323, 0, 0.358], [0, 4.707, 0.157]], atol=1e-3)
    np.testing.assert_allclose(
        r.throughput[:, None] * SCHW_V, [[14.323, 0, 14.323], [0, 0.314, 0.314]], atol=1e-3
    )
    np.testing.assert_allclose(r.queue_length, [[14.323, 0, 0.677], [0, 4.707, 0.293]], atol=1e-3)
    Rv = r.residence_time / np.where(SCHW_V > 0, SCHW_V, 1)
    np.testing.assert_allclose(Rv, [[1, 0, 0.047], [0, 15, 0.934]], atol=1e-3)


BOLCH95_S = np.array([[0.2, 0.4, 1], [0.2, 0.6, 2]])
BOLCH95_V = np.array([[1, 0.6, 0.4], [1, 0.3, 0.7]])
BOLCH95_Q = [[0.428, 0.726, 0.845], [0.108, 0.158, 0.734]]


def test_qncmmva_block8_bolch_example_9_5_two_servers():
    # the multi-server block ("test8"): m = [2 1 -1]. Seidmann's split (what mva_multiclass
    # answered before, and amva still does) is off here; the marginal-probability recursion is
    # exact, and mva_multiclass now runs it.
    r = f(BOLCH95_S, [2, 1], servers=[2, 1, 1], delay=[False, False, True], visits=BOLCH95_V)
    np.testing.assert_allclose(r.queue_length, BOLCH95_Q, atol=1e-3)
    assert r.throughput[0] == pytest.approx(2.113, abs=1e-3)
    assert r.throughput[1] == pytest.approx(0.524, abs=1e-3)
    assert (r.utilization <= 1).all()
    np.testing.assert_allclose(r.queue_length, r.throughput[:, None] * r.residence_time, rtol=1e-15)
    kinds = ["queue", "queue", "delay"]
    net = pf_net(BOLCH95_S * BOLCH95_V, [2, 1], kinds=kinds, servers=[2, 1, 1])
    m = mva_multiclass(net)
    assert m.method == "mva.multiclass.ld"
    np.testing.assert_allclose(m.queue_length, r.queue_length, rtol=LATTICE)
    D2, delay2, owner = seidmann_split(net.demands, net.is_delay, net.servers)
    split = mva_multiclass(pf_net(D2, [2, 1], kinds=["delay" if d else "queue" for d in delay2]))
    Q = np.array(split.queue_length[:, :3])
    np.add.at(Q, (slice(None), owner), split.queue_length[:, 3:])
    off = np.abs(Q / r.queue_length - 1).max()
    assert off > 0.05  # what qnmodel answered before (Seidmann, 8.3 %)


def test_qncmmva_block9_empty_class_equals_single_class():
    K = 4
    S = np.vstack([np.linspace(1, 2, K), np.linspace(2, 3, K)])
    V = np.vstack([np.linspace(4, 1, K), np.linspace(6, 3, K)])
    r = f(S, [10, 0], visits=V)
    one = mva_multiclass(pf_net(S[:1] * V[:1], [10]))
    np.testing.assert_allclose(r.queue_length[0], one.queue_length[0], rtol=LATTICE)
    np.testing.assert_allclose(r.throughput[0], one.throughput[0], rtol=LATTICE)
    np.testing.assert_allclose(r.utilization[0], one.utilization[0], rtol=LATTICE)


def test_qncmmva_block10_schwetman_5b_think_times():
    r = f([[0.025], [0.5]], [15, 5], think_time=[1, 15])
    np.testing.assert_allclose(r.utilization[:, 0], [0.358, 0.157], atol=1e-3)
    np.testing.assert_allclose(r.queue_length[:, 0], [0.677, 0.293], atol=1e-3)
    np.testing.assert_allclose(r.throughput, [14.323, 0.314], atol=1e-3)
    np.testing.assert_allclose(r.residence_time[:, 0], [0.047, 0.934], atol=1e-3)


def test_qncmmva_block11_schwetman_fig6_visits_from_routing():
    C, K = 2, 6
    P = np.zeros((C, K, C, K))
    P[0, 0, 0, 1] = P[1, 0, 1, 1] = 1
    P[0, 1, 0, 2:] = P[1, 1, 1, 2:] = 0.25
    P[0, 2:, 0, 0], P[0, 2:, 0, 1] = 0.9, 0.1
    P[1, 2:, 1, 0], P[1, 2:, 1, 1] = 0.05, 0.95
    S = np.array(
        [[5.0, 0.010, 0.035, 0.035, 0.035, 0.035], [10.0, 0.100, 0.035, 0.035, 0.035, 0.035]]
    )
    V = visits_closed(P).visits  # one chain per class: V[c, 0] = 1, as Octave's
    r = f(S, [40, 4], delay=[True] + [False] * 5, visits=V)
    # values computed by Octave's authors with JMVA
    np.testing.assert_allclose(
        r.utilization,
        [
            [39.457941, 0.087684, 0.076724, 0.076724, 0.076724, 0.076724],
            [2.772704, 0.554541, 0.048522, 0.048522, 0.048522, 0.048522],
        ],
        atol=1e-5,
    )
    np.testing.assert_allclose(
        r.residence_time,
        [
            [5, 0.024363, 0.011081, 0.011081, 0.011081, 0.011081],
            [10, 3.636155, 0.197549, 0.197549, 0.197549, 0.197549],
        ],
        atol=1e-5,
    )
    np.testing.assert_allclose(r.queue_length[:, 0], [39.457941, 2.772704], atol=1e-5)
    np.testing.assert_allclose(r.queue_length[:, 1], [0.192262, 1.008198], atol=1e-5)
    np.testing.assert_allclose(r.queue_length[:, 2], [0.087449, 0.054775], atol=1e-5)
    Xk = r.throughput[:, None] * V
    np.testing.assert_allclose(Xk[:, 0], [7.891588, 0.277270], atol=1e-5)
    np.testing.assert_allclose(Xk[:, 1], [8.768431, 5.545407], atol=1e-5)
    np.testing.assert_allclose(Xk[:, 2], [2.192108, 1.386352], atol=1e-5)
    for k in (3, 4, 5):
        np.testing.assert_allclose(r.queue_length[:, k], r.queue_length[:, 2], rtol=1e-15)


def test_qncmmva_block16_schwetman_fig7_jmt_values():
    V = np.array([[1, 0.45, 0.5, 0], [1, 0, 0.5, 0.49]])
    S = np.array([[0.01, 0.09, 0.10, 0.08], [0.05, 0.09, 0.10, 0.08]])
    r = f(S, [3, 2], visits=V)
    np.testing.assert_allclose(
        r.utilization, [[0.1215, 0.4921, 0.6075, 0], [0.3433, 0, 0.3433, 0.2691]], atol=1e-4
    )
    np.testing.assert_allclose(
        r.queue_length, [[0.2131, 0.7539, 2.0328, 0], [0.5011, 0, 1.1839, 0.3149]], atol=1e-4
    )
    np.testing.assert_allclose(
        r.residence_time, [[0.0175, 0.0620, 0.1672, 0], [0.0729, 0, 0.1724, 0.0458]], atol=1e-4
    )
    np.testing.assert_allclose(
        r.throughput[:, None] * V,
        [[12.1517, 5.4682, 6.0758, 0], [6.8669, 0, 3.4334, 3.3648]],
        atol=1e-4,
    )


def test_qncmmva_block17_paolieri_symmetric_classes():
    S = np.array([[0.2, 0.02, 0, 0], [0.2, 0, 0.02, 0], [0.2, 0, 0, 0.02]])
    V = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]])
    r = f(S, [1, 1, 1], visits=V)
    assert r.queue_length[0, 1] == pytest.approx(r.queue_length[1, 2], rel=1e-15)
    assert r.queue_length[1, 2] == pytest.approx(r.queue_length[2, 3], rel=1e-15)
    assert np.ptp(r.queue_length[:, 0]) < 1e-15


def test_qncmmva_demo1_population_mix_jmt():
    # Casale and Serazzi, ICPE 2011 (JMT): 100 jobs, the class-1 share beta swept
    S = np.array([[20, 80, 31, 14, 23, 12], [90, 30, 33, 20, 14, 7]], dtype=float)
    xs = []
    for b in np.linspace(0.1, 0.9, 10):
        N = [math.floor(b * 100), 100 - math.floor(b * 100)]
        r = f(S, N)
        _check_laws(r, np.array(N), np.zeros(2))
        xs.append(r.throughput)
    xs = np.array(xs)
    assert np.all(np.diff(xs[:, 0]) > 0) and np.all(np.diff(xs[:, 1]) < 0)
    # the plot's "system" curve: X1 + X2, R = 100 / (X1 + X2)
    assert np.all(xs.sum(axis=1) <= 1 / 33 + 1e-12)  # no station serves more than 1/min S


def test_qncmmva_demo2_visits_from_routing_reference_3():
    P = np.zeros((2, 3, 2, 3))
    P[0, 0, 0, 2] = P[0, 2, 0, 0] = 1
    P[1, 1, 1, 2] = P[1, 2, 1, 1] = 1
    V = visits_closed(P, [2, 2]).visits
    np.testing.assert_array_equal(V, SCHW_V)
    r = f(SCHW_S, [15, 5], delay=[True, True, False], visits=V)
    np.testing.assert_allclose(r.queue_length[:, 2], [0.677, 0.293], atol=1e-3)


# ---------------------------------------------------------------------------------------
# Octave qnsolve blocks with multi-server and load-dependent stations
# ---------------------------------------------------------------------------------------

EX87_V = np.array([1, 0.5, 0.5, 1])
EX87_S = np.array([0.5, 1 / 1.667, 1 / 1.25, 1.0])


@pytest.mark.parametrize("block", [1, 2])
def test_qnsolve_blocks1_2_bolch_example_8_7(block):
    # block 1: station 3 is "m/m/m-fcfs" with S(j) = 1/j (j <= 3 = N): rates 1, 2, 3;
    # block 2: the same station as "-/g/inf"
    if block == 1:
        kw = {"rates": [None, None, None, [1, 2, 3]]}
    else:
        kw = {"delay": [0, 0, 0, 1]}
    servers = [2, 1, 1, 1]
    r = f([EX87_S], [3], servers=servers, visits=[EX87_V], **kw)
    np.testing.assert_allclose(r.queue_length[0], [0.624, 0.473, 0.686, 1.217], atol=1e-3)
    np.testing.assert_allclose(r.residence_time[0] / EX87_V, [0.512, 0.776, 1.127, 1], atol=1e-3)


@pytest.mark.parametrize("block", [3, 4])
def test_qnsolve_blocks3_4_bolch_example_8_4(block):
    S = np.array([0.5, 0.6, 0.8, 1.0])
    if block == 3:
        r = f([S], [3], servers=[2, 1, 1, 1], delay=[0, 0, 0, 1], visits=[EX87_V])
        np.testing.assert_allclose(r.utilization[0, :3], [0.304, 0.365, 0.487], atol=1e-3)
    else:  # station 0 given as S(j) = [.5 .25 .25] (rates 1, 2, 2), station 3 as S(j) = 1/j
        r = f([S], [3], rates=[[1, 2, 2], None, None, [1, 2, 3]], visits=[EX87_V])
        # Octave: "U(1) is computed differently" (busy probability); compare U(2:3) only
        np.testing.assert_allclose(r.utilization[0, 1:3], [0.365, 0.487], atol=1e-3)
    np.testing.assert_allclose(r.throughput[0] * EX87_V, [1.218, 0.609, 0.609, 1.218], atol=1e-3)


@pytest.mark.parametrize("block", [7, 8, "demo"])
def test_qnsolve_blocks7_8_demo_bolch_example_9_5(block):
    # block 7: a 2-server FCFS station; block 8 and the demo: the same station as the
    # load-dependent S(j) = [0.2 0.1 0.1] for both classes, i.e. rates 1, 2, 2
    kw = {"servers": [2, 1, 1]} if block == 7 else {"rates": [[1, 2, 2], None, None]}
    r = f(BOLCH95_S, [2, 1], delay=[0, 0, 1], visits=BOLCH95_V, **kw)
    np.testing.assert_allclose(r.queue_length, BOLCH95_Q, atol=1e-3)
    assert r.throughput[0] == pytest.approx(2.113, abs=1e-3)
    assert r.throughput[1] == pytest.approx(0.524, abs=1e-3)
    assert (r.utilization[:, :2] <= 1).all()


# ---------------------------------------------------------------------------------------
# Exact oracle: the product form summed over every state
# ---------------------------------------------------------------------------------------


def _compositions(n, parts):
    for cut in itertools.combinations(range(n + parts - 1), parts - 1):
        prev, out = -1, []
        for c in cut:
            out.append(c - prev - 1)
            prev = c
        out.append(n + parts - 1 - prev - 1)
        yield out


def _oracle(D, N, Z, delay, curves):
    """Q (C, K) and X (C,) from P(n) ∝ prod_c Z_c^z_c / z_c! prod_k f_k(n_k.) (BCMP)."""
    C, K = D.shape
    per_class = [list(_compositions(int(N[c]), K + 1)) for c in range(C)]
    tot, Q, T = 0.0, np.zeros((C, K)), np.zeros(C)
    for combo in itertools.product(*per_class):
        n = np.array(combo, dtype=float)  # (C, K + 1): stations, then thinking
        w = 1.0
        for c in range(C):
            z = int(n[c, K])
            w *= Z[c] ** z / math.factorial(z) if z else 1.0
        for k in range(K):
            col = n[:, k].astype(int)
            if delay[k]:
                for c in range(C):
                    w *= D[c, k] ** col[c] / math.factorial(col[c])
                continue
            nk = int(col.sum())
            w *= math.factorial(nk) / math.prod(math.factorial(x) for x in col)
            w *= math.prod(D[c, k] ** col[c] for c in range(C))
            r = curves[k]
            for j in range(1, nk + 1):
                w /= 1.0 if r is None else r[min(j, len(r)) - 1]
        tot += w
        Q += w * n[:, :K]
        T += w * n[:, K]
    Q /= tot
    R = None
    with np.errstate(invalid="ignore", divide="ignore"):
        X = np.where(Z > 0, (T / tot) / np.where(Z > 0, Z, 1), np.nan)
    return Q, X, R


def _random_ld(seed, with_z=True):
    rng = np.random.default_rng(seed)
    C, K = int(rng.integers(1, 4)), int(rng.integers(2, 5))
    D = rng.uniform(0.05, 1.0, (C, K)) * (rng.random((C, K)) > 0.15)
    D[:, 0] += 0.05
    N = rng.integers(0, 4, C)
    N[0] = max(int(N[0]), 1)
    Z = rng.uniform(0.1, 2.0, C) if with_z else np.zeros(C)
    delay = rng.random(K) < 0.2
    delay[0] = False
    curves = []
    for k in range(K):
        u = rng.random()
        if delay[k] or u < 0.35:
            curves.append(None)
        elif u < 0.7:
            curves.append(list(np.arange(1.0, int(rng.integers(2, 4)) + 1)))
        else:  # a measured-looking curve, non-decreasing or not
            curves.append(list(rng.uniform(0.5, 3.0, int(rng.integers(2, 5)))))
    return D, N, Z, delay, curves


@pytest.mark.parametrize("seed", range(40))
def test_matches_product_form_enumeration(seed):
    D, N, Z, delay, curves = _random_ld(seed)
    r = f(D, N, think_time=Z, delay=delay, rates=curves)
    Q, X, _ = _oracle(D, N, Z, delay, curves)
    np.testing.assert_allclose(r.queue_length, Q, rtol=1e-12, atol=1e-15)
    live = N > 0
    np.testing.assert_allclose(r.throughput[live], X[live], rtol=1e-12)
    _check_laws(r, N, Z)


def test_several_load_dependent_stations_without_think_time():
    D = np.array([[0.3, 0.2, 0.5, 0.1], [0.1, 0.4, 0.2, 0.3]])
    curves = [[1, 2], [1, 1.5, 1.8], [1, 2, 3], None]
    N = np.array([3, 2])
    r = f(D, N, rates=curves)
    Q, _, _ = _oracle(D, N, np.zeros(2), np.zeros(4, bool), curves)
    np.testing.assert_allclose(r.queue_length, Q, rtol=1e-12)
    assert np.all(np.isfinite(r.idle_probability[:3])) and np.isnan(r.idle_probability[3])


def test_idle_probability_near_saturation_keeps_its_digits():
    # 2 servers nearly always busy: p(0) = 6e-217 at N = 80. 1 - sum_j p(j) (Octave's
    # qncmmva) would give 0 or noise; the complement ratio keeps full relative precision,
    # checked against the log-space convolution's marginal (normconst_convolution) and the
    # queue lengths against the single-class complement recursion (mva_load_dependent).
    r = f([[1.0, 1e-3]], [80], servers=[2, 1])
    conv = normconst_convolution([1.0, 1e-3], 80, servers=[2, 1])
    assert 0 < r.idle_probability[0] < 1e-200
    assert r.idle_probability[0] == pytest.approx(conv.marginal_probabilities[0, 0], rel=1e-12)
    one = mva_load_dependent(Network.from_demands([1.0, 1e-3], servers=[2, 1]), 80, keep="last")
    np.testing.assert_allclose(r.queue_length[0], one.queue_length[0], rtol=1e-12)


# ---------------------------------------------------------------------------------------
# One class, reductions, invariants
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("N", [1, 5, 60])
def test_one_class_equals_single_class_load_dependent_mva(N):
    D = [0.2, 0.05, 0.3, 0.7]
    net = Network.from_demands(
        D, think_time=0.4, servers=[3, 1, 2, 1], kinds=["queue"] * 3 + ["delay"]
    )
    one = mva_load_dependent(net, N, keep="last")
    r = f([D], [N], think_time=0.4, servers=[3, 1, 2, 1], delay=[0, 0, 0, 1])
    tol = 64 * exact_mva(4)
    np.testing.assert_allclose(r.throughput, one.throughput, rtol=tol)
    np.testing.assert_allclose(r.queue_length[0], one.queue_length[0], rtol=tol)
    np.testing.assert_allclose(r.residence_time[0], one.residence_time[0], rtol=tol)


def test_without_load_dependent_stations_equals_mva_multiclass():
    D = np.array([[0.02, 0.05, 0.3], [0.1, 0.01, 0.2]])
    a = f(D, [4, 3], think_time=[0.5, 1], delay=[0, 0, 1])
    b = mva_multiclass(pf_net(D, [4, 3], [0.5, 1], kinds=["queue", "queue", "delay"]))
    np.testing.assert_allclose(a.queue_length, b.queue_length, rtol=1e-15)
    np.testing.assert_allclose(a.residence_time, b.residence_time, rtol=1e-15)
    # a constant rate curve is a faster single server
    c = f(D * [[1, 1, 1]], [4, 3], think_time=[0.5, 1], delay=[0, 0, 1], rates=[[2, 2], None, None])
    d = f(D * [[0.5, 1, 1]], [4, 3], think_time=[0.5, 1], delay=[0, 0, 1])
    np.testing.assert_allclose(c.queue_length, d.queue_length, rtol=1e-15)


def test_empty_class_sees_arrival_queues():
    D = np.array([[0.3, 0.2], [0.1, 0.5]])
    r = f(D, [4, 0], servers=[2, 1])
    alone = f(D[:1], [4], servers=[2, 1])
    np.testing.assert_allclose(r.queue_length[0], alone.queue_length[0], rtol=1e-15)
    # arrival theorem: an added class-1 job at (4, 0) sees what the class-1 job of (4, 1)
    # sees on arrival, the marginals at (4, 0)
    one = f(D, [4, 1], servers=[2, 1])
    np.testing.assert_allclose(r.residence_time[1], one.residence_time[1], rtol=1e-13)


def test_seidmann_approximation_is_what_this_replaces():
    # the Seidmann-like split of a rate curve (ld_seidmann_split, which amva uses), solved
    # exactly, against the exact kernel
    D = BOLCH95_S * BOLCH95_V
    exact = f(D, [2, 1], rates=[[1, 2], None, None], delay=[0, 0, 1])
    rates = (np.array([1.0, 2.0]), None, None)
    D2, delay2, owner = ld_seidmann_split(D, np.array([False, False, True]), rates)
    split = mva_multiclass(pf_net(D2, [2, 1], kinds=["delay" if d else "queue" for d in delay2]))
    Q = np.array(split.queue_length[:, :3])
    np.add.at(Q, (slice(None), owner), split.queue_length[:, 3:])
    err = np.abs(Q / exact.queue_length - 1).max()
    assert 0.01 < err < 0.2


def test_refusals_and_memory_limit():
    with pytest.raises(InvalidModelError, match="population has 1 entries but demands has 2 rows"):
        f([[1, 2], [3, 4]], [1])
    with pytest.raises(InvalidModelError, match="think_time has 3 entries"):
        f([[1, 2], [3, 4]], [1, 1], think_time=[1, 2, 3])
    with pytest.raises(InvalidModelError, match="station 0 is a delay station and has servers"):
        f([[1, 2]], [1], delay=[1, 0], servers=[2, 1])
    with pytest.raises(InvalidModelError, match="station 0 is a delay station and has rates"):
        f([[1, 2]], [1], delay=[1, 0], rates=[[1, 2], None])
    with pytest.raises(InvalidModelError, match="has servers.0. = 2 and a rate curve"):
        f([[1, 2]], [1], servers=[2, 1], rates=[[1, 2], None])
    with pytest.raises(InvalidModelError, match="rates has 1 entries"):
        f([[1, 2]], [1], rates=[[1, 2]])
    with pytest.raises(InvalidModelError, match=r"rates\[0\]\[1\] must be finite and > 0"):
        f([[1, 2]], [1], rates=[[1, 0], None])
    with pytest.raises(InvalidTypeError, match="rates must be a sequence"):
        f([[1, 2]], [1], rates=3)
    with pytest.raises(InvalidModelError, match="delay must hold 2 flags"):
        f([[1, 2]], [1], delay=[1])
    with pytest.raises(InvalidTypeError, match="delay must hold booleans"):
        f([[1, 2]], [1], delay=[2, 0])
    with pytest.raises(InvalidModelError, match="servers has 1 entries"):
        f([[1, 2]], [1], servers=[2])
    with pytest.raises(InvalidTypeError, match="servers must be a sequence of 2 server counts"):
        f([[1, 2]], [1], servers=2)
    with pytest.raises(InvalidModelError, match=r"servers\[1\] must be an integer >= 1"):
        f([[1, 2]], [1], servers=[1, 0])
    with pytest.raises(InvalidTypeError, match="visits must be numbers"):
        f([[1, 2]], [1], visits="ones")
    with pytest.raises(InvalidTypeError, match="visits must be numbers"):
        f([[1, 2]], [1], visits=[["a", 1]])
    with pytest.raises(InvalidModelError, match=r"demands\[0, 1\] must be >= 0, got -2.0"):
        f([[1, -2]], [1])
    with pytest.raises(
        LatticeTooLargeError,
        match=r"population \[60, 60, 60\] .* 2 load-dependent ones .4 subnetworks. would need",
    ):
        f(np.ones((3, 3)), [60, 60, 60], servers=[2, 3, 1], max_memory="1 MiB")


def test_result_type_frame_repr():
    r = f(BOLCH95_S, [2, 1], servers=[2, 1, 1], delay=[0, 0, 1], visits=BOLCH95_V)
    assert isinstance(r, MultiClassResult) and r.method == "mva.multiclass.ld"
    assert r.servers.tolist() == [2, 1, 1] and r.peak_rate.tolist() == [2, 1, 1]
    assert r.is_delay.tolist() == [False, False, True]  # servers is 1 at a delay station
    assert len(r.to_frame("station")) == 6 and "MultiClassResult" in repr(r)
    with pytest.raises(ValueError):
        r.throughput[0] = 1.0


# ---------------------------------------------------------------------------------------
# Peer batch: qncmmva with multi-server stations, >= 50 random cases
# ---------------------------------------------------------------------------------------

N_PEER = 50


def _peer_case(i):
    rng = np.random.default_rng(41_000 + i)
    C, K = int(rng.integers(1, 4)), int(rng.integers(2, 6))
    m = rng.choice([1, 1, 2, 3, -1], size=K)
    m[0] = int(rng.integers(2, 4))
    S = rng.uniform(0.05, 1.0, (C, K))
    S[:, m > 1] = S[0, m > 1]  # FCFS multi-server: class-independent service times
    V = rng.uniform(0.2, 2.0, (C, K)) * (rng.random((C, K)) > 0.2)
    V[:, 0] = rng.uniform(0.5, 1.5, C)
    N = rng.integers(1, 5, C)
    Z = rng.uniform(0, 2, C) * (rng.random(C) < 0.5)
    return {"S": S, "V": V, "m": m, "N": N, "Z": Z}


PEER = [_peer_case(i) for i in range(N_PEER)]


@pytest.fixture(scope="module")
def octave_qncmmva():
    lines = []
    for i, c in enumerate(PEER):
        lines.append(
            f"[U R Q X] = qncmmva({octave_array(c['N'])}, {octave_array(c['S'])}, "
            f"{octave_array(c['V'])}, {octave_array(c['m'])}, {octave_array(c['Z'])});"
        )
        lines.append(
            f'emit("c{i}_U", U(:)); emit("c{i}_R", R(:)); emit("c{i}_Q", Q(:)); '
            f'emit("c{i}_X", X(:));'
        )
    return run_batch(lines)


@pytest.mark.peer
@pytest.mark.xdist_group("octave_queueing")  # one Octave run per module, one worker
def test_peer_qncmmva_multi_server(octave_qncmmva):
    worst = {"U": 0.0, "R": 0.0, "Q": 0.0, "X": 0.0}
    for i, c in enumerate(PEER):
        m = c["m"]
        r = f(
            c["S"], c["N"], think_time=c["Z"], delay=m < 1, servers=np.maximum(m, 1), visits=c["V"]
        )
        shape = c["S"].shape
        V = c["V"]
        ours = {
            "U": r.utilization,
            "R": np.where(V > 0, r.residence_time / np.where(V > 0, V, 1), 0.0),
            "Q": r.queue_length,
            "X": r.throughput[:, None] * V,
        }
        for key in worst:
            theirs = octave_qncmmva[f"c{i}_{key}"].reshape(shape, order="F")
            if key == "R":  # a per-visit time where the class never visits means nothing
                theirs = np.where(V > 0, theirs, 0.0)
            worst[key] = max(worst[key], max_rel(ours[key], theirs, floor=1e-300))
    print("qncmmva worst relative differences:", worst)
    assert max(worst.values()) <= EXACT, worst
