"""``response_time_quantile(q)`` on every result with a response time.

A result whose solver knows the response-time law (exact or approximate, see
:func:`qnmodel.solvers.response_laws.response_time_law`) carries it in ``_law``
(``_law(n) -> law`` with a ``quantile(q)`` method; ``n`` the population of a closed
curve, ``None`` for an open workload); a result without one refuses, naming why and what
does answer (the simulator estimates quantiles of any model it runs).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._validate import as_probability
from ..errors import InvalidModelError

__all__ = ["LawOf", "ResponseTimeQuantile", "attach_law", "register_law_solver"]

#: ``response_time_law(net, N=... | arrival_rate=...)``, registered by :mod:`qnmodel.solvers`
#: when it loads: the results sit below the solvers and never import them.
_law_solver: Callable[..., Any] | None = None


def register_law_solver(solver: Callable[..., Any]) -> None:
    """Set the function :class:`LawOf` calls (:func:`qnmodel.solvers.response_laws.
    response_time_law`)."""
    global _law_solver
    _law_solver = solver


@dataclass(frozen=True)
class LawOf:
    """The response-time law of a solved single-class network, as a result carries it:
    ``law(n)`` is ``response_time_law`` at population n (closed), or at ``arrival_rate``
    (open, ``n`` None). Picklable, built only when asked."""

    net: Any
    arrival_rate: float | None = None

    def __call__(self, n: int | None) -> Any:
        if _law_solver is None:  # unpickled where the solvers were never loaded: loading
            importlib.import_module("qnmodel.solvers")  # them registers the law solver
        if self.arrival_rate is not None:
            return _law_solver(self.net, arrival_rate=self.arrival_rate)
        return _law_solver(self.net, N=n)


def attach_law(result: Any, law: Any) -> Any:
    """Give a (frozen) result its response-time law ``law(n)``; returns the result."""
    object.__setattr__(result, "_law", law)
    return result


class ResponseTimeQuantile:
    """Mixin: :meth:`response_time_quantile` from the law a solver attached, else a refusal.

    ``_NO_LAW`` says why a result of this type has no law (the refusal's reason).
    """

    _NO_LAW = "its solver computes the means only"

    def response_time_quantile(self, q: float, n: int | None = None) -> float:
        """The q-quantile of the response time, s (0 < q < 1; ``q=0.95`` for p95), at
        population ``n`` of a closed curve (default: the last row).

        The law and whether it is exact are those of
        :func:`qnmodel.solvers.response_laws.response_time_law` (its ``method`` label).

        Raises
        ------
        InvalidModelError
            This result has no response-time law (e.g. several classes, or a solver that
            computes means only), naming the reason; ``q`` outside (0, 1); ``n`` not solved.
        """
        law = getattr(self, "_law", None)
        q = as_probability(q, "q")
        if not 0.0 < q < 1.0:
            raise InvalidModelError(f"q must be in (0, 1) (e.g. 0.95 for p95), got {q!r}")
        if law is None:
            raise InvalidModelError(
                f"{type(self).__name__}.response_time_quantile: no response-time law for this "
                f"result ({getattr(self, 'method', '?')}): {self._NO_LAW}; "
                "qnmodel.simulate(net, ..., quantiles=(q,)) estimates quantiles of any model "
                "it runs"
            )
        n_solved = getattr(self, "n", None)
        if n_solved is not None and len(n_solved):
            from ._rows import row_index

            n = (
                int(n_solved[-1])
                if n is None
                else int(n_solved[row_index(n_solved, n, "response_time_quantile")])
            )
        elif n is not None:
            raise InvalidModelError(
                f"{type(self).__name__}.response_time_quantile: n applies to a closed curve; "
                f"this result has one workload, got n={n!r}"
            )
        return float(law(n).quantile(q))
