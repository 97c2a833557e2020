"""Visit ratios and chains from a routing matrix, with class switching.

A routing matrix gives, for a job of class r that completes service at station i, the
probability P[(r, i), (s, j)] that it goes to station j as a class-s job: a 2-D (K, K) array
for one class, a 4-D (C, K, C, K) array P[r, i, s, j] for several (Octave's layout). Each
(class, station) pair is a state of the routing chain.

Closed networks
---------------
Every used row sums to 1 (a job is never lost). The states that jobs keep returning to
split into closed communicating sets: each is a **chain**, and the classes met in it belong
to it (classes switch into each other only within a chain; a class met in two chains is
refused). States outside every chain are transient: no job stays there, visit ratio 0. The
visit ratios solve the traffic equations V = V P on each chain ([BGMT] eq. 7.49; [RL80]),
normalised so that the classes of a chain visit its reference station once per cycle in
total: sum_{c in chain} V[c, ref] = 1.

They are the chain's stationary distribution, computed by the GTH state reduction
([GTH85]): only additions, multiplications and divisions of non-negative numbers (the
diagonal is never used), so every visit ratio has full relative precision however
ill-conditioned I - P is; O((C K)^3).

Open networks
-------------
Rows sum to at most 1 (the rest leaves the network); external arrivals lambda[c, k] enter
as class c at station k, and V = lambda / sum(lambda) + V P ([BGMT] eq. 7.14): visits per
job entering the network. A set of states reached by arrivals that no job can leave is
refused (the network would fill up).

References
----------
.. [BGMT] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and Markov
   Chains*, 2nd ed., Wiley 2006, sec. 7.1 (traffic equations, eqs. 7.14 and 7.49) and
   sec. 7.3 (chains, class switching).
.. [RL80] M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed multichain queuing
   networks", J. ACM 27(2):313-322, 1980 (chains of classes with class switching).
.. [GTH85] W. K. Grassmann, M. I. Taksar, D. P. Heyman, "Regenerative analysis and
   steady state distributions for Markov chains", Operations Research 33(5):1107-1116,
   1985, doi:10.1287/opre.33.5.1107.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .._validate import as_positive_int
from ..errors import InvalidModelError, InvalidTypeError
from ..results.network import VisitsResult

__all__ = ["compile_routing", "OUTSIDE", "visits_closed", "visits_open", "stationary_gth"]


def _routing(routing: Any) -> tuple[np.ndarray, int, int]:
    """The routing matrix as (n, n) with n = C K (state (c, k) -> c K + k), C and K."""
    if isinstance(routing, str):
        raise InvalidTypeError(f"routing must be a numeric matrix, got {routing!r}")
    try:
        P = np.array(routing, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidTypeError(f"routing must be a numeric matrix, got {routing!r:.80}") from None
    if P.ndim == 2 and P.shape[0] == P.shape[1] and P.shape[0] > 0:
        C, K = 1, P.shape[0]
    elif P.ndim == 4 and P.shape[:2] == P.shape[2:] and P.size > 0:
        C, K = P.shape[0], P.shape[1]
    else:
        raise InvalidModelError(
            f"routing must be a square (K, K) matrix or a (C, K, C, K) array P[r, i, s, j], "
            f"got shape {P.shape}"
        )
    bad = ~np.isfinite(P) | (P < 0)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidModelError(
            f"routing{list(idx)} must be a probability (finite, >= 0), got {float(P[idx])!r}"
        )
    return P.reshape(C * K, C * K), C, K


def _state(r: int, C: int, K: int) -> str:
    c, k = divmod(r, K)
    return f"station {k}" if C == 1 else f"class {c} at station {k}"


def _graph():
    """scipy's sparse graph tools, imported on first use (``import qnmodel`` loads no scipy)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    return csr_matrix, breadth_first_order, connected_components


def _tolerance(n: int) -> float:
    """Rounding allowed in a row sum of n probabilities (each rounded once, then summed)."""
    return 4.0 * n * np.finfo(float).eps


