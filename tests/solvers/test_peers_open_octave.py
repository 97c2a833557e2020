"""Peer cross-checks of open, mixed and general load-dependent solvers against GNU Octave's
``queueing`` package (M. Marzolla), 60 random seeded networks each, to 1e-9 relative.

* ``qnos(lambda, S, V, m)`` (the package's current name of ``qnopensingle``): open
  single class, single- and multi-server (M/M/m) and delay stations, three arrival rates
  per network, against :func:`qnmodel.open_network`: U_k, R_k, Q_k.
* ``qnom(lambda, S, V, m)`` (formerly ``qnopenmulti``): open multi-class, single-server
  and delay stations, against :func:`qnmodel.open_network`. In queueing 1.2.7 ``qnom``
  computes the class throughputs as ``sum(lambda) * V`` (every class gets the total
  rate); the visits are therefore passed as V_ck = lambda_c / sum(lambda), which makes
  its X_ck = lambda_c, the intended value, with S_ck = D_ck.
* ``qnmix(lambda, N, S, V)`` (formerly ``qnmix``): mixed, single-server stations (its
  ``m`` argument must have one entry per class, so stations are all single-server),
  no think time, against :func:`qnmodel.mixed_network`: U, R, Q, X per class and station.
* ``qncsmvald(N, S, V, Z)`` with a general table S(k, n) = D_k / r_k(min(n, L_k)) against
  :func:`qnmodel.mva_ld_general`: X, Q_k, R_k at n = N, at moderate load (the peer's
  p(0) = 1 - sum loses digits near saturation).

Each test runs one Octave process for all its networks.
"""

from __future__ import annotations

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.solvers.mva_ld_general import mva_ld_general
from tests._nets import mixed_net
from tests.octave import octave_missing_reason, octave_vec, parse_tagged, run_octave

from .._ci import IN_CI

pytestmark = [pytest.mark.peer, pytest.mark.xdist_group("octave_queueing")]

N_CASES = 60
# Open, mixed and closed formulas in double precision on both sides: measured at most
# 2.4e-15 (11 ulp) over the 60 cases; bound 128 ulp = 2.8e-14 (it was 1e-9).
RTOL = 128 * np.finfo(float).eps
# The general load-dependent recursion goes through the marginal probabilities p(j | n), and
# Octave's qncsmvald computes p(0 | n) as 1 - sum_j p(j | n), which loses about
# eps / p(0 | n) near saturation: measured 8.5e-13; bound 1e-11 (it was 1e-9).
RTOL_LD = 1e-11

_PRELUDE = r"""1;
function emit(tag, v)
  printf("%s", tag); printf(" %.17g", v); printf("\n");
end
pkg load queueing
warning("off", "all");
"""


def _octave(script: str) -> dict[str, np.ndarray]:
    reason = octave_missing_reason("queueing")
    if reason is not None:
        msg = f"peer cross-check needs GNU Octave with 'queueing': {reason}"
        if IN_CI:
            pytest.fail(f"{msg} (CI=true: the peer must be installed)")
        pytest.skip(msg)
    return parse_tagged(run_octave(_PRELUDE + script, timeout=600))


def _mat(M) -> str:
    """An Octave matrix literal, rows separated by ';', 17 significant digits."""
    return "[" + "; ".join(octave_vec(r)[1:-1] for r in np.atleast_2d(M)) + "]"


def _worst(ours, theirs) -> float:
    ours, theirs = np.asarray(ours, float).ravel(), np.asarray(theirs, float).ravel()
    scale = np.maximum(np.abs(theirs), 1e-300)
    return float(np.max(np.abs(ours - theirs) / scale)) if ours.size else 0.0


# ---- open single class: qnos --------------------------------------------------------------


def _os_case(i):
    rng = np.random.default_rng(20_270_000 + i)
    K = int(rng.integers(1, 7))
    kinds, servers = [], []
    for _ in range(K):
        u = rng.random()
        kinds.append("delay" if u < 0.2 else "queue")
        servers.append(int(rng.integers(2, 9)) if 0.2 <= u < 0.55 else 1)
    if all(k == "delay" for k in kinds):
        kinds[0] = "queue"
    D = 10.0 ** rng.uniform(-3.0, -1.0, size=K)
    net = qn.Network.from_demands(D, kinds=kinds, servers=servers)
    lam_sat = qn.open_network(net, 0.0).saturation_arrival_rate
    return {"i": i, "net": net, "rates": lam_sat * np.sort(rng.uniform(0.05, 0.97, size=3))}


