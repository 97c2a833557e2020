"""``qnmodel solve --target``: the capacity questions answered for a model file."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidModelError
from ..io import modelfile
from ..reporting.report import fmt_g, fmt_time
from ..solvers.capacity import best_upgrade, max_arrival_rate, max_population, min_servers
from ..solvers.response_laws import response_time_law
from ..solvers.targets import as_target
from ._output import UsageError, _text_table

#: search limit of ``min_servers`` from the command line
MAX_SERVERS = 1024


def _fmt_value(v: float, metric: str) -> str:
    if metric == "X":
        return f"{fmt_g(v)} jobs/s"
    return "inf (unstable)" if not np.isfinite(v) else fmt_time(v)


def capacity_answers(spec: modelfile.ModelSpec, target: Any) -> dict:
    """The answers for one target: load limit, fewest servers, ranked upgrades.

    Closed models are asked at their largest population, open models at their
    (largest) arrival rate; the fewest servers are at the bottleneck station.
    """
    if spec.is_multiclass:
        raise UsageError(
            "--target answers the capacity questions of single-class models; this one has "
            f"classes {list(spec.multiclass.class_names)}"
        )
    try:
        tgt = as_target(target, "--target")
    except InvalidModelError as exc:
        raise UsageError(str(exc)) from exc
    net = spec.network
    out: dict[str, Any] = {"target": str(tgt), "metric": tgt.label}
    if spec.is_open:
        lam = float(np.max(spec.arrival_rates))
        workload = {"arrival_rate": lam}
        out["workload"] = {"arrival_rate": lam}
        if tgt.is_response_time:
            out["max_arrival_rate"] = _or_reason(lambda: max_arrival_rate(net, tgt))
        from ..solvers.open import open_network

        bottleneck = open_network(net, 0.0).bottleneck
    else:
        N = spec.max_population
        workload = {"N": N}
        out["workload"] = {"N": N}
        if tgt.is_response_time:
            out["max_population"] = _or_reason(lambda: max_population(net, tgt))
        from ..solvers.bounds import bounds

        bottleneck = bounds(net, 1, method="aba").bottleneck
    if tgt.metric == "percentile":
        law_kw = workload if not spec.is_open else {"arrival_rate": workload["arrival_rate"]}
        try:
            out["method"] = response_time_law(net, **law_kw).method
        except InvalidModelError as exc:
            out["method"] = str(exc)
    else:
        out["method"] = "exact MVA" if not spec.is_open else "open product-form (exact means)"
    st = net.station(bottleneck)
    out["bottleneck"] = bottleneck
    if st.rate_multipliers is None:
        out["min_servers"] = _or_reason(
            lambda: min_servers(net, bottleneck, tgt, max_servers=MAX_SERVERS, **workload)
        )
    else:
        out["min_servers"] = {"error": "the bottleneck has a rate curve, not servers"}
    if tgt.is_response_time:
        model = spec.storage_model if spec.storage_model is not None else net
        up = best_upgrade(model, target=tgt, **workload)
        out["baseline"] = float(up.baseline_response_time)
        out["upgrades"] = [
            {"option": o, "value": float(v), "meets_target": bool(m)}
            for o, v, m in zip(up.options, up.response_time, up.meets_target, strict=True)
        ]
    return out


def _or_reason(fn) -> Any:
    try:
        v = fn()
    except InvalidModelError as exc:
        return {"error": str(exc)}
    return float(v) if isinstance(v, float) else int(v)


def capacity_text(ans: dict) -> str:
    """The answers as text lines under the solution table."""
    metric = ans["metric"]
    lines = [f"target {ans['target']}  ({ans['method']})"]
    w = ans["workload"]

    def show(v: Any, fmt) -> str:
        return f"none: {v['error']}" if isinstance(v, dict) else fmt(v)

    if "max_population" in ans:
        lines.append(f"  largest population meeting it: {show(ans['max_population'], str)}")
    if "max_arrival_rate" in ans:
        lines.append(
            "  largest arrival rate meeting it: "
            + show(ans["max_arrival_rate"], lambda v: f"{fmt_g(v)} jobs/s")
        )
    at = f"n = {w['N']}" if "N" in w else f"{fmt_g(w['arrival_rate'])} jobs/s"
    lines.append(
        f"  fewest servers at the bottleneck {ans['bottleneck']!r} (at {at}): "
        + show(ans["min_servers"], str)
    )
    if "upgrades" in ans:
        lines.append(
            f"  single upgrades at {at}, ranked by {metric} "
            f"(now {_fmt_value(ans['baseline'], metric)}):"
        )
        rows = [
            [u["option"], _fmt_value(u["value"], metric), "yes" if u["meets_target"] else "no"]
            for u in ans["upgrades"]
        ]
        table = _text_table(["upgrade", metric, "meets target"], rows)
        lines += ["    " + line for line in table.rstrip().splitlines()]
    return "\n".join(lines) + "\n"
