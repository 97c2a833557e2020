"""NetworkedRAID.fork_join(N, structure="forkjoin_overlap"): the master link inside the fork.

References: closed forms at N = 1 (derived below) and an event simulation of the same
system (``simulate_overlap`` in ``tests/solvers/fj_sim.py``; the compiled simulator cannot
put one station shared by every branch inside a fork).

N = 1 closed form. K exponential members of mean d finish at the order statistics
T_(1) < ... < T_(K); their spacings Y_j = T_(j) - T_(j-1) are independent Exp with mean
d / (K - j + 1) ([DN03] sec. 2.5). Each chunk then crosses a FCFS link in the fixed time c.
The link's work just after the j-th chunk arrives is W_j = c + max(W_{j-1} - Y_j, 0), W_1 = c
(Lindley), and the last chunk leaves at T_(K) + W_K. With E[max(w - Y, 0)] = w - (1 -
e^{-mu w}) / mu for Y ~ Exp(mu):

* K = 2: E = 3d/2 + c + (c - d (1 - e^{-c/d})) = d/2 + 2c + d e^{-c/d};
* K = 3: E[W_2] = 2c - d/2 (1 - e^{-2c/d}), E[e^{-W_2/d}] = 2 e^{-2c/d} - e^{-3c/d}, so
  E = 11d/6 + c + E[W_2] - d (1 - E[e^{-W_2/d}]) = d/3 + 3c + 5/2 d e^{-2c/d} - d e^{-3c/d}.

Both tend to d H_K as c -> 0 and to K c as d -> 0.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.models.storage_forkjoin import fork_join_overlap, last_chunk_departure
from qnmodel.solvers.forkjoin import fork_join as solve_fork_join

sys.path.insert(0, str(Path(__file__).parents[1] / "solvers"))
from fj_sim import simulate_overlap  # noqa: E402

from .._tol import closed_form  # noqa: E402

#: three emulated 64 KiB disks (1.5 ms + 64 KiB / 100 MB/s) behind a 1 Gbit/s master link
#: (46 frames of 1514 B per chunk), as tests/testbed/test_emu_disk.py
D_MEMBER, C_CHUNK, K = 2.155e-3, 46 * 1514 / 125e6, 3


def k2(d, c):
    return d / 2 + 2 * c + d * math.exp(-c / d)


def k3(d, c):
    return d / 3 + 3 * c + 2.5 * d * math.exp(-2 * c / d) - d * math.exp(-3 * c / d)


def emu_raid(op="read", **kw):
    """The emulated-disk testbed's RAID0 of tests/testbed/test_emu_disk.py (90 us CPU/job)."""
    base = dict(job_size=3 * 65536, stripe_unit=65536, stripe_width=3,
                master_time_per_unit=30e-6, master_time_per_packet=0.0,
                server_time_per_unit=0.0, server_time_per_packet=0.0, link_rate=125e6,
                disk_seek=0.0, disk_latency=0.0, disk_rate=65536 / D_MEMBER, mss=1448.0,
                frame_size=1514.0, raid="raid0", op=op, server_terms="one_server")  # fmt: skip
    base.update(kw)
    return qn.NetworkedRAID(**base)


@pytest.mark.parametrize("d, c", [(2.155e-3, 0.557e-3), (1.0, 1.0), (1.0, 0.05), (0.2, 3.0)])
def test_last_chunk_matches_the_closed_forms(d, c):
    # 60-point Gauss-Laguerre of a smooth integrand: measured within 2e-14 of the closed
    # forms; 1e-12 leaves room for other (d, c), far below any modelling error
    assert last_chunk_departure(d, c, 2) == pytest.approx(k2(d, c), rel=1e-12)
    assert last_chunk_departure(d, c, 3) == pytest.approx(k3(d, c), rel=1e-12)
    # the limits: no link -> the mean maximum d H_K; the first chunk alone -> d / K + c
    assert last_chunk_departure(d, 0.0, 4) == pytest.approx(d * 25 / 12, rel=1e-12)
    assert last_chunk_departure(d, c, 4, j=1) == pytest.approx(d / 4 + c, rel=1e-12)


