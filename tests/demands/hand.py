"""Independent hand evaluation of Cui et al. (2006) eqs. (2)-(10) in exact rational arithmetic.

Written from the paper's text, not from qnmodel's code: plain Python
``fractions.Fraction`` and ``math.ceil``, no numpy, no qnmodel import. The
tests compare qnmodel's float64 results with these exact values.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

# The paper's test bed (sec. 4) in exact SI values, for the readings named.
TESTBED = {
    "S_m": F(200_000_000),  # 200 MB, decimal reading
    "STU_m": F(16384),  # 16 KB read as 16 KiB
    "STP_m": 3,
    "T_mpro": F("0.027e-3"),
    "T_mp": F("0.045e-3"),
    "T_snpro": F("0.033e-3"),
    "T_snp": F("0.028e-3"),
    "MSS": F(1460),
    "Frame_e": F(1518),
    "TRate_e": F(100_000_000, 8),  # 100 Mbit/s in bytes/s
    "seek": F("4.9e-3"),
    "latency": F("2.99e-3"),
    "TRate_d": F(35_000_000),  # 35 MB/s, datasheet reading
    "P_m": F(0),
    "P_sn": F(0),
}


def byte_factor(raid: str, op: str, stp: int) -> F:
    if op == "read" or raid == "raid0":
        return F(1)
    if raid in ("raid1", "raid10"):
        return F(2)
    if raid == "raid5":
        return F(stp, stp - 1)  # eq. (4)
    if raid == "raid6":
        return F(stp, stp - 2)
    raise ValueError(raid)


def hand_demands(p: dict, raid: str = "raid5", op: str = "write", visit: str = "paper") -> dict:
    """Exact demands (Fractions, seconds) of the six stations."""
    p = {k: (v if isinstance(v, int) else F(v)) for k, v in p.items()}
    stp = p["STP_m"]
    miss = 1 - p["P_m"]
    s_r = p["S_m"] * byte_factor(raid, op, stp)  # eqs. (4)-(5)
    ip = F(math.ceil(s_r / p["MSS"]))  # eq. (3), exact ceiling of a rational
    s_sn = s_r / stp
    ip_sn = ip / stp
    pre = {"paper": F(1, stp), "one_server": F(1), "all_servers": F(stp)}[visit]
    return {
        "cpu_master": p["T_mpro"] * p["S_m"] / p["STU_m"] + miss * p["T_mp"] * ip,  # (2)
        "nic_master": miss * ip * p["Frame_e"] / p["TRate_e"],  # (7)
        "network": miss * s_r / p["TRate_e"],  # (9)
        "nic_server": miss * pre * ip_sn * p["Frame_e"] / p["TRate_e"],  # (8)
        "cpu_server": miss * pre * (p["T_snpro"] * s_sn / p["STU_m"] + p["T_snp"] * ip_sn),  # (6)
        "disk": miss
        * pre
        * (1 - p["P_sn"])
        * (p["seek"] + p["latency"] + p["STU_m"] / p["TRate_d"])
        * s_sn
        / p["STU_m"],  # (10)
    }
