"""Storage models described with their caches, and the upgrades a planner can buy for them.

A planner knows a cache's size, the working set and how skewed the requests are; the
storage models of the seed papers take hit ratios. :class:`CachedNetworkedRAID` and
:class:`CachedNFS` hold a model plus :class:`~qnmodel.models.cache.Cache` descriptions,
derive the hit ratios by Che's approximation ([Che02]), and list the single upgrades
(:meth:`capacity_candidates`) that :func:`qnmodel.best_upgrade` ranks:

* more cache: a cache of twice the size (the hit ratios recomputed);
* a faster link: the next standard Ethernet rate (100 Mbit/s -> 1 Gbit/s -> 10 Gbit/s
  ...), or ``speedup`` times the rate when the link is not at a standard rate;
* a faster device: the disk ``speedup`` times faster (seek and rotational latency
  divided, transfer rate multiplied), and the CPUs ``speedup`` times faster;
* one more server: a storage server more (NetworkedRAID: STP_m + 1) or a server CPU
  more (NFS).

Where the hit ratios enter
--------------------------
* Networked RAID ([Cui06], seed 002): the master cache hit rate P_m multiplies every
  remote term by (1 - P_m) (eqs. 2, 6-10); the storage-server hit rate P_sn takes the
  disk term by (1 - P_sn) (eq. 10). P_m is the master cache's hit ratio; P_sn is the
  hit ratio of the storage servers' caches for the requests that miss the master (the
  miss stream, [Che02]), the STP_m server caches together holding the striped working
  set as one cache of STP_m times the per-server size.
* NFS ([Cao07], seed 001): the client-cache hit ratio h_c and the server-cache hit
  ratio h_s of the requests that reach the server weight the paths b1, min(b2, b3) and
  min(b2, b3, b4) (the paper's three cases); h_s again comes from the miss stream of the
  client cache. Hit ratios apply to reads (writes are flushed through on close).

References
----------
.. [Che02] H. Che, Y. Tung, Z. Wang, "Hierarchical Web caching systems: modeling,
   design and experimental results", IEEE JSAC 20(7):1305-1314, 2002.
.. [Cui06] Cui B., Liu J., Wang G., Liu J., "Study on I/O response time bounds of network
   storage systems", Journal on Communications 27(1):69-74, 2006 (seed 002): eq. (2)
   D_Cm = T_mpro S_m/STU_m + (1 - P_m) T_mp IP_num, P_m the master's cache hit rate
   (1 - P_m the probability of going to the storage servers); eq. (10) the disk term
   with (1 - P_sn), P_sn the storage server's cache hit rate for reads.
.. [Cao07] Cao L., Luo H., Zhang X., "Measurement and analysis of factors affecting NFS
   bandwidth in cluster", Computer Engineering, 2007 (seed 001): sec. 1 and fig. 1, the
   three cases client-cache hit (b1), server-cache hit (min(b2, b3)), miss (min(b2, b4)).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .._validate import as_choice, as_quantity
from ..errors import InvalidModelError, InvalidTypeError
from ..model import Network
from ..units import format_quantity
from .cache import Cache
from .nfs import NFSBandwidth, NFSSystem
from .storage import NetworkedRAID

__all__ = ["CachedNetworkedRAID", "CachedNFS", "ETHERNET_RATES", "next_link_rate"]

#: standard Ethernet rates, bit/s (IEEE 802.3): the "next rate" of a link upgrade
ETHERNET_RATES = (10e6, 100e6, 1e9, 2.5e9, 5e9, 10e9, 25e9, 40e9, 50e9, 100e9, 200e9, 400e9)


def _bits(rate: float) -> str:
    bits = rate * 8.0
    for factor, sym in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if bits >= factor:
            return f"{bits / factor:g} {sym}"
    return f"{bits:g} bit/s"


def next_link_rate(rate: Any, speedup: float = 2.0) -> tuple[float, str]:
    """The upgrade of a link of ``rate`` (bytes/s): the next standard Ethernet rate.

    Returns ``(new_rate, label)``: the next rate of :data:`ETHERNET_RATES` when the link
    runs at one of them (``"link: 100 Mbit/s -> 1 Gbit/s"``), else ``speedup`` times the
    rate (``"link: 2x (... -> ...)"``).
    """
    r = as_quantity(rate, "link rate", "rate", positive=True)
    bits = r * 8.0
    for i, std in enumerate(ETHERNET_RATES[:-1]):
        if abs(bits - std) <= 1e-9 * std:
            new = ETHERNET_RATES[i + 1] / 8.0
            return new, f"link: {_bits(r)} -> {_bits(new)}"
    new = r * speedup
    return new, f"link: {speedup:g}x ({_bits(r)} -> {_bits(new)})"


def _cache(value: Any, name: str) -> Cache | None:
    if value is None or isinstance(value, Cache):
        return value
    raise InvalidTypeError(f"{name} must be a Cache or None, got {type(value).__name__}")


def _cache_label(name: str, cache: Cache, speedup: float = 2.0) -> str:
    if cache.item_size is None:
        new = f"{cache.size * speedup:g} items"
    else:
        new = format_quantity(cache.size * speedup, "size")
    return f"{name}: 2x ({new})"


@dataclass(frozen=True)
class CachedNetworkedRAID:
    """A :class:`~qnmodel.models.storage.NetworkedRAID` whose P_m and P_sn come from caches.

    Parameters
    ----------
    system : NetworkedRAID
        The system; its ``master_cache_hit`` / ``server_cache_hit`` are replaced by the
        hit ratios of the caches given (kept when a cache is None).
    master_cache : Cache, optional
        The master's cache over the job data (items e.g. of the stripe unit).
    server_cache : Cache, optional
        The cache of *one* storage server, over the same working set (module docstring).
    think_time : float or str
        Z of the closed network, seconds.

    Examples
    --------
    >>> raid = NetworkedRAID.cui2006(op="read")
    >>> m = CachedNetworkedRAID(raid, master_cache=Cache(500, 1000, "uniform"))
    >>> round(m.hit_ratios()["master_cache_hit"], 12)
    0.5
    """

    system: NetworkedRAID
    master_cache: Cache | None = None
    server_cache: Cache | None = None
    think_time: Any = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.system, NetworkedRAID):
            raise InvalidTypeError(
                f"system must be a NetworkedRAID, got {type(self.system).__name__}"
            )
        _cache(self.master_cache, "master_cache")
        _cache(self.server_cache, "server_cache")
        t = as_quantity(self.think_time, "think_time", "time")
        object.__setattr__(self, "think_time", t)

    def hit_ratios(self) -> dict[str, float]:
        """``master_cache_hit`` (P_m) and ``server_cache_hit`` (P_sn)."""
        s = self.system
        pm = s.master_cache_hit if self.master_cache is None else self.master_cache.hit_ratio
        if self.server_cache is None:
            psn = s.server_cache_hit
        elif self.master_cache is None:
            psn = self.server_cache.scaled(s.stripe_width).hit_ratio
        else:
            psn = self.master_cache.miss_stream_hit_ratio(self.server_cache, s.stripe_width)
        return {"master_cache_hit": float(pm), "server_cache_hit": float(psn)}

    def resolved(self) -> NetworkedRAID:
        """The NetworkedRAID with the caches' hit ratios in place."""
        return self.system.replace(**self.hit_ratios())

    def network(self) -> Network:
        """The paper's closed network ([Cui06] fig. 2) with the derived hit ratios."""
        return self.resolved().network(self.think_time)

    def capacity_candidates(self, speedup: float = 2.0) -> tuple[Network, list]:
        """The baseline network and ``[(label, network), ...]`` of single upgrades."""
        s = self.system
        out: list[tuple[str, Network]] = []

        def net(system: NetworkedRAID | None = None, **caches: Any) -> Network:
            m = dataclasses.replace(self, system=system or s, **caches)
            return m.network()

        if self.master_cache is not None:
            out.append(
                (
                    _cache_label("master cache", self.master_cache),
                    net(master_cache=self.master_cache.scaled(2.0)),
                )
            )
        if self.server_cache is not None:
            out.append(
                (
                    _cache_label("server cache", self.server_cache),
                    net(server_cache=self.server_cache.scaled(2.0)),
                )
            )
        rate, label = next_link_rate(s.link_rate, speedup)
        out.append((label, net(s.replace(link_rate=rate))))
        out.append(
            (
                f"disk: {speedup:g}x faster",
                net(
                    s.replace(
                        disk_seek=s.disk_seek / speedup,
                        disk_latency=s.disk_latency / speedup,
                        disk_rate=s.disk_rate * speedup,
                    )
                ),
            )
        )
        out.append(
            (
                f"master CPU: {speedup:g}x faster",
                net(
                    s.replace(
                        master_time_per_unit=s.master_time_per_unit / speedup,
                        master_time_per_packet=s.master_time_per_packet / speedup,
                    )
                ),
            )
        )
        out.append(
            (
                f"server CPU: {speedup:g}x faster",
                net(
                    s.replace(
                        server_time_per_unit=s.server_time_per_unit / speedup,
                        server_time_per_packet=s.server_time_per_packet / speedup,
                    )
                ),
            )
        )
        if s.raid != "raid1":
            out.append(
                (
                    f"one more storage server (STP_m = {s.stripe_width + 1})",
                    net(s.replace(stripe_width=s.stripe_width + 1)),
                )
            )
        return self.network(), out


