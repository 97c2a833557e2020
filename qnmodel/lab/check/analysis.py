"""Bottom-up check: measured component figures against their peaks and across nodes.

Seed 004 trusted its Lustre system only after testing every component bottom-up: STREAM
found two "identical" servers at a 3:2 memory-bandwidth ratio (a missing memory channel),
network tests found cables at the wrong rate. :func:`analyse` does that comparison for any
set of per-node figures:

* against the **theoretical peak** of a :class:`~qnmodel.lab.check.hardware.Hardware`
  description: a figure below ``min_fraction`` of its peak is a shortfall;
* **across nodes**: a node whose figure lies more than ``tolerance`` below the median of the
  *other* nodes is an outlier; the spread of the others (median absolute deviation, scaled
  by 1.4826 to estimate a standard deviation) is reported beside it, so a planner sees
  whether the gap stands out of the noise;
* **between pairs of nodes** (link bandwidth of random pairs, as seed 004 did with the OSU
  micro-benchmarks): a node whose pairs run below ``tolerance`` of the median pair carries
  the slow link.

Each flag names the suspect component and what usually causes such a gap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validate import as_probability
from ...errors import InvalidModelError, InvalidTypeError
from .hardware import Hardware

__all__ = ["Finding", "CheckResult", "analyse", "COMPONENT_CAUSES", "MIN_FRACTION"]

#: what a low figure of each component usually means (seed 004's findings)
COMPONENT_CAUSES = {
    "memory": "a missing or slower memory channel (seed 004 found a 3:2 STREAM ratio)",
    "cpu": "a slower or throttled CPU (clock, power state, a busy neighbour)",
    "link": "a link or cable running at a lower rate (seed 004 found cables at the wrong rate)",
    "device": "a slow, degraded or differently configured device",
    "metadata": "a slow metadata server (its disk, its CPU or its configuration)",
    "pair": "a slow link on this node: every pair that crosses it is slow",
}
#: default smallest share of the theoretical peak a healthy figure reaches
MIN_FRACTION = {"memory": 0.5, "link": 0.85, "device": 0.8}  # TCP goodput is 0.955 at MTU 1500


def _component(key: str) -> str:
    return key.split(":", 1)[0]


@dataclass(frozen=True)
class Finding:
    """One flagged figure: where, what, how far off, and the suspect."""

    node: str
    key: str
    kind: str  # "peak" (below its theoretical peak), "outlier" (below the others), "pair"
    measured: float
    reference: float  # the peak, the median of the other nodes, or the median pair
    ratio: float  # measured / reference
    suspect: str

    def __str__(self) -> str:
        what = {"peak": "its theoretical peak", "outlier": "the median of the other nodes",
                "pair": "the median pair"}[self.kind]  # fmt: skip
        return (
            f"{self.node}: {self.key} = {self.measured:.4g} is {self.ratio:.2f} of {what} "
            f"({self.reference:.4g}); suspect {self.suspect}"
        )


@dataclass(frozen=True)
class CheckResult:
    """Every figure with its references, and the findings.

    Attributes
    ----------
    rows : tuple of dict
        One per (node, key): ``node, key, measured, peak, fraction_of_peak, median_others,
        ratio_to_others, spread_others, flag``.
    findings : tuple of Finding
        The flagged figures, worst ratio first.
    incomplete : tuple of str
        Nodes or figures that did not report (a rank that failed or timed out): the check
        covers the others and says so.
    tolerance : float
    pair_rows : tuple of dict
        One per measured pair: ``a, b, bandwidth_B_s, ratio_to_median`` and, when given,
        ``latency_s`` and ``latency_ratio_to_median`` (median latency / this pair's, so below
        1 is slower for both).
    """

    rows: tuple[dict, ...]
    findings: tuple[Finding, ...]
    incomplete: tuple[str, ...] = ()
    tolerance: float = 0.1
    pair_rows: tuple[dict, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.findings and not self.incomplete

    @property
    def suspects(self) -> tuple[str, ...]:
        """The suspects, one line per finding."""
        return tuple(str(f) for f in self.findings)

    def to_frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame(list(self.rows))


def _figures(measurements: Any) -> dict[str, dict[str, float]]:
    if not isinstance(measurements, Mapping) or not measurements:
        raise InvalidTypeError(
            "measurements must be a non-empty mapping {node: {figure: value}}, got "
            f"{measurements!r}"
        )
    out: dict[str, dict[str, float]] = {}
    for node, figs in measurements.items():
        if not isinstance(node, str) or not node:
            raise InvalidModelError(f"node names must be non-empty strings, got {node!r}")
        if figs is None:  # a node that did not report
            out[node] = {}
            continue
        if not isinstance(figs, Mapping):
            raise InvalidTypeError(f"measurements[{node!r}] must be a mapping, got {figs!r}")
        out[node] = {}
        for key, v in figs.items():
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise InvalidTypeError(
                    f"measurements[{node!r}][{key!r}] must be a number, got {v!r}"
                )
            if not np.isfinite(v) or v < 0:
                raise InvalidModelError(
                    f"measurements[{node!r}][{key!r}] must be finite and >= 0, got {v!r}"
                )
            out[node][str(key)] = float(v)
    return out


def analyse(
    measurements: Mapping[str, Mapping[str, float] | None],
    hardware: Hardware | None = None,
    *,
    pairs: Mapping[tuple[str, str], float] | None = None,
    tolerance: float = 0.1,
    min_fraction: Mapping[str, float] | None = None,
    pair_latency: Mapping[tuple[str, str], float] | None = None,
) -> CheckResult:
    """Compare measured figures with their peaks and across nodes; name the suspects.

    Parameters
    ----------
    measurements : mapping node -> {figure key: value}
        Higher is better for every figure (bandwidths in bytes/s, rates in 1/s). Keys
        name the component before a colon: ``"memory"``, ``"cpu"``, ``"link:ib0"``,
        ``"device:sda:read"``, ``"metadata:create"``. A node mapped to None (or missing a
        key the others have) did not report: it is listed in ``incomplete``.
    hardware : Hardware, optional
        Theoretical peaks (:func:`~qnmodel.lab.check.hardware.load_hardware`).
    pairs : mapping (node, node) -> bandwidth, optional
        Bandwidth measured between pairs of nodes.
    tolerance : float
        Relative shortfall below the median of the other nodes that flags an outlier
        (default 0.1: 10 %).
    min_fraction : mapping component -> float, optional
        Smallest healthy share of the peak per component (default :data:`MIN_FRACTION`).
    pair_latency : mapping (node, node) -> seconds, optional
        One-way latency between pairs of nodes (lower is better): a node all of whose pairs
        are slower than ``1 / (1 - tolerance)`` times the median of the other pairs carries
        the slow link (finding key ``pair:latency``, ratio = reference / measured).
    """
    tol = as_probability(tolerance, "tolerance")
    if tol == 0:
        raise InvalidModelError("tolerance must be > 0 (a relative shortfall), got 0")
    fractions = dict(MIN_FRACTION)
    fractions.update(min_fraction or {})
    figs = _figures(measurements)
    nodes = list(figs)
    keys = sorted({k for f in figs.values() for k in f})
    rows, findings, incomplete = [], [], []
    for node in nodes:
        if not figs[node]:
            incomplete.append(f"{node}: no figures (the node did not report)")
    for key in keys:
        comp = _component(key)
        cause = COMPONENT_CAUSES.get(comp, "this component")
        have = {n: figs[n][key] for n in nodes if key in figs[n]}
        for n in nodes:
            if figs[n] and key not in figs[n]:
                incomplete.append(f"{n}: {key} missing")
        for node, x in have.items():
            others = np.array([v for m, v in have.items() if m != node])
            med = float(np.median(others)) if others.size else float("nan")
            spread = (
                float(1.4826 * np.median(np.abs(others - med))) if others.size else float("nan")
            )
            ratio = x / med if others.size and med > 0 else float("nan")
            peak = hardware.peak(node, key) if hardware is not None else None
            frac = x / peak if peak else float("nan")
            flags = []
            if peak and comp in fractions and frac < fractions[comp]:
                flags.append("peak")
                findings.append(Finding(node, key, "peak", x, peak, frac, cause))
            if others.size >= 2 and ratio < 1 - tol:
                flags.append("outlier")
                findings.append(Finding(node, key, "outlier", x, med, ratio, cause))
            rows.append({
                "node": node, "key": key, "measured": x, "peak": peak or float("nan"),
                "fraction_of_peak": frac, "median_others": med, "ratio_to_others": ratio,
                "spread_others": spread, "flag": ",".join(flags),
            })  # fmt: skip
    pair_rows: list[dict] = []
    if pairs:
        findings += _pair_findings(pairs, tol)
        pair_rows = _pair_rows(pairs, pair_latency or {})
    if pair_latency:
        # latency: lower is better; the same rule on the reciprocals
        inverse = {p: 1.0 / v for p, v in _pair_values(pair_latency, "pair_latency").items() if v}
        for f in _pair_findings(inverse, tol):
            findings.append(Finding(f.node, "pair:latency", "pair", 1 / f.measured,
                                    1 / f.reference, f.ratio, f.suspect))  # fmt: skip
        if not pairs:
            pair_rows = _pair_rows({}, pair_latency)
    findings.sort(key=lambda f: f.ratio)
    return CheckResult(tuple(rows), tuple(findings), tuple(incomplete), tol, tuple(pair_rows))


def _pair_values(pairs: Mapping[tuple[str, str], float], name: str) -> dict:
    values = {}
    for pair, v in pairs.items():
        if not (isinstance(pair, tuple) and len(pair) == 2 and pair[0] != pair[1]):
            raise InvalidModelError(f"{name} keys must be (node, node) of two nodes, got {pair!r}")
        if isinstance(v, bool) or not isinstance(v, int | float) or not np.isfinite(v) or v < 0:
            raise InvalidModelError(f"{name}[{pair!r}] must be finite and >= 0, got {v!r}")
        values[pair] = float(v)
    return values


def _pair_rows(
    pairs: Mapping[tuple[str, str], float], latency: Mapping[tuple[str, str], float]
) -> list[dict]:
    bw = _pair_values(pairs, "pairs")
    lat = _pair_values(latency, "pair_latency")
    med_bw = float(np.median(list(bw.values()))) if bw else float("nan")
    med_lat = float(np.median(list(lat.values()))) if lat else float("nan")
    rows = []
    for a, b in sorted(set(bw) | set(lat)):
        x, t = bw.get((a, b), float("nan")), lat.get((a, b), float("nan"))
        rows.append({
            "a": a, "b": b, "bandwidth_B_s": x,
            "ratio_to_median": x / med_bw if med_bw > 0 else float("nan"),
            "latency_s": t,
            "latency_ratio_to_median": med_lat / t if t > 0 else float("nan"),
        })  # fmt: skip
    return rows


def _pair_findings(pairs: Mapping[tuple[str, str], float], tol: float) -> list[Finding]:
    """Nodes all of whose pairs run slow: the slow link is theirs."""
    values = _pair_values(pairs, "pairs")
    overall = float(np.median(list(values.values())))
    out = []
    for node in sorted({n for p in values for n in p}):
        mine = [v for p, v in values.items() if node in p]
        others = [v for p, v in values.items() if node not in p]
        ref = float(np.median(others)) if others else overall
        worst_mine = float(np.median(mine))
        if ref > 0 and worst_mine / ref < 1 - tol and max(mine) / ref < 1 - tol:
            out.append(Finding(node, "pair:link", "pair", worst_mine, ref, worst_mine / ref,
                               COMPONENT_CAUSES["pair"]))  # fmt: skip
    return out
