"""Model exchange with LINE (the queueing solver of Imperial College's QORE group) in its
JSON model format.

LINE saves and loads models as JSON documents "conforming to the line-model.schema.json
specification" ([LINE]; Java ``jline.io.LineModelIO``, MATLAB ``linemodel_save``, Python
``line_solver.io.linemodel_io.save_model``). The subset written and read here::

    {"format": "line-model", "version": "1.0",
     "model": {"type": "Network", "name": "...",
       "nodes": [
         {"name": "think_time", "type": "Delay", "scheduling": "INF",
          "service": {"batch": {"type": "Exp", "params": {"lambda": 2.0}},
                      "web": {"type": "Disabled"}}},
         {"name": "disk", "type": "Queue", "scheduling": "PS", "servers": 2,
          "service": {...},
          "loadDependence": {"type": "loadDependent", "scaling": [1.0, 1.8, ...]}},
         {"name": "source", "type": "Source", "service": {"web": {"type": "Exp", ...}}},
         {"name": "sink", "type": "Sink"}],
       "classes": [{"name": "batch", "type": "Closed", "population": 10,
                    "refNode": "think_time"},
                   {"name": "web", "type": "Open"}],
       "routing": {"type": "matrix",
                   "matrix": {"batch,batch": {"think_time": {"disk": 1.0}, ...}}}}}

Writing: each station is a ``Queue`` with processor sharing (a BCMP station whose
class service times may differ; its mean values are those of qnmodel's product-form
solvers) or a ``Delay``; a demand D_ck is one exponential service of mean D_ck per visit
(``Exp`` with rate 1/D_ck; ``Disabled`` where D_ck = 0) and every class visits its
stations once, in order; a think time Z_c is a ``Delay`` node named ``think_time``
(the class's reference node); open classes enter at a ``Source`` and leave at a
``Sink``. A load-dependent station carries its rate multipliers as LINE's
``loadDependence`` scaling, written for n = 1..N (the model's closed population, as in
JMVA), so only closed models export it.

Reading: ``Queue``/``Delay`` nodes with ``Exp`` services (other distributions are
refused by name), ``Source``/``Sink``, closed and open classes and a per-class routing
matrix without class switching. Visit ratios come from the traffic equations of each
class (closed: v = v P with v = 1 at the reference node; open: visits per arrival,
v = p_source + v P), and D_ck = v_ck / lambda_ck. A ``Delay`` named ``think_time``
is read back as the think time; a scaling vector as rate multipliers.

References
----------
.. [LINE] G. Casale, "Integrated performance evaluation of extended queueing network
   models with LINE", Proc. Winter Simulation Conference 2020, 2377-2388,
   doi:10.1109/WSC48552.2020.9383988; the format: ``jline.io.LineModelIO``
   (https://line-solver.sourceforge.net/javadoc/jline/io/LineModelIO.html) and the
   ``line-solver`` Python package, ``line_solver/io/linemodel_io.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidModelError
from ..model import ClosedClass, Network, OpenClass, Station
from ._export import export_classes

__all__ = ["to_line_json", "from_line_json", "write_line_json", "read_line_json"]

#: what this writer says in LINE's JSON: the rest is refused
LINE_SAYS = {"open", "closed", "multiclass", "delay", "multiserver", "load_dependent", "ps",
             "lcfs_pr", "fcfs_class_dependent"}  # fmt: skip

THINK_NODE = "think_time"
SOURCE_NODE = "source"
SINK_NODE = "sink"
_LD_MAX_POP = 100_000


def _exp(mean: float) -> dict:
    return {"type": "Exp", "params": {"lambda": 1.0 / float(mean)}}


def to_line_json(net: Any, N: Any = None, name: str = "qnmodel") -> str:
    """The LINE JSON text of a model (:func:`write_line_json` writes it to a file;
    ``json.loads`` gives the document as a dict, e.g. for LINE's ``model_from_dict``).

    Parameters
    ----------
    net : Network
        A single-class :class:`~qnmodel.model.network.Network` is one closed class of
        ``N`` jobs (required then).
    N : int, optional
        Population of a network without classes (refused with classes: they carry theirs).
    name : str
        The model's name in the document.

    Raises
    ------
    InvalidModelError
        A single-class network without ``N``; a load-dependent station in a
        model with open classes (LINE's scaling vector is written per population).
    """
    return json.dumps(_line_doc(net, N, name), indent=2)


def _line_doc(net: Any, N: Any, name: str) -> dict:
    """The LINE JSON document of :func:`to_line_json`, as a dict."""
    m, is_open, pop, lam, Z = export_classes(net, N, "to_line_json", LINE_SAYS)
    D, (C, K) = m.D, m.D.shape
    cn = m.class_names
    clash = {THINK_NODE, SOURCE_NODE, SINK_NODE} & set(m.names)
    if clash:
        raise InvalidModelError(f"station name {sorted(clash)[0]!r} is reserved in LINE export")
    total = int(pop[~is_open].sum())
    think = bool((Z[~is_open] > 0).any())
    nodes = []
    if think:
        nodes.append(
            {
                "name": THINK_NODE,
                "type": "Delay",
                "scheduling": "INF",
                "service": {
                    cn[c]: _exp(Z[c]) if (not is_open[c] and Z[c] > 0) else {"type": "Disabled"}
                    for c in range(C)
                },
            }
        )
    for k in range(K):
        node = {
            "name": m.names[k],
            "type": "Delay" if m.delay[k] else "Queue",
            "scheduling": _SCHEDULING[m.discipline[k]],
        }
        r = m.multipliers[k]
        if not m.delay[k] and r is None and int(m.servers[k]) > 1:
            node["servers"] = int(m.servers[k])
        node["service"] = {
            cn[c]: _exp(D[c, k]) if D[c, k] > 0 else {"type": "Disabled"} for c in range(C)
        }
        if r is not None and not m.delay[k]:
            if is_open.any() or total > _LD_MAX_POP or total == 0:
                raise InvalidModelError(
                    f"station {m.names[k]!r} has rate multipliers: LINE's load-dependence "
                    "scaling is written for every population, which needs a closed model"
                )
            n = np.arange(1, total + 1)
            node["loadDependence"] = {
                "type": "loadDependent",
                "scaling": [float(x) for x in r[np.minimum(n, r.size) - 1]],
            }
        nodes.append(node)
    if is_open.any():
        nodes.append(
            {
                "name": SOURCE_NODE,
                "type": "Source",
                "service": {
                    cn[c]: _exp(1.0 / lam[c]) if is_open[c] and lam[c] > 0 else {"type": "Disabled"}
                    for c in range(C)
                },
            }
        )
        nodes.append({"name": SINK_NODE, "type": "Sink"})
    classes, matrix = [], {}
    for c in range(C):
        path = [m.names[k] for k in range(K) if D[c, k] > 0]
        if is_open[c]:
            classes.append({"name": cn[c], "type": "Open"})
            hops = [SOURCE_NODE, *path, SINK_NODE]
        else:
            if think and Z[c] > 0:
                path = [THINK_NODE, *path]
            if not path:
                raise InvalidModelError(f"closed class {cn[c]!r} has no demand and no think time")
            classes.append(
                {"name": cn[c], "type": "Closed", "population": int(pop[c]), "refNode": path[0]}
            )
            hops = [*path, path[0]]
        table: dict[str, dict[str, float]] = {}
        for a, b in zip(hops[:-1], hops[1:], strict=True):
            table.setdefault(a, {})[b] = 1.0
        matrix[f"{cn[c]},{cn[c]}"] = table
    return {
        "format": "line-model",
        "version": "1.0",
        "model": {
            "type": "Network",
            "name": name,
            "nodes": nodes,
            "classes": classes,
            "routing": {"type": "matrix", "matrix": matrix},
        },
    }


#: our disciplines as LINE's SchedStrategy names, and back
_SCHEDULING = {"FCFS": "FCFS", "PS": "PS", "LCFS-PR": "LCFSPR", "IS": "INF"}
_DISCIPLINE = {v: k for k, v in _SCHEDULING.items()}


def _mean(dist: Any, where: str) -> float | None:
    """Mean of a LINE service entry: None for Disabled; Exp only."""
    if not isinstance(dist, dict) or "type" not in dist:
        raise InvalidModelError(f"LINE {where}: expected a distribution object, got {dist!r}")
    kind = dist["type"]
    if kind == "Disabled":
        return None
    if kind != "Exp":
        raise InvalidModelError(
            f"LINE {where}: distribution {kind!r} is not read (only Exp and Disabled: "
            "qnmodel's product-form solvers take exponential service)"
        )
    try:
        raw = dist["params"]["lambda"]
    except (KeyError, TypeError):
        raise InvalidModelError(f"LINE {where}: Exp needs params.lambda") from None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise InvalidModelError(
            f"LINE {where}: Exp params.lambda must be a number (a rate, 1/s), got {raw!r}"
        )
    rate = float(raw)
    if not np.isfinite(rate) or rate <= 0:
        raise InvalidModelError(f"LINE {where}: Exp rate must be finite and > 0, got {rate!r}")
    return 1.0 / rate


def _table(value: Any, where: str) -> dict:
    """A JSON object (dict) or our error naming where it was expected."""
    if not isinstance(value, dict):
        raise InvalidModelError(f"LINE {where}: expected an object, got {value!r}")
    return value


def _tables(value: Any, where: str) -> list[dict]:
    """A non-empty list of named objects with distinct string names."""
    if not isinstance(value, list) or not value:
        raise InvalidModelError(f"LINE JSON: the model needs a non-empty list of {where}")
    seen = set()
    for i, item in enumerate(value):
        name = _table(item, f"{where}[{i}]").get("name")
        if not isinstance(name, str) or not name:
            raise InvalidModelError(f"LINE {where}[{i}]: name must be a string, got {name!r}")
        if name in seen:
            raise InvalidModelError(f"LINE {where}: the name {name!r} appears twice")
        seen.add(name)
    return value


def _count(value: Any, where: str, minimum: int) -> int:
    """An integer >= minimum (JSON integers, or floats with an integral value)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidModelError(f"LINE {where} must be an integer >= {minimum}, got {value!r}")
    if not (np.isfinite(value) and value == int(value) and value >= minimum):
        raise InvalidModelError(f"LINE {where} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _visits(
    table: dict,
    names: list[str],
    start: str,
    closed: bool,
    where: str,
    sinks: frozenset = frozenset(),
) -> np.ndarray:
    """Visit ratios of one class over ``names`` from its routing table (traffic equations).

    Each routing row must sum to 1 (a job leaves a node for somewhere); a closed class never
    routes to a Sink (its jobs would vanish), and every node it visits has a row."""
    idx = {n: i for i, n in enumerate(names)}
    n = len(names)
    P = np.zeros((n, n))
    for a, row in _table(table, f"{where} routing").items():
        if a not in idx:
            raise InvalidModelError(f"LINE {where}: routing from unknown node {a!r}")
        for b, p in _table(row, f"{where} routing from {a!r}").items():
            if b not in idx:
                raise InvalidModelError(f"LINE {where}: routing to unknown node {b!r}")
            if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
                raise InvalidModelError(
                    f"LINE {where}: routing probability {a!r} -> {b!r} must be in [0, 1], got {p!r}"
                )
            if closed and b in sinks and p > 0:
                raise InvalidModelError(
                    f"LINE {where}: a closed class is routed {a!r} -> sink {b!r} with probability "
                    f"{p!r}; its jobs never leave (route them to a Queue or Delay)"
                )
            P[idx[a], idx[b]] += float(p)
    rows = P.sum(axis=1)
    for a in _table(table, f"{where} routing"):
        total = float(rows[idx[a]])
        if abs(total - 1.0) > 1e-9:
            raise InvalidModelError(
                f"LINE {where}: the routing probabilities from {a!r} sum to {total:.12g}; "
                "each row must sum to 1"
            )
    if start not in idx:
        raise InvalidModelError(f"LINE {where}: reference node {start!r} is not a node")
    s = idx[start]
    if closed:  # v (I - P) = 0, v_s = 1: replace equation s by the normalisation
        A = (np.eye(n) - P).T
        A[s, :] = 0.0
        A[s, s] = 1.0
        b = np.zeros(n)
        b[s] = 1.0
    else:  # v = e_s + v P (the source visited once per arrival)
        A = (np.eye(n) - P).T
        b = np.zeros(n)
        b[s] = 1.0
    try:
        with np.errstate(all="ignore"):
            v = np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        raise InvalidModelError(f"LINE {where}: the routing has no unique visit ratios") from None
    if not np.all(np.isfinite(v)):
        raise InvalidModelError(f"LINE {where}: the routing has no finite visit ratios")
    if closed:
        stuck = [nm for nm, i in idx.items() if v[i] > 1e-12 and rows[i] == 0.0]
        if stuck:
            raise InvalidModelError(
                f"LINE {where}: the closed class reaches {stuck[0]!r}, which routes it nowhere "
                "(no routing row); give the row"
            )
    return np.maximum(v, 0.0)


def from_line_json(doc: Any) -> Network:
    """Read a LINE JSON document (dict or JSON text) into a
    :class:`~qnmodel.model.Network` (see the module docstring for the
    subset read)."""
    if isinstance(doc, str | bytes):
        try:
            doc = json.loads(doc)
        except (ValueError, RecursionError) as exc:  # JSON or UTF-8 decoding; nesting depth
            raise InvalidModelError(f"not a LINE JSON document: {exc}") from None
    if not isinstance(doc, dict):
        raise InvalidModelError(f"not a LINE JSON document: {type(doc).__name__}")
    fmt, version = doc.get("format", "line-model"), str(doc.get("version", "1.0"))
    if fmt != "line-model":
        raise InvalidModelError(f"LINE JSON: format must be 'line-model', got {fmt!r}")
    if version.split(".")[0] != "1":
        raise InvalidModelError(
            f"LINE JSON: version {version!r} is not supported (this reader knows 'line-model' 1.x)"
        )
    model = doc.get("model", doc)
    got = model.get("type") if isinstance(model, dict) else type(model).__name__
    if not isinstance(model, dict) or got != "Network":
        raise InvalidModelError(f"LINE JSON: expected a model of type 'Network', got {got!r}")
    if not model.get("nodes") or not model.get("classes"):
        raise InvalidModelError("LINE JSON: the model needs 'nodes' and 'classes'")
    nodes = _tables(model["nodes"], "nodes")
    classes = _tables(model["classes"], "classes")
    cn = [c["name"] for c in classes]
    names = [nd["name"] for nd in nodes]
    kinds = {nd["name"]: nd.get("type") for nd in nodes}
    for nd in nodes:
        if not isinstance(nd.get("type"), str) or nd["type"] not in (
            "Queue", "Delay", "Source", "Sink",
        ):  # fmt: skip
            raise InvalidModelError(
                f"LINE node {nd['name']!r}: type {nd.get('type')!r} is not read "
                "(Queue, Delay, Source, Sink only)"
            )
    routing = _table(model.get("routing") or {}, "routing")
    matrix = _table(routing.get("matrix") or {}, "routing matrix")
    for key in matrix:
        a, _, b = key.partition(",")
        if a != b:
            raise InvalidModelError(f"LINE routing {key!r}: class switching is not read")
    stations = [nd for nd in nodes if nd["type"] in ("Queue", "Delay")]
    means = {
        nd["name"]: {
            c: _mean(
                _table(nd.get("service", {}), f"node {nd['name']!r} service").get(
                    c, {"type": "Disabled"}
                ),
                f"node {nd['name']!r}",
            )
            for c in cn
        }
        for nd in nodes
        if nd["type"] in ("Queue", "Delay", "Source")
    }
    C = len(cn)
    Vm = {nd["name"]: np.zeros(C) for nd in stations}
    Z = np.zeros(C)
    out_classes = []
    for i, cl in enumerate(classes):
        c = cn[i]
        table = matrix.get(f"{c},{c}", {})
        where = f"class {c!r}"
        if cl.get("type") == "Closed":
            if not stations:
                raise InvalidModelError(f"LINE {where}: a closed class needs a Queue or Delay")
            ref = cl.get("refNode") or stations[0]["name"]
            if not isinstance(ref, str):
                raise InvalidModelError(f"LINE {where}: refNode must be a node name, got {ref!r}")
            sinks = frozenset(n for n in names if kinds[n] == "Sink")
            v = _visits(table, names, ref, True, where, sinks)
        elif cl.get("type") == "Open":
            src = [n for n in names if kinds[n] == "Source"]
            if not src:
                raise InvalidModelError(f"LINE {where}: an open class needs a Source node")
            v = _visits(table, names, src[0], False, where)
        else:
            raise InvalidModelError(f"LINE {where}: type {cl.get('type')!r} is not read")
        for nd in stations:
            mean = means[nd["name"]][c]
            visits = 0.0 if mean is None else float(v[names.index(nd["name"])])
            if nd["name"] == THINK_NODE and nd["type"] == "Delay":
                Z[i] = visits * (mean or 0.0)
            else:
                Vm[nd["name"]][i] = visits
        if cl.get("type") == "Closed":
            pop = _count(cl.get("population", 0), f"{where} population", 0)
            out_classes.append(ClosedClass(c, pop, think_time=Z[i]))
        else:
            out_classes.append(OpenClass(c, 1.0 / means[src[0]][c] if means[src[0]][c] else 0.0))
    out_stations = []
    for nd in stations:
        if nd["name"] == THINK_NODE and nd["type"] == "Delay":
            continue
        # the file's service time per visit and the visits the routing gives, per class
        svc = {c: means[nd["name"]][c] or 0.0 for c in cn}
        vis = {c: float(Vm[nd["name"]][i]) for i, c in enumerate(cn)}
        where = f"LINE node {nd['name']!r}"
        if nd["type"] == "Delay":
            out_stations.append(Station(nd["name"], service_time=svc, visits=vis, kind="delay"))
            continue
        sched = nd.get("scheduling", "FCFS")
        if not isinstance(sched, str) or sched not in _DISCIPLINE or sched == "INF":
            raise InvalidModelError(
                f"{where}: scheduling {sched!r} is not read (a Queue of "
                f"{', '.join(repr(k) for k in _DISCIPLINE if k != 'INF')})"
            )
        ld = nd.get("loadDependence")
        kw: dict[str, Any] = {"discipline": _DISCIPLINE[sched]}
        if ld is not None and "scaling" in _table(ld, f"node {nd['name']!r} loadDependence"):
            scaling = ld["scaling"]
            if not isinstance(scaling, list):
                raise InvalidModelError(
                    f"{where}: loadDependence.scaling must be a list of rates, got {scaling!r}"
                )
            kw["rate_multipliers"] = scaling
        else:
            kw["servers"] = _count(nd.get("servers", 1), f"node {nd['name']!r} servers", 1)
        out_stations.append(Station(nd["name"], service_time=svc, visits=vis, **kw))
    return Network(out_stations, classes=out_classes)


def write_line_json(net: Any, path: str | Path, N: Any = None) -> Path:
    """Write :func:`to_line_json` of ``net`` to ``path`` (``*.json``); returns the path.
    Arguments in the order of every writer: model, path, then the population."""
    from .._files import write_output

    return write_output(path, to_line_json(net, N))


def read_line_json(path: str | Path) -> Network:
    """Read a LINE JSON model file written by LINE or :func:`write_line_json`."""
    return from_line_json(Path(path).read_text(encoding="utf-8"))
