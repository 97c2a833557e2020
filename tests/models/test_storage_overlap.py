"""The overlapped NetworkedRAID (qnmodel.models.storage_overlap), closed and open, and its bounds.

References: the closed forms of a lone request (derived in test_storage_forkjoin_overlap.py),
M/G/1-PS and M/M/1 limits, and the event simulation of the overlapped system
(qnmodel.simulate_storage: pipelined transfers through two max-min fair links, FCFS
exponential disks), over disk/link demand ratios 1/4 .. 4. The tolerances are the measured
errors (docs/explanation/overlap.md) plus the simulation's 95 % half-width.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError
from qnmodel.models.storage_overlap import (
    METHOD_OPEN,
    OverlapParts,
    isolated_time,
    open_overlap,
    overlap_bounds,
    overlap_parts,
    serial_time,
)

sys.path.insert(0, str(Path(__file__).parent))
from overlap_table import simulate_storage  # noqa: E402

C, CHUNK, CPU = 0.5e-3, 65536.0, 0.05e-3  # a chunk's link time, its size, master CPU per request


def raid(op="read", level="raid0", servers=3, chunks=None, **kw):
    data = servers - 1 if level == "raid5" else servers
    base = dict(job_size=(chunks or data) * 65536, stripe_unit=65536, stripe_width=servers,
                master_time_per_unit=30e-6, master_time_per_packet=0.0,
                server_time_per_unit=0.0, server_time_per_packet=0.0, link_rate=125e6,
                disk_seek=0.0, disk_latency=0.0, disk_rate=65536 / 2.155e-3, mss=1448.0,
                frame_size=1514.0, raid=level, op=op, server_terms="one_server")  # fmt: skip
    base.update(kw)
    return qn.NetworkedRAID(**base)


def k3(d, c):
    return d / 3 + 3 * c + 2.5 * d * math.exp(-2 * c / d) - d * math.exp(-3 * c / d)


def parts(ratio, op="read", k=3, K=3):
    link = "link_in" if op == "read" else "link_out"
    return OverlapParts((("cpu_master", CPU), (link, k * C)), link, ratio * C, k, K, op)


def spec(ratio, op="read", level="raid0", K=3):
    return dict(members=K, disk_time=ratio * C, chunk_size=CHUNK, link_rate=CHUNK / C,
                serial=[CPU], op=op, raid=level)  # fmt: skip


def test_parts_of_networked_raid():
    s = raid()
    p = overlap_parts(s)
    dm = s.demands()
    assert (p.k, p.members, p.op, p.link) == (3, 3, "read", "link_in")
    assert p.member == pytest.approx(2.155e-3, rel=1e-12)  # one chunk on one disk
    assert p.chunk_time == pytest.approx(dm["link_in"] / 3, rel=1e-12)
    # RAID5 full-stripe read: 3 data chunks on 3 of 4 members, each a whole chunk
    p5 = overlap_parts(raid(level="raid5", servers=4))
    assert (p5.k, p5.members) == (3, 4)
    assert p5.member == pytest.approx(2.155e-3, rel=1e-12)
    # RAID5 full-stripe write: data and parity, one chunk on every member
    pw = overlap_parts(raid("write", level="raid5", servers=4))
    assert (pw.k, pw.members, pw.link) == (4, 4, "link_out")


def test_parts_of_a_read_modify_write():
    # a one-chunk RAID5 write: its data chunk and the parity, read back then written, on 2
    # of 4 members, one chunk per member and phase; both master links inside the fork
    s = raid("write", level="raid5", servers=4, chunks=1)
    p = overlap_parts(s, disk_scv=0.0)
    assert (p.k, p.members, p.op, p.scv) == (2, 4, "read_modify_write", 0.0)
    assert p.phases == (("link_in", "read"), ("link_out", "write"))
    assert p.member == pytest.approx(2.155e-3, rel=1e-12)
    # the disk's demand per member: 2 chunks x 2 phases over 4 members, one member's d each
    assert s.demands()["disk"] == pytest.approx(p.member * 2 * 2 / 4, rel=1e-12)


def test_parts_refuse_what_they_do_not_model():
    with pytest.raises(InvalidModelError, match="disk_scv must be finite and >= 0"):
        overlap_parts(raid(), disk_scv=-1.0)
    with pytest.raises(InvalidModelError, match="at most one stripe's data \\(3 chunks\\)"):
        overlap_parts(raid(chunks=4))
    with pytest.raises(InvalidModelError, match="needs form='corrected'"):
        overlap_parts(raid(form="paper"))


def test_isolated_time_is_the_closed_form_and_below_the_serial_time():
    p = parts(2.0)
    assert isolated_time(p) == pytest.approx(CPU + k3(2 * C, C), rel=1e-12)
    assert serial_time(p) == pytest.approx(CPU + 3 * C + 2 * C * (1 + 1 / 2 + 1 / 3), rel=1e-12)
    for ratio in (0.25, 1.0, 4.0):
        for op in ("read", "write"):
            assert isolated_time(parts(ratio, op)) < serial_time(parts(ratio, op))
    # writes: chunk j leaves the link at j c, then its member serves it
    # members of (almost) no time: the last chunk's transfer
    assert isolated_time(parts(1e-4, "write")) == pytest.approx(CPU + 3 * C, rel=1e-4)


def test_isolated_time_of_constant_disks_and_read_modify_writes():
    d, c = 2 * C, C
    # constant members: every member is done at d, then the k chunks one after another
    for op in ("read", "write"):
        p = OverlapParts((("cpu_master", CPU), ("l", 3 * c)), "l", d, 3, 3, op, 0.0)
        assert isolated_time(p) == pytest.approx(CPU + d + 3 * c, rel=1e-12)
        assert serial_time(p) == pytest.approx(CPU + d + 3 * c, rel=1e-12)
    st = (("cpu_master", CPU), ("link_in", 2 * c), ("link_out", 2 * c))
    rmw = OverlapParts(st, "link_in", d, 2, 4, "read_modify_write", 0.0)
    assert isolated_time(rmw) == pytest.approx(CPU + 2 * (d + 2 * c), rel=1e-12)
    # exponential members: the read phase's K = 2 closed form d/2 + 2c + d exp(-c/d), then
    # the write phase E[max(c + E_1, 2c + E_2)] = 2c + d + d/2 exp(-c/d)
    rmw1 = OverlapParts(st, "link_in", d, 2, 4, "read_modify_write", 1.0)
    want = CPU + (d / 2 + 2 * c + d * math.exp(-c / d)) + (2 * c + d + d / 2 * math.exp(-c / d))
    assert isolated_time(rmw1) == pytest.approx(want, rel=1e-9)


def test_lognormal_members_reduce_to_the_maximum_and_to_the_mean():
    from scipy.integrate import quad
    from scipy.stats import lognorm

    from qnmodel.models.storage_forkjoin import expected_max, last_chunk_departure

    d, scv = 1e-3, 0.5
    sigma = math.sqrt(math.log1p(scv))
    law = lognorm(s=sigma, scale=d * math.exp(-(sigma**2) / 2))
    emax = quad(lambda t: 1 - law.cdf(t) ** 3, 0, np.inf, epsabs=1e-14)[0]
    assert expected_max(d, np.zeros(3), scv) == pytest.approx(emax, rel=1e-7)
    assert expected_max(d, [0.2e-3], scv) == pytest.approx(d + 0.2e-3, rel=1e-7)
    # a link of (almost) no time: the last chunk leaves with the last member
    assert last_chunk_departure(d, 1e-12, 3, scv=scv) == pytest.approx(emax, rel=1e-7)
    # a link much slower than the members: the first member, then the 3 chunks in turn
    e1 = quad(lambda t: (1 - law.cdf(t)) ** 3, 0, np.inf, epsabs=1e-14)[0]
    assert last_chunk_departure(d, 1.0, 3, scv=scv) == pytest.approx(e1 + 3.0, rel=1e-9)


def test_closed_n1_and_open_light_load_are_the_isolated_time():
    s = raid()
    r0 = isolated_time(overlap_parts(s))
    closed = s.overlap(4)
    assert closed.response_time[0] == pytest.approx(r0, rel=1e-12)
    assert "approximate" in closed.method
    lam = 1e-6
    o = s.overlap(arrival_rate=lam)
    assert o.method == METHOD_OPEN and "approximate" in o.method
    assert o.response_time[0] == pytest.approx(r0, rel=1e-4)
    # Little's law on the open row
    assert o.n[0] == pytest.approx(lam * o.response_time[0], rel=1e-12)


def test_open_link_alone_is_mg1_processor_sharing():
    # members of no time: the request's k chunks share the link as one job of k c
    # (M/G/1-PS, E[T] = x / (1 - rho), [Kle76] sec. 4.4), the CPU is M/M/1
    p = parts(1e-9)
    lam = 400.0
    got = open_overlap(p, lam).response_time[0]
    want = CPU / (1 - lam * CPU) + 3 * C / (1 - lam * 3 * C)
    assert got == pytest.approx(want, rel=1e-6)


def test_open_refuses_constant_disks_and_read_modify_writes():
    with pytest.raises(InvalidModelError, match="open overlapped model takes exponential .* "
                       r"scv=0: simulate the open system with NetworkedRAID.simulate\(arrival_rate"
                       r"=\.\.\.\), or use the closed overlap"):  # fmt: skip
        raid().overlap(arrival_rate=10.0, disk_scv=0.0)
    rmw = raid("write", level="raid5", servers=4, chunks=1)
    with pytest.raises(InvalidModelError, match="op='read_modify_write'"):
        rmw.overlap(arrival_rate=10.0)
    # ... and the simulation named there answers for both
    for system, scv in ((raid(), 0.0), (rmw, 1.0)):
        s = system.simulate(arrival_rate=10.0, disk_scv=scv, jobs=500, reps=2)
        assert s.response_time[0] > 0 and s.throughput[0] == pytest.approx(10.0, rel=0.15)


def test_open_refuses_a_saturated_rate():
    with pytest.raises(InvalidModelError, match="saturates link_in .* give a rate below 666.6"):
        open_overlap(parts(1.0), 700.0)
    with pytest.raises(InvalidModelError, match="give exactly one of N"):
        raid().overlap(4, arrival_rate=10.0)


# the measured grid, a quick subset: (ratio d/c, op, RAID level, members, N), error bound
CLOSED = [
    (0.25, "read", "raid0", 3, 2, 0.02),
    (1.0, "read", "raid0", 3, 2, 0.05),
    (4.0, "read", "raid0", 3, 4, 0.04),
    (1.0, "write", "raid0", 3, 4, 0.03),
    (4.0, "write", "raid0", 3, 8, 0.04),
    (4.0, "read", "raid5", 4, 4, 0.06),
]


@pytest.mark.parametrize("ratio, op, level, K, N, err", CLOSED)
def test_closed_against_the_simulation_and_inside_the_bounds(ratio, op, level, K, N, err):
    k = K - 1 if level == "raid5" else K
    p = parts(ratio, op, k, K)
    from qnmodel.models.storage_forkjoin import fork_join_overlap

    m = fork_join_overlap(list(p.stations), p.member, p.link, k, op, N, 0.0, members=K)
    sim = simulate_storage(spec(ratio, op, level, K), N=N, jobs=3000, reps=3, seed=7)
    r = m.response_time[N - 1]
    assert abs(r / sim["R"] - 1.0) <= err + sim["R_hw"] / sim["R"]
    b = overlap_bounds(p, N)
    assert b.response_time_lower[N - 1] <= sim["R"] + sim["R_hw"]
    assert sim["R"] - sim["R_hw"] <= b.response_time_upper[N - 1]
    assert b.throughput_lower[N - 1] <= sim["X"] + sim["X_hw"]
    assert sim["X"] - sim["X_hw"] <= b.throughput_upper[N - 1]


# constant disks and RAID5 read-modify-writes (docs/explanation/overlap.md, second table):
# (ratio d/c, case, law, N), error bound
LAWS = [
    (2.0, ("raid0", "write", 3, 3), "const", 2, 0.03),
    (0.5, ("raid0", "read", 3, 3), "const", 2, 0.02),
    (2.0, ("raid5", "rmw", 4, 2), "exp", 1, 0.01),
    (0.5, ("raid5", "rmw", 4, 2), "const", 1, 0.01),
    (0.5, ("raid5", "rmw", 4, 2), "const", 4, 0.17),
]


@pytest.mark.parametrize("ratio, case, law, N, err", LAWS)
def test_closed_constant_disks_and_read_modify_writes_against_the_simulation(ratio, case, law,
                                                                              N, err):  # fmt: skip
    from overlap_table import case_parts, case_spec

    from qnmodel.models.storage_forkjoin import fork_join_overlap

    p = case_parts(*case, law, ratio * C)
    m = fork_join_overlap(list(p.stations), p.member, p.link, p.k, p.phases[0][1], N, 0.0,
                          members=p.members, scv=p.scv, phases=p.phases)  # fmt: skip
    sim = simulate_storage(case_spec(*case, law, ratio * C), N=N, jobs=2000, reps=3, seed=5)
    r = m.response_time[N - 1]
    assert abs(r / sim["R"] - 1.0) <= err + sim["R_hw"] / sim["R"]
    b = overlap_bounds(p, N)
    assert b.response_time_lower[N - 1] <= sim["R"] + sim["R_hw"]
    assert sim["R"] - sim["R_hw"] <= b.response_time_upper[N - 1]


OPEN = [
    (0.25, "read", "raid0", 3, 0.6, 0.04),
    (4.0, "read", "raid0", 3, 0.6, 0.04),
    (1.0, "write", "raid0", 3, 0.6, 0.04),
    (4.0, "write", "raid0", 3, 0.3, 0.04),
    (1.0, "read", "raid5", 4, 0.3, 0.06),
]


@pytest.mark.parametrize("ratio, op, level, K, load, err", OPEN)
def test_open_against_the_simulation(ratio, op, level, K, load, err):
    k = K - 1 if level == "raid5" else K
    p = parts(ratio, op, k, K)
    dmax = max(CPU, k * C, ratio * C * k / K)
    lam = load / dmax
    r = open_overlap(p, lam).response_time[0]
    sim = simulate_storage(spec(ratio, op, level, K), arrival_rate=lam, jobs=4000, reps=3,
                           seed=11)  # fmt: skip
    assert abs(r / sim["R"] - 1.0) <= err + sim["R_hw"] / sim["R"]
    assert sim["R"] + sim["R_hw"] >= isolated_time(p)  # never faster than alone


def test_bounds_start_at_the_overlapped_isolated_time():
    s = raid()
    p = overlap_parts(s)
    b = overlap_bounds(p, 8)
    assert b.response_time_lower[0] == pytest.approx(isolated_time(p), rel=1e-12)
    assert "overlap bounds" in b.method
    assert np.all(b.response_time_lower <= b.response_time_upper)
    assert np.all(b.throughput_lower <= b.throughput_upper)
    # a link-bound request (d = c / 4): the product-form floor, the sum of the demands
    # (BJB's R(1)), lies above the overlapped lone request's time, which is the true floor
    q = parts(0.25)
    assert CPU + 3 * C + 0.25 * C > isolated_time(q) == overlap_bounds(q, 1).response_time_lower[0]
