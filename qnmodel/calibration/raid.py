"""Fit of a RAID array's speedup and efficiency against block size, with uncertainty.

Seed 003 (Chen et al., sec. 1.3.2) measures the speedup ``S(L, C, B) = array / single`` of a
level-L array with chunk C at block size B and its efficiency ``E = S / T`` against the
theoretical speedup T (:func:`qnmodel.models.raid.theoretical_speedup`). Both vary with B:
small blocks pay a fixed cost per request (positioning, the per-chunk overhead of splitting,
parity work) and large blocks pay transfer. With one affine cost per request on each side,
``t_single(B) = a + B/r`` and ``t_array(B) = a/s0 + B/(r s_inf)``, the speedup is a ratio of
two affine functions of B:

    S(B) = (1 + B / B_m) / (1 / s0 + B / (B_m s_inf))

``s0`` is the speedup of small blocks (B -> 0), ``s_inf`` that of large blocks (B -> inf) and
``B_m = a r`` the member's crossover size, where its positioning equals its transfer
(:func:`qnmodel.calibration.fit_device`). The efficiencies of the two regimes are derived:
``E0 = s0 / T`` and ``E_inf = s_inf / T``, with intervals by the delta method (or the
bootstrap, when a parameter ends on a bound).

Points with E > 1 (the measured speedup exceeds the theoretical one) are flagged with a
:class:`~qnmodel.errors.MeasurementArtefactWarning` by :func:`qnmodel.models.raid.efficiency`
and kept in the fit only with ``keep_artefacts=True``.

References
----------
.. [Chen] Chen X., Liu Y., Gao P., Xu J., performance tests of NVMe SSDs and Intel VROC RAID
   (seed 003): sec. 1.3.2 (S, T, E), sec. 2.2.1-2.2.2 (S and E against block and chunk size).
.. [NR] W. H. Press et al., *Numerical Recipes*, 3rd ed., 2007, sec. 15.5-15.6.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._validate import as_quantities, as_reals
from ..errors import InvalidModelError, MeasurementArtefactWarning
from ..models.raid import efficiency
from .fit import CalibrationResult, fit_model
from .parameters import Parameter, Parameters

__all__ = ["fit_raid_speedup", "raid_speedup_curve"]


def raid_speedup_curve(B: Any, s0: float, s_inf: float, B_m: float) -> np.ndarray:
    """``S(B) = (1 + B/B_m) / (1/s0 + B/(B_m s_inf))``: the speedup model of this module."""
    x = np.asarray(B, dtype=np.float64) / B_m
    return (1.0 + x) / (1.0 / s0 + x / s_inf)


def fit_raid_speedup(
    blocks: Any,
    speedup: Any,
    *,
    level: str,
    disks: int,
    op: str,
    pattern: str,
    keep_artefacts: bool = False,
    params: Any = None,
    ci_level: float = 0.95,
    uncertainty: str = "auto",
    n_boot: int = 200,
) -> CalibrationResult:
    """Fit ``s0``, ``s_inf`` and ``B_m`` to measured speedups S(B) of one array and chunk.

    Parameters
    ----------
    blocks : array_like
        Block sizes B (bytes or size strings), at least 4 distinct.
    speedup : array_like
        Measured S = array / single at each B (dimensionless, > 0).
    level, disks, op, pattern
        The array, for T (:func:`qnmodel.models.raid.theoretical_speedup`).
    keep_artefacts : bool
        Keep points with E = S/T > 1 in the fit (default: drop them, with a note).
    params : dict or Parameters, optional
        Overrides of the starting values/bounds.
    ci_level, uncertainty, n_boot
        See :func:`~qnmodel.calibration.fit.fit_model`.

    Returns
    -------
    CalibrationResult
        ``values``: ``s0``, ``s_inf``, ``B_m`` (bytes) and the derived ``E0``, ``E_inf``;
        ``extra``: ``T``, ``efficiency`` (E per point, all points) and ``artefact`` (bool
        per point).
    """
    B = as_quantities(blocks, "blocks", "size")
    S = as_reals(speedup, "speedup")
    if B.size != S.size:
        raise InvalidModelError(
            f"blocks has {B.size} values but speedup has {S.size}: one speedup per block size"
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MeasurementArtefactWarning)
        eff = efficiency(S, np.ones_like(S), level, disks, op, pattern)
    notes = [str(w.message) for w in caught]
    T = eff.theoretical
    art = np.atleast_1d(eff.artefact)
    keep = np.ones_like(art) if keep_artefacts else ~art
    if notes:
        for msg in notes:
            warnings.warn(f"fit_raid_speedup: {msg}", MeasurementArtefactWarning, stacklevel=2)
        if not keep_artefacts:
            notes.append(f"{int(art.sum())} point(s) with E > 1 left out of the fit")
    Bk, Sk = B[keep], S[keep]
    if np.unique(Bk).size < 4:
        raise InvalidModelError(
            f"fit_raid_speedup needs at least 4 distinct block sizes without artefacts, got "
            f"{np.unique(Bk).size}: measure more sizes (4 KiB .. 2 MiB)"
        )
    order = np.argsort(Bk)
    Bk, Sk = Bk[order], Sk[order]
    base = Parameters(
        [
            Parameter("s0", float(Sk[0]), min=1e-6, unit=""),
            Parameter("s_inf", float(Sk[-1]), min=1e-6, unit=""),
            Parameter("B_m", float(np.sqrt(Bk[0] * Bk[-1])), min=1.0, unit="B"),
        ]
    ).updated(params)

    def func(x, s0, s_inf, B_m):
        return raid_speedup_curve(x, s0, s_inf, B_m)

    return fit_model(
        func,
        base,
        Bk,
        Sk,
        weights="relative",
        ci_level=ci_level,
        uncertainty=uncertainty,
        n_boot=n_boot,
        derived={
            "E0": (lambda v: v["s0"] / T, ""),
            "E_inf": (lambda v: v["s_inf"] / T, ""),
        },
        model="RAID speedup S(B) = (1 + B/B_m) / (1/s0 + B/(B_m s_inf))",
        extra={
            "T": T,
            "level": level,
            "disks": int(disks),
            "efficiency": np.atleast_1d(eff.efficiency).tolist(),
            "artefact": art.tolist(),
        },
        notes=tuple(notes),
    )
