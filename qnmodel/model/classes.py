"""The workloads of a network: closed classes (a population that circulates) and open classes
(a stream of arrivals).

* :class:`ClosedClass` -- a fixed population ``N`` of jobs that circulate, each thinking
  ``think_time`` between interactions (terminal workload, Lazowska et al. ch. 7);
* :class:`OpenClass` -- jobs that arrive from outside at ``arrival_rate`` (Poisson) and leave
  after their last station (transaction workload, Lazowska et al. ch. 6 and 7.5).

Both carry a ``priority`` level, honoured by the stations whose discipline has priorities
(``"HOL"``, ``"PRIO-PR"``): a smaller number is served first.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from .._validate import as_positive_int, as_quantity
from ..errors import InvalidModelError, InvalidTypeError
from .station import as_element_name

__all__ = ["ClosedClass", "OpenClass", "as_priority"]


def as_priority(value: Any, label: str) -> int:
    """An integer priority level (a smaller number is served first); 2.0 is 2, 1.5 is refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidTypeError(
            f"{label} must be an integer priority level (a smaller number is served first), "
            f"got {value!r} ({type(value).__name__})"
        )
    if not isinstance(value, numbers.Integral):
        f = float(value)
        if not math.isfinite(f) or f != math.floor(f):
            raise InvalidModelError(
                f"{label} must be an integer priority level (a smaller number is served "
                f"first), got {value!r}"
            )
    n = int(value)
    if abs(n) > 2**31:
        raise InvalidModelError(f"{label} must be between -2^31 and 2^31, got {value!r}")
    return n


@dataclass(frozen=True)
class ClosedClass:
    """A closed class: ``N`` jobs circulating, each thinking ``think_time`` between visits.

    Parameters
    ----------
    name : str
        Unique, non-empty class name.
    N : int
        Population, an integer >= 0 (a class with N = 0 is solved as one arriving job
        would see the others; solvers may be given another N at call time).
    think_time : float or str
        Z_c, seconds (>= 0), spent outside the stations; excluded from response time.
    priority : int
        Priority level at stations with a priority discipline; a smaller number is served
        first (default 0).
    """

    name: str
    N: int = 0
    think_time: float = 0.0
    priority: int = 0

    def __post_init__(self) -> None:
        as_element_name(self.name, "ClosedClass")
        label = f"ClosedClass {self.name!r}"
        object.__setattr__(self, "N", as_positive_int(self.N, f"{label}: N", 0))
        object.__setattr__(
            self, "think_time", as_quantity(self.think_time, f"{label}: think_time", "time")
        )
        object.__setattr__(self, "priority", as_priority(self.priority, f"{label}: priority"))

    @property
    def is_open(self) -> bool:
        return False

    @property
    def population(self) -> int:
        """The population N (alias)."""
        return self.N


@dataclass(frozen=True)
class OpenClass:
    """An open class: jobs arrive from outside at ``arrival_rate`` and leave when done.

    Parameters
    ----------
    name : str
        Unique, non-empty class name.
    arrival_rate : float or str
        lambda_c, jobs per second (>= 0): a number in 1/s or a string such as
        ``"40000/s"``, ``"40 kHz"`` or ``"4e4 IOPS"``.
    priority : int
        Priority level at stations with a priority discipline; a smaller number is served
        first (default 0).
    """

    name: str
    arrival_rate: float = 0.0
    priority: int = 0

    def __post_init__(self) -> None:
        as_element_name(self.name, "OpenClass")
        label = f"OpenClass {self.name!r}"
        object.__setattr__(
            self,
            "arrival_rate",
            as_quantity(self.arrival_rate, f"{label}: arrival_rate", "frequency"),
        )
        object.__setattr__(self, "priority", as_priority(self.priority, f"{label}: priority"))

    @property
    def is_open(self) -> bool:
        return True
