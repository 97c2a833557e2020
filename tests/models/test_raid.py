"""RAID accelerator model: theoretical speedup, efficiency, penalty, capacity, demands."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qnmodel as qn
from qnmodel.demands.raid_bytes import raid_byte_factor
from qnmodel.errors import InvalidModelError, InvalidTypeError, MeasurementArtefactWarning
from qnmodel.models import raid
from qnmodel.models.raid import (
    LEVELS,
    MIN_DISKS,
    OPS,
    PATTERNS,
    capacity_fraction,
    disk_demand_multipliers,
    disk_demands,
    efficiency,
    measured_speedup,
    speedup_table,
    theoretical_speedup,
    usable_capacity,
    write_penalty,
)

from .._tol import closed_form, exact_mva

# --------------------------------------------------------------------------- table values
# SPEC sec. 5 / Intel VROC: N disks
SPEC_VALUES = [
    ("raid0", "read", "random", 6, 6),
    ("raid5", "read", "random", 6, 6),
    ("raid10", "read", "random", 6, 6),
    ("raid1", "read", "random", 2, 2),
    ("raid0", "write", "random", 6, 6),
    ("raid10", "write", "random", 6, 3),
    ("raid1", "write", "random", 2, 1),
    ("raid5", "write", "random", 6, 1.5),
    ("raid6", "write", "random", 6, 1),
    ("raid0", "read", "sequential", 6, 6),
    ("raid0", "write", "sequential", 6, 6),
    ("raid5", "read", "sequential", 6, 5),
    ("raid5", "write", "sequential", 6, 5),
]


@pytest.mark.parametrize(("level", "op", "pattern", "n", "T"), SPEC_VALUES)
def test_table_matches_spec_and_vroc(level, op, pattern, n, T):
    assert theoretical_speedup(level, n, op, pattern) == T


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_one_disk_raid0_is_the_disk_and_n_disks_give_n(op, pattern):
    assert theoretical_speedup("raid0", 1, op, pattern) == 1.0
    for n in range(1, 33):
        assert theoretical_speedup("raid0", n, op, pattern) == n


def test_derived_entries_follow_the_same_rule():
    assert theoretical_speedup("raid6", 8, "read", "sequential") == 6
    assert theoretical_speedup("raid6", 8, "write", "sequential") == 6
    assert theoretical_speedup("raid10", 8, "write", "sequential") == 4
    assert theoretical_speedup("raid1", 3, "read", "sequential") == 3
    assert theoretical_speedup("raid1", 3, "write", "sequential") == 1


@pytest.mark.parametrize("level", LEVELS)
def test_random_write_speedup_is_n_over_write_penalty(level):
    n = 12 if level != "raid1" else 2
    assert theoretical_speedup(level, n, "write", "random") == n / write_penalty(level, n)


def test_write_penalties():
    assert [write_penalty(lv, 4) for lv in ("raid0", "raid10", "raid5", "raid6")] == [1, 2, 4, 6]
    assert write_penalty("raid1", 2) == 2 and write_penalty("raid1", 3) == 3
    assert write_penalty("raid5") == 4
    with pytest.raises(InvalidModelError, match="disks is required for raid1"):
        write_penalty("raid1")


def test_table_override_and_fallback():
    tab = {("raid0", "write", "random"): lambda n: 0.9 * n, ("raid5", "write", "random"): 0.5}
    assert theoretical_speedup("raid0", 4, "write", "random", table=tab) == pytest.approx(
        3.6, rel=closed_form(1)
    )
    assert theoretical_speedup("raid5", 8, "write", "random", table=tab) == 0.5
    assert theoretical_speedup("raid0", 4, "read", "random", table=tab) == 4  # default kept
    full = speedup_table(tab)
    assert len(full) == len(LEVELS) * 4 and full[("raid5", "write", "random")] == 0.5
    with pytest.raises(TypeError):
        raid.SPEEDUP_TABLE[("raid0", "read", "random")] = 1  # the default is read-only


def test_table_override_errors():
    with pytest.raises(InvalidModelError, match=r"table key \('raid50', 'read', 'random'\)"):
        theoretical_speedup("raid0", 2, "read", "random", table={("raid50", "read", "random"): 1})
    with pytest.raises(InvalidModelError, match=r"a speedup must be finite and > 0"):
        theoretical_speedup("raid0", 2, "read", "random", table={("raid0", "read", "random"): 0})
    with pytest.raises(InvalidTypeError, match=r"must be a number or a callable"):
        theoretical_speedup("raid0", 2, "read", "random", table={("raid0", "read", "random"): "N"})


# --------------------------------------------------------------------------- bad input
def test_error_unknown_level():
    with pytest.raises(
        InvalidModelError,
        match=r"level must be one of 'raid0', 'raid1', 'raid10', 'raid5', 'raid6'; got 'raid7'",
    ):
        theoretical_speedup("raid7", 4, "read", "random")


def test_error_level_is_case_sensitive():
    with pytest.raises(InvalidModelError, match=r"level must be one of .*got 'RAID5'"):
        theoretical_speedup("RAID5", 4, "read", "random")


@pytest.mark.parametrize("level", LEVELS)
def test_error_disks_below_the_minimum(level):
    lo = MIN_DISKS[level]
    with pytest.raises(
        InvalidModelError, match=rf"disks must be >= {lo} for {level}, got {lo - 1}"
    ):
        theoretical_speedup(level, lo - 1, "read", "random")


def test_error_raid10_odd_disks():
    with pytest.raises(
        InvalidModelError, match=r"disks must be even for raid10.*got 5; use 4 or 6"
    ):
        theoretical_speedup("raid10", 5, "read", "random")


def test_error_disks_not_an_integer():
    with pytest.raises(
        InvalidModelError, match=r"disks must be an integer >= 3 for raid5, got 3.5"
    ):
        theoretical_speedup("raid5", 3.5, "read", "random")
    with pytest.raises(
        InvalidTypeError, match=r"disks must be an integer >= 3 for raid5, got True"
    ):
        theoretical_speedup("raid5", True, "read", "random")


def test_error_unknown_op_and_pattern():
    with pytest.raises(InvalidModelError, match=r"op must be one of 'read', 'write'; got 'trim'"):
        theoretical_speedup("raid0", 2, "trim", "random")
    with pytest.raises(InvalidModelError, match=r"pattern must be one of .*got 'mixed'"):
        theoretical_speedup("raid0", 2, "read", "mixed")


# --------------------------------------------------------------------------- efficiency
def test_efficiency_scalar():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = efficiency(4.6, 1.0, "raid0", 5, "write", "random")
    assert (r.speedup, r.theoretical) == (4.6, 5.0)
    assert r.efficiency == pytest.approx(0.92, rel=closed_form(2))
    assert r.artefact is False and not r.any_artefact
    assert "E=0.92" in repr(r)


def test_efficiency_above_one_warns_and_flags():
    with pytest.warns(MeasurementArtefactWarning, match=r"E = 1.154 > 1 for raid0 with 5 disks"):
        r = efficiency("5.77 GB/s", "1 GB/s", "raid0", 5, "read", "sequential")
    assert r.artefact is True and r.efficiency == pytest.approx(1.154, rel=closed_form(2))
    assert "ARTEFACT" in repr(r)


def test_efficiency_arrays_flag_only_the_bad_points():
    measured = np.array([380e3, 420e3, 520e3])
    with pytest.warns(MeasurementArtefactWarning, match="at 1 of 3 points"):
        r = efficiency(measured, 100e3, "raid5", 5, "read", "random")
    assert r.artefact.tolist() == [False, False, True]
    np.testing.assert_allclose(r.efficiency, [0.76, 0.84, 1.04], rtol=closed_form(2))


def test_efficiency_tolerance():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = efficiency(5.1, 1.0, "raid0", 5, "read", "random", tolerance=0.05)
    assert r.artefact is False
    with pytest.raises(InvalidModelError, match=r"tolerance must be finite and >= 0, got -0.1"):
        efficiency(5.1, 1.0, "raid0", 5, "read", "random", tolerance=-0.1)


def test_efficiency_bad_measurements():
    with pytest.raises(InvalidModelError, match=r"single must be finite and > 0, got 0.0"):
        efficiency(1.0, 0.0, "raid0", 2, "read", "random")
    with pytest.raises(InvalidModelError, match=r"measured\[1\] must be finite and > 0, got -1.0"):
        measured_speedup([1.0, -1.0], 1.0)
    with pytest.raises(InvalidModelError, match=r"measured is a rate but single is a frequency"):
        measured_speedup("1 GB/s", "1000 IOPS")
    with pytest.raises(InvalidTypeError, match=r"measured must be positive numbers"):
        measured_speedup(["fast"], 1.0)


# --------------------------------------------------------------------------- capacity, demands
def test_usable_capacity():
    assert usable_capacity("raid0", 4, "2 TB") == 8e12
    assert usable_capacity("raid1", 2, "2 TB") == 2e12
    assert usable_capacity("raid10", 8, "2 TB") == 8e12
    assert usable_capacity("raid5", 4, "2 TB") == 6e12
    assert usable_capacity("raid6", 6, "2 TB") == 8e12
    assert capacity_fraction("raid5", 5) == 0.8
    assert capacity_fraction("raid0", 1) == 1.0
    with pytest.raises(InvalidModelError, match=r"disk_size must be > 0, got 0"):
        usable_capacity("raid0", 2, 0)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_demand_multipliers_reproduce_the_speedup_through_mva(level, op, pattern):
    """N disk stations with demands D m_i saturate at T times one disk (bottleneck law)."""
    n = {"raid1": 2, "raid10": 4, "raid5": 4, "raid6": 6, "raid0": 3}[level]
    m = disk_demand_multipliers(level, n, op, pattern)
    T = theoretical_speedup(level, n, op, pattern)
    assert m.shape == (n,)
    assert m.sum() == pytest.approx(n / T, rel=closed_form(n + 1))
    D = 8e-3
    net = qn.Network.from_demands(list(D * m))
    N = 400
    x = qn.mva(net, N).throughput[-1]
    single = 1.0 / D
    # balanced network of n equal stations: X(N) = N / ((N + n - 1) D_i), D_i = D / T
    assert x / single == pytest.approx(T * N / (N + n - 1), rel=exact_mva(n) + closed_form(4))
    assert x / single <= T
    assert qn.bounds(net, N).saturation_throughput / single == pytest.approx(T, rel=1e-15)


def test_raid5_full_stripe_write_byte_factor():
    # sum of multipliers = N/(N-1): the STP/(STP-1) byte factor of the networked-RAID formulas
    assert disk_demand_multipliers("raid5", 3, "write", "sequential").sum() == pytest.approx(
        1.5, rel=closed_form(3)
    )
    np.testing.assert_allclose(
        disk_demands("8 ms", "raid5", 4, "write", "random"), [8e-3] * 4, rtol=closed_form(2)
    )
    np.testing.assert_allclose(
        disk_demands(0.006, "raid0", 3, "read", "random"), [2e-3] * 3, rtol=closed_form(2)
    )


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(LEVELS), st.integers(1, 64), st.sampled_from(OPS), st.sampled_from(PATTERNS))
def test_property_speedup_bounded_by_disks_and_monotone(level, n, op, pattern):
    lo = MIN_DISKS[level]
    n = max(n, lo)
    if level == "raid10" and n % 2:
        n += 1
    T = theoretical_speedup(level, n, op, pattern)
    assert 0 < T <= n
    step = 2 if level == "raid10" else 1
    assert theoretical_speedup(level, n + step, op, pattern) >= T


@pytest.mark.parametrize(
    ("level", "n"),
    [
        ("raid0", 3),
        ("raid1", 2),
        ("raid10", 4),
        ("raid10", 8),
        ("raid5", 3),
        ("raid5", 6),
        ("raid6", 4),
        ("raid6", 7),
    ],
)
def test_write_multipliers_sum_to_the_networked_raid_byte_factor(level, n):
    """Cross-check with the byte factors of the networked-RAID formulas (SPEC sec. 3)."""
    m = disk_demand_multipliers(level, n, "write", "sequential")
    assert m.sum() == pytest.approx(float(raid_byte_factor(level, "write", n)), rel=1e-15)
