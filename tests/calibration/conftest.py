"""Fixtures of the calibration tests: synthetic qnbench documents and the qnbench binary."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .._ci import IN_CI


def _samples(ops: int, bs: int, rates) -> list[dict]:
    """Interval samples over the 1 s run that partition its ``ops`` and ``bytes`` (as
    qnbench's do, and as the validator checks); ``rates`` are their throughputs."""
    n = len(rates)
    share = [ops // n + (1 if k < ops % n else 0) for k in range(n)]
    return [
        {
            "t_s": (k + 1) / n,
            "ops": share[k],
            "bytes": share[k] * bs,
            "throughput_ops_s": s,
            "throughput_B_s": s * bs,
        }
        for k, s in enumerate(rates)
    ]


def make_document(points, *, engine="emu", version=1, complete=True):
    """A qnbench/1 document with the given points (dicts of jobs, bs_bytes, latency...)."""
    results = []
    for i, p in enumerate(points):
        lat = p.get("latency", 0.001)
        x = p.get("x", p["jobs"] / lat)
        results.append(
            {
                "point": i,
                "jobs": p["jobs"],
                "bs_bytes": p["bs_bytes"],
                "op": "read",
                "think_s": p.get("think_s", 0.0),
                "complete": True,
                "ops": int(x),
                "bytes": int(x) * p["bs_bytes"],
                "elapsed_s": 1.0,
                "warmup_s": 0.1,
                "throughput_ops_s": x,
                "throughput_B_s": x * p["bs_bytes"],
                "latency_s": {
                    "count": int(x),
                    "mean": lat,
                    "min": lat * 0.9,
                    "p50": p.get("p50", lat),
                    "p90": lat * 1.1,
                    "p99": lat * 1.3,
                    "max": lat * 2,
                },
                "think_s_mean": p.get("think_s", 0.0),
                "cpu": {"user_s": 0.01, "sys_s": 0.02},
                "samples": _samples(int(x), p["bs_bytes"], p.get("samples", [x] * 5)),
                "engine_stats": {"service_s": lat, "utilization": [0.5]},
            }
        )
    return {
        "schema": "qnbench",
        "schema_version": version,
        "tool_version": "0.1.0",
        "timestamp": "2026-11-22T02:00:00Z",
        "complete": complete,
        "host": {
            "hostname": "h",
            "sysname": "Linux",
            "release": "6.1",
            "machine": "x86_64",
            "cpu_model": "",
            "cpus": 2,
            "mem_total_bytes": 2**30,
        },
        "engine": engine,
        "options": {"engine": engine, "jobs": sorted({p["jobs"] for p in points})},
        "results": results,
        "errors": [],
    }


def qnbench_path() -> Path | None:
    """The qnbench executable: the runner's lookup, else a development build in build/."""
    env = os.environ.get("QNMODEL_QNBENCH")
    if env and Path(env).is_file():
        return Path(env)
    from qnmodel.bench import executable
    from qnmodel.errors import BenchNotFoundError

    try:  # the runner's own lookup: $QNMODEL_QNBENCH, the bundled binary, PATH
        return Path(executable())
    except BenchNotFoundError:
        pass
    root = Path(__file__).resolve().parents[2]
    for cand in (root / "build" / "qnbench-dev" / "qnbench", root / "qnmodel" / "_bin" / "qnbench"):
        if cand.is_file():
            return cand
    found = shutil.which("qnbench")
    return Path(found) if found else None


@pytest.fixture
def qnbench():
    """Path of the qnbench binary; skip locally with a reason, fail under CI."""
    path = qnbench_path()
    if path is None:
        msg = "qnbench executable not found (build it, or set QNMODEL_QNBENCH)"
        if IN_CI:
            pytest.fail(msg + " - it must exist under CI")
        pytest.skip(msg)
    return path
