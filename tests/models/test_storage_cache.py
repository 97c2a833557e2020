"""Caches described by size, working set and popularity (qnmodel.models.cache.Cache) feeding
the storage models of seeds 001 and 002, and the upgrades best_upgrade ranks for them."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError
from qnmodel.models.cache import Cache, lru_hit_ratio, popularity
from qnmodel.models.nfs import NFSBandwidth, NFSSystem
from qnmodel.models.storage import NetworkedRAID
from qnmodel.models.storage_cache import (
    CachedNetworkedRAID,
    CachedNFS,
    next_link_rate,
)

from .._tol import closed_form, gamma

#: Che's hit ratio comes from a bisection of the characteristic time T to a relative width of
#: 1e-13 (|T - T*| <= 0.5e-13 T; dh/h <= dT/T) whose filled-cache sum of N = 1000 terms rounds
#: by gamma_N: 1.6e-13. A second cache fed by the first's misses nests two (measured 2.9e-14).
CHE = 0.5e-13 + gamma(1000)


def _two_level_lru(q: np.ndarray, C1: int, C2: int, requests: int, seed: int):
    """Hit ratios of an LRU cache of C1 items and, behind it, one of C2 items fed by its
    misses (the first tenth of the requests warms both and is not counted)."""
    rng = np.random.default_rng(seed)
    stream = rng.choice(q.size, size=requests, p=q)
    lower: OrderedDict[int, None] = OrderedDict()
    upper: OrderedDict[int, None] = OrderedDict()
    warm = requests // 10
    hits1 = misses1 = hits2 = 0
    for t, item in enumerate(stream.tolist()):
        count = t >= warm
        if item in lower:
            lower.move_to_end(item)
            hits1 += count
            continue
        misses1 += count
        lower[item] = None
        if len(lower) > C1:
            lower.popitem(last=False)
        if item in upper:
            upper.move_to_end(item)
            hits2 += count
        else:
            upper[item] = None
            if len(upper) > C2:
                upper.popitem(last=False)
    return hits1 / (requests - warm), hits2 / misses1


def test_cache_hit_ratio_is_lru_hit_ratio():
    c = Cache("64 MiB", "1 GiB", "zipf", 0.8, item_size="4 KiB")
    assert c.hit_ratio == pytest.approx(
        lru_hit_ratio(16384, 262144, "zipf", 0.8), rel=closed_form(1)
    )
    assert Cache(250, 1000, "uniform").hit_ratio == pytest.approx(0.25, rel=CHE)
    assert Cache(2000, 1000).hit_ratio == 1.0
    assert Cache(100, 1000).scaled(2).items_in_cache == 200


@pytest.mark.parametrize(("alpha", "C1", "C2"), [(0.8, 50, 200), (1.0, 20, 100)])
def test_miss_stream_hit_ratio_matches_a_two_level_lru_simulation(alpha, C1, C2):
    N = 1000
    lower, upper = Cache(C1, N, "zipf", alpha), Cache(C2, N, "zipf", alpha)
    h1, h2 = _two_level_lru(popularity(N, "zipf", alpha), C1, C2, 300_000, seed=C1)
    assert lower.hit_ratio == pytest.approx(h1, abs=5e-3)
    # Che's approximation applied to the filtered stream ([Che02]); measured error +2.5 and
    # +0.7 points (the miss stream is not an independent reference stream: it overestimates)
    assert lower.miss_stream_hit_ratio(upper) == pytest.approx(h2, abs=0.03)
    assert lower.miss_stream_hit_ratio(upper) >= h2


def test_uniform_miss_stream_keeps_its_uniform_hit_ratio():
    # every item hits the lower cache with probability C1/N, so the misses stay uniform
    assert Cache(250, 1000, "uniform").miss_stream_hit_ratio(
        Cache(500, 1000, "uniform")
    ) == pytest.approx(0.5, rel=2 * CHE)
    # three shards of 100 items act as one cache of 300
    assert Cache(250, 1000, "uniform").miss_stream_hit_ratio(
        Cache(100, 1000, "uniform"), shards=3
    ) == pytest.approx(0.3, rel=2 * CHE)
    with pytest.raises(InvalidModelError, match="same working set"):
        Cache(1, 10).miss_stream_hit_ratio(Cache(1, 20))


# -- bad input: one test each --------------------------------------------------------------
def test_negative_cache_size_is_refused():
    with pytest.raises(InvalidModelError, match=r"cache size.*>= 0, got -5"):
        Cache(-5, 100)
    with pytest.raises(InvalidModelError, match=r"cache size.*>= 0, got '-1 GiB'"):
        Cache("-1 GiB", "10 GiB", item_size="4 KiB")


def test_working_set_below_one_item_is_refused():
    with pytest.raises(InvalidModelError, match="working_set must hold at least one item, got 0.5"):
        Cache(0, 0.5)
    with pytest.raises(InvalidModelError, match="at least one item, got 2048.0 bytes of 4096"):
        Cache(0, "2 KiB", item_size="4 KiB")


@pytest.mark.parametrize("alpha", [0, -0.5])
def test_zipf_alpha_not_positive_is_refused(alpha):
    with pytest.raises(
        InvalidModelError,
        match=rf"alpha \(Zipf exponent\) must be (> 0|finite and >= 0), got {alpha}",
    ):
        Cache(10, 100, "zipf", alpha)


# -- hit ratios into the models ------------------------------------------------------------
def test_networked_raid_takes_P_m_and_P_sn_from_its_caches():
    raid = NetworkedRAID.cui2006(op="read", form="paper")
    m = CachedNetworkedRAID(
        raid,
        master_cache=Cache(250, 1000, "uniform"),
        server_cache=Cache(100, 1000, "uniform"),
    )
    h = m.hit_ratios()
    assert h["master_cache_hit"] == pytest.approx(0.25, rel=CHE)
    assert h["server_cache_hit"] == pytest.approx(0.3, rel=2 * CHE)  # 3 servers x 100 items
    d = m.resolved().demands()
    d0 = raid.demands()
    # eq. (9): D_Net = (1 - P_m) S_m / TRate_e; eq. (10): D_d carries (1 - P_m)(1 - P_sn)
    assert d["network"] == pytest.approx(0.75 * d0["network"], rel=1e-10)
    assert d["disk"] == pytest.approx(0.75 * 0.7 * d0["disk"], rel=1e-10)
    # the default (corrected) form scales its link and disk stations the same way
    c = CachedNetworkedRAID(raid.replace(form="corrected"), m.master_cache, m.server_cache)
    dc, dc0 = c.resolved().demands(), raid.replace(form="corrected").demands()
    assert dc["link_in"] == pytest.approx(0.75 * dc0["link_in"], rel=1e-10)
    assert dc["disk"] == pytest.approx(0.75 * 0.7 * dc0["disk"], rel=1e-10)


def test_nfs_bandwidth_from_its_caches():
    bw = NFSBandwidth("10 GB/s", "1 Gbit/s", "10 GB/s", "80 MB/s")
    c = CachedNFS(
        bw,
        "1 MiB",
        client_cache=Cache(250, 1000, "uniform"),
        server_cache=Cache(500, 1000, "uniform"),
    )
    assert c.hit_ratios() == pytest.approx({"client_hit": 0.25, "server_hit": 0.5}, rel=2 * CHE)
    by_hand = 1 / (0.25 / 10e9 + 0.75 * (0.5 / 125e6 + 0.5 / 80e6))  # [Cao07], time-weighted
    assert c.bandwidth() == pytest.approx(by_hand, rel=2 * CHE + closed_form(8))
    with pytest.raises(InvalidModelError, match="caches apply to NFS reads"):
        CachedNFS(bw, "1 MiB", op="write", client_cache=Cache(1, 10))


def test_next_link_rate():
    assert next_link_rate("100 Mbit/s") == (125e6, "link: 100 Mbit/s -> 1 Gbit/s")
    assert next_link_rate("10 Gbit/s")[0] == 25e9 / 8
    assert next_link_rate("300 Mbit/s") == (75e6, "link: 2x (300 Mbit/s -> 600 Mbit/s)")


# -- upgrades with known answers -----------------------------------------------------------
S, STU, MSS, FRAME = 200e6, 16384, 1460, 1518  # the test bed of [Cui06] sec. 4 (reads)
T_MPRO, T_MP = 0.027e-3, 0.045e-3


def test_link_bound_raid_gets_the_faster_link_first():
    """No cache: the master NIC and the network are the largest demands, so the link wins."""
    raid = NetworkedRAID.cui2006(op="read", form="paper")
    d = raid.demands()
    packets = math.ceil(S / MSS)  # eq. (3)
    assert d["network"] == pytest.approx(S / 12.5e6, rel=1e-12)  # eq. (9): 16 s
    assert d["nic_master"] == pytest.approx(packets * FRAME / 12.5e6, rel=1e-12)  # eq. (7)
    assert max(d, key=d.get) == "nic_master"
    up = qn.best_upgrade(CachedNetworkedRAID(raid), N=10)
    assert up.best == "link: 100 Mbit/s -> 1 Gbit/s"
    # at 1 Gbit/s the link demands drop tenfold and the disk (11.3 s) limits: R(10) is
    # the exact MVA of the hand-computed demands
    hand = dict(d, network=S / 125e6, nic_master=packets * FRAME / 125e6)
    hand["nic_server"] = d["nic_server"] / 10
    R = qn.mva(qn.Network.from_demands(list(hand.values())), 10).response_time[-1]
    assert up.response_time[0] == pytest.approx(R, rel=1e-9)


def test_cache_bound_raid_gets_more_cache_first():
    """Master cache holding half the working set (uniform): P_m = 0.5; doubled it holds all
    of it, P_m = 1, and only the master's per-unit CPU time remains (eq. 2), in either form."""
    raid = NetworkedRAID.cui2006(op="read", form="paper")
    model = CachedNetworkedRAID(raid, master_cache=Cache(500, 1000, "uniform"))
    up = qn.best_upgrade(model, N=10)
    assert up.best == "master cache: 2x (1000 items)"
    d_left = T_MPRO * S / STU  # D_Cm at P_m = 1, the only demand left
    assert up.response_time[0] == pytest.approx(10 * d_left, rel=1e-9)  # one queue, Z = 0
    assert up.baseline_response_time == pytest.approx(
        qn.mva(raid.replace(P_m=0.5).network(), 10).response_time[-1], rel=1e-9
    )
    assert up.options[1].startswith("link")
    corrected = qn.best_upgrade(
        CachedNetworkedRAID(raid.replace(form="corrected"), master_cache=model.master_cache),
        N=10,
    )
    assert corrected.best == "master cache: 2x (1000 items)"
    assert corrected.response_time[0] == pytest.approx(10 * d_left, rel=1e-9)


def test_disk_bound_nfs_gets_the_faster_disk_first():
    nfs = NFSSystem(NFSBandwidth("10 GB/s", "1 Gbit/s", "10 GB/s", "80 MB/s"))
    model = CachedNFS(nfs, "1 MiB", client_cache=Cache(100, 1000, "uniform"))
    up = qn.best_upgrade(model, N=30, target="p95 <= 1 s")
    assert up.best == "disk: 2x faster" and up.metric == "p95"
    assert "client cache: 2x (200 items)" in up.options
    # the disk demand 0.9 * 2^20 / 80e6 s is the bottleneck; twice faster it is 0.9 * 2^20 / 160e6
    assert model.network().station("server_disk").demand == pytest.approx(
        0.9 * 2**20 / 80e6, rel=CHE + closed_form(3)
    )
