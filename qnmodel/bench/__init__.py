"""qnbench, the bundled C microbenchmark, and its Python runner.

>>> from qnmodel import bench
>>> trace = bench.run("emu", jobs=[1, 2, 4], bs="64 KiB", dev_latency="5 ms",
...                   dev_rate="50 MB/s", runtime="1 s")          # doctest: +SKIP
>>> trace.to_frame()[["jobs", "throughput_ops_s", "latency_mean_s"]]  # doctest: +SKIP

The JSON document qnbench prints is described in ``docs/reference/qnbench-schema.md``;
:func:`load` reads a saved one back.
"""

from __future__ import annotations

from ._runner import ENV_VAR, MPI_ENV_VAR, build_command, build_info, executable, run, selftest
from .schema import SCHEMA_NAME, SCHEMA_VERSION, validate
from .trace import BenchTrace, load

__all__ = [
    "ENV_VAR",
    "MPI_ENV_VAR",
    "SCHEMA_NAME",
    "SCHEMA_VERSION",
    "BenchTrace",
    "build_command",
    "build_info",
    "executable",
    "load",
    "run",
    "selftest",
    "validate",
]
