"""Shared input checkers: one per input kind, used by every public function.

Each checker returns the normalised value (a float, an int, a float64 array)
or raises :class:`~qnmodel.errors.InvalidModelError` /
:class:`~qnmodel.errors.InvalidTypeError` with a message that names the
argument, shows the offending value, states the rule and, where there is one,
the fix. Nothing is ever silently corrected.
"""

from __future__ import annotations

import math
import numbers
import os
import stat
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .errors import InvalidModelError, InvalidTypeError, LatticeTooLargeError, UnitError
from .units import DIMENSIONS, parse

__all__ = [
    "as_quantity",
    "as_quantities",
    "as_reals",
    "as_demands",
    "as_demand_matrix",
    "as_population",
    "as_populations",
    "as_servers",
    "as_rate_multipliers",
    "as_flags",
    "as_server_counts",
    "as_per_class",
    "as_probability",
    "as_scv",
    "as_scvs",
    "as_integers",
    "as_hit_ratio",
    "as_choice",
    "as_positive_int",
    "check_same_length",
    "as_named_items",
    "read_text_file",
    "max_memory",
    "check_memory",
    "check_time_scale",
    "MAX_INPUT_BYTES",
    "DEFAULT_MAX_MEMORY",
]

#: Largest text input file (model, trace, topology, hardware, JMVA) read, in bytes: the
#: biggest real one is a few MiB (a long qnbench trace with samples); anything larger is
#: refused before it is read into memory.
MAX_INPUT_BYTES = 64 * 2**20

#: Memory an exact recursion may allocate for its results and working arrays by default,
#: bytes; the environment variable ``QNMODEL_MAX_MEMORY`` (e.g. ``"8 GiB"``) or a
#: ``max_memory`` argument where a solver has one overrides it.
DEFAULT_MAX_MEMORY = 1 << 30
MAX_MEMORY_ENV = "QNMODEL_MAX_MEMORY"


def _is_real_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool | np.bool_)


def as_quantity(
    value: Any,
    name: str,
    dimension: str,
    *,
    positive: bool = False,
    allow_inf: bool = False,
) -> float:
    """A non-negative finite quantity in SI units from a number or a unit string.

    Plain numbers are taken as SI already (seconds, bytes, bytes/s, hertz);
    strings must carry a unit of the right dimension (``"4.9 ms"``).
    ``positive=True`` also rejects zero.
    """
    if isinstance(value, str):
        try:
            v = parse(value, dimension)
        except UnitError as exc:
            raise UnitError(f"{name}: {exc}") from None
    elif _is_real_number(value):
        v = float(value)
    else:
        raise InvalidTypeError(
            f"{name} must be a number in {DIMENSIONS[dimension]} or a string with a unit, "
            f"got {value!r} of type {type(value).__name__}"
        )
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise InvalidModelError(f"{name} must be finite, got {value!r}")
    if v < 0.0:
        raise InvalidModelError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    if positive and v == 0.0:
        raise InvalidModelError(f"{name} must be > 0, got {value!r}")
    return v


def as_cost_per_byte(value: Any, name: str) -> float:
    """A non-negative finite cost in seconds per byte (a number; s/B has no unit string)."""
    if not _is_real_number(value):
        raise InvalidTypeError(
            f"{name} must be a number of seconds per byte, got {value!r} of type "
            f"{type(value).__name__}"
        )
    v = float(value)
    if not math.isfinite(v) or v < 0.0:
        raise InvalidModelError(
            f"{name} must be a finite number of seconds per byte >= 0, got {value!r}"
        )
    return v


