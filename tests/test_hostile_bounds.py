"""Issue 29, memory and work not bounded: huge server counts, populations, disk counts,
simulation lengths and fork-join populations are either solved exactly in bounded memory or
refused before anything is allocated, with a message naming the field, the value and the
limit; a long simulation stops at Ctrl-C. (The measured peaks behind the memory estimates are
in tests/test_resource_bounds.py.)
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError, LatticeTooLargeError
from qnmodel.io.modelfile import loads

from ._user_env import user_env

MODEL = """\
[model]
name = "m"
think_time = "1 s"
{population}

[[station]]
name = "disk"
demand = "10 ms"
{extra}
"""


def _model(population: str = "N = 10", extra: str = "") -> str:
    return MODEL.format(population=population, extra=extra)


# -- servers: exact in bounded memory ----------------------------------------------------------
@pytest.mark.parametrize("servers", [10**9, 10**15, 2**53])
def test_a_billion_servers_in_a_model_file_solve_exactly(servers):
    sol = loads(_model(extra=f"servers = {servers}")).solve()
    # N = 10 jobs never queue at m >= 10 servers: R = D, X(n) = n / (Z + D)
    n = np.arange(1, 11)
    np.testing.assert_allclose(sol.mva.throughput, n / 1.01, rtol=1e-12)
    np.testing.assert_allclose(sol.mva.response_time, 0.01, rtol=1e-12)


def test_a_billion_servers_equal_n_servers_through_the_api():
    big = qn.Network([qn.Station("d", 0.01, servers=10**9), qn.Station("c", 0.02)], think_time=1)
    ten = qn.Network([qn.Station("d", 0.01, servers=10), qn.Station("c", 0.02)], think_time=1)
    np.testing.assert_allclose(qn.mva(big, 10).throughput, qn.mva(ten, 10).throughput, rtol=1e-12)
    mbig = qn.Network.from_demands([[0.01], [0.02]], N=[3, 2], servers=[10**9], disciplines=["PS"])
    mfive = qn.Network.from_demands([[0.01], [0.02]], N=[3, 2], servers=[5], disciplines=["PS"])
    np.testing.assert_allclose(
        qn.mva_multiclass(mbig).throughput, qn.mva_multiclass(mfive).throughput, rtol=1e-12
    )


# -- populations: the estimate covers solve and print ------------------------------------------
@pytest.mark.parametrize(
    ("population", "key", "shown"),
    [
        ("N = 10_000_000", "N", "10000000"),
        ("N = 1_000_000", "N", "1000000"),
        ("populations = [1, 5_000_000]", "populations", "5000000"),
        ("populations = { start = 4_000_000, stop = 4_000_001 }", "populations", "4000001"),
    ],
)
def test_a_population_past_memory_is_refused_when_the_file_is_read(population, key, shown):
    with pytest.raises(
        InvalidModelError,  # a ModelFileError: file, line and key
        match=rf"m\.toml:\d+: model\.{key}: N = {shown} populations .* at 1 station\(s\) would "
        r"need about .* MiB, more than the allowed 1024 MiB",
    ):
        loads(_model(population), source="m.toml")


def test_the_estimate_grows_with_the_stations():
    many = "".join(f'[[station]]\nname = "s{k}"\ndemand = "1 ms"\n' for k in range(400))
    text = _model("N = 300_000") + many
    with pytest.raises(InvalidModelError, match=r"N = 300000 populations .* at 401 station"):
        loads(text, source="m.toml")
    loads(_model("N = 300_000"))  # one station: fits


def test_the_limit_is_the_users(monkeypatch):
    monkeypatch.setenv("QNMODEL_MAX_MEMORY", "64 GiB")
    assert loads(_model("N = 10_000_000")).max_population == 10_000_000


# -- disks ---------------------------------------------------------------------------------------
RAID = """\
[model]
name = "r"
think_time = "1 s"
N = 4
[system]
type = "raid"
level = "raid5"
disks = {disks}
disk_demand = "10 ms"
"""


@pytest.mark.parametrize("disks", [100_000_000, 4098, 10**30])
def test_a_raid_of_a_hundred_million_disks_is_refused(disks):
    with pytest.raises(
        InvalidModelError, match=rf"disks must be at most 4096 .*MAX_DISKS.* got {disks}"
    ):
        loads(RAID.format(disks=disks), source="m.toml")


def test_the_largest_raid_is_accepted():
    assert len(loads(RAID.format(disks=4096)).network.names) == 4096


def test_the_disk_limit_holds_in_the_api():
    from qnmodel.models.raid import disk_demands

    with pytest.raises(InvalidModelError, match=r"disks must be at most 4096"):
        disk_demands("8 ms", "raid0", 100_000_000, "read", "random")


# -- simulation: a work bound and Ctrl-C ---------------------------------------------------------
NET = qn.Network.from_demands([0.01, 0.02], think_time=1.0)


@pytest.mark.parametrize("run_length", [1e12, "1e9 s", 1e300])
def test_a_simulation_past_the_work_bound_is_refused(run_length):
    with pytest.raises(
        InvalidModelError,
        match=r"simulate: run_length=.* would simulate about .* events, more than the limit of "
        r"6e\+09 .*MAX_EVENTS",
    ):
        qn.simulate(NET, 5, run_length=run_length)


def test_the_work_bound_counts_replications_and_open_classes():
    # 2e7 s at ~5 cycles/s x 3 events: 3e8 events a replication; 10 of them: 3e9 (fits),
    # max_replications = 200 with a target half-width: 6e10 (refused)
    with pytest.raises(InvalidModelError, match=r"200 run\(s\)"):
        qn.simulate(NET, 5, run_length=2e7, target_relative_halfwidth=0.01)
    with pytest.raises(
        InvalidModelError, match=r"run_length=1e\+10 s \(1e\+10 s, warm-up 1e\+09 s, 10 run"
    ):
        qn.simulate(qn.Network.from_demands([0.01]), arrival_rate=50.0, run_length=1e10)


def test_the_events_estimate_is_close_to_the_count():
    from qnmodel.simulation._model import compile_model
    from qnmodel.simulation._work import expected_events

    r = qn.simulate(NET, 5, run_length=2000.0, replications=2, seed=3)
    _, info = compile_model(NET, 5, None, None)
    est = expected_events(info, 2000.0, 200.0, 2)
    assert 0.8 * r.events <= est <= 1.5 * r.events  # the guess is an optimistic throughput


_LONG = """
import qnmodel as qn
net = qn.Network.from_demands([0.01, 0.02], think_time=1.0)
print("start", flush=True)
try:
    qn.simulate(net, 20, run_length=2e7, replications=2, seed=1)  # minutes of work
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_ctrl_c_stops_a_long_simulation():
    p = subprocess.Popen(
        [sys.executable, "-c", _LONG],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=user_env(),
        cwd="/",
    )
    try:
        assert p.stdout.readline().strip() == "start"
        time.sleep(1.0)  # inside the event loop
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)  # the run itself would take minutes
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert out.strip() == "interrupted", (out, err)


