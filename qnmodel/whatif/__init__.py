"""What-if studies: parameter grids solved in bulk, distributed sweeps and interactive widgets.

* :func:`sweep` (:mod:`qnmodel.whatif.grid`) - bounds and exact MVA over a grid, a tidy DataFrame;
* :func:`sweep_distributed` (:mod:`qnmodel.whatif.distributed`) - the same on a Dask cluster;
* :mod:`qnmodel.whatif.widgets` - ipywidgets explorers (imported on use).
"""

from .grid import METHODS, RESULT_COLUMNS, executor_map, solve_grid, sweep

__all__ = ["METHODS", "RESULT_COLUMNS", "executor_map", "solve_grid", "sweep", "sweep_distributed"]


def __getattr__(name: str):
    # Dask is optional: the distributed sweep is imported on first use
    if name == "sweep_distributed":
        from .distributed import sweep_distributed

        return sweep_distributed
    raise AttributeError(f"module 'qnmodel.whatif' has no attribute {name!r}")
