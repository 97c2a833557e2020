"""The stripe study's ``[stripe]`` table checked (beside ``_nfs_spec`` for the NFS study; the
RAID study's ``parse`` is in ``raid``).

It takes the parsed TOML and returns the table in SI units with defaults filled, or raises
our error naming the field and the value: a study file is checked before anything is brought
up (``qnmodel.validation.parse_study``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._validate import as_quantity
from ..errors import InvalidModelError

__all__ = ["parse_stripe"]

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

    Keys (all optional): ``workloads`` (of :data:`~qnmodel.validation.stripe.WORKLOADS`),
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
    from .stripe import SERVICE, WORKLOADS, _grid

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
