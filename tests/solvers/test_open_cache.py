"""LRU hit ratio by Che's approximation (qnmodel.models.cache) against the exact uniform
value and a seeded LRU simulation."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

from qnmodel.errors import InvalidModelError, InvalidTypeError, UnitError
from qnmodel.models.cache import che_characteristic_time, lru_hit_ratio, popularity
from tests._tol import COPY


def _simulate_lru(q: np.ndarray, C: int, requests: int, seed: int) -> float:
    """Hit ratio of an LRU cache of C items under independent requests drawn from q
    (the first tenth of the requests warms the cache and is not counted)."""
    rng = np.random.default_rng(seed)
    stream = rng.choice(q.size, size=requests, p=q)
    cache: OrderedDict[int, None] = OrderedDict()
    hits = 0
    warm = requests // 10
    for t, item in enumerate(stream.tolist()):
        if item in cache:
            cache.move_to_end(item)
            hits += t >= warm
        else:
            cache[item] = None
            if len(cache) > C:
                cache.popitem(last=False)
    return hits / (requests - warm)


@pytest.mark.parametrize("C", [1, 10, 250, 999])
def test_uniform_popularity_gives_the_exact_lru_value(C):
    assert lru_hit_ratio(C, 1000, "uniform") == pytest.approx(C / 1000, rel=1e-11)


@pytest.mark.parametrize(("alpha", "C"), [(0.8, 50), (0.8, 200), (1.2, 20), (0.5, 300)])
def test_zipf_matches_an_lru_simulation(alpha, C):
    N, requests = 1000, 300_000
    h = lru_hit_ratio(C, N, "zipf", alpha=alpha)
    sim = _simulate_lru(popularity(N, "zipf", alpha), C, requests, seed=C)
    # binomial standard error < 1e-3 at 2.7e5 counted requests; Che's error ~ 1e-3 ([FRR12])
    assert h == pytest.approx(sim, abs=5e-3)  # measured |h - sim| <= 2.2e-3


def test_characteristic_time_solves_its_equation():
    q = popularity(5000, "zipf", 0.9)
    for C in (1.0, 37.5, 4999.0):
        T = che_characteristic_time(q, C)
        assert -np.expm1(-q * T).sum() == pytest.approx(C, rel=1e-11)


def test_sizes_with_units_and_edge_cases():
    a = lru_hit_ratio("64 MiB", "1 GiB", "zipf", 0.8, item_size="4 KiB")
    b = lru_hit_ratio(16384, 262144, "zipf", 0.8)
    # the units convert to the same integers (powers of two): the same computation
    assert a == pytest.approx(b, rel=COPY)
    assert lru_hit_ratio(2000, 1000) == 1.0
    assert lru_hit_ratio(0, 1000) == 0.0
    assert 0.0 < lru_hit_ratio(10, 1000, alpha=0.0) == pytest.approx(0.01, rel=1e-11)
    with pytest.raises(InvalidTypeError, match="give item_size for bytes"):
        lru_hit_ratio("64 MiB", 1000)
    with pytest.raises(UnitError, match="item_size"):
        lru_hit_ratio(1, 10, item_size="4 ms")
    with pytest.raises(InvalidModelError, match="less than one item"):
        lru_hit_ratio(1, 0.5)
    with pytest.raises(InvalidModelError, match="popularity must be one of"):
        lru_hit_ratio(1, 10, "pareto")
