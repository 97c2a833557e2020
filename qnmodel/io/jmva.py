"""Model exchange with JMT's JMVA (the MVA tool of the Java Modelling Tools).

JMVA stores a product-form model as XML ([JMT09]; the schema ``JMTmodel.xsd`` ships with
JMT)::

    <model xsi:noNamespaceSchemaLocation="JMTmodel.xsd">
      <parameters>
        <classes number="C">
          <closedclass name="batch" population="10"/>
          <openclass name="web" rate="40.0"/>
        </classes>
        <stations number="K">
          <listation name="disk" servers="1">
            <servicetimes><servicetime customerclass="batch">0.01</servicetime>...</servicetimes>
            <visits><visit customerclass="batch">1.0</visit>...</visits>
          </listation>
          <delaystation name="think_time">...</delaystation>
          <ldstation name="nvme" servers="1">
            <servicetimes><servicetimes customerclass="batch">S(1);S(2);...;S(N)</servicetimes>
            </servicetimes> ...
          </ldstation>
        </stations>
        <ReferenceStation number="C"><Class name="batch" refStation="disk"/></ReferenceStation>
      </parameters>
      <algParams><algType name="MVA" tolerance="1.0E-7" maxSamples="10000"/></algParams>
    </model>

The subset both tools express: open and closed classes, single- and multi-server
queueing stations, delay stations and (closed models) load-dependent stations given by
their service time at each population. Demands are written as service times with one
visit. JMVA has no think time: it is written as a delay station named ``think_time``,
and such a station is read back as the think time. A load-dependent station is read as
demand D = S(1) V with rate multipliers r(n) = S(1) / S(n) (so r(1) = 1: a curve with
r(1) != 1 comes back rescaled, the same model).

References
----------
.. [JMT09] M. Bertoli, G. Casale, G. Serazzi, "JMT: performance engineering tools for
   system modeling", ACM SIGMETRICS Performance Evaluation Review 36(4):10-15, 2009,
   doi:10.1145/1530873.1530877.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np

from .._validate import read_text_file
from ..errors import InvalidModelError, InvalidTypeError
from ..model import ClosedClass, Network, OpenClass, Station
from ._export import export_classes

__all__ = ["to_jmva", "from_jmva", "read_jmva", "write_jmva", "THINK_STATION"]

THINK_STATION = "think_time"
#: what a JMVA file says (product-form MVA stations): the rest is refused by the writer
JMVA_SAYS = {"open", "closed", "multiclass", "delay", "multiserver", "load_dependent", "ps",
             "lcfs_pr"}  # fmt: skip
_LD_MAX_POP = 100_000


def _f(x: float) -> str:
    return repr(float(x))


def to_jmva(net: Any, N: Any = None) -> str:
    """The JMVA XML text of a model (:func:`write_jmva` writes it to a file).

    Parameters
    ----------
    net : Network
        A single-class :class:`~qnmodel.model.network.Network` is one closed class of
        ``N`` jobs (required then).
    N : int, optional
        Population of a network without classes (refused with classes: they carry theirs).
    """
    m, is_open, pop, lam, Z = export_classes(net, N, "to_jmva", JMVA_SAYS)
    D, C, K = m.D, m.D.shape[0], m.D.shape[1]
    class_names = m.class_names
    total = int(pop[~is_open].sum())
    root = ET.Element(
        "model",
        {
            "xmlns:xsi": "http://www.w3.org/2001/XMLSchema-instance",
            "xsi:noNamespaceSchemaLocation": "JMTmodel.xsd",
        },
    )
    par = ET.SubElement(root, "parameters")
    cls = ET.SubElement(par, "classes", {"number": str(C)})
    for c in range(C):
        if is_open[c]:
            ET.SubElement(cls, "openclass", {"name": class_names[c], "rate": _f(lam[c])})
        else:
            ET.SubElement(cls, "closedclass", {"name": class_names[c], "population": str(pop[c])})
    think = bool((Z > 0).any())
    st = ET.SubElement(par, "stations", {"number": str(K + think)})
    for k in range(K):
        r = m.multipliers[k]
        if r is not None and not m.delay[k]:
            if is_open.any() or total > _LD_MAX_POP:
                raise InvalidModelError(
                    f"station {m.names[k]!r} has rate multipliers: JMVA lists its service time "
                    "at every population, which needs a closed model"
                )
            tag = "ldstation"
        else:
            tag = "delaystation" if m.delay[k] else "listation"
        el = ET.SubElement(st, tag, {"name": m.names[k]})
        if tag != "delaystation":
            el.set("servers", str(1 if r is not None else int(m.servers[k])))
        sv = ET.SubElement(el, "servicetimes")
        for c in range(C):
            if tag == "ldstation":
                n = np.arange(1, max(total, 1) + 1)
                S = D[c, k] / r[np.minimum(n, r.size) - 1]
                e = ET.SubElement(sv, "servicetimes", {"customerclass": class_names[c]})
                e.text = ";".join(_f(s) for s in S)
            else:
                e = ET.SubElement(sv, "servicetime", {"customerclass": class_names[c]})
                e.text = _f(D[c, k])
        vi = ET.SubElement(el, "visits")
        for c in range(C):
            ET.SubElement(vi, "visit", {"customerclass": class_names[c]}).text = "1.0"
    if think:
        el = ET.SubElement(st, "delaystation", {"name": THINK_STATION})
        sv = ET.SubElement(el, "servicetimes")
        vi = ET.SubElement(el, "visits")
        for c in range(C):
            ET.SubElement(sv, "servicetime", {"customerclass": class_names[c]}).text = _f(Z[c])
            ET.SubElement(vi, "visit", {"customerclass": class_names[c]}).text = "1.0"
    ref = ET.SubElement(par, "ReferenceStation", {"number": str(C)})
    for c in range(C):
        ET.SubElement(ref, "Class", {"name": class_names[c], "refStation": m.names[0]})
    alg = ET.SubElement(root, "algParams")
    ET.SubElement(alg, "algType", {"name": "MVA", "tolerance": "1.0E-7", "maxSamples": "10000"})
    ET.SubElement(alg, "compareAlgs", {"value": "false"})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def _num(text: str | None, where: str) -> float:
    try:
        v = float((text or "").strip())
    except ValueError:
        raise InvalidModelError(f"JMVA {where}: {text!r} is not a number") from None
    if not np.isfinite(v) or v < 0:
        raise InvalidModelError(f"JMVA {where}: {text!r} must be finite and >= 0")
    return v


def _per_class(el: ET.Element, path: str, names: tuple[str, ...], where: str) -> dict[str, Any]:
    out = {}
    for e in el.findall(path):
        c = e.get("customerclass")
        if c not in names:
            raise InvalidModelError(f"JMVA {where}: unknown customerclass {c!r}")
        if c in out:
            tag = path.rsplit("/", 1)[-1]
            raise InvalidModelError(
                f"JMVA {where}: <{tag}> for customerclass {c!r} appears twice "
                f"({(out[c].text or '').strip()!r} and {(e.text or '').strip()!r}); give one"
            )
        out[c] = e
    return out


def from_jmva(text: str, source: str = "") -> Network:
    """Parse JMVA XML text into a :class:`~qnmodel.model.Network` with classes (see the
    module docstring for the subset read); ``.class_network(0)`` gives the network without
    classes of a one-class model. ``source`` (a file name) prefixes
    the messages of syntax errors.

    A document type declaration (``<!DOCTYPE``, entity definitions) is refused: JMVA files
    have none, and entity expansion is how an XML file blows up memory or reads other files.
    """
    if not isinstance(text, str):
        raise InvalidTypeError(f"text must be a str of JMVA XML, got {type(text).__name__}")
    where = f"{source}: " if source else ""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise InvalidModelError(
            f"{where}not a JMVA XML document: it declares a document type or entities "
            "(<!DOCTYPE/<!ENTITY), which JMVA files never do; refused"
        )
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise InvalidModelError(f"{where}not a JMVA XML document: {exc}") from None
    par = root.find("parameters")
    if root.tag != "model" or par is None:
        raise InvalidModelError("not a JMVA model: expected <model><parameters>")
    cls = par.find("classes")
    if cls is None or len(cls) == 0:
        raise InvalidModelError("JMVA model has no <classes>")
    names, is_open, pop, lam = [], [], [], []
    for e in cls:
        name = e.get("name") or f"class{len(names)}"
        if name in names:
            raise InvalidModelError(f"JMVA <classes>: the class name {name!r} appears twice")
        names.append(name)
        if e.tag == "openclass":
            is_open.append(True)
            pop.append(0)
            lam.append(_num(e.get("rate"), f"class {name!r} rate"))
        elif e.tag == "closedclass":
            is_open.append(False)
            p = _num(e.get("population"), f"class {name!r} population")
            if p != int(p):
                raise InvalidModelError(f"JMVA class {name!r}: population {p!r} is not an integer")
            pop.append(int(p))
            lam.append(0.0)
        else:
            raise InvalidModelError(f"JMVA <classes>: unknown element <{e.tag}>")
    names_t = tuple(names)
    C = len(names_t)
    st = par.find("stations")
    if st is None or len(st) == 0:
        raise InvalidModelError("JMVA model has no <stations>")
    snames, delay, servers, rms, cols = [], [], [], [], []
    Z = np.zeros(C)
    for e in st:
        name = e.get("name") or f"s{len(snames)}"
        where = f"station {name!r}"
        if e.tag not in ("listation", "delaystation", "ldstation"):
            raise InvalidModelError(f"JMVA <stations>: unknown element <{e.tag}>")
        visits = _per_class(e, "./visits/visit", names_t, where)
        V = np.array(
            [_num(visits[c].text, f"{where} visit") if c in visits else 0.0 for c in names_t]
        )
        if e.tag == "ldstation":
            sts = {
                k: v
                for k, v in _per_class(e, "./servicetimes/servicetimes", names_t, where).items()
            }
            curves = {
                c: np.array([_num(x, f"{where} service time") for x in (v.text or "").split(";")])
                for c, v in sts.items()
            }
            first = next(iter(curves.values()))
            if (first <= 0).any():
                raise InvalidModelError(f"JMVA {where}: load-dependent service times must be > 0")
            r = first[0] / first
            for c, s in curves.items():
                if s.shape != first.shape or not np.allclose(s[0] / s, r, rtol=1e-12):
                    raise InvalidModelError(
                        f"JMVA {where}: class {c!r} has another rate curve; qnmodel needs one "
                        "curve shared by all classes"
                    )
            S = np.array([curves[c][0] if c in curves else 0.0 for c in names_t])
            rms.append(r)
        else:
            sts = _per_class(e, "./servicetimes/servicetime", names_t, where)
            S = np.array(
                [_num(sts[c].text, f"{where} service time") if c in sts else 0.0 for c in names_t]
            )
            rms.append(None)
        if e.tag == "delaystation" and name == THINK_STATION:
            Z = S * V
            rms.pop()
            continue
        snames.append(name)
        delay.append(e.tag == "delaystation")
        if e.tag == "delaystation":
            m = 1
        else:
            m = _num(e.get("servers", "1"), f"{where} servers")
            if m != int(m) or m < 1:
                raise InvalidModelError(
                    f"JMVA {where}: servers must be an integer >= 1, got {e.get('servers')!r}"
                )
        servers.append(int(m))
        cols.append((S, V))
    classes = [
        OpenClass(n, lam[c]) if is_open[c] else ClosedClass(n, pop[c], think_time=float(Z[c]))
        for c, n in enumerate(names_t)
    ]
    stations = []
    for k, name in enumerate(snames):
        S, V = cols[k]
        svc = {n: float(S[c]) for c, n in enumerate(names_t)}
        vis = {n: float(V[c]) for c, n in enumerate(names_t)}
        if delay[k]:
            stations.append(Station(name, service_time=svc, visits=vis, kind="delay"))
            continue
        # JMT solves a JMVA station by product-form MVA: where its classes' service times
        # differ that is processor sharing (FCFS would not be product form)
        live = S[V > 0]
        disc = "PS" if live.size > 1 and not np.allclose(live, live[0], rtol=1e-12) else "FCFS"
        kw: dict[str, Any] = {"discipline": disc}
        if rms[k] is not None:
            kw["rate_multipliers"] = rms[k]
        else:
            kw["servers"] = servers[k]
        stations.append(Station(name, service_time=svc, visits=vis, **kw))
    return Network(stations, classes=classes)


def write_jmva(net: Any, path: str | Path, N: Any = None) -> Path:
    """Write :func:`to_jmva` of ``net`` to ``path`` (conventionally ``*.jmva``); returns the
    path. Arguments in the order of every writer: model, path, then the population."""
    from .._files import write_output

    return write_output(path, to_jmva(net, N))


def read_jmva(path: str | Path) -> Network:
    """Read a JMVA file written by JMT or :func:`write_jmva`."""
    return from_jmva(read_text_file(Path(path), "JMVA file"), source=str(path))
