"""The networked-RAID storage system of Cui et al. (2006) as a closed queueing network.

A storage-centre ("master") server builds software RAID (RAID5 in the paper)
over disks that ``STP_m`` remote storage servers export through an IP block
protocol (ENBD). A job reads or writes ``S_m`` bytes; it visits six stations
(paper fig. 2): master CPU, master NIC, the network, storage-server NIC,
storage-server CPU and the storage-server disk. :class:`NetworkedRAID`
holds the parameters under readable names, computes each station's demand
with the formulas of :mod:`qnmodel.demands` (paper eqs. 2-10) and builds
the :class:`~qnmodel.model.network.Network` that the solvers bound (eq. 1, BJB)
or solve exactly (MVA).

Parameter names and the paper's symbols
---------------------------------------
=======================  ========  ==========  =========================================
field                    symbol    unit        meaning
=======================  ========  ==========  =========================================
job_size                 S_m       bytes       bytes one job reads or writes
stripe_unit              STU_m     bytes       stripe unit (chunk) of the master's RAID
stripe_width             STP_m     units       stripe units per stripe = storage servers
master_cache_hit         P_m       [0, 1]      master cache hit rate
server_cache_hit         P_sn      [0, 1]      storage-server cache hit rate (reads)
master_time_per_unit     T_mpro    s           master CPU time per stripe unit
master_time_per_packet   T_mp      s           master protocol time per IP packet
server_time_per_unit     T_snpro   s           server CPU time per stripe unit
server_time_per_packet   T_snp     s           server protocol time per IP packet
mss                      MSS       bytes       TCP maximum segment size
frame_size               Frame_e   bytes       Ethernet frame size on the wire
link_rate                TRate_e   bytes/s     Ethernet rate
disk_seek                seek      s           mean seek time
disk_latency             latency   s           mean rotational latency
disk_rate                TRate_d   bytes/s     disk sustained transfer rate
=======================  ========  ==========  =========================================

Plain numbers are always SI (bytes, seconds, bytes/s); strings must carry a
unit (``"100 Mbit/s"``, ``"16 KiB"``, ``"4.9 ms"``). A bit rate therefore
cannot be mistaken for a byte rate: ``12.5e6`` or ``"100 Mbit/s"``, never
``100``; ``"100 Mb/s"`` is rejected as ambiguous.

Readings where the paper is ambiguous
-------------------------------------
* ``server_terms``: eqs. (6), (8), (10) multiply one server's share (S_sn,
  IP_snum) by (1 - P_m)/STP_m. ``"paper"`` (default) keeps this as printed;
  ``"one_server"`` drops the 1/STP_m (each server does its share of every
  job); ``"all_servers"`` lumps all servers' work into one station. See
  :func:`qnmodel.demands.raid_bytes.server_visit_ratio`.
* ``form``: ``"corrected"`` (default; the master NIC and the network are one
  pipelined stage and each link direction is its own station, and a RAID5 write smaller
  than a stripe is a read-modify-write: :mod:`qnmodel.models.storage_corrected`, within
  3.5 % MAPE of X(N) on ``qnmodel testbed`` where the printed form misses by 20-23 %) or
  ``"paper"``: eqs. 2-10 as printed, which reproduces the paper's worked example and
  figures (the default up to version 0.1.0).
* ``network(expand_servers=True)`` builds STP_m server branches (NIC, CPU,
  disk each) instead of the paper's single one.
* ``network(structure="forkjoin")`` forks each job over the STP_m storage
  servers and joins when all have returned (a full-stripe access), solved by
  :meth:`NetworkedRAID.fork_join` (approximate fork-join MVA); the default
  ``"paper"`` keeps fig. 2. ``fork_join(N, structure="forkjoin_overlap")`` moves the master's
  data link into the fork (:mod:`qnmodel.models.storage_forkjoin`).
* The test bed's "35 Mbit/s" disk rate, "200 MB" job and "16 KB" stripe unit:
  :meth:`NetworkedRAID.cui2006` takes an explicit reading of each
  (``data/reference/cui2006.json`` documents them).

References
----------
.. [Cui06] Cui B., Liu J., Wang G., Liu J., "Study on I/O response time bounds
   of network storage systems" (网络存储系统 I/O 响应时间边界性能研究),
   Journal on Communications (通信学报) 27(1):69-74, 2006.
.. [Chen] Chen X., Liu Y., Gao P., Xu J., NVMe SSD and Intel VROC RAID tests
   (seed 003), table 1: the theoretical speedups behind ``disk_array``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import demands as _d
from .._validate import as_choice
from ..errors import InvalidModelError, InvalidTypeError
from ..model import ForkJoin, Network, Station
from ..results.closed import BoundsResult, MVAResult
from ..solvers.bounds import bounds as _solve_bounds
from ..solvers.forkjoin import ForkJoinResult
from ..solvers.forkjoin import fork_join as _solve_fork_join
from ..solvers.mva import mva as _solve_mva
from .raid import disk_demand_multipliers
from .storage_corrected import corrected_demands, corrected_intermediates
from .storage_forkjoin import FORKJOIN_STRUCTURES, overlap_fork_join
from .storage_params import (  # the paper's parameters and formulas (re-exported here)
    CHOICES,
    CUI2006,
    PARAMETERS,
    STATIONS,
    SYMBOLS,
    _field_name,
    _normalise,
    networked_raid_demands,
    networked_raid_intermediates,
)

__all__ = [
    "NetworkedRAID",
    "PARAMETERS",
    "SYMBOLS",
    "STATIONS",
    "STRUCTURES",
    "CUI2006",
    "networked_raid_demands",
]

#: network structures: the paper's stations, or a fork-join over the storage servers
STRUCTURES = ("paper", "forkjoin")


@dataclass(frozen=True)
class NetworkedRAID:
    """Networked RAID storage (seed 002): parameters -> demands -> closed network.

    Every size, time and rate accepts a plain number in SI units (bytes,
    seconds, bytes/s) or a string with a unit (``"16 KiB"``, ``"0.027 ms"``,
    ``"100 Mbit/s"``); values are stored in SI. The module docstring maps
    each field to the paper's symbol.

    Parameters
    ----------
    job_size : float or str
        S_m, bytes per job (> 0).
    stripe_unit : float or str
        STU_m, bytes (> 0).
    stripe_width : int
        STP_m, stripe units per stripe, one per storage server; >= 2 for
        raid5 and raid10, >= 3 for raid6, == 2 for raid1, >= 1 for raid0.
    master_time_per_unit, master_time_per_packet : float or str
        T_mpro, T_mp: master CPU time per stripe unit and per IP packet, s (>= 0).
    server_time_per_unit, server_time_per_packet : float or str
        T_snpro, T_snp: storage-server CPU times, s (>= 0).
    link_rate : float or str
        TRate_e, bytes/s (> 0); write bit rates with their unit, ``"100 Mbit/s"``.
    disk_seek, disk_latency : float or str
        Mean seek and rotational latency, s (>= 0).
    disk_rate : float or str
        TRate_d, sustained disk rate, bytes/s (> 0).
    mss : float or str
        MSS, bytes (> 0); default 1460 B (Ethernet, IPv4, no TCP options).
    frame_size : float or str
        Frame_e, bytes (>= mss); default 1518 B (maximum untagged Ethernet frame).
    master_cache_hit : float
        P_m in [0, 1]; default 0 (the paper's writes).
    server_cache_hit : float
        P_sn in [0, 1]; default 0. The paper defines it for reads and takes 0
        for writes; it is applied as given for either operation.
    raid : {"raid5", "raid0", "raid1", "raid10", "raid6"}
        RAID level built by the master (byte factor: :func:`qnmodel.demands.raid_byte_factor`).
    op : {"write", "read"}
        Operation of every job.
    server_terms : {"paper", "one_server", "all_servers"}
        Reading of the storage-server terms (module docstring).
    form : {"corrected", "paper"}
        Demand composition. ``"corrected"`` (default): the testbed-corrected one of
        :mod:`qnmodel.models.storage_corrected`, stations ``cpu_master, link_out, link_in,
        cpu_server, disk``. ``"paper"``: [Cui06] eqs. 2-10 as printed, stations
        ``cpu_master, nic_master, network, nic_server, cpu_server, disk``; use it to
        reproduce the paper's numbers (the default up to version 0.1.0).

    Examples
    --------
    >>> sys = NetworkedRAID.cui2006(op="write")
    >>> sys.form, sys.network().names
    ('corrected', ('cpu_master', 'link_out', 'link_in', 'cpu_server', 'disk'))
    >>> paper = NetworkedRAID.cui2006(op="write", form="paper")
    >>> round(paper.demands()["network"], 6)
    24.0
    """

    job_size: float
    stripe_unit: float
    stripe_width: int
    master_time_per_unit: float
    master_time_per_packet: float
    server_time_per_unit: float
    server_time_per_packet: float
    link_rate: float
    disk_seek: float
    disk_latency: float
    disk_rate: float
    mss: float = 1460.0
    frame_size: float = 1518.0
    master_cache_hit: float = 0.0
    server_cache_hit: float = 0.0
    raid: str = "raid5"
    op: str = "write"
    server_terms: str = "paper"
    form: str = "corrected"

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, _normalise(f.name, getattr(self, f.name)))
        minimum = _d.MIN_STRIPE_WIDTH[self.raid]
        if self.stripe_width < minimum or (self.raid == "raid1" and self.stripe_width != 2):
            rule = "== 2" if self.raid == "raid1" else f">= {minimum}"
            raise InvalidModelError(
                f"stripe_width (STP_m) must be {rule} for {self.raid}, got {self.stripe_width}"
            )
        if self.frame_size < self.mss:
            raise InvalidModelError(
                f"frame_size (Frame_e) must be >= mss (MSS): a frame carries a segment plus "
                f"headers; got frame_size={self.frame_size!r}, mss={self.mss!r} bytes"
            )

    # -- constructors -----------------------------------------------------------------
    @classmethod
    def from_symbols(
        cls,
        *,
        S_m: Any,
        STU_m: Any,
        STP_m: Any,
        T_mpro: Any,
        T_mp: Any,
        T_snpro: Any,
        T_snp: Any,
        MSS: Any,
        Frame_e: Any,
        TRate_e: Any,
        seek: Any,
        latency: Any,
        TRate_d: Any,
        P_m: Any = 0.0,
        P_sn: Any = 0.0,
        raid: str = "raid5",
        op: str = "write",
        server_terms: str = "paper",
        form: str = "corrected",
    ) -> NetworkedRAID:
        """Build from the paper's own symbols ([Cui06] sec. 3.2), in SI units.

        Numbers are bytes, seconds and bytes/s (so ``TRate_e=12.5e6`` for
        100 Mbit/s); strings with units are accepted as in the constructor.
        ``form="paper"`` gives the paper's demand composition (eqs. 2-10 as printed).
        """
        values = dict(
            S_m=S_m, STU_m=STU_m, STP_m=STP_m, P_m=P_m, P_sn=P_sn, T_mpro=T_mpro, T_mp=T_mp,
            T_snpro=T_snpro, T_snp=T_snp, MSS=MSS, Frame_e=Frame_e, TRate_e=TRate_e,
            seek=seek, latency=latency, TRate_d=TRate_d,
        )  # fmt: skip
        kw = {SYMBOLS[k]: v for k, v in values.items()}
        return cls(**kw, raid=raid, op=op, server_terms=server_terms, form=form)

    @classmethod
    def cui2006(
        cls,
        op: str = "write",
        readings: Mapping[str, str] | None = None,
        **overrides: Any,
    ) -> NetworkedRAID:
        """The paper's test bed ([Cui06] sec. 4), with explicit readings of its ambiguous units.

        Parameters
        ----------
        op : {"write", "read"}
            The paper's figs. 3-8 are writes.
        readings : mapping, optional
            Paper symbol -> reading, for the three values printed ambiguously
            (see :data:`CUI2006` and ``data/reference/cui2006.json``):

            * ``"TRate_d"``: ``"datasheet"`` (default; 35 MB/s, the drive's
              class of sustained rate) or ``"as_printed"`` (35 Mbit/s =
              4.375 MB/s);
            * ``"S_m"``: ``"decimal"`` (default; 200 MB = 200e6 B) or
              ``"binary"`` (200 MiB);
            * ``"STU_m"``: ``"binary"`` (default; 16 KiB, md chunk sizes are
              powers of two) or ``"decimal"`` (16 kB).
        **overrides
            Any field (readable name or paper symbol) to change, e.g.
            ``link_rate="1 Gbit/s"`` or ``P_m=0.5``.
        """
        return cls._from_reference_dict(CUI2006, op=op, readings=readings, overrides=overrides)

    @classmethod
    def from_reference(
        cls,
        path: str | Path,
        op: str | None = None,
        readings: Mapping[str, str] | None = None,
        **overrides: Any,
    ) -> NetworkedRAID:
        """Build from a reference file such as ``data/reference/cui2006.json``.

        The file's ``parameters`` map paper symbols to ``{"value": ...}`` or
        to ``{"readings": {name: value}, "default": name}``; ``op``, ``raid``
        ``server_terms`` and ``form`` come from the file unless given. Values are
        numbers (SI) or strings with units.
        """
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InvalidModelError(f"cannot read reference file {str(path)!r}: {exc}") from None
        return cls._from_reference_dict(doc, op=op, readings=readings, overrides=overrides)

    @classmethod
    def _from_reference_dict(cls, doc, op, readings, overrides) -> NetworkedRAID:
        if not isinstance(doc, Mapping) or "parameters" not in doc:
            raise InvalidModelError("a reference document needs a 'parameters' object")
        readings = dict(readings or {})
        params = doc["parameters"]
        for sym in readings:
            if sym not in params or "readings" not in params[sym]:
                ambiguous = [s for s, e in params.items() if "readings" in e]
                raise InvalidModelError(
                    f"readings: {sym!r} has no alternative readings; choose among {ambiguous}"
                )
        kw: dict[str, Any] = {}
        for sym, entry in params.items():
            name = _field_name(sym)
            if "readings" in entry:
                choice = readings.get(sym, entry["default"])
                if choice not in entry["readings"]:
                    raise InvalidModelError(
                        f"readings[{sym!r}] must be one of {list(entry['readings'])}, "
                        f"got {choice!r}"
                    )
                kw[name] = entry["readings"][choice]
            else:
                kw[name] = entry["value"]
        for key in ("raid", "server_terms", "form"):
            if key in doc:
                kw[key] = doc[key]
        kw["op"] = op if op is not None else doc.get("op", "write")
        for key, value in overrides.items():
            kw[_field_name(key)] = value
        return cls(**kw)

    @staticmethod
    def field_name(key: str) -> str:
        """The field name of a field name or paper symbol: ``"TRate_e"`` -> ``"link_rate"``."""
        return _field_name(key)

    @staticmethod
    def normalise(key: str, value: Any) -> Any:
        """One field's value in SI (units parsed, domain checked), without cross-field checks.

        ``key`` is a field name or paper symbol: ``normalise("TRate_e", "1 Gbit/s") == 125e6``.
        """
        return _normalise(_field_name(key), value)

    def replace(self, **changes: Any) -> NetworkedRAID:
        """A copy with some fields changed (readable names or paper symbols).

        Values follow the constructor's rules: plain numbers are SI (bytes,
        seconds, bytes/s), strings carry their unit: ``replace(TRate_e="1 Gbit/s")``
        or ``replace(link_rate=125e6)``, never ``replace(link_rate=1000)``
        meaning megabits (that would be 1000 bytes/s).
        """
        return dataclasses.replace(self, **{_field_name(k): v for k, v in changes.items()})

    # -- views ------------------------------------------------------------------------
    def symbols(self) -> dict[str, float]:
        """The parameters under the paper's symbols, in SI units."""
        return {sym: getattr(self, name) for sym, name in SYMBOLS.items()}

    def parameters(self) -> dict[str, Any]:
        """Every numeric field by readable name, in SI units."""
        return {name: getattr(self, name) for name in PARAMETERS}

    def intermediates(self) -> dict[str, float]:
        """The paper's intermediate quantities for this system.

        ``raid_bytes`` S_mRi (eqs. 4-5, bytes), ``packets`` IP_num (eq. 3),
        ``server_bytes`` S_sn, ``server_packets`` IP_snum, ``byte_factor``
        S_mRi / S_m, ``server_visit_ratio`` (the 1/STP_m prefactor of eqs.
        6, 8, 10 under ``server_terms``) and ``disk_unit_time`` (s per unit).
        With ``form="corrected"`` also what the corrected form moves per job:
        ``bytes_out`` and ``bytes_in`` (bytes the master sends to and receives from the
        servers) and ``read_modify_write`` (1.0 for a RAID5/6 write smaller than a stripe,
        else 0.0), from :func:`qnmodel.models.storage_corrected.moved_bytes`.
        """
        params = self.parameters()
        out = networked_raid_intermediates(params, self.raid, self.op, self.server_terms)
        if self.form == "corrected":
            out.update(corrected_intermediates(params, self.raid, self.op))
        return out

    def demands(self) -> dict[str, float]:
        """Service demand of each station, seconds per job ([Cui06] eqs. 2, 6-10).

        ``form="corrected"`` (default): ``cpu_master, link_out, link_in, cpu_server, disk``
        (:func:`qnmodel.models.storage_corrected.corrected_demands`). ``form="paper"``, in
        the order of the paper's fig. 2: ``cpu_master`` (D_Cm), ``nic_master`` (D_Nm),
        ``network`` (D_Net), ``nic_server`` (D_Nsn), ``cpu_server`` (D_Csn), ``disk`` (D_d).
        """
        d = _compose(self.parameters(), self.raid, self.op, self.server_terms, self.form)
        return {k: float(v) for k, v in d.items()}

    def demand_grid(self, **values: Any) -> dict[str, np.ndarray]:
        """Demands with some fields replaced by arrays, in one vectorised call.

        Parameters
        ----------
        **values
            Field names (or paper symbols) -> SI numbers or numpy arrays that
            broadcast together; ``raid``, ``op``, ``server_terms`` take one
            string each. Unit strings are not accepted here (use
            :func:`qnmodel.whatif.sweep`, which parses them).

        Returns
        -------
        dict of str -> ndarray
            As :meth:`demands`, broadcast to the common shape.
        """
        params = self.parameters()
        choice = {"raid": self.raid, "op": self.op, "server_terms": self.server_terms,
                  "form": self.form}  # fmt: skip
        for key, v in values.items():
            name = _field_name(key)
            if name in CHOICES:
                choice[name] = as_choice(v, name, CHOICES[name])
            else:
                params[name] = v
        w = np.asarray(params["stripe_width"])
        # Keep the raid1 / minimum width rules of the constructor (kernels check them too).
        _d.raid_byte_factor(choice["raid"], choice["op"], w)
        return _compose(params, **choice)

    def network(
        self,
        think_time: float | str = 0.0,
        expand_servers: bool = False,
        disk_array: tuple | None = None,
        structure: str = "paper",
    ) -> Network:
        """The closed network of [Cui06] fig. 2 with these demands.

        Parameters
        ----------
        think_time : float or str
            Terminal think time Z, seconds (>= 0); the paper uses Z = 0.
        expand_servers : bool
            False (default, the paper's fig. 2): one station each for the
            storage-server CPU and disk (and NIC, ``form="paper"``). True: STP_m
            copies of each (``cpu_server_1 ... disk_STP``), the physical topology; pair it
            with ``server_terms="one_server"``.
        disk_array : (level, disks, pattern), optional
            A local RAID array behind each storage server instead of one disk
            (an extension; the paper's servers have one disk each): ``level``
            in ``"raid0"|"raid1"|"raid10"|"raid5"|"raid6"``, ``disks`` member
            disks, ``pattern`` ``"sequential"`` or ``"random"``; the operation
            is this system's ``op``. Each disk station of demand D_d (eq. 10,
            one disk of rate TRate_d) becomes ``disks`` member stations
            ``disk_m1 ...`` (``disk_<i>_m1 ...`` when expanded) of demand
            D_d * m_j, with m_j from
            :func:`qnmodel.models.raid.disk_demand_multipliers` ([Chen]
            table 1 via Intel VROC): the array then saturates at T(level,
            disks, op, pattern) times one disk.

        structure : {"paper", "forkjoin"}
            ``"paper"`` (default): the stations above, as in [Cui06] fig. 2 (the
            paper's numbers and figures stay reproducible). ``"forkjoin"``: the
            master forks every job into one sub-request per storage server and
            joins when all return, as the system does for a full-stripe access:
            the master's stations (``cpu_master, link_out, link_in``; with
            ``form="paper"`` ``cpu_master, nic_master, network``) and one
            :class:`~qnmodel.model.network.ForkJoin` ``storage_servers`` with STP_m
            branches ``server_1 ... server_STP``. Each branch is one queue of
            demand D_Csn + D_d (``form="paper"``: D_Nsn + D_Csn + D_d) under the
            ``"one_server"`` reading (every
            server serves its share of every job, whatever ``server_terms``
            says), the server's NIC, CPU and disk lumped (a branch is one
            queueing station). Solve it with :meth:`fork_join` or
            :func:`qnmodel.fork_join`; not combinable with ``expand_servers``
            or ``disk_array``.

        Returns
        -------
        Network
            Single-server queueing stations named as in :meth:`demands`
            (``structure="forkjoin"``: with the fork-join element).
        """
        as_choice(structure, "structure", STRUCTURES)
        if structure == "forkjoin":
            return self._forkjoin_network(think_time, expand_servers, disk_array)
        if not isinstance(expand_servers, bool):
            raise InvalidTypeError(f"expand_servers must be True or False, got {expand_servers!r}")
        members = self._disk_array_multipliers(disk_array)
        d = self.demands()
        names, values = [], []
        for k, v in d.items():
            copies = [k]
            if expand_servers and k in ("nic_server", "cpu_server", "disk"):
                copies = [f"{k}_{i}" for i in range(1, self.stripe_width + 1)]
            for name in copies:
                if k == "disk" and members is not None:
                    names.extend(f"{name}_m{j}" for j in range(1, members.size + 1))
                    values.extend(float(v * mj) for mj in members)
                else:
                    names.append(name)
                    values.append(v)
        return Network.from_demands(values, think_time, names=names)

    def _forkjoin_network(self, think_time, expand_servers, disk_array) -> Network:
        """The ``structure="forkjoin"`` network (see :meth:`network`)."""
        if expand_servers is not False or disk_array is not None:
            raise InvalidModelError(
                "structure='forkjoin' already has one branch per storage server and lumps "
                "each server's disk: do not combine it with expand_servers or disk_array, "
                f"got expand_servers={expand_servers!r}, disk_array={disk_array!r}"
            )
        d = self.demands()
        one = _compose(self.parameters(), self.raid, self.op, "one_server", self.form)
        member = float(sum(one[k] for k in ("nic_server", "cpu_server", "disk") if k in one))
        branches = [Station(f"server_{i}", member) for i in range(1, self.stripe_width + 1)]
        master = [k for k in d if k not in ("nic_server", "cpu_server", "disk")]
        stations = [Station(k, d[k]) for k in master]
        stations.append(ForkJoin("storage_servers", branches))
        return Network(tuple(stations), think_time=think_time)

    def fork_join(
        self, N: int, think_time: float | str = 0.0, structure: str = "forkjoin"
    ) -> ForkJoinResult:
        """Approximate fork-join MVA of ``network(structure="forkjoin")`` for n = 1..N.

        See :func:`qnmodel.fork_join` (Varki's mean value technique); the result
        has per-server utilisations and the join's synchronisation delay.
        ``structure="forkjoin_overlap"`` (``form="corrected"`` only) moves the master's data
        link into the fork: each server's chunk crosses it as soon as that server is done,
        while the slowest still serves (:mod:`qnmodel.models.storage_forkjoin`).
        """
        if as_choice(structure, "structure", FORKJOIN_STRUCTURES) == "forkjoin_overlap":
            return overlap_fork_join(self, N, think_time)
        return _solve_fork_join(self.network(think_time, structure="forkjoin"), N)

    def overlap(self, N: int | None = None, *, arrival_rate=None, think_time=0.0, disk_scv=1.0):
        """Approximate overlapped model (pipelined chunk transfers, (disk, then link) branches,
        shared master link), closed or open; disks of SCV ``disk_scv`` (1 exponential, 0
        constant; closed only), RAID5 read-modify-writes as two phases (closed only); bounds:
        ``qnmodel.models.storage_overlap.overlap_bounds`` (see that module)."""
        from .storage_overlap import overlap

        return overlap(self, N, arrival_rate=arrival_rate, think_time=think_time,
                       disk_scv=disk_scv)  # fmt: skip

    def simulate(self, N=None, *, arrival_rate=None, think_time=0.0, disk_scv=1.0, jobs=3000,
                 reps=3, seed=1):  # fmt: skip
        """Event simulation of the system ``overlap`` models, from the same parts; see
        ``qnmodel.models.storage_overlap.simulate``."""
        from .storage_overlap import simulate

        return simulate(self, N, arrival_rate=arrival_rate, think_time=think_time,
                        disk_scv=disk_scv, jobs=jobs, reps=reps, seed=seed)  # fmt: skip

    def _disk_array_multipliers(self, disk_array) -> np.ndarray | None:
        """Member-disk demand multipliers of a ``(level, disks, pattern)`` array, or None."""
        if disk_array is None:
            return None
        if isinstance(disk_array, str) or not isinstance(disk_array, tuple | list):
            raise InvalidTypeError(
                "disk_array must be a (level, disks, pattern) tuple such as "
                f"('raid5', 4, 'sequential'), got {disk_array!r}"
            )
        if len(disk_array) != 3:
            raise InvalidModelError(
                "disk_array must be (level, disks, pattern), e.g. ('raid5', 4, 'sequential'); "
                f"got {len(disk_array)} values: {disk_array!r}"
            )
        level, disks, pattern = disk_array
        return disk_demand_multipliers(level, disks, self.op, pattern)

    def bounds(self, N: int, method: str = "bjb", think_time: float | str = 0.0) -> BoundsResult:
        """Bounds on X(n), R(n), n = 1..N (BJB: the paper's eq. 1); see :func:`qnmodel.bounds`.

        ``N`` is the largest number of concurrent jobs (>= 1), ``method`` ``"bjb"``
        or ``"aba"``, ``think_time`` Z in seconds or a time string (>= 0).
        Throughputs are jobs/s, response times seconds (excluding Z).
        """
        return _solve_bounds(self.network(think_time), N, method=method)

    def mva(self, N: int, think_time: float | str = 0.0) -> MVAResult:
        """Exact MVA for n = 1..N concurrent jobs; see :func:`qnmodel.mva`.

        ``think_time`` Z in seconds or a time string (>= 0). Throughput in
        jobs/s, response time in seconds (excluding Z), per station as well.
        """
        return _solve_mva(self.network(think_time), N)

    def describe(self) -> str:
        """A short multi-line text: parameters with units, then demands."""
        from ..units import format_quantity

        lines = [
            f"NetworkedRAID({self.raid}, {self.op}, server_terms={self.server_terms}, "
            f"form={self.form})"
        ]
        for name, (sym, kind, _unit, desc) in PARAMETERS.items():
            v = getattr(self, name)
            if kind == "size":
                text = f"{v:.10g} B"
            elif kind in ("time", "rate"):
                text = format_quantity(v, kind)
            else:
                text = f"{v:g}"
            lines.append(f"  {name:<24} {sym:<8} {text:>14}  {desc}")
        lines.append("  demands (s per job):")
        for k, v in self.demands().items():
            lines.append(f"    {k:<12} {v:.6g}")
        return "\n".join(lines)


def _compose(params, raid: str, op: str, server_terms: str, form: str) -> dict:
    """The demands of ``form``: the paper's eqs. 2-10 or the corrected composition."""
    if form == "corrected":
        return corrected_demands(params, raid, op, server_terms)
    return networked_raid_demands(params, raid, op, server_terms)
