"""Named systems of a model file: ``[system] type = "networked_raid" | "nfs" | "raid"``."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from ...errors import InvalidModelError, InvalidTypeError
from ...model import Station
from ._fields import (
    _NFS_BANDWIDTHS,
    _NFS_JOB_KEYS,
    _NFS_SYSTEM_KEYS,
    _RAID_KEYS,
    SYSTEM_TYPES,
    _integer,
    _quantity,
    _refuse_bare,
    _string,
    _unknown,
)
from ._scanner import ModelFileError, _Ctx


def _system_error(ctx: _Ctx, table: Mapping, exc: Exception) -> ModelFileError:
    """Point a model class's error at the key it names (else at [system])."""
    msg = str(exc)
    for key in table:
        if key != "type" and re.search(rf"\b{re.escape(key)}\b", msg):
            return ctx.error(("system", key), msg)
    return ctx.error(("system",), msg)


_CACHE_KEYS = ("size", "working_set", "popularity", "alpha", "item_size")

#: the dimension of each quantity of an nfs system and of a cache (the others are counts,
#: probabilities, names, or read_cpu_per_byte in seconds per byte, which has no unit string)
_NFS_DIMENSIONS = {
    **dict.fromkeys(("b1", "b2", "b3", "b4", "client_link"), "rate"),
    **dict.fromkeys(("rsize", "wsize", "async_merge_size", "file_size"), "size"),
    **dict.fromkeys(
        ("server_cpu_per_request", "client_cpu_per_request", "disk_access_time"), "time"
    ),
}
#: a cache with an item_size holds bytes; without one, size and working_set count items
_CACHE_DIMENSIONS = dict.fromkeys(("size", "working_set", "item_size"), "size")


def _units_given(ctx: _Ctx, table: Mapping, dimensions: Mapping[str, str], path: tuple) -> None:
    """Refuse a quantity of a [system] table written as a bare number (``file_size = 4096``):
    the Python classes read plain numbers as SI, a person's file gives the unit."""
    for key, value in table.items():
        if key in dimensions:
            _refuse_bare(ctx, value, (*path, key), dimensions[key])


def _networked_raid_dimensions(params: Mapping) -> dict[str, str]:
    """The dimension of each quantity key of a networked_raid table (names or symbols)."""
    from ...models.storage_params import PARAMETERS, SYMBOLS

    out = {}
    for key in params:
        name = SYMBOLS.get(key, key)
        if name in PARAMETERS and PARAMETERS[name][1] in ("size", "time", "rate"):
            out[key] = PARAMETERS[name][1]
    return out


def _cache(ctx: _Ctx, params: dict, key: str) -> Any:
    """A ``{size, working_set, popularity, alpha, item_size}`` table as a Cache (or None)."""
    from ...models.cache import Cache

    raw = params.pop(key, None)
    if raw is None:
        return None
    path = ("system", key)
    if not isinstance(raw, Mapping):
        raise ctx.error(path, "must be a table { size = ..., working_set = ..., ... }")
    _unknown(ctx, raw, _CACHE_KEYS, path)
    if "item_size" in raw:
        _units_given(ctx, raw, _CACHE_DIMENSIONS, path)
    for need in ("size", "working_set"):
        if need not in raw:
            raise ctx.error(path, f"a cache needs {need}")
    try:
        return Cache(**raw)
    except (InvalidModelError, InvalidTypeError) as exc:
        msg = str(exc)
        for k in _CACHE_KEYS:
            if re.search(rf"\bcache {k}\b", msg):
                raise ctx.error((*path, k), msg) from None
        raise ctx.error(path, msg) from None


def _system_stations(ctx: _Ctx, table: Any) -> list[Station]:
    """Stations of a named system: ``[system] type = "networked_raid" | "nfs" | "raid"``."""
    return _system(ctx, table)[0]