def stationary_gth(A: np.ndarray) -> np.ndarray:
    """Stationary vector (summing to 1) of an irreducible stochastic matrix, by GTH ([GTH85]).

    The diagonal is never read: the reduction divides by the off-diagonal row sums, so no
    probability is obtained by subtraction.
    """
    A = np.array(A, dtype=np.float64)
    n = A.shape[0]
    for k in range(n - 1, 0, -1):
        s = A[k, :k].sum()
        A[:k, k] /= s
        A[:k, :k] += np.outer(A[:k, k], A[k, :k])
    pi = np.zeros(n)
    pi[0] = 1.0
    for k in range(1, n):
        pi[k] = pi[:k] @ A[:k, k]
    return pi / pi.sum()


def _reference(reference: Any, C: int, K: int) -> np.ndarray:
    refs = np.atleast_1d(np.asarray(reference, dtype=object))
    if refs.ndim != 1 or refs.size not in (1, C):
        raise InvalidModelError(
            f"reference must be one station index or one per class ({C}), got {reference!r}"
        )
    out = np.empty(refs.size, dtype=np.int64)
    for i, r in enumerate(refs):
        name = "reference" if refs.size == 1 else f"reference[{i}]"
        v = as_positive_int(r, name, -(2**53))
        if not 0 <= v < K:
            raise InvalidModelError(
                f"{name} must be a station index in the range [0, {K - 1}], got {r!r}"
            )
        out[i] = v
    return np.broadcast_to(out, (C,)).copy()


