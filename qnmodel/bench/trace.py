"""A qnbench trace: the validated JSON document with table views."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import TraceError
from .schema import validate

if TYPE_CHECKING:  # pandas is imported when a frame is asked for, not with the package
    import pandas as pd

__all__ = ["BenchTrace", "load"]

_SCALAR = (int, float, str, bool, type(None))


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
        """One row per measured point.

        Columns: ``engine, point, repeat, jobs, bs_bytes, op, think_s, complete, ops, bytes,
        elapsed_s,
        warmup_s, throughput_ops_s, throughput_B_s, latency_count, latency_mean_s,
        latency_min_s, latency_p50_s, latency_p90_s, latency_p99_s, latency_max_s,
        think_s_mean, cpu_user_s, cpu_sys_s``, then the engine's ``engine_stats`` (scalars as
        numbers, per-device lists as Python lists). ``bs_bytes`` is missing (NaN) for engines
        without a request size.
        """
        import pandas as pd

        rows = []
        for res in self.results:
            row: dict[str, Any] = {"engine": self.engine}
            for key, value in res.items():
                if key in ("latency_s", "cpu", "samples", "engine_stats"):
                    continue
                row[key] = value
            row.setdefault("bs_bytes", None)
            row.setdefault("repeat", 0)  # documents written before --repeat existed
            lat = res["latency_s"]
            row["latency_count"] = lat["count"]
            for q in ("mean", "min", "p50", "p90", "p99", "max"):
                row[f"latency_{q}_s"] = lat[q]
            row["cpu_user_s"] = res["cpu"]["user_s"]
            row["cpu_sys_s"] = res["cpu"]["sys_s"]
            for key, value in res["engine_stats"].items():
                row[key] = value
            rows.append(row)
        frame = pd.DataFrame(rows)
        if not rows:
            return frame
        float_cols = [c for c in frame.columns if c.endswith(("_s", "_B_s", "_ops_s"))]
        for col in float_cols:
            if all(isinstance(v, _SCALAR) for v in frame[col]):
                frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
        return frame

    def samples_frame(self) -> pd.DataFrame:
        """One row per interval sample: ``point, repeat, jobs, bs_bytes, op, t_s, ops, bytes,
        throughput_ops_s, throughput_B_s`` (for steady-state detection)."""
        import pandas as pd

        rows = []
        for res in self.results:
            for s in res["samples"]:
                rows.append(
                    {
                        "point": res["point"],
                        "repeat": res.get("repeat", 0),
                        "jobs": res["jobs"],
                        "bs_bytes": res.get("bs_bytes"),
                        "op": res["op"],
                        **s,
                    }
                )
        columns = ["point", "repeat", "jobs", "bs_bytes", "op", "t_s", "ops", "bytes"]
        columns += ["throughput_ops_s", "throughput_B_s"]
        return pd.DataFrame(rows, columns=columns)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the JSON document (host info and effective options included) to `path`."""
        path = Path(path)
        path.write_text(json.dumps(self.document, indent=1) + "\n", encoding="utf-8")
        return path

    @classmethod
    def from_json(cls, text: str, *, error: type[Exception] = TraceError) -> BenchTrace:
        """Parse and validate a qnbench JSON document given as text."""
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise error(
                f"qnbench output is not valid JSON ({exc.msg} at line {exc.lineno}, "
                f"column {exc.colno}); is the file truncated?"
            ) from None
        return cls(validate(doc, error=error))


def load(path: str | os.PathLike) -> BenchTrace:
    """Read a saved qnbench trace (JSON) and validate it.

    Raises
    ------
    TraceError
        Not JSON, a foreign schema, an unknown schema version or missing keys.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"cannot read trace {str(path)!r}: {exc.strerror}") from None
    return BenchTrace.from_json(text)
