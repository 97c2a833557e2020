"""The validated model: :class:`ModelSpec` and the classes of a multi-class file."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ...model.multiclass import ClosedClass, MultiClassNetwork
from ...model.network import Network

if TYPE_CHECKING:
    from .open_solution import OpenModelSolution
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
        single-class one. Its :attr:`MultiClassModel.network` (also
        :attr:`multiclass_network`) is the
        :class:`~qnmodel.model.multiclass.MultiClassNetwork` the file describes, which
        the solver takes. In a multi-class model :attr:`network` holds the
        stations with, as demand, the largest over the classes (their kinds and
        servers are what matters).
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
    multiclass: MultiClassModel | None = None
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

    @property
    def multiclass_network(self) -> MultiClassNetwork | None:
        """The multi-class description of a file with [[class]] tables; None otherwise."""
        return None if self.multiclass is None else self.multiclass.network

    def solve(self) -> ModelSolution | MultiClassSolution | OpenModelSolution:
        """Bounds and exact MVA (closed single class), exact multi-class MVA, or the open
        solution (``arrival_rate``): see :func:`solve`."""
        from .solution import solve

        return solve(self)


class MultiClassModel:
    """The classes of a multi-class model file: a view of its :class:`MultiClassNetwork`.

    Kept for scripts written before :class:`~qnmodel.model.multiclass.MultiClassNetwork`
    existed; :attr:`ModelSpec.multiclass_network` is the description itself.

    Attributes
    ----------
    network : MultiClassNetwork
        The stations with their per-class demands and the closed classes.
    classes : tuple of str
        Class names, in file order.
    population : ndarray of int (C,)
        Jobs per class N_c (>= 0).
    think_time : ndarray (C,)
        Z_c, seconds.
    demands : ndarray (C, K)
        D_ck, seconds, class c at station k (station order of the file).
    """

    __slots__ = ("network",)

    def __init__(
        self,
        classes: Any = None,
        population: Any = None,
        think_time: Any = None,
        demands: Any = None,
        *,
        network: MultiClassNetwork | None = None,
    ) -> None:
        if network is None:
            warnings.warn(
                "MultiClassModel(classes, population, think_time, demands) is deprecated; "
                "describe the model with qnmodel.MultiClassNetwork",
                DeprecationWarning,
                stacklevel=2,
            )
            Z = np.broadcast_to(np.asarray(think_time, dtype=np.float64), (len(classes),))
            network = MultiClassNetwork.from_demands(
                demands,
                [
                    ClosedClass(c, int(n), float(z))
                    for c, n, z in zip(classes, population, Z, strict=True)
                ],
            )
        object.__setattr__(self, "network", network)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"MultiClassModel is read-only: cannot set {name!r}")

    @property
    def classes(self) -> tuple[str, ...]:
        return self.network.class_names

    @property
    def population(self) -> np.ndarray:
        return self.network.N

    @property
    def think_time(self) -> np.ndarray:
        return self.network.think_time

    @property
    def demands(self) -> np.ndarray:
        return self.network.demands

    def __repr__(self) -> str:
        return f"MultiClassModel(classes={self.classes}, population={self.population.tolist()})"
