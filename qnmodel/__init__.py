"""qnmodel: queueing-network models of storage systems.

Describe a system as service demands, solve the closed queueing network
(bounds, exact and approximate MVA), calibrate parameters from measurements
taken with the bundled ``qnbench`` microbenchmark, and compare model with
measurement.

>>> import qnmodel as qn
>>> net = qn.Network.from_demands(["5 ms", "8 ms", "2 ms"], think_time="100 ms")
>>> round(float(qn.mva(net, 10).throughput[-1]), 3)
78.917
"""

from . import units
from .errors import (
    ConvergenceError,
    ConvergenceWarning,
    InvalidModelError,
    InvalidTypeError,
    NumericalInstabilityWarning,
    UnitError,
)
from .network import Network, Station
from .results import BoundsResult, MVAResult
from .solvers import bounds, mva, mva_exact, mva_load_dependent

__version__ = "0.1.0"

__all__ = [
    "BoundsResult",
    "ConvergenceError",
    "ConvergenceWarning",
    "InvalidModelError",
    "InvalidTypeError",
    "MVAResult",
    "Network",
    "NumericalInstabilityWarning",
    "Station",
    "UnitError",
    "__version__",
    "bounds",
    "mva",
    "mva_exact",
    "mva_load_dependent",
    "units",
]
