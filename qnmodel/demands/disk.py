"""Storage-server disk demand, [Cui06] eq. (10).

Pure numpy, broadcasting; plain numbers are SI (bytes, seconds, bytes/s).

References
----------
.. [Cui06] Cui B., Liu J., Wang G., Liu J., Journal on Communications
   27(1):69-74, 2006, sec. 3.2, eq. (10).
"""

from __future__ import annotations

from ._common import as_array, as_probability_array
from .raid_bytes import server_visit_ratio

__all__ = ["disk_unit_time", "disk_demand"]


def disk_unit_time(seek, latency, stripe_unit, disk_rate):
    """seek + latency + STU_m / TRate_d: disk time per stripe unit (the bracket of eq. 10).

    Parameters
    ----------
    seek : float or array_like
        Mean seek time, seconds (>= 0).
    latency : float or array_like
        Mean rotational latency, seconds (>= 0).
    stripe_unit : float or array_like
        STU_m, bytes (> 0).
    disk_rate : float or array_like
        TRate_d, sustained transfer rate, **bytes/s** (> 0).

    Returns
    -------
    ndarray
        Seconds per stripe unit.
    """
    s = as_array(seek, "disk_seek (seek)", "s")
    lat = as_array(latency, "disk_latency (latency)", "s")
    u = as_array(stripe_unit, "stripe_unit (STU_m)", "bytes", positive=True)
    r = as_array(disk_rate, "disk_rate (TRate_d)", "bytes/s", positive=True)
    return s + lat + u / r


def disk_demand(
    server_bytes, stripe_unit, seek, latency, disk_rate, stripe_width,
    master_cache_hit=0.0, server_cache_hit=0.0, server_terms="paper",
):  # fmt: skip
    """D_d = (1-P_m)/STP_m * (1-P_sn) * (seek + latency + STU_m/TRate_d) * S_sn/STU_m, eq. (10).

    Every stripe unit a server handles costs one positioning (seek plus
    rotational latency) and one unit transfer.

    Parameters
    ----------
    server_bytes : float or array_like
        S_sn = S_mRi / STP_m, bytes per storage server per job (>= 0).
    stripe_unit : float or array_like
        STU_m, bytes (> 0).
    seek, latency : float or array_like
        Mean seek and rotational latency, seconds (>= 0).
    disk_rate : float or array_like
        TRate_d, sustained disk rate, bytes/s (> 0).
    stripe_width : int or array_like of int
        STP_m (>= 1).
    master_cache_hit : float or array_like
        P_m in [0, 1].
    server_cache_hit : float or array_like
        P_sn, storage-server cache hit rate in [0, 1]. The paper defines it
        for reads and takes 0 for writes (files larger than the cache); it
        is applied as given for either operation.
    server_terms : {"paper", "one_server", "all_servers"}
        Reading of the 1/STP_m prefactor; ``"paper"`` is eq. (10) as printed.

    Returns
    -------
    ndarray
        Seconds per job (>= 0).
    """
    s = as_array(server_bytes, "server_bytes (S_sn)", "bytes")
    u = as_array(stripe_unit, "stripe_unit (STU_m)", "bytes", positive=True)
    t = disk_unit_time(seek, latency, u, disk_rate)
    h = as_probability_array(master_cache_hit, "master_cache_hit (P_m)")
    hs = as_probability_array(server_cache_hit, "server_cache_hit (P_sn)")
    v = server_visit_ratio(stripe_width, server_terms)
    return (1.0 - h) * v * (1.0 - hs) * t * (s / u)
