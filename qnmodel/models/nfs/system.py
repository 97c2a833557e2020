"""NFS bandwidth: the cache-hit model of Cao et al. (2007), its protocol costs, and the USL.

Three layers, each reducing exactly to the one before it when its extra
parameters are zero:

:class:`NFSBandwidth`
    The paper's model ([Cao07] sec. 1, fig. 1). A request that hits the
    client cache runs at the client memory bandwidth ``b1``; one that misses
    there but hits the server cache at ``min(b2, b3)`` (network, server
    memory bus); one that misses both at ``min(b2, b3, b4)`` (``b4`` the
    server storage)::

        B_NFS = b1                 client-cache hit
                min(b2, b3)        server-cache hit   (= b2 when b3 >> b2)
                min(b2, b3, b4)    miss in both       (= min(b2, b4))

    For hit *ratios* the expected bandwidth is **time-weighted**: a byte
    costs ``1/b`` seconds on its path, the expected cost per byte is the
    hit-ratio-weighted mean of those times, and the bandwidth is its
    reciprocal (a weighted harmonic mean of the three case bandwidths):

        1/B = h_c/b1 + (1 - h_c) [h_s/min(b2, b3) + (1 - h_s)/min(b2, b3, b4)]

    with ``h_c`` the client hit ratio and ``h_s`` the server hit ratio of the
    requests that reach the server.

:class:`NFSSystem`
    Adds the protocol where it matters: ``rsize``/``wsize`` turn bytes into
    RPC requests (``1/rsize`` requests per byte), each costing
    ``server_cpu_per_request`` seconds of server CPU and
    ``client_cpu_per_request`` of client CPU; each disk request costs
    ``disk_access_time`` of positioning. The write path follows the paper's
    sec. 2: NFS flushes every dirty byte to the server when the file is
    closed, so a write's time includes the close and client-cache hits do
    not help; a ``"sync"`` export writes each ``wsize`` request to stable
    storage in arrival order, an ``"async"`` export may merge them into
    ``async_merge_size`` disk writes ([Cao07] sec. 3.1). The same per-byte
    times are the service demands of a closed network
    (:meth:`NFSSystem.network`): client and optional client link (one per
    client: delay stations), the shared network, the server CPU (with the
    server memory copy at ``b3``; ``server_cpus`` servers) and the server
    disk. One job is one whole file of ``nbytes``. Solving it
    (:mod:`qnmodel.models.nfs_network`) gives the concurrency effects; its
    saturation bandwidth is :meth:`NFSSystem.asymptotic_bandwidth`.

:class:`USL`
    Gunther's Universal Scalability Law
    ``X(N) = lam N / (1 + sigma (N - 1) + kappa N (N - 1))``, the form for
    measured aggregate curves that rise, peak and *fall* ([Cao07] fig. 5:
    a peak near 18 clients, then a collapse), which no product-form closed
    network can produce (its throughput never decreases with N). Evaluation
    lives here; fitting lives in :mod:`qnmodel.calibration`.

Units: rates in bytes/s, sizes in bytes, times in seconds; every argument
also accepts a unit string (``"940 Mbit/s"``, ``"32 KiB"``, ``"50 us"``).

How the three bandwidths relate
-------------------------------
For the same parameters, ``S / sum_k D_k`` (one client, one outstanding
request, no overlap) <= :meth:`NFSSystem.bandwidth` (one streaming client,
stages pipelined, the paper's model) <= the saturation bandwidth of the
shared stations :meth:`NFSSystem.asymptotic_bandwidth` (many clients).

References
----------
.. [Cao07] Cao L., Luo H., Zhang X., "Measurement and analysis of factors
   affecting NFS bandwidth in cluster" (集群环境中影响 NFS 文件系统带宽的测试与分析),
   Computer Engineering (计算机工程), 2007: sec. 1 and fig. 1 (bandwidth
   model), sec. 2 (write timing must include close), sec. 3.1 and table 1
   (server file system; sync vs async export), sec. 3.3 and table 2
   (rsize/wsize), sec. 3.4 and fig. 5 (aggregate bandwidth vs clients).
.. [Gun07] N. J. Gunther, *Guerrilla Capacity Planning*, Springer 2007,
   ch. 4 (the Universal Scalability Law; peak at N* = sqrt((1 - sigma)/kappa)).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_choice, as_positive_int, as_probability, as_quantity
from ..errors import InvalidModelError, InvalidTypeError
from ..network import Network, Station

__all__ = [
    "NFSBandwidth",
    "NFSSystem",
    "USL",
    "EXPORT_MODES",
    "OPERATIONS",
    "requests_for",
    "usl_throughput",
    "usl_peak_concurrency",
]

#: export modes of the NFS server ([Cao07] sec. 3.1)
EXPORT_MODES = ("sync", "async")
#: file operations modelled
OPERATIONS = ("read", "write")


# --------------------------------------------------------------------------- validation
def _as_hit_ratio(value: Any, name: str) -> float | np.ndarray:
    """A boolean (True = hit, False = miss) or a hit ratio in [0, 1]; arrays broadcast.

    Returns a float for scalars and a float64 array for array input.
    """
    if isinstance(value, bool | np.bool_):
        return 1.0 if value else 0.0
    if isinstance(value, numbers.Real):
        v = float(value)
        if not (0.0 <= v <= 1.0):  # also rejects NaN
            raise InvalidModelError(
                f"{name} must be a hit ratio in [0, 1], got {value!r}; a ratio is "
                "hits / requests (use 0.9, not 90)"
            )
        return v
    if isinstance(value, str) or value is None:
        raise InvalidTypeError(
            f"{name} must be a boolean or a hit ratio in [0, 1], got {value!r} "
            f"of type {type(value).__name__}"
        )
    arr = np.asarray(value)
    if arr.dtype == np.bool_:
        return arr.astype(np.float64)
    if arr.dtype.kind not in "iuf":
        raise InvalidTypeError(
            f"{name} must be booleans or hit ratios in [0, 1], got an array of dtype {arr.dtype}"
        )
    arr = arr.astype(np.float64)
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # NaN fails both comparisons
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"{name}[{', '.join(map(str, idx))}]" if idx else name
        raise InvalidModelError(
            f"{where} must be a hit ratio in [0, 1], got {float(arr[idx])!r}; a ratio is "
            "hits / requests (use 0.9, not 90)"
        )
    return arr


def _out(x: np.ndarray) -> float | np.ndarray:
    """A float for 0-d results, the array otherwise."""
    return float(x) if np.ndim(x) == 0 else x


def requests_for(nbytes: float | str, size: float | str, name: str = "size") -> int:
    """NFS RPC requests needed to move ``nbytes`` in requests of ``size`` bytes.

    ``ceil(nbytes / size)``: ``rsize``/``wsize`` turn bytes into requests, and
    every request pays the per-request costs of :class:`NFSSystem`
    ([Cao07] sec. 3.3).

    >>> requests_for("1 MiB", "32 KiB")
    32
    >>> requests_for(100_000, "32 KiB")
    4
    """
    s = as_quantity(nbytes, "nbytes", "size")
    r = as_quantity(size, name, "size", positive=True)
    return int(math.ceil(s / r))


# --------------------------------------------------------------------------- the paper's model
def _harmonic(weights: list[Any], times: list[Any], rates: list[Any]) -> float | np.ndarray:
    """1 / sum(w_i t_i), exact (the case rate itself) where one weight is 1."""
    total = sum(w * t for w, t in zip(weights, times, strict=True))
    with np.errstate(divide="ignore"):
        out = np.divide(1.0, total)
    out = np.asarray(out, dtype=np.float64)
    for w, r in zip(weights, rates, strict=True):
        out = np.where(np.asarray(w) == 1.0, r, out)
    return _out(out)


def _rate(b: float, extra: float) -> float:
    """Rate of a stage of bandwidth b (bytes/s) plus ``extra`` seconds per byte."""
    return b if extra == 0.0 else 1.0 / (1.0 / b + extra)


@dataclass(frozen=True)
class NFSBandwidth:
    """The three-case NFS bandwidth model of [Cao07] (sec. 1, fig. 1).

    Parameters
    ----------
    b1 : float or str
        Client memory-bus bandwidth, bytes/s (> 0): the rate of a request
        served from the client cache.
    b2 : float or str
        Network bandwidth between client and server, bytes/s (> 0).
    b3 : float or str
        Server memory-bus bandwidth, bytes/s (> 0).
    b4 : float or str
        Server storage bandwidth, bytes/s (> 0).

    Examples
    --------
    >>> m = NFSBandwidth("10 GB/s", "1 Gbit/s", "10 GB/s", "80 MB/s")
    >>> m.bandwidth(True, False) == m.b1
    True
    >>> m.bandwidth(False, True) / 1e6      # the network, b2
    125.0
    >>> m.bandwidth(False, False) / 1e6     # the disk, min(b2, b4)
    80.0
    >>> round(m.bandwidth(0.5, 0.0) / 1e6, 3)  # 1 / (0.5/b1 + 0.5/b4)
    158.73
    """

    b1: float
    b2: float
    b3: float
    b4: float

    def __post_init__(self) -> None:
        for name, what in (
            ("b1", "client memory bandwidth"),
            ("b2", "network bandwidth"),
            ("b3", "server memory bandwidth"),
            ("b4", "storage bandwidth"),
        ):
            v = as_quantity(getattr(self, name), f"{name} ({what})", "rate", positive=True)
            object.__setattr__(self, name, v)

    @property
    def client_hit_bandwidth(self) -> float:
        """b1, bytes/s: a client-cache hit."""
        return self.b1

    @property
    def server_hit_bandwidth(self) -> float:
        """min(b2, b3), bytes/s: a server-cache hit (the paper takes b3 >> b2, giving b2)."""
        return min(self.b2, self.b3)

    @property
    def miss_bandwidth(self) -> float:
        """min(b2, b3, b4), bytes/s: a miss in both caches (= min(b2, b4) when b3 >> b2)."""
        return min(self.b2, self.b3, self.b4)

    def case_bandwidths(self) -> dict[str, float]:
        """The three cases: ``{"client_hit": b1, "server_hit": ..., "miss": ...}``, bytes/s."""
        return {
            "client_hit": self.client_hit_bandwidth,
            "server_hit": self.server_hit_bandwidth,
            "miss": self.miss_bandwidth,
        }

    def bottleneck(self, client_hit: Any, server_hit: Any) -> str:
        """Name of the resource that limits a single case (booleans only).

        One of ``"b1"`` (client memory), ``"b2"`` (network), ``"b3"``
        (server memory), ``"b4"`` (storage); ties go to the earlier name.
        """
        if not isinstance(client_hit, bool | np.bool_) or not isinstance(
            server_hit, bool | np.bool_
        ):
            raise InvalidTypeError(
                "bottleneck() names the limit of one case: client_hit and server_hit must be "
                f"booleans, got {client_hit!r} and {server_hit!r}"
            )
        if client_hit:
            return "b1"
        path = {"b2": self.b2, "b3": self.b3}
        if not server_hit:
            path["b4"] = self.b4
        return min(path, key=path.__getitem__)

    def bandwidth(self, client_hit: Any, server_hit: Any) -> float | np.ndarray:
        """Expected NFS bandwidth, bytes/s, for client and server hits or hit ratios.

        Parameters
        ----------
        client_hit : bool, float or array_like
            ``True``/``False`` for one request, or the client-cache hit ratio
            h_c in [0, 1].
        server_hit : bool, float or array_like
            The server-cache hit ratio h_s in [0, 1] of the requests that miss
            the client cache (``True``/``False`` for one request).

        Returns
        -------
        float or ndarray
            ``1 / (h_c/b1 + (1-h_c) (h_s/min(b2,b3) + (1-h_s)/min(b2,b3,b4)))``,
            time-weighted ([Cao07] sec. 1 per case); the arguments broadcast.
            At h_c = 1, or h_c = 0 with h_s in {0, 1}, the case bandwidth is
            returned exactly.
        """
        hc = _as_hit_ratio(client_hit, "client_hit")
        hs = _as_hit_ratio(server_hit, "server_hit")
        hc, hs = np.broadcast_arrays(np.asarray(hc, dtype=np.float64), hs)
        rates = [self.client_hit_bandwidth, self.server_hit_bandwidth, self.miss_bandwidth]
        weights = [hc, (1.0 - hc) * hs, (1.0 - hc) * (1.0 - hs)]
        return _harmonic(weights, [1.0 / r for r in rates], rates)


# --------------------------------------------------------------------------- protocol + network
@dataclass(frozen=True)
class NFSSystem:
    """An NFS client/server system: the paper's bandwidths plus protocol costs.

    Parameters
    ----------
    bandwidths : NFSBandwidth
        b1..b4 of [Cao07] (bytes/s).
    rsize, wsize : float or str
        NFS read and write transfer sizes, bytes (> 0; mount options
        ``rsize``/``wsize``, [Cao07] sec. 3.3). A file of S bytes needs
        ``ceil(S/rsize)`` READ or ``ceil(S/wsize)`` WRITE requests.
    server_cpu_per_request : float or str
        Server CPU time per NFS request, seconds (>= 0): RPC decoding,
        file-system and export work ([Cao07] sec. 3.2).
    client_cpu_per_request : float or str
        Client CPU time per NFS request, seconds (>= 0).
    disk_access_time : float or str
        Positioning time per disk request (seek + rotation), seconds (>= 0).
    export : {"sync", "async"}
        ``"sync"``: the server writes each ``wsize`` request to stable storage
        in arrival order; ``"async"`` (``nosync``/``async`` export): it may
        merge writes into ``async_merge_size`` requests ([Cao07] sec. 3.1).
        Reads do not depend on it.
    async_merge_size : float or str
        Disk write size of an async export, bytes (> 0).
    client_link : float or str, optional
        Each client's own access link, bytes/s (> 0), when it is slower than
        or distinct from the shared network ``b2`` (the paper's clients had
        100 Mbit/s Ethernet, the server 1 GbE). ``None``: no separate link.
    server_cpus : int
        Server processors (>= 1): the server CPU station has this many servers.

    Notes
    -----
    Per byte of file data, the stations are busy for (``h_c``, ``h_s`` the
    read hit ratios, ``c_s``, ``c_c`` the per-request CPU times, ``a`` the
    disk access time):

    ==============  ===============================  ===================================
    station         read                             write (timed through close)
    ==============  ===============================  ===================================
    client          h_c/b1 + (1-h_c) c_c/rsize       1/b1 + c_c/wsize
    client_link     (1-h_c)/client_link              1/client_link
    network         (1-h_c)/b2                       1/b2
    server_cpu      (1-h_c) (c_s/rsize + 1/b3)       c_s/wsize + 1/b3
    server_disk     (1-h_c)(1-h_s)(1/b4 + a/rsize)   1/b4 + a/wsize (sync) or
                                                     1/b4 + a/async_merge_size (async)
    ==============  ===============================  ===================================

    With all protocol costs zero and no client link these are exactly the
    paths of :class:`NFSBandwidth`. The client and client link are private to
    each client (delay stations in :meth:`network`); the network, server CPU
    and server disk are shared.
    """

    bandwidths: NFSBandwidth
    rsize: float = 32768.0
    wsize: float = 32768.0
    server_cpu_per_request: float = 0.0
    client_cpu_per_request: float = 0.0
    disk_access_time: float = 0.0
    export: str = "sync"
    async_merge_size: float = 1048576.0
    client_link: float | None = None
    server_cpus: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.bandwidths, NFSBandwidth):
            raise InvalidTypeError(
                "bandwidths must be an NFSBandwidth(b1, b2, b3, b4), got "
                f"{type(self.bandwidths).__name__}"
            )
        s = object.__setattr__
        s(self, "rsize", as_quantity(self.rsize, "rsize", "size", positive=True))
        s(self, "wsize", as_quantity(self.wsize, "wsize", "size", positive=True))
        for name in ("server_cpu_per_request", "client_cpu_per_request", "disk_access_time"):
            s(self, name, as_quantity(getattr(self, name), name, "time"))
        as_choice(self.export, "export", EXPORT_MODES)
        s(
            self,
            "async_merge_size",
            as_quantity(self.async_merge_size, "async_merge_size", "size", positive=True),
        )
        if self.client_link is not None:
            s(
                self,
                "client_link",
                as_quantity(self.client_link, "client_link", "rate", positive=True),
            )
        s(self, "server_cpus", as_positive_int(self.server_cpus, "server_cpus", 1))

    # -- per-byte station times -------------------------------------------------------
    def _check_op(self, op: str, client_hit: Any, server_hit: Any) -> tuple[Any, Any]:
        as_choice(op, "op", OPERATIONS)
        if op == "write":
            if client_hit is not None or server_hit is not None:
                raise InvalidModelError(
                    "client_hit/server_hit apply to reads only: NFS flushes every written byte "
                    "to the server on close, so a timed write never completes in a cache; "
                    "leave them unset for op='write'"
                )
            return 0.0, 0.0
        hc = _as_hit_ratio(0.0 if client_hit is None else client_hit, "client_hit")
        hs = _as_hit_ratio(0.0 if server_hit is None else server_hit, "server_hit")
        return hc, hs

    def _stage_rates(self, op: str) -> dict[str, dict[str, float]]:
        """Rate (bytes/s) of each station on each path (case), without hit weights.

        A stage of bandwidth b with an extra cost e seconds per byte runs at
        ``1 / (1/b + e)``, and at exactly ``b`` when e = 0 (so the limiting
        cases reproduce the paper's bandwidths bit for bit); a stage with no
        cost at all has rate ``inf``.
        """
        b = self.bandwidths
        if op == "read":
            size, disk_size = self.rsize, self.rsize
        else:
            size = self.wsize
            disk_size = self.wsize if self.export == "sync" else self.async_merge_size
        c_cli = self.client_cpu_per_request / size
        remote = {"client": math.inf if c_cli == 0.0 else 1.0 / c_cli}
        if self.client_link is not None:
            remote["client_link"] = self.client_link
        remote["network"] = b.b2
        remote["server_cpu"] = _rate(b.b3, self.server_cpu_per_request / size)
        miss = dict(remote)
        miss["server_disk"] = _rate(b.b4, self.disk_access_time / disk_size)
        if op == "write":
            miss["client"] = _rate(b.b1, c_cli)
            return {"write": miss}
        return {"client_hit": {"client": b.b1}, "server_hit": remote, "miss": miss}

    def requests_per_byte(self, op: str = "read") -> float:
        """NFS requests per byte of file data: ``1/rsize`` for reads, ``1/wsize`` for writes."""
        as_choice(op, "op", OPERATIONS)
        return 1.0 / (self.rsize if op == "read" else self.wsize)

    def station_names(self) -> tuple[str, ...]:
        """Stations of :meth:`network`, in order."""
        names = ["client"]
        if self.client_link is not None:
            names.append("client_link")
        return (*names, "network", "server_cpu", "server_disk")

    def per_byte_times(
        self, op: str = "read", client_hit: Any = None, server_hit: Any = None
    ) -> dict[str, float | np.ndarray]:
        """Expected busy time per byte at each station, s/byte (see the class Notes table).

        These are the service demands per byte of file data; hit ratios
        broadcast. For ``op="write"`` leave the hit ratios unset.
        """
        hc, hs = self._check_op(op, client_hit, server_hit)
        paths = self._stage_rates(op)
        w = self._weights(op, hc, hs)
        out: dict[str, float | np.ndarray] = {}
        for k in self.station_names():
            out[k] = _out(np.asarray(sum(w[c] * (1.0 / paths[c].get(k, math.inf)) for c in paths)))
        return out

    @staticmethod
    def _weights(op: str, hc: Any, hs: Any) -> dict[str, Any]:
        if op == "write":
            return {"write": 1.0}
        hc, hs = np.broadcast_arrays(np.asarray(hc, dtype=np.float64), np.asarray(hs))
        return {"client_hit": hc, "server_hit": (1.0 - hc) * hs, "miss": (1.0 - hc) * (1.0 - hs)}

    # -- bandwidths -------------------------------------------------------------------
    def case_bandwidths(self, op: str = "read") -> dict[str, float]:
        """Streaming bandwidth of each path, bytes/s: 1 / (slowest stage's time per byte).

        Keys ``"client_hit"``, ``"server_hit"``, ``"miss"`` for reads, ``"write"``
        for writes. With zero protocol costs these equal
        :meth:`NFSBandwidth.case_bandwidths`.
        """
        as_choice(op, "op", OPERATIONS)
        return {c: min(r.values()) for c, r in self._stage_rates(op).items()}

    def bandwidth(
        self, op: str = "read", client_hit: Any = None, server_hit: Any = None
    ) -> float | np.ndarray:
        """Bandwidth of one streaming client, bytes/s (the paper's model, time-weighted).

        Each path runs at its slowest stage (stages pipelined within the
        stream), and the cases are time-weighted by the hit ratios as in
        :meth:`NFSBandwidth.bandwidth`, to which this reduces exactly when
        the protocol costs are zero. Writes are timed through ``close()``
        (the flush); see :meth:`write_bandwidth` for the clock stopped early.
        """
        hc, hs = self._check_op(op, client_hit, server_hit)
        w = self._weights(op, hc, hs)
        rates = self.case_bandwidths(op)
        if op == "write":
            return rates["write"]
        cases = list(rates)
        return _harmonic(
            [w[c] for c in cases], [1.0 / rates[c] for c in cases], list(rates.values())
        )

    def write_bandwidth(self, include_close: bool = True) -> float:
        """Write bandwidth of one client, bytes/s.

        ``include_close=True`` (the honest number, [Cao07] sec. 2): the time
        includes the flush on close, so every byte crosses the network and
        reaches the server. ``False``: what a benchmark that stops its clock
        before ``close()`` reports for a file that fits in the client cache:
        the copy into client memory, ``1 / (1/b1 + c_c/wsize)``.
        """
        if not isinstance(include_close, bool | np.bool_):
            raise InvalidTypeError(f"include_close must be True or False, got {include_close!r}")
        if include_close:
            return float(self.bandwidth("write"))
        return 1.0 / (1.0 / self.bandwidths.b1 + self.client_cpu_per_request / self.wsize)

    def asymptotic_bandwidth(
        self, op: str = "read", client_hit: Any = None, server_hit: Any = None
    ) -> float | np.ndarray:
        """Aggregate bandwidth of many clients, bytes/s: 1 / max over shared stations.

        The saturation bound ``1 / max_k (t_k / m_k)`` over the shared
        stations (network, server CPU with ``server_cpus`` servers, server
        disk); per-client stations never saturate in aggregate. ``inf`` when
        every read hits the client cache. This is the asymptote of
        :func:`qnmodel.models.nfs_network.aggregate_bandwidth` as the number
        of clients grows.
        """
        t = self.per_byte_times(op, client_hit, server_hit)
        shared = [
            np.asarray(t["network"]),
            np.asarray(t["server_cpu"]) / self.server_cpus,
            np.asarray(t["server_disk"]),
        ]
        worst = np.maximum.reduce(np.broadcast_arrays(*shared))
        with np.errstate(divide="ignore"):
            return _out(np.divide(1.0, worst))

    def bottleneck(self, op: str = "read", client_hit: Any = None, server_hit: Any = None) -> str:
        """The shared station with the largest per-server demand (scalar hit ratios)."""
        t = self.per_byte_times(op, client_hit, server_hit)
        if any(np.ndim(v) for v in t.values()):
            raise InvalidModelError("bottleneck() needs scalar hit ratios, got arrays")
        shared = {
            "network": t["network"],
            "server_cpu": t["server_cpu"] / self.server_cpus,
            "server_disk": t["server_disk"],
        }
        return max(shared, key=shared.__getitem__)

    # -- the closed network -----------------------------------------------------------
    def demands(
        self,
        nbytes: float | str,
        op: str = "read",
        client_hit: Any = None,
        server_hit: Any = None,
    ) -> dict[str, float]:
        """Service demand per job (one whole file of ``nbytes``) at each station, seconds.

        As :meth:`per_byte_times` times ``nbytes``, except that per-request
        costs count whole requests: ``ceil(nbytes/rsize)`` (or ``wsize``, or
        ``async_merge_size`` at an async export's disk). Hit ratios must be
        scalars here.
        """
        S = as_quantity(nbytes, "nbytes", "size", positive=True)
        hc, hs = self._check_op(op, client_hit, server_hit)
        if np.ndim(hc) or np.ndim(hs):
            raise InvalidModelError(
                "demands()/network() describe one network: give scalar hit ratios, not arrays"
            )
        b = self.bandwidths
        size = self.rsize if op == "read" else self.wsize
        n_req = math.ceil(S / size)
        if op == "read":
            n_disk = n_req
        else:
            n_disk = n_req if self.export == "sync" else math.ceil(S / self.async_merge_size)
        remote = 1.0 - hc  # fraction of bytes (and requests) that reach the server
        to_disk = remote * (1.0 - hs)
        if op == "read":
            client = hc * S / b.b1 + remote * n_req * self.client_cpu_per_request
        else:
            client = S / b.b1 + n_req * self.client_cpu_per_request
        d = {"client": client}
        if self.client_link is not None:
            d["client_link"] = remote * S / self.client_link
        d["network"] = remote * S / b.b2
        d["server_cpu"] = remote * (n_req * self.server_cpu_per_request + S / b.b3)
        d["server_disk"] = to_disk * (S / b.b4 + n_disk * self.disk_access_time)
        return {k: float(v) for k, v in d.items()}

    def network(
        self,
        nbytes: float | str,
        op: str = "read",
        client_hit: Any = None,
        server_hit: Any = None,
        think_time: float | str = 0.0,
    ) -> Network:
        """The closed network of this system: one job = one client transferring ``nbytes``.

        Stations (see :meth:`demands`): ``client`` and ``client_link``
        (delay: every client has its own), ``network``, ``server_cpu``
        (``server_cpus`` servers) and ``server_disk`` (queueing). The
        population is the number of clients; X(n) * nbytes is the aggregate
        bandwidth.
        """
        d = self.demands(nbytes, op, client_hit, server_hit)
        kinds = {"client": "delay", "client_link": "delay"}
        stations = [
            Station(
                k,
                v,
                kind=kinds.get(k, "queue"),
                servers=self.server_cpus if k == "server_cpu" else 1,
            )
            for k, v in d.items()
        ]
        return Network(tuple(stations), think_time=think_time)

    def to_dict(self) -> Mapping[str, Any]:
        """Parameters in SI units (for reports and tidy tables)."""
        b = self.bandwidths
        return {
            "b1": b.b1,
            "b2": b.b2,
            "b3": b.b3,
            "b4": b.b4,
            "rsize": self.rsize,
            "wsize": self.wsize,
            "server_cpu_per_request": self.server_cpu_per_request,
            "client_cpu_per_request": self.client_cpu_per_request,
            "disk_access_time": self.disk_access_time,
            "export": self.export,
            "async_merge_size": self.async_merge_size,
            "client_link": self.client_link,
            "server_cpus": self.server_cpus,
        }


# --------------------------------------------------------------------------- USL
def _usl_params(lam: Any, sigma: Any, kappa: Any) -> tuple[float, float, float]:
    lam_v = as_quantity(lam, "lam", "rate", positive=True)
    sigma_v = as_probability(sigma, "sigma")
    if not isinstance(kappa, numbers.Real) or isinstance(kappa, bool | np.bool_):
        raise InvalidTypeError(f"kappa must be a number >= 0, got {kappa!r}")
    kappa_v = float(kappa)
    if not (math.isfinite(kappa_v) and kappa_v >= 0.0):
        raise InvalidModelError(f"kappa (coherency) must be finite and >= 0, got {kappa!r}")
    return lam_v, sigma_v, kappa_v


def _as_concurrency(N: Any) -> np.ndarray:
    arr = np.asarray(N)
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise InvalidTypeError(f"N must be numbers >= 1 (clients), got {N!r}")
    arr = arr.astype(np.float64)
    bad = ~(arr >= 1.0) | ~np.isfinite(arr)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidModelError(f"N must be finite and >= 1 (clients), got {float(arr[idx])!r}")
    return arr


def usl_throughput(N: Any, lam: Any, sigma: Any, kappa: Any) -> float | np.ndarray:
    """Universal Scalability Law ([Gun07] ch. 4), broadcasting over ``N``.

    ``X(N) = lam N / (1 + sigma (N - 1) + kappa N (N - 1))``.

    Parameters
    ----------
    N : float or array_like
        Concurrency (clients, processes), >= 1.
    lam : float or str
        X(1), the throughput of one client (> 0), in the unit of X (a rate
        string such as ``"11 MB/s"`` is read as bytes/s).
    sigma : float
        Contention (serial fraction), in [0, 1].
    kappa : float
        Coherency (crosstalk) coefficient, >= 0; with kappa > 0 the curve
        peaks and then falls.
    """
    lam_v, s, k = _usl_params(lam, sigma, kappa)
    n = _as_concurrency(N)
    return _out(lam_v * n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0)))


def usl_peak_concurrency(sigma: Any, kappa: Any) -> float:
    """N* = sqrt((1 - sigma) / kappa), where X(N) of the USL peaks ([Gun07] ch. 4).

    ``inf`` when kappa = 0 (no retrograde region). Can be below 1 (sigma near
    1): then the best integer concurrency is 1.
    """
    _, s, k = _usl_params(1.0, sigma, kappa)
    if k == 0.0:
        return math.inf
    return math.sqrt((1.0 - s) / k)


@dataclass(frozen=True)
class USL:
    """Gunther's Universal Scalability Law with fixed coefficients.

    Attributes
    ----------
    lam : float
        X(1), throughput of one client (> 0), in the unit of X.
    sigma : float
        Contention, in [0, 1].
    kappa : float
        Coherency, >= 0.

    Examples
    --------
    >>> u = USL(lam=1.0, sigma=0.05, kappa=0.0029)
    >>> round(u.peak_concurrency, 2), u.peak_clients
    (18.1, 18)
    """

    lam: float
    sigma: float
    kappa: float

    def __post_init__(self) -> None:
        lam, s, k = _usl_params(self.lam, self.sigma, self.kappa)
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "sigma", s)
        object.__setattr__(self, "kappa", k)

    def throughput(self, N: Any) -> float | np.ndarray:
        """X(N), broadcasting over N (>= 1)."""
        return usl_throughput(N, self.lam, self.sigma, self.kappa)

    def efficiency(self, N: Any) -> float | np.ndarray:
        """X(N) / (N X(1)): the fraction of linear scaling achieved, in (0, 1]."""
        n = _as_concurrency(N)
        return _out(np.asarray(self.throughput(n)) / (self.lam * n))

    @property
    def peak_concurrency(self) -> float:
        """sqrt((1 - sigma) / kappa), the real-valued peak (``inf`` when kappa = 0)."""
        return usl_peak_concurrency(self.sigma, self.kappa)

    @property
    def peak_clients(self) -> int | float:
        """The integer N >= 1 with the largest X(N) (``inf`` when kappa = 0)."""
        p = self.peak_concurrency
        if math.isinf(p):
            return math.inf
        lo = max(1, math.floor(p))
        cands = [lo, lo + 1]
        xs = [float(self.throughput(c)) for c in cands]
        return cands[int(np.argmax(xs))]

    @property
    def max_throughput(self) -> float:
        """X at :attr:`peak_clients`; when kappa = 0, the limit lam / sigma (inf if sigma = 0)."""
        p = self.peak_clients
        if math.isinf(p):
            return math.inf if self.sigma == 0.0 else self.lam / self.sigma
        return float(self.throughput(p))