# -- fork-join -----------------------------------------------------------------------------------
@pytest.mark.parametrize("N", [10**12, 10**9])
def test_fork_join_of_a_huge_population_is_refused_before_allocating(N):
    net = qn.Network([qn.ForkJoin("fj", [qn.Station(f"m{i}", 0.01) for i in range(4)])])
    with pytest.raises(
        LatticeTooLargeError,
        match=rf"fork_join of N = {N} jobs at 1 stations and 4 branches, keeping every n would "
        r"need about .* MiB, more than the allowed 1024 MiB",
    ):
        qn.fork_join(net, N)


def test_a_billion_servers_in_every_solver_equal_enough_servers():
    """10^9 servers are the same as N + 1 servers for N jobs: every solver that builds the rate
    curve 1..m cuts it at the population (no 7 GiB array), exactly."""
    from qnmodel.solvers.mva_lattice_ld import mva_multiclass_ld_exact

    def net(m):
        return qn.Network([qn.Station("d", 0.01, servers=m), qn.Station("c", 0.02)], think_time=1)

    a, b = qn.normalizing_constant(net(10**9), 10), qn.normalizing_constant(net(11), 10)
    np.testing.assert_allclose(a.throughput, b.throughput, rtol=1e-12)

    def mixed(m):
        return qn.Network(
            [qn.Station("d", 0.01, servers=m), qn.Station("c", 0.02)],
            classes=[qn.ClosedClass("a", 3, think_time=1.0), qn.OpenClass("o", 5.0)],
        )

    np.testing.assert_allclose(
        qn.mixed_network(mixed(10**9)).throughput, qn.mixed_network(mixed(4)).throughput, rtol=1e-12
    )
    D = [[0.01, 0.02], [0.02, 0.01]]
    x = mva_multiclass_ld_exact(D, [3, 2], [1.0, 0.5], servers=[10**9, 1])
    y = mva_multiclass_ld_exact(D, [3, 2], [1.0, 0.5], servers=[6, 1])
    np.testing.assert_allclose(x.throughput, y.throughput, rtol=1e-12)
    np.testing.assert_allclose(x.utilization[:, 0] * 1e9, y.utilization[:, 0] * 6, rtol=1e-12)


def test_a_simulation_of_a_billion_jobs_is_refused_before_allocating():
    with pytest.raises(
        LatticeTooLargeError,
        match=r"simulate: N = 1000000000 closed jobs in the event loop would need about "
        r"9\.155e\+04 MiB, more than the allowed 1024 MiB",
    ):
        qn.simulate(NET, 10**9, run_length=1e-6)
