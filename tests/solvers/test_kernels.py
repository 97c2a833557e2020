"""The compiled kernels (libqnkernels) give the same results as the numpy paths.

When the library is not installed next to the package (a source checkout), the
module builds it with CMake into a temporary directory and loads that file.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from qnmodel.model import Network
from qnmodel.solvers import _kernels, amva, mva, mva_load_dependent, mva_multiclass
from qnmodel.solvers._lattice import _lattice_numpy
from qnmodel.solvers._mva_core import exact
from qnmodel.solvers.amva import _core_numpy
from tests._nets import pf_net

from .._ci import IN_CI

CSRC = Path(__file__).resolve().parents[2] / "qnmodel" / "solvers" / "_csrc"
RTOL = 1e-12


def _unavailable(reason: str):
    if IN_CI:
        pytest.fail(f"compiled kernels required in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module", autouse=True)
def kernels(tmp_path_factory):
    """Load the compiled kernels, building them from source if needed."""
    if not _kernels.available():
        cmake = shutil.which("cmake")
        if cmake is None or not (CSRC / "CMakeLists.txt").is_file():
            _unavailable("no installed kernels and no cmake/C sources to build them")
        build = tmp_path_factory.mktemp("qnkernels")
        for cmd in (
            [cmake, "-S", str(CSRC), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
            [cmake, "--build", str(build)],
        ):
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                _unavailable(f"building the kernels failed: {proc.stderr[-500:]}")
        libs = [p for p in build.rglob("*qnkernels*") if p.suffix in (".so", ".dylib", ".dll")]
        if not libs or not _kernels.load(libs[0]):
            _unavailable(_kernels.status())
    assert _kernels.available(), _kernels.status()
    yield
    _kernels.load()  # back to the default resolution for the rest of the session


def _rng_models(seed, count, C_max=3):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        C = int(rng.integers(1, C_max + 1))
        K = int(rng.integers(1, 12))
        D = rng.uniform(0.0, 0.1, (C, K))
        D[:, 0] += 0.001
        delay = rng.random(K) < 0.25
        Dq = np.where(delay[None, :], 0.0, D)
        Z = np.where(rng.random(C) < 0.5, rng.uniform(0, 1, C), 0.0)
        N = rng.integers(1, 9, C)
        yield D, Dq, Z, N


def test_status_names_the_loaded_file():
    assert "loaded from" in _kernels.status()
    assert _kernels.library_path() is not None


def test_single_class_recursion_identical():
    for D, Dq, Z, N in _rng_models(1, 30, C_max=1):
        n = int(N[0]) * 37
        net = Network.from_demands(
            list(D[0]), think_time=Z[0], kinds=["queue" if q else "delay" for q in Dq[0] > 0]
        )
        for keep in ("all", "last"):
            fast = mva(net, n, keep=keep)
            with _kernels.force_numpy():
                assert not _kernels.available()
                ref = mva(net, n, keep=keep)
            for name in ("throughput", "response_time", "residence_time", "queue_length"):
                np.testing.assert_allclose(getattr(fast, name), getattr(ref, name), rtol=RTOL)


def test_batched_kernel_identical_for_every_point_and_kept_population():
    """qnk_mva over P points and a subset of populations against its numpy twin, and each
    point against the same kernel run alone (P = 1): the batch changes nothing."""
    rng = np.random.default_rng(5)
    for _ in range(10):
        P, K = int(rng.integers(1, 9)), int(rng.integers(1, 12))
        D = rng.uniform(0.0, 0.1, (P, K)) + 1e-4
        delay = rng.random(K) < 0.3
        Dq = np.where(delay[None, :], 0.0, D)
        Du = D / rng.integers(1, 4, K)[None, :]
        Z = np.where(rng.random(P) < 0.5, rng.uniform(0, 2, P), 0.0)
        kept = np.unique(rng.integers(1, 300, int(rng.integers(1, 6))))
        for pops in (kept, int(kept[-1])):
            fast = exact(D, Dq, Z, pops, Du)
            with _kernels.force_numpy():
                slow = exact(D, Dq, Z, pops, Du)
            for f, s in zip(fast, slow, strict=True):
                np.testing.assert_allclose(f, s, rtol=RTOL)
            for p in range(P):
                alone = exact(D[p], Dq[p], Z[p], pops, Du[p])
                for f, a in zip(fast, alone, strict=True):
                    np.testing.assert_array_equal(f[p], a)
        X, R, Rk, Q, U = exact(D, Dq, Z, kept, per_station=False)
        assert X.shape == R.shape == (P, kept.size) and Rk is Q is U is None


def test_mva_dispatches_to_the_kernel_and_matches_numpy():
    net = Network.from_demands([0.01, 0.03, 0.2, 0.007], think_time=2.0)
    fast = mva(net, 5000)
    with _kernels.force_numpy():
        slow = mva(net, 5000)
    for name in ("throughput", "response_time", "queue_length", "utilization"):
        np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=RTOL)


def test_curve_kernel_fills_every_field_like_numpy():
    """The one-pass kernel writes n, X, R, R_k, Q_k, U_k itself: each matches the numpy loop,
    and the identities between them hold exactly as computed (no post-pass)."""
    rng = np.random.default_rng(11)
    for _ in range(12):
        K = int(rng.integers(1, 40))
        kinds = ["delay" if u < 0.2 else "queue" for u in rng.random(K)]
        net = Network.from_demands(
            list(rng.uniform(0.0, 0.05, K) + 1e-4), think_time=float(rng.uniform(0, 2)), kinds=kinds
        )
        N = int(rng.integers(1, 700))
        fast = mva(net, N)
        with _kernels.force_numpy():
            slow = mva(net, N)
        np.testing.assert_array_equal(fast.n, np.arange(1, N + 1))
        for name in (
            "throughput",
            "response_time",
            "queue_length",
            "utilization",
            "residence_time",
        ):
            np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=RTOL)
        for r in (fast, slow):
            assert not r.queue_length.flags.writeable and r.queue_length.base is None
            np.testing.assert_array_equal(r.queue_length, r.residence_time * r.throughput[:, None])
            np.testing.assert_array_equal(r.utilization, r.throughput[:, None] * r.demands[None, :])
            np.testing.assert_allclose(
                r.throughput * (r.response_time + r.think_time), r.n, rtol=1e-14
            )
            np.testing.assert_allclose(r.response_time, r.residence_time.sum(axis=1), rtol=1e-13)


def test_load_dependent_complement_kernel_identical():
    """qnk_mva_ld, the complement recursion (every subset of the one, two or three
    multi-server stations steps per n), against its numpy twin, both keeps."""
    rng = np.random.default_rng(12)
    for _ in range(15):
        K = int(rng.integers(1, 8))
        m = [1] * K
        ms = rng.choice(K, size=int(rng.integers(1, min(K, 3) + 1)), replace=False)
        for s in ms:
            m[s] = int(rng.integers(2, 70))
        kinds = ["queue" if m[i] > 1 or u > 0.25 else "delay" for i, u in enumerate(rng.random(K))]
        D = rng.uniform(0.0, 0.5, K)
        D[ms] += 0.5
        Z = float(rng.choice([0.0, rng.uniform(0.1, 3.0)]))
        net = Network.from_demands(list(D), think_time=Z, kinds=kinds, servers=m)
        N = int(rng.integers(1, 600))
        for keep in ("all", "last"):
            fast = mva_load_dependent(net, N, keep=keep, algorithm="complement")
            with _kernels.force_numpy():
                slow = mva_load_dependent(net, N, keep=keep, algorithm="complement")
            for name in ("throughput", "response_time", "queue_length", "utilization"):
                np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=RTOL)
            np.testing.assert_allclose(fast.residence_time, slow.residence_time, rtol=RTOL)


def test_multiclass_lattice_identical():
    for D, Dq, Z, N in _rng_models(2, 40):
        Xc, Rc = _kernels.mva_multiclass(D, Dq, Z, N)
        Xn, Rn = _lattice_numpy(D, Dq, Z, N)
        np.testing.assert_allclose(Xc, Xn, rtol=RTOL)
        np.testing.assert_allclose(Rc, Rn, rtol=RTOL)


def test_multiclass_public_function_identical_with_zero_classes_and_multiserver():
    D = np.array([[0.02, 0.05, 0.01, 0.3], [0.1, 0.01, 0.03, 0.2], [0.04, 0.04, 0.02, 0.1]])
    kinds = ["queue", "queue", "queue", "delay"]
    for pop, servers in (([6, 0, 9], [1, 3, 1, 1]), ([3, 4, 5], [1, 3, 1, 1]), ([3, 4, 5], None)):
        net = pf_net(D, pop, [0.5, 0.0, 1.0], kinds=kinds, servers=servers)
        fast = mva_multiclass(net)
        with _kernels.force_numpy():
            slow = mva_multiclass(net)
        np.testing.assert_allclose(fast.queue_length, slow.queue_length, rtol=RTOL)
        np.testing.assert_allclose(fast.residence_time, slow.residence_time, rtol=RTOL)


@pytest.mark.parametrize("linearizer", [False, True])
def test_amva_core_identical_iteration_by_iteration(linearizer):
    for D, Dq, Z, N in _rng_models(3, 30):
        C, K = D.shape
        M = N.astype(np.float64)
        rng = np.random.default_rng(int(N.sum()))
        Dlt = rng.uniform(-0.05, 0.05, (C, C, K)) if linearizer else None
        Q0 = np.ascontiguousarray(np.outer(M, np.ones(K)) / K)
        Qc, Qn = Q0.copy(), Q0.copy()
        # tol = 0: both run exactly max_iter iterations of the same map
        Xc, Rc, okc, itc, resc = _kernels.amva_core(M, D, Dq, Z, Dlt, Qc, 0.0, 25)
        Xn, Rn, okn, itn, resn = _core_numpy(M, D, Dq, Z, Dlt, Qn, 0.0, 25)
        assert (okc, itc) == (okn, itn) == (False, 25)
        np.testing.assert_allclose(Qc, Qn, rtol=RTOL)
        np.testing.assert_allclose(Xc, Xn, rtol=RTOL)
        np.testing.assert_allclose(Rc, Rn, rtol=RTOL)
        assert resc == pytest.approx(resn, rel=1e-6, abs=1e-15)


@pytest.mark.parametrize("method", ["schweitzer", "linearizer"])
def test_amva_public_function_identical(method):
    D = np.array([[0.02, 0.05, 0.01], [0.1, 0.01, 0.03]])
    net = pf_net(D, [12, 7], [0.3, 0.0])
    fast = amva(net, method=method, tol=1e-12)
    with _kernels.force_numpy():
        slow = amva(net, method=method, tol=1e-12)
    np.testing.assert_array_equal(fast.iterations, slow.iterations)
    np.testing.assert_allclose(fast.queue_length, slow.queue_length, rtol=1e-10)


def test_large_population_is_finite_and_reaches_the_asymptote():
    D = np.linspace(0.001, 0.01, 100)
    net = Network.from_demands(list(D))
    r = mva(net, 100_000, keep="last")
    assert np.all(np.isfinite(r.queue_length))
    # X -> 1 / D_max: the gap decays like (D_2 / D_max)^N, below rounding at N = 10^5
    # (measured: equal to the last bit; the bound was 1e-3)
    assert r.throughput[0] == pytest.approx(100.0, rel=4 * np.finfo(float).eps)
    assert r.queue_length.sum() == pytest.approx(100_000, rel=1e-12)


def test_environment_switches(monkeypatch, tmp_path):
    path = _kernels.library_path()
    net = Network.from_demands([0.1, 0.2])
    compiled = mva(net, 10).throughput
    try:
        monkeypatch.setenv("QNMODEL_NO_C", "1")
        assert _kernels.load() is False
        assert not _kernels.available() and "QNMODEL_NO_C" in _kernels.status()
        monkeypatch.delenv("QNMODEL_NO_C")
        monkeypatch.setenv("QNMODEL_KERNELS_LIB", str(tmp_path / "missing.so"))
        assert _kernels.load() is False and "no compiled kernels at" in _kernels.status()
        # the numpy path still answers, with the same numbers
        np.testing.assert_allclose(mva(net, 10).throughput, compiled, rtol=RTOL)
        not_a_lib = tmp_path / "libqnkernels.so"
        not_a_lib.write_text("not a shared library")
        assert _kernels.load(not_a_lib) is False and "cannot load" in _kernels.status()
    finally:
        assert _kernels.load(path) is True


def test_log_convolution_kernel_matches_numpy_and_logsumexp():
    from qnmodel.solvers.mva_ld import _ld_queue_length, log_convolve

    rng = np.random.default_rng(12)
    L = 300
    la = np.cumsum(rng.normal(-1.0, 3.0, size=L))
    lb = np.cumsum(rng.normal(0.5, 2.0, size=L))
    la[5] = -np.inf  # a zero factor
    c = _kernels.log_convolve(la, lb)
    with _kernels.force_numpy():
        ref = log_convolve(la, lb)
    direct = [np.logaddexp.reduce(la[: n + 1] + lb[n::-1]) for n in range(L)]
    np.testing.assert_allclose(c, ref, rtol=1e-14, atol=1e-12)
    np.testing.assert_allclose(c, direct, rtol=1e-14, atol=1e-12)
    lG = c + 1.0
    n_idx = np.array([1, 7, 150, L - 1])
    with _kernels.force_numpy():
        ref_q = _ld_queue_length(la, lb, lG, n_idx)
    np.testing.assert_allclose(_kernels.log_moment(la, lb, lG, n_idx), ref_q, rtol=1e-13)
    # log-concave inputs take the peak-tracking path (terms summed outward from the peak)
    ca = -0.5 * np.arange(L) ** 1.2 + 0.3 * np.arange(L)
    cb = np.concatenate([[0.0], np.full(L - 1, -np.inf)])  # a unit impulse
    cc = -np.log1p(np.arange(L, dtype=float)) * 2.0 - 0.01 * np.arange(L)
    for x, y in ((ca, cc), (cc, ca), (ca, cb), (cb, cc)):
        with _kernels.force_numpy():
            ref = log_convolve(x, y)
        np.testing.assert_allclose(_kernels.log_convolve(x, y), ref, rtol=1e-14, atol=1e-12)
        with _kernels.force_numpy():
            ref_q = _ld_queue_length(x, y, ref + 0.5, n_idx)
        got = _kernels.log_moment(x, y, ref + 0.5, n_idx)
        np.testing.assert_allclose(got, ref_q, rtol=1e-13, atol=1e-300)


def test_general_load_dependent_mva_compiled_equals_numpy_and_counts_jobs():
    from qnmodel.solvers.mva_ld_general import mva_ld_general

    rng = np.random.default_rng(3)
    net = Network.from_demands(rng.uniform(0.002, 0.01, size=6), think_time=1.0)
    rm = [np.cumsum(rng.uniform(0.3, 1.0, size=4)) for _ in range(4)] + [None, [1.5, 1.2, 1.0]]
    N = 3000  # the bottleneck queue holds ~2990 jobs
    res = mva_ld_general(net, N, keep="all", rate_multipliers=rm)
    with _kernels.force_numpy():
        ref = mva_ld_general(net, N, keep="all", rate_multipliers=rm)
    np.testing.assert_allclose(res.throughput, ref.throughput, rtol=1e-13)
    np.testing.assert_allclose(res.queue_length, ref.queue_length, rtol=1e-12, atol=1e-12)
    # exponential tilting keeps X(n) = G(n-1)/G(n) precise: the job count (Q + X Z = n)
    # holds to 1e-12 relative at every n (2e-10 at n = 2000 before tilting)
    n = np.arange(1, N + 1)
    np.testing.assert_allclose(res.queue_length.sum(axis=1) + res.throughput, n, rtol=1e-12)
