"""``qnmodel solve --target``: the capacity questions answered for a model file."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidModelError
from ..io import modelfile
from ..reporting.report import fmt_g, fmt_time
from ..solvers.capacity import best_upgrade, max_arrival_rate, max_population, min_servers
from ..solvers.groups import find_groups
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

    Closed models are asked at their largest population. Open models are asked at the
    largest listed arrival rate at which the system is stable (``workload`` says which,
    and how many listed rates are not); when none is, at the largest rate, where the
    upgrades with a finite value are those that make it stable. The fewest servers (or
    devices, for a rate curve) are at the bottleneck station, or its symmetric group.
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
    groups = spec.groups if spec.groups is not None else "auto"
    out: dict[str, Any] = {"target": str(tgt), "metric": tgt.label}
    if spec.is_open:
        from ..solvers.open import open_network

        zero = open_network(net, 0.0)
        lam, out["workload"] = _open_workload(spec.arrival_rates, zero.saturation_arrival_rate)
        workload = {"arrival_rate": lam}
        if tgt.is_response_time:
            out["max_arrival_rate"] = _or_reason(lambda: max_arrival_rate(net, tgt))
        bottleneck = zero.bottleneck
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
    group = next((g for g in find_groups(net, groups) if bottleneck in g.members), None)
    in_group = group is not None and (group.size > 1 or group.explicit)
    out["bottleneck_group"] = group.label if in_group else None
    # an array is sized in members, a device with a rate curve in copies of it
    count = "devices" if st.rate_multipliers is not None or out["bottleneck_group"] else "servers"
    out["min_servers_count"] = count
    out["min_servers"] = _or_reason(
        lambda: min_servers(
            net, bottleneck, tgt, max_servers=MAX_SERVERS, count=count, groups=groups, **workload
        )
    )
    if tgt.is_response_time:
        if spec.storage_model is not None:
            up = best_upgrade(spec.storage_model, target=tgt, **workload)
        else:
            up = best_upgrade(net, target=tgt, groups=groups, **workload)
        out["baseline"] = float(up.baseline_response_time)
        out["speedup"] = up.speedup
        out["upgrades"] = [
            {
                "option": o,
                "value": float(v),
                "response_time_ratio": float(r),
                "meets_target": bool(m),
            }  # fmt: skip
            for o, v, r, m in zip(
                up.options,
                up.response_time,
                up.response_time_ratio,
                up.meets_target,
                strict=True,
            )
        ]
    return out


def _open_workload(rates: Any, saturation: float) -> tuple[float, dict]:
    """The rate the questions are asked at: the largest listed rate below saturation, or
    (none is) the largest listed rate, and the record of that choice."""
    rates = np.asarray(rates, dtype=np.float64)
    stable = rates[rates < saturation]
    lam = float(np.max(stable)) if stable.size else float(np.max(rates))
    w: dict[str, Any] = {"arrival_rate": lam, "saturation_arrival_rate": float(saturation)}
    w["listed_rates"] = int(rates.size)
    w["unstable_rates"] = int(rates.size - stable.size)
    w["stable"] = bool(stable.size)
    return lam, w


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
    if "arrival_rate" in w:
        lines += _open_workload_text(w)
    lines.append(f"  {_min_servers_question(ans)} (at {at}): " + show(ans["min_servers"], str))
    if "upgrades" in ans:
        lines.append(
            f"  single upgrades at {at}, ranked by {metric} "
            f"(now {_fmt_value(ans['baseline'], metric)}):"
        )
        stable = [u for u in ans["upgrades"] if np.isfinite(u["value"])]
        rows = [
            [u["option"], _fmt_value(u["value"], metric), "yes" if u["meets_target"] else "no"]
            for u in stable
        ]
        if rows:
            table = _text_table(["upgrade", metric, "meets target"], rows)
            lines += ["    " + line for line in table.rstrip().splitlines()]
        left = [u["option"] for u in ans["upgrades"] if not np.isfinite(u["value"])]
        if left:
            head = "no single upgrade makes it stable" if not rows else "still unstable with"
            lines.append(f"    {head}: " + "; ".join(left))
    return "\n".join(lines) + "\n"


def _open_workload_text(w: dict) -> list[str]:
    lam, sat = fmt_g(w["arrival_rate"]), fmt_g(w["saturation_arrival_rate"])
    n, bad = w["listed_rates"], w["unstable_rates"]
    if not w["stable"]:
        return [
            f"  no listed arrival rate is stable (saturation {sat} jobs/s): the questions "
            f"below are asked at the largest, {lam} jobs/s -- what makes it stable"
        ]
    if bad:
        return [
            f"  asked at {lam} jobs/s, the largest of the {n} listed rates below saturation "
            f"({sat} jobs/s; {bad} listed rate{'s are' if bad > 1 else ' is'} above it)"
        ]
    return []


def _min_servers_question(ans: dict) -> str:
    what = "devices" if ans["min_servers_count"] == "devices" else "servers"
    group = ans.get("bottleneck_group")
    if group is None:
        where = f"the bottleneck {ans['bottleneck']!r}"
        return (
            f"fewest {what} at {where}"
            if what == "servers"
            else (
                f"fewest devices like the bottleneck {ans['bottleneck']!r} (each with its rate "
                "curve, sharing the load)"
            )
        )
    if what == "servers":
        return f"fewest servers in each member of the bottleneck group {group!r}"
    return f"fewest members of the bottleneck group {group!r}"
