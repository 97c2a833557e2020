"""Array checks shared by the demand kernels (cheap, vectorised, never correcting).

The kernels broadcast over arrays, so a what-if sweep can evaluate a whole
grid in one call; these helpers convert every argument to float64 and reject
values outside the formula's domain with a message naming the argument.
"""

from __future__ import annotations

import numpy as np

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


def as_array(value, name: str, unit: str, *, positive: bool = False) -> np.ndarray:
    """``value`` as a float64 array of finite numbers >= 0 (> 0 with ``positive``).

    Numbers are SI (``unit`` names it in messages); strings are not accepted
    here: the composed model (:mod:`qnmodel.models.storage`) parses units.
    """
    if isinstance(value, str) or (isinstance(value, np.ndarray) and value.dtype.kind in "US"):
        raise InvalidModelError(
            f"{name} must be a number in {unit}, got the string {value!r}; the demand kernels "
            "take SI numbers (parse unit strings with qnmodel.units.parse, or use NetworkedRAID)"
        )
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