def test_n1_is_the_serial_stations_plus_the_last_chunk():
    sys_ = emu_raid()
    dm = sys_.demands()
    r = sys_.fork_join(1, structure="forkjoin_overlap")
    assert "approximate" in r.method and "overlapped link" in r.method
    c = dm["link_in"] / 3
    expected = dm["cpu_master"] + dm["link_out"] + k3(dm["disk"], c)
    assert r.response_time[0] == pytest.approx(expected, rel=1e-12)
    # the forkjoin structure pays the slowest member and then all three chunks: 5.69 ms
    old = sys_.fork_join(1).response_time[0]
    assert old == pytest.approx(dm["cpu_master"] + dm["link_in"] + dm["disk"] * 11 / 6, rel=1e-12)
    # 4.689 ms against 5.688 ms (the values quoted in the docs)
    assert round(r.response_time[0] * 1e3, 3) == 4.689 and round(old * 1e3, 3) == 5.688


def test_n1_against_simulation():
    # model (exact at N = 1) against the event simulation; 2 x the 95 % half-width is ~4
    # standard errors (false failure < 1e-4)
    R, hw, _, _ = simulate_overlap([90e-6], D_MEMBER, C_CHUNK, K, "read", 1, jobs=20_000, reps=8)
    model = 90e-6 + k3(D_MEMBER, C_CHUNK)
    assert abs(model - R) <= 2 * hw, (model, R, hw)


