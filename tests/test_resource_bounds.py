"""Resource bounds: the memory estimates behind the refusals are upper bounds of what the solvers
really use (peak RSS measured in a fresh process), and every refusal comes before the
allocation, with a clear message, at a limit the user can change (``max_memory`` or
``$QNMODEL_MAX_MEMORY``).

The figures measured here are listed in docs/explanation/performance.md (Memory).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import qnmodel as qn
from qnmodel._validate import DEFAULT_MAX_MEMORY, max_memory
from qnmodel.errors import LatticeTooLargeError
from qnmodel.solvers.mva_multiclass import lattice_memory_bytes

from ._tol import recursion
from ._user_env import user_env

MiB = 2**20

_PEAK = """
import json, sys, time
import numpy as np
import qnmodel as qn
from qnmodel.whatif import solve_grid
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
# touch the code paths once, small, so imports and caches are in the baseline
{warm}
base = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:  # reset the high-water mark VmHWM to VmRSS
    f.write("5")
t = time.perf_counter()
{work}
print(json.dumps({{"peak_bytes": status("VmHWM") - base, "seconds": time.perf_counter() - t}}))
"""


def peak(work: str, warm: str = "") -> dict:
    """Peak resident memory added by ``work`` in a fresh interpreter, bytes (Linux VmHWM after
    resetting it through /proc/self/clear_refs, minus the resident size before)."""
    p = subprocess.run(
        [sys.executable, "-c", _PEAK.format(work=work, warm=warm or "pass")],
        capture_output=True,
        text=True,
        timeout=300,
        env=user_env(),
        cwd="/",  # never the repository root: its ./qnmodel has no compiled parts
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


# Measured cases: what the solver allocates for its results is the estimate the refusal uses.
# Each is a few hundred MiB at most, so they run alone (they load the machine's memory).
alone = pytest.mark.alone


@alone
def test_single_class_curve_memory_is_within_the_estimate():
    N, K = 1_000_000, 10
    estimate = 8 * N * (3 * K + 3)  # n, X, R and Rk, Q, U (the check in _mva_core)
    m = peak(
        f"qn.mva(qn.Network.from_demands(np.linspace(0.001, 0.01, {K}), think_time=1.0), {N})",
        warm="qn.mva(qn.Network.from_demands([0.1, 0.2]), 3)",
    )
    print(f"\nsingle-class exact MVA N={N} K={K}: peak {m['peak_bytes'] / MiB:.1f} MiB, "
          f"estimate {estimate / MiB:.1f} MiB, {m['seconds']:.2f} s")  # fmt: skip
    assert m["peak_bytes"] <= 1.1 * estimate + 16 * MiB
    # and it is not a gross overestimate either: the refusal does not turn away what fits
    assert m["peak_bytes"] >= 0.5 * estimate


@alone
def test_multiclass_lattice_memory_is_within_the_estimate():
    pops, K = [250, 250, 250], 4
    estimate = lattice_memory_bytes(pops, K)
    D = "[[0.01, 0.02, 0.03, 0.005], [0.02, 0.01, 0.005, 0.03], [0.005, 0.005, 0.02, 0.02]]"
    net = "qn.Network.from_demands({D}, N={N}, disciplines=['PS'] * 4)"  # product form
    m = peak(
        f"qn.mva_multiclass({net.format(D=D, N=pops)})",
        warm=f"qn.mva_multiclass({net.format(D=D, N=[1, 1, 1])})",
    )
    print(f"\nmulti-class lattice {pops} K={K}: peak {m['peak_bytes'] / MiB:.1f} MiB, "
          f"estimate {estimate / MiB:.1f} MiB, {m['seconds']:.2f} s")  # fmt: skip
    assert m["peak_bytes"] <= 1.1 * estimate + 16 * MiB


@alone
def test_whatif_grid_memory_is_within_the_estimate():
    P, N, K = 2000, 500, 6
    estimate = 8 * 16 * P * N
    m = peak(
        f"solve_grid(np.random.default_rng(1).uniform(0.001, 0.01, ({P}, {K})), "
        f"range(1, {N + 1}), 1.0)",
        warm="solve_grid(np.full((2, 3), 0.01), [1, 2], 1.0)",
    )  # fmt: skip
    print(f"\nwhat-if grid {P} x {N} (K={K}): peak {m['peak_bytes'] / MiB:.1f} MiB, "
          f"estimate {estimate / MiB:.1f} MiB, {m['seconds']:.2f} s")  # fmt: skip
    assert m["peak_bytes"] <= 1.1 * estimate + 16 * MiB


SIM_WARM = (
    "qn.simulate(qn.Network.from_demands([0.01]), 2, run_length=10.0, replications=2, seed=1)"
)


@alone
def test_simulation_memory_does_not_grow_with_the_population_or_run_length():
    # the simulator keeps per-station accumulators and per-replication means, not samples
    small = peak(
        "qn.simulate(qn.Network.from_demands([0.01, 0.02], think_time=0.1), 10, "
        "run_length=2000.0, replications=4, seed=1)",
        warm=SIM_WARM,
    )  # fmt: skip
    big = peak(
        "qn.simulate(qn.Network.from_demands([0.01, 0.02], think_time=0.1), 1000, "
        "run_length=2000.0, replications=4, seed=1)",
        warm=SIM_WARM,
    )  # fmt: skip
    print(f"\nsimulate N=10: peak {small['peak_bytes'] / MiB:.1f} MiB ({small['seconds']:.2f} s); "
          f"N=1000: {big['peak_bytes'] / MiB:.1f} MiB ({big['seconds']:.2f} s)")  # fmt: skip
    assert big["peak_bytes"] <= small["peak_bytes"] + 32 * MiB


class TestRefusals:
    """Before the allocation, with the estimate, the limit and the fix; the limit is set by
    an argument or the environment."""

    def test_default_limit_is_one_gib(self, monkeypatch):
        monkeypatch.delenv("QNMODEL_MAX_MEMORY", raising=False)
        assert max_memory() == DEFAULT_MAX_MEMORY == 2**30

    def test_environment_lowers_the_single_class_limit(self, monkeypatch):
        net = qn.Network.from_demands([0.01, 0.02])
        qn.mva(net, 20_000)  # 20000 x 9 x 8 B = 1.4 MiB: fine by default
        monkeypatch.setenv("QNMODEL_MAX_MEMORY", "1 MiB")
        with pytest.raises(
            LatticeTooLargeError, match=r"about 1\.373 MiB, more than the allowed 1 MiB"
        ):
            qn.mva(net, 20_000)
        # saturated at 1 / D_max: what is left is the recursion's rounding (N steps, K = 2)
        X = qn.mva(net, 20_000, keep="last").throughput[0]
        assert X == pytest.approx(50.0, rel=recursion(20_000, 4 * 2 + 2))

    def test_environment_must_be_a_size(self, monkeypatch):
        monkeypatch.setenv("QNMODEL_MAX_MEMORY", "5 s")
        with pytest.raises(qn.UnitError, match=r"\$QNMODEL_MAX_MEMORY: '5 s' is a time"):
            qn.mva(qn.Network.from_demands([0.01]), 3)

    def test_argument_sets_the_multiclass_limit(self):
        D = [[0.01, 0.02], [0.02, 0.01]]
        net = qn.Network.from_demands(D, N=[300, 300], disciplines=["PS", "PS"])
        need = lattice_memory_bytes([300, 300], 2)
        with pytest.raises(LatticeTooLargeError, match="max_memory"):
            qn.mva_multiclass(net, max_memory=need - 1)
        qn.mva_multiclass(net, max_memory=need)

    def test_grid_past_the_limit_is_refused(self, monkeypatch):
        import numpy as np

        from qnmodel.whatif import solve_grid

        monkeypatch.setenv("QNMODEL_MAX_MEMORY", "1 MiB")
        with pytest.raises(LatticeTooLargeError, match="what-if grid of 100 points x 1000"):
            solve_grid(np.full((100, 3), 0.01), range(1, 1001), 1.0)


_SOLVE_FILE = """
import contextlib, os
from qnmodel.cli import main
open("/tmp/qnmodel-peak-{tag}.toml", "w").write(
    '[model]\\nname = "m"\\nthink_time = "1 s"\\nN = {N}\\n'
    + "".join('[[station]]\\nname = "s%d"\\ndemand = "10 ms"\\n' % k for k in range({K}))
)
with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
    assert main(["-q", "solve", "/tmp/qnmodel-peak-{tag}.toml", "--format", "{fmt}"]) == 0
