"""Fit parameters: a named value with bounds, a vary flag and an SI unit.

A :class:`Parameter` describes one unknown of a fit before the fit: its
starting value, whether it varies, its bounds and its unit. A
:class:`Parameters` is an ordered collection of them. Bad bounds are refused,
never repaired: ``min > max`` raises, and so does a starting value outside
the bounds (nothing is swapped or clamped behind the user's back).

Units
-----
``unit`` is one of the SI symbols ``"s"`` (time), ``"B"`` (size), ``"B/s"``
(rate), ``"Hz"`` (frequency, events per second) or ``""`` (dimensionless).
A string value such as ``"4.9 ms"`` is parsed with :func:`qnmodel.units.parse`
and must match the parameter's unit.

Examples
--------
>>> p = Parameter("a", "5 ms", min=0.0, unit="s")
>>> p.value
0.005
>>> Parameter("r", 1e8, min=2e8, max=1e8, unit="B/s")
Traceback (most recent call last):
...
qnmodel.errors.InvalidModelError: Parameter 'r': min (200000000.0) > max (100000000.0); ...
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .._validate import as_quantity
from ..errors import InvalidModelError, InvalidTypeError, UnitError
from ..units import format_quantity, parse

__all__ = ["Parameter", "Parameters", "UNIT_DIMENSIONS", "format_value"]

#: SI unit symbol -> dimension understood by :mod:`qnmodel.units` ("" is dimensionless)
UNIT_DIMENSIONS: dict[str, str | None] = {
    "s": "time",
    "B": "size",
    "B/s": "rate",
    "Hz": "frequency",
    "": None,
}


def _as_bound(value: Any, name: str, which: str, unit: str) -> float:
    if value is None:
        return -math.inf if which == "min" else math.inf
    if isinstance(value, str):
        dim = UNIT_DIMENSIONS[unit]
        if dim is None:
            raise UnitError(f"Parameter {name!r}: {which} {value!r} has a unit but {name} has none")
        return parse(value, dim)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidTypeError(f"Parameter {name!r}: {which} must be a number, got {value!r}")
    v = float(value)
    if math.isnan(v):
        raise InvalidModelError(f"Parameter {name!r}: {which} must not be NaN")
    return v


def format_value(value: float | None, unit: str, digits: int = 5) -> str:
    """A value with a readable unit (``0.0049, "s"`` -> ``"4.9 ms"``); ``None`` -> ``"n/a"``."""
    if value is None:
        return "n/a"
    if not math.isfinite(value):
        return f"{value:g}" + (f" {unit}" if unit else "")
    dim = UNIT_DIMENSIONS.get(unit)
    if dim is None:
        return f"{value:.{digits}g}" + (f" {unit}" if unit else "")
    if value < 0:
        return "-" + format_quantity(-value, dim, digits)
    return format_quantity(value, dim, digits)


@dataclass(frozen=True)
class Parameter:
    """One unknown of a fit.

    Parameters
    ----------
    name : str
        Identifier, unique within its :class:`Parameters`.
    value : float or str
        Starting value (or the fixed value when ``vary=False``), in SI units;
        a string must carry a unit matching ``unit``.
    vary : bool
        Whether the fit may change the value.
    min, max : float, str or None
        Bounds (inclusive); ``None`` is unbounded. ``min > max`` raises, as
        does a value outside ``[min, max]``; ``min == max`` with ``vary=True``
        raises too (fix the value with ``vary=False`` instead).
    unit : {"s", "B", "B/s", "Hz", ""}
        SI unit of the value.
    """

    name: str
    value: float
    vary: bool = True
    min: float = -math.inf
    max: float = math.inf
    unit: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise InvalidModelError(
                f"Parameter name must be a Python identifier (letters, digits, _), got "
                f"{self.name!r}"
            )
        if self.unit not in UNIT_DIMENSIONS:
            raise UnitError(
                f"Parameter {self.name!r}: unit must be one of "
                f"{sorted(UNIT_DIMENSIONS)}, got {self.unit!r}"
            )
        if not isinstance(self.vary, bool):
            raise InvalidTypeError(
                f"Parameter {self.name!r}: vary must be True or False, got {self.vary!r}"
            )
        lo = _as_bound(self.min, self.name, "min", self.unit)
        hi = _as_bound(self.max, self.name, "max", self.unit)
        if lo > hi:
            raise InvalidModelError(
                f"Parameter {self.name!r}: min ({lo!r}) > max ({hi!r}); bounds are never "
                "swapped silently: give min <= max"
            )
        if self.vary and lo == hi:
            raise InvalidModelError(
                f"Parameter {self.name!r}: min == max == {lo!r} leaves nothing to fit; "
                "use vary=False to fix the value"
            )
        v = self.value
        if isinstance(v, str):
            dim = UNIT_DIMENSIONS[self.unit]
            if dim is None:
                raise UnitError(
                    f"Parameter {self.name!r}: value {v!r} has a unit but the parameter is "
                    "dimensionless; give a plain number"
                )
            v = as_quantity(v, f"Parameter {self.name!r}: value", dim)
        elif isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise InvalidTypeError(
                f"Parameter {self.name!r}: value must be a number, got {v!r} ({type(v).__name__})"
            )
        v = float(v)
        if not math.isfinite(v):
            raise InvalidModelError(f"Parameter {self.name!r}: value must be finite, got {v!r}")
        if not lo <= v <= hi:
            raise InvalidModelError(
                f"Parameter {self.name!r}: value {v!r} lies outside [min, max] = [{lo!r}, {hi!r}]; "
                "it is not clamped: give a starting value inside the bounds"
            )
        object.__setattr__(self, "min", lo)
        object.__setattr__(self, "max", hi)
        object.__setattr__(self, "value", v)

    def replace(self, **changes: Any) -> Parameter:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def __str__(self) -> str:
        lo = "-inf" if self.min == -math.inf else format_value(self.min, self.unit)
        hi = "+inf" if self.max == math.inf else format_value(self.max, self.unit)
        state = "" if self.vary else ", fixed"
        return f"{self.name} = {format_value(self.value, self.unit)} in [{lo}, {hi}]{state}"


class Parameters(Mapping[str, Parameter]):
    """An ordered, immutable collection of :class:`Parameter` keyed by name.

    Build it from Parameter objects (``Parameters([p1, p2])``) or update a
    default set with :meth:`updated`, which accepts per-name dicts of field
    changes (``{"a": {"min": 0, "value": 1e-3}}``), numbers (new starting
    values) or Parameter objects.
    """

    def __init__(self, params: Any = ()) -> None:
        items: dict[str, Parameter] = {}
        if isinstance(params, Parameters):
            params = list(params.values())
        for p in params:
            if not isinstance(p, Parameter):
                raise InvalidTypeError(f"Parameters holds Parameter objects, got {p!r}")
            if p.name in items:
                raise InvalidModelError(f"parameter names must be unique; {p.name!r} appears twice")
            items[p.name] = p
        self._items = items

    def __getitem__(self, key: str) -> Parameter:
        try:
            return self._items[key]
        except KeyError:
            raise KeyError(
                f"{key!r} is not a parameter of this fit; parameters are {list(self._items)}"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def varying(self) -> list[str]:
        """Names of the parameters the fit may change, in order."""
        return [n for n, p in self._items.items() if p.vary]

    def valuesdict(self) -> dict[str, float]:
        """name -> value (SI)."""
        return {n: p.value for n, p in self._items.items()}

    def updated(self, changes: Mapping[str, Any] | Parameters | None) -> Parameters:
        """A copy with user overrides applied; unknown names raise."""
        if changes is None:
            return Parameters(self)
        if isinstance(changes, Parameters):
            changes = dict(changes.items())
        if not isinstance(changes, Mapping):
            raise InvalidTypeError(
                f"params must be a Parameters or a dict name -> dict/number/Parameter, "
                f"got {type(changes).__name__}"
            )
        new = dict(self._items)
        for name, ch in changes.items():
            if name not in new:
                raise InvalidModelError(
                    f"params: {name!r} is not a parameter of this fit; parameters are {list(new)}"
                )
            if isinstance(ch, Parameter):
                if ch.name != name:
                    raise InvalidModelError(f"params[{name!r}] holds Parameter {ch.name!r}")
                new[name] = ch
            elif isinstance(ch, Mapping):
                unknown = set(ch) - {"value", "vary", "min", "max"}
                if unknown:
                    raise InvalidModelError(
                        f"params[{name!r}]: unknown field(s) {sorted(unknown)}; "
                        "allowed are value, vary, min, max"
                    )
                new[name] = new[name].replace(**dict(ch))
            else:
                new[name] = new[name].replace(value=ch)
        return Parameters(new.values())

    def __repr__(self) -> str:
        return "Parameters(" + "; ".join(str(p) for p in self._items.values()) + ")"
