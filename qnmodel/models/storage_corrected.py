"""Seed 002's networked RAID with two structural corrections found on a real testbed.

Measured with real TCP through shaped links (``qnmodel testbed``, qnbench ``stripe`` over
``tcp`` block servers in their own namespaces), the paper's demand composition
(:func:`qnmodel.models.storage_params.networked_raid_demands`, [Cui06] eqs. 2-10) is wrong
in two places; ``NetworkedRAID(form="corrected")`` uses :func:`corrected_demands` instead.

(a) **One transfer crosses the master NIC and the network at once.** The paper puts the
    master NIC (eq. 7, ``IP_num * Frame_e / TRate_e``) and the network (eq. 9,
    ``S_mRi / TRate_e``) in series, so a lone job pays for its bytes twice: at N = 1 the
    paper's model predicts half the measured throughput of a full-stripe read. The bytes are
    pipelined through NIC, wire and switch; the stage that holds a job longest is the master
    link, whose busy time per job is the frames it carries (the larger of eqs. 7 and 9).
    The storage servers' NICs (eq. 8) are pipelined with it too and are dropped: each server
    link carries 1/STP_m of the job's bytes at the same rate, so its time overlaps the
    master's (valid while every server link is at least 1/STP_m as fast as the master's).

(b) **A RAID5 write smaller than a stripe is a read-modify-write.** Eq. (4) counts a
    full-stripe write, ``S_m * STP_m / (STP_m - 1)`` bytes out. A write of one chunk reads
    the old data and the old parity (two chunks in) and then writes the new data and the new
    parity (two chunks out) [CLGK94, sec. 2.3]; in general ``S_m + p * STU_m`` bytes each
    way for ``p`` parity units (RAID5 p = 1, RAID6 p = 2), in two dependent phases.

Ethernet links are full duplex: bytes to the servers (``link_out``) and from them
(``link_in``) are shaped and queued separately, so the corrected form has one station per
direction. The stations are ``cpu_master, link_out, link_in, cpu_server, disk``.

Notes
-----
Left out, each below 2.5 % of a link's load on the testbed: request headers (16 B per member
request), TCP acknowledgements in the reverse direction (one 66 B frame per two segments)
and the fill time of the pipeline (one frame per hop).

* ``cpu_master``: eq. (2) applied to what the master really moves: ``T_mpro`` per stripe
  unit moved (either way) plus ``T_mp`` per packet moved (either way), on a master cache
  miss; on a hit (probability ``P_m``) the master still processes the job's own
  ``S_m / STU_m`` units, as eq. (2)'s first term, which ``P_m`` does not scale.
* ``cpu_server`` and ``disk``: eqs. (6) and (10) with the server's share of the moved bytes,
  ``S_sn = (bytes_in + bytes_out) / STP_m``, under the ``server_terms`` reading.

References
----------
.. [Cui06] Cui B., Liu J., Wang G., Liu J., "Study on I/O response time bounds of network
   storage systems", Journal on Communications 27(1):69-74, 2006, eqs. (2)-(10).
.. [CLGK94] Chen P. M., Lee E. K., Gibson G. A., Katz R. H., Patterson D. A., "RAID:
   high-performance, reliable secondary storage", ACM Computing Surveys 26(2):145-185, 1994.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import demands as _d
from ..raid_levels import RAID

__all__ = [
    "FORMS",
    "CORRECTED_STATIONS",
    "moved_bytes",
    "corrected_intermediates",
    "corrected_demands",
]

#: demand compositions: the paper's eqs. 2-10, or the testbed-corrected one of this module
FORMS = ("paper", "corrected")

#: station names of the corrected form
CORRECTED_STATIONS = ("cpu_master", "link_out", "link_in", "cpu_server", "disk")


def moved_bytes(job_size, stripe_unit, stripe_width, raid: str = "raid5", op: str = "write"):
    """Bytes the master sends to (``out``) and receives from (``in``) the servers per job.

    Reads: ``S_m`` in. Writes of a whole stripe's data or more: eqs. (4)-(5) out
    (:func:`qnmodel.demands.raid_bytes`). Writes smaller than a stripe's data on a parity
    level (read-modify-write, correction (b) of the module docstring): ``S_m + p * STU_m``
    each way.

    Returns
    -------
    (bytes_out, bytes_in, rmw) : ndarrays, broadcast together; ``rmw`` is True where the
    write is a read-modify-write.

    Examples
    --------
    >>> out, inn, rmw = moved_bytes(65536, 65536, 3, "raid5", "write")
    >>> float(out), float(inn), bool(rmw)
    (131072.0, 131072.0, True)
    """
    s = np.asarray(job_size, dtype=np.float64)
    u = np.asarray(stripe_unit, dtype=np.float64)
    w = np.asarray(stripe_width)
    zero = np.zeros(np.broadcast_shapes(s.shape, u.shape, w.shape))
    if op == "read":
        _d.raid_bytes(s, raid, op, w)  # the level's stripe-width rules
        return zero, zero + s, zero.astype(bool)
    lv = RAID[raid]
    full = _d.raid_bytes(s, raid, op, w)  # eqs. (4)-(5): whole-stripe writes
    p = lv.parity_units
    data_units = w - p if not lv.mirrored else w // 2
    rmw = (p > 0) & (s < data_units * u)
    small = s + p * u
    out = np.where(rmw, small, full) + zero
    inn = np.where(rmw, small, 0.0) + zero
    return out, inn, rmw + zero.astype(bool)


def corrected_intermediates(
    params: Mapping[str, Any], raid: str = "raid5", op: str = "write"
) -> dict[str, float]:
    """What the corrected form moves per job: ``bytes_out`` and ``bytes_in`` (bytes the master
    sends to and receives from the servers) and ``read_modify_write`` (1.0 for a RAID5/6 write
    smaller than a stripe, else 0.0), from :func:`moved_bytes`; scalar ``params``."""
    b_out, b_in, rmw = moved_bytes(
        params["job_size"], params["stripe_unit"], params["stripe_width"], raid, op
    )
    return {"bytes_out": float(b_out), "bytes_in": float(b_in), "read_modify_write": float(rmw)}


def corrected_demands(
    params: Mapping[str, Any], raid: str = "raid5", op: str = "write", server_terms: str = "paper"
) -> dict[str, np.ndarray]:
    """Demands of the corrected form's stations, vectorised (module docstring).

    Parameters
    ----------
    params : mapping
        Every field of :data:`qnmodel.models.storage_params.PARAMETERS` in SI units.
    raid, op, server_terms : str
        As in :class:`~qnmodel.models.storage.NetworkedRAID`.

    Returns
    -------
    dict of str -> ndarray
        ``cpu_master, link_out, link_in, cpu_server, disk``, seconds per job.
    """
    p = params
    w = p["stripe_width"]
    h = np.asarray(p["master_cache_hit"], dtype=np.float64)
    out, inn, _rmw = moved_bytes(p["job_size"], p["stripe_unit"], w, raid, op)
    pk_out = np.where(out > 0, _d.ip_packets(np.maximum(out, 1.0), p["mss"]), 0.0)  # eq. (3)
    pk_in = np.where(inn > 0, _d.ip_packets(np.maximum(inn, 1.0), p["mss"]), 0.0)
    moved = out + inn
    units = moved / np.asarray(p["stripe_unit"], dtype=np.float64)
    # eq. (2) over what is moved: units processed plus protocol time per packet; a master
    # cache hit still processes the job's own S_m / STU_m units (eq. 2's unscaled term)
    own = np.asarray(p["job_size"], dtype=np.float64) / np.asarray(p["stripe_unit"], dtype=float)
    cpu_master = p["master_time_per_unit"] * (h * own + (1.0 - h) * units) + (1.0 - h) * p[
        "master_time_per_packet"
    ] * (pk_out + pk_in)
    # correction (a): each direction is one pipelined stage busy for its frames (eq. 7)
    link_out = _d.master_nic_demand(pk_out, p["frame_size"], p["link_rate"], h)
    link_in = _d.master_nic_demand(pk_in, p["frame_size"], p["link_rate"], h)
    s_sn = _d.server_bytes(moved, w)
    ip_sn = _d.server_ip_packets(pk_out + pk_in, w)
    cpu_server = _d.server_cpu_demand(
        s_sn, p["stripe_unit"], p["server_time_per_unit"], ip_sn, p["server_time_per_packet"],
        w, h, server_terms,
    )  # eq. (6)  # fmt: skip
    disk = _d.disk_demand(
        s_sn, p["stripe_unit"], p["disk_seek"], p["disk_latency"], p["disk_rate"], w, h,
        p["server_cache_hit"], server_terms,
    )  # eq. (10)  # fmt: skip
    res = dict(cpu_master=cpu_master, link_out=link_out, link_in=link_in,
               cpu_server=cpu_server, disk=disk)  # fmt: skip
    res = {k: np.asarray(v, dtype=np.float64) for k, v in res.items()}
    shape = np.broadcast_shapes(*(v.shape for v in res.values()))
    return {k: np.broadcast_to(v, shape) for k, v in res.items()}
