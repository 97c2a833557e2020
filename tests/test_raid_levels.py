"""One table of RAID levels: the seed-002 byte factors and the seed-003 speedup model read the
same rules, and the rules are the published ones (Chen et al. 1994, sec. 3; Cui et al. 2006,
eqs. 4-5)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import qnmodel as qn
from qnmodel import raid_levels
from qnmodel.errors import InvalidModelError


def test_both_models_read_the_one_table():
    assert qn.raid.LEVELS is raid_levels.RAID_LEVELS
    assert qn.demands.RAID_LEVELS is raid_levels.RAID_LEVELS
    assert qn.raid.OPS is raid_levels.OPERATIONS is qn.demands.OPERATIONS
    assert dict(qn.raid.MIN_DISKS) == {n: lv.min_disks for n, lv in raid_levels.RAID.items()}
    assert dict(qn.demands.MIN_STRIPE_WIDTH) == {
        n: lv.min_stripe_width for n, lv in raid_levels.RAID.items()
    }


@pytest.mark.parametrize(
    ("level", "n", "data", "penalty"),
    [
        ("raid0", 4, 4, 1),
        ("raid1", 3, 1, 3),  # every mirror is written
        ("raid10", 6, 3, 2),
        ("raid5", 5, 4, 4),  # read data and parity, write both
        ("raid6", 6, 4, 6),
    ],
)
def test_capacity_and_write_penalty_are_the_published_ones(level, n, data, penalty):
    assert qn.raid.capacity_fraction(level, n) == pytest.approx(data / n, rel=1e-15)
    assert qn.raid.write_penalty(level, n) == penalty
    assert raid_levels.RAID[level].data_disks(n) == data


@pytest.mark.parametrize(
    ("level", "width", "factor"),
    [
        ("raid0", 3, Fraction(1)),
        ("raid1", 2, Fraction(2)),
        ("raid10", 4, Fraction(2)),
        ("raid5", 3, Fraction(3, 2)),  # Cui 2006 eq. (4): STP / (STP - 1)
        ("raid6", 5, Fraction(5, 3)),
    ],
)
def test_write_byte_factors(level, width, factor):
    assert float(qn.demands.raid_byte_factor(level, "write", width)) == float(factor)
    assert float(qn.demands.raid_byte_factor(level, "read", width)) == 1.0
    # eq. (4) multiplied first: exact for integral sizes
    assert float(qn.demands.raid_bytes(3 * 2**20, level, "write", width)) == float(
        factor * 3 * 2**20
    )


def test_level_rules_are_enforced_from_the_table():
    with pytest.raises(InvalidModelError, match="stripe_width \\(STP_m\\) must be 2 for raid1"):
        qn.demands.raid_byte_factor("raid1", "write", 3)
    with pytest.raises(InvalidModelError, match="disks must be even for raid10"):
        qn.raid.capacity_fraction("raid10", 5)
    with pytest.raises(InvalidModelError, match="level must be one of"):
        raid_levels.raid_level("raid7")
    np.testing.assert_array_equal(
        qn.demands.raid_byte_factor("raid6", "write", np.array([3, 4, 6])), [3.0, 2.0, 1.5]
    )
