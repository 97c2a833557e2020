"""Measure this machine's component figures with qnbench, for the bottom-up check.

Each figure is the median over the run's per-interval samples when qnbench reports them,
else the run's throughput; every figure is higher-is-better (bytes/s or operations/s), in
the keys :func:`~qnmodel.lab.check.analysis.analyse` reads.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from typing import Any

from ... import bench
from ...errors import BenchError

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
    # mdtest-style file creation rate (seed 004's metadata test); a rate in 1/s
    "metadata:create": ("meta", {"files": 20000, "meta_op": ["create"], "jobs": [1]}, "create"),
}


def _figure(trace: Any, op: str, key: str) -> float:
    rows = [r for r in trace.results if r.get("op") == op] or list(trace.results)
    what = "throughput_ops_s" if key.startswith("metadata") else "throughput_B_s"
    return float(max(r[what] for r in rows))


def measure_node(
    runtime: Any = "0.5 s", directory: str | None = None, errors: list[str] | None = None
) -> dict[str, float]:
    """Run the bottom-up set once on this machine; figures by key (bytes/s; metadata 1/s).

    ``directory`` is where the file and metadata tests create (and remove) their own files;
    by default a fresh temporary directory. With a list as ``errors`` a failing figure is
    left out and its error appended there (the others are still measured); without, the
    first failure raises :class:`~qnmodel.errors.BenchError`.
    """
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="qnmodel-check-", dir=directory) as tmp:
        for key, (engine, options, op) in FIGURES.items():
            opts = dict(options, runtime=runtime, warmup="0.1 s")
            if engine in ("file", "meta"):
                opts["dir"] = tmp
            try:
                out[key] = _figure(bench.run(engine, progress=False, **opts), op, key)
            except BenchError as exc:
                if errors is None:
                    raise
                errors.append(f"{key}: {exc}".splitlines()[0])
    return out
