"""Discrete-event simulation of queueing networks: :func:`simulate`; of networked storage
whose stages overlap (pipelined transfers through max-min fair links): :func:`simulate_storage`;
of streaming stages (a job served by several stations at once): :func:`simulate_streaming`.

The event loop is compiled C (``_csrc/qnsim.c``, loaded with ctypes from
``qnmodel/_lib``); there is no Python fallback for it. This package is a workflow layer (L3):
it reads network descriptions (L1), uses the qnbench schema (for measured histograms) and
loads scipy for Student-t quantiles on first use.
"""

from ..model.laws import Deterministic, Empirical, Exponential, Lognormal
from ..results.simulation import SimulationResult, StorageSimulationResult
from ._engine import SimulatorUnavailableError
from .core import CI_METHODS, simulate
from .storage import simulate_storage
from .streaming import simulate_streaming

__all__ = [
    "CI_METHODS",
    "Deterministic",
    "Empirical",
    "Exponential",
    "Lognormal",
    "SimulationResult",
    "SimulatorUnavailableError",
    "StorageSimulationResult",
    "simulate",
    "simulate_storage",
    "simulate_streaming",
]
