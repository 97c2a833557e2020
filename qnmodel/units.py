"""Units: SI inside, unit strings at the edges.

Inside qnmodel every number is in SI base units: **seconds** for times,
**bytes** for sizes, **bytes per second** for rates and **hertz** (events per
second) for frequencies. Strings with units are accepted at every public
boundary and converted here, and only here.

Decisions, taken once
---------------------
* Decimal prefixes are powers of 1000: ``k`` = 1e3, ``M`` = 1e6, ``G`` = 1e9,
  ``T`` = 1e12, ``P`` = 1e15 (so ``"35 MB/s" == 35e6`` bytes/s).
* Binary prefixes are powers of 1024 and carry an ``i``: ``Ki``, ``Mi``,
  ``Gi``, ``Ti``, ``Pi`` (so ``"16 KiB" == 16384`` bytes).
* ``B`` is a byte; a bit is spelled ``bit`` (``"100 Mbit/s" == 12.5e6``
  bytes/s) or, for rates only, with the networking suffix ``bps``
  (``"100 Mbps"``). Eight bits make a byte.
* A bare lower-case ``b`` (``"100 Mb/s"``, ``"4 kb"``) is **rejected as
  ambiguous**: it is the classic megabit/megabyte trap. So is ``"KB"``, which
  half the world reads as 1000 bytes and the other half as 1024: write ``kB``
  or ``KiB``. An upper-case ``K`` is accepted as 1000 for bits and hertz
  (``"56 Kbit/s"``, ``"100 KHz"``) where no binary reading exists.
* Rates of events are frequencies: ``Hz``, ``IOPS`` (or ``iops``), ``ops/s``,
  ``req/s`` and ``/s``, the named ones with decimal prefixes (``"40k IOPS" == 40e3``
  per second, ``"1.2 Mops/s"``, ``"40 kHz"``).
* A number without a unit is rejected by :func:`parse`; plain Python numbers
  (not strings) are taken to be SI already by the validators.

Examples
--------
>>> parse("100 Mbit/s")
12500000.0
>>> parse("16 KiB")
16384.0
>>> parse("35 MB/s")
35000000.0
>>> parse("4.9 ms")
0.0049
>>> parse("40k IOPS")
40000.0
>>> parse("4.9 ms", dimension="size")
Traceback (most recent call last):
...
qnmodel.errors.UnitError: '4.9 ms' is a time (s), but a size (bytes) is required here
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, DecimalException

from .errors import InvalidTypeError, UnitError

__all__ = [
    "DIMENSIONS",
    "parse",
    "parse_quantity",
    "format_quantity",
    "bare_number_fix",
    "split_header",
    "KB",
    "MB",
    "GB",
    "TB",
    "KiB",
    "MiB",
    "GiB",
    "TiB",
    "ms",
    "us",
    "ns",
    "Mbit_per_s",
    "Gbit_per_s",
]

#: dimension name -> SI unit symbol, as used in messages and axis labels
DIMENSIONS: dict[str, str] = {
    "time": "s",
    "size": "bytes",
    "rate": "bytes/s",
    "frequency": "Hz",
}

# Constants for code that prefers multiplication to strings.
KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
KiB = 1024.0
MiB = 1024.0**2
GiB = 1024.0**3
TiB = 1024.0**4
ms = 1e-3
us = 1e-6
ns = 1e-9
Mbit_per_s = 1e6 / 8
Gbit_per_s = 1e9 / 8

# Factors are exact Decimals so that a conversion rounds once: parse("4.9 ms") == 0.0049.
_D = Decimal
_DECIMAL = {
    "": _D(1),
    "k": _D("1e3"),
    "M": _D("1e6"),
    "G": _D("1e9"),
    "T": _D("1e12"),
    "P": _D("1e15"),
}
_BINARY = {
    "Ki": _D(1024),
    "Mi": _D(1024**2),
    "Gi": _D(1024**3),
    "Ti": _D(1024**4),
    "Pi": _D(1024**5),
}
_EIGHTH = _D("0.125")  # bytes per bit

_TIME = {
    "s": _D(1),
    "sec": _D(1),
    "ms": _D("1e-3"),
    "us": _D("1e-6"),
    "µs": _D("1e-6"),
    "μs": _D("1e-6"),
    "ns": _D("1e-9"),
    "min": _D(60),
    "h": _D(3600),
}


def _build_tables() -> tuple[dict[str, tuple[Decimal, str]], dict[str, str]]:
    """Return (unit -> (factor, dimension), ambiguous unit -> advice)."""
    units: dict[str, tuple[Decimal, str]] = {}
    ambiguous: dict[str, str] = {}
    for sym, f in _TIME.items():
        units[sym] = (f, "time")
    prefixes = {**_DECIMAL, **_BINARY}
    for p, f in prefixes.items():
        units[f"{p}B"] = (f, "size")
        units[f"{p}B/s"] = (f, "rate")
        units[f"{p}bit"] = (f * _EIGHTH, "size")
        units[f"{p}bit/s"] = (f * _EIGHTH, "rate")
        if p in _DECIMAL:
            units[f"{p}bps"] = (f * _EIGHTH, "rate")
            units[f"{p}Hz"] = (f, "frequency")
            units[f"{p}T/s"] = (f, "frequency")  # transfers per second (memory: "1333 MT/s")
        if p:
            ambiguous[f"{p}b"] = f"write '{p}bit' for bits or '{p}B' for bytes"
            ambiguous[f"{p}b/s"] = f"write '{p}bit/s' for bits or '{p}B/s' for bytes per second"
    # Upper-case K: 1000 where no binary reading exists (bits, hertz); ambiguous for bytes.
    units["Kbit"] = (_DECIMAL["k"] * _EIGHTH, "size")
    units["Kbit/s"] = (_DECIMAL["k"] * _EIGHTH, "rate")
    units["Kbps"] = (_DECIMAL["k"] * _EIGHTH, "rate")
    units["KHz"] = (_DECIMAL["k"], "frequency")
    ambiguous["KB"] = "write 'kB' for 1000 bytes or 'KiB' for 1024 bytes"
    ambiguous["KB/s"] = "write 'kB/s' for 1000 bytes/s or 'KiB/s' for 1024 bytes/s"
    ambiguous["b"] = "write 'bit' for bits or 'B' for bytes"
    ambiguous["b/s"] = "write 'bit/s' for bits or 'B/s' for bytes per second"
    ambiguous["Kb"] = "write 'Kbit' for bits or 'kB'/'KiB' for bytes"
    ambiguous["Kb/s"] = "write 'Kbit/s' for bits or 'kB/s'/'KiB/s' for bytes per second"
    ambiguous["mb"] = "write 'Mbit' for megabits or 'MB' for megabytes"
    ambiguous["mB"] = "'m' is milli; write 'MB' for megabytes"
    # Events per second: I/O operations and requests, with decimal prefixes ("40k IOPS",
    # "1.2 Mops/s"; an upper-case K too, as for hertz: no binary reading exists).
    for sym in ("/s", "1/s", "jobs/s"):
        units[sym] = (_D(1), "frequency")
    for sym in ("ops/s", "IOPS", "iops", "req/s"):
        for p, f in {**_DECIMAL, "K": _DECIMAL["k"]}.items():
            units[f"{p}{sym}"] = (f, "frequency")
    return units, ambiguous


_UNITS, _AMBIGUOUS = _build_tables()

_NUMBER = r"[+-]?(?:\d+(?:_\d+)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
# Matched against the stripped text, with a greedy tail: linear time (a lazy ``.*?`` before
# ``\s*$`` was quadratic in a run of spaces inside the unit).
_PATTERN = re.compile(rf"(?P<num>{_NUMBER})\s*(?P<unit>[^\s\d].*)?")
#: the longest quantity string read (``"1.5e-3 MiB/s"`` needs a dozen characters)
MAX_QUANTITY_CHARS = 100


def parse_quantity(text: str) -> tuple[float, str]:
    """Parse ``"<number> <unit>"`` into ``(value_in_SI, dimension)``.

    Parameters
    ----------
    text : str
        A number followed by a unit, with or without a space: ``"4.9 ms"``,
        ``"100Mbit/s"``, ``"16 KiB"``, ``"1e3 IOPS"``.

    Returns
    -------
    (float, str)
        The value in SI base units and its dimension, one of :data:`DIMENSIONS`.

    Raises
    ------
    UnitError
        No unit, an unknown unit, an ambiguous unit (``Mb``, ``KB``), or a
        value that is not a finite number.
    InvalidTypeError
        ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise InvalidTypeError(
            "a quantity string like '4.9 ms' is required, "
            f"got {text!r} of type {type(text).__name__}"
        )
    if len(text) > MAX_QUANTITY_CHARS:
        raise UnitError(
            f"quantity string {text[:40]!r}... has {len(text)} characters, more than the "
            f"{MAX_QUANTITY_CHARS} (qnmodel.units.MAX_QUANTITY_CHARS) a '<number> <unit>' needs"
        )
    m = _PATTERN.fullmatch(text.strip())
    if m is None:
        raise UnitError(f"cannot read {text!r} as '<number> <unit>' (e.g. '4.9 ms', '16 KiB')")
    unit = m.group("unit")
    if not unit:
        raise UnitError(
            f"{text!r} has no unit; add one (e.g. 's', 'ms', 'B', 'KiB', 'MB/s', 'Mbit/s')"
        )
    unit = unit.replace(" ", "")
    if unit in _AMBIGUOUS:
        raise UnitError(f"unit {unit!r} in {text!r} is ambiguous: {_AMBIGUOUS[unit]}")
    if unit not in _UNITS:
        raise UnitError(
            f"unknown unit {unit!r} in {text!r}; known units are times (s, ms, us, ns), sizes "
            "(B, kB, MB, KiB, MiB, bit, Mbit), rates (B/s, MB/s, MiB/s, Mbit/s, Gbps) and "
            "frequencies (Hz, kHz, IOPS, kIOPS, ops/s, req/s, /s)"
        )
    factor, dim = _UNITS[unit]
    try:
        value = float(Decimal(m.group("num").replace("_", "")) * factor)
    except (DecimalException, OverflowError):  # an exponent beyond Decimal's range
        raise UnitError(f"{text!r} is not a finite quantity") from None
    if not math.isfinite(value):
        raise UnitError(f"{text!r} is not a finite quantity")
    return value, dim


