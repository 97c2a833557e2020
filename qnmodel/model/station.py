"""A service centre of the description: what it does to a job, and how long it takes.

A :class:`Station` says everything a solver or the simulator needs to know about one service
centre: its demand per class (or its service time and visits), its scheduling discipline, its
servers or rate curve, the shape of its service times and its capacity. Nothing downstream
re-derives any of it: the network compiles stations once (:mod:`qnmodel.model.compiled`).

Disciplines
-----------
``"FCFS"``
    First come, first served (the default of a queueing station). Product form (BCMP type 1)
    when every class has the same exponential service time per visit; otherwise (classes'
    service times differ, or an SCV other than 1) exact solvers refuse it and the approximate
    ones say so.
``"PS"``
    Processor sharing: every job present is served at once, at rate r(n)/n of the station.
    Product form (BCMP type 2) for any service-time law and class-dependent service times.
``"LCFS-PR"``
    Last come, first served, preemptive resume (BCMP type 4): as PS, product form for any law.
``"IS"``
    Infinite servers: a delay station (``kind="delay"``), no job ever waits (BCMP type 3).
``"HOL"``
    Static priorities, non-preemptive (head of the line): the waiting job of the most urgent
    class (the smallest ``priority`` of its class) is served next, FCFS within a level.
``"PRIO-PR"``
    Static priorities, preemptive resume: an arrival of a more urgent class interrupts the job
    in service, which later resumes where it stopped.

Priorities are a property of the classes (``ClosedClass(..., priority=0)``); the discipline
says whether a station honours them.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

import numpy as np

from .._validate import as_positive_int, as_quantity, as_rate_multipliers, as_scv, as_servers
from ..errors import InvalidModelError, InvalidTypeError
from ..units import format_quantity
from .laws import Exponential, as_distribution, law_for_scv

__all__ = ["Station", "DISCIPLINES", "STATION_KINDS", "as_element_name"]

#: station kinds: jobs wait for a server, or never wait (infinite servers)
STATION_KINDS = ("queue", "delay")
#: scheduling disciplines (see the module docstring)
DISCIPLINES = ("FCFS", "PS", "LCFS-PR", "IS", "HOL", "PRIO-PR")
#: disciplines under which the service-time law does not change the mean values (BCMP)
INSENSITIVE = frozenset({"PS", "LCFS-PR", "IS"})
PRIORITY_DISCIPLINES = frozenset({"HOL", "PRIO-PR"})


def as_element_name(name: Any, what: str) -> str:
    """A station, fork-join or class name: a non-empty string a terminal, a Markdown table and
    an HTML page show as it is. Refused: control characters (escapes, NUL, newlines), format
    characters (zero-width), and leading or trailing white space (``"disk "`` would be another
    station than ``"disk"`` that no one can tell apart)."""
    if not isinstance(name, str):
        raise InvalidTypeError(
            f"{what} name must be a string, got {name!r} ({type(name).__name__})"
        )
    if not name.strip():
        raise InvalidModelError(f"{what} name must be a non-empty string, got {name!r}")
    bad = [ch for ch in name if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")]
    if bad:
        raise InvalidModelError(
            f"{what} name {name!r} contains the invisible or control character "
            f"U+{ord(bad[0]):04X}: names must print as they are; remove it"
        )
    if name != name.strip():
        raise InvalidModelError(
            f"{what} name {name!r} begins or ends with white space: remove it (it would name "
            "another element than the one shown)"
        )
    if len(name) > 200:
        raise InvalidModelError(f"{what} name is {len(name)} characters long; at most 200")
    return name


def _per_class(value: Any, label: str, convert) -> Any:
    """A value or a mapping {class name: value}, each converted; mappings become read-only."""
    if isinstance(value, Mapping):
        out = {}
        for cls, v in value.items():
            if not isinstance(cls, str) or not cls:
                raise InvalidTypeError(
                    f"{label}: keys must be class names (non-empty strings), got {cls!r}"
                )
            out[cls] = convert(v, f"{label}[{cls!r}]")
        if not out:
            raise InvalidModelError(f"{label} is an empty mapping; give {{class name: value}}")
        return MappingProxyType(out)
    return convert(value, label)


def _time(v: Any, label: str) -> float:
    return as_quantity(v, label, "time")


def _visits(v: Any, label: str) -> float:
    if isinstance(v, str):
        raise InvalidTypeError(f"{label} must be a number of visits (>= 0), got the string {v!r}")
    return as_quantity(v, label, "time")  # a plain non-negative finite number


def _frozen(value: Any) -> Any:
    return tuple(sorted(value.items())) if isinstance(value, Mapping) else value


@dataclass(frozen=True, eq=False)
class Station:
    """One service centre of a queueing network.

    Parameters
    ----------
    name : str
        Unique, non-empty name within its network (``"disk"``), printable as it is.
    demand : float, str or mapping, optional
        Service demand D = V S, the total service time a job needs here per interaction, in
        **seconds** (a string must carry a time unit: ``"4.9 ms"``); finite and >= 0. Several
        classes: a mapping ``{class name: demand}`` (classes not named do not visit), or one
        value for every class. Give ``demand``, or ``service_time`` (with ``visits``).
    kind : {"queue", "delay"}, optional
        A queueing station (jobs wait for a server; the default) or a delay station (infinite
        servers, the same as ``discipline="IS"``).
    servers : int
        Identical servers of a queueing station (>= 1): with j jobs present it serves at rate
        min(j, m) times one server's.
    rate_multipliers : sequence of float, optional
        General load-dependent service: with j jobs present the station serves at
        ``rate_multipliers[min(j, L) - 1]`` times its rate with one job (the last value holds
        beyond the curve); finite and > 0; a single-server queueing station only. A device
        that serves several requests at once (an SSD or NVMe drive, an array behind one
        queue) gets its curve from a queue-depth sweep (jobs = 1, 2, 4, ..., no think time)
        by :func:`qnmodel.fit_rate_multipliers` (also
        :func:`qnmodel.calibration.fit_rate_multipliers`; from a measured curve:
        :func:`qnmodel.calibration.rate_multipliers_from_curve`), whose ``.station(name)``
        is this station.
    discipline : str, optional
        ``"FCFS"`` (default of a queue), ``"PS"``, ``"LCFS-PR"``, ``"IS"`` (a delay),
        ``"HOL"`` or ``"PRIO-PR"`` (priorities); see the module docstring. Case is ignored.
    scv : float or mapping, optional
        Squared coefficient of variation Var[S] / E[S]^2 of the service time per visit, >= 0
        (0 constant, 1 exponential, the default; per class as a mapping). The simulator draws
        a deterministic, exponential or lognormal law of that SCV unless ``service`` names one.
    service : str or law, optional
        The service-time law: ``"exponential"``, ``"deterministic"``, ``Lognormal(cv)`` or
        ``Empirical.from_qnbench(doc)`` (:mod:`qnmodel.model.laws`); its mean is always the
        station's mean service time. Its SCV is the station's ``scv`` (give one or the other).
    capacity : int, optional
        The most jobs the station holds, in service and waiting (>= servers): a queue-depth
        limit or a buffer. None (the default) is unlimited.
    service_time : float, str or mapping, optional
        Mean service time S per visit, seconds (instead of ``demand``; per class as a
        mapping); the demand is then ``visits * service_time``.
    visits : float or mapping, optional
        Mean visits V per interaction (>= 0, may be fractional; per class as a mapping); only
        with ``service_time`` (or ``size`` and ``rate``). Default 1.
    size, rate : float, str or mapping, optional
        Bytes moved per visit and the device's rate, bytes/s (``size="64 KiB",
        rate="100 MB/s"``; per class as mappings): the service time per visit is
        ``size / rate`` (instead of ``service_time``; the model files' ``size`` and ``rate``).

    Attributes
    ----------
    is_delay : bool
        True for an infinite-server station (``discipline == "IS"``).
    per_class : bool
        True when some of demand, service time, visits or SCV is given per class.

    Notes
    -----
    With only a demand, each class is taken to visit once with a service time equal to its
    demand; a FCFS station whose classes' demands differ then has class-dependent service
    times (not product form). Give ``visits`` and ``service_time`` when the classes share the
    service time and differ in visits.
    """

    name: str
    demand: Any = None
    kind: str | None = None
    servers: int = 1
    rate_multipliers: Any = None
    discipline: str | None = None
    scv: Any = None
    service: Any = None
    capacity: int | None = None
    service_time: Any = None
    visits: Any = None
    size: Any = None
    rate: Any = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        as_element_name(self.name, "Station")
        label = f"Station {self.name!r}"
        # -- size and rate: the service time per visit is size / rate -----------------------
        if (self.size is None) != (self.rate is None):
            given, other = ("size", "rate") if self.rate is None else ("rate", "size")
            raise InvalidModelError(
                f"{label}: {given} goes with {other} (service time per visit = size / rate); "
                f"give both, e.g. size='64 KiB', rate='100 MB/s'"
            )
        if self.size is not None:
            if self.demand is not None or self.service_time is not None:
                raise InvalidModelError(
                    f"{label}: give one of demand, service_time, or size with rate, not several"
                )
            size = _per_class(self.size, f"{label}: size", _size)
            rate = _per_class(self.rate, f"{label}: rate", _rate)
            set_(self, "size", size)
            set_(self, "rate", rate)
            set_(self, "service_time", _quotient(size, rate))
        # -- demand, or service time and visits ---------------------------------------------
        if self.demand is not None and self.service_time is not None:
            raise InvalidModelError(
                f"{label}: give demand (D = V S) or service_time (with visits), not both"
            )
        if self.demand is None and self.service_time is None:
            raise InvalidModelError(
                f"{label}: give its demand (D = V S, e.g. demand='4.9 ms') or its service_time "
                "per visit (with visits)"
            )
        if self.visits is not None and self.service_time is None:
            raise InvalidModelError(
                f"{label}: visits go with service_time, or size and rate (the demand is visits "
                "* service_time); with demand, the demand already counts the visits"
            )
        if self.service_time is not None:
            s = _per_class(self.service_time, f"{label}: service_time", _time)
            v = _per_class(1.0 if self.visits is None else self.visits, f"{label}: visits", _visits)
            set_(self, "service_time", s)
            set_(self, "visits", v)
            set_(self, "demand", _product(v, s))
        else:
            set_(self, "demand", _per_class(self.demand, f"{label}: demand", _time))
        # -- kind and discipline ----------------------------------------------------------
        kind = self.kind
        if kind is not None and kind not in STATION_KINDS:
            raise InvalidModelError(
                f"{label}: kind must be one of {', '.join(map(repr, STATION_KINDS))}; got {kind!r}"
            )
        disc = self.discipline
        if disc is not None:
            if not isinstance(disc, str) or disc.upper() not in DISCIPLINES:
                raise InvalidModelError(
                    f"{label}: discipline must be one of {', '.join(map(repr, DISCIPLINES))}; "
                    f"got {disc!r}"
                )
            disc = disc.upper()
        if disc is None:
            disc = "IS" if kind == "delay" else "FCFS"
        if kind == "delay" and disc != "IS":
            raise InvalidModelError(
                f"{label}: kind='delay' is the discipline 'IS' (infinite servers), got "
                f"discipline={self.discipline!r}; give one of them"
            )
        if kind == "queue" and disc == "IS":
            raise InvalidModelError(
                f"{label}: discipline 'IS' is a delay station; kind='queue' contradicts it"
            )
        set_(self, "discipline", disc)
        set_(self, "kind", "delay" if disc == "IS" else "queue")
        # -- servers, rate curve, capacity -------------------------------------------------
        servers = as_servers(self.servers, f"{label}: servers")
        if disc == "IS" and servers != 1:
            raise InvalidModelError(
                f"{label}: servers must be 1 for a delay station (it has infinitely many), "
                f"got {self.servers!r}"
            )
        set_(self, "servers", servers)
        if self.rate_multipliers is not None:
            if disc == "IS":
                raise InvalidModelError(
                    f"{label}: rate_multipliers apply to a queueing station; a delay station "
                    "already serves every job at once"
                )
            if servers != 1:
                raise InvalidModelError(
                    f"{label}: give either servers={servers} or rate_multipliers, not both "
                    f"(m servers are rate_multipliers=[1, 2, ..., m])"
                )
            r = as_rate_multipliers(self.rate_multipliers, f"{label}: rate_multipliers")
            r.setflags(write=False)
            set_(self, "rate_multipliers", r)
        if self.capacity is not None:
            if disc == "IS":
                raise InvalidModelError(
                    f"{label}: capacity applies to a queueing station; for a loss system of c "
                    "parallel servers give servers=c, capacity=c"
                )
            cap = as_positive_int(self.capacity, f"{label}: capacity")
            if cap < servers:
                raise InvalidModelError(
                    f"{label}: capacity={cap} is below servers={servers}: the station holds at "
                    "least one job per server (capacity counts jobs in service and waiting)"
                )
            set_(self, "capacity", cap)
        # -- service-time law -------------------------------------------------------------
        if self.service is not None:
            law = as_distribution(self.service, f"{label}: service")
            if self.scv is not None:
                raise InvalidModelError(
                    f"{label}: give scv or service (a law, whose SCV is {law.scv:g}), not both"
                )
            set_(self, "service", law)
            set_(self, "scv", law.scv)
        else:
            set_(self, "scv", _per_class(1.0 if self.scv is None else self.scv,
                                         f"{label}: scv", as_scv))  # fmt: skip

    def replace(self, **changes: Any) -> Station:
        """A copy with ``changes`` (field names of the constructor), keeping the form the
        station was given in: a new ``demand`` drops ``service_time`` and ``visits`` (and the
        reverse), ``kind="delay"`` or a ``discipline`` replaces the other, a new ``scv`` drops
        the ``service`` law (and the reverse)."""
        kw = {f.name: getattr(self, f.name) for f in fields(self)}
        if "demand" in changes:
            kw["service_time"] = kw["visits"] = kw["size"] = kw["rate"] = None
        elif "service_time" in changes or "visits" in changes or self.service_time is not None:
            kw["demand"] = None
        if "service_time" in changes:
            kw["size"] = kw["rate"] = None
        elif kw["size"] is not None or "size" in changes or "rate" in changes:
            kw["service_time"] = None  # recomputed from size / rate
        if "kind" in changes and "discipline" not in changes:
            kw["discipline"] = None
        elif "discipline" in changes and "kind" not in changes:
            kw["kind"] = None
        if changes.get("kind") == "delay" or changes.get("discipline") == "IS":
            kw["servers"] = 1
            kw["rate_multipliers"] = kw["capacity"] = None
        if "service" in changes:
            kw["scv"] = None
        elif "scv" in changes or self.service is not None:
            kw["service"] = None if "scv" in changes else kw["service"]
            kw["scv"] = changes.get("scv") if "scv" in changes or self.service is None else None
        if "servers" in changes and changes["servers"] != 1:
            kw["rate_multipliers"] = None
        kw.update(changes)
        return Station(**kw)

    # -- identity: value semantics (mappings compare as dicts) ------------------------------
    def _key(self) -> tuple:
        r = None if self.rate_multipliers is None else tuple(self.rate_multipliers.tolist())
        return (self.name, _frozen(self.demand), self.discipline, self.servers, r,
                _frozen(self.scv), self.law, self.capacity, _frozen(self.visits))  # fmt: skip

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Station):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.name, _frozen(self.demand), self.discipline, self.servers))

    # -- derived ---------------------------------------------------------------------------
    @property
    def is_delay(self) -> bool:
        """True for an infinite-server station."""
        return self.discipline == "IS"

    @property
    def per_class(self) -> bool:
        """True when the demand (or SCV) is given per class."""
        return isinstance(self.demand, Mapping) or isinstance(self.scv, Mapping)

    @property
    def is_load_dependent(self) -> bool:
        """True when the station has a general rate curve (``rate_multipliers``)."""
        return self.rate_multipliers is not None

    @property
    def law(self) -> Any:
        """The service-time law the simulator draws (the given one, or one of the SCV)."""
        if self.service is not None:
            return self.service
        scv = self.scv
        if isinstance(scv, Mapping):
            return None  # per class: the compiled form picks one law per class
        return law_for_scv(scv) if scv != 1.0 else Exponential()

    def demand_of(self, cls: str | None = None) -> float:
        """The demand of class ``cls`` (0 when a per-class demand does not name it)."""
        d = self.demand
        return float(d.get(cls, 0.0)) if isinstance(d, Mapping) else float(d)

    def visits_of(self, cls: str | None = None) -> float:
        """Visits of class ``cls``: 1 when only a demand was given."""
        v = self.visits
        if v is None:
            return 1.0 if self.demand_of(cls) > 0 else 0.0
        return float(v.get(cls, 0.0)) if isinstance(v, Mapping) else float(v)

    def service_time_of(self, cls: str | None = None) -> float:
        """Mean service time per visit of class ``cls``, seconds (from ``service_time``, or
        the demand over the visits)."""
        if self.service_time is None:
            v = self.visits_of(cls)
            return self.demand_of(cls) / v if v > 0 else 0.0
        st = self.service_time
        return float(st.get(cls, 0.0)) if isinstance(st, Mapping) else float(st)

    def scv_of(self, cls: str | None = None) -> float:
        """The service-time SCV of class ``cls`` (1 when a per-class SCV does not name it)."""
        s = self.scv
        return float(s.get(cls, 1.0)) if isinstance(s, Mapping) else float(s)

    def rate_multiplier(self, jobs: Any) -> np.ndarray:
        """r(j): service-rate multiplier with j jobs present (j >= 1), as float64.

        1 for a single server, ``min(j, m)`` for m servers, ``j`` for a delay station,
        ``rate_multipliers[min(j, L) - 1]`` for a general curve.
        """
        j = np.asarray(jobs, dtype=np.int64)
        if np.any(j < 1):
            raise InvalidModelError(f"jobs must be >= 1, got {jobs!r}")
        if self.is_delay:
            return j.astype(np.float64)
        if self.rate_multipliers is not None:
            r = self.rate_multipliers
            return r[np.minimum(j, r.size) - 1]
        return np.minimum(j, self.servers).astype(np.float64)

    def __repr__(self) -> str:
        d = self.demand
        dem = (
            "{" + ", ".join(f"{c}: {format_quantity(v, 'time')}" for c, v in d.items()) + "}"
            if isinstance(d, Mapping)
            else f"{format_quantity(d, 'time')}"
        )
        extra = [] if self.discipline in ("FCFS", "IS") else [self.discipline]
        if self.is_delay:
            extra.append("delay")
        if self.servers > 1:
            extra.append(f"x{self.servers}")
        if self.rate_multipliers is not None:
            extra.append("ld")
        if self.capacity is not None:
            extra.append(f"capacity {self.capacity}")
        if not isinstance(self.scv, Mapping) and self.scv != 1.0:
            extra.append(f"scv {self.scv:g}")
        tag = f" ({', '.join(extra)})" if extra else ""
        return f"Station({self.name!r}, {dem}{tag})"


def _size(v: Any, label: str) -> float:
    return as_quantity(v, label, "size")


def _rate(v: Any, label: str) -> float:
    return as_quantity(v, label, "rate", positive=True)


def _quotient(size: Any, rate: Any) -> Any:
    """size / rate, per class where either is a mapping (a class missing from a mapping of
    sizes moves nothing; one missing from a mapping of rates is refused)."""
    if not isinstance(size, Mapping) and not isinstance(rate, Mapping):
        return size / rate
    classes = set(size) if isinstance(size, Mapping) else set()
    classes |= set(rate) if isinstance(rate, Mapping) else set()
    out = {}
    for c in sorted(classes):
        sc = size.get(c, 0.0) if isinstance(size, Mapping) else size
        if isinstance(rate, Mapping) and c not in rate:
            raise InvalidModelError(f"size of class {c!r} has no rate: give rate[{c!r}]")
        out[c] = sc / (rate[c] if isinstance(rate, Mapping) else rate)
    return MappingProxyType(out)


def _product(v: Any, s: Any) -> Any:
    """visits * service time, per class where either is a mapping."""
    if not isinstance(v, Mapping) and not isinstance(s, Mapping):
        return v * s
    classes = set(v) if isinstance(v, Mapping) else set()
    classes |= set(s) if isinstance(s, Mapping) else set()
    out = {}
    for c in sorted(classes):
        vc = v.get(c, 0.0) if isinstance(v, Mapping) else v
        sc = s.get(c, 0.0) if isinstance(s, Mapping) else s
        out[c] = vc * sc
        if not math.isfinite(out[c]):
            raise InvalidModelError(f"visits * service_time of class {c!r} is not finite")
    return MappingProxyType(out)
