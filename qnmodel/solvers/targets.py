"""Performance targets as objects: ``"R <= 50 ms"``, ``"p95 <= 80 ms"``, ``"X >= 2000/s"``.

A target names a metric of the response time (its mean ``R``, or a percentile
``pNN``) or the throughput ``X``, a comparison and a bound with its unit. The
capacity questions (:mod:`qnmodel.solvers.capacity`) take a :class:`Target`, a
target string, or -- as before -- a bare response time (``0.05``, ``"50 ms"``),
read as a mean-response-time target.

Grammar (spaces optional, case-insensitive metric)::

    target  := metric op value
    metric  := "R" | "mean" | "p" NUMBER | "X"       (NUMBER in (0, 100), e.g. p95, p99.9)
    op      := "<=" | "<" | ">=" | ">"               (R and pNN: <= or <; X: >= or >)
    value   := a time for R and pNN ("50 ms", "0.2 s"), a rate for X ("2000/s")

Strict and non-strict comparisons are the same target: the solvers answer with
a continuous quantity or the largest integer meeting ``<=``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .._validate import as_quantity
from ..errors import InvalidModelError, InvalidTypeError, UnitError

__all__ = ["Target", "as_target", "METRICS"]

#: target metrics: the mean response time, a response-time percentile, the throughput
METRICS = ("mean", "percentile", "throughput")

# Matched against the stripped text with a greedy tail: linear time (a lazy ``.+?`` before
# ``\s*$`` was quadratic in a run of spaces).
_PATTERN = re.compile(
    r"(?P<metric>[A-Za-z]+(?:\d+(?:\.\d*)?)?|p\s*\d+(?:\.\d*)?)\s*"
    r"(?P<op><=|>=|<|>|=<|=>)\s*(?P<value>\S.*)"
)
#: the longest target string read
MAX_TARGET_CHARS = 200


@dataclass(frozen=True)
class Target:
    """A performance target.

    Attributes
    ----------
    metric : {"mean", "percentile", "throughput"}
    value : float
        The bound: seconds (response-time metrics) or jobs/s (throughput).
    q : float or None
        The percentile as a probability in (0, 1) (``p95`` -> 0.95); None otherwise.
    text : str
        How the target was written (for messages and reports).
    """

    metric: str
    value: float
    q: float | None = None
    text: str = ""

    @property
    def is_response_time(self) -> bool:
        """True for mean and percentile targets (an upper bound on a time)."""
        return self.metric != "throughput"

    @property
    def label(self) -> str:
        """Short metric name: ``"R"``, ``"p95"``, ``"X"``."""
        if self.metric == "mean":
            return "R"
        if self.metric == "throughput":
            return "X"
        return f"p{100.0 * self.q:.10g}"

    def __str__(self) -> str:
        if self.metric == "throughput":
            return f"X >= {self.value:.6g}/s"
        from ..units import format_quantity

        return f"{self.label} <= {format_quantity(self.value, 'time')}"


def _percentile(token: str, text: str) -> float:
    digits = token[1:].strip()
    try:
        p = float(digits)
    except ValueError:
        raise InvalidModelError(f"target {text!r}: cannot read the percentile {token!r}") from None
    if not 0.0 < p < 100.0:
        raise InvalidModelError(
            f"target {text!r}: the percentile must be strictly between 0 and 100, got {digits}"
        )
    return p / 100.0


def as_target(value: Any, name: str = "target") -> Target:
    """A :class:`Target` from a Target, a target string or a bare response time.

    Parameters
    ----------
    value : Target, str, int or float
        ``"R <= 50 ms"``, ``"p99 <= 0.2 s"``, ``"X >= 2000/s"``; a bare time
        (``0.05``, ``"50 ms"``) is a mean-response-time target.
    name : str
        The argument or field, named in error messages.

    Raises
    ------
    InvalidModelError
        The text does not parse, names an unknown metric, a percentile outside
        (0, 100), or a bound that is not > 0 and finite.
    UnitError
        The bound has the wrong unit (a response time given as ``"40 MB/s"``).
    InvalidTypeError
        Neither a Target, a string nor a number.
    """
    if isinstance(value, Target):
        return value
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InvalidTypeError(
            f"{name} must be a target such as 'R <= 50 ms' or 'p95 <= 80 ms', or a response "
            f"time, got {value!r} of type {type(value).__name__}"
        )
    if not isinstance(value, str) or not re.search(r"[<>]", value):
        t = as_quantity(value, f"{name} (response time)", "time", positive=True)
        return Target("mean", t, None, str(value))
    if len(value) > MAX_TARGET_CHARS:
        raise InvalidModelError(
            f"{name}: target {value[:40]!r}... has {len(value)} characters, more than the "
            f"{MAX_TARGET_CHARS} (qnmodel.solvers.targets.MAX_TARGET_CHARS) a target needs"
        )
    m = _PATTERN.fullmatch(value.strip())
    if m is None:
        raise InvalidModelError(
            f"{name}: cannot read {value!r}; write e.g. 'R <= 50 ms', 'p95 <= 80 ms' or "
            "'X >= 2000/s'"
        )
    token, op, bound = m.group("metric"), m.group("op"), m.group("value")
    key = token.replace(" ", "").lower()
    upper = op in ("<=", "<", "=<")
    if key in ("r", "mean"):
        metric, q, dim = "mean", None, "time"
    elif key in ("x", "throughput"):
        metric, q, dim = "throughput", None, "frequency"
    elif key.startswith("p") and len(key) > 1:
        metric, q, dim = "percentile", _percentile(key, value), "time"
    else:
        raise InvalidModelError(
            f"{name}: unknown metric {token!r} in {value!r}; use R (mean response time), "
            "pNN (a response-time percentile such as p95) or X (throughput)"
        )
    if (metric == "throughput") == upper:
        want = ">=" if metric == "throughput" else "<="
        raise InvalidModelError(
            f"{name}: {token} {op} ... in {value!r} asks for the wrong side; a "
            f"{'throughput' if metric == 'throughput' else 'response-time'} target reads "
            f"{token} {want} VALUE"
        )
    if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", bound):
        # A bare number in a target a person wrote: 'R <= 5' may mean 5 ms as well as 5 s.
        shown = f"{token} {'>=' if metric == 'throughput' else '<='}"
        fix = (
            f"write '{shown} {bound}/s'"
            if metric == "throughput"
            else f"write '{shown} {bound} ms' or '{shown} {bound} s'"
        )
        raise UnitError(f"{name} {value!r}: the bound {bound} has no unit; {fix}")
    else:
        label = f"{name} {value!r}"
        if not re.search(r"\d", bound):
            raise InvalidModelError(
                f"{label}: {bound!r} is not a "
                f"{'time such as 50 ms' if dim == 'time' else 'rate such as 2000/s'}"
            )
        v = as_quantity(bound, label, dim, positive=True)
    return Target(metric, v, q, value)
