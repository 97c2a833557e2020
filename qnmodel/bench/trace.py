"""A qnbench trace: the validated JSON document with table views."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._files import write_output
from .._validate import read_text_file
from ..errors import TraceError
from .schema import LATENCY_KEYS, SAMPLE_KEYS, validate

if TYPE_CHECKING:  # pandas is imported when a frame is asked for, not with the package
    import pandas as pd

__all__ = [
    "BenchTrace",
    "POINT_COLUMNS",
    "SAMPLE_COLUMNS",
    "load",
    "points_frame",
    "samples_frame",
    "steal_share",
]

_SCALAR = (int, float, str, bool, type(None))
_NESTED = ("latency_s", "cpu", "samples", "engine_stats")

#: Columns of :func:`points_frame` (scalar and list engine_stats follow under their own keys).
POINT_COLUMNS = (
    "point",
    "repeat",
    "jobs",
    "bs_bytes",
    "op",
    "think_s",
    "complete",
    "ops",
    "bytes",
    "elapsed_s",
    "warmup_s",
    "throughput_ops_s",
    "throughput_B_s",
    "latency_count",
    "latency_mean_s",
    "latency_min_s",
    "latency_p50_s",
    "latency_p90_s",
    "latency_p99_s",
    "latency_max_s",
    "think_s_mean",
    "cpu_user_s",
    "cpu_sys_s",
)
#: Columns of :func:`samples_frame`.
SAMPLE_COLUMNS = ("point", "repeat", "jobs", "bs_bytes", "op", *SAMPLE_KEYS)


@dataclass(frozen=True)
class BenchTrace:
    """One qnbench run: the document as measured, plus the command that produced it.

    Attributes
    ----------
    document : dict
        The validated JSON document (see ``docs/reference/qnbench-schema.md``).
    command : tuple of str
        The command line that produced it (empty for a trace loaded from a file).
    stderr : str
        qnbench's diagnostics of the run (empty for a loaded trace).
    """

    document: dict
    command: tuple[str, ...] = ()
    stderr: str = field(default="", repr=False)

    @property
    def engine(self) -> str:
        """Engine name."""
        return self.document["engine"]

    @property
    def host(self) -> dict:
        """Host description (hostname, sysname, release, machine, cpu_model, cpus, memory)."""
        return self.document["host"]

    @property
    def options(self) -> dict:
        """Every effective option, in SI units (keys carry unit suffixes)."""
        return self.document["options"]

    @property
    def results(self) -> list[dict]:
        """One dict per measured point."""
        return self.document["results"]

    @property
    def complete(self) -> bool:
        """False when the run stopped early (error, ENOSPC, signal); results are partial."""
        return bool(self.document["complete"])

    @property
    def errors(self) -> list[str]:
        """Runtime errors reported by qnbench."""
        return list(self.document["errors"])

    def to_frame(self) -> pd.DataFrame:
        """One row per measured point: ``engine``, then the columns of :func:`points_frame`."""
        frame = points_frame(self.document)
        frame.insert(0, "engine", self.engine)
        return frame

    def samples_frame(self) -> pd.DataFrame:
        """One row per interval sample (see :func:`samples_frame`)."""
        return samples_frame(self.document)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the JSON document (host info and effective options included) to `path`."""
        return write_output(path, json.dumps(self.document, indent=1) + "\n")

    @classmethod
    def from_json(
        cls, text: str, *, error: type[Exception] = TraceError, source: str = ""
    ) -> BenchTrace:
        """Parse and validate a qnbench JSON document given as text (`source` names it)."""
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"{source}: " if source else ""
            raise error(
                f"{where}qnbench output is not valid JSON ({exc.msg} at line {exc.lineno}, "
                f"column {exc.colno}); is the file truncated?"
            ) from None
        return cls(validate(doc, error=error, source=source))


