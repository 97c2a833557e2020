"""The schema's keys and the checkers of its fields (quantities, populations, stations, classes)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._validate import as_rate_multipliers, check_memory
from ...errors import InvalidModelError, InvalidTypeError
from ...model import DISCIPLINES, STATION_KINDS, Station
from ...units import bare_number_fix
from ...units import parse as _parse_unit
from ._scanner import _Ctx

_MODEL_KEYS = (
    "name",
    "description",
    "think_time",
    "N",
    "populations",
    "arrival_rate",
    "target",
)
_STATION_KEYS = ("name", "demand", "service_time", "size", "rate", "visits", "kind", "servers",
                 "rate_multipliers", "discipline", "scv", "group")  # fmt: skip
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
    "server_disks",
    "read_cpu_per_byte",
)
_NFS_JOB_KEYS = ("file_size", "op", "client_hit", "server_hit")
_RAID_KEYS = ("level", "disks", "disk_demand", "op", "pattern", "name")


def _unknown(ctx: _Ctx, table: Mapping, allowed: tuple, path: tuple) -> None:
    for key in table:
        if key not in allowed:
            raise ctx.error(
                (*path, key), f"unknown key; allowed keys here are {', '.join(allowed)}"
            )


def _refuse_bare(ctx: _Ctx, value: Any, path: tuple, dimension: str) -> None:
    """Refuse a quantity written as a bare number (``think_time = 20``): a person's ``20``
    may mean 20 ms as well as 20 s, so a model file (and ``--set``) gives every quantity its
    unit. Zero is the one number that reads the same in every unit (a negative or infinite
    one is refused by the domain check that follows)."""
    if ctx.bare_si:
        return
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and math.isfinite(value) and value > 0:
        raise ctx.error(path, f"got the bare number {value!r}: {bare_number_fix(value, dimension)}")


def _quantity(ctx: _Ctx, value: Any, path: tuple, dimension: str, positive: bool = False) -> float:
    """A quantity of the file in SI: a string with its unit (``"4.9 ms"``), or 0."""
    _refuse_bare(ctx, value, path, dimension)
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


#: Memory per population of solving a model file and printing its solution, bytes: a fixed
#: part and a part per station. Measured peaks (max RSS over the import, N = 2e5 and 1e6,
#: K = 1 and 8 stations): ``qnmodel solve --format table`` 1714 + 25 K B per population,
#: ``--format json`` 1620 + 25 K, ``--format csv`` 414 + 25 K, the solve alone
#: (``load_model(...).solve()``) 160 + 24 K; N = 1e6, K = 1 peaked at 1.75 GiB (table) and
#: 469 MiB (csv) over 150 MiB after the import. The solve runs exact MVA for every n up to
#: the largest population, printing only the listed ones: the estimate is
#: ``max(N) * SOLVE + count * PRINT`` with both parts rounded up from the measurements.
SOLVE_BYTES = (256, 32)  # per population n = 1..max(N): fixed, per station
PRINT_BYTES = (2048, 32)  # per listed population


def _fits_in_memory(
    ctx: _Ctx, count: int, path: tuple, stations: int = 1, largest: int | None = None
) -> None:
    """Refuse populations whose solution and printed table the memory limit cannot hold
    (:data:`SOLVE_BYTES`, :data:`PRINT_BYTES`)."""
    largest = count if largest is None else largest
    need = float(largest) * (SOLVE_BYTES[0] + SOLVE_BYTES[1] * stations) + float(count) * (
        PRINT_BYTES[0] + PRINT_BYTES[1] * stations
    )
    try:
        check_memory(
            need,
            f"N = {largest} populations (a row of results for each) at {stations} station(s)",
            "solve fewer populations (a list or a range with a step), or raise the limit",
        )
    except InvalidModelError as exc:
        raise ctx.error(path, str(exc)) from None


def _populations(ctx: _Ctx, model: Mapping) -> np.ndarray:
    if "N" in model and "populations" in model:
        raise ctx.error(("model", "populations"), "give either N or populations, not both")
    if "N" in model:
        N = _integer(ctx, model["N"], ("model", "N"))
        _fits_in_memory(ctx, N, ("model", "N"))
        return np.arange(1, N + 1, dtype=np.int64)
    if "populations" not in model:
        raise ctx.error(
            ("model",),
            "missing population: add 'N = 40' (solve n = 1..40) or "
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
        _fits_in_memory(ctx, (stop - start) // step + 1, path, largest=stop)
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
        _fits_in_memory(ctx, len(values), path, largest=max(values))
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
    visits, per_visit, _ = _station_parts(ctx, st, path, name, cls)
    return visits * per_visit


def _station_parts(
    ctx: _Ctx, st: Mapping, path: tuple, name: str, cls: str | None
) -> tuple[float, float, bool]:
    """(V, S, by_visit) of one station for one class: visits and the mean service time per
    visit (seconds) when the file gives ``service_time`` or ``size`` with ``rate``
    (``by_visit``); (1, D, False) when it gives the demand."""
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
        return 1.0, _quantity(ctx, v, vpath, "time"), False
    if forms == ["service_time"]:
        v, vpath = _per_class(ctx, st, "service_time", path, cls)
        return visits, _quantity(ctx, v, vpath, "time"), True
    if "rate" not in st:
        raise ctx.error((*path, "size"), "size needs a rate (service time = size / rate)")
    v, vpath = _per_class(ctx, st, "size", path, cls)
    size = _quantity(ctx, v, vpath, "size")
    v, vpath = _per_class(ctx, st, "rate", path, cls)
    rate = _quantity(ctx, v, vpath, "rate", positive=True)
    return visits, size / rate, True


def _station(
    ctx: _Ctx, st: Any, i: int, classes: tuple[str, ...] = ()
) -> tuple[Station, list, list | None]:
    """A station and, for a multi-class model, its demand per class (seconds) and, when the
    file gives service times per visit, its (visits, service time) per class (else None)."""
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
    by_visit = None
    if classes:
        parts = [_station_parts(ctx, st, path, name, c) for c in classes]
        per_class = [v * s for v, s, _ in parts]
        demand = max(per_class)
        if parts[0][2]:  # service_time or size: the classes' service times per visit
            by_visit = [(v, s) for v, s, _ in parts]
    else:
        per_class = []
        demand = _station_demand(ctx, st, path, name, None)
    kind = st.get("kind", "queue")
    if kind not in STATION_KINDS:
        raise ctx.error((*path, "kind"), f"must be one of {list(STATION_KINDS)}, got {kind!r}")
    servers = _integer(ctx, st.get("servers", 1), (*path, "servers"))
    if kind == "delay" and servers != 1:
        raise ctx.error((*path, "servers"), "a delay station has no server count; remove it")
    discipline = st.get("discipline")
    if discipline is not None:
        dpath = (*path, "discipline")
        if not isinstance(discipline, str) or discipline.upper() not in DISCIPLINES:
            raise ctx.error(dpath, f"must be one of {list(DISCIPLINES)}, got {discipline!r}")
        if "kind" in st and (kind == "delay") != (discipline.upper() == "IS"):
            raise ctx.error(
                dpath,
                f"kind = {kind!r} contradicts discipline = {discipline!r} (a delay station is "
                "the discipline 'IS'); give one of them",
            )
    extra = {}
    if "scv" in st:
        scv = st["scv"]
        if isinstance(scv, bool) or not isinstance(scv, int | float) or not scv >= 0:
            raise ctx.error((*path, "scv"), f"must be a number >= 0 (0 constant, 1 exponential), "
                                            f"got {scv!r}")  # fmt: skip
        extra["scv"] = float(scv)
    if "rate_multipliers" in st:  # the Python validator, its message under the file's key
        rpath = (*path, "rate_multipliers")
        try:
            extra["rate_multipliers"] = as_rate_multipliers(
                st["rate_multipliers"], "rate_multipliers"
            )
        except (InvalidModelError, InvalidTypeError) as exc:
            raise ctx.error(rpath, str(exc).removeprefix("rate_multipliers ")) from None
        if "servers" in st:
            raise ctx.error(
                rpath,
                f"give either servers = {servers} or rate_multipliers, not both (m servers are "
                "rate_multipliers = [1, 2, ..., m])",
            )
    try:
        station = Station(name, demand, kind=None if discipline else kind, servers=servers,
                          discipline=discipline, **extra)  # fmt: skip
    except (InvalidModelError, InvalidTypeError) as exc:
        raise ctx.error(path, str(exc)) from None
    return station, per_class, by_visit


def _classes(
    ctx: _Ctx, raw: Any, default_think: float
) -> tuple[tuple, np.ndarray, np.ndarray, np.ndarray | None]:
    """Names, populations (C,), think times (C,) and, for open classes, arrival rates (C,)
    (else None) of the [[class]] tables: all closed (``N``) or all open
    (``arrival_rate``)."""
    if not isinstance(raw, list) or not raw:
        raise ctx.error(("class",), "must be an array of tables: write [[class]] per class")
    names, pops, thinks, rates = [], [], [], []
    for c, table in enumerate(raw):
        path = ("class", c)
        if not isinstance(table, Mapping):
            raise ctx.error(path, "must be a table ([[class]])")
        _unknown(ctx, table, ("name", "N", "think_time", "arrival_rate"), path)
        if "name" not in table or ("N" in table) == ("arrival_rate" in table):
            raise ctx.error(
                path,
                "every class needs a name and either a population N (closed) or an "
                "arrival_rate (open)",
            )
        name = _string(ctx, table["name"], (*path, "name"))
        if name in names:
            raise ctx.error((*path, "name"), f"duplicate class name {name!r}")
        names.append(name)
        if "arrival_rate" in table:
            if "think_time" in table:
                raise ctx.error(
                    (*path, "think_time"), "an open class (arrival_rate) has no think time"
                )
            rates.append(float(_arrival_rates(ctx, table, (*path, "arrival_rate"), False)[0]))
            pops.append(0)
            thinks.append(0.0)
            continue
        pops.append(_integer(ctx, table["N"], (*path, "N"), minimum=0))
        thinks.append(
            _quantity(ctx, table["think_time"], (*path, "think_time"), "time")
            if "think_time" in table
            else default_think  # [model] think_time, already read
        )
    if rates and len(rates) != len(names):
        raise ctx.error(
            ("class",),
            "the classes of a model file are all closed (N) or all open "
            "(arrival_rate); a mixed network is described in Python (qnmodel.Network with "
            "ClosedClass and OpenClass, solved by qnmodel.mixed_network)",
        )
    if not rates and sum(pops) < 1:
        raise ctx.error(("class",), "all class populations are 0: give a class at least one job")
    return (
        tuple(names),
        np.array(pops, dtype=np.int64),
        np.array(thinks, dtype=np.float64),
        np.array(rates, dtype=np.float64) if rates else None,
    )


def _arrival_rates(
    ctx: _Ctx, model: Mapping, path: tuple = ("model", "arrival_rate"), sweep: bool = True
) -> np.ndarray | None:
    """The open model's arrival rate(s), jobs/s, or None for a closed model (a class's one
    rate with ``sweep=False``)."""
    if "arrival_rate" not in model:
        return None
    for key in ("N", "populations"):
        if key in model:
            raise ctx.error(
                path,
                f"give either {key} (a closed model) or arrival_rate (an open model), not both",
            )
    raw = model["arrival_rate"]
    if isinstance(raw, list) and not sweep:
        raise ctx.error(path, f"must be one rate such as '40/s', got the list {raw!r}")
    values = raw if isinstance(raw, list) else [raw]
    if not values:
        raise ctx.error(path, "is empty; give a rate such as '40000/s'")
    rates = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise ctx.error(path, f"must be a rate such as '40000/s', got {v!r}")
        _refuse_bare(ctx, v, path, "frequency")
        if isinstance(v, str):
            try:
                r = _parse_unit(v, "frequency")
            except InvalidModelError as exc:
                raise ctx.error(path, f"{exc} (a request rate such as '40000/s')") from None
        else:
            r = float(v)
        if not math.isfinite(r) or r < 0:
            raise ctx.error(path, f"must be finite and >= 0, got {v!r}")
        rates.append(r)
    return np.array(rates, dtype=np.float64)


def _target(ctx: _Ctx, model: Mapping) -> Any:
    """The model's performance target (a :class:`~qnmodel.solvers.targets.Target`) or None."""
    if "target" not in model:
        return None
    from ...solvers.targets import as_target

    raw = model["target"]
    if isinstance(raw, int | float) and not isinstance(raw, bool) and not ctx.bare_si:
        raise ctx.error(
            ("model", "target"),
            f"got the bare number {raw!r}: a target names its metric and its unit: write "
            f"'R <= {raw:g} ms' (a mean response time), 'p95 <= {raw:g} ms' or "
            f"'X >= {raw:g}/s'",
        )
    try:
        return as_target(raw, "target")
    except (InvalidModelError, InvalidTypeError) as exc:
        raise ctx.error(("model", "target"), str(exc)) from None
