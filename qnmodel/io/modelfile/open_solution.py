"""Solving an open model file (``[model] arrival_rate``): the open product-form solver."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .solution import _document, _station_entry
from .spec import ModelSpec

__all__ = ["OpenModelSolution", "solve_open"]


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
        import pandas as pd

        r = self.result
        cols: dict[str, Any] = {
            "arrival_rate": r.arrival_rate.copy(),
            "throughput": r.throughput,
            "response_time": r.response_time,
        }
        for k, name in enumerate(r.station_names):
            cols[f"utilization_{name}"] = r.utilization[:, k]
        return pd.DataFrame(cols)

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
    from ...solvers.open import open_network

    result = open_network(spec.network, spec.arrival_rates, unstable="inf")
    return OpenModelSolution(spec=spec, result=result)
