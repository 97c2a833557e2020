"""Model files: a closed queueing network described in TOML.

A model file names the stations of a system with unit strings, the think
time and the populations to solve for. It is read with the standard
library's :mod:`tomllib`, validated with the same checkers as the Python API,
and compiled into a :class:`~qnmodel.network.Network`, so that
``qnmodel solve model.toml`` and the Python API give identical numbers.

Schema (version 1) -- see ``docs/reference/model-files.md`` for the full text
-----------------------------------------------------------------------------
::

    [model]
    name = "web-storage"              # optional, a label
    description = "..."               # optional
    think_time = "50 ms"              # Z, a time; default 0
    population = 40                   # solve n = 1..40; or
    # populations = [1, 10, 50, 200]  # these populations; or
    # populations = { start = 10, stop = 200, step = 10 }

    [[station]]                       # one table per station, in order
    name = "disk"
    demand = "4.9 ms"                 # D_k = V_k S_k, a time; or
    # service_time = "9.8 ms"         # S_k, with visits = V_k (default 1); or
    # size = "64 KiB"                 # bytes per visit, with
    # rate = "100 Mbit/s"             # the transfer rate: S_k = size / rate
    visits = 0.5                      # mean visits per job (>= 0, may be fractional)
    kind = "queue"                    # "queue" (default) or "delay"
    servers = 1                       # identical servers of a "queue" station

Every error names the file, the key path (``station[2].rate``) and, where it
can be found, the line.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InvalidModelError, InvalidTypeError
from .network import STATION_KINDS, Network, Station
from .solvers import bounds as _bounds
from .solvers import mva as _mva
from .units import parse as _parse_unit

__all__ = [
    "ModelFileError",
    "ModelSpec",
    "ModelSolution",
    "MultiClassModel",
    "MultiClassSolution",
    "DEMO_MODEL_TOML",
    "PAPER_MODEL_TOML",
    "load",
    "loads",
    "solve",
    "with_values",
]

#: The storage system solved by ``qnmodel demo --offline`` (identical to
#: ``examples/demo_storage.toml``; a test keeps the two in step).
DEMO_MODEL_TOML = """\
# A small storage system: clients read 64 KiB blocks from a file server over
# a 100 Mbit/s link. Service demands are derived from unit strings.
[model]
name = "demo-storage"
description = "Clients reading 64 KiB blocks from one file server over 100 Mbit/s Ethernet"
think_time = "50 ms"
population = 40

[[station]]
name = "client_cpu"
demand = "0.4 ms"

[[station]]
name = "client_nic"
size = "64 KiB"
rate = "1 Gbit/s"

[[station]]
name = "network"
size = "64 KiB"
rate = "100 Mbit/s"

[[station]]
name = "server_cpu"
service_time = "0.35 ms"
visits = 2

[[station]]
name = "disk"
# seek 4.9 ms + rotational latency 2.99 ms + 64 KiB at 35 MB/s = 9.76 ms,
# and half of the reads hit the server cache.
service_time = "9.763 ms"
visits = 0.5
"""

#: The networked-RAID test bed of Cui et al. (2006), seed 002; identical to
#: ``examples/networked_raid.toml`` (a test keeps the two equal).
PAPER_MODEL_TOML = """\
# The networked RAID5 storage of Cui et al. (2006), seed 002: a master server builds RAID5
# over three storage servers' disks exported over 100 Mbit/s Ethernet. Parameters are the
# paper's test bed (sec. 4); the units the paper prints ambiguously take explicit readings.
[model]
name = "networked-raid-cui2006"
description = "RAID5 over ENBD, 3 storage servers, 100 Mbit/s Ethernet, 200 MB writes"
think_time = "0 s"
population = 30

