"""Each demand kernel of seed 002 (Cui et al. 2006) against hand-computed numbers."""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest

from qnmodel import demands as d
from qnmodel.errors import InvalidModelError

REL = 1e-12


def close(a, b):
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=REL, atol=0)


# -- eqs. (4)-(5) and the generalised byte factor -------------------------------------------
@pytest.mark.parametrize(
    ("raid", "op", "stp", "factor"),
    [
        ("raid5", "write", 3, F(3, 2)),  # eq. (4) with the paper's STP_m = 3
        ("raid5", "write", 5, F(5, 4)),
        ("raid5", "read", 3, F(1)),  # eq. (5)
        ("raid6", "write", 6, F(6, 4)),
        ("raid6", "read", 6, F(1)),
        ("raid0", "write", 4, F(1)),
        ("raid0", "read", 1, F(1)),
        ("raid1", "write", 2, F(2)),
        ("raid1", "read", 2, F(1)),
        ("raid10", "write", 4, F(2)),
        ("raid10", "read", 4, F(1)),
    ],
)
def test_raid_byte_factor_table(raid, op, stp, factor):
    assert float(d.raid_byte_factor(raid, op, stp)) == float(factor)
    assert float(d.raid_bytes(1_000_000, raid, op, stp)) == float(1_000_000 * factor)


def test_raid5_write_bytes_of_the_test_bed():
    # 200 MB over 3 units per stripe: 2 data + 1 parity -> 300 MB on the wire.
    assert float(d.raid_bytes(200e6, "raid5", "write", 3)) == 300e6
    assert float(d.server_bytes(300e6, 3)) == 100e6


def test_byte_factor_broadcasts_over_widths():
    w = np.array([3, 4, 5, 8])
    np.testing.assert_allclose(d.raid_byte_factor("raid5", "write", w), w / (w - 1), rtol=0)
    np.testing.assert_allclose(d.raid_byte_factor("raid6", "write", w), w / (w - 2), rtol=0)
    assert d.raid_bytes(np.array([[1.0], [2.0]]), "raid5", "write", w).shape == (2, 4)


@pytest.mark.parametrize(
    ("raid", "stp", "match"),
    [
        ("raid5", 1, r"stripe_width \(STP_m\) must be an integer >= 2"),
        ("raid6", 2, r"stripe_width \(STP_m\) must be an integer >= 3"),
        ("raid1", 3, r"must be 2 for raid1"),
        ("raid5", 2.5, r"integer >= 2, got 2.5"),
    ],
)
def test_stripe_width_domain(raid, stp, match):
    with pytest.raises(InvalidModelError, match=match):
        d.raid_byte_factor(raid, "write", stp)


def test_unknown_level_and_op():
    with pytest.raises(InvalidModelError, match="raid must be one of"):
        d.raid_bytes(1e6, "raid7", "write", 3)
    with pytest.raises(InvalidModelError, match="op must be one of"):
        d.raid_bytes(1e6, "raid5", "append", 3)


# -- eq. (3) --------------------------------------------------------------------------------
def test_ip_packets_is_a_ceiling():
    assert float(d.ip_packets(300e6, 1460)) == math.ceil(F(300_000_000, 1460)) == 205480
    assert float(d.ip_packets(1460 * 7, 1460)) == 7  # exact multiple: no extra packet
    assert float(d.ip_packets(1460 * 7 + 1, 1460)) == 8
    assert float(d.ip_packets(0, 1460)) == 0
    assert float(d.server_ip_packets(205480, 3)) == 205480 / 3


# -- eq. (2) --------------------------------------------------------------------------------
def test_master_cpu_eq2():
    # T_mpro * S_m/STU_m + (1-P_m) T_mp IP_num with round numbers
    got = d.master_cpu_demand(
        job_size=1_638_400, stripe_unit=16384, master_time_per_unit=2e-5, packets=1000,
        master_time_per_packet=4e-5, master_cache_hit=0.25,
    )  # fmt: skip
    want = F("2e-5") * 100 + F(3, 4) * F("4e-5") * 1000
    assert close(got, float(want))


def test_master_cpu_unit_term_is_paid_on_hits():
    # a full hit still pays T_mpro per unit (memory copy), never the packet term
    got = d.master_cpu_demand(16384 * 10, 16384, 1e-3, 50, 1.0, master_cache_hit=1.0)
    assert close(got, 10e-3)


