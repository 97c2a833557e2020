"""The description of a system: what is being modelled (floor L1).

* :class:`Station` (:mod:`qnmodel.model.station`) - a service centre: demand or service time
  and visits, discipline (FCFS, PS, LCFS-PR, IS, HOL, PRIO-PR), servers or a rate curve, the
  service-time law (:mod:`qnmodel.model.laws`) and a capacity;
* :class:`ForkJoin` (:mod:`qnmodel.model.forkjoin`) - a request split over branches, joined
  on the k-th;
* :class:`ClosedClass`, :class:`OpenClass` (:mod:`qnmodel.model.classes`) - the workloads;
* :class:`Network` (:mod:`qnmodel.model.network`) - the one network type, compiled once into
  :class:`Compiled` (:mod:`qnmodel.model.compiled`), the array form every solver reads.
"""

from .classes import ClosedClass, OpenClass
from .compiled import FEATURES, Compiled
from .forkjoin import ForkJoin
from .laws import Deterministic, Empirical, Exponential, Lognormal
from .network import Network
from .station import DISCIPLINES, STATION_KINDS, Station

__all__ = [
    "DISCIPLINES",
    "FEATURES",
    "STATION_KINDS",
    "ClosedClass",
    "Compiled",
    "Deterministic",
    "Empirical",
    "Exponential",
    "ForkJoin",
    "Lognormal",
    "Network",
    "OpenClass",
    "Station",
]
