"""The RAID levels and operations qnmodel knows, in one table.

Both the networked-RAID demand formulas (:mod:`qnmodel.demands.raid_bytes`, seed 002) and
the RAID speedup/efficiency model (:mod:`qnmodel.models.raid`, seed 003) read their levels,
operations, member minimums, redundancy and write penalties from here, so a level is
added (or a rule corrected) in one place.

====== ============ ================== ======== ============= ==============
level  min members  min stripe width   parity   write penalty data members
====== ============ ================== ======== ============= ==============
raid0  1            1                  0        1             N
raid1  2            2 (== 2)           mirror   N             1
raid10 4 (even)     2                  mirror   2             N/2
raid5  3            2                  1        4             N-1
raid6  4            3                  2        6             N-2
====== ============ ================== ======== ============= ==============

*Min members* is the smallest array of member disks (seed 003's arrays); *min stripe width*
is the smallest STP_m of seed 002's byte factor, where one stripe unit lives on each storage
server (a two-server RAID5 stripe is a data unit and its parity). The write penalty counts
back-end operations per small random write (Chen et al. 1994, sec. 3; Intel VROC RAID
performance analysis).

References
----------
.. [CLGK94] P. M. Chen, E. K. Lee, G. A. Gibson, R. H. Katz, D. A. Patterson,
   "RAID: high-performance, reliable secondary storage", ACM Computing Surveys
   26(2):145-185, 1994.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["RaidLevel", "RAID", "RAID_LEVELS", "OPERATIONS", "raid_level"]


@dataclass(frozen=True)
class RaidLevel:
    """One RAID level's rules.

    Attributes
    ----------
    name : str
    min_disks : int
        Smallest member count of an array of this level.
    even_disks : bool
        Member count must be even (mirrored pairs).
    min_stripe_width : int
        Smallest stripe width STP_m (units per stripe) of seed 002's byte factor.
    exact_stripe_width : int or None
        The only stripe width allowed (a two-way mirror), or None.
    parity_units : int
        Parity units per stripe (0 for raid0 and the mirrors).
    mirrored : bool
        Every byte is written to two (raid10) or N (raid1) members.
    write_penalty : int or None
        Back-end operations per small random write; None means N (raid1: every mirror).
    """

    name: str
    min_disks: int
    even_disks: bool
    min_stripe_width: int
    exact_stripe_width: int | None
    parity_units: int
    mirrored: bool
    write_penalty: int | None

    def data_disks(self, n: int) -> int:
        """Members holding distinct data in an array of ``n`` members."""
        if self.name == "raid1":
            return 1
        if self.mirrored:
            return n // 2
        return n - self.parity_units


_TABLE = (
    RaidLevel("raid0", 1, False, 1, None, 0, False, 1),
    RaidLevel("raid1", 2, False, 2, 2, 0, True, None),
    RaidLevel("raid10", 4, True, 2, None, 0, True, 2),
    RaidLevel("raid5", 3, False, 2, None, 1, False, 4),
    RaidLevel("raid6", 4, False, 3, None, 2, False, 6),
)

#: name -> RaidLevel (read-only)
RAID: Mapping[str, RaidLevel] = MappingProxyType({lv.name: lv for lv in _TABLE})
#: the level names, in order
RAID_LEVELS: tuple[str, ...] = tuple(RAID)
#: the operations every RAID model distinguishes
OPERATIONS: tuple[str, ...] = ("read", "write")


def raid_level(name: str, field: str = "level") -> RaidLevel:
    """The table row of ``name``; an :class:`~qnmodel.errors.InvalidModelError` otherwise."""
    from ._validate import as_choice

    return RAID[as_choice(name, field, RAID_LEVELS)]
