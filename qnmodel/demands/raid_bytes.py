"""Bytes a RAID level moves per job, and how they spread over the storage servers.

Seed 002 (Cui et al. 2006) builds software RAID5 on a storage-centre
("master") server across disks that remote storage servers export over ENBD.
A job of S_m bytes makes the master move S_mRi bytes (RAID level i), eqs.
(4)-(5); every one of the STP_m storage servers holds one stripe unit of
each stripe, so a server handles S_sn = S_mRi / STP_m bytes of a job
(text under eq. 6).

All functions are pure numpy and broadcast over their array arguments.
Plain numbers are SI: bytes for sizes; stripe widths are unit counts.

References
----------
.. [Cui06] Cui B., Liu J., Wang G., Liu J., "Study on I/O response time bounds
   of network storage systems" (网络存储系统 I/O 响应时间边界性能研究),
   Journal on Communications (通信学报) 27(1):69-74, 2006, sec. 3.2, eqs. (2)-(10).
.. [CLGK94] P. M. Chen, E. K. Lee, G. A. Gibson, R. H. Katz, D. A. Patterson,
   "RAID: high-performance, reliable secondary storage", ACM Computing
   Surveys 26(2):145-185, 1994 (redundancy overhead of each RAID level).
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from .._validate import as_choice
from ..errors import InvalidModelError
from ..raid_levels import OPERATIONS, RAID, RAID_LEVELS, raid_level
from ._common import SERVER_TERMS, as_array, as_count_array

__all__ = [
    "RAID_LEVELS",
    "OPERATIONS",
    "MIN_STRIPE_WIDTH",
    "raid_byte_factor",
    "raid_bytes",
    "server_bytes",
    "server_visit_ratio",
]

#: smallest stripe width STP_m (units per stripe, one per storage server) for each level
MIN_STRIPE_WIDTH = MappingProxyType({name: lv.min_stripe_width for name, lv in RAID.items()})


def _check_width(level: str, stripe_width):
    lv = RAID[level]
    w = as_count_array(stripe_width, "stripe_width (STP_m)", lv.min_stripe_width)
    if lv.exact_stripe_width is not None and np.any(w != lv.exact_stripe_width):
        bad = float(w.reshape(-1)[np.flatnonzero(w.reshape(-1) != lv.exact_stripe_width)[0]])
        raise InvalidModelError(
            f"stripe_width (STP_m) must be {lv.exact_stripe_width} for {level} (a two-way "
            f"mirror, byte factor 2), got {bad!r}; use raid10 for mirrored stripes over more "
            "servers"
        )
    return w


def _write_factor(level: str, w: np.ndarray) -> np.ndarray:
    """Write byte factor of ``level`` at stripe width ``w`` (full-stripe writes)."""
    lv = RAID[level]
    if lv.mirrored:
        return np.full_like(w, 2.0)
    if lv.parity_units == 0:
        return np.ones_like(w)
    return w / (w - lv.parity_units)


def raid_byte_factor(level: str, op: str, stripe_width=3):
    """Bytes the master moves per byte of a job: the RAID byte factor S_mRi / S_m.

    Generalises [Cui06] eqs. (4)-(5) (RAID5) to the common levels:

    =========  ===========  ======================  =================
    level      read         write                   stripe_width
    =========  ===========  ======================  =================
    raid0      1            1                       >= 1
    raid1      1            2                       == 2
    raid10     1            2                       >= 2
    raid5      1  (eq. 5)   STP/(STP-1)  (eq. 4)    >= 2
    raid6      1            STP/(STP-2)             >= 3
    =========  ===========  ======================  =================

    Parameters
    ----------
    level : {"raid0", "raid1", "raid10", "raid5", "raid6"}
        RAID level built by the master across the storage servers.
    op : {"read", "write"}
        A large sequential read (data units only) or write (data plus the
        redundancy: mirror copy or parity units, full-stripe writes).
    stripe_width : int or array_like of int
        STP_m, stripe units per stripe (one per storage server), domain in
        the table; ignored by the levels whose factor does not depend on it
        (still validated).

    Returns
    -------
    ndarray
        Dimensionless factor >= 1, broadcast to the shape of ``stripe_width``.

    Notes
    -----
    Writes assume full-stripe writes, as the paper's 200 MB jobs are: a
    RAID5 stripe of STP units carries STP-1 data units and one parity unit,
    so S_mR5 = S_m STP/(STP-1) ([Cui06] eq. 4); RAID6 carries two parity
    units; mirrors write every byte twice ([CLGK94] sec. 3).
    """
    raid_level(level, "raid")
    as_choice(op, "op", OPERATIONS)
    w = _check_width(level, stripe_width)
    if op == "read":
        return np.ones_like(w)
    return _write_factor(level, w)


def raid_bytes(job_size, level: str, op: str, stripe_width=3):
    """S_mRi: bytes the master actually moves for one job, [Cui06] eqs. (4)-(5).

    ``S_mR5 = S_m * STP_m / (STP_m - 1)`` for a RAID5 write (eq. 4),
    ``S_mR5 = S_m`` for a read (eq. 5); other levels through
    :func:`raid_byte_factor`.

    Parameters
    ----------
    job_size : float or array_like
        S_m, bytes a job reads or writes (>= 0), in bytes.
    level, op, stripe_width
        As in :func:`raid_byte_factor`.

    Returns
    -------
    ndarray
        S_mRi in bytes (>= 0), broadcast over the inputs.
    """
    s = as_array(job_size, "job_size (S_m)", "bytes")
    raid_level(level, "raid")
    as_choice(op, "op", OPERATIONS)
    w = _check_width(level, stripe_width)
    parity = RAID[level].parity_units
    if op == "write" and parity:
        return s * w / (w - parity)  # eq. (4), multiplied first: exact for integral sizes
    return s * raid_byte_factor(level, op, w)


def server_bytes(raid_bytes, stripe_width):
    """S_sn = S_mRi / STP_m: bytes one storage server handles per job ([Cui06], text of eq. 6).

    Parameters
    ----------
    raid_bytes : float or array_like
        S_mRi from :func:`raid_bytes`, bytes (>= 0).
    stripe_width : int or array_like of int
        STP_m (>= 1): the job's stripes spread evenly over STP_m servers.

    Returns
    -------
    ndarray
        Bytes per storage server per job (>= 0).
    """
    s = as_array(raid_bytes, "raid_bytes (S_mRi)", "bytes")
    w = as_count_array(stripe_width, "stripe_width (STP_m)", 1)
    return s / w


def server_visit_ratio(stripe_width, server_terms: str = "paper"):
    """Factor multiplying (1 - P_m) in the storage-server demands, eqs. (6), (8), (10).

    The paper writes every storage-server demand as
    ``(1 - P_m)/STP_m * (per-server quantity)`` where the per-server
    quantity (S_sn bytes, IP_snum packets) is already one server's share of
    the job. The text does not say whether the CQNM's single server station
    stands for one server or for all of them, so three readings are offered:

    ``"paper"`` (default)
        Exactly as printed: ratio 1/STP_m. Read as a visit ratio: a job
        visits "the" storage server station with probability 1/STP_m and
        then does one server's share.
    ``"one_server"``
        Every job stripes over all STP_m servers, so each server does its
        share for every job: ratio 1 (STP_m times the printed demand). With
        ``NetworkedRAID.network(expand_servers=True)`` this is the physical
        topology: STP_m identical server branches.
    ``"all_servers"``
        One station does the work of all STP_m servers: ratio STP_m
        (STP_m**2 times the printed demand; an upper bound that ignores
        the servers' parallelism).

    Parameters
    ----------
    stripe_width : int or array_like of int
        STP_m (>= 1).
    server_terms : {"paper", "one_server", "all_servers"}
        The reading.

    Returns
    -------
    ndarray
        The dimensionless ratio.
    """
    as_choice(server_terms, "server_terms", SERVER_TERMS)
    w = as_count_array(stripe_width, "stripe_width (STP_m)", 1)
    if server_terms == "paper":
        return 1.0 / w
    if server_terms == "one_server":
        return np.ones_like(w)
    return w
