"""Measurement traces: load qnbench JSON (and CSV, and fio JSON) into tidy DataFrames.

Three input forms, one :class:`Trace`:

``qnbench`` JSON (schema ``qnbench``, versions in :data:`SUPPORTED_VERSIONS`)
    The document the bundled microbenchmark writes on stdout; see
    ``docs/reference/qnbench-schema.md``. It is checked by
    :func:`qnmodel.bench.validate` (the one validator of the format) and
    tabulated by :func:`qnmodel.bench.trace.points_frame` and
    :func:`~qnmodel.bench.trace.samples_frame` (the same tables as
    :meth:`qnmodel.bench.BenchTrace.to_frame`): every point of ``results``
    becomes one row of :attr:`Trace.points`, every per-interval sample one
    row of :attr:`Trace.samples`.
CSV (traces from other tools, or hand-made)
    A header row of column names taken from :data:`POINT_COLUMNS` (units are
    part of the name: ``_s`` seconds, ``_bytes`` bytes, ``_B_s`` bytes/s,
    ``_ops_s`` operations/s), one row per measured point. Other units may be named the
    same ways (``latency_mean_ms``, ``"latency_mean [us]"``, ``"bs [KiB]"``,
    ``"throughput [kIOPS]"``) and are read into those columns in SI; a measured
    quantity without its unit (``latency_mean``, ``throughput``) is refused. Lines starting with
    ``#`` before the header are metadata as ``# key: value`` (``engine``,
    ``tool``...). At least one of ``throughput_ops_s``, ``throughput_B_s``,
    ``latency_mean_s``, ``latency_p50_s`` must be present; ``jobs`` defaults
    to 1 and ``bs_bytes`` to 0 when absent. Unknown columns are kept.
fio JSON (``fio --output-format=json``)
    Each fio job becomes one point: ``jobs = numjobs * iodepth`` (the
    requests outstanding, the closed-loop population), ``bs_bytes`` from
    ``bs`` (fio's ``k``/``m``/``g`` are powers of 1024), throughputs summed over
    read and write, latency from ``lat_ns`` (mean over both directions,
    percentiles from ``clat_ns`` of the busier direction).

A corrupt, truncated or foreign file raises :class:`~qnmodel.errors.TraceError`
naming the file and what is wrong; a trace of an unknown schema version is
refused rather than misread.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validate import as_choice, read_text_file
from ..bench.schema import SCHEMA_VERSION, validate
from ..bench.trace import (
    POINT_COLUMNS,
    SAMPLE_COLUMNS,
    ordered_columns,
    points_frame,
    samples_frame,
)
from ..errors import TraceError, UnitError
from ..units import split_header
from .steady import steady_state

__all__ = [
    "Trace",
    "load_trace",
    "trace_from_document",
    "SUPPORTED_VERSIONS",
    "POINT_COLUMNS",
    "TRACE_FORMATS",
]

#: qnbench schema versions this reader understands (those of :mod:`qnmodel.bench.schema`).
SUPPORTED_VERSIONS = (SCHEMA_VERSION,)
TRACE_FORMATS = ("auto", "qnbench", "csv", "fio")
_SAMPLE_COLUMNS = SAMPLE_COLUMNS[SAMPLE_COLUMNS.index("op") + 1 :]


@dataclass(frozen=True, repr=False)
class Trace:
    """A loaded measurement trace.

    Attributes
    ----------
    source : str
        File name, or ``"<document>"`` for an in-memory document.
    format : {"qnbench", "csv", "fio"}
    schema_version : int or None
        qnbench schema version (None for CSV/fio).
    tool_version, timestamp, engine : str
    complete : bool
        False when the run stopped early (the points measured are kept).
    host, options : dict
        Host description and effective options (qnbench), or metadata.
    errors : tuple of str
        Runtime errors recorded by the tool.
    points : pandas.DataFrame
        One row per measured point, columns :data:`POINT_COLUMNS` (SI units
        in the names; ``repeat`` is the repetition index of ``--repeat``, 0 for
        CSV/fio) plus the engine statistics under their own keys
        (``service_s``...); for qnbench the frame of
        :meth:`qnmodel.bench.BenchTrace.to_frame` without its ``engine`` column.
    samples : pandas.DataFrame
        Tidy per-interval samples: ``point, repeat, jobs, bs_bytes, op, t_s, ops,
        bytes, throughput_ops_s, throughput_B_s`` (empty for CSV/fio).
    engine_stats : tuple of dict
        The raw ``engine_stats`` object of each point (lists included).
    """

    source: str
    format: str
    schema_version: int | None
    tool_version: str
    timestamp: str
    engine: str
    complete: bool
    host: dict[str, Any]
    options: dict[str, Any]
    errors: tuple[str, ...]
    points: pd.DataFrame
    samples: pd.DataFrame
    engine_stats: tuple[dict[str, Any], ...] = field(default=())

    def to_frame(self, level: str = "points") -> pd.DataFrame:
        """``level="points"`` (one row per point) or ``"samples"`` (one row per interval)."""
        as_choice(level, "level", ("points", "samples"))
        return (self.points if level == "points" else self.samples).copy()

    def steady(self, method: str = "seed003", column: str = "throughput_ops_s") -> pd.DataFrame:
        """Steady-state detection per point (see :func:`~qnmodel.calibration.steady_state`).

        Returns one row per point: ``point, repeat, jobs, bs_bytes, op, steady,
        start_index, start_time_s, value, mean, message``.
        """
        rows = []
        for _, p in self.points.iterrows():
            s = self.samples[self.samples["point"] == p["point"]]
            r = steady_state(s, method=method, column=column)
            rows.append(
                {
                    "point": p["point"],
                    "repeat": p["repeat"],
                    "jobs": p["jobs"],
                    "bs_bytes": p["bs_bytes"],
                    "op": p["op"],
                    "steady": r.steady,
                    "start_index": r.start_index,
                    "start_time_s": r.start_time,
                    "value": r.value,
                    "mean": r.mean,
                    "message": r.message,
                }
            )
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        return (
            f"Trace({self.format}, engine={self.engine!r}, {len(self.points)} point(s), "
            f"{len(self.samples)} sample(s), complete={self.complete}, source={self.source!r})"
        )


# ---------------------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------------------


def load_trace(source: Any, format: str = "auto") -> Trace:
    """Load a trace from a file (qnbench JSON, CSV or fio JSON) or a parsed document.

    Parameters
    ----------
    source : str, os.PathLike, dict or qnmodel.bench.BenchTrace
        A file path, an already parsed qnbench/fio JSON document, or the
        trace :func:`qnmodel.bench.run` returned.
    format : {"auto", "qnbench", "csv", "fio"}
        ``"auto"`` picks CSV for a ``.csv`` file and otherwise looks at the
        JSON: ``"schema": "qnbench"`` or fio's ``"fio version"`` key.

    Raises
    ------
    TraceError
        The file is missing, empty, not valid JSON/CSV (e.g. truncated), of a
        foreign format, of an unsupported schema version, or misses a field;
        the message names the file and the problem.
    """
    as_choice(format, "format", TRACE_FORMATS)
    if isinstance(source, Mapping):
        return _from_json(dict(source), "<document>", format)
    doc = getattr(source, "document", None)  # a qnmodel.bench.BenchTrace
    if isinstance(doc, Mapping):
        return _from_json(dict(doc), "<qnbench run>", format)
    if not isinstance(source, str | os.PathLike):
        raise TraceError(
            f"source must be a file path or a parsed JSON document, got {type(source).__name__}"
        )
    path = os.fspath(source)
    text = read_text_file(path, "trace file", error=TraceError)  # missing, binary, enormous
    text = text.removeprefix("\ufeff")  # a UTF-8 byte-order mark is not part of the first cell
    if not text.strip():
        raise TraceError(f"{path}: the file is empty")
    if format == "csv" or (format == "auto" and path.lower().endswith(".csv")):
        return _from_csv(text, path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        tail = text.rstrip()
        if exc.pos >= len(tail) or exc.msg.startswith("Unterminated string"):
            what = "truncated: the JSON ends before the document is complete"
        else:
            what = f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        raise TraceError(f"{path}: {what}") from None
    if not isinstance(doc, dict):
        raise TraceError(f"{path}: a trace is a JSON object, got a JSON {type(doc).__name__}")
    return _from_json(doc, path, format)


def trace_from_document(doc: Mapping[str, Any], source: str = "<document>") -> Trace:
    """A :class:`Trace` from a parsed qnbench document (what ``qnbench`` printed)."""
    return _from_json(dict(doc), source, "qnbench")


def _from_json(doc: dict, src: str, format: str) -> Trace:
    kind = format
    if format == "auto":
        if "fio version" in doc:
            kind = "fio"
        elif "schema" in doc:
            kind = "qnbench"
        else:
            keys = ", ".join(sorted(map(str, doc))[:8])
            raise TraceError(
                f"{src}: not a qnbench trace (no 'schema' key) nor fio JSON (no 'fio version' "
                f"key); top-level keys are: {keys or 'none'}"
            )
    if kind == "fio":
        try:
            return _from_fio(doc, src)
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            if isinstance(exc, TraceError):
                raise
            raise TraceError(
                f"{src}: malformed fio JSON ({type(exc).__name__}: {exc}); expected the output "
                "of fio --output-format=json"
            ) from None
    if kind == "csv":
        raise TraceError(f"{src}: format='csv' needs a CSV file, got a JSON document")
    return _from_qnbench(doc, src)


def _from_qnbench(doc: dict, src: str) -> Trace:
    """A :class:`Trace` of a qnbench document: validated by :func:`qnmodel.bench.validate`
    (the one validator of the format) and tabulated by :func:`qnmodel.bench.trace.points_frame`
    (the one frame builder)."""
    validate(doc, source=src)
    return Trace(
        source=src,
        format="qnbench",
        schema_version=int(doc["schema_version"]),
        tool_version=doc["tool_version"],
        timestamp=doc["timestamp"],
        engine=doc["engine"],
        complete=bool(doc["complete"]),
        host=dict(doc["host"]),
        options=dict(doc["options"]),
        errors=tuple(doc["errors"]),
        points=points_frame(doc),
        samples=samples_frame(doc),
        engine_stats=tuple(r["engine_stats"] for r in doc["results"]),
    )


def _empty_samples() -> pd.DataFrame:
    return pd.DataFrame(columns=list(SAMPLE_COLUMNS))


_CSV_METRICS = ("throughput_ops_s", "throughput_B_s", "latency_mean_s", "latency_p50_s")
#: integer columns and their least value
_CSV_INTEGERS = {"point": 0, "repeat": 0, "jobs": 1, "bs_bytes": 0}


def _csv_integer(v: float, cell: str, src: str, lineno: int, name: str) -> int:
    """A count column's cell: a whole number >= its least value (never truncated)."""
    least = _CSV_INTEGERS[name]
    if not cell or v != math.floor(v) or v < least or v > 2**53:
        raise TraceError(
            f"{src}: line {lineno}, column {name!r} must be a whole number >= {least}, got {cell!r}"
        )
    return int(v)


