"""Measure this machine's component figures with qnbench, for the bottom-up check.

Each figure is the median over the run's per-interval samples when qnbench reports them,
else the run's throughput; every figure is higher-is-better (bytes/s or operations/s), in
the keys :func:`~qnmodel.check.analysis.analyse` reads.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from typing import Any

from .. import bench

__all__ = ["measure_node", "FIGURES"]

#: figure key -> (engine, options, which result) measured by measure_node
FIGURES: Mapping[str, tuple[str, dict[str, Any], str]] = {
    "memory": ("mem", {"mem_op": ["triad"], "jobs": [1], "size": "64 MiB"}, "triad"),
    "cpu": ("cpu", {"cpu_op": ["memcpy"], "bs": ["64 KiB"], "jobs": [1]}, "memcpy"),
    "link:loopback": ("tcp", {"bs": ["256 KiB"], "jobs": [1]}, "read"),
    "device:tmp:write": (
        "file",
        {"rw": "write", "bs": ["1 MiB"], "size": "64 MiB", "jobs": [1]},
        "write",
    ),  # fmt: skip
}


def _figure(trace: Any, op: str) -> float:
    rows = [r for r in trace.results if r.get("op") == op] or list(trace.results)
    return float(max(r["throughput_B_s"] for r in rows))


def measure_node(runtime: Any = "0.5 s", directory: str | None = None) -> dict[str, float]:
    """Run the bottom-up set once on this machine; figures in bytes/s by key.

    ``directory`` is where the file test creates (and removes) its own file; by default a
    fresh temporary directory.
    """
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="qnmodel-check-", dir=directory) as tmp:
        for key, (engine, options, op) in FIGURES.items():
            opts = dict(options, runtime=runtime, warmup="0.1 s")
            if engine == "file":
                opts["dir"] = tmp
            out[key] = _figure(bench.run(engine, **opts), op)
    return out