def parse(text: str, dimension: str | None = None) -> float:
    """Parse a quantity string into a float in SI base units.

    Parameters
    ----------
    text : str
        ``"<number> <unit>"``; see the module docstring for the unit rules.
    dimension : {"time", "size", "rate", "frequency"}, optional
        When given, the parsed quantity must have this dimension.

    Returns
    -------
    float
        Seconds, bytes, bytes/s or hertz.

    Raises
    ------
    UnitError
        See :func:`parse_quantity`; also when the dimension does not match.
    """
    if dimension is not None and dimension not in DIMENSIONS:
        raise UnitError(f"dimension must be one of {sorted(DIMENSIONS)}, got {dimension!r}")
    value, dim = parse_quantity(text)
    if dimension is not None and dim != dimension:
        raise UnitError(
            f"{text!r} is a {dim} ({DIMENSIONS[dim]}), but a {dimension} "
            f"({DIMENSIONS[dimension]}) is required here"
        )
    return value


#: how a bare number would be written with its unit, per dimension, for the fix of a refusal
_BARE_EXAMPLES = {
    "time": ("{v} ms", "{v} s"),
    "size": ("{v} KiB", "{v} B"),
    "rate": ("{v} MB/s", "{v} Mbit/s"),
    "frequency": ("{v}/s", "{v} IOPS"),
}


