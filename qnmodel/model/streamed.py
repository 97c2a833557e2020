"""A streaming group: the part of each station's demand that streams with the others.

A server that streams from its disk into the network works on one job at several stations
at once (docs/explanation/overlap.md, "Streaming servers"). The group is described by
``streamed = {station name: G_k}``, G_k the share of station k's demand D_k that crosses
the group at the same time as the other members' shares; the rest, D_k - G_k, stays serial.
:func:`streamed_parts` validates that description once for the solver
(:func:`qnmodel.models.streaming.streaming_mva`) and the simulation
(:func:`qnmodel.simulation.streaming.simulate_streaming`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._validate import as_quantity
from ..errors import InvalidModelError, InvalidTypeError
from .network import Network

__all__ = ["StreamedParts", "streamed_parts"]


@dataclass(frozen=True)
class StreamedParts:
    """A network's stations split into serial and streamed demand (arrays over stations).

    Attributes
    ----------
    names : tuple of str
    demand : ndarray
        D_k, s.
    streamed : ndarray
        G_k, 0 <= G_k <= D_k, s; at least one is > 0.
    servers : ndarray of int
        m_k (1 at a delay station).
    delay : ndarray of bool
        Whether station k is a delay (infinite-server) station.
    """

    names: tuple
    demand: np.ndarray
    streamed: np.ndarray
    servers: np.ndarray
    delay: np.ndarray

    @property
    def serial(self) -> np.ndarray:
        """D_k - G_k, the part of each demand that does not stream, s."""
        return self.demand - self.streamed


def streamed_parts(network: Network, streamed: Mapping, who: str) -> StreamedParts:
    """Validate ``streamed`` against ``network`` for ``who`` (the caller, for messages).

    Refused: a ``network`` that is not a :class:`Network`; a ``streamed`` that is not a
    mapping keyed by station names; fewer than two stations, or names not in the network; a
    fork-join or a station with ``rate_multipliers`` (neither is one or m servers); a G_k
    outside [0, D_k] (G_k takes unit strings, "2 ms"); every G_k = 0 (nothing streams).
    """
    if not isinstance(network, Network):
        raise InvalidTypeError(f"{who}: network must be a Network, got {type(network).__name__}")
    if not isinstance(streamed, Mapping):
        raise InvalidTypeError(
            "streamed must be a mapping {station name: streamed part of its demand (s)}, "
            f"got {streamed!r}"
        )
    for key in streamed:
        if not isinstance(key, str):
            raise InvalidTypeError(
                f"streamed must be keyed by station names (str), got {key!r} of type "
                f"{type(key).__name__}"
            )
    names = tuple(s.name for s in network.stations)
    unknown = sorted(set(streamed) - set(names))
    if unknown or len(streamed) < 2:
        raise InvalidModelError(
            f"streamed must name at least two stations of the network {names}, got "
            f"{sorted(streamed)}" + (f" ({unknown} not in it)" if unknown else "")
        )
    K = len(names)
    D, G = np.zeros(K), np.zeros(K)
    m, delay = np.ones(K, dtype=np.int64), np.zeros(K, dtype=bool)
    for k, s in enumerate(network.stations):
        if getattr(s, "branches", None) is not None or not hasattr(s, "demand"):
            raise InvalidModelError(
                f"{who}: station {s.name!r} is not a queue or delay station (a fork-join): "
                "solve or simulate it with the fork-join tools (qnmodel.simulate)"
            )
        if getattr(s, "rate_multipliers", None) is not None:
            raise InvalidModelError(
                f"{who}: station {s.name!r} has rate_multipliers, which a streaming group does "
                "not model (a rate curve would be read as one server): use the series network "
                "(qnmodel.mva, qnmodel.simulate)"
            )
        D[k] = float(s.demand)
        delay[k] = s.kind == "delay"
        m[k] = 1 if delay[k] else int(getattr(s, "servers", 1) or 1)
        if s.name not in streamed:
            continue
        g = as_quantity(streamed[s.name], f"streamed[{s.name!r}]", "time")
        if not 0.0 <= g <= D[k] * (1 + 1e-12):
            raise InvalidModelError(
                f"streamed[{s.name!r}] must lie in [0, the station's demand {D[k]:.6g} s], got "
                f"{streamed[s.name]!r}: the streamed part is a share of the station's work"
            )
        G[k] = min(g, D[k])
    if not np.any(G > 0):
        raise InvalidModelError("streamed: every streamed part is 0; give some G_k > 0")
    return StreamedParts(names, D, G, m, delay)