def steal_share(result: dict) -> float:
    """The share of the machine's CPU time the hypervisor stole during one result's interval.

    ``cpu.host_steal_s / cpu.host_total_s`` of a qnbench result (both summed over all CPUs,
    from /proc/stat); NaN when the document has no host CPU times (written before they
    existed, or /proc/stat was unreadable) or the interval was shorter than one clock tick.
    On a virtual machine a shaped link loses time while its CPUs are stolen: in a 100 Mbit/s
    grid of the raid validation study (``raid_100mbit_run8.json``), repeats with 3.1-15.0 % of
    the CPU time stolen took +0.3 ... +16.2 % longer than the model (the study's
    ``max_steal`` re-runs them).

    >>> steal_share({"cpu": {"user_s": 0.1, "sys_s": 0.1, "host_total_s": 4.0,
    ...                      "host_idle_s": 3.0, "host_steal_s": 0.2}})
    0.05
    """
    cpu = result.get("cpu", {})
    total, steal = cpu.get("host_total_s"), cpu.get("host_steal_s")
    if total is None or steal is None or total <= 0:
        return math.nan
    return float(steal) / float(total)


def points_frame(document: dict) -> pd.DataFrame:
    """The one table of a qnbench document's points: one row per ``results`` entry.

    Columns: :data:`POINT_COLUMNS` (``point, repeat, jobs, bs_bytes, op, think_s, complete, ops,
    bytes, elapsed_s, warmup_s, throughput_ops_s, throughput_B_s, latency_count,
    latency_mean_s, latency_min_s, latency_p50_s, latency_p90_s, latency_p99_s, latency_max_s,
    think_s_mean, cpu_user_s, cpu_sys_s``), ``cpu_steal_share`` (:func:`steal_share`), then
    keys this reader does not know and the
    engine's ``engine_stats`` (scalars as numbers, per-device lists as Python lists; a stat never
    replaces a column above). ``repeat`` is 0 for documents written before ``--repeat``
    existed; ``bs_bytes`` is NaN for engines without a request size; ``null`` (not measured)
    is NaN. `document` must have passed :func:`~qnmodel.bench.schema.validate`.
    """
    import pandas as pd

    rows = []
    for res in document["results"]:
        row: dict[str, Any] = {"repeat": 0, "bs_bytes": math.nan}
        for key, value in res.items():
            if key not in _NESTED:
                row[key] = value
        lat = res["latency_s"]
        row["latency_count"] = lat["count"]
        for q in LATENCY_KEYS[1:]:
            row[f"latency_{q}_s"] = lat[q]
        row["cpu_user_s"] = res["cpu"]["user_s"]
        row["cpu_sys_s"] = res["cpu"]["sys_s"]
        row["cpu_steal_share"] = steal_share(res)
        for key, value in res["engine_stats"].items():
            row.setdefault(key, value)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=ordered_columns(rows))
    for col in frame.columns:
        if col.endswith(("_s", "_B_s", "_ops_s")) and all(
            isinstance(v, _SCALAR) for v in frame[col]
        ):
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    return frame


def samples_frame(document: dict) -> pd.DataFrame:
    """One row per interval sample of a qnbench document: :data:`SAMPLE_COLUMNS`
    (``point, repeat, jobs, bs_bytes, op, t_s, ops, bytes, throughput_ops_s, throughput_B_s``),
    for steady-state detection."""
    import pandas as pd

    rows = [
        {
            "point": res["point"],
            "repeat": res.get("repeat", 0),
            "jobs": res["jobs"],
            "bs_bytes": res.get("bs_bytes", math.nan),
            "op": res["op"],
            **{k: s[k] for k in SAMPLE_KEYS},
        }
        for res in document["results"]
        for s in res["samples"]
    ]
    return pd.DataFrame(rows, columns=list(SAMPLE_COLUMNS))


def ordered_columns(rows: list[dict[str, Any]]) -> list[str]:
    """:data:`POINT_COLUMNS`, then every other key of the rows in order of appearance."""
    cols = dict.fromkeys(POINT_COLUMNS)
    for r in rows:
        cols.update(dict.fromkeys(r))
    return list(cols)


def load(path: str | os.PathLike) -> BenchTrace:
    """Read a saved qnbench trace (JSON) and validate it.

    Raises
    ------
    TraceError
        Not JSON, a foreign schema, an unknown schema version or missing keys.
    """
    path = Path(path)
    try:
        text = read_text_file(path, "trace", error=TraceError)  # missing, binary, enormous
    except TraceError as exc:
        raise TraceError(f"cannot read trace {str(path)!r}: {exc}") from None
    return BenchTrace.from_json(text, source=str(path))
