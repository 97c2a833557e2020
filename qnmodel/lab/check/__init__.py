"""Bottom-up check of a machine (or of every node) before trusting a model (seeds 000, 004).

:func:`measure_node` measures this machine's component figures with qnbench;
:func:`measure_ranks` measures them on every rank of an MPI run, and the links between random
pairs of ranks;
:func:`~qnmodel.lab.check.hardware.load_hardware` reads the theoretical peaks from a TOML
description; :func:`analyse` compares figures with their peaks and across nodes and names
the suspect component.
"""

from .analysis import COMPONENT_CAUSES, MIN_FRACTION, CheckResult, Finding, analyse
from .hardware import Hardware, load_hardware, loads_hardware, memory_peak
from .measure import FIGURES, measure_node
from .ranks import RankMeasurements, measure_ranks, mpirun_command

__all__ = [
    "COMPONENT_CAUSES",
    "FIGURES",
    "MIN_FRACTION",
    "RankMeasurements",
    "CheckResult",
    "Finding",
    "Hardware",
    "analyse",
    "load_hardware",
    "loads_hardware",
    "measure_node",
    "measure_ranks",
    "memory_peak",
    "mpirun_command",
]
