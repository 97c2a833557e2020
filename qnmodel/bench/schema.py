"""Validation of the qnbench JSON document (schema ``qnbench``, version 1).

The schema is documented in ``docs/reference/qnbench-schema.md``. Readers accept unknown extra
keys (additions keep the version) and refuse a foreign ``schema`` name or a ``schema_version``
they do not know, because a version bump means a key was removed, renamed or changed meaning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import TraceError

__all__ = ["SCHEMA_NAME", "SCHEMA_VERSION", "validate"]

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
_LATENCY = ("count", "mean", "min", "p50", "p90", "p99", "max")
_CPU = ("user_s", "sys_s")
_SAMPLE = ("t_s", "ops", "bytes", "throughput_ops_s", "throughput_B_s")


def _type_ok(value: Any, kind: type) -> bool:
    if kind is float:
        # JSON has one number type; null stands for "not measured" (e.g. no operations).
        return value is None or (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        )
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _check_fields(obj: Any, spec: Mapping[str, type], where: str, error: type[Exception]) -> None:
    if not isinstance(obj, dict):
        raise error(f"qnbench document: {where} must be a JSON object, got {type(obj).__name__}")
    for key, kind in spec.items():
        if key not in obj:
            raise error(f"qnbench document: {where} lacks the required key {key!r}")
        if not _type_ok(obj[key], kind):
            raise error(
                f"qnbench document: {where}.{key} must be of type {kind.__name__}, got {obj[key]!r}"
            )


def validate(doc: Any, *, error: type[Exception] = TraceError) -> dict:
    """Check a parsed qnbench document against schema version 1 and return it unchanged.

    Parameters
    ----------
    doc : dict
        The parsed JSON document.
    error : exception class, optional
        Raised on the first violation (:class:`~qnmodel.errors.TraceError` by default; the runner
        passes :class:`~qnmodel.errors.BenchError`).

    Raises
    ------
    TraceError (or `error`)
        Foreign schema name, unknown schema version, a missing key or a key of the wrong type.
    """
    if not isinstance(doc, dict):
        raise error(f"qnbench document must be a JSON object, got {type(doc).__name__}")
    name = doc.get("schema")
    if name != SCHEMA_NAME:
        raise error(
            f"not a qnbench document: schema is {name!r}, expected {SCHEMA_NAME!r} "
            "(is this the output of another tool?)"
        )
    version = doc.get("schema_version")
    if version != SCHEMA_VERSION:
        raise error(
            f"qnbench schema_version {version!r} is not supported by this qnmodel (it reads "
            f"version {SCHEMA_VERSION}); use the qnmodel release that matches the qnbench "
            f"that wrote it (tool_version {doc.get('tool_version')!r})"
        )
    _check_fields(doc, _TOP, "document", error)
    _check_fields(doc["host"], _HOST, "host", error)
    if not all(isinstance(e, str) for e in doc["errors"]):
        raise error("qnbench document: errors must be a list of strings")
    for i, res in enumerate(doc["results"]):
        where = f"results[{i}]"
        _check_fields(res, _RESULT, where, error)
        if "bs_bytes" in res and not _type_ok(res["bs_bytes"], int):
            raise error(f"qnbench document: {where}.bs_bytes must be an integer")
        _check_fields(res["latency_s"], dict.fromkeys(_LATENCY, float), f"{where}.latency_s", error)
        if not _type_ok(res["latency_s"]["count"], int):
            raise error(f"qnbench document: {where}.latency_s.count must be an integer")
        _check_fields(res["cpu"], dict.fromkeys(_CPU, float), f"{where}.cpu", error)
        for k, s in enumerate(res["samples"]):
            _check_fields(s, dict.fromkeys(_SAMPLE, float), f"{where}.samples[{k}]", error)
        if res["ops"] < 0 or res["bytes"] < 0 or res["jobs"] < 1:
            raise error(f"qnbench document: {where} has negative counts or jobs < 1")
    return doc
