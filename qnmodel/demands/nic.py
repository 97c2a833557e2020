"""Packet counts and network-interface (NIC) demands, [Cui06] eqs. (3), (7), (8).

A NIC station's demand is the time to put a job's Ethernet frames on the
wire: packets x frame size / link rate. Pure numpy, broadcasting; plain
numbers are SI (bytes, seconds, bytes/s).

References
----------
.. [Cui06] Cui B., Liu J., Wang G., Liu J., Journal on Communications
   27(1):69-74, 2006, sec. 3.2, eqs. (3), (6)-(8).
"""

from __future__ import annotations

import numpy as np

from ._common import as_array, as_count_array, as_probability_array
from .raid_bytes import server_visit_ratio

__all__ = ["ip_packets", "server_ip_packets", "master_nic_demand", "server_nic_demand"]


def ip_packets(raid_bytes, mss):
    """IP_num = ceil(S_mRi / MSS): IP packets a job is split into, [Cui06] eq. (3).

    Parameters
    ----------
    raid_bytes : float or array_like
        S_mRi, bytes the master moves per job (:func:`~qnmodel.demands.raid_bytes.raid_bytes`),
        in bytes (>= 0).
    mss : float or array_like
        MSS, the TCP maximum segment size, bytes (> 0); 1460 B on Ethernet.

    Returns
    -------
    ndarray
        Packets per job, a whole number (>= 0).
    """
    s = as_array(raid_bytes, "raid_bytes (S_mRi)", "bytes")
    m = as_array(mss, "mss (MSS)", "bytes", positive=True)
    return np.ceil(s / m)


def server_ip_packets(packets, stripe_width):
    """IP_snum = IP_num / STP_m: packets per storage server per job ([Cui06], text of eq. 6).

    Parameters
    ----------
    packets : float or array_like
        IP_num from :func:`ip_packets` (>= 0).
    stripe_width : int or array_like of int
        STP_m, stripe units per stripe = storage servers (>= 1).

    Returns
    -------
    ndarray
        Mean packets per server per job; not rounded (the paper does not round it).
    """
    p = as_array(packets, "packets (IP_num)", "packets")
    w = as_count_array(stripe_width, "stripe_width (STP_m)", 1)
    return p / w


def master_nic_demand(packets, frame_size, link_rate, master_cache_hit=0.0):
    """D_Nm = (1 - P_m) * IP_num * Frame_e / TRate_e: master NIC demand, [Cui06] eq. (7).

    Parameters
    ----------
    packets : float or array_like
        IP_num, packets per job (eq. 3), >= 0.
    frame_size : float or array_like
        Frame_e, Ethernet frame size on the wire, bytes (> 0); 1518 B.
    link_rate : float or array_like
        TRate_e, Ethernet rate, **bytes/s** (> 0): 100 Mbit/s is 12.5e6.
    master_cache_hit : float or array_like
        P_m, master cache hit rate in [0, 1]; a hit needs no network transfer.

    Returns
    -------
    ndarray
        Seconds per job (>= 0).
    """
    p = as_array(packets, "packets (IP_num)", "packets")
    f = as_array(frame_size, "frame_size (Frame_e)", "bytes", positive=True)
    r = as_array(link_rate, "link_rate (TRate_e)", "bytes/s", positive=True)
    h = as_probability_array(master_cache_hit, "master_cache_hit (P_m)")
    return (1.0 - h) * (p * f / r)


def server_nic_demand(
    server_packets, frame_size, link_rate, stripe_width, master_cache_hit=0.0, server_terms="paper"
):
    """D_Nsn = (1 - P_m)/STP_m * IP_snum * Frame_e / TRate_e: storage-server NIC, [Cui06] eq. (8).

    Parameters
    ----------
    server_packets : float or array_like
        IP_snum = IP_num / STP_m, packets per server per job (>= 0).
    frame_size : float or array_like
        Frame_e, bytes (> 0).
    link_rate : float or array_like
        TRate_e, bytes/s (> 0).
    stripe_width : int or array_like of int
        STP_m (>= 1).
    master_cache_hit : float or array_like
        P_m in [0, 1].
    server_terms : {"paper", "one_server", "all_servers"}
        Reading of the 1/STP_m prefactor; ``"paper"`` is eq. (8) as printed
        (see :func:`~qnmodel.demands.raid_bytes.server_visit_ratio`).

    Returns
    -------
    ndarray
        Seconds per job (>= 0).
    """
    p = as_array(server_packets, "server_packets (IP_snum)", "packets")
    f = as_array(frame_size, "frame_size (Frame_e)", "bytes", positive=True)
    r = as_array(link_rate, "link_rate (TRate_e)", "bytes/s", positive=True)
    h = as_probability_array(master_cache_hit, "master_cache_hit (P_m)")
    v = server_visit_ratio(stripe_width, server_terms)
    return (1.0 - h) * v * (p * f / r)
