"""The validated model: :class:`ModelSpec` and the classes of a multi-class file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ...model import Network

if TYPE_CHECKING:
    from .open_solution import OpenModelSolution
    from .solution import ModelSolution, MultiClassSolution

__all__ = ["ModelSpec"]


@dataclass(frozen=True, eq=False)
class ModelSpec:
    """A validated model file.

    Attributes
    ----------
    network : Network
        The compiled network (demands in seconds, think time in seconds).
    populations : ndarray of int
        Populations to report, ascending, each >= 1.
    name : str
        Model name (file stem when the file gives none).
    description : str
    source : str
        File the model was read from (``"<string>"`` for :func:`loads`).
    multiclass : Network or None
        The network with classes a file with ``[[class]]`` tables describes (the one the
        solver takes); ``None`` for a single-class file. In a multi-class file
        :attr:`network` holds the stations with, as demand, the largest over the classes
        (their kinds and servers are what matters).
    arrival_rates : ndarray or None
        ``[model] arrival_rate``: the open model's offered rate(s), jobs/s (then
        :meth:`solve` uses the open solver and ``populations`` is unused); None for a
        closed model.
    target : Target or None
        ``[model] target``: the performance target (``"R <= 50 ms"``) the capacity
        questions of ``qnmodel solve`` answer for.
    storage_model : CachedNetworkedRAID, CachedNFS or None
        A ``[system]`` described with caches: the model whose upgrades (more cache,
        a faster link, ...) the capacity questions weigh.
    """

    network: Network
    populations: np.ndarray
    multiclass: Network | None = None
    arrival_rates: np.ndarray | None = None
    target: Any = None
    storage_model: Any = None
    name: str = "model"
    description: str = ""
    source: str = "<string>"
    document: dict = field(default_factory=dict, repr=False)
    text: str = field(default="", repr=False)

    @property
    def max_population(self) -> int:
        """Largest population N; the solvers compute the whole curve 1..N."""
        return int(self.populations[-1])

    @property
    def is_open(self) -> bool:
        """True when the file gives ``[model] arrival_rate`` (an open model)."""
        return self.arrival_rates is not None

    @property
    def is_multiclass(self) -> bool:
        """True when the file has [[class]] tables."""
        return self.multiclass is not None

    def solve(self) -> ModelSolution | MultiClassSolution | OpenModelSolution:
        """Bounds and exact MVA (closed single class), exact multi-class MVA, or the open
        solution (``arrival_rate``): see :func:`solve`."""
        from .solution import solve

        return solve(self)
