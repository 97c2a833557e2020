"""The closed model a multi-class solver works on, read once from a network's compiled form.

Shared by :func:`~qnmodel.solvers.mva_multiclass.mva_multiclass`,
:func:`~qnmodel.solvers.amva.amva` and the closed part of
:func:`~qnmodel.solvers.mixed.mixed_network`: the arrays, the populations of the call, and the
packing of a :class:`~qnmodel.results.closed.MultiClassResult`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_population
from ..errors import InvalidModelError, InvalidTypeError
from ..model import Network
from ..results.closed import MultiClassResult
from .support import require

__all__ = ["ClosedModel", "closed_model", "package"]


@dataclass(frozen=True)
class ClosedModel:
    """Closed classes of a network as arrays: D (C, K), N (C,), Z (C,), per station delay,
    servers and rate curves (None, or the curve of a general load-dependent station)."""

    D: np.ndarray
    N: np.ndarray
    Z: np.ndarray
    delay: np.ndarray
    servers: np.ndarray
    rates: tuple
    names: tuple[str, ...]
    class_names: tuple[str, ...]
    single: bool
    approximate: bool

    @property
    def has_ld(self) -> bool:
        """Some visited queueing station is multi-server or load-dependent."""
        visited = self.D.sum(axis=0) > 0
        ld = np.array([r is not None for r in self.rates]) | (self.servers > 1)
        return bool(np.any(ld & visited & ~self.delay))

    def peak_rate(self) -> np.ndarray:
        """max_j r_k(j): m for m servers, the curve's peak, 1 otherwise (K,)."""
        return np.array([
            float(r.max()) if r is not None else float(self.servers[k]) if not self.delay[k]
            else 1.0
            for k, r in enumerate(self.rates)
        ])  # fmt: skip


def closed_model(net: Any, N: Any, solver: str) -> ClosedModel:
    """The closed model of ``net`` at population ``N`` for ``solver`` (whose declared support
    decides what is refused and whether the answer is approximate)."""
    if not isinstance(net, Network):
        raise InvalidTypeError(
            f"{solver} takes a Network, got {type(net).__name__}; a C x K demand matrix is "
            "qnmodel.Network.from_demands(D, N=[...], think_time=...)"
        )
    cm = net.compiled
    approximate = require(cm, solver, drop=("closed",))
    if net.single:
        Ns = np.array([as_population(N, "N")], dtype=np.int64)
    else:
        Ns = cm.population_vector(N)
        if Ns.sum() < 1:
            raise InvalidModelError(f"N must hold at least one job, got {Ns.tolist()}")
    return ClosedModel(
        D=np.array(cm.D),
        N=Ns,
        Z=np.array(cm.Z),
        delay=np.array(cm.is_delay),
        servers=np.array(cm.servers),
        rates=cm.rates,
        names=cm.station_names,
        class_names=cm.class_names,
        single=net.single,
        approximate=approximate,
    )


def package(method: str, model: ClosedModel, X: np.ndarray, Rk: np.ndarray, cls=MultiClassResult,
            **kw: Any) -> Any:  # fmt: skip
    """A result from X (C,) and R_ck (C, K) of the model's stations."""
    Q = X[:, None] * Rk
    U = X[:, None] * model.D / model.peak_rate()[None, :]
    return cls(
        method=method,
        population=model.N,
        throughput=X,
        response_time=Rk.sum(axis=1),
        queue_length=Q,
        utilization=U,
        residence_time=Rk,
        station_names=model.names,
        think_time=model.Z,
        demands=model.D,
        servers=model.servers,
        is_delay=model.delay,
        class_names=model.class_names,
        **kw,
    )
