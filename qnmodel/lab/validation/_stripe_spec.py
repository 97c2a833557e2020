"""The stripe study's cases and its ``[stripe]`` table checked (beside ``_nfs_spec`` for the
NFS study; the RAID study's ``parse`` is in ``raid``).

It takes the parsed TOML and returns the table in SI units with defaults filled, or raises
our error naming the field and the value: a study file is checked before anything is brought
up (``qnmodel.lab.validation.parse_study``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..._validate import as_quantity
from ...errors import InvalidModelError

__all__ = ["parse_stripe", "Case", "CHUNK", "SERVICE", "WORKLOADS"]

CHUNK = 64 * 1024  # stripe unit, bytes
SERVICE = 4e-3  # emu member service time (mean), s: large against wake-up noise
WORKLOADS = ("raid0-read", "raid5-read", "raid5-rmw")


@dataclass(frozen=True)
class Case:
    """One measured configuration: a workload over ``width`` members of one kind.

    ``member`` is ``"emu"`` or ``"file"``; ``dist`` the emu service distribution
    (``"exp"`` or ``"const"``, ignored for files).
    """

    workload: str
    width: int
    member: str = "emu"
    dist: str = "exp"

    @property
    def raid(self) -> int:
        return 0 if self.workload.startswith("raid0") else 5

    @property
    def rw(self) -> str:
        return "randwrite" if self.workload.endswith("rmw") else "randread"

    @property
    def bs(self) -> int:
        if self.workload == "raid0-read":
            return self.width * CHUNK
        if self.workload == "raid5-read":
            return (self.width - 1) * CHUNK
        return 4096

    @property
    def label(self) -> str:
        member = f"emu-{self.dist}" if self.member == "emu" else "file-tmpfs"
        return f"{self.workload} w={self.width} {member}"


def _grid(workloads, widths, members) -> tuple[Case, ...]:
    out = []
    for member, dist in members:
        for wl in workloads:
            for w in widths:
                if wl.startswith("raid5") and w < 3:
                    continue
                out.append(Case(wl, w, member, dist))
    return tuple(out)


_MEMBER_KINDS = {"emu-exp": ("emu", "exp"), "emu-const": ("emu", "const"), "file": ("file", "-")}
_STRIPE_KEYS = ("workloads", "widths", "members", "jobs", "service", "runtime")


def _names(raw: Any, field: str, choices: Sequence[str]) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw:
        raise InvalidModelError(f"stripe.{field} must be a non-empty list, got {raw!r}")
    for v in raw:
        if not isinstance(v, str) or v not in choices:
            raise InvalidModelError(
                f"stripe.{field}: {v!r} is not one of {', '.join(repr(c) for c in choices)}"
            )
    return tuple(raw)


def _ints(raw: Any, field: str, low: int, high: int) -> tuple[int, ...]:
    if (
        not isinstance(raw, list)
        or not raw
        or not all(isinstance(n, int) and not isinstance(n, bool) and low <= n <= high for n in raw)
    ):
        raise InvalidModelError(f"stripe.{field} must be integers {low}..{high}, got {raw!r}")
    return tuple(raw)


def parse_stripe(spec: dict[str, Any]) -> dict[str, Any]:
    """Check the ``[stripe]`` table of a stripe study; returns it in SI with defaults.

    Keys (all optional): ``workloads`` (of :data:`WORKLOADS`),
    ``widths`` (qnbench's member counts 2..16; RAID5 workloads skip widths below 3),
    ``members`` (``"emu-exp"``, ``"emu-const"``, ``"file"``), ``jobs`` (1..1024 clients),
    ``service`` and ``runtime`` (times > 0, ``"4 ms"`` or seconds).

    Raises
    ------
    InvalidModelError, InvalidTypeError, UnitError
        an unknown key, workload or member kind, or a value out of range (naming the field).
    """
    cfg = spec.get("stripe", {})
    if not isinstance(cfg, dict):
        raise InvalidModelError(f"stripe must be a table, got {cfg!r}")
    for k in cfg:
        if k not in _STRIPE_KEYS:
            raise InvalidModelError(f"stripe.{k}: unknown key (allowed: {', '.join(_STRIPE_KEYS)})")
    workloads = _names(cfg.get("workloads", ["raid0-read"]), "workloads", WORKLOADS)
    members = _names(cfg.get("members", ["emu-exp"]), "members", tuple(_MEMBER_KINDS))
    widths = _ints(cfg.get("widths", [4]), "widths", 2, 16)
    cases = _grid(workloads, widths, tuple(_MEMBER_KINDS[m] for m in members))
    if not cases:
        raise InvalidModelError(
            f"stripe.widths {list(widths)!r}: RAID5 workloads need a width of 3 or more"
        )
    service = as_quantity(cfg.get("service", SERVICE), "stripe.service", "time", positive=True)
    runtime = as_quantity(cfg.get("runtime", 3.0), "stripe.runtime", "time", positive=True)
    jobs = _ints(cfg.get("jobs", [1, 4, 16]), "jobs", 1, 1024)
    return {"cases": cases, "jobs": jobs, "service": service, "runtime": runtime}