@dataclass(frozen=True)
class CachedNFS:
    """An NFS system ([Cao07]) whose client and server hit ratios come from caches.

    Parameters
    ----------
    system : NFSSystem or NFSBandwidth
        The system (an :class:`NFSBandwidth` is wrapped in an :class:`NFSSystem` with
        zero protocol costs, the paper's model exactly).
    file_size : float or str
        Bytes one job (one client's file) transfers.
    op : {"read", "write"}
        Caches apply to reads; for writes give none (NFS flushes on close).
    client_cache, server_cache : Cache, optional
        The client's cache and the server's cache, over the same working set.
    think_time : float or str
        Z, seconds.
    """

    system: Any
    file_size: Any
    op: str = "read"
    client_cache: Cache | None = None
    server_cache: Cache | None = None
    think_time: Any = 0.0

    def __post_init__(self) -> None:
        s = object.__setattr__
        if isinstance(self.system, NFSBandwidth):
            s(self, "system", NFSSystem(self.system))
        if not isinstance(self.system, NFSSystem):
            raise InvalidTypeError(
                f"system must be an NFSSystem or NFSBandwidth, got {type(self.system).__name__}"
            )
        s(self, "file_size", as_quantity(self.file_size, "file_size", "size", positive=True))
        as_choice(self.op, "op", ("read", "write"))
        _cache(self.client_cache, "client_cache")
        _cache(self.server_cache, "server_cache")
        if self.op == "write" and (self.client_cache or self.server_cache):
            raise InvalidModelError(
                "caches apply to NFS reads: a write is flushed to the server on close "
                "([Cao07] sec. 2); give op='read' or no caches"
            )
        s(self, "think_time", as_quantity(self.think_time, "think_time", "time"))

    def hit_ratios(self) -> dict[str, float]:
        """``client_hit`` h_c and ``server_hit`` h_s (of the requests reaching the server)."""
        hc = 0.0 if self.client_cache is None else self.client_cache.hit_ratio
        if self.server_cache is None:
            hs = 0.0
        elif self.client_cache is None:
            hs = self.server_cache.hit_ratio
        else:
            hs = self.client_cache.miss_stream_hit_ratio(self.server_cache)
        return {"client_hit": float(hc), "server_hit": float(hs)}

    def bandwidth(self) -> float:
        """One client's bandwidth with these hit ratios ([Cao07]; :meth:`NFSSystem.bandwidth`)."""
        if self.op == "write":
            return float(self.system.bandwidth("write"))
        return float(self.system.bandwidth("read", **self.hit_ratios()))

    def network(self) -> Network:
        """The closed network of :meth:`NFSSystem.network` with the derived hit ratios."""
        hits = self.hit_ratios() if self.op == "read" else {}
        return self.system.network(self.file_size, self.op, think_time=self.think_time, **hits)

    def capacity_candidates(self, speedup: float = 2.0) -> tuple[Network, list]:
        """The baseline network and ``[(label, network), ...]`` of single upgrades."""
        sys_ = self.system
        bw = sys_.bandwidths
        out: list[tuple[str, Network]] = []

        def net(system: NFSSystem | None = None, **caches: Any) -> Network:
            return dataclasses.replace(self, system=system or sys_, **caches).network()

        def with_bw(**b: float) -> NFSSystem:
            return dataclasses.replace(sys_, bandwidths=dataclasses.replace(bw, **b))

        if self.client_cache is not None:
            out.append(
                (
                    _cache_label("client cache", self.client_cache),
                    net(client_cache=self.client_cache.scaled(2.0)),
                )
            )
        if self.server_cache is not None:
            out.append(
                (
                    _cache_label("server cache", self.server_cache),
                    net(server_cache=self.server_cache.scaled(2.0)),
                )
            )
        rate, label = next_link_rate(bw.b2, speedup)
        out.append((label, net(with_bw(b2=rate))))
        faster_disk = dataclasses.replace(
            with_bw(b4=bw.b4 * speedup), disk_access_time=sys_.disk_access_time / speedup
        )
        out.append((f"disk: {speedup:g}x faster", net(faster_disk)))
        faster_cpu = dataclasses.replace(
            with_bw(b3=bw.b3 * speedup),
            server_cpu_per_request=sys_.server_cpu_per_request / speedup,
        )
        out.append((f"server CPU: {speedup:g}x faster", net(faster_cpu)))
        out.append(
            (
                f"server CPUs: {sys_.server_cpus + 1}",
                net(dataclasses.replace(sys_, server_cpus=sys_.server_cpus + 1)),
            )
        )
        out.append(
            (
                f"server disks: {sys_.server_disks + 1}",
                net(dataclasses.replace(sys_, server_disks=sys_.server_disks + 1)),
            )
        )
        return self.network(), out
