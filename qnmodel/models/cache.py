"""Cache hit ratios from what planners know: cache size, working set, popularity.

Che's approximation for an LRU cache ([Che02]; analysed by [FRR12]): under the
independent reference model, item i is requested with probability q_i per request
(sum_i q_i = 1). An LRU cache of C items behaves as if every item stayed for a
deterministic *characteristic time* T_C after its last request, T_C being the root of

    sum_i (1 - exp(-q_i T_C)) = C                                       ([Che02] eq. 3)

(the expected number of distinct items requested within T_C requests fills the
cache). Item i then hits with probability h_i = 1 - exp(-q_i T_C), and the overall
hit ratio is h = sum_i q_i h_i. For uniform popularity it gives h = C / N, the exact
LRU value; for Zipf-like popularity its error is below a per cent in practice
([FRR12] sec. 4; checked against an LRU simulation in the tests).

References
----------
.. [Che02] H. Che, Y. Tung, Z. Wang, "Hierarchical Web caching systems: modeling,
   design and experimental results", IEEE J. Selected Areas in Communications
   20(7):1305-1314, 2002, doi:10.1109/JSAC.2002.801752.
.. [FRR12] C. Fricker, P. Robert, J. Roberts, "A versatile and accurate approximation
   for LRU cache performance", 24th International Teletraffic Congress (ITC 24), 2012,
   arXiv:1202.3974.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._validate import as_choice, as_positive_int, as_quantity
from ..errors import InvalidModelError, InvalidTypeError

__all__ = ["popularity", "che_characteristic_time", "lru_hit_ratio", "Cache", "POPULARITIES"]

POPULARITIES = ("uniform", "zipf")


def _number(value: Any, name: str) -> float:
    """A plain finite number >= 0 (no unit applies)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InvalidTypeError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise InvalidModelError(f"{name} must be finite and >= 0, got {value!r}")
    return v


def popularity(n_items: int, kind: str = "zipf", alpha: float = 0.8) -> np.ndarray:
    """Request probabilities q_1 >= ... >= q_N (sum 1): uniform, or Zipf q_i ~ i^-alpha."""
    n_items = as_positive_int(n_items, "n_items")
    as_choice(kind, "popularity", POPULARITIES)
    if kind == "uniform":
        return np.full(n_items, 1.0 / n_items)
    alpha = _number(alpha, "alpha")
    w = np.arange(1, n_items + 1, dtype=np.float64) ** -alpha
    return w / w.sum()


def che_characteristic_time(q: np.ndarray, C: float) -> float:
    """T_C with sum_i (1 - exp(-q_i T_C)) = C, for 0 < C < number of items with q_i > 0.

    The left side increases strictly from 0 to the number of items with q_i > 0, so
    bisection on log T (to a relative width of 1e-13) finds the root; ``expm1``
    keeps full precision for small q_i T.
    """
    q = np.asarray(q, dtype=np.float64)

    def filled(T: float) -> float:
        return float(-np.expm1(-q * T).sum())

    lo, hi = 1e-300, 1.0
    while filled(hi) < C:
        lo, hi = hi, hi * 2.0
        if hi > 1e300:  # pragma: no cover - C >= number of items is rejected before
            raise InvalidModelError("characteristic time diverges: the cache holds every item")
    lo = max(lo, hi / 2.0 if hi > 1.0 else 1e-300)
    while hi - lo > 1e-13 * hi:
        mid = math.sqrt(lo * hi) if hi / lo > 4.0 else 0.5 * (lo + hi)
        if filled(mid) < C:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def lru_hit_ratio(
    cache_size: Any,
    working_set: Any,
    popularity_kind: str = "zipf",
    alpha: float = 0.8,
    item_size: Any = None,
) -> float:
    """Hit ratio of an LRU cache by Che's approximation.

    Parameters
    ----------
    cache_size, working_set : int, float or str
        Cache capacity and the set of items requested, in items, or in bytes
        (numbers or size strings such as ``"4 GiB"``) when ``item_size`` is given.
    popularity_kind : {"zipf", "uniform"}
        Request popularity over the working set.
    alpha : float
        Zipf exponent (>= 0; 0 is uniform).
    item_size : int, float or str, optional
        Size of one item (``"4 KiB"``); sizes are then divided by it.

    Returns
    -------
    float
        h in [0, 1]: 1 when the cache holds the whole working set.
    """
    if item_size is not None:
        b = as_quantity(item_size, "item_size", "size", positive=True)
        C = as_quantity(cache_size, "cache_size", "size") / b
        N = as_quantity(working_set, "working_set", "size", positive=True) / b
    else:
        C = _number(cache_size, "cache_size (items; give item_size for bytes)")
        N = _number(working_set, "working_set (items; give item_size for bytes)")
    n_items = int(math.floor(N))
    if n_items < 1:
        raise InvalidModelError(f"working_set holds less than one item ({N:.6g})")
    if C >= n_items:
        return 1.0
    if C == 0:
        return 0.0
    q = popularity(n_items, popularity_kind, alpha)
    T = che_characteristic_time(q, C)
    return float(np.dot(q, -np.expm1(-q * T)))


