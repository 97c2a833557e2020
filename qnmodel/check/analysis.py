"""Bottom-up check: measured component figures against their peaks and across nodes.

Seed 004 trusted its Lustre system only after testing every component bottom-up: STREAM
found two "identical" servers at a 3:2 memory-bandwidth ratio (a missing memory channel),
network tests found cables at the wrong rate. :func:`analyse` does that comparison for any
set of per-node figures:

* against the **theoretical peak** of a :class:`~qnmodel.check.hardware.Hardware`
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

from .._validate import as_probability
from ..errors import InvalidModelError, InvalidTypeError
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
    """

    rows: tuple[dict, ...]
    findings: tuple[Finding, ...]
    incomplete: tuple[str, ...] = ()
    tolerance: float = 0.1

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
        Theoretical peaks (:func:`~qnmodel.check.hardware.load_hardware`).
    pairs : mapping (node, node) -> bandwidth, optional
        Bandwidth measured between pairs of nodes.
    tolerance : float
        Relative shortfall below the median of the other nodes that flags an outlier
        (default 0.1: 10 %).
    min_fraction : mapping component -> float, optional
        Smallest healthy share of the peak per component (default :data:`MIN_FRACTION`).
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
    if pairs:
        findings += _pair_findings(pairs, tol)
    findings.sort(key=lambda f: f.ratio)
    return CheckResult(tuple(rows), tuple(findings), tuple(incomplete), tol)


def _pair_findings(pairs: Mapping[tuple[str, str], float], tol: float) -> list[Finding]:
    """Nodes all of whose pairs run slow: the slow link is theirs."""
    values = {}
    for pair, v in pairs.items():
        if not (isinstance(pair, tuple) and len(pair) == 2 and pair[0] != pair[1]):
            raise InvalidModelError(f"pairs keys must be (node, node) of two nodes, got {pair!r}")
        if isinstance(v, bool) or not isinstance(v, int | float) or not np.isfinite(v) or v < 0:
            raise InvalidModelError(f"pairs[{pair!r}] must be a finite bandwidth >= 0, got {v!r}")
        values[pair] = float(v)
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