def _unit_columns() -> dict[tuple[str, str], str]:
    """(quantity, dimension) -> the column of :data:`POINT_COLUMNS` holding it in SI:
    ``("latency_mean", "time") -> "latency_mean_s"``, ``("throughput", "rate") ->
    "throughput_B_s"``."""
    out = {}
    for col in POINT_COLUMNS:
        base, factor, dim = split_header(col)
        if factor is not None:
            out[(base, dim)] = col
    return out


def _csv_header(header: list[str], src: str) -> tuple[list[str], list[float]]:
    """The CSV's columns as :data:`POINT_COLUMNS` names, with the factor to SI of each.

    A column may name its unit as it likes (``latency_mean_ms``, ``"latency_mean [us]"``,
    ``"throughput [kIOPS]"``, ``"bs [KiB]"``): it is read as the SI column. A measured
    quantity without a unit (``latency_mean``, ``throughput``) is refused: ``12.5`` may be
    milliseconds as well as seconds.
    """
    known = _unit_columns()
    names, factors = [], []
    for h in header:
        if h in POINT_COLUMNS:
            names.append(h)
            factors.append(1.0)
            continue
        try:
            base, factor, dim = split_header(h)
        except UnitError as exc:
            raise TraceError(f"{src}: {exc}") from None
        if factor is None:
            fits = [c for (b, _d), c in known.items() if b == base]
            if fits:
                forms = {
                    "time": "{b}_ms', '{b}_s' or '{b} [ms]",
                    "size": "{b}_bytes' or '{b} [KiB]",
                }
                hint = " or ".join(f"'{c}'" for c in fits)
                dims = {d for (b, d) in known if b == base}
                if len(dims) == 1 and next(iter(dims)) in forms:
                    hint = "'" + forms[next(iter(dims))].format(b=base) + "'"
                raise TraceError(
                    f"{src}: column {h!r} has no unit: name it with its unit, e.g. {hint}"
                )
            names.append(h)
            factors.append(1.0)
            continue
        col = known.get((base, dim))
        if col is None:
            names.append(h)  # a column of the user's own, kept as it is
            factors.append(1.0)
            continue
        names.append(col)
        factors.append(factor)
    return names, factors