[system]
type = "networked_raid"
reference = "cui2006"        # start from the paper's test bed ...
op = "write"
readings = { TRate_d = "datasheet" }   # "35 Mbit/s" read as 35 MB/s (the drive's class)
# ... and change what the study varies, with units:
link_rate = "100 Mbit/s"
master_cache_hit = 0.0
"""

_MODEL_KEYS = ("name", "description", "think_time", "population", "populations")
_STATION_KEYS = ("name", "demand", "service_time", "size", "rate", "visits", "kind", "servers")
_TOP_KEYS = ("model", "station", "system", "class")
SYSTEM_TYPES = ("networked_raid", "nfs", "raid")
_NFS_BANDWIDTHS = ("b1", "b2", "b3", "b4")
_NFS_SYSTEM_KEYS = (
    "rsize",
    "wsize",
    "server_cpu_per_request",
    "client_cpu_per_request",
    "disk_access_time",
    "export",
    "async_merge_size",
    "client_link",
    "server_cpus",
)
_NFS_JOB_KEYS = ("file_size", "op", "client_hit", "server_hit")
_RAID_KEYS = ("level", "disks", "disk_demand", "op", "pattern", "name")


class ModelFileError(InvalidModelError):
    """A model file cannot be read: syntax, unknown key, wrong unit, bad value.

    Attributes
    ----------
    source : str
        File name (or ``"<string>"``).
    key : str
        Key path of the offending value, e.g. ``"station[2].rate"`` ("" for syntax errors).
    line : int or None
        1-based line of the key in the file, when it can be located.
    reason : str
        The rule that was broken and the fix.
    """

    def __init__(self, source: str, key: str, line: int | None, reason: str) -> None:
        self.source = source
        self.key = key
        self.line = line
        self.reason = reason
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {key}: {reason}" if key else f"{where}: {reason}")


# -- locating keys in the text --------------------------------------------------------
_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")


def _split_dotted(key: str) -> list[str]:
    return [part.strip().strip("\"'") for part in key.split(".")]


def _key_lines(text: str) -> dict[tuple, int]:
    """Map key paths (tuples of str/int) to the 1-based line where they are defined.

    A light scanner for the subset of TOML model files use: table headers,
    arrays of tables and ``key = value`` lines. Values spanning several lines
    are skipped over by bracket counting. Good enough to point at a line; the
    parsing itself is done by :mod:`tomllib`.
    """
    lines: dict[tuple, int] = {}
    counters: dict[tuple, int] = {}
    prefix: tuple = ()
    depth = 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.split("#", 1)[0] if '"' not in raw and "'" not in raw else raw
        if depth > 0:
            depth += stripped.count("[") + stripped.count("{")
            depth -= stripped.count("]") + stripped.count("}")
            continue
        m = _HEADER.match(raw)
        if m and "=" not in raw.split("#", 1)[0]:
            parts = tuple(_split_dotted(m.group(2)))
            if m.group(1) == "[[":
                idx = counters.get(parts, 0)
                counters[parts] = idx + 1
                prefix = (*parts, idx)
            else:
                prefix = parts
            lines.setdefault(prefix, lineno)
            continue
        m = _ASSIGN.match(raw)
        if m:
            path = (*prefix, *_split_dotted(m.group(1)))
            lines.setdefault(path, lineno)
            value = raw[m.end() :]
            depth = value.count("[") + value.count("{") - value.count("]") - value.count("}")
            depth = max(depth, 0)
    return lines


def _fmt_path(path: tuple) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


class _Ctx:
    """Carries the source name and key-line map while validating."""

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.text = text
        self.lines = _key_lines(text)

    def line(self, path: tuple) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None

    def error(self, path: tuple, reason: str) -> ModelFileError:
        return ModelFileError(self.source, _fmt_path(path), self.line(path), reason)


# -- the specification ------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ModelSpec:
    """A validated model file.

    Attributes
    ----------
    network : Network
        The compiled network (demands in seconds, think time in seconds).
    populations : ndarray of int
        Populations to report, ascending, each >= 1.
    name : str
        Model name (file stem when the file gives none).
    description : str
    source : str
        File the model was read from (``"<string>"`` for :func:`loads`).
    multiclass : MultiClassModel or None
        The classes of a multi-class model (``[[class]]`` tables); ``None`` for a
        single-class one. In a multi-class model :attr:`network` holds the
        stations with, as demand, the largest over the classes (their kinds
        and servers are what matters); the solver uses :attr:`MultiClassModel.demands`.
    """

    network: Network
    populations: np.ndarray
    multiclass: MultiClassModel | None = None
    name: str = "model"
    description: str = ""
    source: str = "<string>"
    document: dict = field(default_factory=dict, repr=False)
    text: str = field(default="", repr=False)

    @property
    def max_population(self) -> int:
        """Largest population N; the solvers compute the whole curve 1..N."""
        return int(self.populations[-1])

    @property
    def is_multiclass(self) -> bool:
        """True when the file has [[class]] tables."""
        return self.multiclass is not None

    def solve(self) -> ModelSolution | MultiClassSolution:
        """Bounds and exact MVA (single class) or exact multi-class MVA: see :func:`solve`."""
        return solve(self)


@dataclass(frozen=True, eq=False)
class MultiClassModel:
    """The classes of a multi-class model file.

    Attributes
    ----------
    classes : tuple of str
        Class names, in file order.
    population : ndarray of int (C,)
        Jobs per class N_c (>= 0).
    think_time : ndarray (C,)
        Z_c, seconds.
    demands : ndarray (C, K)
        D_ck, seconds, class c at station k (station order of the file).
    """

    classes: tuple[str, ...]
    population: np.ndarray
    think_time: np.ndarray
    demands: np.ndarray


@dataclass(frozen=True, eq=False)
class MultiClassSolution:
    """Exact multi-class MVA of a model file at its population vector.

    Attributes
    ----------
    spec : ModelSpec
    result : MultiClassResult
        From :func:`qnmodel.solvers.mva_multiclass.mva_multiclass`.
    """

    spec: ModelSpec
    result: Any

    def to_frame(self) -> Any:
        """One row per class: ``class, population, think_time`` (s), ``throughput``
        (jobs/s), ``response_time`` (s), then ``utilization_<station>`` per station."""
        import pandas as pd

        mc, r = self.spec.multiclass, self.result
        cols: dict[str, Any] = {
            "class": list(mc.classes),
            "population": mc.population.copy(),
            "think_time": mc.think_time.copy(),
            "throughput": r.throughput,
            "response_time": r.response_time,
        }
        for k, name in enumerate(r.station_names):
            cols[f"utilization_{name}"] = r.utilization[:, k]
        return pd.DataFrame(cols)

    def summary(self) -> dict:
        """Bottleneck (largest total utilisation) and its utilisation."""
        total = self.result.utilization.sum(axis=0)
        k = int(np.argmax(total))
        return {
            "bottleneck": self.result.station_names[k],
            "bottleneck_utilization": float(total[k]),
            "total_throughput": float(self.result.throughput.sum()),
        }

    def to_dict(self) -> dict:
        """A JSON-ready document (schema ``qnmodel.solve``, multi-class form)."""
        net, mc = self.spec.network, self.spec.multiclass
        rows = []
        for rec in self.to_frame().to_dict(orient="records"):
            rows.append(
                {
                    k: (v if k == "class" else int(v) if k == "population" else float(v))
                    for k, v in rec.items()
                }
            )
        return {
            "schema": "qnmodel.solve",
            "schema_version": 1,
            "model": {
                "name": self.spec.name,
                "description": self.spec.description,
                "source": self.spec.source,
                "classes": list(mc.classes),
                "stations": [
                    {
                        "name": s.name,
                        "demand": {c: float(mc.demands[i, k]) for i, c in enumerate(mc.classes)},
                        "kind": s.kind,
                        "servers": int(s.servers),
                    }
                    for k, s in enumerate(net.stations)
                ],
            },
            "summary": self.summary(),
            "results": rows,
        }


@dataclass(frozen=True, eq=False)
class ModelSolution:
    """Bounds and exact MVA of a model at its populations.

    Attributes
    ----------
    spec : ModelSpec
    mva : MVAResult
        Exact MVA for n = 1..N (N the largest population).
    aba : BoundsResult
        Asymptotic bounds for n = 1..N.
    bjb : BoundsResult or None
        Balanced job bounds for n = 1..N; ``None`` when a station has several
        servers (BJB assumes single-server stations).
    """

    spec: ModelSpec
    mva: Any
    aba: Any
    bjb: Any

    def to_frame(self) -> Any:
        """One row per requested population.

        Columns: ``n``, ``throughput`` and ``response_time`` (exact MVA; jobs/s
        and s), ``throughput_aba_lower/upper``, ``response_time_aba_lower/upper``
        and the same for ``bjb`` (omitted when BJB does not apply).
        """
        import pandas as pd

        idx = self.spec.populations - 1
        cols: dict[str, Any] = {
            "n": self.spec.populations.copy(),
            "throughput": self.mva.throughput[idx],
            "response_time": self.mva.response_time[idx],
        }
        for res in (self.aba, self.bjb):
            if res is None:
                continue
            m = res.method
            cols[f"throughput_{m}_lower"] = res.throughput_lower[idx]
            cols[f"throughput_{m}_upper"] = res.throughput_upper[idx]
            cols[f"response_time_{m}_lower"] = res.response_time_lower[idx]
            cols[f"response_time_{m}_upper"] = res.response_time_upper[idx]
        return pd.DataFrame(cols)

    def summary(self) -> dict:
        """Model-wide quantities: bottleneck, N*, saturation throughput, D, Z."""
        return {
            "bottleneck": self.aba.bottleneck,
            "n_star": float(self.aba.n_star),
            "saturation_throughput": float(self.aba.saturation_throughput),
            "total_demand": float(self.aba.total_demand),
            "think_time": float(self.spec.network.think_time),
        }

    def to_dict(self) -> dict:
        """A JSON-ready document: schema, model, summary and one record per population."""
        net = self.spec.network
        frame = self.to_frame()
        rows = [
            {k: (int(v) if k == "n" else float(v)) for k, v in rec.items()}
            for rec in frame.to_dict(orient="records")
        ]
        return {
            "schema": "qnmodel.solve",
            "schema_version": 1,
            "model": {
                "name": self.spec.name,
                "description": self.spec.description,
                "source": self.spec.source,
                "think_time": float(net.think_time),
                "stations": [
                    {
                        "name": s.name,
                        "demand": float(s.demand),
                        "kind": s.kind,
                        "servers": int(s.servers),
                    }
                    for s in net.stations
                ],
            },
            "summary": self.summary(),
            "results": rows,
        }


def solve(spec: ModelSpec) -> ModelSolution | MultiClassSolution:
    """Solve a model file's network: ABA, BJB (single-server networks) and exact MVA.

    A multi-class model (``[[class]]`` tables) is solved by exact multi-class
    MVA at its population vector (:class:`MultiClassSolution`).

    The solvers run once for the whole curve n = 1..N, N the largest
    requested population; :meth:`ModelSolution.to_frame` picks the rows.
    """
    if not isinstance(spec, ModelSpec):
        raise InvalidTypeError(f"spec must be a ModelSpec, got {type(spec).__name__}")
    if spec.multiclass is not None:
        from .solvers.mva_multiclass import mva_multiclass

        mc, net = spec.multiclass, spec.network
        result = mva_multiclass(
            mc.demands,
            mc.population,
            think_time=mc.think_time,
            kinds=[s.kind for s in net.stations],
            servers=[s.servers for s in net.stations],
            names=list(net.names),
        )
        return MultiClassSolution(spec=spec, result=result)
    net, N = spec.network, spec.max_population
    bjb = None if net.has_multiserver else _bounds(net, N, method="bjb")
    return ModelSolution(spec=spec, mva=_mva(net, N), aba=_bounds(net, N, method="aba"), bjb=bjb)


def with_values(spec: ModelSpec, values: Mapping[str, Any]) -> ModelSpec:
    """A copy of a model with some values replaced, validated like the file itself.

    Parameters
    ----------
    spec : ModelSpec
        A model read by :func:`load` or :func:`loads`.
    values : mapping of str to value
        Keys are ``"think_time"``, ``"population"``, ``"populations"`` (the
        ``[model]`` keys) or ``"<station>.<key>"`` with a station name and one of
        the station keys (``"disk.service_time"``, ``"network.rate"``); values are
        what the file would hold (``"5 ms"``, ``0.3``, ``4``).

    Returns
    -------
    ModelSpec
        Errors name the key as ``station[i].key`` of the original file.

    Examples
    --------
    >>> spec = loads(DEMO_MODEL_TOML)
    >>> faster = with_values(spec, {"network.rate": "1 Gbit/s"})
    >>> faster.network.station("network").demand
    0.000524288
    """
    if not isinstance(spec, ModelSpec):
        raise InvalidTypeError(f"spec must be a ModelSpec, got {type(spec).__name__}")
    doc = copy.deepcopy(spec.document)
    model = doc.setdefault("model", {})
    names = [st.get("name") for st in doc.get("station", [])]
    for key, value in values.items():
        if not isinstance(key, str):
            raise InvalidTypeError(f"value keys must be strings, got {key!r}")
        if key in _MODEL_KEYS:
            if key in ("population", "populations"):
                model.pop("population", None)
                model.pop("populations", None)
            model[key] = value
            continue
        if key.startswith("class."):
            _, cname, ckey = (key.split(".", 2) + ["", ""])[:3]
            tables = doc.get("class")
            names_c = [t.get("name") for t in tables] if isinstance(tables, list) else []
            if cname not in names_c or ckey not in ("population", "think_time"):
                raise InvalidModelError(
                    f"cannot set {key!r}: use 'class.<name>.population' or "
                    f"'class.<name>.think_time' with a class among {names_c}"
                )
            tables[names_c.index(cname)][ckey] = value
            continue
        if key.startswith("system."):
            if not isinstance(doc.get("system"), dict):
                raise InvalidModelError(f"cannot set {key!r}: the model has no [system] table")
            sub = key[len("system.") :]
            if sub == "type" or not sub:
                raise InvalidModelError(f"cannot set {key!r}: choose a system parameter")
            doc["system"][sub] = value
            continue
        station, _, field_name = key.rpartition(".")
        if not station or station not in names:
            raise InvalidModelError(
                f"cannot set {key!r}: use one of {', '.join(_MODEL_KEYS)}, "
                f"'system.<parameter>' or '<station>.<key>' with a station among {names}"
            )
        if field_name not in _STATION_KEYS or field_name == "name":
            raise InvalidModelError(
                f"cannot set {key!r}: station keys are "
                f"{', '.join(k for k in _STATION_KEYS if k != 'name')}"
            )
        st = doc["station"][names.index(station)]
        # Replacing one form of the demand replaces the others.
        forms = {
            "demand": ("service_time", "size", "rate", "visits"),
            "service_time": ("demand", "size", "rate"),
            "size": ("demand", "service_time"),
            "rate": ("demand", "service_time"),
        }
        for other in forms.get(field_name, ()):
            st.pop(other, None)
        st[field_name] = value
    return _build(doc, _Ctx(spec.source, spec.text), spec.name)


# -- reading ------------------------------------------------------------------------------
def load(path: str | Path) -> ModelSpec:
    """Read and validate a TOML model file.

    Parameters
    ----------
    path : str or Path
        The ``.toml`` file.

    Returns
    -------
    ModelSpec

    Raises
    ------
    ModelFileError
        The file does not exist, is not valid TOML, or breaks the schema; the
        message names the file, the key path and the line.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModelFileError(str(p), "", None, "no such model file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelFileError(str(p), "", None, f"cannot read the file: {exc}") from None
    return loads(text, source=str(p), default_name=p.stem)


def loads(text: str, source: str = "<string>", default_name: str = "model") -> ModelSpec:
    """Validate a model given as TOML text; ``source`` names it in error messages."""
    if not isinstance(text, str):
        raise InvalidTypeError(f"text must be a str of TOML, got {type(text).__name__}")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column \d+\)", msg)
        line = int(m.group(1)) if m else None
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
        raise ModelFileError(source, "", line, f"not valid TOML: {reason}") from None
    ctx = _Ctx(source, text)
    return _build(doc, ctx, default_name)