"""


@alone
@pytest.mark.parametrize(("K", "fmt"), [(1, "table"), (8, "table"), (8, "json"), (1, "csv")])
def test_model_file_population_memory_is_within_the_estimate(K, fmt):
    """Issue 29: the estimate assumed 64 B per population; ``qnmodel solve`` of N = 1e6
    peaked at 469 MiB (csv) and 1.75 GiB (table). The estimate now covers solve and print."""
    from qnmodel.io.modelfile._fields import PRINT_BYTES, SOLVE_BYTES

    N = 200_000
    estimate = N * (SOLVE_BYTES[0] + SOLVE_BYTES[1] * K + PRINT_BYTES[0] + PRINT_BYTES[1] * K)
    m = peak(
        _SOLVE_FILE.format(N=N, K=K, fmt=fmt, tag=f"{K}{fmt}"),
        warm=_SOLVE_FILE.format(N=3, K=K, fmt=fmt, tag=f"w{K}{fmt}"),
    )
    print(f"\nqnmodel solve --format {fmt} N={N} K={K}: peak {m['peak_bytes'] / MiB:.1f} MiB, "
          f"estimate {estimate / MiB:.1f} MiB")  # fmt: skip
    assert m["peak_bytes"] <= estimate
    # the estimate is the largest format's, JSON's (a table prints a few thinned rows of a
    # long curve; JSON keeps every row): not a gross overestimate there
    if fmt == "json":
        assert m["peak_bytes"] >= 0.5 * estimate


@alone
def test_fork_join_memory_is_within_the_estimate():
    N = 100_000
    K, B, F = 2, 4, 1
    estimate = 16 * N * (3 + 3 * K + 3 * B + F)  # the check in qnmodel.solvers.forkjoin
    net = (
        "qn.Network([qn.ForkJoin('fj', [qn.Station(f'm{i}', 0.01) for i in range(4)]), "
        "qn.Station('c', 0.002)], think_time=1.0)"
    )
    m = peak(f"qn.fork_join({net}, {N})", warm=f"qn.fork_join({net}, 3)")
    print(f"\nfork_join N={N}: peak {m['peak_bytes'] / MiB:.1f} MiB, "
          f"estimate {estimate / MiB:.1f} MiB")  # fmt: skip
    assert m["peak_bytes"] <= 1.1 * estimate + 16 * MiB
