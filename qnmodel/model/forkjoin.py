"""Fork-join elements of the description: a request forks into one sub-request per branch
and leaves when k of them have finished (striping, erasure-coded and degraded reads).

A :class:`ForkJoin` is an element of its own: a network holds it beside its stations, the
compiled form marks its column, and the solvers that have no join refuse it through their
declared support (:mod:`qnmodel.solvers.support`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .._validate import as_positive_int
from ..errors import InvalidModelError, InvalidTypeError
from .station import Station, as_element_name


def _branch_key(b: Station) -> tuple:
    """What makes two fork-join branches interchangeable (all but the name)."""
    d = tuple(sorted(b.demand.items())) if isinstance(b.demand, Mapping) else float(b.demand)
    v = tuple(sorted(b.scv.items())) if isinstance(b.scv, Mapping) else float(b.scv)
    r = None if b.rate_multipliers is None else tuple(float(x) for x in b.rate_multipliers)
    return (d, v, b.servers, r)


@dataclass(frozen=True)
class ForkJoin:
    """A fork-join element: a request forks into one sub-request per branch and joins.

    An element of a network beside its stations (``Network([..., ForkJoin(...)])``). The request
    leaves when ``k`` of its ``n`` sub-requests have finished (``k = n``, the default,
    is a full-stripe read or write; ``k < n`` an erasure-coded read that needs any k
    of n fragments). With ``cancel=True`` (the default) the other ``n - k``
    sub-requests are then cancelled, whether queued or in service, so with k < n a
    branch is busy for less than its demand per request; with ``cancel=False`` they
    run to completion and keep their branch busy (stragglers delay later requests).

    Parameters
    ----------
    name : str
        Unique, non-empty name within its network (e.g. ``"stripe"``).
    branches : sequence of Station
        At least one branch; each a queueing Station (``kind="queue"``, possibly
        multi-server) with a name unique within this element. Its ``demand`` is the
        service time of one sub-request. Identical or different branches.
    k : int, optional
        Sub-requests to wait for, 1 <= k <= n; default n.
    cancel : bool
        Whether the ``n - k`` sub-requests left when the join fires are cancelled
        (default True). Irrelevant for k = n. The analytic solver
        (:func:`qnmodel.fork_join`) models cancelling joins, the simulator
        (:func:`qnmodel.simulate`) non-cancelling ones; each refuses the other kind
        of k < n join rather than answering for a different system.
    fanout : int, optional
        Branches each request forks to, 1 <= fanout <= n; default n. With fanout < n
        every request forks to a uniformly random subset of ``fanout`` branches (the
        branches must then be identical), as a RAID5 full-stripe read does over the
        stripe's data members (the parity rotates) and a read-modify-write over one
        data member and the parity member; k counts among those, k <= fanout.

    Attributes
    ----------
    n : int
        Number of branches.
    busy_demand : float or dict
        The busy time per request of its busiest branch, D_max fanout / n (s; per class when
        branches have per-class demands): the network's demand column for this element. For
        k = n every branch serves every sub-request it gets, so by the utilisation law the
        busiest branch has utilisation X D_max fanout / n and the bottleneck bound holds; for
        k < n cancellation shortens the busy time
        (``qnmodel.solvers.forkjoin.busy_per_request``). It is *not* the element's response
        time, even for one request: that is the mean of the k-th order statistic of the
        branch times (d H_n for n identical exponential branches of mean d and k = n).

    Notes
    -----
    Solvers that do not model the join (``mva``, ``amva``, ``bounds``, ``mva_multiclass``,
    ``open_network``) refuse a network holding a ForkJoin, naming :func:`qnmodel.fork_join`
    and :func:`qnmodel.simulate`.

    Examples
    --------
    >>> fj = ForkJoin("stripe", [Station(f"m{i}", "5 ms") for i in range(4)])
    >>> fj.n, fj.k, fj.busy_demand
    (4, 4, 0.005)
    """

    name: str
    branches: tuple[Station, ...]
    k: int | None = None
    cancel: bool = True
    fanout: int | None = None

    def __post_init__(self) -> None:
        as_element_name(self.name, "ForkJoin")
        label = f"ForkJoin {self.name!r}"
        branches = self.branches
        if isinstance(branches, Station):
            branches = (branches,)
        if not isinstance(branches, Sequence) or isinstance(branches, str):
            raise InvalidTypeError(
                f"{label}: branches must be a sequence of Station, got {type(branches).__name__}"
            )
        branches = tuple(branches)
        if not branches:
            raise InvalidModelError(
                f"{label}: branches is empty; a fork-join needs at least one branch Station"
            )
        seen: set[str] = set()
        for i, b in enumerate(branches):
            if not isinstance(b, Station):
                raise InvalidTypeError(
                    f"{label}: branches[{i}] must be a Station, got {b!r} ({type(b).__name__})"
                )
            if b.kind != "queue":
                raise InvalidModelError(
                    f"{label}: branches[{i}] ({b.name!r}) is a {b.kind!r} station; every branch "
                    "must be a queueing station (kind='queue'): a delay branch never queues, "
                    "model it as a think time or a delay Station outside the fork"
                )
            if b.discipline != "FCFS" or b.capacity is not None:
                raise InvalidModelError(
                    f"{label}: branches[{i}] ({b.name!r}) has discipline {b.discipline!r}"
                    + (f" and capacity {b.capacity}" if b.capacity is not None else "")
                    + "; a fork-join branch is a FCFS queue without a capacity limit"
                )
            if b.name in seen:
                raise InvalidModelError(
                    f"{label}: branch names must be unique; {b.name!r} appears twice"
                )
            seen.add(b.name)
        object.__setattr__(self, "branches", branches)
        n = len(branches)
        if self.fanout is None:
            fan = n
        else:
            fan = as_positive_int(self.fanout, f"{label}: fanout")
            if fan > n:
                raise InvalidModelError(
                    f"{label}: fanout must be between 1 and the number of branches n = {n}, "
                    f"got fanout={self.fanout!r}"
                )
            if fan < n and len({_branch_key(b) for b in branches}) > 1:
                raise InvalidModelError(
                    f"{label}: fanout={fan} < n={n} forks to a random subset of the branches, "
                    "which must then be identical (same demand, servers, rate_multipliers)"
                )  # fmt: skip
        object.__setattr__(self, "fanout", fan)
        if self.k is None:
            k = fan
        else:
            k = as_positive_int(self.k, f"{label}: k")
            if k > fan:
                raise InvalidModelError(
                    f"{label}: k must be between 1 and the number of branches a request "
                    f"forks to ({'fanout' if fan < n else 'n'} = {fan}), got k={self.k!r}"
                )
        object.__setattr__(self, "k", k)
        if not isinstance(self.cancel, bool):
            raise InvalidTypeError(f"{label}: cancel must be True or False, got {self.cancel!r}")

    @property
    def n(self) -> int:
        """Number of branches."""
        return len(self.branches)

    @property
    def busy_demand(self) -> float | dict[str, float]:
        """Busy time per request of the busiest branch, D_max fanout / n, seconds (per class
        when branches have per-class demands): a branch serves fanout / n of the requests."""
        share = self.fanout / len(self.branches)
        if not any(isinstance(b.demand, Mapping) for b in self.branches):
            return max(float(b.demand) for b in self.branches) * share
        classes = sorted({c for b in self.branches if isinstance(b.demand, Mapping)
                          for c in b.demand})  # fmt: skip
        return {c: max(b.demand_of(c) for b in self.branches) * share for c in classes}

    @property
    def branch_demands(self) -> np.ndarray:
        """Branch demands in branch order, seconds (a fresh float64 array; one class)."""
        if any(isinstance(b.demand, Mapping) for b in self.branches):
            raise InvalidModelError(
                f"ForkJoin {self.name!r} has per-class branch demands; the fork-join solver "
                "handles one class"
            )
        return np.array([b.demand for b in self.branches], dtype=np.float64)

    @property
    def per_class(self) -> bool:
        """True when some branch has per-class demands (then ``busy_demand`` is a mapping)."""
        return any(b.per_class for b in self.branches)

    def __repr__(self) -> str:
        rows = ", ".join(repr(b) for b in self.branches)
        join = "" if self.fanout == self.n else f", fanout={self.fanout}"
        join += "" if self.k == self.fanout else f", k={self.k}"
        return f"ForkJoin({self.name!r}, n={self.n}{join}: {rows})"
