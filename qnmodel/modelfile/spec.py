"""The validated model: :class:`ModelSpec` and the classes of a multi-class file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..network import Network

if TYPE_CHECKING:
    from .solution import ModelSolution, MultiClassSolution

__all__ = ["ModelSpec", "MultiClassModel"]


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
    multiclass : MultiClassModel or None
        The classes of a multi-class model (``[[class]]`` tables); ``None`` for a
        single-class one. In a multi-class model :attr:`network` holds the
        stations with, as demand, the largest over the classes (their kinds
        and servers are what matters); the solver uses :attr:`MultiClassModel.demands`.
    """

    network: Network
    populations: np.ndarray
    multiclass: MultiClassModel | None = None
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
    def is_multiclass(self) -> bool:
        """True when the file has [[class]] tables."""
        return self.multiclass is not None

    def solve(self) -> ModelSolution | MultiClassSolution:
        """Bounds and exact MVA (single class) or exact multi-class MVA: see :func:`solve`."""
        from .solution import solve

        return solve(self)


@dataclass(frozen=True, eq=False)
class MultiClassModel:
    """The classes of a multi-class model file.

    Attributes
    ----------
    classes : tuple of str
        Class names, in file order.
    population : ndarray of int (C,)
        Jobs per class N_c (>= 0).
    think_time : ndarray (C,)
        Z_c, seconds.
    demands : ndarray (C, K)
        D_ck, seconds, class c at station k (station order of the file).
    """

    classes: tuple[str, ...]
    population: np.ndarray
    think_time: np.ndarray
    demands: np.ndarray
