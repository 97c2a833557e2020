"""Seed 002's networked-RAID system as data: its parameters, its test bed, its demands.

The parameter table (field, paper symbol, kind, unit), the test bed of Cui et al. (2006,
sec. 4) with the readings of its ambiguous values, and :func:`networked_raid_demands`, the
vectorised composition of the demand formulas (eqs. 2-10) into the six stations of the
paper's fig. 2. :class:`~qnmodel.models.storage.NetworkedRAID` builds its networks from
these; a what-if grid evaluates :func:`networked_raid_demands` in one call.

References
----------
.. [Cui06] Cui B., Liu J., Wang G., Liu J., "Study on I/O response time bounds
   of network storage systems" (网络存储系统 I/O 响应时间边界性能研究),
   Journal on Communications (通信学报) 27(1):69-74, 2006.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import demands as _d
from .._validate import as_choice, as_positive_int, as_probability, as_quantity
from ..demands._common import SERVER_TERMS
from ..errors import InvalidModelError
from .storage_corrected import FORMS

__all__ = [
    "PARAMETERS",
    "SYMBOLS",
    "STATIONS",
    "CHOICES",
    "CUI2006",
    "networked_raid_demands",
    "networked_raid_intermediates",
]

#: station names, in the order of the paper's fig. 2
#: station names of the paper's form (``form="paper"``, fig. 2); the default form's are
#: :data:`qnmodel.models.storage_corrected.CORRECTED_STATIONS`
STATIONS = ("cpu_master", "nic_master", "network", "nic_server", "cpu_server", "disk")

#: field -> (paper symbol, kind, SI unit, description); kind is size|time|rate|probability|count
PARAMETERS: dict[str, tuple[str, str, str, str]] = {
    "job_size": ("S_m", "size", "bytes", "bytes one job reads or writes"),
    "stripe_unit": ("STU_m", "size", "bytes", "stripe unit (chunk) size"),
    "stripe_width": ("STP_m", "count", "units", "stripe units per stripe (storage servers)"),
    "master_time_per_unit": ("T_mpro", "time", "s", "master CPU time per stripe unit"),
    "master_time_per_packet": ("T_mp", "time", "s", "master protocol time per IP packet"),
    "server_time_per_unit": ("T_snpro", "time", "s", "server CPU time per stripe unit"),
    "server_time_per_packet": ("T_snp", "time", "s", "server protocol time per IP packet"),
    "mss": ("MSS", "size", "bytes", "TCP maximum segment size"),
    "frame_size": ("Frame_e", "size", "bytes", "Ethernet frame size on the wire"),
    "link_rate": ("TRate_e", "rate", "bytes/s", "Ethernet link rate"),
    "disk_seek": ("seek", "time", "s", "mean disk seek time"),
    "disk_latency": ("latency", "time", "s", "mean rotational latency"),
    "disk_rate": ("TRate_d", "rate", "bytes/s", "disk sustained transfer rate"),
    "master_cache_hit": ("P_m", "probability", "", "master cache hit rate"),
    "server_cache_hit": ("P_sn", "probability", "", "storage-server cache hit rate"),
}

#: paper symbol -> field name
SYMBOLS: dict[str, str] = {sym: name for name, (sym, *_rest) in PARAMETERS.items()}

#: fields that take one of a set of strings (not swept numerically)
CHOICES: dict[str, tuple[str, ...]] = {
    "raid": _d.RAID_LEVELS,
    "op": _d.OPERATIONS,
    "server_terms": SERVER_TERMS,
    "form": FORMS,
}

_POSITIVE = {"stripe_unit", "mss", "frame_size", "link_rate", "disk_rate", "job_size"}


def _normalise(name: str, value: Any) -> Any:
    """Validate one field (numbers are SI, strings need a unit) and return it in SI."""
    if name in CHOICES:
        return as_choice(value, name, CHOICES[name])
    if name not in PARAMETERS:
        raise InvalidModelError(_unknown(name))
    sym, kind, _unit, _desc = PARAMETERS[name]
    label = f"{name} ({sym})"
    if kind == "count":
        return as_positive_int(value, label, 1)
    if kind == "probability":
        return as_probability(value, label)
    return as_quantity(value, label, kind, positive=name in _POSITIVE)


def _unknown(name: str) -> str:
    return (
        f"unknown NetworkedRAID parameter {name!r}; fields are {', '.join(PARAMETERS)}, "
        f"raid, op, server_terms, form; paper symbols are {', '.join(SYMBOLS)}"
    )


def _field_name(key: str) -> str:
    """A field name from a field name or a paper symbol."""
    if key in PARAMETERS or key in CHOICES:
        return key
    if key in SYMBOLS:
        return SYMBOLS[key]
    raise InvalidModelError(_unknown(key))


def networked_raid_intermediates(
    params: Mapping[str, Any], raid: str = "raid5", op: str = "write", server_terms: str = "paper"
) -> dict[str, float]:
    """The paper's intermediate quantities of one system ([Cui06] eqs. 3-6).

    ``raid_bytes`` S_mRi (eqs. 4-5, bytes), ``packets`` IP_num (eq. 3), ``server_bytes``
    S_sn, ``server_packets`` IP_snum, ``byte_factor`` S_mRi / S_m, ``server_visit_ratio``
    (the 1/STP_m prefactor of eqs. 6, 8, 10 under ``server_terms``) and ``disk_unit_time``
    (s per unit). ``params`` as for :func:`networked_raid_demands`, scalars.
    """
    p = params
    s_r = _d.raid_bytes(p["job_size"], raid, op, p["stripe_width"])
    ip = _d.ip_packets(s_r, p["mss"])
    return {
        "raid_bytes": float(s_r),
        "byte_factor": float(_d.raid_byte_factor(raid, op, p["stripe_width"])),
        "packets": float(ip),
        "server_bytes": float(_d.server_bytes(s_r, p["stripe_width"])),
        "server_packets": float(_d.server_ip_packets(ip, p["stripe_width"])),
        "server_visit_ratio": float(_d.server_visit_ratio(p["stripe_width"], server_terms)),
        "disk_unit_time": float(
            _d.disk_unit_time(p["disk_seek"], p["disk_latency"], p["stripe_unit"], p["disk_rate"])
        ),
    }


def networked_raid_demands(
    params: Mapping[str, Any], raid: str = "raid5", op: str = "write", server_terms: str = "paper"
) -> dict[str, np.ndarray]:
    """Demands of the six stations, vectorised: [Cui06] eqs. (2)-(10) composed.

    Parameters
    ----------
    params : mapping
        Every field of :data:`PARAMETERS` as SI numbers or numpy arrays that
        broadcast together (bytes, seconds, bytes/s, probabilities, integer
        stripe widths).
    raid, op, server_terms : str
        As in :class:`NetworkedRAID`.

    Returns
    -------
    dict of str -> ndarray
        ``cpu_master, nic_master, network, nic_server, cpu_server, disk``,
        seconds per job, broadcast to a common shape.
    """
    missing = [k for k in PARAMETERS if k not in params]
    if missing:
        raise InvalidModelError(f"params lacks {', '.join(missing)}")
    p = params
    w = p["stripe_width"]
    frame = np.asarray(p["frame_size"], dtype=np.float64)
    mss = np.asarray(p["mss"], dtype=np.float64)
    short = frame < mss
    if np.any(short):
        i = np.argwhere(short)[0]  # the first offending pair, whatever the shapes
        f_bad = float(np.broadcast_to(frame, short.shape)[tuple(i)])
        m_bad = float(np.broadcast_to(mss, short.shape)[tuple(i)])
        raise InvalidModelError(
            f"frame_size (Frame_e) must be >= mss (MSS): a frame carries a segment plus "
            f"headers; got frame_size={f_bad!r}, mss={m_bad!r} bytes"
        )
    s_r = _d.raid_bytes(p["job_size"], raid, op, w)  # eqs. (4)-(5)
    ip = _d.ip_packets(s_r, p["mss"])  # eq. (3)
    s_sn = _d.server_bytes(s_r, w)
    ip_sn = _d.server_ip_packets(ip, w)
    h = p["master_cache_hit"]
    out = {
        "cpu_master": _d.master_cpu_demand(
            p["job_size"], p["stripe_unit"], p["master_time_per_unit"], ip,
            p["master_time_per_packet"], h,
        ),  # eq. (2)
        "nic_master": _d.master_nic_demand(ip, p["frame_size"], p["link_rate"], h),  # eq. (7)
        "network": _d.network_demand(s_r, p["link_rate"], h),  # eq. (9)
        "nic_server": _d.server_nic_demand(
            ip_sn, p["frame_size"], p["link_rate"], w, h, server_terms
        ),  # eq. (8)
        "cpu_server": _d.server_cpu_demand(
            s_sn, p["stripe_unit"], p["server_time_per_unit"], ip_sn,
            p["server_time_per_packet"], w, h, server_terms,
        ),  # eq. (6)
        "disk": _d.disk_demand(
            s_sn, p["stripe_unit"], p["disk_seek"], p["disk_latency"], p["disk_rate"], w, h,
            p["server_cache_hit"], server_terms,
        ),  # eq. (10)
    }  # fmt: skip
    shape = np.broadcast_shapes(*(v.shape for v in out.values()))
    return {k: np.broadcast_to(v, shape) for k, v in out.items()}


#: The paper's test bed ([Cui06] sec. 4), mirrored by data/reference/cui2006.json
#: (a test keeps the two equal). Ambiguous values carry their readings and a default.
CUI2006: dict[str, Any] = {
    "raid": "raid5",
    "op": "write",
    "server_terms": "paper",
    "parameters": {
        "S_m": {
            "printed": "200MB",
            "readings": {"decimal": "200 MB", "binary": "200 MiB"},
            "default": "decimal",
        },
        "STU_m": {
            "printed": "16KB",
            "readings": {"binary": "16 KiB", "decimal": "16 kB"},
            "default": "binary",
        },
        "STP_m": {"value": 3},
        "P_m": {"value": 0.0},
        "P_sn": {"value": 0.0},
        "T_mpro": {"value": "0.027 ms"},
        "T_mp": {"value": "0.045 ms"},
        "T_snpro": {"value": "0.033 ms"},
        "T_snp": {"value": "0.028 ms"},
        "MSS": {"value": "1460 B"},
        "Frame_e": {"value": "1518 B"},
        "TRate_e": {"value": "100 Mbit/s"},
        "seek": {"value": "4.9 ms"},
        "latency": {"value": "2.99 ms"},
        "TRate_d": {
            "printed": "35Mbit/s",
            "readings": {"datasheet": "35 MB/s", "as_printed": "35 Mbit/s"},
            "default": "datasheet",
        },
    },
}
