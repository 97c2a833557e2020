"""Fork-join elements of the L1 description: a request forks into one sub-request per branch
and leaves when k of them have finished (striping, erasure-coded and degraded reads).

:class:`ForkJoin` is used wherever a :class:`~qnmodel.model.network.Station` is;
:func:`refuse_forkjoin` is the one check the solvers without fork-join support call.
Both are also importable from :mod:`qnmodel.model.network`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidModelError, InvalidTypeError
from .network import Station


def _branch_key(b: Station) -> tuple:
    """What makes two fork-join branches interchangeable (all but the name)."""
    d = tuple(sorted(b.demand.items())) if b.per_class else float(b.demand)
    r = None if b.rate_multipliers is None else tuple(float(v) for v in b.rate_multipliers)
    return (d, b.servers, r)


@dataclass(frozen=True)
class ForkJoin:
    """A fork-join element: a request forks into one sub-request per branch and joins.

    Usable wherever a :class:`Station` is, in ``Network(stations=[...])``. The request
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
    demand : float
        The largest branch demand D_max (s). :class:`Network` puts it in
        ``Network.demands``. For k = n every branch serves every sub-request, so
        by the utilisation law the busiest branch has utilisation X D_max and the
        bottleneck bound X <= 1 / D_max holds; for k < n cancellation shortens
        the busy time (``qnmodel.solvers.forkjoin.busy_per_request``). It is *not*
        the element's response time, even for one request: that is the mean of
        the k-th order statistic of the branch times (d H_n for n identical
        exponential branches of mean d and k = n).
    kind : str
        ``"forkjoin"``.

    Notes
    -----
    Solvers that do not model the join (``mva``, ``amva``, ``bounds``,
    ``mva_multiclass``) refuse a network holding a ForkJoin (:func:`refuse_forkjoin`);
    use :func:`qnmodel.fork_join`.

    Examples
    --------
    >>> fj = ForkJoin("stripe", [Station(f"m{i}", "5 ms") for i in range(4)])
    >>> fj.n, fj.k, fj.demand
    (4, 4, 0.005)
    """

    name: str
    branches: tuple[Station, ...]
    k: int | None = None
    cancel: bool = True
    fanout: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise InvalidTypeError(
                f"ForkJoin name must be a string, got {self.name!r} ({type(self.name).__name__})"
            )
        if not self.name.strip():
            raise InvalidModelError("ForkJoin name must be a non-empty string, got ''")
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
            if b.name in seen:
                raise InvalidModelError(
                    f"{label}: branch names must be unique; {b.name!r} appears twice"
                )
            seen.add(b.name)
        object.__setattr__(self, "branches", branches)
        n = len(branches)
        from .._validate import as_positive_int

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

    # Duck-typed like a Station so that Network builds its arrays unchanged.
    @property
    def n(self) -> int:
        """Number of branches."""
        return len(self.branches)

    @property
    def demand(self) -> float | dict[str, float]:
        """Largest branch demand D_max, seconds (per class when branches have per-class demands).

        With ``fanout < n`` a branch serves a fraction fanout / n of the requests, and the
        busy time per request, D_max fanout / n, is returned.
        """
        share = self.fanout / len(self.branches)
        if not self.per_class:
            return max(float(b.demand) for b in self.branches) * share
        classes = sorted({c for b in self.branches if b.per_class for c in b.demand})
        return {
            c: max(float(b.demand.get(c, 0.0)) if b.per_class else float(b.demand)
                   for b in self.branches) * share
            for c in classes
        }  # fmt: skip

    @property
    def branch_demands(self) -> np.ndarray:
        """Branch demands in branch order, seconds (a fresh float64 array; one class)."""
        if self.per_class:
            raise InvalidModelError(
                f"ForkJoin {self.name!r} has per-class branch demands; the fork-join solver "
                "handles one class"
            )
        return np.array([b.demand for b in self.branches], dtype=np.float64)

    @property
    def kind(self) -> str:
        return "forkjoin"

    @property
    def servers(self) -> int:
        return 1

    @property
    def is_delay(self) -> bool:
        return False

    @property
    def rate_multipliers(self) -> None:
        return None

    @property
    def is_load_dependent(self) -> bool:
        return False

    @property
    def per_class(self) -> bool:
        """True when some branch has per-class demands (then ``demand`` is a mapping)."""
        return any(b.per_class for b in self.branches)

    def __repr__(self) -> str:
        rows = ", ".join(f"{b.name}={b.demand:.6g}s" for b in self.branches)
        join = "" if self.fanout == self.n else f", fanout={self.fanout}"
        join += "" if self.k == self.fanout else f", k={self.k}"
        return f"ForkJoin({self.name!r}, n={self.n}{join}: {rows})"


def refuse_forkjoin(net: Any, solver: str) -> None:
    """Raise InvalidModelError if ``net`` holds a fork-join element ``solver`` cannot solve.

    The one check the solvers without fork-join support call (``mva``, ``amva``,
    ``bounds``, ``mva_multiclass``). Duck-typed on ``.branches`` so that any network
    type with a ``stations`` sequence works.
    """
    for s in getattr(net, "stations", ()) or ():
        if hasattr(s, "branches"):
            raise InvalidModelError(
                f"{solver} cannot solve station {s.name!r}: it is a fork-join element "
                f"(n={len(s.branches)}, k={s.k}) and {solver} has no join; use "
                "qnmodel.fork_join(net, N) (approximate fork-join MVA) or simulate the network"
            )
