"""Calibration cross-checks of a validation study: each component's calibration against two
independent figures, flagged beyond a tolerance (issue 28).

A bottom-up model is only as good as its component calibrations, and a calibration that
measures more than its component (the link of a server with an emulated disk measured through
the disk: 10-28 % low on the issue's testbed) silently skews every prediction. Every study
therefore compares each calibrated rate with

* ``configured``: the value the testbed was configured with (a shaped link's rate, a
  throttle's rate, an emulated disk's chunk / service time), where there is one;
* ``study``: the throughput the study itself drove through the component. With the case's
  demands D_k (seconds per request) and the measured throughput X(n), the component carried
  ``X(n) D_k`` of its calibrated capacity (the utilisation law, [LZGS84] eq. 3.1), that is
  ``X(n) D_k r`` bytes/s at calibrated rate r. A component cannot carry more than its
  capacity, so ``X D_k > 1 + tolerance`` at any n says the calibration is low; and where the
  model saturates it (its own utilisation ``X_model(n) D_k >= 1 - tolerance`` at the largest
  n, the case's bottleneck) ``X D_k < 1 - tolerance`` says the study moved less through it
  than calibrated (the calibration is high, or something the model lacks holds the system
  back). The figure compared is then the study's rate ``X D_k r`` against ``r``.

Each check is one row: ``component``, ``check`` (``"configured"`` or ``"study"``),
``calibrated`` and ``reference`` (same unit), ``error`` = calibrated / reference - 1,
``flagged`` (|error| > tolerance), and for study checks ``case`` and ``n``. The rows are
pure functions of a recorded summary's ``calibration`` and ``cases``/``points``, so they can
be recomputed from any recorded study (:func:`cross_checks`).

References
----------
.. [LZGS84] E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative System
   Performance*, Prentice-Hall 1984, eq. 3.1 (utilisation law).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import InvalidModelError

__all__ = ["TOLERANCE", "cross_checks", "nfs_cross_checks", "flags", "flag_notes"]

#: relative disagreement beyond which a calibration is flagged
TOLERANCE = 0.05

# a RAID case's demand names: the component, the link direction calibrated ("read": server ->
# master), and how the component's per-server calibrations combine
_RAID_COMPONENTS = {
    "link_in": ("master link (in)", "read"),
    "link_out": ("master link (out)", "write"),
    "disk": ("disk (busiest server)", None),
}


def _row(component: str, check: str, calibrated: float, reference: float, tolerance: float,
         **extra: Any) -> dict:  # fmt: skip
    err = calibrated / reference - 1.0
    return dict(component=component, check=check, calibrated=float(calibrated),
                reference=float(reference), error=float(err),
                flagged=bool(abs(err) > tolerance), **extra)  # fmt: skip


def _configured_rows(calibration: Mapping, tolerance: float) -> list[dict]:
    rows = []
    for name, ops in calibration.get("links", {}).items():
        for op, m in ops.items():
            if m.get("configured"):
                rows.append(_row(f"link {name} ({op})", "configured", m["rate"],
                                 m["configured"], tolerance, unit="B/s",
                                 path=m.get("path")))  # fmt: skip
    for name, m in calibration.get("disks", {}).items():
        if m.get("configured"):
            rows.append(_row(f"disk {name}", "configured", m["rate"], m["configured"],
                             tolerance, unit="B/s"))  # fmt: skip
    return rows


def _study_rows(cases: Sequence[Mapping], points: Sequence[Mapping], tolerance: float) -> list:
    rows = []
    for case in cases:
        label, dem, cal = case["label"], case.get("demands", {}), case.get("calibration", {})
        pts = sorted((p for p in points if p.get("case") == label), key=lambda p: p["n"])
        if not pts or not dem:
            continue
        top = pts[-1]
        for key, (component, _op) in _RAID_COMPONENTS.items():
            D = float(dem.get(key, 0.0))
            rate = cal.get("link_rate" if key.startswith("link") else "disk_rate")
            if D <= 0.0 or not rate:
                continue
            # the largest carried share over the populations: over capacity at any n is wrong
            busiest = max(pts, key=lambda p: p["x_measured"])
            u_seen = busiest["x_measured"] * D
            if u_seen > 1.0 + tolerance:
                rows.append(_row(component, "study", rate, u_seen * rate, tolerance, unit="B/s",
                                 case=label, n=busiest["n"], utilization=u_seen,
                                 note="the study moved more through it than its calibrated "
                                      "capacity: the calibration is low"))  # fmt: skip
                continue
            u_model = top["x_model"] * D
            if u_model >= 1.0 - tolerance:  # the model's bottleneck, saturated at the top n
                u = top["x_measured"] * D
                rows.append(_row(component, "study", rate, u * rate, tolerance, unit="B/s",
                                 case=label, n=top["n"], utilization=u,
                                 note="saturated in the model at the largest n: the study's "
                                      "throughput through it"))  # fmt: skip
    return rows


def cross_checks(calibration: Mapping, cases: Sequence[Mapping], points: Sequence[Mapping],
                 tolerance: float = TOLERANCE) -> list[dict]:  # fmt: skip
    """Every cross-check row of a RAID study (module docstring).

    Parameters
    ----------
    calibration : mapping
        The summary's ``calibration``: ``links`` {server: {op: {rate, configured, ...}}} and
        ``disks`` {server: {rate, configured, ...}}, rates in bytes/s.
    cases : sequence of mappings
        The summary's ``cases``, each with ``label``, ``demands`` (s per request:
        ``link_in``, ``link_out``, ``disk``) and ``calibration`` (``link_rate``,
        ``disk_rate``, bytes/s).
    points : sequence of mappings
        The summary's ``points``: ``case``, ``n``, ``x_measured`` and ``x_model`` (1/s).
    tolerance : float
        Relative disagreement that flags a row, in (0, 1); default :data:`TOLERANCE`.

    Returns
    -------
    list of dict
        The rows (module docstring), configured checks first.
    """
    if not isinstance(tolerance, int | float) or not 0.0 < tolerance < 1.0:
        raise InvalidModelError(
            f"tolerance must be a relative error in (0, 1), got {tolerance!r}: give e.g. 0.05"
        )
    return _configured_rows(calibration, tolerance) + _study_rows(cases, points, tolerance)


def nfs_cross_checks(summary: Mapping, tolerance: float = TOLERANCE) -> list[dict]:
    """Every cross-check row of an NFS study (:mod:`qnmodel.lab.validation.nfs`).

    Per configuration: the server's disk b4 (read in its namespace and blkio group) against
    the throttle's configured rate (``configured``); the link's b2 (the configured rate x the
    TCP goodput factor) against the server-hit reads the study drove through it, and b4
    against the misses where the disk is the bottleneck (``study``: server hits and
    disk-bound misses each move one stage's throughput, seed 001's three cases). ``summary``:
    the study's ``calibration`` and ``three_case`` lists (bytes/s).
    """
    if not isinstance(tolerance, int | float) or not 0.0 < tolerance < 1.0:
        raise InvalidModelError(
            f"tolerance must be a relative error in (0, 1), got {tolerance!r}: give e.g. 0.05"
        )
    rows = []
    labels = {r["config"]: r.get("label", str(r["config"])) for r in summary.get("three_case", [])}
    for cal in summary.get("calibration", []):
        if cal.get("b4_configured"):
            rows.append(_row(f"disk b4 ({labels.get(cal['config'], cal['config'])})",
                             "configured", cal["b4"], cal["b4_configured"], tolerance,
                             unit="B/s"))  # fmt: skip
    for r in summary.get("three_case", []):
        if r["case"] == "server_hit":
            rows.append(_row("link b2 (configured x goodput)", "study", r["model"],
                             r["measured"], tolerance, unit="B/s", case=r["label"], n=None,
                             note="server-hit reads through the link"))  # fmt: skip
        elif r["case"] == "miss" and r.get("bottleneck") == "b4":
            rows.append(_row("disk b4", "study", r["b4"], r["measured"], tolerance, unit="B/s",
                             case=r["label"], n=None,
                             note="misses with the disk the bottleneck"))  # fmt: skip
    return rows


def flags(rows: Sequence[Mapping]) -> list[dict]:
    """The flagged rows."""
    return [dict(r) for r in rows if r["flagged"]]


def flag_notes(rows: Sequence[Mapping]) -> list[str]:
    """One report line per flagged row, with both figures."""
    out = []
    for r in flags(rows):
        where = f" ({r['case']}" if r.get("case") else ""
        where += f", n = {r['n']})" if r.get("n") is not None else (")" if where else "")
        other = "configured" if r["check"] == "configured" else "seen by the study"
        out.append(
            f"CALIBRATION FLAG: {r['component']}{where}: calibrated {r['calibrated']:.5g} "
            f"{r.get('unit', '')}, {other} {r['reference']:.5g} {r.get('unit', '')} "
            f"({100 * r['error']:+.1f} %)"
        )
    return out
