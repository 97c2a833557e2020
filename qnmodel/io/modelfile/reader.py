"""Reading a model file: :func:`load`, :func:`loads`, :func:`with_values` and the builder."""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..._validate import read_text_file
from ...errors import InvalidModelError, InvalidTypeError
from ...model import ClosedClass, Network, OpenClass, Station
from ...solvers.groups import find_groups
from ._fields import (
    _MODEL_KEYS,
    _STATION_KEYS,
    _TOP_KEYS,
    _arrival_rates,
    _classes,
    _fits_in_memory,
    _populations,
    _quantity,
    _station,
    _string,
    _target,
    _unknown,
)
from ._scanner import ModelFileError, _Ctx
from ._systems import _system
from ._texts import DEMO_MODEL_TOML  # noqa: F401  (the doctest of with_values)
from .spec import ModelSpec

__all__ = ["load", "loads", "with_values"]


def with_values(
    spec: ModelSpec, values: Mapping[str, Any], *, units_required: bool = False
) -> ModelSpec:
    """A copy of a model with some values replaced, validated like the file itself.

    Parameters
    ----------
    spec : ModelSpec
        A model read by :func:`load` or :func:`loads`.
    values : mapping of str to value
        Keys are ``"think_time"``, ``"population"``, ``"populations"`` (the
        ``[model]`` keys) or ``"<station>.<key>"`` with a station name and one of
        the station keys (``"disk.service_time"``, ``"network.rate"``); values are
        what the file would hold (``"5 ms"``, ``0.3``, ``4``); a plain number for a
        quantity is SI, as everywhere in the Python API (``{"think_time": 0.02}``).
    units_required : bool, default False
        Refuse a quantity given as a bare number, as in the file itself: the values
        were typed by a person (``qnmodel --set think_time=20``), and ``20`` may mean
        20 ms as well as 20 s.

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
            if key in ("N", "populations", "arrival_rate"):
                model.pop("N", None)
                model.pop("populations", None)
                model.pop("arrival_rate", None)
            model[key] = value
            continue
        if key.startswith("class."):
            _, cname, ckey = (key.split(".", 2) + ["", ""])[:3]
            tables = doc.get("class")
            names_c = [t.get("name") for t in tables] if isinstance(tables, list) else []
            if cname not in names_c or ckey not in ("N", "think_time", "arrival_rate"):
                raise InvalidModelError(
                    f"cannot set {key!r}: use 'class.<name>.N', "
                    f"'class.<name>.think_time' or 'class.<name>.arrival_rate' with a class "
                    f"among {names_c}"
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
            raise _cannot_set(key, doc, names)
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
    return _build(doc, _Ctx(spec.source, spec.text, bare_si=not units_required), spec.name)


def _cannot_set(key: str, doc: Mapping, names: list) -> InvalidModelError:
    """The refusal of a key :func:`with_values` does not know, naming what this model can set."""
    bare = key.removeprefix("model.")
    if key != bare and bare in _MODEL_KEYS:
        return InvalidModelError(
            f"cannot set {key!r}: a [model] key is set by its name alone: use {bare!r}"
        )
    forms = [f"a [model] key ({', '.join(_MODEL_KEYS)})"]
    if names:
        forms.append(f"'<station>.<key>' with a station among {names}")
    system = doc.get("system")
    if isinstance(system, dict):
        forms.append(f"'system.<parameter>' (a key of its [system] table, {system.get('type')!r})")
    tables = doc.get("class")
    if isinstance(tables, list) and tables:
        forms.append(
            "'class.<name>.N' or 'class.<name>.think_time' with a class among "
            f"{[t.get('name') for t in tables]}"
        )
    return InvalidModelError(f"cannot set {key!r}: this model takes " + "; or ".join(forms))


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
        text = read_text_file(p, "model file")
    except InvalidModelError as exc:  # missing, a directory, binary, enormous
        reason = str(exc).removeprefix(f"{p}: ")
        raise ModelFileError(str(p), "", None, reason) from None
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


def _multiclass_network(
    ctx: _Ctx,
    stations: list[Station],
    classes: tuple[str, ...],
    populations: np.ndarray,
    think_times: np.ndarray,
    D: np.ndarray,
    by_visit: list,
    rates: np.ndarray | None = None,
) -> Network:
    """The description of a file with [[class]] tables: per-class demands (or, where the file
    gives them, per-class service times and visits: a FCFS station whose classes share the
    service time stays product form), closed classes (or open ones, with ``rates``)."""
    per_class = []
    for k, s in enumerate(stations):
        kw: dict = {"discipline": s.discipline, "servers": s.servers,
                    "rate_multipliers": s.rate_multipliers, "scv": s.scv}  # fmt: skip
        if by_visit[k] is None:
            kw["demand"] = dict(zip(classes, D[:, k].tolist(), strict=True))
        else:
            kw["visits"] = {c: v for c, (v, _) in zip(classes, by_visit[k], strict=True)}
            kw["service_time"] = {c: t for c, (_, t) in zip(classes, by_visit[k], strict=True)}
        try:
            per_class.append(Station(s.name, **kw))
        except (InvalidModelError, InvalidTypeError) as exc:
            raise ctx.error(("station",), str(exc)) from None
    closed = [
        ClosedClass(c, int(n), float(z))
        for c, n, z in zip(classes, populations, think_times, strict=True)
    ]
    if rates is not None:
        closed = [OpenClass(c, float(lam)) for c, lam in zip(classes, rates, strict=True)]
    try:
        return Network(tuple(per_class), classes=tuple(closed))
    except (InvalidModelError, InvalidTypeError) as exc:
        raise ctx.error(("class",), str(exc)) from None


def _build(doc: Mapping, ctx: _Ctx, default_name: str) -> ModelSpec:
    _unknown(ctx, doc, _TOP_KEYS, ())
    model = doc.get("model")
    if model is None:
        raise ctx.error(("model",), "missing [model] table (think_time, N)")
    if not isinstance(model, Mapping):
        raise ctx.error(("model",), "must be a table")
    _unknown(ctx, model, _MODEL_KEYS, ("model",))
    name = _string(ctx, model.get("name", default_name), ("model", "name"))
    description = _string(ctx, model.get("description", ""), ("model", "description"))
    think = _quantity(ctx, model.get("think_time", 0.0), ("model", "think_time"), "time")
    arrival_rates = _arrival_rates(ctx, model)
    target = _target(ctx, model)
    classes: tuple[str, ...] = ()
    if arrival_rates is not None and "class" in doc:
        raise ctx.error(
            ("model", "arrival_rate"),
            "arrival_rate under [model] makes a single-class open model; with [[class]] "
            "tables, give each class its own arrival_rate in its table",
        )
    if "class" in doc:
        for key in ("N", "populations"):
            if key in model:
                raise ctx.error(
                    ("model", key),
                    "a multi-class model takes its populations from the [[class]] tables; "
                    "remove this key",
                )
        classes, class_pops, class_thinks, class_rates = _classes(ctx, doc["class"], think)
        populations = np.array([max(int(class_pops.sum()), 1)], dtype=np.int64)
    elif arrival_rates is not None:
        populations = np.array([1], dtype=np.int64)  # unused: the model is open
    else:
        populations = _populations(ctx, model)
    if classes and "system" in doc:
        raise ctx.error(("system",), "a named [system] is single-class; remove [[class]] or it")
    system_stations, storage_model = (
        _system(ctx, doc["system"], think) if "system" in doc else ([], None)
    )
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
    per_class_demands, per_class_visits = [], [None] * len(system_stations)
    groups: dict[str, list[str]] = {}
    for i, st in enumerate(stations_raw):
        station, per_class, by_visit = _station(ctx, st, i, classes)
        if isinstance(st, dict) and "group" in st:
            g = _string(ctx, st["group"], ("station", i, "group"))
            if not g.strip():
                raise ctx.error(("station", i, "group"), "must be a non-empty group name")
            groups.setdefault(g, []).append(station.name)
        per_class_demands.append(per_class)
        per_class_visits.append(by_visit)
        if station.name in seen:
            raise ctx.error(
                ("station", i, "name"),
                f"duplicate station name {station.name!r} (also {seen[station.name]})",
            )
        seen[station.name] = f"station[{i}]"
        stations.append(station)
    if not stations:
        raise ctx.error(("station",), "no stations: add at least one [[station]] table")
    if arrival_rates is None and not classes and len(stations) > 1:  # now with every station
        key = "N" if "N" in model else "populations"
        _fits_in_memory(ctx, len(populations), ("model", key), len(stations), populations.max())
    net = Network(tuple(stations), think_time=think)
    if net.total_demand + net.think_time <= 0.0:
        raise ctx.error(
            ("station",), "all demands and the think time are zero; give a station a demand > 0"
        )
    if groups:
        if classes:
            raise ctx.error(
                ("station",),
                "group: the capacity questions that use groups are single-class; remove the "
                "group keys or the [[class]] tables",
            )
        try:
            find_groups(net, groups)
        except (InvalidModelError, InvalidTypeError) as exc:
            raise ctx.error(("station",), f"group: {exc}") from None
    multiclass = None
    if classes:
        D = np.array(per_class_demands, dtype=np.float64).T  # (C, K)
        if class_rates is None and not np.any(D.sum(axis=1) + class_thinks > 0):
            raise ctx.error(("station",), "all demands and think times are zero")
        multiclass = _multiclass_network(ctx, stations, classes, class_pops, class_thinks, D,
                                         per_class_visits, class_rates)  # fmt: skip
    return ModelSpec(
        network=net,
        populations=populations,
        multiclass=multiclass,
        arrival_rates=arrival_rates,
        target=target,
        storage_model=storage_model,
        groups={g: tuple(m) for g, m in groups.items()} or None,
        name=name,
        description=description,
        source=ctx.source,
        document=copy.deepcopy(dict(doc)),
        text=ctx.text,
    )
