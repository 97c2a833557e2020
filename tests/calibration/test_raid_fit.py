"""Fit of RAID speedup/efficiency against block size (qnmodel.calibration.raid)."""

from __future__ import annotations

import numpy as np
import pytest

from qnmodel.calibration.raid import fit_raid_speedup, raid_speedup_curve
from qnmodel.errors import InvalidModelError, MeasurementArtefactWarning

from .._tol import closed_form, exact_fit

B = np.array([4096 * 4**k for k in range(5)] + [2 * 2**20], dtype=float)


def test_curve_limits_and_crossover():
    # S -> s0 for small blocks, s_inf for large ones, halfway (in 1/S) at B = B_m
    # with x = B / B_m: S / s0 - 1 = x (1 - s0/s_inf) / (1 + x s0/s_inf), at most x |1 - s0/s_inf|
    # (5e-11 here, reached); S / s_inf - 1 = (1 - s_inf/s0) / (x + s_inf/s0) < (1 - s_inf/s0) / x
    x, big = 1e-6 / 1e5, 1e15 / 1e5
    assert raid_speedup_curve(1e-6, 3.0, 0.5, 1e5) == pytest.approx(
        3.0, rel=x * abs(1 - 3.0 / 0.5) + closed_form(5)
    )
    assert raid_speedup_curve(1e15, 3.0, 0.5, 1e5) == pytest.approx(
        0.5, rel=(1 - 0.5 / 3.0) / big + closed_form(5)
    )
    assert raid_speedup_curve(1e5, 3.0, 0.5, 1e5) == pytest.approx(
        2 / (1 / 3 + 1 / 0.5), rel=closed_form(5)
    )


def test_fit_recovers_the_emulated_array_exactly():
    # two affine costs: single a + B/r, array a/s0 + B/(r s_inf) (a = 0.1 ms, r = 1 GB/s)
    a, r, s0, sinf = 1e-4, 1e9, 3.9, 0.62
    S = (a + B / r) / (a / s0 + B / (r * sinf))
    res = fit_raid_speedup(B, S, level="raid0", disks=4, op="read", pattern="sequential")
    # noise-free data: the fit's rounding floor (2.0e-14; measured 4.4e-16); E0 = s0 / T
    # divides by a power of two, exactly
    truth = {"s0": s0, "s_inf": sinf, "B_m": a * r}
    tol = exact_fit(raid_speedup_curve, B, truth, ops=6)
    for k, v in truth.items():
        assert res.values[k] == pytest.approx(v, rel=tol), k
    assert res.values["E0"] == pytest.approx(s0 / 4, rel=tol) and res.extra["T"] == 4.0


def test_intervals_cover_under_noise_and_artefacts_are_dropped():
    rng = np.random.default_rng(3)
    S = raid_speedup_curve(B, 2.5, 3.4, 3e5) * (1 + 0.02 * rng.standard_normal(B.size))
    res = fit_raid_speedup(B, S, level="raid0", disks=4, op="read", pattern="sequential")
    lo, hi = res.confidence_intervals["E_inf"]
    assert lo < 3.4 / 4 < hi and hi - lo < 0.5  # 6 points, 3 parameters: 3 dof
    # RAID5 sequential read: T = N - 1 = 3; a speedup of 3.6 is E = 1.2, an artefact
    S5 = np.append(S, 3.6)
    B5 = np.append(B, 4 * 2**20)
    with pytest.warns(MeasurementArtefactWarning, match="E = 1.2"):
        res5 = fit_raid_speedup(B5, S5, level="raid5", disks=4, op="read", pattern="sequential")
    assert res5.extra["artefact"][-1] is True
    assert res5.ndata == np.sum(S5 / 3 <= 1)
    assert any("left out of the fit" in w for w in res5.warnings)


def test_bad_input():
    with pytest.raises(InvalidModelError, match="one speedup per block size"):
        fit_raid_speedup(B, [1.0, 2.0], level="raid0", disks=4, op="read", pattern="sequential")
    with pytest.raises(InvalidModelError, match="at least 4 distinct block sizes"):
        fit_raid_speedup(B[:3], [1, 2, 3], level="raid0", disks=4, op="read", pattern="sequential")
