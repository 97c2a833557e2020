"""qnmodel: queueing-network models of storage systems.

Describe a system as service demands, solve the closed queueing network
(bounds, exact and approximate MVA), calibrate parameters from measurements
taken with the bundled ``qnbench`` microbenchmark, and compare model with
measurement.

>>> import qnmodel as qn
>>> net = qn.Network.from_demands(["5 ms", "8 ms", "2 ms"], think_time="100 ms")
>>> round(float(qn.mva(net, 10).throughput[-1]), 3)
78.917

Importing qnmodel has no side effects and loads only numpy (and the standard
library). The workflow modules that need pandas, scipy.optimize, matplotlib or
sympy -- :mod:`qnmodel.calibration`, :mod:`qnmodel.bench`,
:mod:`qnmodel.reporting.plotting`, :mod:`qnmodel.symbolic`, :mod:`qnmodel.io.modelfile` --
and the names they define (``load_model``, ``fit_rate_multipliers``) are loaded on first use;
:func:`qnmodel.sweep` imports pandas only when it builds its DataFrame.
"""

from importlib import import_module
from typing import Any

from . import units
from .errors import (
    BenchError,
    BenchNotFoundError,
    ConvergenceError,
    ConvergenceWarning,
    InvalidModelError,
    InvalidTypeError,
    LatticeTooLargeError,
    MeasurementArtefactWarning,
    NumericalInstabilityWarning,
    TraceError,
    UnitError,
    UnstableModelError,
)
from .model import ClosedClass, ForkJoin, Network, OpenClass, Station
from .models import raid
from .models.nfs import NFSBandwidth, NFSSystem
from .models.storage import NetworkedRAID
from .models.usl import USL
from .results.closed import AMVAResult, BoundsResult, MultiClassResult, MVAResult
from .results.open import MixedResult, OpenResult, UpgradeResult
from .results.queue import PriorityQueueResult, QueueResult
from .solvers import amva, bounds, mva, mva_exact, mva_load_dependent, mva_multiclass
from .solvers.capacity import best_upgrade, max_arrival_rate, max_population, min_servers
from .solvers.forkjoin import ForkJoinResult, fork_join
from .solvers.mixed import mixed_network
from .solvers.mva_ld_general import mva_ld_general
from .solvers.network_front import (
    bounds_multiclass,
    bounds_open,
    mva_blocking,
    normalizing_constant,
)
from .solvers.open import engset, erlang_b, erlang_c, open_network
from .solvers.priority import priority_queue
from .solvers.queue import queue_mg1, queue_mh1, queue_mm1, queue_mminf, queue_mmm, single_queue
from .solvers.queue_approx import queue_ammm, queue_mgm
from .solvers.queue_finite import queue_mm1k, queue_mmmk
from .whatif.grid import sweep

__version__ = "0.1.0"

# Loaded on first attribute access (PEP 562): name -> (module, attribute or None).
_LAZY = {
    "load_model": ("qnmodel.io.modelfile", "load"),
    "fit_rate_multipliers": ("qnmodel.calibration.rate_curve", "fit_rate_multipliers"),
    "nfs_aggregate_bandwidth": ("qnmodel.models.nfs_network", "aggregate_bandwidth"),
    "calibration": ("qnmodel.calibration", None),
    "bench": ("qnmodel.bench", None),
    "plotting": ("qnmodel.reporting.plotting", None),
    "symbolic": ("qnmodel.symbolic", None),
    "modelfile": ("qnmodel.io.modelfile", None),
    "demands": ("qnmodel.demands", None),
    "simulate": ("qnmodel.simulation", "simulate"),
    "simulation": ("qnmodel.simulation", None),
    "testbed": ("qnmodel.lab.testbed", None),
    "check": ("qnmodel.lab.check", None),
}


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'qnmodel' has no attribute {name!r}") from None
    mod = import_module(module)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AMVAResult",
    "BenchError",
    "BenchNotFoundError",
    "BoundsResult",
    "ClosedClass",
    "ConvergenceError",
    "ConvergenceWarning",
    "ForkJoin",
    "ForkJoinResult",
    "InvalidModelError",
    "InvalidTypeError",
    "LatticeTooLargeError",
    "MVAResult",
    "MeasurementArtefactWarning",
    "MultiClassResult",
    "NFSBandwidth",
    "NFSSystem",
    "Network",
    "NetworkedRAID",
    "NumericalInstabilityWarning",
    "OpenClass",
    "MixedResult",
    "OpenResult",
    "PriorityQueueResult",
    "QueueResult",
    "Station",
    "TraceError",
    "USL",
    "UnitError",
    "UnstableModelError",
    "UpgradeResult",
    "__version__",
    "amva",
    "best_upgrade",
    "bounds",
    "normalizing_constant",
    "mva_blocking",
    "bounds_open",
    "bounds_multiclass",
    "calibration",
    "check",
    "bench",
    "demands",
    "engset",
    "erlang_b",
    "erlang_c",
    "fit_rate_multipliers",
    "fork_join",
    "load_model",
    "max_arrival_rate",
    "max_population",
    "min_servers",
    "mixed_network",
    "modelfile",
    "mva",
    "mva_exact",
    "mva_ld_general",
    "mva_load_dependent",
    "mva_multiclass",
    "nfs_aggregate_bandwidth",
    "open_network",
    "plotting",
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
    "raid",
    "simulate",
    "simulation",
    "single_queue",
    "sweep",
    "symbolic",
    "testbed",
    "units",
]
