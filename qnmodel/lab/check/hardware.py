"""A hardware description and its theoretical peaks (seeds 000 and 004).

Seed 000 derives the memory peak from the module's transfer rate and bus width
(1333 MT/s x 64 bit = 10,664 MB/s per channel); seed 004 compares what STREAM, the network
tests and the disks measure against such figures and across nodes. A TOML description::

    [memory]                    # per node (a [[node]] may override it)
    transfer_rate = "1333 MT/s"
    bus_width = "64 bit"
    channels = 2

    [[link]]
    name = "ib0"
    rate = "40 Gbit/s"

    [[device]]
    name = "sda"
    read = "150 MB/s"
    write = "140 MB/s"

    [[node]]
    name = "oss1"
    [[node]]
    name = "oss2"

Every quantity carries its unit ("a rate without unit" is refused: a bare 40 could be bits
or bytes). Peaks are bytes/s.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._validate import as_positive_int, as_quantity, read_text_file
from ...errors import InvalidModelError, InvalidTypeError

__all__ = ["Hardware", "load_hardware", "loads_hardware", "memory_peak"]


def memory_peak(transfer_rate: Any, bus_width: Any, channels: int = 1) -> float:
    """Theoretical memory bandwidth, bytes/s: transfers/s x bus width x channels.

    >>> memory_peak("1333 MT/s", "64 bit") / 1e6   # seed 000's worked example
    10664.0
    """
    t = as_quantity(transfer_rate, "memory.transfer_rate", "frequency", positive=True)
    w = as_quantity(bus_width, "memory.bus_width", "size", positive=True)
    c = as_positive_int(channels, "memory.channels", 1)
    return t * w * c


@dataclass(frozen=True)
class Hardware:
    """Theoretical peaks of the components, by figure key, and the node names.

    ``peaks`` maps a figure key (``"memory"``, ``"link:ib0"``, ``"device:sda:read"``) to
    bytes/s; ``nodes`` lists the node names the description names (may be empty).
    """

    peaks: Mapping[str, float]
    nodes: tuple[str, ...] = ()
    node_peaks: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    source: str = "<hardware>"

    def peak(self, node: str, key: str) -> float | None:
        """The peak of ``key`` on ``node`` (its own override, else the shared one)."""
        own = self.node_peaks.get(node, {})
        return own.get(key, self.peaks.get(key))


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise InvalidTypeError(
            f'{where} must be a quantity with its unit in a string (e.g. "40 Gbit/s"), got '
            f"{value!r}: a bare number could be bits or bytes"
        )
    return value


def _table(doc: Mapping, key: str, where: str) -> Mapping:
    value = doc.get(key, {})
    if not isinstance(value, Mapping):
        raise InvalidTypeError(f"{where}.{key} must be a table, got {value!r}")
    return value


def _array(doc: Mapping, key: str, where: str) -> list:
    value = doc.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise InvalidTypeError(f"{where}: [[{key}]] must be an array of tables, got {value!r}")
    return value


def _unknown(table: Mapping, allowed: set[str], where: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise InvalidModelError(f"{where}: unknown key {extra[0]!r}; allowed: {sorted(allowed)}")


def _peaks(doc: Mapping, where: str) -> dict[str, float]:
    out: dict[str, float] = {}
    mem = _table(doc, "memory", where)
    if mem:
        _unknown(mem, {"transfer_rate", "bus_width", "channels", "peak"}, f"{where}.memory")
        derived = None
        if "transfer_rate" in mem or "bus_width" in mem:
            for k in ("transfer_rate", "bus_width"):
                if k not in mem:
                    raise InvalidModelError(f"{where}.memory: {k} is missing (needed for the peak)")
            channels = mem.get("channels", 1)
            if isinstance(channels, bool) or not isinstance(channels, int):
                raise InvalidTypeError(
                    f"{where}.memory.channels must be an integer, got {channels!r}"
                )
            if channels < 1:
                raise InvalidModelError(
                    f"{where}.memory.channels must be >= 1, got {channels}: a node with no "
                    "memory channel cannot run"
                )
            derived = memory_peak(
                _text(mem["transfer_rate"], f"{where}.memory.transfer_rate"),
                _text(mem["bus_width"], f"{where}.memory.bus_width"),
                channels,
            )
        if "peak" in mem:
            given = as_quantity(_text(mem["peak"], f"{where}.memory.peak"), f"{where}.memory.peak",
                                "rate", positive=True)  # fmt: skip
            if derived is not None and not math.isclose(given, derived, rel_tol=0.01):
                raise InvalidModelError(
                    f"{where}.memory: peak = {mem['peak']!r} contradicts transfer_rate x "
                    f"bus_width x channels = {derived / 1e6:.6g} MB/s; give one or the other"
                )
            derived = given
        if derived is not None:
            out["memory"] = derived
    seen: set[str] = set()
    for i, link in enumerate(_array(doc, "link", where)):
        w = f"{where}.link[{i}]"
        _unknown(link, {"name", "rate"}, w)
        name = link.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidModelError(f"{w}.name must be a non-empty string, got {name!r}")
        if name in seen:
            raise InvalidModelError(f"{w}.name {name!r} appears twice")
        seen.add(name)
        if "rate" not in link:
            raise InvalidModelError(f"{w} ({name}): rate is missing")
        out[f"link:{name}"] = as_quantity(_text(link["rate"], f"{w}.rate"), f"{w}.rate", "rate",
                                          positive=True)  # fmt: skip
    for i, dev in enumerate(_array(doc, "device", where)):
        w = f"{where}.device[{i}]"
        _unknown(dev, {"name", "read", "write"}, w)
        name = dev.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidModelError(f"{w}.name must be a non-empty string, got {name!r}")
        if not ("read" in dev or "write" in dev):
            raise InvalidModelError(f"{w} ({name}): give its datasheet read and/or write rate")
        for op in ("read", "write"):
            if op in dev:
                out[f"device:{name}:{op}"] = as_quantity(
                    _text(dev[op], f"{w}.{op}"), f"{w}.{op}", "rate", positive=True
                )
    return out


def loads_hardware(text: str, source: str = "<hardware>") -> Hardware:
    """Parse a hardware description (TOML text)."""
    if not isinstance(text, str):
        raise InvalidTypeError(
            f"text must be a str of TOML (a hardware description), got {type(text).__name__}"
        )
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidModelError(f"{source}: not valid TOML: {exc}") from None
    _unknown(doc, {"memory", "link", "device", "node"}, source)
    shared = _peaks(doc, source)
    nodes: list[str] = []
    node_peaks: dict[str, dict[str, float]] = {}
    for i, node in enumerate(_array(doc, "node", source)):
        w = f"{source}: node[{i}]"
        name = node.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidModelError(f"{w}.name must be a non-empty string, got {name!r}")
        if name in nodes:
            raise InvalidModelError(f"{w}.name {name!r} appears twice")
        _unknown(node, {"name", "memory", "link", "device"}, w)
        nodes.append(name)
        node_peaks[name] = _peaks(node, f"{source}: node {name!r}")
    if not shared and not any(node_peaks.values()):
        raise InvalidModelError(
            f"{source}: no component with a peak (memory, [[link]], [[device]])"
        )
    return Hardware(shared, tuple(nodes), node_peaks, source)


def load_hardware(path: str | Path) -> Hardware:
    """Read a hardware description from a TOML file."""
    p = Path(path)
    text = read_text_file(p, "hardware description")  # missing, binary (not TOML), enormous
    return loads_hardware(text, str(p))
