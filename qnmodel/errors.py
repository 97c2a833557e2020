"""Exceptions and warnings raised by qnmodel.

Every error about user input is an :class:`InvalidModelError`, a subclass of
:class:`ValueError`, whose message names the argument (or station, or field),
the offending value, the rule it broke and, where there is one, the fix.
Wrong *types* raise :class:`InvalidTypeError`, a subclass of :class:`TypeError`.
"""

from __future__ import annotations

__all__ = [
    "QNModelError",
    "InvalidModelError",
    "InvalidTypeError",
    "UnitError",
    "UnstableModelError",
    "ConvergenceError",
    "LatticeTooLargeError",
    "BenchError",
    "BenchNotFoundError",
    "BenchUsageError",
    "TraceError",
    "QNModelWarning",
    "NumericalInstabilityWarning",
    "ConvergenceWarning",
    "MeasurementArtefactWarning",
    "TraceMismatchWarning",
]


class QNModelError(Exception):
    """Base class of every exception qnmodel raises on purpose."""


class InvalidModelError(QNModelError, ValueError):
    """An input value breaks a rule (negative demand, N < 1, empty network, ...)."""


class InvalidTypeError(QNModelError, TypeError):
    """An input has the wrong type (a string where a number is needed, ...)."""


class UnitError(InvalidModelError):
    """A quantity string has no unit, an unknown unit, an ambiguous unit or the wrong dimension."""


class UnstableModelError(InvalidModelError):
    """An open or mixed station would be saturated (utilisation >= 1)."""


class LatticeTooLargeError(InvalidModelError):
    """A computation would need more memory than allowed (an exact multi-class lattice, a
    curve of every population, a what-if grid).

    Raised by :func:`qnmodel._validate.check_memory` with the parts of its message as
    attributes, so a caller can say the fix in its own terms (the command line names its
    options, not the Python arguments): ``what`` needs the memory, ``needed`` and ``limit``
    are bytes; all three are None where a solver raised it with a message only.
    """

    def __init__(
        self,
        message: str,
        *,
        what: str | None = None,
        needed: float | None = None,
        limit: float | None = None,
    ) -> None:
        super().__init__(message)
        self.what, self.needed, self.limit = what, needed, limit


class ConvergenceError(QNModelError, RuntimeError):
    """An iterative solver (approximate MVA, a fit) did not converge."""


class BenchError(QNModelError, RuntimeError):
    """The qnbench microbenchmark failed or produced output that cannot be trusted."""


class BenchUsageError(BenchError):
    """qnbench refused its options (exit status 2): a usage error, the message says which."""


class BenchNotFoundError(BenchError, FileNotFoundError):
    """The qnbench executable cannot be found."""


class TraceError(InvalidModelError):
    """A measurement trace is corrupt, truncated, of a foreign format or of an unknown schema."""


class QNModelWarning(UserWarning):
    """Base class of qnmodel's warnings."""


class NumericalInstabilityWarning(QNModelWarning, RuntimeWarning):
    """A result may have lost accuracy (rounding, cancellation, overflow guarded)."""


class ConvergenceWarning(QNModelWarning, RuntimeWarning):
    """An iterative method stopped before meeting its tolerance (policy ``"warn"``)."""


class MeasurementArtefactWarning(QNModelWarning):
    """A measured value is physically implausible (e.g. RAID efficiency above 1)."""


class TraceMismatchWarning(QNModelWarning):
    """Two traces used together measured different things (another device, reads against
    writes): a model calibrated from one is compared with the other."""
