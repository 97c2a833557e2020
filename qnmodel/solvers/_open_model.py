"""Reading a network object for the open and mixed solvers: a Network (one open class)
or a multi-class network compiled to arrays, and the arrival rates of a call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_population, as_quantity
from ..errors import InvalidModelError, InvalidTypeError

__all__ = ["Model", "as_multipliers", "network_model"]


def as_multipliers(values: Any, name: str) -> np.ndarray:
    """Rate multipliers r(1..L) of a load-dependent station: non-empty, finite, > 0."""
    if isinstance(values, str | bytes | Mapping):
        raise InvalidTypeError(f"{name} must be a sequence of numbers, got {values!r}")
    try:
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InvalidTypeError(f"{name} must be a sequence of numbers, got {values!r}") from None
    if arr.size == 0:
        raise InvalidModelError(f"{name} is empty: give the rate multiplier r(1), r(2), ...")
    bad = ~np.isfinite(arr) | (arr <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidModelError(f"{name}[{i}] must be finite and > 0, got {float(arr[i])!r}")
    return arr


@dataclass(frozen=True)
class Model:
    """The arrays a network object compiles to (C classes x K stations)."""

    D: np.ndarray  # (C, K)
    names: tuple[str, ...]
    class_names: tuple[str, ...]
    delay: np.ndarray  # (K,)
    servers: np.ndarray  # (K,)
    multipliers: tuple  # (K,) None or float64 array
    is_open: np.ndarray  # (C,)
    population: np.ndarray  # (C,)
    think_time: np.ndarray  # (C,)
    arrival_rate: np.ndarray  # (C,)
    single: bool  # a single-class Network


def _station_multipliers(net: Any, K: int) -> tuple:
    rm = getattr(net, "rate_multipliers", None)
    if rm is None:
        stations = getattr(net, "stations", ())
        rm = tuple(getattr(s, "rate_multipliers", None) for s in stations) or (None,) * K
    out = []
    names = getattr(net, "names", [f"s{k}" for k in range(K)])
    for k, r in enumerate(rm):
        out.append(
            None if r is None else as_multipliers(r, f"Station {names[k]!r}: rate_multipliers")
        )
    return tuple(out)


def network_model(net: Any) -> Model:
    """Compile a :class:`~qnmodel.model.network.Network` (one class, open) or a multi-class
    network (attributes ``demands`` (C, K), ``is_open``, ``population``, ...) to arrays.

    A fork-join element (anything with ``.branches``) is refused: no product-form
    solution exists for it.
    """
    for s in getattr(net, "stations", ()):
        if getattr(s, "branches", None) is not None:
            raise InvalidModelError(
                f"station {getattr(s, 'name', s)!r} is a fork-join element: the open and "
                "mixed solvers handle product-form stations only; use the fork-join solver"
            )
    if not hasattr(net, "demands") or not hasattr(net, "names"):
        raise InvalidTypeError(
            f"net must be a Network or a MultiClassNetwork, got {type(net).__name__}"
        )
    D = np.asarray(net.demands, dtype=np.float64)
    names = tuple(net.names)
    delay = np.asarray(net.is_delay, dtype=bool)
    servers = np.asarray(net.servers, dtype=np.int64)
    if D.ndim == 1:  # single-class Network: an open class (its think time is not used)
        K = D.size
        return Model(
            D=D[None, :],
            names=names,
            class_names=("class0",),
            delay=delay,
            servers=servers,
            multipliers=_station_multipliers(net, K),
            is_open=np.ones(1, dtype=bool),
            population=np.zeros(1, dtype=np.int64),
            think_time=np.zeros(1),
            arrival_rate=np.zeros(1),
            single=True,
        )
    C, K = D.shape
    return Model(
        D=D,
        names=names,
        class_names=tuple(getattr(net, "class_names", [f"class{c}" for c in range(C)])),
        delay=delay,
        servers=servers,
        multipliers=_station_multipliers(net, K),
        is_open=np.asarray(net.is_open, dtype=bool),
        population=np.asarray(net.population, dtype=np.int64),
        think_time=np.asarray(net.think_time, dtype=np.float64).reshape(-1) * np.ones(C),
        arrival_rate=np.asarray(getattr(net, "arrival_rate", np.zeros(C)), dtype=np.float64),
        single=False,
    )


def export_classes(net: Any, population: Any = None) -> tuple[Model, np.ndarray, np.ndarray,
                                                             np.ndarray, np.ndarray]:  # fmt: skip
    """The compiled model of ``net`` and its class vectors for a model-exchange writer (JMVA,
    LINE JSON): ``(model, is_open, population, arrival_rate, think_time)`` as new arrays.

    A single-class :class:`~qnmodel.model.network.Network` is one closed class of ``population``
    jobs (required then) with the network's think time; ``population`` is refused for a
    multi-class network (its classes carry their own).
    """
    m = network_model(net)
    is_open, pop = m.is_open.copy(), m.population.copy()
    lam, Z = m.arrival_rate.copy(), m.think_time.copy()
    if m.single:
        if population is None:
            raise InvalidModelError("population is required to export a single-class Network")
        is_open[:] = False
        pop[:] = as_population(population, "population")
        Z[:] = float(net.think_time)
    elif population is not None:
        raise InvalidModelError("population applies to a single-class Network only")
    return m, is_open, pop, lam, Z


def _rate(value: Any, name: str) -> float:
    return as_quantity(value, name, "frequency")


def _class_rates(model: Model, arrival_rate: Any, net: Any = None) -> np.ndarray:
    """The (C,) vector of arrival rates from None, a mapping, or a sequence (a
    MultiClassNetwork's own ``arrival_rate_vector`` when there is one)."""
    if hasattr(net, "arrival_rate_vector"):
        return np.asarray(net.arrival_rate_vector(arrival_rate), dtype=np.float64)
    C = model.is_open.size
    lam = np.where(model.is_open, model.arrival_rate, 0.0).astype(np.float64)
    open_idx = np.flatnonzero(model.is_open)
    if arrival_rate is None:
        return lam
    if isinstance(arrival_rate, Mapping):
        for key, v in arrival_rate.items():
            if key not in model.class_names:
                raise InvalidModelError(
                    f"arrival_rate names class {key!r}; classes are {list(model.class_names)}"
                )
            c = model.class_names.index(key)
            if not model.is_open[c]:
                raise InvalidModelError(
                    f"arrival_rate[{key!r}]: class {key!r} is closed; only open classes "
                    "take an arrival rate"
                )
            lam[c] = _rate(v, f"arrival_rate[{key!r}]")
        return lam
    if isinstance(arrival_rate, str) or np.ndim(arrival_rate) == 0:
        if open_idx.size != 1:
            raise InvalidModelError(
                f"arrival_rate is the single value {arrival_rate!r} but the network has "
                f"{open_idx.size} open classes: give a mapping {{class: rate}} or a sequence"
            )
        lam[open_idx[0]] = _rate(arrival_rate, "arrival_rate")
        return lam
    vals = list(arrival_rate)
    if len(vals) == C:
        for c, v in enumerate(vals):
            x = _rate(v, f"arrival_rate[{c}]")
            if not model.is_open[c] and x != 0.0:
                raise InvalidModelError(
                    f"arrival_rate[{c}] = {v!r} but class {model.class_names[c]!r} is closed"
                )
            lam[c] = x
        return lam
    if len(vals) == open_idx.size:
        for i, (c, v) in enumerate(zip(open_idx, vals, strict=True)):
            lam[c] = _rate(v, f"arrival_rate[{i}]")
        return lam
    raise InvalidModelError(
        f"arrival_rate has {len(vals)} entries; give one per class ({C}) or one per open "
        f"class ({open_idx.size})"
    )


def _sweep_rates(arrival_rate: Any) -> np.ndarray:
    """One rate or a 1-D sequence of rates (numbers or unit strings) as float64 (P,)."""
    if isinstance(arrival_rate, Mapping):
        raise InvalidTypeError(
            "arrival_rate is a mapping but the network has a single class: give a rate "
            "or a sequence of rates"
        )
    if isinstance(arrival_rate, str) or np.ndim(arrival_rate) == 0:
        return np.array([_rate(arrival_rate, "arrival_rate")])
    if isinstance(arrival_rate, np.ndarray) and arrival_rate.dtype.kind in "iuf":
        arr = np.asarray(arrival_rate, dtype=np.float64)
        if arr.ndim != 1 or arr.size == 0:
            raise InvalidModelError(
                f"arrival_rate must be a number or a non-empty 1-D array, got shape {arr.shape}"
            )
        bad = ~np.isfinite(arr) | (arr < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidModelError(
                f"arrival_rate[{i}] must be finite and >= 0, got {float(arr[i])!r}"
            )
        return arr.copy()
    vals = [_rate(v, f"arrival_rate[{i}]") for i, v in enumerate(arrival_rate)]
    if not vals:
        raise InvalidModelError("arrival_rate is empty: give at least one rate")
    return np.asarray(vals, dtype=np.float64)
