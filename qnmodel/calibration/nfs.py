"""NFS bandwidths b1, b2, b4 from cache-hit and cache-miss runs (seed 001).

Cao et al. (seed 001; SPEC §4) model the bandwidth an NFS client sees in
three cases: a **client-cache hit** runs at b1 (client memory bandwidth), a
**server-cache hit** at min(b2, b3) = b2 (the network; b3 is the server's
memory bus), and a **miss** at min(b2, b4) (b4 the storage). A run whose
requests hit the client cache with probability h_c and, when they miss it,
the server cache with probability h_s moves each byte in the time-weighted
mean

    1 / B = h_c / b1 + (1 - h_c) h_s / b2 + (1 - h_c)(1 - h_s) / b_miss,

with ``b_miss = min(b2, b4)``. :func:`fit_nfs` fits b1, b2 and b_miss to
measured bandwidths of runs with known hit ratios (pure runs: (1, 0) for a
warm client cache, (0, 1) for a warm server cache with a cold client, (0, 0)
for cold caches), reports ``b4 = b_miss`` and says when b_miss is not
distinguishable from b2 (then storage is not the limit and b4 is only
bounded below by it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import as_hit_ratio, as_quantities
from ..errors import InvalidModelError
from .fit import CalibrationResult, fit_model
from .parameters import Parameter, Parameters

__all__ = ["fit_nfs"]


def fit_nfs(
    bandwidth: Any,
    client_hit: Any,
    server_hit: Any,
    *,
    params: Any = None,
    ci_level: float = 0.95,
    uncertainty: str = "auto",
) -> CalibrationResult:
    """Fit the NFS case bandwidths b1, b2, b4 (seed 001) to runs with known hit ratios.

    Parameters
    ----------
    bandwidth : array_like (n,)
        Measured bandwidth of each run, bytes/s (> 0; strings like ``"90 MB/s"``
        accepted).
    client_hit, server_hit : array_like (n,)
        Client-cache and server-cache hit ratios of each run, in [0, 1]; the
        server ratio applies to the requests that missed the client cache.
    params : dict or Parameters, optional
        Overrides for ``b1``, ``b2``, ``b4`` (bytes/s).
    ci_level, uncertainty
        See :func:`~qnmodel.calibration.fit.fit_model` (relative-error weights).

    Returns
    -------
    CalibrationResult
        ``values["b1"]``, ``values["b2"]``, ``values["b4"]`` in bytes/s, where
        ``b4`` is the miss-path bandwidth min(b2, b4) of the paper.

    Raises
    ------
    InvalidModelError
        A case with no run exercising it (e.g. no run with client hits), so
        its bandwidth cannot be estimated.
    """
    B = as_quantities(bandwidth, "bandwidth", "rate")
    hc = np.reshape(as_hit_ratio(client_hit, "client_hit"), -1)
    hs = np.reshape(as_hit_ratio(server_hit, "server_hit"), -1)
    for nm, h in (("client_hit", hc), ("server_hit", hs)):
        if h.size != B.size:
            raise InvalidModelError(
                f"{nm} has {h.size} values but bandwidth has {B.size}: one ratio per run"
            )
    if np.any(B <= 0):
        raise InvalidModelError("bandwidth must be > 0 in every run")
    W = np.column_stack([hc, (1 - hc) * hs, (1 - hc) * (1 - hs)])  # time weights of 1/b
    labels = {
        "b1": "client-cache hits (client_hit > 0)",
        "b2": "server-cache hits (client_hit < 1 and server_hit > 0)",
        "b4": "misses of both caches (client_hit < 1 and server_hit < 1)",
    }
    for j, nm in enumerate(("b1", "b2", "b4")):
        if W[:, j].max() <= 0:
            raise InvalidModelError(
                f"no run exercises {labels[nm]}, so {nm} cannot be estimated; add such a run "
                f"or fix {nm} with params={{'{nm}': {{'value': ..., 'vary': False}}}}"
            )
    # starting values: linear least squares on 1/B = W @ (1/b)
    inv, *_ = np.linalg.lstsq(W / (1 / B)[:, None], np.ones_like(B), rcond=None)
    start = []
    for j in range(3):
        if inv[j] > 0:
            start.append(1.0 / inv[j])
        else:  # fall back on the pure runs' mean
            w = W[:, j] / W[:, j].sum()
            start.append(float(np.sum(w * B)))
    base = Parameters(
        [
            Parameter(nm, v, min=0.0, unit="B/s")
            for nm, v in zip(("b1", "b2", "b4"), start, strict=True)
        ]
    ).updated(params)

    def func(w, **v):
        return 1.0 / (w[:, 0] / v["b1"] + w[:, 1] / v["b2"] + w[:, 2] / v["b4"])

    res = fit_model(
        func,
        base,
        W,
        B,
        weights="relative",
        ci_level=ci_level,
        uncertainty=uncertainty,
        model="NFS 1/B = h_c/b1 + (1-h_c) h_s/b2 + (1-h_c)(1-h_s)/b4",
        extra={"runs": int(B.size)},
    )
    b2, b4 = res.values["b2"], res.values["b4"]
    ci2, ci4 = res.confidence_intervals["b2"], res.confidence_intervals["b4"]
    notes = []
    if ci2 is not None and ci4 is not None and ci4[1] >= ci2[0] and ci2[1] >= ci4[0]:
        note = (
            "the miss bandwidth b4 is not distinguishable from b2: the network limits misses "
            "too (min(b2, b4) = b2), so the storage bandwidth is only known to be >= "
            f"{min(b2, b4):.4g} B/s"
        )
        notes.append(note)
    if math.isfinite(b4) and b4 > b2 * 1.05:
        note = (
            f"b4 = {b4:.4g} B/s exceeds b2 = {b2:.4g} B/s, impossible for min(b2, b4): "
            "the hit ratios or the bandwidths are inconsistent"
        )
        notes.append(note)
    return res.with_notes(*notes)