def test_open_single_class_matches_qnos():
    cases = [_os_case(i) for i in range(N_CASES)]
    assert sum(bool((c["net"].servers > 1).any()) for c in cases) >= 20
    assert sum(bool(c["net"].is_delay.any()) for c in cases) >= 15
    lines = []
    for c in cases:
        net = c["net"]
        m = np.where(net.is_delay, -1, net.servers)
        lines.append(f"S = {octave_vec(net.demands)}; m = {octave_vec(m)};")
        for p, lam in enumerate(c["rates"]):
            lines.append(f"[U R Q X] = qnos({lam:.17g}, S, ones(size(S)), m);")
            lines.append(f'emit("os{c["i"]}_{p}_U", U); emit("os{c["i"]}_{p}_R", R);')
            lines.append(f'emit("os{c["i"]}_{p}_Q", Q); emit("os{c["i"]}_{p}_X", X);')
    out = _octave("\n".join(lines))
    worst = 0.0
    for c in cases:
        res = qn.open_network(c["net"], c["rates"])
        for p in range(3):
            tag = f"os{c['i']}_{p}"
            for ours, key in (
                (res.utilization[p], "U"),
                (res.residence_time[p], "R"),
                (res.queue_length[p], "Q"),
                (np.full(c["net"].K, res.throughput[p]), "X"),
            ):
                np.testing.assert_allclose(ours, out[f"{tag}_{key}"], rtol=RTOL, err_msg=tag)
                worst = max(worst, _worst(ours, out[f"{tag}_{key}"]))
    print(f"qnos: worst relative difference {worst:.3g}")


# ---- open multi-class: qnom --------------------------------------------------------------------


def _multi(D, is_open, lam, N, kinds):
    """Product-form classes (PS where their demands differ, as Octave's formulas assume)."""
    return mixed_net(D, np.asarray(is_open, dtype=bool), lam, N, kinds=kinds)


def _om_case(i):
    rng = np.random.default_rng(20_271_000 + i)
    C, K = int(rng.integers(1, 5)), int(rng.integers(1, 7))
    kinds = ["delay" if rng.random() < 0.2 else "queue" for _ in range(K)]
    kinds[0] = "queue"
    D = 10.0 ** rng.uniform(-3.0, -1.0, size=(C, K))
    lam = rng.uniform(0.2, 1.0, size=C)
    load = (lam @ D)[[k == "queue" for k in kinds]].max()
    lam = lam * rng.uniform(0.05, 0.97) / load
    # qnom asserts sum_c U_ck < 1 at every station, delay stations included
    for k in np.flatnonzero([kd == "delay" for kd in kinds]):
        D[:, k] *= min(1.0, 0.9 / float(lam @ D[:, k]))
    return {"i": i, "D": D, "lam": lam, "kinds": kinds}


def test_open_multiclass_matches_qnom():
    cases = [_om_case(i) for i in range(N_CASES)]
    assert sum(c["D"].shape[0] > 1 for c in cases) >= 40
    lines = []
    for c in cases:
        lam = c["lam"]
        V = np.repeat((lam / lam.sum())[:, None], c["D"].shape[1], axis=1)
        m = [-1 if k == "delay" else 1 for k in c["kinds"]]
        lines.append(
            f"[U R Q X] = qnom({octave_vec(lam)}, {_mat(c['D'])}, {_mat(V)}, {octave_vec(m)});"
        )
        for key in "URQX":
            lines.append(f'emit("om{c["i"]}_{key}", reshape({key}.\', 1, []));')
    out = _octave("\n".join(lines))
    worst = 0.0
    for c in cases:
        C, K = c["D"].shape
        res = qn.open_network(_multi(c["D"], np.ones(C), c["lam"], np.zeros(C), c["kinds"]))
        tag = f"om{c['i']}"
        for ours, key in (
            (res.utilization[0], "U"),  # one operating point: row 0
            (res.residence_time[0], "R"),
            (res.queue_length[0], "Q"),
            (np.repeat(res.throughput[0][:, None], K, axis=1), "X"),
        ):
            np.testing.assert_allclose(ours.ravel(), out[f"{tag}_{key}"], rtol=RTOL, err_msg=tag)
            worst = max(worst, _worst(ours, out[f"{tag}_{key}"]))
    print(f"qnom: worst relative difference {worst:.3g}")


# ---- mixed: qnmix --------------------------------------------------------------------------------


