"""Load-dependent (multi-server) exact MVA: exactness, limits and numerical stability.

The stability tests drive a 64-server station above 0.999 utilisation and compare with an
independent 60-digit computation of the normalising constants (mpmath, plain convolution
of the station factors, no logarithms, no MVA recursion). The textbook load-dependent MVA,
which takes the idle probability as p_k(0|n) = 1 - sum_{j>=1} p_k(j|n), is run beside it as
a documented contrast (its errors are recorded in the test report, not asserted).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

import qnmodel as qn
from qnmodel.solvers.mva import log_convolve, mva_exact, mva_load_dependent
from tests._tol import LOG_CONV
from tests.reference import exact_mva

# ---------------------------------------------------------------------------------------
# Independent high-precision oracle
# ---------------------------------------------------------------------------------------


def _mp_factor(D, m, delay, N):
    f = [mpmath.mpf(1)]
    for j in range(1, N + 1):
        a = j if delay else min(j, m)
        f.append(f[-1] * D / a)
    return f


def _mp_conv(a, b):
    N = len(a) - 1
    return [mpmath.fsum(a[j] * b[n - j] for j in range(n + 1)) for n in range(N + 1)]


def mp_mean_values(demands, servers, delay, Z, N, dps=60):
    """X(N), Q_k(N) and log p_k(j|N) from G computed by direct convolution at ``dps`` digits.

    The marginal probabilities are returned as natural logarithms because the idle
    probability of a saturated station (~1e-600) underflows a double.
    """
    with mpmath.workdps(dps):
        D = [mpmath.mpf(d) for d in demands]
        factors = [_mp_factor(d, m, dl, N) for d, m, dl in zip(D, servers, delay, strict=True)]
        if Z > 0:
            factors.append(_mp_factor(mpmath.mpf(Z), 1, True, N))
        K = len(factors)
        one = [mpmath.mpf(1)] + [mpmath.mpf(0)] * N
        prefix = [one]
        for f in factors:
            prefix.append(_mp_conv(prefix[-1], f))
        suffix = [one]
        for f in reversed(factors):
            suffix.append(_mp_conv(suffix[-1], f))
        suffix = suffix[::-1]
        G = prefix[-1]
        X = G[N - 1] / G[N]
        Q, P = [], []
        for k in range(len(demands)):
            comp = _mp_conv(prefix[k], suffix[k + 1])
            p = [factors[k][j] * comp[N - j] / G[N] for j in range(N + 1)]
            P.append([float(mpmath.log(x)) if x > 0 else -np.inf for x in p])
            Q.append(float(mpmath.fsum(j * p[j] for j in range(N + 1))))
        assert K == len(demands) + (1 if Z > 0 else 0)
        return float(X), np.array(Q), P


# ---------------------------------------------------------------------------------------
# The textbook recursion with p(0) = 1 - sum, for the documented contrast
# ---------------------------------------------------------------------------------------


def naive_load_dependent_mva(demands, servers, delay, Z, N):
    """Textbook load-dependent MVA ([LZGS] sec. 8.3): p_k(0|n) obtained by subtraction.

    Returns X(N), Q(N) and the smallest p_k(0|n) seen (negative means breakdown).
    """
    D = np.asarray(demands, dtype=float)
    K = D.size
    a = np.array(
        [
            np.arange(1, N + 1) if dl else np.minimum(np.arange(1, N + 1), m)
            for m, dl in zip(servers, delay, strict=True)
        ],
        dtype=float,
    )
    p = np.zeros((K, N + 1))
    p[:, 0] = 1.0
    p_min = 1.0
    X = 0.0
    R = np.zeros(K)
    for n in range(1, N + 1):
        j = np.arange(1, n + 1)
        R = (j[None, :] / a[:, :n] * D[:, None] * p[:, :n]).sum(axis=1)
        X = n / (Z + R.sum())
        new = np.zeros_like(p)
        new[:, 1 : n + 1] = D[:, None] / a[:, :n] * X * p[:, :n]
        new[:, 0] = 1.0 - new[:, 1 : n + 1].sum(axis=1)
        p = new
        p_min = min(p_min, float(p[:, 0].min()))
    return X, X * R, p_min


STABILITY_NETS = {
    # 64-server array at the bottleneck (per-server demand 0.1 s), an 8-server controller,
    # two single-server stations and a think time.
    "m64": dict(demands=[6.4, 0.36, 0.05, 0.03], servers=[64, 8, 1, 1], Z=2.0, N=300),
    # a lone 64-server station with a short think time: the closest thing to a pure
    # finite-source M/M/64 at saturation.
    "m64_alone": dict(demands=[64.0], servers=[64], Z=0.5, N=240),
    # a 16-server and a 32-server station nearly balanced.
    "m16_m32": dict(demands=[1.6, 3.1, 0.02], servers=[16, 32, 1], Z=0.0, N=200),
}


@pytest.mark.parametrize("name", list(STABILITY_NETS))
def test_stable_above_0999_utilisation_against_60_digit_oracle(name, record_property):
    spec = STABILITY_NETS[name]
    D, m, Z, N = spec["demands"], spec["servers"], spec["Z"], spec["N"]
    net = qn.Network.from_demands(D, think_time=Z, servers=m)
    res = mva_load_dependent(net, N)

    # The regime the test is about: the bottleneck is above 0.999 busy per server.
    assert res.utilization[-1].max() > 0.999
    assert res.utilization.max() <= 1.0 + 1e-12
    assert max(m) >= 16

    X_mp, Q_mp, P_mp = mp_mean_values(D, m, [False] * len(D), Z, N)
    # Tolerances in ulps of the method's error, not a blanket 1e-9 (which a million-fold
    # regression would pass). The complement recursion is forward-stable: every step adds a
    # few roundings to quantities it then damps, so the error stays a small multiple of eps
    # independent of N; measured at most 1.2 ulp over these networks (K <= 4), bound
    # 4 K eps = 16 ulp (3.6e-15).
    eps = np.finfo(float).eps
    rtol_complement = 4 * len(D) * eps
    np.testing.assert_allclose(res.throughput[-1], X_mp, rtol=rtol_complement)
    np.testing.assert_allclose(res.queue_length[-1], Q_mp, rtol=rtol_complement)
    # With one multi-server station "auto" took the complement recursion: the log-space
    # convolution must agree with the oracle too. In log space a log G of magnitude L
    # carries an absolute error of about L eps, which exp() turns into a relative error
    # L eps: with L of a few hundred to ~1300 here that is up to ~1e3 ulp (measured: 1043
    # ulp on Q for "m64", 53 for "m16_m32", 2 for "m64_alone"); bound 4096 ulp (9.1e-13).
    conv = mva_load_dependent(net, N, algorithm="convolution")
    rtol_convolution = 4096 * eps
    np.testing.assert_allclose(conv.throughput[-1], X_mp, rtol=rtol_convolution)
    np.testing.assert_allclose(conv.queue_length[-1], Q_mp, rtol=rtol_convolution)
    # Queue lengths and thinkers account for every job, at every n.
    np.testing.assert_allclose(
        res.queue_length.sum(axis=1) + res.throughput * Z, np.arange(1, N + 1), rtol=1e-12
    )
    assert np.all(res.queue_length >= 0) and np.all(res.residence_time > 0)
    # X is non-decreasing up to rounding (past saturation it is flat to ~1e-13).
    assert np.all(np.isfinite(res.throughput))
    assert np.all(np.diff(res.throughput) >= -1e-12 * res.throughput[1:])
    # Sanity of the oracle: its marginal probabilities sum to 1.
    for logp in P_mp:
        assert abs(float(np.sum(np.exp(logp))) - 1.0) < 1e-12

    # Documented contrast: the textbook p(0) = 1 - sum recursion on the same network.
    X_nv, Q_nv, p0_min = naive_load_dependent_mva(D, m, [False] * len(D), Z, N)
    ours_err = float(np.max(np.abs(res.queue_length[-1] - Q_mp) / Q_mp))
    naive_err = float(np.max(np.abs(Q_nv - Q_mp) / Q_mp)) if np.all(np.isfinite(Q_nv)) else np.inf
    record_property("ours_max_rel_err_Q", ours_err)
    record_property("naive_1_minus_sum_max_rel_err_Q", naive_err)
    record_property("naive_min_p0", p0_min)
    print(
        f"\n[{name}] U_max={res.utilization[-1].max():.9f} ours rel.err(Q)={ours_err:.2e}; "
        f"textbook 1-sum: rel.err(Q)={naive_err:.2e}, min p(0|n)={p0_min:.3e}"
    )


def test_probabilities_of_the_64_server_station_are_non_negative():
    """p_k(j|N) of the saturated 64-server station, rebuilt from our log-space convolution,
    match the 60-digit oracle and are all >= 0, including the tiny idle probabilities."""
    spec = STABILITY_NETS["m64_alone"]
    D, m, Z, N = spec["demands"][0], spec["servers"][0], spec["Z"], spec["N"]
    j = np.arange(N + 1)
    log_f = j * np.log(D) - np.cumsum(np.log(np.maximum(np.minimum(j, m), 1)))
    log_think = j * np.log(Z) - np.cumsum(np.log(np.maximum(j, 1)))
    lG = log_convolve(log_f, log_think)
    log_p = log_f + log_think[::-1] - lG[N]  # log p(j|N) = log f(j) g_Z(N-j) / G(N)
    _, _, P_mp = mp_mean_values([D], [m], [False], Z, N)
    p = np.exp(log_p)
    assert np.all(p >= 0)
    assert p.sum() == pytest.approx(1.0, rel=1e-12)
    # Every probability, down to the idle one (about 1e-600, below the double range): compare
    # logarithms, whose absolute error is p's relative error. Each log p is a sum of logs of
    # magnitude up to L = max |log p| (~1300), so its rounding is a few L eps: measured
    # 2.3e-12 = 7.8 L eps; bound 32 L eps (9.3e-12), not a blanket 1e-9.
    L = float(np.abs(log_p).max())
    np.testing.assert_allclose(
        log_p, np.asarray(P_mp[0]), rtol=0, atol=32 * L * np.finfo(float).eps
    )
    assert log_p[0] < -1000  # the idle probability really is that small


@pytest.mark.parametrize("algorithm", ["complement", "convolution"])
def test_bolch_example_8_4_in_exact_rationals_whole_curve(algorithm):
    """Two-server station + two queues + delay (Bolch et al. Example 8.4 inputs), n = 1..12."""
    D = [Fraction(1, 2), Fraction(3, 10), Fraction(2, 5), Fraction(1)]
    kinds = ["queue", "queue", "queue", "delay"]
    servers = [2, 1, 1, 1]
    ex = exact_mva(D, 12, 0, kinds, servers)
    net = qn.Network.from_demands([float(d) for d in D], kinds=kinds, servers=servers)
    res = mva_load_dependent(net, 12, algorithm=algorithm)
    np.testing.assert_allclose(res.throughput, [float(x) for x in ex["X"]], rtol=1e-13)
    np.testing.assert_allclose(res.queue_length, np.array(ex["Q"], dtype=float), rtol=1e-13)
    np.testing.assert_allclose(res.residence_time, np.array(ex["R"], dtype=float), rtol=1e-13)
    np.testing.assert_allclose(res.utilization[:, 0], res.throughput * 0.25, rtol=1e-15)


def test_multiserver_with_at_least_N_servers_is_a_delay():
    ld = qn.Network.from_demands([0.3, 0.8], servers=[1, 20], think_time=1.0)
    dl = qn.Network.from_demands([0.3, 0.8], kinds=["queue", "delay"], think_time=1.0)
    a, b = mva_load_dependent(ld, 20), mva_exact(dl, 20)
    np.testing.assert_allclose(a.throughput, b.throughput, rtol=1e-12)
    np.testing.assert_allclose(a.queue_length, b.queue_length, rtol=1e-12)
    np.testing.assert_allclose(a.residence_time[:, 1], 0.8, rtol=1e-12)


def test_keep_last_matches_whole_curve():
    net = qn.Network.from_demands([0.3, 0.8, 0.1], servers=[2, 4, 1], think_time=0.5)
    full, last = mva_load_dependent(net, 40), mva_load_dependent(net, 40, keep="last")
    np.testing.assert_array_equal(last.n, [40])
    for f in ("throughput", "queue_length", "residence_time", "utilization"):
        np.testing.assert_allclose(getattr(last, f), getattr(full, f)[-1:], rtol=1e-15, err_msg=f)


def test_log_convolve_against_direct_convolution():
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0.1, 2.0, 30), rng.uniform(0.1, 2.0, 30)
    direct = np.convolve(a, b)[:30]
    np.testing.assert_allclose(np.exp(log_convolve(np.log(a), np.log(b))), direct, rtol=1e-13)
    # -inf entries (zero factors) are handled: a delta at 0 is the identity.
    delta = np.full(30, -np.inf)
    delta[0] = 0.0
    np.testing.assert_allclose(log_convolve(delta, np.log(b)), np.log(b), rtol=1e-15)


def test_large_population_multiserver_stays_finite():
    """N = 3000 with 32 and 4 servers: finite, X at the saturation asymptote, jobs conserved."""
    net = qn.Network.from_demands([3.2, 0.2, 0.05], servers=[32, 4, 1], think_time=1.0)
    res = mva_load_dependent(net, 3000, keep="last")
    assert np.all(np.isfinite(res.queue_length))
    # m / D at N = 3000: the gap to the asymptote decays geometrically in N and is long gone;
    # what is left is the solver's rounding, LOG_CONV at most (measured 0)
    assert res.throughput[0] == pytest.approx(10.0, rel=LOG_CONV)
    assert res.queue_length.sum() + res.throughput[0] * 1.0 == pytest.approx(3000, rel=1e-12)
