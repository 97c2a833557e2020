"""Solvers of closed queueing networks: pure numpy kernels, one algorithm per function."""

from ..model.routing import visits_closed, visits_open
from ..results._laws import register_law_solver
from .amva import AMVA_METHODS, amva
from .bounds import (
    BOUNDS_METHODS,
    aba_from_aggregates,
    bjb_from_aggregates,
    bounds,
    bounds_aba,
    bounds_bjb,
)
from .bounds_geometric import bounds_geometric, bounds_proportional
from .bounds_multiclass import (
    bounds_multiclass_aba,
    bounds_multiclass_bsb,
    bounds_multiclass_composite,
)
from .bounds_open import bounds_open_aba, bounds_open_bsb
from .capacity import best_upgrade, max_arrival_rate, max_population, min_servers
from .forkjoin import ForkJoinResult, fork_join
from .mixed import mixed_network
from .mva import log_convolve, mva, mva_exact, mva_load_dependent
from .mva_blocking import mvablo
from .mva_chains import mva_chains
from .mva_lattice_ld import mva_multiclass_ld_exact
from .mva_ld_general import mva_ld_general
from .mva_multiclass import lattice_memory_bytes, mva_multiclass, seidmann_split
from .network_front import bounds_multiclass, bounds_open, mva_blocking, normalizing_constant
from .normconst import normconst_convolution, normconst_ld
from .open import engset, erlang_b, erlang_c, open_network
from .population_limit import thread_pool, thread_pool_open
from .priority import priority_queue
from .queue import queue_mg1, queue_mh1, queue_mm1, queue_mminf, queue_mmm, single_queue
from .queue_approx import queue_ammm, queue_mgm
from .queue_finite import queue_mm1k, queue_mmmk
from .response_laws import response_time_law

# the results carry their response-time law (``response_time_quantile``) through this one
# function; they sit below the solvers and never import them
register_law_solver(response_time_law)

__all__ = [
    "thread_pool",
    "thread_pool_open",
    "AMVA_METHODS",
    "BOUNDS_METHODS",
    "aba_from_aggregates",
    "amva",
    "bjb_from_aggregates",
    "bounds",
    "bounds_aba",
    "bounds_bjb",
    "bounds_geometric",
    "bounds_multiclass_aba",
    "bounds_multiclass_bsb",
    "bounds_multiclass_composite",
    "bounds_open_aba",
    "bounds_open_bsb",
    "bounds_proportional",
    "fork_join",
    "ForkJoinResult",
    "best_upgrade",
    "max_arrival_rate",
    "max_population",
    "min_servers",
    "engset",
    "erlang_b",
    "erlang_c",
    "lattice_memory_bytes",
    "mixed_network",
    "mva_ld_general",
    "open_network",
    "log_convolve",
    "mva",
    "mva_exact",
    "mva_load_dependent",
    "mva_multiclass",
    "priority_queue",
    "queue_ammm",
    "queue_mg1",
    "queue_mgm",
    "queue_mh1",
    "queue_mm1",
    "queue_mm1k",
    "queue_mminf",
    "queue_mmm",
    "queue_mmmk",
    "mva_blocking",
    "mvablo",
    "bounds_multiclass",
    "bounds_open",
    "normalizing_constant",
    "mva_chains",
    "mva_multiclass_ld_exact",
    "normconst_convolution",
    "normconst_ld",
    "visits_closed",
    "visits_open",
    "seidmann_split",
    "single_queue",
]