def _from_csv(text: str, src: str) -> Trace:
    meta: dict[str, str] = {}
    lines = text.splitlines()
    k = 0
    while k < len(lines) and lines[k].lstrip().startswith("#"):
        m = re.match(r"#\s*([\w.-]+)\s*:\s*(.*)$", lines[k].strip())
        if m:
            meta[m.group(1)] = m.group(2).strip()
        k += 1
    body = "\n".join(lines[k:])
    if not body.strip():
        raise TraceError(f"{src}: CSV has no header row")
    reader = csv.reader(io.StringIO(body))
    header = [h.strip() for h in next(reader)]
    header, factors = _csv_header(header, src)
    if len(set(header)) != len(header):
        raise TraceError(f"{src}: CSV header repeats a column: {header}")
    if not any(c in header for c in _CSV_METRICS):
        raise TraceError(
            f"{src}: CSV header {header} has none of the measured columns "
            f"{list(_CSV_METRICS)}; name columns as in qnmodel.calibration.traces.POINT_COLUMNS "
            "(units in the name: _s, _bytes, _B_s, _ops_s)"
        )
    rows = []
    for lineno, rec in enumerate(reader, start=k + 2):
        if not rec or all(not c.strip() for c in rec):
            continue
        if len(rec) != len(header):
            raise TraceError(
                f"{src}: line {lineno} has {len(rec)} fields but the header has {len(header)} "
                "(truncated or corrupt row)"
            )
        row: dict[str, Any] = {}
        for name, factor, cell in zip(header, factors, rec, strict=True):
            cell = cell.strip()
            if name in ("op",) or name not in POINT_COLUMNS:
                try:
                    row[name] = float(cell) if name != "op" else cell
                except ValueError:
                    row[name] = cell
                continue
            if name == "complete":
                row[name] = cell.lower() in ("1", "true", "yes")
                continue
            try:
                v = float(cell) if cell else math.nan
            except ValueError:
                raise TraceError(
                    f"{src}: line {lineno}, column {name!r}: {cell!r} is not a number "
                    "(values are plain SI numbers; the unit is in the column name)"
                ) from None
            if cell and not math.isfinite(v):
                raise TraceError(
                    f"{src}: line {lineno}, column {name!r}: {cell!r} is not a finite number "
                    "(leave the cell empty for a value not measured)"
                )
            if v < 0:
                raise TraceError(f"{src}: line {lineno}, column {name!r} must be >= 0, got {v}")
            v = v * factor
            if name in _CSV_INTEGERS:
                v = _csv_integer(v, cell, src, lineno, name)
            row[name] = v
        rows.append(row)
    if not rows:
        raise TraceError(f"{src}: CSV has a header but no data rows")
    for i, r in enumerate(rows):
        r.setdefault("point", i)
        r.setdefault("repeat", 0)
        r.setdefault("jobs", 1)
        r.setdefault("bs_bytes", 0)
        r.setdefault("op", "")
        r.setdefault("think_s", 0.0)
        r.setdefault("complete", True)
        for key in _CSV_INTEGERS:  # checked whole numbers (or the defaults above)
            r[key] = int(r[key])
    points = pd.DataFrame(rows, columns=ordered_columns(rows))
    return Trace(
        source=src,
        format="csv",
        schema_version=None,
        tool_version=meta.get("tool", ""),
        timestamp=meta.get("timestamp", ""),
        engine=meta.get("engine", ""),
        complete=True,
        host={k_: v for k_, v in meta.items() if k_.startswith("host")},
        options=meta,
        errors=(),
        points=points,
        samples=_empty_samples(),
    )


