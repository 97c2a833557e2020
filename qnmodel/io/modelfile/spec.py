"""The validated model (:class:`ModelSpec`) and its solutions: bounds and exact MVA, exact
multi-class MVA, or the open solution."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import InvalidTypeError
from ...model import Network
from ...solvers import bounds as _bounds
from ...solvers import mva as _mva
from ...solvers.amva import amva
from ...solvers.mva_multiclass import mva_multiclass
from ...solvers.open import open_network
from ...solvers.support import supports

__all__ = ["ModelSpec", "ModelSolution", "MultiClassSolution", "OpenModelSolution", "solve"]


@dataclass(frozen=True, eq=False)
class ModelSpec:
    """A validated model file.

    Attributes
    ----------
    network : Network
        The compiled network (demands in seconds, think time in seconds).
    populations : ndarray of int
        Populations to report, ascending, each >= 1.
    name : str
        Model name (file stem when the file gives none).
    description : str
    source : str
        File the model was read from (``"<string>"`` for :func:`loads`).
    multiclass : Network or None
        The network with classes a file with ``[[class]]`` tables describes (the one the
        solver takes); ``None`` for a single-class file. In a multi-class file
        :attr:`network` holds the stations with, as demand, the largest over the classes
        (their kinds and servers are what matters).
    arrival_rates : ndarray or None
        ``[model] arrival_rate``: the open model's offered rate(s), jobs/s (then
        :meth:`solve` uses the open solver and ``populations`` is unused); None for a
        closed model.
    target : Target or None
        ``[model] target``: the performance target (``"R <= 50 ms"``) the capacity
        questions of ``qnmodel solve`` answer for.
    storage_model : CachedNetworkedRAID, CachedNFS or None
        A ``[system]`` described with caches: the model whose upgrades (more cache,
        a faster link, ...) the capacity questions weigh.
    groups : dict or None
        The stations' ``group = "disks"`` keys as ``{group: (station, ...)}``: symmetric
        groups the capacity questions upgrade together
        (:func:`qnmodel.solvers.groups.find_groups`); None: found automatically.
    """

    network: Network
    populations: np.ndarray
    multiclass: Network | None = None
    arrival_rates: np.ndarray | None = None
    target: Any = None
    storage_model: Any = None
    groups: dict | None = None
    name: str = "model"
    description: str = ""
    source: str = "<string>"
    document: dict = field(default_factory=dict, repr=False)
    text: str = field(default="", repr=False)

    @property
    def max_population(self) -> int:
        """Largest population N; the solvers compute the whole curve 1..N."""
        return int(self.populations[-1])

    @property
    def is_open(self) -> bool:
        """True when the file gives ``[model] arrival_rate``, or ``[[class]]`` tables with
        ``arrival_rate`` (an open model)."""
        if self.multiclass is not None:
            return bool(self.multiclass.compiled.is_open.all())
        return self.arrival_rates is not None

    @property
    def is_multiclass(self) -> bool:
        """True when the file has [[class]] tables."""
        return self.multiclass is not None

    def solve(self) -> ModelSolution | MultiClassSolution | OpenModelSolution:
        """Bounds and exact MVA (closed single class), exact multi-class MVA, or the open
        solution (``arrival_rate``): see :func:`solve`."""
        return solve(self)


def _station_entry(station, demand: Any) -> dict:
    return {"name": station.name, "demand": demand, "kind": station.kind,
            "servers": int(station.servers)}  # fmt: skip


def _document(spec: ModelSpec, model: dict, stations: list, summary: dict, rows: list) -> dict:
    """The ``qnmodel.solve`` JSON document of a solution (schema version 1)."""
    head = {"name": spec.name, "description": spec.description, "source": spec.source}
    return {
        "schema": "qnmodel.solve",
        "schema_version": 1,
        "model": {**head, **model, "stations": stations},
        "summary": summary,
        "results": rows,
    }


def _row_frame(lead: dict[str, Any], r: Any) -> Any:
    """The table of a result with one row per class or arrival rate: the ``lead`` columns,
    ``throughput`` (jobs/s), ``response_time`` (s), then ``utilization_<station>``."""
    import pandas as pd

    cols = {**lead, "throughput": r.throughput, "response_time": r.response_time}
    for k, name in enumerate(r.station_names):
        cols[f"utilization_{name}"] = r.utilization[:, k]
    return pd.DataFrame(cols)


@dataclass(frozen=True, eq=False)
class MultiClassSolution:
    """Exact multi-class MVA of a model file at its population vector, or the open
    multi-class network at its classes' arrival rates.

    Attributes
    ----------
    spec : ModelSpec
    result : MultiClassResult or OpenResult
        From :func:`qnmodel.solvers.mva_multiclass.mva_multiclass` (closed classes), or
        :func:`qnmodel.open_network` (open classes: one operating point).
    """

    spec: ModelSpec
    result: Any

    def to_frame(self) -> Any:
        """One row per class: ``class, population, think_time`` (s), ``throughput``
        (jobs/s), ``response_time`` (s), then ``utilization_<station>`` per station."""
        import pandas as pd

        mc, r = self.spec.multiclass, self.result
        if self.spec.is_open:  # one operating point: rows of the (1, C[, K]) arrays
            cols: dict[str, Any] = {"class": list(mc.class_names),
                                    "arrival_rate": r.arrival_rate[0].copy()}  # fmt: skip
            X, R, U = r.throughput[0], r.response_time[0], r.utilization[0]
        else:
            cols = {
                "class": list(mc.class_names),
                "population": np.array(mc.N),
                "think_time": np.array(mc.think_time),
            }
            X, R, U = r.throughput, r.response_time, r.utilization
        cols["throughput"], cols["response_time"] = X, R
        for k, name in enumerate(r.station_names):
            cols[f"utilization_{name}"] = U[:, k]
        return pd.DataFrame(cols)

    def summary(self) -> dict:
        """The method, the bottleneck (largest total utilisation) and its utilisation."""
        U = self.result.utilization
        total = (U[0] if self.spec.is_open else U).sum(axis=0)
        k = int(np.argmax(total))
        return {
            "method": self.result.method,
            "bottleneck": self.result.station_names[k],
            "bottleneck_utilization": float(total[k]),
            "total_throughput": float(self.result.throughput.sum()),
        }

    def to_dict(self) -> dict:
        """A JSON-ready document (schema ``qnmodel.solve``, multi-class form)."""
        net, mc = self.spec.network, self.spec.multiclass
        rows = []
        for rec in self.to_frame().to_dict(orient="records"):
            rows.append(
                {
                    k: (v if k == "class" else int(v) if k == "population" else float(v))
                    for k, v in rec.items()
                }
            )
        stations = [
            _station_entry(s, {c: float(mc.demands[i, k]) for i, c in enumerate(mc.class_names)})
            for k, s in enumerate(net.stations)
        ]
        model = {"classes": list(mc.class_names)}
        return _document(self.spec, model, stations, self.summary(), rows)


@dataclass(frozen=True, eq=False)
class ModelSolution:
    """Bounds and exact MVA of a model at its populations.

    Attributes
    ----------
    spec : ModelSpec
    mva : MVAResult
        Exact MVA for n = 1..N (N the largest population).
    aba : BoundsResult
        Asymptotic bounds for n = 1..N.
    bjb : BoundsResult or None
        Balanced job bounds for n = 1..N; ``None`` when a station has several
        servers (BJB assumes single-server stations).
    """

    spec: ModelSpec
    mva: Any
    aba: Any
    bjb: Any

    def to_frame(self) -> Any:
        """One row per requested population.

        Columns: ``n``, ``throughput`` and ``response_time`` (exact MVA; jobs/s
        and s), ``throughput_aba_lower/upper``, ``response_time_aba_lower/upper``
        and the same for ``bjb`` (omitted when BJB does not apply).
        """
        import pandas as pd

        idx = self.spec.populations - 1
        cols: dict[str, Any] = {
            "n": self.spec.populations.copy(),
            "throughput": self.mva.throughput[idx],
            "response_time": self.mva.response_time[idx],
        }
        for res in (self.aba, self.bjb):
            if res is None:
                continue
            m = res.method
            cols[f"throughput_{m}_lower"] = res.throughput_lower[idx]
            cols[f"throughput_{m}_upper"] = res.throughput_upper[idx]
            cols[f"response_time_{m}_lower"] = res.response_time_lower[idx]
            cols[f"response_time_{m}_upper"] = res.response_time_upper[idx]
        return pd.DataFrame(cols)

    def summary(self) -> dict:
        """Model-wide quantities: bottleneck, N*, saturation throughput, D, Z."""
        return {
            "bottleneck": self.aba.bottleneck,
            "n_star": float(self.aba.n_star),
            "saturation_throughput": float(self.aba.saturation_throughput),
            "total_demand": float(self.aba.total_demand),
            "think_time": float(self.spec.network.think_time),
        }

    def to_dict(self) -> dict:
        """A JSON-ready document: schema, model, summary and one record per population."""
        net = self.spec.network
        frame = self.to_frame()
        rows = [
            {k: (int(v) if k == "n" else float(v)) for k, v in rec.items()}
            for rec in frame.to_dict(orient="records")
        ]
        stations = [_station_entry(s, float(s.demand)) for s in net.stations]
        model = {"think_time": float(net.think_time)}
        return _document(self.spec, model, stations, self.summary(), rows)


def solve(spec: ModelSpec) -> ModelSolution | MultiClassSolution:
    """Solve a model file's network: ABA, BJB (single-server networks) and exact MVA.

    A multi-class model (``[[class]]`` tables) is solved by exact multi-class
    MVA at its population vector (:class:`MultiClassSolution`), or, where it is not product
    form (FCFS stations whose classes have different service times), by the Linearizer
    (approximate; the result's ``method`` says so); an open model
    (``[model] arrival_rate``) by :func:`qnmodel.open_network` at its rates
    (:class:`OpenModelSolution`).

    The solvers run once for the whole curve n = 1..N, N the largest
    requested population; :meth:`ModelSolution.to_frame` picks the rows.
    """
    if not isinstance(spec, ModelSpec):
        raise InvalidTypeError(f"spec must be a ModelSpec, got {type(spec).__name__}")
    if spec.multiclass is not None and spec.is_open:  # open classes: exact means (BCMP)
        return MultiClassSolution(spec=spec, result=open_network(spec.multiclass))
    if spec.is_open:
        return solve_open(spec)
    if spec.multiclass is not None:
        # exact MVA where the model is product form; otherwise (FCFS stations whose classes
        # have different service times) the Linearizer's approximation, labelled
        if supports(spec.multiclass.compiled, "mva_multiclass"):
            result = mva_multiclass(spec.multiclass)
        else:
            result = amva(spec.multiclass, method="linearizer")
        return MultiClassSolution(spec=spec, result=result)
    net, N = spec.network, spec.max_population
    # BJB assume load-independent single servers: none with several servers or a rate curve
    ld = net.has_multiserver or bool(net.is_load_dependent.any())
    bjb = None if ld else _bounds(net, N, method="bjb")
    return ModelSolution(spec=spec, mva=_mva(net, N), aba=_bounds(net, N, method="aba"), bjb=bjb)


@dataclass(frozen=True, eq=False)
class OpenModelSolution:
    """The open network of a model file at its arrival rate(s).

    Attributes
    ----------
    spec : ModelSpec
    result : OpenResult
        From :func:`qnmodel.open_network` (one row per arrival rate); a rate that
        saturates a station has inf response times.
    """

    spec: ModelSpec
    result: Any

    def to_frame(self) -> Any:
        """One row per arrival rate: ``arrival_rate`` (jobs/s), ``throughput``,
        ``response_time`` (s), then ``utilization_<station>``."""
        return _row_frame({"arrival_rate": self.result.arrival_rate.copy()}, self.result)

    def summary(self) -> dict:
        """Bottleneck, the saturation arrival rate and D."""
        r = self.result
        return {
            "bottleneck": r.bottleneck,
            "saturation_arrival_rate": float(r.saturation_arrival_rate),
            "total_demand": float(self.spec.network.total_demand),
        }

    def to_dict(self) -> dict:
        """A JSON-ready document (schema ``qnmodel.solve``, open form)."""
        rows = [
            {k: float(v) for k, v in rec.items()}
            for rec in self.to_frame().to_dict(orient="records")
        ]
        stations = [_station_entry(s, float(s.demand)) for s in self.spec.network.stations]
        model = {"arrival_rate": [float(x) for x in self.spec.arrival_rates]}
        return _document(self.spec, model, stations, self.summary(), rows)


def solve_open(spec: ModelSpec) -> OpenModelSolution:
    """Solve an open model file at its arrival rates (saturated rates give inf)."""
    result = open_network(spec.network, spec.arrival_rates, unstable="inf")
    return OpenModelSolution(spec=spec, result=result)
