"""qnmodel: queueing-network models of storage systems.

Describe a system as service demands, solve the closed queueing network
(bounds, exact and approximate MVA), calibrate parameters from measurements
taken with the bundled ``qnbench`` microbenchmark, and compare model with
measurement.

>>> import qnmodel as qn
>>> net = qn.Network.from_demands(["5 ms", "8 ms", "2 ms"], think_time="100 ms")
>>> round(float(qn.mva(net, 10).throughput[-1]), 3)
78.917

Importing qnmodel has no side effects and loads only the standard library: every public
name below is loaded on first use (PEP 562), the solvers and the description with numpy,
the workflow modules that need pandas, scipy.optimize, matplotlib or sympy --
:mod:`qnmodel.calibration`, :mod:`qnmodel.bench`, :mod:`qnmodel.reporting.plotting`,
:mod:`qnmodel.symbolic`, :mod:`qnmodel.io.modelfile` -- with those. So the ``qnmodel``
command answers ``--version`` without loading numpy; :func:`qnmodel.sweep` imports pandas
only when it builds its DataFrame.
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

__version__ = "0.1.0"

# Loaded on first attribute access (PEP 562): name -> (module, attribute or None).
_LAZY = {
    "ClosedClass": ("qnmodel.model", "ClosedClass"),
    "ForkJoin": ("qnmodel.model", "ForkJoin"),
    "Network": ("qnmodel.model", "Network"),
    "OpenClass": ("qnmodel.model", "OpenClass"),
    "Station": ("qnmodel.model", "Station"),
    "raid": ("qnmodel.models.raid", None),
    "NFSBandwidth": ("qnmodel.models.nfs", "NFSBandwidth"),
    "NFSSystem": ("qnmodel.models.nfs", "NFSSystem"),
    "NetworkedRAID": ("qnmodel.models.storage", "NetworkedRAID"),
    "USL": ("qnmodel.models.usl", "USL"),
    "AMVAResult": ("qnmodel.results.closed", "AMVAResult"),
    "BoundsResult": ("qnmodel.results.closed", "BoundsResult"),
    "MultiClassResult": ("qnmodel.results.closed", "MultiClassResult"),
    "MVAResult": ("qnmodel.results.closed", "MVAResult"),
    "MixedResult": ("qnmodel.results.open", "MixedResult"),
    "OpenResult": ("qnmodel.results.open", "OpenResult"),
    "UpgradeResult": ("qnmodel.results.open", "UpgradeResult"),
    "PriorityQueueResult": ("qnmodel.results.queue", "PriorityQueueResult"),
    "QueueResult": ("qnmodel.results.queue", "QueueResult"),
    "amva": ("qnmodel.solvers", "amva"),
    "bounds": ("qnmodel.solvers", "bounds"),
    "mva": ("qnmodel.solvers", "mva"),
    "mva_exact": ("qnmodel.solvers", "mva_exact"),
    "mva_load_dependent": ("qnmodel.solvers", "mva_load_dependent"),
    "mva_multiclass": ("qnmodel.solvers", "mva_multiclass"),
    "best_upgrade": ("qnmodel.solvers.capacity", "best_upgrade"),
    "max_arrival_rate": ("qnmodel.solvers.capacity", "max_arrival_rate"),
    "max_population": ("qnmodel.solvers.capacity", "max_population"),
    "min_servers": ("qnmodel.solvers.capacity", "min_servers"),
    "ForkJoinResult": ("qnmodel.solvers.forkjoin", "ForkJoinResult"),
    "fork_join": ("qnmodel.solvers.forkjoin", "fork_join"),
    "mixed_network": ("qnmodel.solvers.mixed", "mixed_network"),
    "mva_ld_general": ("qnmodel.solvers.mva_ld_general", "mva_ld_general"),
    "bounds_multiclass": ("qnmodel.solvers.network_front", "bounds_multiclass"),
    "bounds_open": ("qnmodel.solvers.network_front", "bounds_open"),
    "mva_blocking": ("qnmodel.solvers.network_front", "mva_blocking"),
    "normalizing_constant": ("qnmodel.solvers.network_front", "normalizing_constant"),
    "thread_pool": ("qnmodel.solvers.population_limit", "thread_pool"),
    "thread_pool_open": ("qnmodel.solvers.population_limit", "thread_pool_open"),
    "ThreadPoolResult": ("qnmodel.results.threadpool", "ThreadPoolResult"),
    "OpenThreadPoolResult": ("qnmodel.results.threadpool", "OpenThreadPoolResult"),
    "engset": ("qnmodel.solvers.open", "engset"),
    "erlang_b": ("qnmodel.solvers.open", "erlang_b"),
    "erlang_c": ("qnmodel.solvers.open", "erlang_c"),
    "open_network": ("qnmodel.solvers.open", "open_network"),
    "priority_queue": ("qnmodel.solvers.priority", "priority_queue"),
    "queue_mg1": ("qnmodel.solvers.queue", "queue_mg1"),
    "queue_mh1": ("qnmodel.solvers.queue", "queue_mh1"),
    "queue_mm1": ("qnmodel.solvers.queue", "queue_mm1"),
    "queue_mminf": ("qnmodel.solvers.queue", "queue_mminf"),
    "queue_mmm": ("qnmodel.solvers.queue", "queue_mmm"),
    "single_queue": ("qnmodel.solvers.queue", "single_queue"),
    "queue_ammm": ("qnmodel.solvers.queue_approx", "queue_ammm"),
    "queue_mgm": ("qnmodel.solvers.queue_approx", "queue_mgm"),
    "queue_mm1k": ("qnmodel.solvers.queue_finite", "queue_mm1k"),
    "queue_mmmk": ("qnmodel.solvers.queue_finite", "queue_mmmk"),
    "sweep": ("qnmodel.whatif.grid", "sweep"),
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
    "simulate_storage": ("qnmodel.simulation.storage", "simulate_storage"),
    "simulate_streaming": ("qnmodel.simulation.streaming", "simulate_streaming"),
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
    "simulate_storage",
    "simulate_streaming",
    "simulation",
    "single_queue",
    "sweep",
    "symbolic",
    "testbed",
    "thread_pool",
    "thread_pool_open",
    "ThreadPoolResult",
    "OpenThreadPoolResult",
    "units",
]
