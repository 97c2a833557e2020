"""Model files: a closed queueing network described in TOML.

A model file names the stations of a system with unit strings, the think
time and the populations to solve for. It is read with the standard
library's :mod:`tomllib`, validated with the same checkers as the Python API,
and compiled into a :class:`~qnmodel.model.network.Network`, so that
``qnmodel solve model.toml`` and the Python API give identical numbers.

Schema (version 1) -- see ``docs/reference/model-files.md`` for the full text
-----------------------------------------------------------------------------
::

    [model]
    name = "web-storage"              # optional, a label
    description = "..."               # optional
    think_time = "50 ms"              # Z, a time; default 0
    N = 40                   # solve n = 1..40; or
    # arrival_rate = "40000/s"        # an open model (not with population); and optionally
    # target = "R <= 50 ms"           # the target of the capacity questions
    # populations = [1, 10, 50, 200]  # these populations; or
    # populations = { start = 10, stop = 200, step = 10 }

    [[station]]                       # one table per station, in order
    name = "disk"
    demand = "4.9 ms"                 # D_k = V_k S_k, a time; or
    # service_time = "9.8 ms"         # S_k, with visits = V_k (default 1); or
    # size = "64 KiB"                 # bytes per visit, with
    # rate = "100 Mbit/s"             # the transfer rate: S_k = size / rate
    visits = 0.5                      # mean visits per job (>= 0, may be fractional)
    kind = "queue"                    # "queue" (default) or "delay"
    servers = 1                       # identical servers of a "queue" station
    # discipline = "PS"               # "FCFS" (default), "PS", "LCFS-PR", "IS" (a delay), ...

With ``[[class]]`` tables a station value may be a table per class
(``demand = { read = "2 ms", write = "5 ms" }``). A FCFS station whose classes have
different service times per visit is not product form (the exact multi-class solver refuses
it): give ``discipline = "PS"`` where the device shares its capacity among the jobs present,
or ``service_time`` with per-class ``visits`` where the classes differ only in visits.

Every error names the file, the key path (``station[2].rate``) and, where it
can be found, the line.

Parts
-----
``reader`` (:func:`load`, :func:`loads`, :func:`with_values`, the builder),
``_fields`` (the schema's keys and field checkers), ``_systems`` (``[system]``
tables), ``_scanner`` (key lines, :class:`ModelFileError`), ``spec``
(:class:`ModelSpec`; a ``[[class]]`` file is described by a
:class:`~qnmodel.model.Network` with classes), ``solution`` (:func:`solve`
and its results), ``grid`` (:func:`sweep_model`, what-if grids).
"""

from __future__ import annotations

from ._fields import SYSTEM_TYPES  # noqa: F401  (the named system types)
from ._scanner import ModelFileError
from ._texts import DEMO_MODEL_TOML, PAPER_MODEL_TOML
from .grid import sweep_model
from .reader import load, loads, with_values
from .spec import ModelSolution, ModelSpec, MultiClassSolution, OpenModelSolution, solve

__all__ = [
    "ModelFileError",
    "ModelSpec",
    "ModelSolution",
    "MultiClassSolution",
    "OpenModelSolution",
    "DEMO_MODEL_TOML",
    "PAPER_MODEL_TOML",
    "load",
    "loads",
    "solve",
    "with_values",
    "sweep_model",
]

# The public classes present themselves under the package, where users import them from
# (tracebacks, reprs and the docs read ``qnmodel.io.modelfile.ModelFileError``).
for _cls in (
    ModelFileError,
    ModelSpec,
    ModelSolution,
    MultiClassSolution,
    OpenModelSolution,
):
    _cls.__module__ = __name__
del _cls