def _mix_case(i):
    rng = np.random.default_rng(20_272_000 + i)
    C, K = int(rng.integers(2, 5)), int(rng.integers(1, 6))
    is_open = rng.random(C) < 0.5
    is_open[0], is_open[1] = False, True
    D = 10.0 ** rng.uniform(-3.0, -1.0, size=(C, K))
    N = np.where(is_open, 0, rng.integers(1, 6, size=C))
    lam = np.where(is_open, rng.uniform(0.2, 1.0, size=C), 0.0)
    lam = lam * rng.uniform(0.05, 0.9) / (lam @ D).max()
    return {"i": i, "D": D, "is_open": is_open, "N": N, "lam": lam}


def test_mixed_matches_qnmix():
    cases = [_mix_case(i) for i in range(N_CASES)]
    lines = []
    for c in cases:
        lines.append(
            f"[U R Q X] = qnmix({octave_vec(c['lam'])}, {octave_vec(c['N'])}, {_mat(c['D'])}, "
            f"ones({c['D'].shape[0]}, {c['D'].shape[1]}));"
        )
        for key in "URQX":
            lines.append(f'emit("mx{c["i"]}_{key}", reshape({key}.\', 1, []));')
    out = _octave("\n".join(lines))
    worst = 0.0
    for c in cases:
        C, K = c["D"].shape
        res = qn.mixed_network(_multi(c["D"], c["is_open"], c["lam"], c["N"], ["queue"] * K))
        tag = f"mx{c['i']}"
        for ours, key in (
            (res.utilization, "U"),
            (res.residence_time, "R"),
            (res.queue_length, "Q"),
            (np.repeat(res.throughput[:, None], K, axis=1), "X"),
        ):
            np.testing.assert_allclose(ours.ravel(), out[f"{tag}_{key}"], rtol=RTOL, err_msg=tag)
            worst = max(worst, _worst(ours, out[f"{tag}_{key}"]))
    print(f"qnmix: worst relative difference {worst:.3g}")


# ---- general load-dependent stations: qncsmvald -----------------------------------------------


def _ld_case(i):
    rng = np.random.default_rng(20_273_000 + i)
    K = int(rng.integers(1, 6))
    N = int(rng.integers(1, 26))
    kinds, rm = [], []
    for k in range(K):
        u = rng.random()
        if u < 0.15 and k > 0:
            kinds.append("delay")
            rm.append(None)
        elif u < 0.75 or k == 0:
            kinds.append("queue")
            L = int(rng.integers(1, 7))
            rm.append(np.cumsum(rng.uniform(0.2, 1.0, size=L)) * rng.uniform(0.5, 2.0))
        else:
            kinds.append("queue")
            rm.append(None)
    D = 10.0 ** rng.uniform(-2.0, 0.0, size=K)
    Z = float(rng.uniform(0.5, 5.0))
    return {"i": i, "D": D, "kinds": kinds, "rm": rm, "Z": Z, "N": N}


def _ld_net(c):
    return qn.Network.from_demands(c["D"], think_time=c["Z"], kinds=c["kinds"])


def test_general_load_dependent_matches_qncsmvald():
    cases = [_ld_case(i) for i in range(N_CASES)]
    assert sum(sum(r is not None for r in c["rm"]) >= 2 for c in cases) >= 15
    lines = []
    for c in cases:
        N = c["N"]
        j = np.arange(1, N + 1)
        rows = []
        for d, k, r in zip(c["D"], c["kinds"], c["rm"], strict=True):
            if k == "delay":
                rows.append(d / j)
            elif r is None:
                rows.append(np.full(N, d))
            else:
                rows.append(d / r[np.minimum(j, r.size) - 1])
        lines.append(
            f"[U R Q X] = qncsmvald({N}, {_mat(np.array(rows))}, ones(1, {len(rows)}), "
            f"{c['Z']:.17g});"
        )
        lines.append(
            f'emit("ld{c["i"]}_X", X(1)); emit("ld{c["i"]}_Q", Q); emit("ld{c["i"]}_R", R);'
        )
    out = _octave("\n".join(lines))
    worst = 0.0
    for c in cases:
        res = mva_ld_general(_ld_net(c), c["N"], keep="last", rate_multipliers=c["rm"])
        tag = f"ld{c['i']}"
        for ours, key in (
            (res.throughput, "X"),
            (res.queue_length[0], "Q"),
            (res.residence_time[0], "R"),
        ):
            np.testing.assert_allclose(ours, out[f"{tag}_{key}"], rtol=RTOL_LD, err_msg=tag)
            worst = max(worst, _worst(ours, out[f"{tag}_{key}"]))
    print(f"qncsmvald: worst relative difference {worst:.3g}")
