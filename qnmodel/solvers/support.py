"""What each solver solves: exactly, approximately, or not at all, declared in one table.

Every public solver states the features of :data:`qnmodel.model.compiled.FEATURES` it solves
exactly and those it approximates; :func:`require` compares them with the features a network
uses (:attr:`Compiled.features`) before any arithmetic, and refuses a model the solver does
not support, naming the feature, the stations or classes that use it, and the solvers that
do. Nothing answers for a model it does not support, and an approximate answer says so in
its ``method`` label.

>>> import qnmodel as qn
>>> net = qn.Network([qn.Station("disk", "5 ms", scv=0.0)])
>>> qn.mva_exact(net, 4)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
qnmodel.errors.InvalidModelError: mva cannot solve non-exponential service (SCV != 1) at ...
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InvalidModelError
from ..model.compiled import FEATURES, Compiled

__all__ = ["Support", "SUPPORT", "require", "supports"]

#: where a feature is solved when a solver refuses it (the first entry is the best choice)
ELSEWHERE = {
    "open": "qnmodel.open_network (open classes) or qnmodel.mixed_network (open and closed)",
    "closed": "qnmodel.mva / mva_multiclass (closed classes) or qnmodel.mixed_network",
    "multiclass": "qnmodel.mva_multiclass (exact), qnmodel.amva (approximate) or qnmodel.simulate",
    "delay": "qnmodel.mva",
    "multiserver": "qnmodel.mva or qnmodel.mva_multiclass (or bounds(..., method='aba'))",
    "load_dependent": "qnmodel.mva or qnmodel.mva_multiclass (or bounds(..., method='aba'))",
    "ps": "qnmodel.mva, qnmodel.mva_multiclass or qnmodel.open_network",
    "lcfs_pr": "qnmodel.mva, qnmodel.mva_multiclass or qnmodel.open_network",
    "fcfs_class_dependent": "qnmodel.amva or qnmodel.open_network (approximate), "
    "qnmodel.simulate; or discipline='PS' if the device shares its capacity among the jobs "
    "present, or give visits and one service_time if the classes differ only in visits",
    "non_exponential": "qnmodel.mva (one closed class, single-server stations) or "
    "qnmodel.amva (approximate: the residual-life correction), qnmodel.open_network (open, "
    "approximate), qnmodel.simulate (or discipline='PS' / 'LCFS-PR', where the service "
    "law does not change the means)",
    "priority": "qnmodel.amva or qnmodel.mixed_network (approximate: priority MVA), "
    "qnmodel.priority_queue (one open station) or qnmodel.simulate",
    "finite_capacity": "qnmodel.mva_blocking (closed, approximate), qnmodel.queue_mm1k / "
    "queue_mmmk (one station) or qnmodel.simulate",
    "forkjoin": "qnmodel.fork_join (approximate) or qnmodel.simulate",
    "class_switching": "qnmodel.mva_multiclass (exact, over the chains)",
}


@dataclass(frozen=True)
class Support:
    """The features a solver takes: exactly (``exact``) or approximately (``approximate``).

    A feature in neither set is refused. ``exact`` holds the features under which the
    solver's answer is exact (or, for bounds, a true bound); a model using any feature of
    ``approximate`` gets an approximate answer, labelled.
    """

    solver: str
    exact: frozenset[str]
    approximate: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        unknown = (self.exact | self.approximate) - set(FEATURES)
        if unknown:
            raise ValueError(f"{self.solver}: unknown features {sorted(unknown)}")


_PF = {"delay", "multiserver", "load_dependent", "ps", "lcfs_pr"}

#: the declarations, one per public solver
SUPPORT = {
    s.solver: s
    for s in (
        Support("mva", frozenset(_PF | {"closed"})),
        # mva of a network with non-exponential FCFS stations: the residual-life correction
        # (qnmodel.solvers.mva_residual), which takes one server per station
        Support(
            "mva_residual",
            frozenset({"closed", "delay", "ps", "lcfs_pr"}),
            frozenset({"non_exponential"}),
        ),  # fmt: skip
        # the asymptotic bounds are operational: true bounds for any single-class closed
        # network of these stations, whatever the service law or discipline
        Support("bounds_aba", frozenset(_PF | {"closed", "non_exponential", "priority"})),
        Support("bounds_bjb", frozenset({"closed", "delay", "ps", "lcfs_pr"})),
        Support("mva_multiclass", frozenset(_PF | {"closed", "multiclass", "class_switching"})),
        Support(
            "amva",
            frozenset({"closed", "multiclass", "delay", "ps", "lcfs_pr"}),
            frozenset(
                {
                    "multiserver",
                    "load_dependent",
                    "fcfs_class_dependent",
                    "priority",
                    "non_exponential",
                }
            ),
        ),  # fmt: skip
        Support(
            "open_network",
            frozenset(_PF | {"open", "multiclass"}),
            frozenset({"fcfs_class_dependent", "non_exponential"}),
        ),
        Support(
            "mixed_network",
            frozenset({"open", "closed", "multiclass", "delay", "ps", "lcfs_pr"}),
            frozenset({"multiserver", "load_dependent", "priority"}),
        ),
        Support(
            "fork_join",
            frozenset({"closed", "open", "delay"}),
            frozenset({"forkjoin", "multiserver", "load_dependent"}),
        ),
        Support(
            "bounds_multiclass_aba",
            frozenset({"closed", "multiclass", "delay", "multiserver", "ps", "lcfs_pr"}),
        ),
        Support(
            "bounds_multiclass_bsb", frozenset({"closed", "multiclass", "delay", "ps", "lcfs_pr"})
        ),
        Support(
            "bounds_open_aba",
            frozenset({"open", "multiclass", "delay", "multiserver", "ps", "lcfs_pr"}),
        ),
        Support("bounds_open_bsb", frozenset({"open", "multiclass", "delay", "ps", "lcfs_pr"})),
        Support("normalizing_constant", frozenset(_PF | {"closed"})),
        # a population limit on a subsystem: the flow-equivalent server (one class)
        Support("thread_pool", frozenset(_PF | {"closed"})),
        Support("thread_pool_open", frozenset(_PF | {"open"})),
        Support("mva_blocking", frozenset({"closed"}), frozenset({"finite_capacity"})),
        # FCFS response-time laws: a PS or LCFS-PR station's sojourn time is not exponential
        Support(
            "response_time_law",
            frozenset({"closed", "delay", "multiserver"}),
            frozenset({"load_dependent", "non_exponential"}),
        ),  # fmt: skip
        Support(
            "simulate",
            frozenset(
                {
                    "open",
                    "closed",
                    "multiclass",
                    "delay",
                    "multiserver",
                    "load_dependent",
                    "forkjoin",
                    "fcfs_class_dependent",
                    "non_exponential",
                    "ps",
                    "lcfs_pr",
                    "priority",
                    "finite_capacity",
                    "class_switching",
                }
            ),
        ),
    )
}


def supports(model: Compiled, solver: str) -> bool:
    """True when ``solver`` takes every feature ``model`` uses (exactly or approximately)."""
    s = SUPPORT[solver]
    return set(model.features) <= (s.exact | s.approximate)


def require(model: Compiled, solver: str, *, drop: tuple[str, ...] = ()) -> bool:
    """Refuse a model ``solver`` does not take; return True when its answer is approximate.

    ``drop`` names features the caller has already decided (``"open"``/``"closed"`` of a
    single-class network, which the call makes one or the other).

    Raises
    ------
    InvalidModelError
        Naming the first unsupported feature, where the model uses it, and the solvers that
        solve it.
    """
    s = SUPPORT[solver]
    used = {f: sites for f, sites in model.features.items() if f not in drop}
    for f in FEATURES:  # a stable order: the table's
        if f in used and f not in s.exact and f not in s.approximate:
            sites = used[f]
            where = ", ".join(repr(x) for x in sites[:4]) + (", ..." if len(sites) > 4 else "")
            noun = "class" if f in ("open", "closed", "multiclass") else "station"
            noun += "es" if noun == "class" and len(sites) > 1 else ""
            noun += "s" if noun == "station" and len(sites) > 1 else ""
            raise InvalidModelError(
                f"{solver} cannot solve {FEATURES[f]} ({noun} {where}): use {ELSEWHERE[f]}"
            )
    return any(f in s.approximate and f not in s.exact for f in used)