def as_quantities(values: Any, name: str, dimension: str) -> np.ndarray:
    """A 1-D float64 array of non-negative finite quantities (numbers or unit strings)."""
    if isinstance(values, str) or _is_real_number(values):
        raise InvalidTypeError(
            f"{name} must be a sequence of {dimension}s, got the single value {values!r}; "
            "wrap it in a list"
        )
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        arr = np.asarray(values, dtype=np.float64)
        if arr.ndim != 1:
            raise InvalidModelError(f"{name} must be 1-D, got an array of shape {arr.shape}")
        bad = ~np.isfinite(arr) | (arr < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            rule = "finite" if not np.isfinite(arr[i]) else ">= 0"
            raise InvalidModelError(f"{name}[{i}] must be {rule}, got {float(arr[i])!r}")
        return arr.copy()
    if not isinstance(values, Iterable):
        raise InvalidTypeError(
            f"{name} must be a sequence of {dimension}s, got {type(values).__name__}"
        )
    out = [as_quantity(v, f"{name}[{i}]", dimension) for i, v in enumerate(values)]
    return np.asarray(out, dtype=np.float64).reshape(-1)


def as_reals(values: Any, name: str) -> np.ndarray:
    """A 1-D float64 array of finite real numbers of either sign (observations, weights).

    No units: for measured quantities with a dimension use :func:`as_quantities`.
    """
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise InvalidTypeError(
            f"{name} must be a sequence of numbers, got {values!r} of type {type(values).__name__}"
        )
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidTypeError(
            f"{name} must be a sequence of numbers, got {values!r:.80}"
        ) from None
    if arr.ndim != 1:
        raise InvalidModelError(f"{name} must be 1-D, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidModelError(f"{name}[{i}] must be finite, got {float(arr[i])!r}")
    return arr


def as_demands(values: Any, name: str = "demands") -> np.ndarray:
    """Service demands (seconds per job) of a non-empty network, as float64 (K,)."""
    arr = as_quantities(values, name, "time")
    if arr.size == 0:
        raise InvalidModelError(f"{name} is empty: a network needs at least one station")
    return arr


def as_demand_matrix(demands: Any, name: str = "demands") -> np.ndarray:
    """A C x K demand matrix (classes x stations), seconds or unit strings, as float64.

    A 1-D sequence is one class. Every entry finite and >= 0.
    """
    if isinstance(demands, str) or np.isscalar(demands):
        raise InvalidTypeError(
            f"{name} must be a C x K matrix of demands (classes x stations), got {demands!r}"
        )
    try:
        arr = np.asarray(demands, dtype=np.float64)
    except (TypeError, ValueError):
        arr = None
    if arr is None:  # unit strings, ragged rows: row by row through the shared checker
        rows = [as_demands(r, f"{name}[{i}]") for i, r in enumerate(demands)]
        if len({r.size for r in rows}) > 1:
            raise InvalidModelError(
                f"{name} rows differ in length ({[r.size for r in rows]}): "
                "give one demand per station for every class"
            )
        arr = np.vstack(rows)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.size == 0:
        raise InvalidModelError(
            f"{name} must be a non-empty C x K matrix (classes x stations), got shape {arr.shape}"
        )
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        c, k = (int(i) for i in np.argwhere(bad)[0])
        rule = "finite" if not np.isfinite(arr[c, k]) else ">= 0"
        raise InvalidModelError(f"{name}[{c}, {k}] must be {rule}, got {float(arr[c, k])!r}")
    return arr.copy()


#: The largest count (population, servers, iterations) accepted: the recursions use counts as
#: float64, which holds integers exactly only up to 2^53 (and numpy's int64 ends at 2^63).
MAX_COUNT = 2**53


def _at_most_max_count(n: int, name: str, value: Any) -> int:
    if n > MAX_COUNT:
        shown = (
            f"a {len(str(n))}-digit number" if isinstance(value, numbers.Integral) else repr(value)
        )
        raise InvalidModelError(
            f"{name} must be at most 2^53 = {MAX_COUNT} (counts are exact in double precision "
            f"only up to there), got {shown}"
        )
    return n


def as_population(N: Any, name: str = "N") -> int:
    """A job population: an integer >= 1 (integral floats such as 3.0 are accepted)."""
    if isinstance(N, bool | np.bool_):
        raise InvalidTypeError(f"{name} must be an integer >= 1, got the boolean {N!r}")
    if isinstance(N, numbers.Integral):
        n = int(N)
    elif isinstance(N, numbers.Real):
        if not math.isfinite(float(N)) or float(N) != math.floor(float(N)):
            raise InvalidModelError(f"{name} must be an integer >= 1, got {N!r}")
        n = int(N)
    else:
        raise InvalidTypeError(
            f"{name} must be an integer >= 1, got {N!r} of type {type(N).__name__}"
        )
    if n < 1:
        raise InvalidModelError(f"{name} must be an integer >= 1, got {N!r}")
    return _at_most_max_count(n, name, N)


def as_populations(values: Any, name: str = "population", *, allow_zero: bool = True) -> np.ndarray:
    """A per-class population vector of non-negative integers, as int64 (C,).

    Also the checker of any list of job counts (e.g. the concurrency levels of a fit): a count
    has no unit, so a string such as ``"8 Hz"`` is refused, naming the entry.
    """
    if _is_real_number(values) or isinstance(values, str):
        values = [values]
    if isinstance(values, Sequence):
        for i, v in enumerate(values):
            if isinstance(v, str):
                raise InvalidTypeError(
                    f"{name} must hold integers, got dtype str: {name}[{i}] = {v!r} is "
                    "not a plain number (a count of jobs has no unit)"
                )
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidModelError(f"{name} must be a non-empty 1-D sequence, got shape {arr.shape}")
    if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
        raise InvalidTypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    lo = 0 if allow_zero else 1
    for i, v in enumerate(arr.tolist()):
        if not math.isfinite(v) or v != math.floor(v) or v < lo:
            raise InvalidModelError(f"{name}[{i}] must be an integer >= {lo}, got {v!r}")
    return arr.astype(np.int64)


def as_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    """An integer >= ``minimum`` (booleans and non-integral floats rejected)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise InvalidTypeError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if isinstance(value, numbers.Integral):  # exact, however large (float() would overflow)
        n = int(value)
    else:
        f = float(value)
        if not math.isfinite(f) or f != math.floor(f):
            raise InvalidModelError(f"{name} must be an integer >= {minimum}, got {value!r}")
        n = int(f)
    if n < minimum:
        raise InvalidModelError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return _at_most_max_count(n, name, value)


def as_servers(value: Any, name: str = "servers") -> int:
    """A server count of a multi-server station: an integer >= 1."""
    return as_positive_int(value, name, 1)


def as_rate_multipliers(values: Any, name: str = "rate_multipliers") -> np.ndarray:
    """A load-dependent rate curve r(1), r(2), ...: non-empty, finite and > 0, as float64 (L,).

    Dimensionless: a unit string is refused (the rate with j jobs is r(j) / D).
    """
    if isinstance(values, str | bytes) or _is_real_number(values):
        raise InvalidTypeError(
            f"{name} must be a sequence of positive numbers, one per queue depth "
            f"(e.g. [1, 1.8, 2.4, 2.8]), got {values!r}"
        )
    if not isinstance(values, Iterable):
        raise InvalidTypeError(
            f"{name} must be a sequence of positive numbers, got {type(values).__name__}"
        )
    items = list(values)
    if not items:
        raise InvalidModelError(
            f"{name} is empty: give the rate multiplier at 1, 2, ... jobs (e.g. [1, 1.8, 2.4])"
        )
    out = np.empty(len(items), dtype=np.float64)
    for i, v in enumerate(items):
        if not _is_real_number(v):
            raise InvalidTypeError(f"{name}[{i}] must be a number, got {v!r}")
        f = float(v)
        if not math.isfinite(f) or f <= 0.0:
            raise InvalidModelError(
                f"{name}[{i}] must be finite and > 0 (a rate that falls to zero never "
                f"completes a job), got {v!r}"
            )
        out[i] = f
    return out


def as_flags(values: Any, name: str, n: int) -> np.ndarray:
    """A boolean vector of length ``n`` (one flag per station), as bool (n,).

    None means all False. Only booleans (or 0/1 integers) are accepted: a flag is not a count.
    """
    if values is None:
        return np.zeros(n, dtype=bool)
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.size != n:
        raise InvalidModelError(
            f"{name} must hold {n} flags (one per station), got shape {arr.shape}"
        )
    if arr.dtype == np.bool_:
        return arr.copy()
    if arr.dtype.kind not in "iu" or not np.isin(arr, (0, 1)).all():
        raise InvalidTypeError(f"{name} must hold booleans (True/False), got {values!r:.80}")
    return arr.astype(bool)


def as_server_counts(values: Any, name: str, n: int) -> np.ndarray:
    """Servers per station: None (all 1) or ``n`` integers >= 1, as int64 (n,)."""
    if values is None:
        return np.ones(n, dtype=np.int64)
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise InvalidTypeError(f"{name} must be a sequence of {n} server counts, got {values!r}")
    items = list(np.asarray(values, dtype=object).ravel()) if np.ndim(values) else [values]
    if len(items) != n:
        raise InvalidModelError(f"{name} has {len(items)} entries; give one per station ({n})")
    return np.array([as_servers(v, f"{name}[{i}]") for i, v in enumerate(items)], dtype=np.int64)


def as_per_class(values: Any, name: str, C: int, dimension: str = "time") -> np.ndarray:
    """A non-negative quantity per class (think time, arrival rate): one value for all
    classes or ``C`` values (numbers in SI or unit strings), as float64 (C,)."""
    if isinstance(values, str) or _is_real_number(values):
        return np.full(C, as_quantity(values, name, dimension))
    arr = as_quantities(values, name, dimension)
    if arr.size != C:
        raise InvalidModelError(
            f"{name} has {arr.size} entries; give one value or one per class ({C})"
        )
    return arr


def as_probability(value: Any, name: str) -> float:
    """A probability or ratio in [0, 1]."""
    if not _is_real_number(value):
        raise InvalidTypeError(f"{name} must be a number in [0, 1], got {value!r}")
    p = float(value)
    if not (0.0 <= p <= 1.0):  # also rejects NaN
        raise InvalidModelError(f"{name} must be in [0, 1], got {value!r}")
    return p


def as_scv(value: Any, name: str = "scv") -> float:
    """A squared coefficient of variation Var[S] / E[S]^2 of a service time: finite, >= 0.

    0 is a constant (deterministic) time, 1 an exponential one; dimensionless, so a unit
    string is refused.
    """
    if not _is_real_number(value):
        raise InvalidTypeError(
            f"{name} must be a number >= 0 (the squared coefficient of variation "
            f"Var[S] / E[S]^2: 0 constant, 1 exponential), got {value!r} of type "
            f"{type(value).__name__}"
        )
    v = float(value)
    if not (math.isfinite(v) and v >= 0.0):  # also rejects NaN
        raise InvalidModelError(
            f"{name} must be finite and >= 0 (the squared coefficient of variation "
            f"Var[S] / E[S]^2: 0 constant, 1 exponential), got {value!r}"
        )
    return v


def as_scvs(values: Any, name: str = "scv") -> np.ndarray:
    """A 1-D float64 array of squared coefficients of variation, each finite and >= 0."""
    if isinstance(values, str | bytes) or not isinstance(values, Iterable | np.ndarray):
        raise InvalidTypeError(
            f"{name} must be a sequence of numbers >= 0 (squared coefficients of variation), "
            f"got {values!r} of type {type(values).__name__}"
        )
    if np.ndim(values) != 1:
        raise InvalidModelError(f"{name} must be 1-D, got shape {np.shape(values)}")
    return np.asarray(
        [as_scv(v, f"{name}[{i}]") for i, v in enumerate(values)], dtype=np.float64
    ).reshape(-1)


def as_integers(values: Any, name: str) -> np.ndarray:
    """A 1-D int64 array of integers of either sign (priority levels, labels).

    Integral floats (``2.0``) are accepted; ``1.5``, NaN, booleans and strings are refused,
    naming the entry.
    """
    if isinstance(values, str | bytes) or not isinstance(values, Iterable | np.ndarray):
        raise InvalidTypeError(
            f"{name} must be a sequence of integers, got {values!r} of type {type(values).__name__}"
        )
    if np.ndim(values) != 1:
        raise InvalidModelError(f"{name} must be 1-D, got shape {np.shape(values)}")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real):
            raise InvalidTypeError(f"{name}[{i}] must be an integer, got {v!r}")
        if isinstance(v, numbers.Integral):
            n = int(v)
        else:
            f = float(v)
            if not math.isfinite(f) or f != math.floor(f):
                raise InvalidModelError(f"{name}[{i}] must be an integer, got {v!r}")
            n = int(f)
        if abs(n) > MAX_COUNT:
            raise InvalidModelError(f"{name}[{i}] must be at most 2^53 in size, got {v!r}")
        out.append(n)
    return np.asarray(out, dtype=np.int64).reshape(-1)


def as_hit_ratio(value: Any, name: str) -> float | np.ndarray:
    """A cache hit ratio: a boolean (True = hit, False = miss) or a ratio in [0, 1].

    Returns a float for scalars and a float64 array (any shape, to broadcast) for array input.
    """
    if isinstance(value, bool | np.bool_):
        return 1.0 if value else 0.0
    if isinstance(value, numbers.Real):
        v = float(value)
        if not (0.0 <= v <= 1.0):  # also rejects NaN
            raise InvalidModelError(
                f"{name} must be a hit ratio in [0, 1], got {value!r}; a ratio is "
                "hits / requests (use 0.9, not 90)"
            )
        return v
    if isinstance(value, str) or value is None:
        raise InvalidTypeError(
            f"{name} must be a boolean or a hit ratio in [0, 1], got {value!r} "
            f"of type {type(value).__name__}"
        )
    arr = np.asarray(value)
    if arr.dtype == np.bool_:
        return arr.astype(np.float64)
    if arr.dtype.kind not in "iuf":
        raise InvalidTypeError(
            f"{name} must be booleans or hit ratios in [0, 1], got an array of dtype {arr.dtype}"
        )
    arr = arr.astype(np.float64)
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # NaN fails both comparisons
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"{name}[{', '.join(map(str, idx))}]" if idx else name
        raise InvalidModelError(
            f"{where} must be a hit ratio in [0, 1], got {float(arr[idx])!r}; a ratio is "
            "hits / requests (use 0.9, not 90)"
        )
    return arr


def as_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """One of a fixed set of strings, matched exactly (no prefixes, no case folding)."""
    if not isinstance(value, str) or value not in choices:
        raise InvalidModelError(
            f"{name} must be one of {', '.join(repr(c) for c in choices)}; got {value!r}"
        )
    return value


def check_same_length(name_a: str, a: Sequence[Any], name_b: str, b: Sequence[Any]) -> None:
    """Raise when two per-station sequences differ in length."""
    if len(a) != len(b):
        raise InvalidModelError(
            f"{name_b} has {len(b)} entries but {name_a} has {len(a)}: give one per station"
        )


def as_named_items(values: Any, name: str, types: Any, what: str, noun: str) -> tuple:
    """A non-empty sequence of ``types`` objects with unique ``.name``, as a tuple.

    A single object is a one-element sequence. ``what`` names the type in messages
    ("Station"), ``noun`` the thing ("station", "class").
    """
    if isinstance(values, types):
        values = (values,)
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InvalidTypeError(f"{name} must be a sequence of {what}, got {type(values).__name__}")
    items = tuple(values)
    if not items:
        raise InvalidModelError(f"{name} is empty: a network needs at least one {noun}")
    for i, v in enumerate(items):
        if not isinstance(v, types):
            raise InvalidTypeError(f"{name}[{i}] must be a {what}, got {v!r} ({type(v).__name__})")
    seen: set[str] = set()
    for v in items:
        if v.name in seen:
            raise InvalidModelError(f"{noun} names must be unique; {v.name!r} appears twice")
        seen.add(v.name)
    return items


def read_text_file(
    path: Any,
    what: str,
    *,
    error: type[InvalidModelError] = InvalidModelError,
    max_bytes: int | None = None,
) -> str:
    """The UTF-8 text of a user's input file, or ``error`` with a message naming the file.

    Refuses, before reading it, a path that is not a regular file (missing, a directory, a
    device or FIFO) and a file larger than ``max_bytes`` (default :data:`MAX_INPUT_BYTES`);
    after reading, a file that is not UTF-8 text (binary). ``what`` names the kind of file
    in the message ("model file", "trace"). Nothing read is ever executed or evaluated.
    """
    if not isinstance(path, str | os.PathLike):
        raise InvalidTypeError(f"the {what} path must be a str or path, got {type(path).__name__}")
    name = os.fspath(path)
    limit = MAX_INPUT_BYTES if max_bytes is None else int(max_bytes)
    try:
        st = os.stat(name)
    except FileNotFoundError:
        raise error(f"{name}: no such {what}") from None
    except OSError as exc:
        raise error(f"{name}: cannot read the {what} ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise error(f"{name}: cannot read the {what}: {kind}")
    if st.st_size > limit:
        raise error(
            f"{name}: the {what} has {st.st_size} bytes, larger than the {limit} bytes "
            f"(qnmodel._validate.MAX_INPUT_BYTES) an input file may have; is it the right file?"
        )
    try:
        with open(name, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise error(f"{name}: cannot read the {what} ({exc.strerror})") from None
    if len(data) > limit:  # grew while we looked
        raise error(f"{name}: the {what} is larger than {limit} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"{name}: not a text file (byte {data[exc.start]:#04x} at offset {exc.start} is not "
            f"UTF-8): a {what} is UTF-8 text"
        ) from None
    if "\x00" in text:
        i = text.index("\x00")
        raise error(f"{name}: not a text file (a NUL byte at offset {i}): a {what} is UTF-8 text")
    return text


def check_time_scale(N: int, total_demand: float, think_time: float) -> None:
    """Refuse a closed model whose cycle time N (D + Z) overflows float64.

    Exact MVA and the bounds compute R(n) up to about N D and X(n) = n / (Z + R(n)); past
    1.8e308 s the sum is infinite and X silently becomes 0. Such times are not seconds (a
    unit mistake); say so rather than return a wrong number.
    """
    cycle = float(N) * (float(total_demand) + float(think_time))
    if not math.isfinite(cycle):
        raise InvalidModelError(
            f"N x (total demand + think time) = {N} x ({total_demand!r} s + {think_time!r} s) "
            "overflows double precision (1.8e308 s): are the times in seconds? (a plain "
            "number is seconds; write '4.9 ms' for milliseconds)"
        )


def max_memory(value: Any = None, name: str = "max_memory") -> float:
    """The memory limit in bytes: ``value`` (a number of bytes or a size string such as
    ``"8 GiB"``), else ``$QNMODEL_MAX_MEMORY``, else :data:`DEFAULT_MAX_MEMORY`."""
    if value is None:
        env = os.environ.get(MAX_MEMORY_ENV)
        if not env:
            return float(DEFAULT_MAX_MEMORY)
        return as_quantity(env, f"${MAX_MEMORY_ENV}", "size", positive=True)
    return as_quantity(value, name, "size", positive=True)


def check_memory(nbytes: float, what: str, fix: str, limit: Any = None) -> None:
    """Raise :class:`~qnmodel.errors.LatticeTooLargeError` before allocating ``nbytes``
    beyond the limit (:func:`max_memory`); ``what`` says what needs it, ``fix`` what to do."""
    cap = max_memory(limit)
    if nbytes > cap:
        raise LatticeTooLargeError(
            f"{what} would need about {nbytes / 2**20:.4g} MiB, more than the allowed "
            f"{cap / 2**20:.4g} MiB (max_memory, or ${MAX_MEMORY_ENV}); {fix}",
            what=what,
            needed=float(nbytes),
            limit=float(cap),
        )


#: The largest SCV the two-moment fits (gamma, Erlang mixture) are trusted at: past about
#: 1e4 their laws put almost all mass at 0 and the quadratures lose it (an open fork-join of
#: four members of SCV 1e5 answered a smaller R than at 1e4, at 1e8 a negative one).
MAX_FIT_SCV = 1e4


def check_fit_scv(scvs: Any, name: str, solver: str, limit: float = MAX_FIT_SCV) -> None:
    """Refuse an SCV above ``limit`` (default :data:`MAX_FIT_SCV`) where ``solver`` fits a
    two-moment law; a solver whose answers go wrong sooner passes its own measured limit."""
    v = np.asarray(scvs, dtype=np.float64).ravel()
    if v.size and float(v.max()) > limit:
        raise InvalidModelError(
            f"{name}: SCV {float(v.max()):g} is above {limit:g} (a coefficient of "
            f"variation of {math.sqrt(limit):.3g}), where {solver}'s two-moment fits lose "
            "their accuracy; simulate such a law (qnmodel.simulate) or give a smaller SCV"
        )


def check_size(n: int, limit: int, what: str, fix: str) -> None:
    """Refuse a size ``n`` above ``limit`` before any work: ``what`` names it and why the
    work grows with it, ``fix`` what to do."""
    if n > limit:
        raise InvalidModelError(f"{what}: {n} is more than {limit}; {fix}")


def check_not_subnormal(values: Any, name: str, solver: str) -> None:
    """Refuse times in (0, 2.2e-308 s): ``solver`` divides by them or squares them, and a
    subnormal time makes a rate overflow or a second moment vanish."""
    v = np.asarray(values, dtype=np.float64).ravel()
    tiny = float(np.finfo(np.float64).tiny)
    bad = v[(v > 0.0) & (v < tiny)]
    if bad.size:
        raise InvalidModelError(
            f"{name}: {float(bad[0])!r} s is below {tiny:.3g} s (a subnormal number), where "
            f"{solver}'s rates overflow: are the times in seconds? (a plain number is "
            "seconds; write '4.9 ms' for milliseconds)"
        )