# measured (R model / R simulated - 1, N = 1, 2, 4, 8, 16; 5 x 6000 jobs each):
# emu read -0.05, +0.85, +0.30, +1.04, -0.21 % (95 % half-widths 0.7-1.0 %);
# link-bound read (d = c = 1 ms) -0.02, -0.36, 0, 0, 0 % (the link saturates: X = 1/D_link);
# 4 members, d = 2 ms, c = 0.5 ms: -0.45, +1.08, -0.02, +0.22, +0.07 %;
# emu write -0.03, -9.64, -3.04, -0.48, -0.29 %; link-bound write -0.05, -2.69, 0, 0, 0 %;
# 2 members, d = 3 ms, c = 1 ms, write: -0.47, -10.54, -3.08, +0.10, -0.76 %.
CASES = [
    ("emu read", [90e-6], D_MEMBER, C_CHUNK, 3, "read", 0.015),
    ("link-bound read", [90e-6], 1e-3, 1e-3, 3, "read", 0.01),
    ("4 members read", [0.2e-3], 2e-3, 0.5e-3, 4, "read", 0.015),
    ("emu write", [90e-6], D_MEMBER, C_CHUNK, 3, "write", 0.11),
    ("link-bound write", [90e-6], 1e-3, 1e-3, 3, "write", 0.035),
    ("2 members write", [0.1e-3], 3e-3, 1e-3, 2, "write", 0.12),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_against_simulation_over_the_population(case):
    _, serial, d, c, k, op, tol = case
    stations = [("cpu_master", serial[0]), ("link", k * c)]
    res = fork_join_overlap(stations, d, "link", k, op, 16, 0.0)
    for n in (1, 2, 4, 8, 16):
        R, hw, _, _ = simulate_overlap(serial, d, c, k, op, n, jobs=6000, reps=5, seed=n)
        # the measured error (above) plus 2 half-widths of the simulation's CI
        assert abs(res.response_time[n - 1] / R - 1) <= tol + 2 * hw / R, (n, res, R, hw)


@pytest.mark.parametrize("op", ["read", "write"])
@pytest.mark.parametrize("disk_rate", [65536 / D_MEMBER, 65536 / 0.4e-3])  # disk- / link-bound
def test_saturates_at_the_forkjoin_structures_bottleneck(op, disk_rate):
    sys_ = emu_raid(op=op, disk_rate=disk_rate)
    r = sys_.fork_join(128, structure="forkjoin_overlap")
    d_max = sys_.network(structure="forkjoin").demands.max()
    assert np.all(r.throughput <= (1 / d_max) * (1 + 1e-12))
    assert r.throughput[-1] >= 0.98 / d_max
    # monotone: X(n) and R(n) never decrease
    assert np.all(np.diff(r.throughput) >= -1e-9 * r.throughput[1:])
    assert np.all(np.diff(r.response_time) > 0)
    # the overlap never makes a request slower than the join-then-link structure
    old = sys_.fork_join(128)
    assert np.all(r.response_time <= old.response_time * (1 + 1e-12))


def test_littles_law_and_the_utilisation_law_with_think_time():
    sys_ = emu_raid()
    r = sys_.fork_join(32, think_time="5 ms", structure="forkjoin_overlap")
    n = np.arange(1, 33)
    np.testing.assert_allclose(r.throughput * (r.response_time + 5e-3), n, rtol=closed_form(4))
    np.testing.assert_allclose(r.residence_time.sum(axis=1), r.response_time, rtol=closed_form(4))
    np.testing.assert_allclose(r.queue_length.sum(axis=1), r.throughput * r.response_time,
                               rtol=closed_form(8))  # fmt: skip
    assert r.station_names == ("cpu_master", "link_out", "link_in", "storage_servers")
    link = r.station_names.index("link_in")
    np.testing.assert_allclose(r.utilization[:, link], r.throughput * sys_.demands()["link_in"],
                               rtol=closed_form(1))  # fmt: skip
    assert np.all(r.residence_time[:, link] >= sys_.demands()["link_in"] / 3 * (1 - 1e-12))


def test_the_forkjoin_and_paper_structures_are_unchanged():
    sys_ = qn.NetworkedRAID.cui2006(op="read")
    a = sys_.fork_join(6)
    assert np.array_equal(a.response_time, sys_.fork_join(6, structure="forkjoin").response_time)
    b = solve_fork_join(sys_.network(structure="forkjoin"), 6)
    assert np.array_equal(a.throughput, b.throughput)
    # recorded before the overlapped structure existed
    before = [88.07018020088293, 117.81061116413946, 149.182292241065, 181.71652666134435,
              215.0658032632791, 248.98218367604184]  # fmt: skip
    np.testing.assert_array_equal(a.response_time, before)  # bit for bit
    paper = qn.NetworkedRAID.cui2006(form="paper")
    assert paper.mva(4).response_time == pytest.approx(
        qn.mva(paper.network(), 4).response_time, rel=0
    )


def test_bad_structures_and_forms_are_refused():
    sys_ = emu_raid()
    with pytest.raises(qn.InvalidModelError, match="structure must be one of"):
        sys_.fork_join(4, structure="overlap")
    with pytest.raises(qn.InvalidModelError, match="structure must be one of"):
        sys_.fork_join(4, structure="paper")
    with pytest.raises(qn.InvalidModelError, match="form='corrected'.*form='paper'"):
        qn.NetworkedRAID.cui2006(form="paper").fork_join(4, structure="forkjoin_overlap")
    with pytest.raises(qn.InvalidModelError, match="N"):
        sys_.fork_join(0, structure="forkjoin_overlap")
    with pytest.raises(qn.InvalidModelError, match="only the means"):
        sys_.fork_join(2, structure="forkjoin_overlap").response_time_quantile(0.9)
    with pytest.raises(qn.InvalidModelError, match="throughput is unbounded"):
        fork_join_overlap([("cpu", 0.0), ("link", 0.0)], 0.0, "link", 3, "read", 2, 0.0)
    with pytest.raises(qn.InvalidModelError, match="chunk index"):
        last_chunk_departure(1.0, 1.0, 3, j=4)
