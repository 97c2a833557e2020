"""``at(n)``: the row of a curve result for population n, by population instead of position.

A curve result (:class:`~qnmodel.results.closed.MVAResult`, ``BoundsResult``, a single-class
``AMVAResult``, ``ForkJoinResult``, ...) holds one row per solved population in ``n``; for a
full curve ``r.throughput[63]`` is n = 64. ``r.at(64)`` is that row as a
:class:`PopulationRow`: the per-n fields at n (system values as floats, per-station values as
read-only (K,) arrays), refusing an n that was not solved and naming the populations that were.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_population
from ..errors import InvalidModelError

__all__ = ["PopulationRow", "ByPopulation", "row_index"]


def _describe(n: np.ndarray) -> str:
    """The solved populations, as a range when contiguous."""
    v = [int(x) for x in n]
    if len(v) > 1 and v == list(range(v[0], v[-1] + 1)):
        return f"n = {v[0]}..{v[-1]}"
    if len(v) <= 8:
        return "n in " + str(v)
    return f"n in [{v[0]}, {v[1]}, {v[2]}, ..., {v[-1]}] ({len(v)} populations)"


def row_index(n_solved: np.ndarray | None, n: Any, who: str = "at(n)") -> int:
    """Position of population ``n`` in ``n_solved``; refuses an n that was not solved,
    naming the populations that were."""
    if n_solved is None:
        raise InvalidModelError(
            f"{who}: this result is not indexed by population (a multi-class result holds one "
            "population vector); its rows are its classes"
        )
    n = as_population(n, "n")
    hits = np.flatnonzero(np.asarray(n_solved) == n)
    if hits.size == 0:
        hint = (
            "solve with keep='all' (every n = 1..N)"
            if len(n_solved) == 1
            else f"solve with N >= {n}"
            if n > int(np.max(n_solved))
            else "solve the curve that contains it"
        )
        raise InvalidModelError(
            f"{who}: n={n} was not solved; this result holds {_describe(n_solved)}: {hint}"
        )
    return int(hits[0])


@dataclass(frozen=True, repr=False)
class PopulationRow:
    """One population of a curve result: ``n`` and the result's per-n fields at n.

    Attribute access reads the fields (``row.throughput``, ``row.queue_length`` ...), with the
    result's names and units; ``fields()`` lists them and ``to_dict()`` returns them.
    """

    n: int
    values: Mapping[str, Any]
    station_names: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "values")
        if name in values:
            return values[name]
        raise AttributeError(f"PopulationRow has no field {name!r}; it has n, {', '.join(values)}")

    def fields(self) -> tuple[str, ...]:
        """Names of the per-n fields held."""
        return tuple(self.values)

    def to_dict(self) -> dict[str, Any]:
        """``{"n": n, field: value, ...}``."""
        return {"n": self.n, **self.values}

    def __repr__(self) -> str:
        parts = []
        for k, v in self.values.items():
            if np.ndim(v) == 0:
                parts.append(f"{k}={float(v):.6g}")
            else:
                parts.append(f"{k}=[{', '.join(f'{float(x):.4g}' for x in np.ravel(v)[:6])}"
                             f"{', ...' if np.size(v) > 6 else ''}]")  # fmt: skip
        return f"PopulationRow(n={self.n}, " + ", ".join(parts) + ")"


def _pick(value: Any, i: int) -> Any:
    if value is None:
        return None
    out = np.asarray(value)[i]
    if np.ndim(out) == 0:
        return out.item()
    out = np.array(out)
    out.setflags(write=False)
    return out


class ByPopulation:
    """Mixin of the results with one row per population in ``n``: :meth:`at`.

    A class lists its per-n fields in ``_ROW_FIELDS`` (leading axis = rows of ``n``).
    """

    _ROW_FIELDS: tuple[str, ...] = ()

    def at(self, n: int) -> PopulationRow:
        """The row for population ``n`` (not position: ``r.at(64)`` is ``r.throughput[63]``
        of a curve from n = 1).

        Raises
        ------
        InvalidModelError
            ``n`` was not solved (outside the curve, or not kept), naming the populations
            this result holds.
        """
        i = row_index(getattr(self, "n", None), n)
        values = {f: _pick(getattr(self, f), i) for f in self._ROW_FIELDS}
        values = {k: v for k, v in values.items() if v is not None}
        return PopulationRow(
            int(np.asarray(self.n)[i]), values, tuple(getattr(self, "station_names", ()))
        )
