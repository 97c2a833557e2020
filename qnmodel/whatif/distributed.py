"""What-if sweeps of millions of grid points on a Dask cluster, with bounded memory and progress.

:func:`sweep_distributed` returns exactly the frame :func:`qnmodel.whatif.sweep` returns for
the same arguments (same columns, same order, same numbers: each grid point is solved by the
same vectorised kernel, :func:`qnmodel.whatif.solve_grid`, whichever chunk it falls in), but
solves the grid on a Dask ``distributed`` cluster:

* the grid is cut into chunks of ``chunk_size`` points, one task each;
* at most ``max_in_flight`` tasks are submitted at a time; each finished chunk is copied into
  the preallocated result arrays and its future released, so the memory held besides the
  result is a few chunks, whatever the grid's size (the in-process path holds every
  intermediate array of the whole grid at once);
* ``progress=True`` prints ``chunks done / total`` and points per second to stderr.

Without a ``client`` a :class:`distributed.LocalCluster` of ``n_workers`` single-threaded
worker processes is started for the call and closed afterwards.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validate import as_population
from ..errors import InvalidTypeError
from .grid import METHODS, _frame, _prepare_sweep, _solve_chunk

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__all__ = ["sweep_distributed"]


def _is_client(obj: Any) -> bool:
    return all(callable(getattr(obj, k, None)) for k in ("submit", "gather", "scatter"))


def sweep_distributed(
    system_or_factory: Any,
    N: int | Iterable[int] = range(1, 65),
    *,
    client: Any = None,
    methods: Sequence[str] = METHODS,
    chunk_size: int = 200_000,
    max_in_flight: int | None = None,
    n_workers: int = 2,
    memory_limit: str = "2GiB",
    progress: bool = False,
    **grids: Any,
) -> pandas.DataFrame:
    """:func:`qnmodel.whatif.sweep` on a Dask cluster: the same frame, bounded memory.

    Parameters
    ----------
    system_or_factory, N, methods, **grids
        As in :func:`qnmodel.whatif.sweep`.
    client : distributed.Client, optional
        The cluster to use; default: a ``LocalCluster`` started (and closed) for this call.
    chunk_size : int
        Grid points per task (>= 1).
    max_in_flight : int, optional
        Tasks submitted but not yet collected (default: twice the cluster's threads).
    n_workers, memory_limit
        Size of the ``LocalCluster`` started when no ``client`` is given (worker processes,
        one thread each, and each worker's memory limit).
    progress : bool
        Print chunks done, total and throughput (points/s) to stderr.

    Returns
    -------
    pandas.DataFrame
        Identical to ``sweep(system_or_factory, N, methods=methods, **grids)``.
    """
    chunk = as_population(chunk_size, "chunk_size")
    own = None
    if client is None:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=as_population(n_workers, "n_workers"),
            threads_per_worker=1,
            processes=True,
            memory_limit=memory_limit,
            dashboard_address=":0",
        )
        own = (Client(cluster), cluster)
        client = own[0]
    elif not _is_client(client):
        raise InvalidTypeError(
            f"client must be a dask.distributed Client, got {type(client).__name__}"
        )
    try:
        return _run(system_or_factory, N, client, methods, chunk, max_in_flight, progress, grids)
    finally:
        if own is not None:
            own[0].close()
            own[1].close()


def _run(system_or_factory, N, client, methods, chunk, max_in_flight, progress, grids):
    from distributed import as_completed

    axes, si, points, n_arr, D, Z, delay, m, names, methods, template = _prepare_sweep(
        system_or_factory, N, methods, None, grids
    )
    P = points.shape[0]
    bounds = [(s, min(s + chunk, P)) for s in range(0, P, chunk)]
    if max_in_flight is None:
        threads = sum(client.nthreads().values()) or 1
        max_in_flight = 2 * threads
    limit = as_population(max_in_flight, "max_in_flight")
    out: dict[str, np.ndarray] = {}
    t0 = time.monotonic()
    done = solved = 0

    def submit(i: int):
        s, e = bounds[i]
        fut = client.submit(
            _solve_chunk, (D[s:e], n_arr, Z[s:e], delay, m, methods, template), pure=False
        )
        fut.chunk_index = i
        return fut

    nxt = min(limit, len(bounds))
    pending = as_completed([submit(i) for i in range(nxt)])
    for fut in pending:
        part = fut.result()
        s, e = bounds[fut.chunk_index]
        fut.release()
        if not out:
            out = {k: np.empty((P,) + v.shape[1:], dtype=v.dtype) for k, v in part.items()}
        for k, v in part.items():
            out[k][s:e] = v
        del part
        done += 1
        solved += e - s
        if nxt < len(bounds):
            pending.add(submit(nxt))
            nxt += 1
        if progress:
            rate = solved / max(time.monotonic() - t0, 1e-9)
            line = f"sweep: {done}/{len(bounds)} chunks, {rate:,.0f} points/s"
            if sys.stderr.isatty():  # one line, rewritten in place
                sys.stderr.write(f"\r{line}" + ("\n" if done == len(bounds) else ""))
            elif done == len(bounds) or done % max(1, len(bounds) // 10) == 0:
                sys.stderr.write(line + "\n")  # a log: about ten whole lines
            sys.stderr.flush()
    return _frame(axes, si, points, n_arr, out, names, methods)