def visits_closed(routing: Any, reference: Any = 0) -> VisitsResult:
    """Chains and visit ratios of a closed network from its routing matrix.

    Parameters
    ----------
    routing : array_like (K, K) or (C, K, C, K)
        P[i, j] (one class) or P[r, i, s, j]: probability that a class-r job leaving
        station i goes to station j as class s. Entries finite and >= 0; each row of a
        state that jobs reach sums to 1 (all-zero rows mark pairs never used).
    reference : int or array_like of int (C,)
        Reference station (0-based) of each class; the classes of a chain must share it.
        Default 0.

    Returns
    -------
    VisitsResult
        ``method="visits.closed"``: V (C, K) with sum_{c in chain} V[c, ref] = 1 per chain,
        ``chains`` (C,) (-1 for a class no job stays in) and ``reference`` per chain.

    Raises
    ------
    InvalidModelError
        A negative or non-finite entry; a used row that does not sum to 1 (naming class,
        station and sum); a class in two chains; a chain whose classes give different
        reference stations or that never visits its reference station.
    """
    M, C, K = _routing(routing)
    n = C * K
    sums = M.sum(axis=1)
    tol = _tolerance(n)
    inflow = M.sum(axis=0) - np.diag(M)
    for r in range(n):
        if sums[r] == 0.0:
            if inflow[r] > 0:
                src = int(np.flatnonzero(M[:, r])[0])
                raise InvalidModelError(
                    f"routing: {_state(r, C, K)} receives jobs (from {_state(src, C, K)}) but "
                    "its row sums to 0: a closed network loses no job, so the row must sum to 1"
                )
        elif abs(sums[r] - 1.0) > tol:
            raise InvalidModelError(
                f"routing: the row of {_state(r, C, K)} sums to {float(sums[r])!r}; in a closed "
                "network every used row sums to 1 (a job always goes somewhere)"
            )
    refs = _reference(reference, C, K)
    csr_matrix, _, connected_components = _graph()
    graph = csr_matrix(M > 0)
    ncomp, label = connected_components(graph, directed=True, connection="strong")
    closed = []
    for comp in range(ncomp):
        states = np.flatnonzero(label == comp)
        if sums[states[0]] == 0.0:
            continue  # an unused pair
        targets = np.flatnonzero(M[states].sum(axis=0) > 0)
        if np.isin(targets, states).all():
            closed.append(states)
    chain_of_class = np.full(C, -1, dtype=np.int64)
    closed.sort(key=lambda s: int(s.min()))  # chain 0 holds the lowest class, and so on
    for q, states in enumerate(closed):
        for c in sorted({int(s) // K for s in states}):
            if chain_of_class[c] >= 0:
                raise InvalidModelError(
                    f"routing: class {c} belongs to different chains ({chain_of_class[c]} and "
                    f"{q}): its jobs split into closed sets that never meet; give each set "
                    "its own class"
                )
            chain_of_class[c] = q
    V = np.zeros((C, K))
    chain_ref = np.empty(len(closed), dtype=np.int64)
    for q, states in enumerate(closed):
        members = np.flatnonzero(chain_of_class == q)
        ref_set = np.unique(refs[members])
        if ref_set.size > 1:
            raise InvalidModelError(
                f"the classes {members.tolist()} of chain {q} give different reference "
                f"stations {ref_set.tolist()}: a chain has one reference station"
            )
        ref = int(ref_set[0])
        pi = stationary_gth(M[np.ix_(states, states)])
        at_ref = states % K == ref
        if not at_ref.any():
            seen = sorted({int(s) % K for s in states})
            raise InvalidModelError(
                f"chain {q} (classes {members.tolist()}) never visits its reference station "
                f"{ref}: choose one of the stations it visits, {seen}"
            )
        V.flat[states] = pi / pi[at_ref].sum()
        chain_ref[q] = ref
    return VisitsResult(
        method="visits.closed", visits=V, chains=chain_of_class, reference=chain_ref
    )


def visits_open(routing: Any, arrival_rate: Any) -> VisitsResult:
    """Visit ratios of an open network: V = lambda / sum(lambda) + V P.

    Parameters
    ----------
    routing : array_like (K, K) or (C, K, C, K)
        As in :func:`visits_closed`, but each row sums to at most 1: the rest leaves.
    arrival_rate : array_like (K,) or (C, K)
        External arrivals lambda[c, k] >= 0, jobs/s (numbers; only their proportions
        matter), not all zero.

    Returns
    -------
    VisitsResult
        ``method="visits.open"``: V (C, K), visits per job entering the network
        ([BGMT] eq. 7.14); states no arrival reaches have V = 0.
    """
    M, C, K = _routing(routing)
    n = C * K
    try:
        lam = np.array(arrival_rate, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidTypeError(f"arrival_rate must be numbers, got {arrival_rate!r:.80}") from None
    want = (K,) if C == 1 and np.ndim(routing) == 2 else (C, K)
    if lam.shape != want:
        raise InvalidModelError(
            f"arrival_rate must have shape {want} (one rate per "
            f"{'station' if len(want) == 1 else 'class and station'}), got {lam.shape}"
        )
    lam = lam.reshape(n)
    bad = ~np.isfinite(lam) | (lam < 0)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise InvalidModelError(
            f"arrival_rate of {_state(r, C, K)} must be finite and >= 0, got {float(lam[r])!r}"
        )
    if lam.sum() <= 0:
        raise InvalidModelError("arrival_rate is all zero: an open network needs arrivals")
    sums = M.sum(axis=1)
    tol = _tolerance(n)
    over = sums > 1.0 + tol
    if over.any():
        r = int(np.flatnonzero(over)[0])
        raise InvalidModelError(
            f"routing: the row of {_state(r, C, K)} sums to {float(sums[r])!r} > 1; in an open "
            "network a row sums to at most 1 (the rest leaves the network)"
        )
    csr_matrix, breadth_first_order, connected_components = _graph()
    graph = csr_matrix(M > 0)
    reach = np.zeros(n, dtype=bool)
    for src in np.flatnonzero(lam > 0):
        if not reach[src]:
            reach[
                breadth_first_order(graph, int(src), directed=True, return_predecessors=False)
            ] = True
    idx = np.flatnonzero(reach)
    sub = M[np.ix_(idx, idx)]
    ncomp, label = connected_components(csr_matrix(sub > 0), directed=True, connection="strong")
    for comp in range(ncomp):
        states = np.flatnonzero(label == comp)
        leaks = sums[idx[states]] < 1.0 - tol
        exits = np.isin(np.flatnonzero(sub[states].sum(axis=0) > 0), states, invert=True).any()
        if not leaks.any() and not exits:
            raise InvalidModelError(
                f"routing: jobs that reach {_state(int(idx[states[0]]), C, K)} never leave the "
                "network (its states route only among themselves, rows summing to 1): "
                "give them a way out"
            )
    b = lam[idx] / lam.sum()
    v = np.linalg.solve((np.eye(idx.size) - sub).T, b)
    V = np.zeros(n)
    V[idx] = v
    return VisitsResult(method="visits.open", visits=V.reshape(C, K))


# -- the routing of a network description -------------------------------------------------------
#: the names of the node outside the stations: a closed class's terminals, where it thinks,
#: and an open class's source and sink
OUTSIDE = ("think", "source", "sink")


def compile_routing(routing: Any, names: tuple[str, ...], cnames: tuple[str, ...],
                    single: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The routing of a network description as ``(M, V, chains)``.

    ``routing`` maps a node to the nodes a job goes to when it leaves it, with their
    probabilities: without classes ``{station: {station: p}}``, with classes
    ``{(class, station): {(class, station): p}}`` (class switching where the classes differ).
    Nodes are the network's element names and the outside node (``"think"``, ``"source"`` or
    ``"sink"``, one node under three names): a closed class leaves its terminals through it
    and comes back to it at the end of each cycle; an open class enters from it and leaves to
    it. Every row a job can reach sums to 1.

    Returns ``M`` (C, K + 1, C, K + 1), the outside node at index K; ``V`` (C, K + 1), visits
    to each node per visit of the class's chain to the outside node (per cycle of a closed
    chain, per job of an open one; the classes of a chain visit the outside node once in
    total); ``chains`` (C,), the chain of each class (-1: no job ever is of this class).
    """
    if not isinstance(routing, dict):
        raise InvalidTypeError(
            f"routing must be a mapping {{node: {{node: probability}}}}, got "
            f"{type(routing).__name__}"
        )
    C, K = len(cnames), len(names)
    index = {n: k for k, n in enumerate(names)}
    clash = set(OUTSIDE) & set(names)
    if clash:
        raise InvalidModelError(
            f"station {sorted(clash)[0]!r}: with routing, {', '.join(map(repr, OUTSIDE))} name "
            "the node outside the stations; rename the station"
        )

    def node(key: Any, where: str) -> tuple[int, int]:
        if single:
            c, n = 0, key
        else:
            if not (isinstance(key, tuple) and len(key) == 2):
                raise InvalidTypeError(
                    f"routing {where} {key!r}: with classes, a node is a (class, station) pair"
                )
            cls, n = key
            if cls not in cnames:
                raise InvalidModelError(
                    f"routing {where} {key!r}: no class {cls!r}; classes are {list(cnames)}"
                )
            c = cnames.index(cls)
        if not isinstance(n, str) or (n not in index and n not in OUTSIDE):
            raise InvalidModelError(
                f"routing {where} {key!r}: {n!r} is neither a station "
                f"({', '.join(map(repr, names))}) nor the outside node ({', '.join(OUTSIDE)})"
            )
        return c, (K if n in OUTSIDE else index[n])

    M = np.zeros((C, K + 1, C, K + 1))
    for src, row in routing.items():
        c, i = node(src, "row")
        if not isinstance(row, dict):
            raise InvalidTypeError(
                f"routing[{src!r}] must be a mapping {{node: probability}}, got {row!r}"
            )
        for dst, p in row.items():
            s, j = node(dst, f"row {src!r}, destination")
            if (
                isinstance(p, bool)
                or not isinstance(p, int | float)
                or not (np.isfinite(p) and 0 <= p <= 1)
            ):
                raise InvalidModelError(
                    f"routing[{src!r}][{dst!r}] must be a probability in [0, 1], got {p!r}"
                )
            M[c, i, s, j] += float(p)
        total = M[c, i].sum()
        if abs(total - 1.0) > 1e-9:
            raise InvalidModelError(
                f"routing[{src!r}]: its probabilities sum to {float(total)!r}; every row sums to 1 "
                "(a job always goes somewhere: to a station or outside)"
            )
    for c in range(C):
        if M[c, K].sum() == 0 and M[:, :, c, :].sum() == 0:
            continue  # a class the routing never mentions: no jobs of it move
    label = (lambda c, k: f"{names[k] if k < K else 'outside'}" if single  # noqa: E731
             else f"({cnames[c]!r}, {names[k] if k < K else 'outside'!r})")  # fmt: skip
    try:
        res = visits_closed(M, reference=K)
    except InvalidModelError as exc:
        text = re.sub(r"class (\d+) at station (\d+)",
                      lambda m: label(int(m.group(1)), int(m.group(2))), str(exc))  # fmt: skip
        text = re.sub(r"station (\d+)", lambda m: label(0, int(m.group(1))), text)
        raise InvalidModelError(text) from None
    return M, np.array(res.visits), np.array(res.chains)