# -- eq. (6) --------------------------------------------------------------------------------
def test_server_cpu_eq6_and_readings():
    args = dict(
        server_bytes=16384 * 30, stripe_unit=16384, server_time_per_unit=1e-4,
        server_packets=200, server_time_per_packet=2e-5, stripe_width=3, master_cache_hit=0.5,
    )  # fmt: skip
    inner = F("1e-4") * 30 + F("2e-5") * 200
    assert close(d.server_cpu_demand(**args), float(F(1, 2) * F(1, 3) * inner))
    assert close(d.server_cpu_demand(**args, server_terms="one_server"), float(F(1, 2) * inner))
    assert close(d.server_cpu_demand(**args, server_terms="all_servers"), float(F(3, 2) * inner))


# -- eqs. (7), (8), (9) ---------------------------------------------------------------------
def test_master_nic_eq7():
    got = d.master_nic_demand(packets=205480, frame_size=1518, link_rate=12.5e6)
    assert close(got, float(F(205480 * 1518) / F(12_500_000)))
    got = d.master_nic_demand(205480, 1518, 12.5e6, master_cache_hit=0.4)
    assert close(got, float(F(3, 5) * F(205480 * 1518) / F(12_500_000)))


def test_server_nic_eq8():
    got = d.server_nic_demand(205480 / 3, 1518, 12.5e6, 3, master_cache_hit=0.0)
    assert close(got, float(F(1, 3) * F(205480, 3) * 1518 / F(12_500_000)))


def test_network_eq9():
    assert close(d.network_demand(300e6, 12.5e6), 24.0)
    assert close(d.network_demand(300e6, 125e6, master_cache_hit=0.5), 1.2)


# -- eq. (10) -------------------------------------------------------------------------------
def test_disk_eq10():
    t_unit = F("4.9e-3") + F("2.99e-3") + F(16384, 35_000_000)
    assert close(d.disk_unit_time(4.9e-3, 2.99e-3, 16384, 35e6), float(t_unit))
    got = d.disk_demand(100e6, 16384, 4.9e-3, 2.99e-3, 35e6, 3, 0.2, 0.5)
    want = F(4, 5) * F(1, 3) * F(1, 2) * t_unit * F(100_000_000, 16384)
    assert close(got, float(want))


def test_kernels_broadcast_over_a_grid():
    rate = np.array([1.25e6, 12.5e6, 125e6])[:, None]
    hit = np.array([0.0, 0.5, 0.9])[None, :]
    got = d.network_demand(300e6, rate, hit)
    assert got.shape == (3, 3)
    np.testing.assert_allclose(got, (1 - hit) * 300e6 / rate, rtol=1e-15)


def test_kernels_take_unit_strings_at_the_public_boundary():
    """qn.demands accepts "100 Mbit/s", "16 KiB", "4.9 ms" like every public function."""
    assert d.network_demand("200 MB", "100 Mbit/s") == d.network_demand(200e6, 12.5e6)
    assert d.disk_unit_time("4.9 ms", "2.99 ms", "16 KiB", "35 MB/s") == pytest.approx(
        d.disk_unit_time(4.9e-3, 2.99e-3, 16384, 35e6), rel=1e-15
    )
    grid = d.network_demand(1e6, ["100 Mbit/s", "1 Gbit/s", 1.25e9])
    np.testing.assert_allclose(grid, [0.08, 0.008, 0.0008], rtol=1e-15)


# -- validation -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: d.network_demand(-1.0, 12.5e6), r"raid_bytes \(S_mRi\) must be finite and >= 0"),
        (lambda: d.network_demand(1.0, 0.0), r"link_rate \(TRate_e\) must be finite and > 0"),
        (lambda: d.network_demand(1.0, np.nan), r"link_rate \(TRate_e\) must be finite"),
        (lambda: d.network_demand(1.0, 1.0, 1.5), r"master_cache_hit \(P_m\) must be a prob"),
        (lambda: d.network_demand(1.0, "100 Mb/s"), r"link_rate \(TRate_e\).*ambiguous"),
        (lambda: d.network_demand(1.0, "100 ms"), r"link_rate \(TRate_e\).*is a time"),
        (lambda: d.network_demand(1.0, ["1 Gbit/s", "5 s"]), r"link_rate \(TRate_e\)\[1\]"),
        (lambda: d.server_ip_packets("4 KiB", 3), r"packets \(IP_num\) is a count"),
        (lambda: d.network_demand(1.0, 1.0, "0.5"), r"master_cache_hit.*as a number"),
        (lambda: d.ip_packets(1.0, 0), r"mss \(MSS\) must be finite and > 0"),
        (lambda: d.server_visit_ratio(3, "half"), r"server_terms must be one of"),
    ],
)
def test_kernel_errors_name_the_argument(call, match):
    with pytest.raises(InvalidModelError, match=match):
        call()