def _system(ctx: _Ctx, table: Any, think_time: float = 0.0) -> tuple[list[Station], Any]:
    """Stations of a named system, and the storage model with caches (or None).

    A ``networked_raid`` system with ``master_cache``/``server_cache`` tables, or an
    ``nfs`` one with ``client_cache``/``server_cache``, derives its hit ratios from them
    (:mod:`qnmodel.models.storage_cache`); the model is returned so that the capacity
    questions can weigh more cache and a faster link.
    """
    if not isinstance(table, Mapping):
        raise ctx.error(("system",), "must be a table: [system] with type = ...")
    kind = table.get("type")
    if kind not in SYSTEM_TYPES:
        raise ctx.error(("system", "type"), f"must be one of {list(SYSTEM_TYPES)}, got {kind!r}")
    params = {k: v for k, v in table.items() if k != "type"}
    try:
        if kind == "networked_raid":
            return _networked_raid_stations(ctx, params, think_time)
        if kind == "nfs":
            return _nfs_stations(ctx, params, think_time)
        return _raid_stations(ctx, params), None
    except ModelFileError:
        raise
    except (InvalidModelError, InvalidTypeError) as exc:
        raise _system_error(ctx, table, exc) from None


def _networked_raid_stations(ctx: _Ctx, params: dict, think_time: float) -> tuple:
    from ...models.storage import NetworkedRAID
    from ...models.storage_cache import CachedNetworkedRAID

    master_cache = _cache(ctx, params, "master_cache")
    server_cache = _cache(ctx, params, "server_cache")
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
    _units_given(ctx, params, _networked_raid_dimensions(params), ("system",))
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
    if master_cache is None and server_cache is None:
        return list(system.network(0.0, expand_servers=expand).stations), None
    model = CachedNetworkedRAID(system, master_cache, server_cache, think_time)
    stations = list(model.resolved().network(0.0, expand_servers=expand).stations)
    return stations, (None if expand else model)


def _nfs_stations(ctx: _Ctx, params: dict, think_time: float) -> tuple:
    from ...models.nfs import NFSBandwidth, NFSSystem
    from ...models.storage_cache import CachedNFS

    client_cache = _cache(ctx, params, "client_cache")
    server_cache = _cache(ctx, params, "server_cache")
    for cache, hit in ((client_cache, "client_hit"), (server_cache, "server_hit")):
        if cache is not None and hit in params:
            raise ctx.error(
                ("system", hit),
                f"give either {hit} or the cache it comes from, not both",
            )
    allowed = _NFS_BANDWIDTHS + _NFS_SYSTEM_KEYS + _NFS_JOB_KEYS + ("client_cache", "server_cache")
    _unknown(ctx, params, allowed, ("system",))
    _units_given(ctx, params, _NFS_DIMENSIONS, ("system",))
    for key in (*_NFS_BANDWIDTHS, "file_size"):
        if key not in params:
            raise ctx.error(("system",), f"an nfs system needs {key} (see the model-file schema)")
    bw = NFSBandwidth(*(params[k] for k in _NFS_BANDWIDTHS))
    system = NFSSystem(bw, **{k: params[k] for k in _NFS_SYSTEM_KEYS if k in params})
    job = {k: params[k] for k in ("op", "client_hit", "server_hit") if k in params}
    if client_cache is None and server_cache is None:
        return list(system.network(params["file_size"], **job).stations), None
    model = CachedNFS(
        system,
        params["file_size"],
        params.get("op", "read"),
        client_cache,
        server_cache,
        think_time,
    )
    hits = model.hit_ratios()
    job = {k: v for k, v in job.items() if k == "op"}
    if client_cache is None:
        hits["client_hit"] = params.get("client_hit", 0.0)
    if server_cache is None:
        hits["server_hit"] = params.get("server_hit", 0.0)
    return list(system.network(params["file_size"], **job, **hits).stations), model


def _raid_stations(ctx: _Ctx, params: dict) -> list[Station]:
    from ...models.raid import disk_demands

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
