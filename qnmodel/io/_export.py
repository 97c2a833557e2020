"""What a model-exchange writer (JMVA, LINE JSON) reads of a network: its compiled arrays and
the classes as they are exported, refusing what the format cannot say."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_population
from ..errors import InvalidModelError, InvalidTypeError
from ..model import FEATURES, Network

__all__ = ["Exported", "export_classes"]


@dataclass(frozen=True)
class Exported:
    """A network as a writer sees it (C classes, K stations)."""

    D: np.ndarray
    names: tuple[str, ...]
    class_names: tuple[str, ...]
    delay: np.ndarray
    servers: np.ndarray
    multipliers: tuple
    discipline: tuple[str, ...]


def export_classes(net: Any, N: Any, writer: str, sayable: set[str]):
    """``(model, is_open, population, arrival_rate, think_time)`` of ``net`` for ``writer``.

    A network without classes is one closed class of ``N`` jobs (required then)
    with the network's think time; ``N`` is refused with classes (they carry their
    own). A feature outside ``sayable`` (keys of :data:`qnmodel.model.FEATURES`) is refused,
    naming it and where it is used: the file would describe another model.
    """
    if not isinstance(net, Network):
        raise InvalidTypeError(f"{writer}: net must be a Network, got {type(net).__name__}")
    cm = net.compiled
    for feature, sites in cm.features.items():
        if feature not in sayable:
            where = ", ".join(map(repr, sites))
            hint = (
                "; with discipline='PS' the means are those the format's product-form solver "
                "computes"
                if feature == "fcfs_class_dependent"
                else ""
            )
            raise InvalidModelError(
                f"{writer} cannot write {FEATURES[feature]} ({where}): the format has no way "
                f"to say it, and the file would describe another model{hint}"
            )
    is_open, pop = np.array(cm.is_open), np.array(cm.N)
    lam, Z = np.array(cm.arrival_rate), np.array(cm.Z)
    if net.single:
        if N is None:
            raise InvalidModelError(
                f"{writer}: N (the population) is required to export a network without "
                f"classes: {writer}(net, N=...)"
            )
        pop[:] = as_population(N, "N")
    elif N is not None:
        raise InvalidModelError(
            f"{writer}: N applies to a network without classes (classes carry theirs)"
        )
    m = Exported(
        D=np.array(cm.D), names=cm.station_names, class_names=cm.class_names,
        delay=np.array(cm.is_delay), servers=np.array(cm.servers), multipliers=cm.rates,
        discipline=cm.discipline,
    )  # fmt: skip
    return m, is_open, pop, lam, Z