_FIO_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)


def _fio_size(text: Any, src: str, where: str) -> int:
    if isinstance(text, int | float) and not isinstance(text, bool):
        if not (math.isfinite(text) and text >= 0 and text == int(text)):
            raise TraceError(f"{src}: {where} must be a whole number of bytes >= 0, got {text!r}")
        return int(text)
    first = str(text).split(",")[0].split("-")[0]
    m = _FIO_SIZE.match(first)
    if not m:
        raise TraceError(f"{src}: {where} = {text!r} is not a fio size (e.g. 4k, 1m)")
    mult = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def _fio_num(value: Any, src: str, where: str) -> float:
    """A number fio wrote: finite and >= 0 (fio writes strings for some options)."""
    try:
        v = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        raise TraceError(f"{src}: {where} = {value!r} is not a number") from None
    if not math.isfinite(v) or v < 0:
        raise TraceError(f"{src}: {where} must be a finite number >= 0, got {value!r}")
    return v


def _fio_count(value: Any, src: str, where: str) -> int:
    """fio's numjobs or iodepth: a whole number >= 1 (fio writes them as strings)."""
    try:
        v = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        v = math.nan
    if not math.isfinite(v) or v != math.floor(v) or v < 1 or v > 2**31:
        raise TraceError(f"{src}: {where} must be a whole number >= 1, got {value!r}")
    return int(v)


