"""What-if sweeps: bounds and exact MVA over a grid of parameters, as a tidy DataFrame.

:func:`sweep` is also ``qnmodel.sweep`` and ``qnmodel.whatif.sweep``.

:func:`sweep` takes a system and a grid of parameter values, and returns one
row per grid point and population n. The algebra is vectorised over the
grid: the demands of every point come from one array call (for systems that
offer :meth:`demand_grid`, such as :class:`qnmodel.models.storage.NetworkedRAID`),
the ABA and BJB bounds from the broadcasting kernels
:func:`~qnmodel.solvers.bounds.aba_from_aggregates` and
:func:`~qnmodel.solvers.bounds.bjb_from_aggregates`, and exact MVA runs the
Reiser-Lavenberg recursion for all points in one call of the batched kernel that
:func:`qnmodel.mva` uses too (:func:`qnmodel.solvers._mva_core.exact`). Large grids
can be split into chunks and handed to an executor: a ``concurrent.futures`` pool,
or a Dask ``distributed.Client`` as it is (its ``map`` returns futures, which are
gathered; see :func:`executor_map`).

Columns of the returned frame
-----------------------------
``<parameter>`` (one per swept key)
    The parameter's value at this point, in SI units (seconds, bytes,
    bytes/s) for numeric parameters, the string for choices (``raid``, ``op``).
``n``
    Population (concurrent jobs), int.
``throughput_aba_lower``, ``throughput_aba_upper`` (jobs/s), ``response_time_aba_lower``,
``response_time_aba_upper`` (s)
    Asymptotic bounds ([LZGS] sec. 5.2).
``throughput_bjb_lower``, ..., ``response_time_bjb_upper``
    Balanced job bounds ([LZGS] sec. 5.3; [Cui06] eq. 1 for Z = 0); NaN for
    networks with multi-server or load-dependent (rate-curve) stations, where BJB does not
    apply (it assumes single-server load-independent queues).
``throughput_mva`` (jobs/s), ``response_time_mva`` (s)
    Exact MVA; response time excludes the think time.
``bottleneck``
    Name of the station with the largest per-server demand (categorical).

References
----------
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, ch. 5-6.
.. [Cui06] Cui B. et al., Journal on Communications 27(1):69-74, 2006.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas

from .._validate import as_population, as_quantity, check_memory
from ..errors import InvalidModelError, InvalidTypeError
from ..model import Network
from ..solvers._mva_core import exact
from ..solvers.bounds import aba_from_aggregates, bjb_from_aggregates
from ..solvers.mva import mva as _mva_one
from ..solvers.support import require

__all__ = ["sweep", "solve_grid", "executor_map", "METHODS", "RESULT_COLUMNS"]

#: methods :func:`sweep` can compute
METHODS = ("aba", "bjb", "mva")

#: result columns per method, in frame order
RESULT_COLUMNS = {
    "aba": [
        "throughput_aba_lower",
        "throughput_aba_upper",
        "response_time_aba_lower",
        "response_time_aba_upper",
    ],
    "bjb": [
        "throughput_bjb_lower",
        "throughput_bjb_upper",
        "response_time_bjb_lower",
        "response_time_bjb_upper",
    ],
    "mva": ["throughput_mva", "response_time_mva"],
}


# --------------------------------------------------------------------------------------------
# The vectorised kernel
# --------------------------------------------------------------------------------------------
def solve_grid(
    demands: np.ndarray,
    n: Sequence[int] | np.ndarray,
    think_time: float | np.ndarray = 0.0,
    is_delay: np.ndarray | None = None,
    servers: np.ndarray | None = None,
    methods: Sequence[str] = METHODS,
    template: Network | None = None,
) -> dict[str, np.ndarray]:
    """Bounds and exact MVA for P networks of the same shape at once.

    Parameters
    ----------
    demands : ndarray (P, K)
        Service demands of K stations at P grid points, seconds (finite, >= 0).
    n : sequence of int
        Populations (>= 1), sorted or not; results come in the given order.
    think_time : float or ndarray (P,)
        Think time Z per point, seconds (>= 0).
    is_delay : ndarray (K,) of bool, optional
        Delay (infinite-server) stations; default none.
    servers : ndarray (K,) of int, optional
        Servers per station; default all 1. Multi-server stations make BJB
        NaN and MVA fall back to one load-dependent solve per point.
    methods : subset of {"aba", "bjb", "mva"}
    template : Network, optional
        A network of these K stations whose stations say everything but their demands
        (delay, servers, rate curves, disciplines, service laws): it replaces ``is_delay``
        and ``servers``. Rate curves count in the bounds with their peak rate and make BJB
        NaN and MVA one load-dependent solve per point; a feature exact MVA or the bounds
        do not take is refused before any work.

    Returns
    -------
    dict of str -> ndarray
        Each column of :data:`RESULT_COLUMNS` for the requested methods as a
        (P, len(n)) array, plus ``"bottleneck"``: index (P,) of the station
        with the largest per-server queueing demand.

    Notes
    -----
    MVA: R_k = D_k (1 + Q_k) at queues, D_k at delays, X = n / (Z + sum R_k),
    Q_k = X R_k ([LZGS] Algorithm 6.1), for all P points in one call of the
    batched kernel shared with :func:`qnmodel.mva` (bit-identical to it per
    point): O(max(n) P K) flops.
    """
    D = np.asarray(demands, dtype=np.float64)
    if D.ndim != 2 or D.shape[1] == 0:
        raise InvalidModelError(f"demands must have shape (points, stations), got {D.shape}")
    P, K = D.shape
    bad = ~np.isfinite(D) | (D < 0)
    if bad.any():
        p, k = (int(i) for i in np.argwhere(bad)[0])
        raise InvalidModelError(
            f"demands[{p}, {k}] (grid point {p}, station {k}) must be finite and >= 0 "
            f"seconds, got {float(D[p, k])!r}"
        )
    n_arr = np.asarray([as_population(v, "N") for v in np.ravel(n)], dtype=np.int64)
    if n_arr.size == 0:
        raise InvalidModelError("N is empty: give at least one population, e.g. N=range(1, 65)")
    delay = np.zeros(K, bool) if is_delay is None else np.asarray(is_delay)
    if delay.shape != (K,) or delay.dtype != np.bool_:
        raise InvalidModelError(
            f"is_delay must be {K} booleans (one per station), got {is_delay!r}"
        )
    rates: tuple = (None,) * K
    if template is not None:
        delay, m, rates = _template_arrays(template, K, methods)
        servers = m
    m = np.ones(K, np.int64) if servers is None else np.asarray(servers)
    if (
        m.shape != (K,)
        or m.dtype.kind not in "iuf"
        or not np.all(np.isfinite(m))
        or np.any(m != np.floor(m))
        or np.any(m < 1)
    ):
        raise InvalidModelError(
            f"servers must be {K} integers >= 1 (one per station), got {servers!r}"
        )
    m = m.astype(np.int64)
    try:
        Z = np.broadcast_to(np.asarray(think_time, dtype=np.float64), (P,))
    except ValueError:
        raise InvalidModelError(
            f"think_time must be one value or {P} (one per grid point), "
            f"got shape {np.shape(think_time)}"
        ) from None
    badz = ~np.isfinite(Z) | (Z < 0)
    if badz.any():
        p = int(np.flatnonzero(badz)[0])
        raise InvalidModelError(
            f"think_time at grid point {p} must be finite and >= 0 seconds, got {float(Z[p])!r}"
        )
    for meth in methods:
        if meth not in METHODS:
            raise InvalidModelError(f"methods must be a subset of {METHODS}, got {meth!r}")
    # the result columns (about 16 float64 tables of points x populations, with the MVA's
    # working rows): refuse before allocating past the memory limit
    check_memory(
        8.0 * 16 * P * n_arr.size,
        f"a what-if grid of {P} points x {n_arr.size} populations",
        "solve fewer points or populations at a time, or raise the limit",
    )
    q = ~delay
    ld = np.array([r is not None for r in rates], dtype=bool)
    peak = np.array([float(r.max()) if r is not None else float(m[k]) for k, r in enumerate(rates)])
    # a rate curve's least time per job, D min_j j / r(j), is the lone job's lower bound
    least = np.array([1.0 if r is None else float((np.arange(1.0, r.size + 1) / r).min())
                      for r in rates])  # fmt: skip
    per_server = np.where(q[None, :], D / peak[None, :], -1.0)
    out: dict[str, np.ndarray] = {"bottleneck": np.argmax(per_server, axis=1)}
    Dq = np.where(q[None, :], D * least[None, :], 0.0).sum(axis=1)
    Ddelay = np.where(delay[None, :], D, 0.0).sum(axis=1)
    idle = Dq + Ddelay + Z <= 0
    if idle.any():
        p = int(np.flatnonzero(idle)[0])
        raise InvalidModelError(
            f"at grid point {p} every demand and the think time are zero: throughput is "
            "unbounded; give at least one station a demand > 0"
        )
    Kq = max(int(q.sum()), 1)
    Dmax = np.maximum(per_server.max(axis=1), 0.0)
    nn = n_arr.astype(np.float64)[None, :]
    col = (slice(None), None)
    if "aba" in methods:
        arrays = aba_from_aggregates(nn, Dq[col], Dmax[col], Z[col], Ddelay[col])
        out.update(zip(RESULT_COLUMNS["aba"], arrays, strict=True))
    if "bjb" in methods:
        if np.any(m[q] > 1) or ld.any():
            nan = np.full((P, n_arr.size), np.nan)
            out.update((c, nan) for c in RESULT_COLUMNS["bjb"])
        else:
            arrays = bjb_from_aggregates(
                nn, Dq[col], Dmax[col], (Dq / Kq)[col], Z[col], Ddelay[col]
            )
            out.update(zip(RESULT_COLUMNS["bjb"], arrays, strict=True))
    if "mva" in methods:
        if np.any(m[q] > 1) or ld.any():
            X, R = _mva_per_point(D, delay, m, Z, n_arr, template)
        else:
            X, R = _mva_vectorised(D, delay, Z, n_arr)
        out["throughput_mva"] = X
        out["response_time_mva"] = R
    return out


def _mva_vectorised(D, delay, Z, n_arr):
    kept, where = np.unique(n_arr, return_inverse=True)
    X, R, *_ = exact(D, np.where(delay[None, :], 0.0, D), Z, kept, per_station=False)
    if kept.size == n_arr.size and np.array_equal(kept, n_arr):
        return X, R  # sorted, no repeats: the columns are already in order
    return X[:, where], R[:, where]


def _template_arrays(template: Network, K: int, methods) -> tuple:
    """(is_delay, servers, rate curves) of a template network, after refusing what the grid's
    solvers do not take."""
    if not isinstance(template, Network) or not template.single:
        raise InvalidTypeError("template must be a Network without classes")
    if template.K != K:
        raise InvalidModelError(f"template has {template.K} stations; the demands have {K}")
    cm = template.compiled
    if "mva" in methods:
        require(cm, "mva")
    if "aba" in methods or "bjb" in methods:
        require(cm, "bounds_aba")
    return np.array(cm.is_delay), np.array(cm.servers), cm.rates


def _mva_per_point(D, delay, m, Z, n_arr, template=None):
    P, K = D.shape
    N = int(n_arr.max())
    X = np.empty((P, n_arr.size))
    R = np.empty((P, n_arr.size))
    if template is None:
        kinds = ["delay" if d else "queue" for d in delay]
        template = Network.from_demands([0.0] * K, 0.0, [f"s{k}" for k in range(K)], kinds,
                                        list(m))  # fmt: skip
    for p in range(P):
        net = Network(
            tuple(s.replace(demand=float(D[p, k])) for k, s in enumerate(template.stations)),
            think_time=float(Z[p]),
        )
        res = _mva_one(net, N)
        X[p] = res.throughput[n_arr - 1]
        R[p] = res.response_time[n_arr - 1]
    return X, R


def _solve_chunk(args):
    D, n, Z, delay, m, methods, template = args
    return solve_grid(D, n, Z, delay, m, methods, template=template)


def _is_dask_client(executor: Any) -> bool:
    """A Dask ``distributed.Client`` or alike: ``map`` gives futures, ``gather`` fetches them."""
    return callable(getattr(executor, "gather", None)) and callable(
        getattr(executor, "scatter", None)
    )


def executor_map(executor: Any, fn: Callable, *iterables: Iterable) -> list:
    """``[fn(*args) for args in zip(*iterables)]`` computed through ``executor``, in order.

    Two kinds of executor are accepted, told apart by duck typing (Dask is
    never imported here):

    * anything whose ``map`` returns the results, as
      :class:`concurrent.futures.Executor` does (thread and process pools,
      ``dask.distributed.Client.get_executor()``);
    * a Dask ``distributed.Client`` (it has ``map``, ``gather`` and
      ``scatter``): ``client.map`` returns one future per call, submitted
      with ``pure=False`` (no hashing of the arguments, every call runs), and
      ``client.gather`` collects the results in order. A failed task raises
      its exception here.

    Parameters
    ----------
    executor : object with ``map``
        The executor, or ``None`` to compute in this process with the
        built-in :func:`map`.
    fn : callable
        A module-level function (executors that use other processes or
        machines pickle it).
    *iterables
        Argument sequences, consumed into lists first (Dask needs lengths).

    Returns
    -------
    list
        The results in the order of the arguments.
    """
    args = [list(it) for it in iterables]
    if executor is None:
        return list(map(fn, *args))
    if _is_dask_client(executor):
        return list(executor.gather(executor.map(fn, *args, pure=False)))
    return list(executor.map(fn, *args))


# --------------------------------------------------------------------------------------------
# Grids and systems
# --------------------------------------------------------------------------------------------
def _axis(name: str, values: Any) -> list:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        return [values]
    vals = list(values)
    if not vals:
        raise InvalidModelError(f"grid {name!r} is empty: give at least one value")
    return vals


def _structure(net: Network):
    """(names, is_delay, servers, template): the grid's stations, and the network whose
    stations carry what the demands do not (rate curves, disciplines, laws)."""
    net = net if net.single else net.class_network(0)
    return (net.names, np.asarray(net.is_delay, bool), np.asarray(net.servers, np.int64), net)


def _grid_for_demand_system(system, axes: dict[str, list], points: np.ndarray):
    """Demands (P, K) for a system with ``demand_grid`` (e.g. NetworkedRAID)."""
    # Validate each axis value once (units parsed) with the system's own field checker;
    # combinations (e.g. raid1 needs stripe_width 2) are checked by demand_grid.
    normalise = getattr(system, "normalise", None)
    si: dict[str, list] = {}
    for name, vals in axes.items():
        conv = []
        for v in vals:
            if callable(normalise):
                conv.append(normalise(name, v))
                continue
            try:
                changed = system.replace(**{name: v})
            except TypeError as exc:
                raise InvalidTypeError(f"grid {name!r}: {exc}") from None
            conv.append(getattr(changed, _canonical(system, name)))
        si[name] = conv
    categorical = [k for k, v in si.items() if any(isinstance(x, str) for x in v)]
    numeric = [k for k in si if k not in categorical]
    base_net = system.network()
    names, delay, m, template = _structure(base_net)
    D = np.empty((points.shape[0], len(names)))
    # One vectorised call per combination of categorical values.
    cat_idx = [list(axes).index(k) for k in categorical]
    if categorical:
        keys = points[:, cat_idx]
        combos = np.unique(keys, axis=0)
    else:
        combos = np.zeros((1, 0), dtype=np.int64)
    for combo in combos:
        sel = np.all(points[:, cat_idx] == combo, axis=1) if categorical else slice(None)
        kw = {k: si[k][int(c)] for k, c in zip(categorical, combo, strict=True)}
        for k in numeric:
            j = list(axes).index(k)
            kw[k] = np.asarray(si[k], dtype=np.float64)[points[sel, j]]
        grid = system.demand_grid(**kw)
        count = int(np.count_nonzero(sel)) if categorical else points.shape[0]
        D[sel] = np.column_stack([np.broadcast_to(grid[s], (count,)) for s in names])
    return D, names, delay, m, si, template


def _canonical(system, name: str) -> str:
    fn = getattr(system, "field_name", None)
    return fn(name) if callable(fn) else name


def _grid_for_network(net: Network, axes: dict[str, list], points: np.ndarray):
    names, delay, m, template = _structure(net)
    D = np.broadcast_to(net.demands, (points.shape[0], net.K)).copy()
    si: dict[str, list] = {}
    for j, (name, vals) in enumerate(axes.items()):
        if name not in names:
            raise InvalidModelError(
                f"grid {name!r} is not a station of the network; stations are {list(names)} "
                "(and think_time)"
            )
        si[name] = [as_quantity(v, f"grid {name!r}", "time") for v in vals]
        D[:, names.index(name)] = np.asarray(si[name])[points[:, j]]
    return D, names, delay, m, si, template


def _grid_for_factory(factory: Callable, axes: dict[str, list], points: np.ndarray, executor):
    keys = list(axes)
    kw_list = [{k: axes[k][int(i)] for k, i in zip(keys, row, strict=True)} for row in points]
    nets = executor_map(executor, _call_factory, itertools.repeat(factory, len(kw_list)), kw_list)
    first = nets[0]
    names, delay, m, template = _structure(first)
    for i, net in enumerate(nets):
        if _structure(net)[0] != names or not (
            np.array_equal(net.is_delay, delay) and np.array_equal(net.servers, m)
        ):
            raise InvalidModelError(
                f"the factory's networks differ in structure: point {kw_list[i]} gives stations "
                f"{list(net.names)}, the first point {list(names)}; a sweep needs one shape"
            )
    D = np.array([net.demands for net in nets])
    Z = np.array([net.think_time for net in nets])
    si = {k: list(v) for k, v in axes.items()}
    return D, names, delay, m, si, Z, template


def _call_factory(factory, kw):
    obj = factory(**kw)
    if isinstance(obj, Network):
        return obj
    if hasattr(obj, "network"):
        return obj.network()
    raise InvalidTypeError(
        f"the factory must return a Network or an object with .network(), got {type(obj).__name__}"
    )


def sweep(
    system_or_factory: Any,
    N: int | Iterable[int] = range(1, 65),
    *,
    methods: Sequence[str] = METHODS,
    executor: Any = None,
    chunk_size: int = 20_000,
    **grids: Any,
) -> pandas.DataFrame:
    """Bounds and exact MVA over every combination of parameter values: a tidy DataFrame.

    Parameters
    ----------
    system_or_factory : NetworkedRAID, Network or callable
        * An object with ``replace(**changes)``, ``demand_grid(**arrays)`` and
          ``network()`` (such as :class:`~qnmodel.models.storage.NetworkedRAID`):
          grid keys are its parameters (readable names or paper symbols);
          demands of the whole grid come from one vectorised call.
        * A :class:`~qnmodel.model.network.Network`: grid keys are station names
          (their demand, seconds or time strings) and ``think_time``.
        * A callable ``factory(**point) -> Network`` (or an object with
          ``.network()``): called once per grid point (through ``executor`` if
          given); the networks must share their stations.
    N : int or iterable of int
        Populations: an int N means 1..N; default ``range(1, 65)``.
    methods : subset of {"aba", "bjb", "mva"}
        What to compute; default all three.
    executor : object with ``map``, optional
        A ``concurrent.futures`` executor, or a Dask ``distributed.Client``
        passed as it is (``executor=client``: its futures are gathered, see
        :func:`executor_map`). The grid is cut into chunks of ``chunk_size``
        points, each solved by one task (a factory is then also called
        through the executor, one task per point); without an executor the
        grid is solved in this process, in vectorised chunks whose working
        memory is bounded (:data:`IN_PROCESS_CHUNK_BYTES`), so only the
        result has to fit in memory. Results are identical either way.
    chunk_size : int
        Grid points per chunk when an executor is given (>= 1).
    **grids
        Parameter -> value or sequence of values. ``think_time`` (seconds or
        a time string) is always accepted. A scalar is a one-value axis.

    Returns
    -------
    pandas.DataFrame
        One row per grid point and n; columns are described in the module
        docstring. Point order follows :func:`itertools.product` of the
        grids in the order given (the first key varies slowest), then n.

    Examples
    --------
    >>> from qnmodel.models.storage import NetworkedRAID
    >>> df = sweep(NetworkedRAID.cui2006(), N=[1, 32],
    ...            link_rate=["100 Mbit/s", "1 Gbit/s"])
    >>> df.shape
    (4, 13)
    >>> df.groupby("link_rate")["bottleneck"].first().tolist()
    ['link_out', 'disk']
    """
    chunk_size = as_population(chunk_size, "chunk_size")
    if executor is not None and not hasattr(executor, "map"):
        raise InvalidTypeError(
            "executor must have a map method (concurrent.futures, Dask), got "
            f"{type(executor).__name__}"
        )
    axes, si, points, n_arr, D, Z, delay, m, names, methods, template = _prepare_sweep(
        system_or_factory, N, methods, executor, grids
    )
    P = points.shape[0]
    if executor is not None:
        # Solve in chunks through the executor, one task per chunk.
        tasks = [
            (D[s : s + chunk_size], n_arr, Z[s : s + chunk_size], delay, m, methods, template)
            for s in range(0, P, chunk_size)
        ]
        parts = executor_map(executor, _solve_chunk, tasks)
        if len(parts) == 1:
            res = parts[0]
        else:
            res = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    else:
        res = _solve_in_process(D, n_arr, Z, delay, m, methods, template)
    return _frame(axes, si, points, n_arr, res, names, methods)


#: bytes of working memory a chunk of the in-process sweep may use (its result columns, about
#: 16 float64 tables of points x populations with the MVA's working rows, see solve_grid)
IN_PROCESS_CHUNK_BYTES = 64 * 2**20


def _solve_in_process(D, n_arr, Z, delay, m, methods, template) -> dict[str, np.ndarray]:
    """:func:`solve_grid` over the whole grid in chunks whose working memory is bounded by
    :data:`IN_PROCESS_CHUNK_BYTES`, written into the result columns allocated once: the peak is
    the result plus one chunk, so a grid whose working set alone would pass the memory limit
    (10^7 points) streams through instead of being refused. The result columns themselves are
    checked against the limit first."""
    P, L = D.shape[0], n_arr.size
    step = max(1, int(IN_PROCESS_CHUNK_BYTES // (8.0 * 16 * L)))
    if step >= P:
        return solve_grid(D, n_arr, Z, delay, m, methods, template=template)
    cols = [c for meth in METHODS if meth in methods for c in RESULT_COLUMNS[meth]]
    check_memory(
        8.0 * P * (len(cols) * L + 1),
        f"the results of a what-if grid of {P} points x {L} populations",
        "solve fewer points or populations at a time (sweep a part of the grid per call), "
        "or raise the limit",
    )
    res: dict[str, np.ndarray] = {}
    for s in range(0, P, step):
        part = solve_grid(D[s : s + step], n_arr, Z[s : s + step], delay, m, methods,
                          template=template)  # fmt: skip
        if not res:
            res = {k: np.empty((P, *v.shape[1:]), dtype=v.dtype) for k, v in part.items()}
        for k, v in part.items():
            res[k][s : s + step] = v
    return res


def _prepare_sweep(system_or_factory: Any, N: Any, methods: Sequence[str], executor: Any, grids):
    """Validate a sweep's arguments and build its grid: the part of :func:`sweep` shared with
    :func:`qnmodel.whatif.distributed.sweep_distributed`. Returns ``(axes, si, points, n_arr,
    D, Z, delay, m, names, methods, template)``."""
    if isinstance(N, int | np.integer) and not isinstance(N, bool):
        n_arr = np.arange(1, as_population(N, "N") + 1)
    else:
        if isinstance(N, str) or not isinstance(N, Iterable):
            raise InvalidTypeError(f"N must be an int or an iterable of ints, got {N!r}")
        n_arr = np.asarray([as_population(v, "N") for v in N], dtype=np.int64)
        if n_arr.size == 0:
            raise InvalidModelError("N is empty: give at least one population")
    methods = tuple(methods)
    if not methods:
        raise InvalidModelError(f"methods is empty; choose from {METHODS}")
    for meth in methods:
        if meth not in METHODS:
            raise InvalidModelError(f"methods must be a subset of {METHODS}, got {meth!r}")
    think = grids.pop("think_time", None)
    axes = {k: _axis(k, v) for k, v in grids.items()}
    if think is not None:
        axes["think_time"] = [
            as_quantity(v, "grid 'think_time'", "time") for v in _axis("think_time", think)
        ]
    shape = [len(v) for v in axes.values()]
    P = math.prod(shape)
    points = (
        np.indices(shape).reshape(len(shape), -1).T if axes else np.zeros((1, 0), dtype=np.int64)
    )
    sys_axes = {k: v for k, v in axes.items() if k != "think_time"}
    sys_points = points[:, [list(axes).index(k) for k in sys_axes]]
    Z = None
    obj = system_or_factory
    if hasattr(obj, "demand_grid") and hasattr(obj, "replace"):
        D, names, delay, m, si, template = _grid_for_demand_system(obj, sys_axes, sys_points)
    elif isinstance(obj, Network):
        D, names, delay, m, si, template = _grid_for_network(obj, sys_axes, sys_points)
        Z = np.full(P, obj.think_time)
    elif callable(obj):
        D, names, delay, m, si, Z, template = _grid_for_factory(obj, sys_axes, sys_points,
                                                                executor)  # fmt: skip
    else:
        raise InvalidTypeError(
            "system_or_factory must be a NetworkedRAID-like system, a Network or a callable "
            f"returning a Network, got {type(obj).__name__}"
        )
    if Z is None:
        Z = np.zeros(P)
    if "think_time" in axes:
        Z = np.asarray(axes["think_time"])[points[:, list(axes).index("think_time")]]
        si["think_time"] = axes["think_time"]

    return axes, si, points, n_arr, D, Z, delay, m, names, methods, template


def _per_row(values: np.ndarray, L: int) -> np.ndarray:
    """Each of P values repeated L times (row-major P x L), faster than np.repeat."""
    return np.broadcast_to(values[:, None], (values.shape[0], L)).reshape(-1)


def _frame(axes, si, points, n_arr, res, names, methods) -> pandas.DataFrame:
    import pandas as pd  # imported on use: `import qnmodel` stays light

    P, L = points.shape[0], n_arr.size
    cols: dict[str, Any] = {}
    for j, name in enumerate(axes):
        vals = si[name]
        if any(isinstance(v, str) for v in vals):
            cats = list(dict.fromkeys(vals))
            codes = np.asarray([cats.index(v) for v in vals])[points[:, j]]
            cols[name] = pd.Categorical.from_codes(_per_row(codes, L), categories=cats)
        else:
            cols[name] = _per_row(np.asarray(vals)[points[:, j]], L)
    cols["n"] = np.broadcast_to(n_arr[None, :], (P, L)).reshape(-1)
    for meth in METHODS:
        if meth in methods:
            for c in RESULT_COLUMNS[meth]:
                cols[c] = res[c].reshape(-1)
    cols["bottleneck"] = pd.Categorical.from_codes(
        _per_row(res["bottleneck"], L), categories=list(names)
    )
    return pd.DataFrame(cols, copy=False)
