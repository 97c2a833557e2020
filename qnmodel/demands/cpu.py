"""CPU demands of the master and of a storage server, [Cui06] eqs. (2) and (6).

Pure numpy, broadcasting; plain numbers are SI (bytes, seconds).

References
----------
.. [Cui06] Cui B., Liu J., Wang G., Liu J., Journal on Communications
   27(1):69-74, 2006, sec. 3.2, eqs. (2), (6).
"""

from __future__ import annotations

from ._common import as_array, as_probability_array
from .raid_bytes import server_visit_ratio

__all__ = ["master_cpu_demand", "server_cpu_demand"]


def master_cpu_demand(
    job_size, stripe_unit, master_time_per_unit, packets, master_time_per_packet,
    master_cache_hit=0.0,
):  # fmt: skip
    """D_Cm = T_mpro * S_m/STU_m + (1 - P_m) * T_mp * IP_num: master CPU, [Cui06] eq. (2).

    Parameters
    ----------
    job_size : float or array_like
        S_m, bytes a job reads or writes, bytes (>= 0).
    stripe_unit : float or array_like
        STU_m, stripe unit (chunk) size, bytes (> 0).
    master_time_per_unit : float or array_like
        T_mpro, master CPU time per stripe unit (memory copy, RAID
        processing), seconds (>= 0). Paid on hits and misses alike.
    packets : float or array_like
        IP_num, packets per job (eq. 3), >= 0.
    master_time_per_packet : float or array_like
        T_mp, master TCP/IP and ENBD-client time per packet, seconds (>= 0).
        Paid on misses only.
    master_cache_hit : float or array_like
        P_m, master cache hit rate in [0, 1].

    Returns
    -------
    ndarray
        Seconds per job (>= 0).
    """
    s = as_array(job_size, "job_size (S_m)", "bytes")
    u = as_array(stripe_unit, "stripe_unit (STU_m)", "bytes", positive=True)
    t_unit = as_array(master_time_per_unit, "master_time_per_unit (T_mpro)", "s")
    p = as_array(packets, "packets (IP_num)", "packets")
    t_pkt = as_array(master_time_per_packet, "master_time_per_packet (T_mp)", "s")
    h = as_probability_array(master_cache_hit, "master_cache_hit (P_m)")
    return t_unit * (s / u) + (1.0 - h) * t_pkt * p


def server_cpu_demand(
    server_bytes, stripe_unit, server_time_per_unit, server_packets, server_time_per_packet,
    stripe_width, master_cache_hit=0.0, server_terms="paper",
):  # fmt: skip
    """D_Csn = (1-P_m)/STP_m * (T_snpro * S_sn/STU_m + T_snp * IP_snum): server CPU, eq. (6).

    Parameters
    ----------
    server_bytes : float or array_like
        S_sn = S_mRi / STP_m, bytes per storage server per job (>= 0).
    stripe_unit : float or array_like
        STU_m, bytes (> 0).
    server_time_per_unit : float or array_like
        T_snpro, storage-server CPU time per stripe unit, seconds (>= 0).
    server_packets : float or array_like
        IP_snum = IP_num / STP_m, packets per server per job (>= 0).
    server_time_per_packet : float or array_like
        T_snp, storage-server time per IP packet (TCP/IP, ENBD server), s (>= 0).
    stripe_width : int or array_like of int
        STP_m (>= 1).
    master_cache_hit : float or array_like
        P_m in [0, 1]: only master misses reach a storage server.
    server_terms : {"paper", "one_server", "all_servers"}
        Reading of the 1/STP_m prefactor; ``"paper"`` is eq. (6) as printed
        (see :func:`~qnmodel.demands.raid_bytes.server_visit_ratio`).

    Returns
    -------
    ndarray
        Seconds per job (>= 0).
    """
    s = as_array(server_bytes, "server_bytes (S_sn)", "bytes")
    u = as_array(stripe_unit, "stripe_unit (STU_m)", "bytes", positive=True)
    t_unit = as_array(server_time_per_unit, "server_time_per_unit (T_snpro)", "s")
    p = as_array(server_packets, "server_packets (IP_snum)", "packets")
    t_pkt = as_array(server_time_per_packet, "server_time_per_packet (T_snp)", "s")
    h = as_probability_array(master_cache_hit, "master_cache_hit (P_m)")
    v = server_visit_ratio(stripe_width, server_terms)
    return (1.0 - h) * v * (t_unit * (s / u) + t_pkt * p)
