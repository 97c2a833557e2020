"""An NFS client/server system: the paper's bandwidths plus protocol costs, as a network.

See :mod:`qnmodel.models.nfs` for the model and the references ([Cao07] secs. 2-3).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validate import (
    as_choice,
    as_cost_per_byte,
    as_hit_ratio,
    as_positive_int,
    as_quantity,
)
from ...errors import InvalidModelError, InvalidTypeError
from ...model import Network, Station
from .cache import NFSBandwidth, _harmonic, _out, _rate

__all__ = ["NFSSystem", "EXPORT_MODES", "OPERATIONS", "FORMS"]

#: export modes of the NFS server ([Cao07] sec. 3.1)
EXPORT_MODES = ("sync", "async")
#: file operations modelled
OPERATIONS = ("read", "write")
#: write-path forms: seed 001's pipelined min (``"paper"``) or transfer then commit
FORMS = ("paper", "corrected")


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
    server_disks : int
        Drives behind the server (>= 1, default 1), fed from the server's one queue of
        disk requests: the ``server_disk`` station has this many servers, each a drive
        of the ``b4`` and ``disk_access_time`` above (so one streaming client, one
        request at a time, is unchanged and many clients saturate at ``server_disks``
        times one drive). An M/M/d shared queue; drives each with its own queue, a
        request placed on one at random, wait longer (the one-of-k structure: d
        stations of 1/d of the demand).
    form : {"corrected", "paper"}
        The write path of one streaming client (:meth:`bandwidth` with
        ``op="write"``, :meth:`write_bandwidth`, :meth:`case_bandwidths`).
        ``"corrected"`` (default): the transfer, then the commit -- the WRITEs
        cross client, links and server CPU pipelined, at the slowest of those
        stages ``B_t``, into the server's page cache, and the server's disk
        writes the file only at the COMMIT on close, so per byte
        ``1/B_w = 1/B_t + 1/B_d`` (``B_d`` the disk stage): stages in series
        per request, as in the closed network :meth:`network` at N = 1
        (R(1) = the sum of the demands), which also puts the memory copies
        ``1/b1 + 1/b3`` in series. With zero protocol costs and memory far
        faster than the link both are ``1/(1/b2 + 1/b4)``.
        Measured on ``qnmodel testbed`` (nfs-ganesha, 1 MiB unstable WRITEs,
        timed through COMMIT and close, four link/disk pairs from 100 Mbit/s
        with a 6 MB/s disk to 1 Gbit/s with 250 MB/s,
        ``data/validation/nfs_writes_20261124.json``): within -3.8 .. +3.5 %,
        where ``"paper"`` misses by +25 .. +64 %. ``"paper"``: [Cao07] sec. 1
        as printed, the write path pipelined end to end, ``min(b1, b2, b3, b4)``
        with the protocol costs (the default up to version 0.1.0). Reads
        are the paper's in both forms (they pipeline on the testbed too), and
        so are the per-byte times, demands and the closed network.
    read_cpu_per_byte : float
        CPU time per byte of a remote READ's data outside the shared stations,
        s/byte (>= 0): the copies and checksums of the RPC's data path (the
        server's read into its reply, TCP send and receive, the client's XDR
        decode into the caller's buffer). It makes a READ's turnaround grow
        with its size (``c_c + e S`` for an S-byte request), which a constant
        ``client_cpu_per_request`` cannot. It is charged at the ``client``
        delay station (every client pays its own; on a machine with more
        cores than busy clients the work does not queue). Reads only; 0 (the
        default) is the model without it. Calibrate it bottom-up from READs
        served by the server's cache over loopback at two sizes, no shaped
        link (the slope of their response time,
        :func:`qnmodel.lab.validation._nfs_cpu.fit_line`).

    Notes
    -----
    Per byte of file data, the stations are busy for (``h_c``, ``h_s`` the
    read hit ratios, ``c_s``, ``c_c`` the per-request CPU times, ``a`` the
    disk access time):

    ==============  ===============================  ===================================
    station         read                             write (timed through close)
    ==============  ===============================  ===================================
    client          h_c/b1 + (1-h_c) (c_c/rsize + e) 1/b1 + c_c/wsize
    client_link     (1-h_c)/client_link              1/client_link
    network         (1-h_c)/b2                       1/b2
    server_cpu      (1-h_c) (c_s/rsize + 1/b3)       c_s/wsize + 1/b3
    server_disk     (1-h_c)(1-h_s)(1/b4 + a/rsize)   1/b4 + a/wsize (sync) or
                                                     1/b4 + a/async_merge_size (async)
    ==============  ===============================  ===================================

    (``e`` = ``read_cpu_per_byte``.) With all protocol costs zero and no client link
    these are exactly the
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
    form: str = "corrected"
    read_cpu_per_byte: float = 0.0
    server_disks: int = 1

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
        s(self, "server_disks", as_positive_int(self.server_disks, "server_disks", 1))
        as_choice(self.form, "form", FORMS)
        s(self, "read_cpu_per_byte", as_cost_per_byte(self.read_cpu_per_byte, "read_cpu_per_byte"))

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
        hc = as_hit_ratio(0.0 if client_hit is None else client_hit, "client_hit")
        hs = as_hit_ratio(0.0 if server_hit is None else server_hit, "server_hit")
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
        if op == "read":
            c_cli += self.read_cpu_per_byte
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
        for writes. With zero protocol costs the reads, and the write in the
        ``"paper"`` form, equal :meth:`NFSBandwidth.case_bandwidths`; the
        ``"corrected"`` write is the transfer then the commit (the class's
        ``form``).
        """
        as_choice(op, "op", OPERATIONS)
        out = {c: min(r.values()) for c, r in self._stage_rates(op).items()}
        if op == "write" and self.form == "corrected":
            out["write"] = self._transfer_then_commit(self._stage_rates(op)["write"])
        return out

    @staticmethod
    def _transfer_then_commit(rates: Mapping[str, float]) -> float:
        """Write bandwidth with the commit after the transfer, bytes/s (``form="corrected"``).

        ``1/B_w = 1/B_t + 1/B_d``: the transfer (client, client link, network,
        server CPU) runs at its slowest stage ``B_t``, pipelined as in [Cao07]
        sec. 1, into the server's page cache; the disk stage ``B_d`` writes
        the file at the COMMIT on close, after the transfer. It holds while
        the file fits in the server's dirty page cache: a server that writes
        back during the transfer overlaps the two and tends to the
        ``"paper"`` min. Measured error: class docstring (``form``).
        """
        transfer = min(v for k, v in rates.items() if k != "server_disk")
        return 1.0 / (1.0 / transfer + 1.0 / rates["server_disk"])

    def bandwidth(
        self, op: str = "read", client_hit: Any = None, server_hit: Any = None
    ) -> float | np.ndarray:
        """Bandwidth of one streaming client, bytes/s (the paper's model, time-weighted).

        Each read path runs at its slowest stage (stages pipelined within the
        stream), and the cases are time-weighted by the hit ratios as in
        :meth:`NFSBandwidth.bandwidth`, to which this reduces exactly when
        the protocol costs are zero. Writes are timed through ``close()``
        (the flush), in the class's ``form``: ``"corrected"`` the transfer
        then the commit, ``"paper"`` the slowest stage; see
        :meth:`write_bandwidth` for the clock stopped early.
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
        reaches the server's disk. ``form="corrected"`` (default): the
        transfer then the commit, ``1/(1/B_t + 1/B_d)``
        (``1/(1/b2 + 1/b4)`` with zero protocol costs and fast memory);
        ``form="paper"``: [Cao07]'s pipelined ``min(b1, b2, b3, b4)``.
        ``False``: what a benchmark that stops its clock
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
        disk with ``server_disks``); per-client stations never saturate in aggregate. ``inf`` when
        every read hits the client cache. This is the asymptote of
        :func:`qnmodel.models.nfs_network.aggregate_bandwidth` as the number
        of clients grows.
        """
        t = self.per_byte_times(op, client_hit, server_hit)
        shared = [
            np.asarray(t["network"]),
            np.asarray(t["server_cpu"]) / self.server_cpus,
            np.asarray(t["server_disk"]) / self.server_disks,
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
            "server_disk": t["server_disk"] / self.server_disks,
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
            client = hc * S / b.b1 + remote * (
                n_req * self.client_cpu_per_request + S * self.read_cpu_per_byte
            )
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
        (``server_cpus`` servers) and ``server_disk`` (queueing, ``server_disks``
        servers). The
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
                servers={"server_cpu": self.server_cpus, "server_disk": self.server_disks}.get(
                    k, 1
                ),
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
            "server_disks": self.server_disks,
            "form": self.form,
            "read_cpu_per_byte": self.read_cpu_per_byte,
        }