def _from_fio(doc: dict, src: str) -> Trace:
    jobs = doc.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        raise TraceError(f"{src}: fio JSON without a non-empty 'jobs' array")
    glob = doc.get("global options", {}) or {}
    rows = []
    for i, j in enumerate(jobs):
        where = f"jobs[{i}]"
        if not isinstance(j, dict):
            raise TraceError(f"{src}: {where} must be an object")
        opts = {**glob, **(j.get("job options") or {})}
        dirs = [j[d] for d in ("read", "write", "trim") if isinstance(j.get(d), dict)]
        if not dirs:
            raise TraceError(f"{src}: {where} has no read/write statistics")
        what = f"{where}.total_ios"
        active = [d for d in dirs if _fio_num(d.get("total_ios", 0), src, what) > 0]
        dirs = active or dirs
        ios = [_fio_num(d.get("total_ios", 0), src, f"{where}.total_ios") for d in dirs]
        busiest = dirs[int(np.argmax(ios))]
        total = sum(ios)
        lat_mean = (
            sum(
                float(d.get("lat_ns", {}).get("mean", 0.0)) * n
                for d, n in zip(dirs, ios, strict=True)
            )
            / total
            / 1e9
            if total > 0
            else math.nan
        )
        pct = (busiest.get("clat_ns") or {}).get("percentile") or {}

        def p(q: str, _pct=pct) -> float:
            v = _pct.get(q)
            return float(v) / 1e9 if v is not None else math.nan

        for d in dirs:  # every number fio wrote: finite and >= 0 (NaN is JSON-legal in Python)
            for key in ("runtime", "iops", "bw_bytes", "io_bytes", "total_ios"):
                if key in d:
                    _fio_num(d[key], src, f"{where}.{key}")
            for key in ("mean", "min", "max"):
                if key in (d.get("lat_ns") or {}):
                    _fio_num(d["lat_ns"][key], src, f"{where}.lat_ns.{key}")
            for q, v in ((d.get("clat_ns") or {}).get("percentile") or {}).items():
                _fio_num(v, src, f"{where}.clat_ns.percentile[{q!r}]")
        for key in ("usr_cpu", "sys_cpu"):
            if key in j:
                _fio_num(j[key], src, f"{where}.{key}")
        runtime_ms = max(_fio_num(d.get("runtime", 0.0), src, f"{where}.runtime") for d in dirs)
        elapsed = runtime_ms / 1e3
        numjobs = _fio_count(opts.get("numjobs", 1), src, f"{where}.numjobs")
        iodepth = _fio_count(opts.get("iodepth", 1), src, f"{where}.iodepth")
        rows.append(
            {
                "point": i,
                "repeat": 0,
                "jobs": numjobs * iodepth,
                "bs_bytes": _fio_size(opts.get("bs", 4096), src, f"{where}.bs"),
                "op": str(opts.get("rw", "")),
                "think_s": 0.0,
                "complete": int(j.get("error", 0)) == 0,
                "ops": total,
                "bytes": float(sum(d.get("io_bytes", 0) for d in dirs)),
                "elapsed_s": elapsed,
                "warmup_s": math.nan,
                "throughput_ops_s": float(sum(d.get("iops", 0.0) for d in dirs)),
                "throughput_B_s": float(sum(d.get("bw_bytes", 0.0) for d in dirs)),
                "latency_count": total,
                "latency_mean_s": lat_mean,
                "latency_min_s": min(float(d.get("lat_ns", {}).get("min", math.inf)) for d in dirs)
                / 1e9,
                "latency_p50_s": p("50.000000"),
                "latency_p90_s": p("90.000000"),
                "latency_p99_s": p("99.000000"),
                "latency_max_s": max(float(d.get("lat_ns", {}).get("max", 0.0)) for d in dirs)
                / 1e9,
                "think_s_mean": 0.0,
                "cpu_user_s": float(j.get("usr_cpu", 0.0)) / 100.0 * elapsed,
                "cpu_sys_s": float(j.get("sys_cpu", 0.0)) / 100.0 * elapsed,
                "jobname": str(j.get("jobname", "")),
            }
        )
    return Trace(
        source=src,
        format="fio",
        schema_version=None,
        tool_version=str(doc.get("fio version", "")),
        timestamp=str(doc.get("time", doc.get("timestamp", ""))),
        engine="fio",
        complete=all(r["complete"] for r in rows),
        host={},
        options=dict(glob),
        errors=(),
        points=pd.DataFrame(rows, columns=ordered_columns(rows)),
        samples=_empty_samples(),
    )