# --------------------------------------------------------------------------- a described cache
@dataclass(frozen=True)
class Cache:
    """An LRU cache as a planner describes it: its size, the working set, the popularity.

    Parameters
    ----------
    size : int, float or str
        Cache capacity (>= 0): items, or bytes (``"4 GiB"``) when ``item_size`` is given.
    working_set : int, float or str
        The data requested (at least one item): items, or bytes with ``item_size``.
    popularity : {"zipf", "uniform"}
        Request popularity over the working set (independent reference model).
    alpha : float
        Zipf exponent, > 0 (q_i ~ i^-alpha); ignored for ``"uniform"``.
    item_size : int, float or str, optional
        Size of one cached item (a block, a stripe unit, a file), bytes.

    Notes
    -----
    :attr:`hit_ratio` is Che's approximation ([Che02] eq. 3; module docstring).
    :meth:`miss_stream_hit_ratio` gives the hit ratio of a second cache (a server
    behind this client, a storage server behind a master) fed by the requests that
    miss this one: item i reaches it at the rate q_i (1 - h_i), and Che's
    approximation is applied to that filtered stream -- the hierarchical use that
    [Che02] introduced it for.

    Examples
    --------
    >>> round(Cache(250, 1000, "uniform").hit_ratio, 12)   # exact for LRU: C / N
    0.25
    >>> round(Cache("64 MiB", "1 GiB", "zipf", 0.8, item_size="4 KiB").hit_ratio, 3)
    0.409
    """

    size: Any
    working_set: Any
    popularity: str = "zipf"
    alpha: float = 0.8
    item_size: Any = None

    def __post_init__(self) -> None:
        s = object.__setattr__
        as_choice(self.popularity, "cache popularity", POPULARITIES)
        if self.item_size is not None:
            b = as_quantity(self.item_size, "cache item_size", "size", positive=True)
            s(self, "item_size", b)
            s(self, "size", as_quantity(self.size, "cache size", "size"))
            s(self, "working_set", as_quantity(self.working_set, "cache working_set", "size"))
        else:
            s(self, "size", _number(self.size, "cache size (items; give item_size for bytes)"))
            s(
                self,
                "working_set",
                _number(self.working_set, "cache working_set (items; give item_size for bytes)"),
            )
        if self.items_in_working_set < 1:
            raise InvalidModelError(
                f"cache working_set must hold at least one item, got {self.working_set!r}"
                + ("" if self.item_size is None else f" bytes of {self.item_size:g}-byte items")
            )
        if self.popularity == "zipf":
            a = _number(self.alpha, "cache alpha (Zipf exponent)")
            if a <= 0:
                raise InvalidModelError(
                    f"cache alpha (Zipf exponent) must be > 0, got {self.alpha!r}; "
                    "use popularity='uniform' for equally popular items"
                )
            s(self, "alpha", a)

    @property
    def items_in_cache(self) -> float:
        """C, the capacity in items."""
        return self.size / (self.item_size or 1.0)

    @property
    def items_in_working_set(self) -> int:
        """N, whole items in the working set."""
        return int(math.floor(self.working_set / (self.item_size or 1.0) + 1e-9))

    def probabilities(self) -> np.ndarray:
        """q_1 >= ... >= q_N, the request probabilities."""
        return popularity(self.items_in_working_set, self.popularity, self.alpha)

    def item_hit_probabilities(self, q: np.ndarray | None = None) -> np.ndarray:
        """h_i = 1 - exp(-q_i T_C) for request probabilities q (default: this cache's)."""
        q = self.probabilities() if q is None else np.asarray(q, dtype=np.float64)
        C = self.items_in_cache
        if C >= np.count_nonzero(q > 0):
            return (q > 0).astype(np.float64)
        if C == 0:
            return np.zeros_like(q)
        T = che_characteristic_time(q, C)
        return -np.expm1(-q * T)

    @property
    def hit_ratio(self) -> float:
        """h = sum_i q_i h_i, Che's approximation of the LRU hit ratio."""
        if self.items_in_cache >= self.items_in_working_set:
            return 1.0
        if self.items_in_cache == 0:
            return 0.0
        q = self.probabilities()
        return float(min(max(np.dot(q, self.item_hit_probabilities(q)), 0.0), 1.0))

    def miss_stream_hit_ratio(self, upper: Cache | None, shards: int = 1) -> float:
        """Hit ratio of ``upper`` for the requests that miss this cache ([Che02]).

        ``upper`` must describe the same items (working set, popularity, item size).
        ``shards`` > 1: ``upper`` is one of that many equal caches, each holding the
        items striped to it (every shard sees the same popularity profile), which act
        together as one cache of ``shards`` times its size.

        The miss stream is treated as an independent reference stream, which it is not
        (an item that just missed below is likely to be above): the approximation
        overestimates. Measured against a two-level LRU simulation (N = 1000 items, Zipf):
        +2.5 points (alpha 0.8, 50 then 200 items) and +0.7 points (alpha 1, 20 then 100);
        with an upper cache no larger than the lower one it fails (alpha 0.8, 100 and 100
        items: 0.160 against 0.028 simulated) -- size upper caches above the lower ones.
        """
        if upper is None:
            return 0.0
        if not isinstance(upper, Cache):
            raise InvalidTypeError(f"upper must be a Cache, got {type(upper).__name__}")

        def key(c: Cache) -> tuple:
            return (c.items_in_working_set, c.popularity, c.alpha if c.popularity == "zipf" else 0)

        if key(upper) != key(self):
            raise InvalidModelError(
                "the two cache levels must describe the same working set and popularity; got "
                f"{self.items_in_working_set} vs {upper.items_in_working_set} items, "
                f"{self.popularity}/{self.alpha} vs {upper.popularity}/{upper.alpha}"
            )
        q = self.probabilities()
        rate = q * (1.0 - self.item_hit_probabilities(q))
        if rate.sum() <= 0.0:
            return 0.0
        qs = rate / rate.sum()
        total = replace(upper, size=upper.size * as_positive_int(shards, "shards"))
        return float(min(max(np.dot(qs, total.item_hit_probabilities(qs)), 0.0), 1.0))

    def scaled(self, factor: float) -> Cache:
        """The same cache with ``factor`` times the capacity."""
        return replace(self, size=self.size * float(factor))

    def describe(self) -> str:
        """``"64 MiB LRU over 1 GiB, zipf(0.8)"``-style text."""
        from ..units import format_quantity

        if self.item_size is None:
            size, ws = f"{self.size:g} items", f"{self.working_set:g} items"
        else:
            size, ws = format_quantity(self.size, "size"), format_quantity(self.working_set, "size")
        pop = "uniform" if self.popularity == "uniform" else f"zipf({self.alpha:g})"
        return f"{size} LRU over {ws}, {pop}"
