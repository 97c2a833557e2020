"""Solvers of closed queueing networks: pure numpy kernels, one algorithm per function."""

from .amva import AMVA_METHODS, amva
from .bounds import (
    BOUNDS_METHODS,
    aba_from_aggregates,
    bjb_from_aggregates,
    bounds,
    bounds_aba,
    bounds_bjb,
)
from .forkjoin import ForkJoinResult, fork_join
from .mva import log_convolve, mva, mva_exact, mva_load_dependent
from .mva_multiclass import lattice_memory_bytes, mva_multiclass, seidmann_split

__all__ = [
    "AMVA_METHODS",
    "BOUNDS_METHODS",
    "aba_from_aggregates",
    "amva",
    "bjb_from_aggregates",
    "bounds",
    "bounds_aba",
    "bounds_bjb",
    "fork_join",
    "ForkJoinResult",
    "lattice_memory_bytes",
    "log_convolve",
    "mva",
    "mva_exact",
    "mva_load_dependent",
    "mva_multiclass",
    "seidmann_split",
]
