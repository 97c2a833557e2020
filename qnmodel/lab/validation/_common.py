"""Shared parts of every validation study: confidence intervals, errors, bounds, outputs.

A study's ``run`` returns a summary whose ``points`` are dicts with at least ``n``,
``x_measured``, ``x_ci``, ``r_measured``, ``r_ci``, ``x_model``, ``r_model`` and the bounds
``x_lower``, ``x_upper``, ``r_lower``, ``r_upper`` (throughputs in jobs/s, times in s; the
``*_ci`` are half-widths of 95 % confidence intervals). An optional ``calibration_rows``
list (``component``, ``measured``, ``configured``, ``error``) becomes the report's
calibration table. :func:`summarize` computes the
figures every study reports from them; :func:`write_outputs` writes ``summary.json``, a
Markdown + HTML report and the plots.

Every relative error is (model - measured) / measured, as in
:mod:`qnmodel.calibration.comparison`.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "POINT_KEYS",
    "machine_info",
    "mean_ci",
    "mape",
    "inside",
    "summarize",
    "write_outputs",
]


def machine_info(packages: Sequence[str] = ()) -> dict[str, Any]:
    """Where and when a study ran, as every recorded study and grid stores it.

    Keys: ``date`` (UTC, ISO 8601), ``hostname``, ``system``, ``kernel`` (release),
    ``machine`` (architecture), ``cpu_model``, ``cpus``, ``load_average`` (1, 5, 15 min) and
    ``python``; with ``packages``, also ``packages`` mapping each Debian package name to its
    installed version (None when it is not installed or dpkg is absent). The same facts as the
    ``host`` object of a qnbench document, plus the load the measurement ran under.
    """
    model = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            model = next(
                (ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), model
            )
    except OSError:
        pass
    info: dict[str, Any] = {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "hostname": platform.node(),
        "system": platform.system(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu_model": model,
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "python": platform.python_version(),
    }
    if packages:
        info["packages"] = {name: _package_version(name) for name in packages}
    return info


def _package_version(name: str) -> str | None:
    """The installed version of Debian package ``name``, or None."""
    try:
        cp = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", name],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return cp.stdout.strip() or None


#: keys every point of a summary carries
POINT_KEYS = (
    "n", "x_measured", "x_ci", "r_measured", "r_ci", "x_model", "r_model",
    "x_lower", "x_upper", "r_lower", "r_upper",
)  # fmt: skip

# two-sided 95 % Student t quantiles for 1..30 degrees of freedom (then the normal's 1.96)
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and 95 % confidence half-width (Student t over independent repeats).

    One value gives a half-width of 0 (no spread measured: the report says how many repeats).

    >>> mean_ci([1.0, 2.0, 3.0])
    (2.0, 2.4841...)
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan
    m = float(v.mean())
    if v.size == 1:
        return m, 0.0
    t = _T95[v.size - 2] if v.size - 1 <= len(_T95) else 1.96
    return m, float(t * v.std(ddof=1) / math.sqrt(v.size))


def mape(model: Sequence[float], measured: Sequence[float]) -> float:
    """Mean absolute percentage error of ``model`` against ``measured``, in percent."""
    a = np.asarray(model, dtype=np.float64)
    b = np.asarray(measured, dtype=np.float64)
    ok = np.isfinite(a) & np.isfinite(b) & (b != 0)
    if not ok.any():
        return math.nan
    return float(100.0 * np.mean(np.abs((a[ok] - b[ok]) / b[ok])))


def inside(value: float, ci: float, lower: float, upper: float) -> bool:
    """Whether the interval ``value +- ci`` meets the bounds ``[lower, upper]``."""
    ci = 0.0 if not math.isfinite(ci) else ci
    return value + ci >= lower and value - ci <= upper


def summarize(points: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """MAPE of X and R, and the share of points inside the bounds (with their CIs).

    ``inside_bounds_share`` counts a point when its response-time interval meets
    ``[r_lower, r_upper]``; ``inside_bounds_share_x`` does the same for throughput.
    """
    pts = list(points)
    if not pts:
        return dict(mape_x=math.nan, mape_r=math.nan, inside_bounds_share=math.nan,
                    inside_bounds_share_x=math.nan, n_points=0)  # fmt: skip
    col = {k: [float(p[k]) for p in pts] for k in POINT_KEYS}
    r_in = [inside(p["r_measured"], p["r_ci"], p["r_lower"], p["r_upper"]) for p in pts]
    x_in = [inside(p["x_measured"], p["x_ci"], p["x_lower"], p["x_upper"]) for p in pts]
    return dict(
        mape_x=mape(col["x_model"], col["x_measured"]),
        mape_r=mape(col["r_model"], col["r_measured"]),
        inside_bounds_share=float(np.mean(r_in)),
        inside_bounds_share_x=float(np.mean(x_in)),
        n_points=len(pts),
    )


def _clean(obj: Any) -> Any:
    """JSON-safe: numpy scalars to floats, non-finite floats to None."""
    if isinstance(obj, Mapping):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _clean(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _pct(v: Any) -> str:
    return "n/a" if v is None or not math.isfinite(float(v)) else f"{float(v):.1f} %"


def write_outputs(summary: Mapping[str, Any], out_dir: Path) -> dict[str, Path]:
    """Write ``summary.json``, ``report.md`` + ``report.html`` and one figure per group.

    Points are grouped by their ``case`` key (one figure each: X and R against n, measured
    with CIs, the bounds shaded, exact MVA and, where present, ``x_forkjoin``/``r_forkjoin``).
    """
    from ..._files import output_dir, write_output
    from ...reporting.html import write_html
    from ...reporting.report import markdown_table

    output_dir(out_dir)
    paths: dict[str, Path] = {}
    doc = _clean(dict(summary))
    paths["summary"] = out_dir / "summary.json"
    write_output(paths["summary"], json.dumps(doc, indent=2) + "\n")
    groups: dict[str, list] = {}
    for p in summary.get("points", []):
        groups.setdefault(str(p.get("case", "all")), []).append(p)
    lines = [f"# Validation: {summary.get('title', summary.get('kind', 'study'))}", ""]
    lines += [
        f"- kind: `{summary.get('kind')}`, topology: `{summary.get('topology')}`",
        f"- MAPE of X(n): {_pct(summary.get('mape_x'))}, of R(n): {_pct(summary.get('mape_r'))}"
        " (exact MVA of the bottom-up model against the measured means)",
        f"- measured R(n) points inside the BJB bounds (with their 95 % CIs): "
        f"{_pct(100 * summary.get('inside_bounds_share', math.nan))}",
        "",
    ]
    for note in summary.get("notes", []):
        lines.append(f"> {note}")
    rows = summary.get("calibration_rows")
    if rows:
        lines += ["", "## Bottom-up calibration", ""]
        lines.append(markdown_table(
            ["component", "measured", "configured", "error"],
            [[r["component"], _num(r.get("measured")), _num(r.get("configured")),
              _pct(100 * r["error"]) if r.get("error") is not None else ""] for r in rows],
        ))  # fmt: skip
    checks = summary.get("cross_checks")
    if checks:
        lines += ["", "## Calibration cross-checks", "",
                  "Each calibrated rate against its configured value and against the throughput "
                  "the study drove through it (flagged beyond 5 %).", ""]  # fmt: skip
        lines.append(markdown_table(
            ["component", "check", "case, n", "calibrated", "reference", "error", "flag"],
            [[r["component"], r["check"],
              (f"{r['case']}, {r['n']}" if r.get("n") is not None else r["case"])
              if r.get("case") else "",
              _num(r["calibrated"]), _num(r["reference"]), _pct(100 * r["error"]),
              "FLAG" if r["flagged"] else ""] for r in checks],
        ))  # fmt: skip
    structures = {c["label"]: c["model_structure"] for c in summary.get("cases", [])
                  if isinstance(c, Mapping) and c.get("model_structure")}  # fmt: skip
    used: set[str] = set()
    for case, pts in groups.items():
        fig = out_dir / f"{_unique_slug(case, used)}.png"
        _figure(case, pts, fig)
        paths[f"figure:{case}"] = fig
        s = summarize(pts)
        head = (f"MAPE X {_pct(s['mape_x'])}, R {_pct(s['mape_r'])}; inside the bounds "
                f"{_pct(100 * s['inside_bounds_share'])}")  # fmt: skip
        lines += ["", f"## {case}", "", head, ""]
        if case in structures:
            lines += [f"Model: {structures[case]}", ""]
        lines += [f"![{case}]({fig.name})", ""]
        headers = ["n", "X meas. [1/s]", "X MVA", "R meas. [ms]", "R MVA [ms]", "R bounds [ms]"]
        rows = [
            [str(p["n"]), f"{p['x_measured']:.4g} ± {p['x_ci']:.2g}", f"{p['x_model']:.4g}",
             f"{1e3 * p['r_measured']:.4g} ± {1e3 * p['r_ci']:.2g}",
             f"{1e3 * p['r_model']:.4g}",
             f"{1e3 * p['r_lower']:.4g} .. {1e3 * p['r_upper']:.4g}"]
            for p in pts
        ]  # fmt: skip
        for key, label in (("overlap", "overlap"), ("sim", "simulated")):
            if all(f"r_{key}" in p for p in pts):  # the overlapped model, its simulation
                m = [mape([p[f"{q}_{key}"] for p in pts], [p[f"{q}_measured"] for p in pts])
                     for q in ("x", "r")]  # fmt: skip
                lines += [f"{label.capitalize()}: MAPE X {_pct(m[0])}, R {_pct(m[1])}", ""]
                headers += [f"X {label}", f"R {label} [ms]"]
                hw = f"{key}_halfwidth"
                for row, p in zip(rows, pts, strict=True):
                    row += [_pm(p[f"x_{key}"], p.get(f"x_{hw}"), 1.0),
                            _pm(p[f"r_{key}"], p.get(f"r_{hw}"), 1e3)]  # fmt: skip
        lines.append(markdown_table(headers, rows))
    lines += _nfs_cases(summary.get("three_case") or [])
    paths["report"] = out_dir / "report.md"
    write_output(paths["report"], "\n".join(lines) + "\n")
    paths["html"] = write_html(paths["report"])
    return paths


def _pm(v: float, hw: float | None, scale: float) -> str:
    """``v`` (times ``scale``) to 4 digits, with `` ± hw`` when a half-width is given."""
    text = f"{scale * v:.4g}"
    return text if hw is None else f"{text} ± {scale * hw:.2g}"


def _nfs_cases(three: list) -> list[str]:
    """The NFS study's cases (client hit, server hit, misses) against the models, as lines."""
    from ...reporting.report import markdown_table

    if not three:
        return []

    def err(r, key):
        return _pct(100 * r[key]) if r.get(key) is not None else ""

    def case(r):
        n = r.get("in_flight") or (1 if r["case"] == "miss_single" else None)
        return r["case"] + (f" ({n} in flight)" if n else "")

    rows = [[str(r.get("label", r.get("config", ""))), case(r),
             _num(r["measured"] / 1e6), _num(r["model"] / 1e6), err(r, "err"),
             err(r, "err_series"), err(r, "err_streaming")] for r in three]  # fmt: skip
    return ["", "## Cases", "",
            "Best repeat measured against seed 001's three-case model; misses also against the "
            "series network (disk, then link) and the streaming server (read-ahead overlapping "
            "the network).", "",
            markdown_table(["configuration", "case", "measured [MB/s]", "model [MB/s]", "error",
                            "series error", "streaming error"], rows)]  # fmt: skip


def _num(v: Any) -> str:
    return "" if v is None else f"{float(v):.5g}"


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text).strip("_").lower() or "study"


def _unique_slug(text: str, used: set[str]) -> str:
    """:func:`_slug` of ``text``, numbered when an earlier case of the report had the same slug
    (``RAID0 read`` and ``raid0-read`` would otherwise share one figure file)."""
    base = slug = _slug(text)
    k = 2
    while slug in used:
        slug, k = f"{base}_{k}", k + 1
    used.add(slug)
    return slug


def _figure(title: str, pts: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """Save :func:`qnmodel.reporting.plotting.validation_curves` of ``pts`` to ``path``."""
    from matplotlib.figure import Figure  # no pyplot: never touches the user's backend

    from ..._files import save_figure
    from ...reporting.plotting import validation_curves

    fig = Figure(figsize=(10.0, 4.0), layout="constrained")
    validation_curves(pts, axes=fig.subplots(1, 2), title=title)
    return save_figure(fig, path, dpi=110)