def bare_number_fix(value: object, dimension: str) -> str:
    """The fix for a quantity a person wrote without its unit (``think_time = 20``).

    A number typed at the command line, in a model file or in a measured file is not
    read as SI: ``20`` may mean 20 ms as well as 20 s. The refusal names the field and the
    value, then this text: ``"a time needs its unit: write '20 ms' or '20 s'"``.

    >>> bare_number_fix(20, "time")
    "a time needs its unit: write '20 ms' or '20 s'"
    """
    if dimension not in _BARE_EXAMPLES:
        raise UnitError(f"dimension must be one of {sorted(_BARE_EXAMPLES)}, got {dimension!r}")
    v = f"{value:g}" if isinstance(value, float) else str(value)
    a, b = (form.format(v=v) for form in _BARE_EXAMPLES[dimension])
    return f"a {dimension} needs its unit: write '{a}' or '{b}'"


#: units written at the end of a column name after an underscore (``latency_mean_ms``,
#: ``throughput_ops_s``, ``bs_bytes``): the underscore spelling -> the unit symbol
_HEADER_SUFFIXES = {
    "B_s": "B/s", "kB_s": "kB/s", "MB_s": "MB/s", "GB_s": "GB/s", "KiB_s": "KiB/s",
    "MiB_s": "MiB/s", "GiB_s": "GiB/s", "ops_s": "ops/s", "req_s": "req/s", "per_s": "/s",
    "s": "s", "ms": "ms", "us": "us", "ns": "ns",
    "bytes": "B", "B": "B", "kB": "kB", "KiB": "KiB", "MB": "MB", "MiB": "MiB",
    "iops": "IOPS", "IOPS": "IOPS", "Hz": "Hz",
}  # fmt: skip
_HEADER_BRACKET = re.compile(r"^\s*(?P<base>.*?)\s*[\[(]\s*(?P<unit>[^\])]*?)\s*[\])]\s*$")


