"""What-if grids over model-file values: the job of ``qnmodel sweep``."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .reader import with_values
from .spec import ModelSpec, MultiClassSolution, OpenModelSolution

__all__ = ["sweep_model"]


def sweep_model(
    spec: ModelSpec,
    grid: Mapping[str, Sequence[Any]],
    progress: Callable[[int], None] | None = None,
):
    """Solve a model at every point of a grid of model-file values.

    Parameters
    ----------
    spec : ModelSpec
        The model (from :func:`~qnmodel.io.modelfile.load` or
        :func:`~qnmodel.io.modelfile.loads`).
    grid : mapping of str to sequence
        Keys as :func:`~qnmodel.io.modelfile.with_values` takes them
        (``"network.rate"``, ``"think_time"``, ``"system.link_rate"``), each
        with the values to try; every combination is solved.
    progress : callable, optional
        Called with the number of grid points done after each one.

    Returns
    -------
    pandas.DataFrame
        Tidy: one column per varied key (as given), then ``bottleneck, n,
        throughput, response_time`` (exact MVA at the model's populations), one
        row per grid point and population; for a multi-class model ``class,
        population`` (open classes: ``class, arrival_rate``) replace ``n``, one row per
        grid point and class; for an open model
        ``arrival_rate`` does, one row per grid point and arrival rate. A varied key that
        is one of these columns (``arrival_rate``, ``population``) appears once, in SI units.
    """
    import pandas as pd

    keys = list(grid)
    frames = []
    combos = list(itertools.product(*(grid[k] for k in keys)))
    for i, combo in enumerate(combos, start=1):
        point = dict(zip(keys, combo, strict=True))
        res = with_values(spec, point).solve()
        if isinstance(res, MultiClassSolution):
            given = "arrival_rate" if res.spec.is_open else "population"
            f = res.to_frame()[["class", given, "throughput", "response_time"]]
        elif isinstance(res, OpenModelSolution):
            f = res.to_frame()[["arrival_rate", "throughput", "response_time"]]
        else:
            f = res.to_frame()[["n", "throughput", "response_time"]]
        f.insert(0, "bottleneck", res.summary()["bottleneck"])
        for k in reversed(keys):
            if k not in f.columns:  # a varied arrival_rate or population is the result's own
                f.insert(0, k, [point[k]] * len(f))
        frames.append(f)
        if progress is not None:
            progress(i)
    return pd.concat(frames, ignore_index=True)
