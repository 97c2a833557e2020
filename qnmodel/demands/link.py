"""Network (link) transfer demand, [Cui06] eq. (9).

References
----------
.. [Cui06] Cui B., Liu J., Wang G., Liu J., Journal on Communications
   27(1):69-74, 2006, sec. 3.2, eq. (9).
"""

from __future__ import annotations

from ._common import as_array, as_probability_array

__all__ = ["network_demand"]


def network_demand(raid_bytes, link_rate, master_cache_hit=0.0):
    """D_Net = (1 - P_m) * S_mRi / TRate_e: time a job's bytes spend on the network, eq. (9).

    Parameters
    ----------
    raid_bytes : float or array_like
        S_mRi, bytes moved per job (eqs. 4-5), bytes (>= 0).
    link_rate : float or array_like
        TRate_e, link rate in **bytes/s** (> 0); ``qnmodel.units.parse("100 Mbit/s")``
        gives 12.5e6.
    master_cache_hit : float or array_like
        P_m in [0, 1].

    Returns
    -------
    ndarray
        Seconds per job (>= 0).

    Notes
    -----
    Eq. (9) counts payload bytes only; the framing overhead (Frame_e vs MSS)
    appears in the NIC demands, eqs. (7)-(8).
    """
    s = as_array(raid_bytes, "raid_bytes (S_mRi)", "bytes")
    r = as_array(link_rate, "link_rate (TRate_e)", "bytes/s", positive=True)
    h = as_probability_array(master_cache_hit, "master_cache_hit (P_m)")
    return (1.0 - h) * (s / r)
