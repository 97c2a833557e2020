"""Per-station service-demand formulas of the networked-RAID system of seed 002.

One function per formula of Cui et al. (2006), each a pure numpy kernel that
broadcasts over arrays (so :mod:`qnmodel.whatif.grid` evaluates a whole what-if
grid in one call). Plain numbers are SI: bytes, seconds, bytes/s.

=====================  ===========================================  ==========
function               formula                                      paper
=====================  ===========================================  ==========
master_cpu_demand      D_Cm = T_mpro S_m/STU_m + (1-P_m) T_mp IP    eq. (2)
ip_packets             IP_num = ceil(S_mRi / MSS)                   eq. (3)
raid_bytes             S_mR5 = S_m STP/(STP-1) (write), S_m (read)  eqs. (4-5)
server_bytes           S_sn = S_mRi / STP_m                         under (6)
server_ip_packets      IP_snum = IP_num / STP_m                     under (6)
server_cpu_demand      D_Csn                                        eq. (6)
master_nic_demand      D_Nm = (1-P_m) IP_num Frame_e / TRate_e      eq. (7)
server_nic_demand      D_Nsn                                        eq. (8)
network_demand         D_Net = (1-P_m) S_mRi / TRate_e              eq. (9)
disk_demand            D_d                                          eq. (10)
=====================  ===========================================  ==========

:mod:`qnmodel.models.storage` composes them into a closed network.
"""

from .cpu import master_cpu_demand, server_cpu_demand
from .disk import disk_demand, disk_unit_time
from .link import network_demand
from .nic import ip_packets, master_nic_demand, server_ip_packets, server_nic_demand
from .raid_bytes import (
    MIN_STRIPE_WIDTH,
    OPERATIONS,
    RAID_LEVELS,
    raid_byte_factor,
    raid_bytes,
    server_bytes,
    server_visit_ratio,
)

__all__ = [
    "MIN_STRIPE_WIDTH",
    "OPERATIONS",
    "RAID_LEVELS",
    "disk_demand",
    "disk_unit_time",
    "ip_packets",
    "master_cpu_demand",
    "master_nic_demand",
    "network_demand",
    "raid_byte_factor",
    "raid_bytes",
    "server_bytes",
    "server_cpu_demand",
    "server_ip_packets",
    "server_nic_demand",
    "server_visit_ratio",
]