def split_header(name: str) -> tuple[str, float | None, str | None]:
    """A column name's quantity and unit: ``(base, factor to SI, dimension)``.

    Measured files carry their units in the column names: ``"R [ms]"``, ``"R (ms)"``,
    ``"R_ms"``, ``"latency_mean_ms"``, ``"throughput_ops_s"``, ``"bs_bytes"``. A name
    without a unit gives ``(name, None, None)``; a bracket holding no known unit raises.

    >>> split_header("latency_mean_ms")
    ('latency_mean', 0.001, 'time')
    >>> split_header("R [us]"), split_header("n")
    (('R', 1e-06, 'time'), ('n', None, None))

    Raises
    ------
    UnitError
        ``"R [msec]"``: a bracketed unit that :func:`parse` does not know.
    """
    if not isinstance(name, str):
        raise InvalidTypeError(f"a column name must be a string, got {name!r}")
    m = _HEADER_BRACKET.match(name)
    if m and m.group("base"):
        unit = m.group("unit").replace(" ", "")
        if unit in _AMBIGUOUS:
            raise UnitError(f"column {name!r}: unit {unit!r} is ambiguous: {_AMBIGUOUS[unit]}")
        if unit not in _UNITS:
            raise UnitError(
                f"column {name!r}: unknown unit {unit!r}; write e.g. 'R [ms]', "
                "'size [KiB]', 'throughput [1/s]'"
            )
        factor, dim = _UNITS[unit]
        return m.group("base"), float(factor), dim
    parts = name.strip().split("_")
    for n in (2, 1):
        if len(parts) > n and "_".join(parts[-n:]) in _HEADER_SUFFIXES:
            factor, dim = _UNITS[_HEADER_SUFFIXES["_".join(parts[-n:])]]
            return "_".join(parts[:-n]), float(factor), dim
    return name.strip(), None, None


_SI_SYMBOLS = {"time": "s", "size": "B", "rate": "B/s", "frequency": "Hz"}
_FORMAT_STEPS = {
    "time": [(1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")],
    "size": [(1024.0**4, "TiB"), (1024.0**3, "GiB"), (1024.0**2, "MiB"), (1024.0, "KiB"), (1, "B")],
    "rate": [(1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s")],
    "frequency": [(1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz"), (1.0, "Hz")],
}


def format_quantity(value: float, dimension: str, digits: int = 4) -> str:
    """Format an SI value with a readable unit: ``format_quantity(0.0049, "time") == "4.9 ms"``.

    The one formatter of quantities for people: the command line's tables and messages, the
    reports and the results' reprs all print times, sizes and rates with it. Zero and
    non-finite values keep the SI unit (``"0 s"``, ``"inf s"``). The output always parses
    back with :func:`parse` to the same value within ``digits`` significant digits.

    >>> format_quantity(0.000104858, "time"), format_quantity(0.0, "time")
    ('104.9 us', '0 s')
    """
    if dimension not in _FORMAT_STEPS:
        raise UnitError(f"dimension must be one of {sorted(_FORMAT_STEPS)}, got {dimension!r}")
    v = float(value)
    if v == 0.0 or not math.isfinite(v):
        return f"{v:g} {_SI_SYMBOLS[dimension]}"
    for factor, sym in _FORMAT_STEPS[dimension]:
        if abs(v) >= factor:
            return f"{v / factor:.{digits}g} {sym}"
    factor, sym = _FORMAT_STEPS[dimension][-1]
    return f"{v / factor:.{digits}g} {sym}"
