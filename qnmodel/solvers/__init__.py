"""Solvers of closed queueing networks: pure numpy kernels, one algorithm per function."""

from .bounds import (
    BOUNDS_METHODS,
    aba_from_aggregates,
    bjb_from_aggregates,
    bounds,
    bounds_aba,
    bounds_bjb,
)
from .mva import log_convolve, mva, mva_exact, mva_load_dependent

__all__ = [
    "BOUNDS_METHODS",
    "aba_from_aggregates",
    "bjb_from_aggregates",
    "bounds",
    "bounds_aba",
    "bounds_bjb",
    "log_convolve",
    "mva",
    "mva_exact",
    "mva_load_dependent",
]