def _unknown(ctx: _Ctx, table: Mapping, allowed: tuple, path: tuple) -> None:
    for key in table:
        if key not in allowed:
            raise ctx.error(
                (*path, key), f"unknown key; allowed keys here are {', '.join(allowed)}"
            )


def _quantity(ctx: _Ctx, value: Any, path: tuple, dimension: str, positive: bool = False) -> float:
    unit_hint = {"time": "'4.9 ms'", "size": "'64 KiB'", "rate": "'100 Mbit/s'"}[dimension]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ctx.error(
            path,
            f"must be a {dimension} such as {unit_hint}, got {value!r} ({type(value).__name__})",
        )
    if isinstance(value, str):
        try:
            v = _parse_unit(value, dimension)
        except InvalidModelError as exc:
            raise ctx.error(path, str(exc)) from None
    else:
        v = float(value)
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        rule = "> 0" if positive else ">= 0"
        raise ctx.error(path, f"must be finite and {rule}, got {value!r}")
    return v


def _string(ctx: _Ctx, value: Any, path: tuple) -> str:
    if not isinstance(value, str):
        raise ctx.error(path, f"must be a string, got {value!r}")
    return value


def _integer(ctx: _Ctx, value: Any, path: tuple, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ctx.error(path, f"must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ctx.error(path, f"must be an integer >= {minimum}, got {value!r}")
    return value


def _populations(ctx: _Ctx, model: Mapping) -> np.ndarray:
    if "population" in model and "populations" in model:
        raise ctx.error(("model", "populations"), "give either population or populations, not both")
    if "population" in model:
        N = _integer(ctx, model["population"], ("model", "population"))
        return np.arange(1, N + 1, dtype=np.int64)
    if "populations" not in model:
        raise ctx.error(
            ("model",),
            "missing population: add 'population = 40' (solve n = 1..40) or "
            "'populations = [1, 10, 100]' under [model]",
        )
    pops = model["populations"]
    path = ("model", "populations")
    if isinstance(pops, Mapping):
        _unknown(ctx, pops, ("start", "stop", "step"), path)
        for key in ("start", "stop"):
            if key not in pops:
                raise ctx.error((*path, key), "missing; a range needs start and stop")
        start = _integer(ctx, pops["start"], (*path, "start"))
        stop = _integer(ctx, pops["stop"], (*path, "stop"))
        step = _integer(ctx, pops.get("step", 1), (*path, "step"))
        if stop < start:
            raise ctx.error((*path, "stop"), f"must be >= start ({start}), got {stop}")
        values = list(range(start, stop + 1, step))
        if values[-1] != stop:
            values.append(stop)
        return np.array(values, dtype=np.int64)
    if isinstance(pops, list):
        if not pops:
            raise ctx.error(path, "is empty; list at least one population")
        values = [_integer(ctx, v, path) for v in pops]
        if len(set(values)) != len(values):
            raise ctx.error(path, f"has repeated populations: {values}")
        return np.array(sorted(values), dtype=np.int64)
    raise ctx.error(
        path, f"must be a list of integers or a table {{start, stop, step}}, got {pops!r}"
    )


def _per_class(ctx: _Ctx, st: Mapping, key: str, path: tuple, cls: str | None) -> tuple:
    """The value of ``key`` for class ``cls`` and its key path.

    In a multi-class model a station value may be a table keyed by class name
    (``demand = { read = "2 ms", write = "5 ms" }``); a plain value applies to
    every class.
    """
    value = st[key]
    if isinstance(value, Mapping):
        if cls is None:
            raise ctx.error(
                (*path, key),
                "a table of per-class values needs [[class]] tables; a single-class model "
                "takes one value",
            )
        if cls not in value:
            raise ctx.error((*path, key), f"no value for class {cls!r}; give one per class")
        return value[cls], (*path, key, cls)
    return value, (*path, key)


def _station_demand(ctx: _Ctx, st: Mapping, path: tuple, name: str, cls: str | None) -> float:
    """D_k (seconds) of one station, for one class in a multi-class model."""
    forms = [k for k in ("demand", "service_time", "size") if k in st]
    if len(forms) != 1:
        got = ", ".join(forms) if forms else "none of them"
        raise ctx.error(
            path,
            f"station {name!r} needs exactly one of demand, service_time, or size with rate "
            f"(got {got})",
        )
    if "rate" in st and forms != ["size"]:
        raise ctx.error((*path, "rate"), "rate goes with size (service time = size / rate)")
    if "visits" in st and forms == ["demand"]:
        raise ctx.error(
            (*path, "visits"), "a demand already includes the visits; use service_time with visits"
        )
    visits = 1.0
    if "visits" in st:
        v, vpath = _per_class(ctx, st, "visits", path, cls)
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise ctx.error(vpath, f"must be a number >= 0, got {v!r}")
        visits = float(v)
    if forms == ["demand"]:
        v, vpath = _per_class(ctx, st, "demand", path, cls)
        return _quantity(ctx, v, vpath, "time")
    if forms == ["service_time"]:
        v, vpath = _per_class(ctx, st, "service_time", path, cls)
        return visits * _quantity(ctx, v, vpath, "time")
    if "rate" not in st:
        raise ctx.error((*path, "size"), "size needs a rate (service time = size / rate)")
    v, vpath = _per_class(ctx, st, "size", path, cls)
    size = _quantity(ctx, v, vpath, "size")
    v, vpath = _per_class(ctx, st, "rate", path, cls)
    rate = _quantity(ctx, v, vpath, "rate", positive=True)
    return visits * size / rate


def _station(ctx: _Ctx, st: Any, i: int, classes: tuple[str, ...] = ()) -> tuple[Station, list]:
    """A station and, for a multi-class model, its demand per class (seconds)."""
    path = ("station", i)
    if not isinstance(st, Mapping):
        raise ctx.error(path, "must be a table ([[station]])")
    _unknown(ctx, st, _STATION_KEYS, path)
    if "name" not in st:
        raise ctx.error(path, 'missing name; every station needs name = "..."')
    name = _string(ctx, st["name"], (*path, "name"))
    if not name.strip():
        raise ctx.error((*path, "name"), "must be a non-empty string")
    for key in ("demand", "service_time", "size", "rate", "visits"):
        if isinstance(st.get(key), Mapping) and classes:
            extra = [c for c in st[key] if c not in classes]
            if extra:
                raise ctx.error(
                    (*path, key, extra[0]), f"unknown class; the classes are {list(classes)}"
                )
    if classes:
        per_class = [_station_demand(ctx, st, path, name, c) for c in classes]
        demand = max(per_class)
    else:
        per_class = []
        demand = _station_demand(ctx, st, path, name, None)
    kind = st.get("kind", "queue")
    if kind not in STATION_KINDS:
        raise ctx.error((*path, "kind"), f"must be one of {list(STATION_KINDS)}, got {kind!r}")
    servers = _integer(ctx, st.get("servers", 1), (*path, "servers"))
    if kind == "delay" and servers != 1:
        raise ctx.error((*path, "servers"), "a delay station has no server count; remove it")
    try:
        return Station(name, demand, kind=kind, servers=servers), per_class
    except (InvalidModelError, InvalidTypeError) as exc:  # pragma: no cover - checked above
        raise ctx.error(path, str(exc)) from None


def _classes(ctx: _Ctx, raw: Any, default_think: float) -> tuple[tuple, np.ndarray, np.ndarray]:
    """Names, populations (C,) and think times (C,) of the [[class]] tables."""
    if not isinstance(raw, list) or not raw:
        raise ctx.error(("class",), "must be an array of tables: write [[class]] per class")
    names, pops, thinks = [], [], []
    for c, table in enumerate(raw):
        path = ("class", c)
        if not isinstance(table, Mapping):
            raise ctx.error(path, "must be a table ([[class]])")
        _unknown(ctx, table, ("name", "population", "think_time"), path)
        if "name" not in table or "population" not in table:
            raise ctx.error(path, "every class needs a name and a population")
        name = _string(ctx, table["name"], (*path, "name"))
        if name in names:
            raise ctx.error((*path, "name"), f"duplicate class name {name!r}")
        names.append(name)
        pops.append(_integer(ctx, table["population"], (*path, "population"), minimum=0))
        thinks.append(
            _quantity(ctx, table.get("think_time", default_think), (*path, "think_time"), "time")
        )
    if sum(pops) < 1:
        raise ctx.error(("class",), "all class populations are 0: give a class at least one job")
    return tuple(names), np.array(pops, dtype=np.int64), np.array(thinks, dtype=np.float64)


def _system_error(ctx: _Ctx, table: Mapping, exc: Exception) -> ModelFileError:
    """Point a model class's error at the key it names (else at [system])."""
    msg = str(exc)
    for key in table:
        if key != "type" and re.search(rf"\b{re.escape(key)}\b", msg):
            return ctx.error(("system", key), msg)
    return ctx.error(("system",), msg)


def _system_stations(ctx: _Ctx, table: Any) -> list[Station]:
    """Stations of a named system: ``[system] type = "networked_raid" | "nfs" | "raid"``."""
    if not isinstance(table, Mapping):
        raise ctx.error(("system",), "must be a table: [system] with type = ...")
    kind = table.get("type")
    if kind not in SYSTEM_TYPES:
        raise ctx.error(("system", "type"), f"must be one of {list(SYSTEM_TYPES)}, got {kind!r}")
    params = {k: v for k, v in table.items() if k != "type"}
    try:
        if kind == "networked_raid":
            return _networked_raid_stations(ctx, params)
        if kind == "nfs":
            return _nfs_stations(ctx, params)
        return _raid_stations(ctx, params)
    except ModelFileError:
        raise
    except (InvalidModelError, InvalidTypeError) as exc:
        raise _system_error(ctx, table, exc) from None


def _networked_raid_stations(ctx: _Ctx, params: dict) -> list[Station]:
    from .models.storage import NetworkedRAID

    reference = params.pop("reference", None)
    readings = params.pop("readings", None)
    expand = params.pop("expand_servers", False)
    if not isinstance(expand, bool):
        raise ctx.error(("system", "expand_servers"), f"must be true or false, got {expand!r}")
    for key in params:
        try:
            NetworkedRAID.field_name(key)
        except InvalidModelError as exc:
            raise ctx.error(("system", key), f"unknown key: {exc}") from None
    if reference is not None:
        if reference != "cui2006":
            raise ctx.error(
                ("system", "reference"), f"the known reference is 'cui2006', got {reference!r}"
            )
        if readings is not None and not isinstance(readings, Mapping):
            raise ctx.error(("system", "readings"), "must be a table of symbol = reading")
        op = params.pop("op", "write")
        system = NetworkedRAID.cui2006(op=op, readings=readings, **params)
    else:
        if readings is not None:
            raise ctx.error(("system", "readings"), "readings need reference = 'cui2006'")
        given = {NetworkedRAID.field_name(k): v for k, v in params.items()}
        missing = [
            f.name
            for f in dataclasses.fields(NetworkedRAID)
            if f.init
            and f.name not in given
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ]
        if missing:
            raise ctx.error(
                ("system",),
                f"a networked_raid system without reference = 'cui2006' needs "
                f"{', '.join(missing)} (see the model-file schema), or start from the "
                f"paper's test bed with reference = 'cui2006' and change only what differs",
            )
        system = NetworkedRAID(**given)
    return list(system.network(0.0, expand_servers=expand).stations)


def _nfs_stations(ctx: _Ctx, params: dict) -> list[Station]:
    from .models.nfs import NFSBandwidth, NFSSystem

    allowed = _NFS_BANDWIDTHS + _NFS_SYSTEM_KEYS + _NFS_JOB_KEYS
    _unknown(ctx, params, allowed, ("system",))
    for key in (*_NFS_BANDWIDTHS, "file_size"):
        if key not in params:
            raise ctx.error(("system",), f"an nfs system needs {key} (see the model-file schema)")
    bw = NFSBandwidth(*(params[k] for k in _NFS_BANDWIDTHS))
    system = NFSSystem(bw, **{k: params[k] for k in _NFS_SYSTEM_KEYS if k in params})
    job = {k: params[k] for k in ("op", "client_hit", "server_hit") if k in params}
    return list(system.network(params["file_size"], **job).stations)


def _raid_stations(ctx: _Ctx, params: dict) -> list[Station]:
    from .models.raid import disk_demands

    _unknown(ctx, params, _RAID_KEYS, ("system",))
    for key in ("level", "disks", "disk_demand"):
        if key not in params:
            raise ctx.error(("system",), f"a raid system needs {key} (see the model-file schema)")
    disks = _integer(ctx, params["disks"], ("system", "disks"))
    prefix = _string(ctx, params.get("name", "disk"), ("system", "name"))
    demand = _quantity(ctx, params["disk_demand"], ("system", "disk_demand"), "time")
    d = disk_demands(
        demand, params["level"], disks, params.get("op", "read"), params.get("pattern", "random")
    )
    return [Station(f"{prefix}{i + 1}", float(v)) for i, v in enumerate(d)]


def _build(doc: Mapping, ctx: _Ctx, default_name: str) -> ModelSpec:
    _unknown(ctx, doc, _TOP_KEYS, ())
    model = doc.get("model")
    if model is None:
        raise ctx.error(("model",), "missing [model] table (think_time, population)")
    if not isinstance(model, Mapping):
        raise ctx.error(("model",), "must be a table")
    _unknown(ctx, model, _MODEL_KEYS, ("model",))
    name = _string(ctx, model.get("name", default_name), ("model", "name"))
    description = _string(ctx, model.get("description", ""), ("model", "description"))
    think = _quantity(ctx, model.get("think_time", 0.0), ("model", "think_time"), "time")
    classes: tuple[str, ...] = ()
    if "class" in doc:
        for key in ("population", "populations"):
            if key in model:
                raise ctx.error(
                    ("model", key),
                    "a multi-class model takes its populations from the [[class]] tables; "
                    "remove this key",
                )
        classes, class_pops, class_thinks = _classes(ctx, doc["class"], think)
        populations = np.array([int(class_pops.sum())], dtype=np.int64)
    else:
        populations = _populations(ctx, model)
    if classes and "system" in doc:
        raise ctx.error(("system",), "a named [system] is single-class; remove [[class]] or it")
    system_stations = _system_stations(ctx, doc["system"]) if "system" in doc else []
    stations_raw = doc.get("station")
    if stations_raw is None and not system_stations:
        raise ctx.error(
            ("station",), "no stations: add at least one [[station]] table or a [system]"
        )
    if stations_raw is None:
        stations_raw = []
    if not isinstance(stations_raw, list):
        raise ctx.error(
            ("station",), "must be an array of tables: write [[station]], not [station]"
        )
    stations = list(system_stations)
    seen = {st.name: "a station of the [system]" for st in system_stations}
    per_class_demands = []
    for i, st in enumerate(stations_raw):
        station, per_class = _station(ctx, st, i, classes)
        per_class_demands.append(per_class)
        if station.name in seen:
            raise ctx.error(
                ("station", i, "name"),
                f"duplicate station name {station.name!r} (also {seen[station.name]})",
            )
        seen[station.name] = f"station[{i}]"
        stations.append(station)
    if not stations:
        raise ctx.error(("station",), "no stations: add at least one [[station]] table")
    net = Network(tuple(stations), think_time=think)
    if net.total_demand + net.think_time <= 0.0:
        raise ctx.error(
            ("station",), "all demands and the think time are zero; give a station a demand > 0"
        )
    multiclass = None
    if classes:
        D = np.array(per_class_demands, dtype=np.float64).T  # (C, K)
        if not np.any(D.sum(axis=1) + class_thinks > 0):
            raise ctx.error(("station",), "all demands and think times are zero")
        multiclass = MultiClassModel(
            classes=classes,
            population=class_pops,
            think_time=class_thinks,
            demands=D,
        )
    return ModelSpec(
        network=net,
        populations=populations,
        multiclass=multiclass,
        name=name,
        description=description,
        source=ctx.source,
        document=copy.deepcopy(dict(doc)),
        text=ctx.text,
    )
