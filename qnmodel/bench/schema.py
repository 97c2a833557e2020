"""Validation of the qnbench JSON document (schema ``qnbench``, version 1).

The schema is documented in ``docs/reference/qnbench-schema.md``. Readers accept unknown extra
keys (additions keep the version) and refuse a foreign ``schema`` name or a ``schema_version``
they do not know, because a version bump means a key was removed, renamed or changed meaning.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import TraceError

__all__ = ["SCHEMA_NAME", "SCHEMA_VERSION", "SAMPLE_KEYS", "LATENCY_KEYS", "validate"]

SCHEMA_NAME = "qnbench"
SCHEMA_VERSION = 1

_TOP = {
    "schema": str,
    "schema_version": int,
    "tool_version": str,
    "timestamp": str,
    "complete": bool,
    "host": dict,
    "engine": str,
    "options": dict,
    "results": list,
    "errors": list,
}
_HOST = {
    "hostname": str,
    "sysname": str,
    "release": str,
    "machine": str,
    "cpu_model": str,
    "cpus": int,
    "mem_total_bytes": int,
}
# Kinds of a result's fields: ``float`` is a finite number >= 0 or null ("not measured"),
# ``int`` a whole number >= 0 (``jobs`` >= 1, see _MINIMUM); every measured quantity is
# non-negative (times, counts, bytes, rates).
_RESULT = {
    "point": int,
    "jobs": int,
    "op": str,
    "think_s": float,
    "complete": bool,
    "ops": int,
    "bytes": int,
    "elapsed_s": float,
    "warmup_s": float,
    "throughput_ops_s": float,
    "throughput_B_s": float,
    "latency_s": dict,
    "think_s_mean": float,
    "cpu": dict,
    "samples": list,
    "engine_stats": dict,
}
#: Optional keys of a result: ``repeat`` (documents written before ``--repeat`` existed lack
#: it; it is 0 there) and ``bs_bytes`` (engines without a request size omit it).
_RESULT_OPTIONAL = {"repeat": int, "bs_bytes": int}
_MINIMUM = {"jobs": 1}
_LATENCY = {"count": int, "mean": float, "min": float, "p50": float, "p90": float,
            "p99": float, "max": float}  # fmt: skip
_CPU = {"user_s": float, "sys_s": float}
#: Optional keys of ``cpu``: the whole machine's CPU time over the interval (/proc/stat, all
#: CPUs), its idle part and the part the hypervisor stole (absent where /proc/stat is not
#: readable, and in documents written before they existed)
_CPU_OPTIONAL = {"host_total_s": float, "host_idle_s": float, "host_steal_s": float}
_SAMPLE = {"t_s": float, "ops": float, "bytes": float, "throughput_ops_s": float,
           "throughput_B_s": float}  # fmt: skip
#: ``open_loop`` of a result of an open-loop run (``--rate``)
_OPEN_LOOP = {"rate_ops_s": float, "arrivals": str, "issued": int, "behind_fraction": float,
              "wait_s_mean": float, "wait_s_max": float, "backlog_end": int}  # fmt: skip
#: the ``mpi`` object of a run of the MPI build with more than one rank
_MPI = {"ranks": int, "aggregate": list}
_AGGREGATE = {"point": int, "ranks": int, "complete": bool, "ops": int, "bytes": int,
              "elapsed_s": float, "throughput_ops_s": float, "throughput_B_s": float}  # fmt: skip
_PER_RANK = {"rank": int, "ops": int, "bytes": int, "elapsed_s": float,
             "throughput_ops_s": float, "throughput_B_s": float}  # fmt: skip

#: Keys of one per-interval sample, in document order.
SAMPLE_KEYS = tuple(_SAMPLE)
#: Keys of a result's ``latency_s`` object, in document order.
LATENCY_KEYS = tuple(_LATENCY)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _rule(value: Any, kind: type, minimum: int) -> str | None:
    """None when `value` is a valid `kind`, else the rule it breaks (for the message)."""
    if kind is float:
        # JSON has one number type; null stands for "not measured" (e.g. no operations).
        if value is None:
            return None
        if not _is_number(value) or not math.isfinite(value):
            return "must be a number (finite, or null)"
        return None if value >= 0 else "must be >= 0"
    if kind is int:
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            return f"must be an integer >= {minimum}"
        return None
    return None if isinstance(value, kind) else f"must be of type {kind.__name__}"


def _check_fields(
    obj: Any,
    spec: Mapping[str, type],
    where: str,
    fail: Callable[[str], Exception],
    *,
    optional: bool = False,
) -> None:
    if not isinstance(obj, dict):
        raise fail(f"{where} must be a JSON object, got {type(obj).__name__}")
    for key, kind in spec.items():
        if key not in obj:
            if optional:
                continue
            raise fail(f"{where} lacks the required key {key!r}")
        rule = _rule(obj[key], kind, _MINIMUM.get(key, 0))
        if rule is not None:
            raise fail(f"{where}.{key} {rule}, got {obj[key]!r:.60}")


def validate(doc: Any, *, error: type[Exception] = TraceError, source: str = "") -> dict:
    """Check a parsed qnbench document against schema version 1 and return it unchanged.

    The one validator of the format: :func:`qnmodel.bench.load`, the runner and
    :func:`qnmodel.calibration.load_trace` all read qnbench documents through it.

    Parameters
    ----------
    doc : dict
        The parsed JSON document.
    error : exception class, optional
        Raised on the first violation (:class:`~qnmodel.errors.TraceError` by default; the runner
        passes :class:`~qnmodel.errors.BenchError`).
    source : str, optional
        Where the document came from (a file name); it starts every message.

    Raises
    ------
    TraceError (or `error`)
        Foreign schema name, unknown schema version, a missing key, a key of the wrong type, a
        negative quantity, ``jobs`` < 1, or a non-finite number.

    Notes
    -----
    Rules: every required key of ``docs/reference/qnbench-schema.md`` is present (``repeat``
    and ``bs_bytes`` of a result are optional; so are ``latency_by_op_s``, whose counts add
    up to ``latency_s.count``, ``open_loop`` and the MPI build's ``mpi`` object, checked
    when present); counts are integers >= 0 (``jobs`` >= 1);
    measured quantities are finite numbers >= 0 or null (not measured); unknown keys are kept.
    """
    prefix = f"{source}: " if source else ""

    def fail(message: str) -> Exception:
        return error(f"{prefix}qnbench document: {message}")

    if not isinstance(doc, dict):
        raise error(f"{prefix}qnbench document must be a JSON object, got {type(doc).__name__}")
    name = doc.get("schema")
    if name != SCHEMA_NAME:
        raise error(
            f"{prefix}not a qnbench document: foreign schema {name!r}, expected "
            f"{SCHEMA_NAME!r} (is this the output of another tool?)"
        )
    version = doc.get("schema_version")
    if version != SCHEMA_VERSION:
        raise error(
            f"{prefix}qnbench schema_version {version!r} is not supported by this qnmodel (it "
            f"reads version {SCHEMA_VERSION}); use the qnmodel release that matches the qnbench "
            f"that wrote it (tool_version {doc.get('tool_version')!r})"
        )
    _check_fields(doc, _TOP, "document", fail)
    _check_fields(doc["host"], _HOST, "host", fail)
    if not all(isinstance(e, str) for e in doc["errors"]):
        raise fail("errors must be a list of strings")
    for i, res in enumerate(doc["results"]):
        where = f"results[{i}]"
        _check_fields(res, _RESULT, where, fail)
        _check_fields(res, _RESULT_OPTIONAL, where, fail, optional=True)
        _check_fields(res["latency_s"], _LATENCY, f"{where}.latency_s", fail)
        _check_fields(res["cpu"], _CPU, f"{where}.cpu", fail)
        _check_fields(res["cpu"], _CPU_OPTIONAL, f"{where}.cpu", fail, optional=True)
        for k, s in enumerate(res["samples"]):
            _check_fields(s, _SAMPLE, f"{where}.samples[{k}]", fail)
        _check_samples(res, where, fail)
        _check_workloads(res, where, fail)
    if "mpi" in doc:
        _check_fields(doc["mpi"], _MPI, "mpi", fail)
        for k, agg in enumerate(doc["mpi"]["aggregate"]):
            _check_fields(agg, _AGGREGATE, f"mpi.aggregate[{k}]", fail)
            for n, one in enumerate(agg.get("per_rank", [])):
                _check_fields(one, _PER_RANK, f"mpi.aggregate[{k}].per_rank[{n}]", fail)
    return doc


def _check_samples(res: dict, where: str, fail: Callable[[str], Exception]) -> None:
    """The interval samples partition the measured period: their ``ops`` and ``bytes`` add up
    to the result's, and their end times ``t_s`` increase up to ``elapsed_s``."""
    samples = res["samples"]
    if not samples:
        return
    for key in ("ops", "bytes"):
        total = math.fsum(float(s[key] or 0.0) for s in samples)
        if abs(total - res[key]) > 0.5 + 1e-9 * res[key]:
            raise fail(
                f"{where}.samples: their {key} add up to {total:.17g}, but {where}.{key} is "
                f"{res[key]}; the samples must partition the measured period"
            )
    times = [s["t_s"] for s in samples]
    if any(t is None for t in times) or any(b <= a for a, b in zip(times, times[1:], strict=False)):
        raise fail(f"{where}.samples: t_s must increase from sample to sample, got {times[:6]}")
    elapsed = res["elapsed_s"]
    if elapsed is not None and times[-1] > elapsed * (1 + 1e-9) + 1e-9:
        raise fail(
            f"{where}.samples[{len(times) - 1}].t_s = {times[-1]!r} is past "
            f"{where}.elapsed_s = {elapsed!r}"
        )


def _check_workloads(res: dict, where: str, fail: Callable[[str], Exception]) -> None:
    """The optional workload keys of a result: per-class latency and the open loop."""
    by_op = res.get("latency_by_op_s")
    if by_op is not None:
        if not isinstance(by_op, dict):
            raise fail(f"{where}.latency_by_op_s must be a JSON object")
        for name, lat in by_op.items():
            _check_fields(lat, _LATENCY, f"{where}.latency_by_op_s.{name}", fail)
        if sum(lat["count"] for lat in by_op.values()) != res["latency_s"]["count"]:
            raise fail(
                f"{where}.latency_by_op_s counts do not add up to latency_s.count "
                f"({res['latency_s']['count']})"
            )
    if "open_loop" in res:
        _check_fields(res["open_loop"], _OPEN_LOOP, f"{where}.open_loop", fail)
