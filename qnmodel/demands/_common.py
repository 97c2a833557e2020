"""Array checks shared by the demand kernels (cheap, vectorised, never correcting).

The kernels broadcast over arrays, so a what-if sweep can evaluate a whole
grid in one call; these helpers convert every argument to float64 and reject
values outside the formula's domain with a message naming the argument.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_quantity
from ..errors import InvalidModelError

__all__ = ["as_array", "as_probability_array", "as_count_array", "SERVER_TERMS"]

#: readings of the storage-server terms of eqs. (6), (8), (10); see server_visit_ratio
SERVER_TERMS = ("paper", "one_server", "all_servers")


def _first_bad(arr: np.ndarray, bad: np.ndarray):
    flat = np.flatnonzero(np.broadcast_to(bad, arr.shape))[0]
    return float(arr.reshape(-1)[flat]) if arr.ndim else float(arr[()])


def _no_string(value, name: str, what: str) -> None:
    if isinstance(value, str) or (isinstance(value, np.ndarray) and value.dtype.kind in "USO"):
        raise InvalidModelError(f"{name} must be {what} as a number, got {value!r}")


#: the unit label each kernel uses in messages -> the dimension of a unit string
_DIMENSION = {"s": "time", "bytes": "size", "bytes/s": "rate"}


def _parse_strings(value, name: str, unit: str):
    """Unit strings (one, or a sequence holding some) parsed to SI through qnmodel.units."""
    dimension = _DIMENSION.get(unit)
    if dimension is None:
        raise InvalidModelError(f"{name} is a count ({unit}): give a number, got {value!r}")
    if isinstance(value, str):
        return as_quantity(value, name, dimension)
    return np.array(
        [
            as_quantity(v, f"{name}[{i}]", dimension) if isinstance(v, str) else v
            for i, v in enumerate(np.asarray(value, dtype=object).reshape(-1))
        ],
        dtype=np.float64,
    ).reshape(np.shape(value))


def _has_strings(value) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "USO" and any(isinstance(v, str) for v in value.flat)
    if isinstance(value, list | tuple):
        return any(isinstance(v, str) for v in np.asarray(value, dtype=object).reshape(-1))
    return False


def as_array(value, name: str, unit: str, *, positive: bool = False) -> np.ndarray:
    """``value`` as a float64 array of finite numbers >= 0 (> 0 with ``positive``).

    Numbers are SI (``unit`` names it in messages: ``"s"``, ``"bytes"``,
    ``"bytes/s"`` or a count such as ``"packets"``); strings carry their own unit
    (``"4.9 ms"``, ``"16 KiB"``, ``"100 Mbit/s"``), alone or inside a sequence, and
    are converted by :mod:`qnmodel.units` (a string of the wrong dimension, or a
    string for a count, is refused naming the argument).
    """
    if _has_strings(value):
        value = _parse_strings(value, name, unit)
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidModelError(f"{name} must be a number in {unit}, got {value!r}") from None
    bad = ~np.isfinite(arr) | (arr <= 0 if positive else arr < 0)
    if bad.any():
        rule = "> 0" if positive else ">= 0"
        raise InvalidModelError(
            f"{name} must be finite and {rule} ({unit}), got {_first_bad(arr, bad)!r}"
        )
    return arr


def as_probability_array(value, name: str) -> np.ndarray:
    """``value`` as a float64 array of probabilities in [0, 1]."""
    _no_string(value, name, "a probability in [0, 1]")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidModelError(f"{name} must be a probability in [0, 1], got {value!r}") from None
    bad = ~((arr >= 0.0) & (arr <= 1.0))
    if bad.any():
        raise InvalidModelError(
            f"{name} must be a probability in [0, 1], got {_first_bad(arr, bad)!r}"
        )
    return arr


def as_count_array(value, name: str, minimum: int = 1) -> np.ndarray:
    """``value`` as a float64 array of integers >= ``minimum`` (stripe widths)."""
    _no_string(value, name, f"an integer >= {minimum}")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidModelError(f"{name} must be an integer >= {minimum}, got {value!r}") from None
    bad = ~np.isfinite(arr) | (arr != np.floor(arr)) | (arr < minimum)
    if bad.any():
        raise InvalidModelError(
            f"{name} must be an integer >= {minimum}, got {_first_bad(arr, bad)!r}"
        )
    return arr
