"""The paper's three-case NFS bandwidth model ([Cao07] sec. 1, fig. 1) and its input checks.

See :mod:`qnmodel.models.nfs` for the model and the references.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validate import as_hit_ratio, as_quantity
from ...errors import InvalidTypeError

__all__ = ["NFSBandwidth", "requests_for"]


def _out(x: np.ndarray) -> float | np.ndarray:
    """A float for 0-d results, the array otherwise."""
    return float(x) if np.ndim(x) == 0 else x


def requests_for(nbytes: float | str, size: float | str, name: str = "size") -> int:
    """NFS RPC requests needed to move ``nbytes`` in requests of ``size`` bytes.

    ``ceil(nbytes / size)``: ``rsize``/``wsize`` turn bytes into requests, and
    every request pays the per-request costs of :class:`NFSSystem`
    ([Cao07] sec. 3.3).

    >>> requests_for("1 MiB", "32 KiB")
    32
    >>> requests_for(100_000, "32 KiB")
    4
    """
    s = as_quantity(nbytes, "nbytes", "size")
    r = as_quantity(size, name, "size", positive=True)
    return int(math.ceil(s / r))


# --------------------------------------------------------------------------- the paper's model
def _harmonic(weights: list[Any], times: list[Any], rates: list[Any]) -> float | np.ndarray:
    """1 / sum(w_i t_i), exact (the case rate itself) where one weight is 1."""
    total = sum(w * t for w, t in zip(weights, times, strict=True))
    with np.errstate(divide="ignore"):
        out = np.divide(1.0, total)
    out = np.asarray(out, dtype=np.float64)
    for w, r in zip(weights, rates, strict=True):
        out = np.where(np.asarray(w) == 1.0, r, out)
    return _out(out)


def _rate(b: float, extra: float) -> float:
    """Rate of a stage of bandwidth b (bytes/s) plus ``extra`` seconds per byte."""
    return b if extra == 0.0 else 1.0 / (1.0 / b + extra)


@dataclass(frozen=True)
class NFSBandwidth:
    """The three-case NFS bandwidth model of [Cao07] (sec. 1, fig. 1).

    Parameters
    ----------
    b1 : float or str
        Client memory-bus bandwidth, bytes/s (> 0): the rate of a request
        served from the client cache.
    b2 : float or str
        Network bandwidth between client and server, bytes/s (> 0).
    b3 : float or str
        Server memory-bus bandwidth, bytes/s (> 0).
    b4 : float or str
        Server storage bandwidth, bytes/s (> 0).

    Examples
    --------
    >>> m = NFSBandwidth("10 GB/s", "1 Gbit/s", "10 GB/s", "80 MB/s")
    >>> m.bandwidth(True, False) == m.b1
    True
    >>> m.bandwidth(False, True) / 1e6      # the network, b2
    125.0
    >>> m.bandwidth(False, False) / 1e6     # the disk, min(b2, b4)
    80.0
    >>> round(m.bandwidth(0.5, 0.0) / 1e6, 3)  # 1 / (0.5/b1 + 0.5/b4)
    158.73
    """

    b1: float
    b2: float
    b3: float
    b4: float

    def __post_init__(self) -> None:
        for name, what in (
            ("b1", "client memory bandwidth"),
            ("b2", "network bandwidth"),
            ("b3", "server memory bandwidth"),
            ("b4", "storage bandwidth"),
        ):
            v = as_quantity(getattr(self, name), f"{name} ({what})", "rate", positive=True)
            object.__setattr__(self, name, v)

    @property
    def client_hit_bandwidth(self) -> float:
        """b1, bytes/s: a client-cache hit."""
        return self.b1

    @property
    def server_hit_bandwidth(self) -> float:
        """min(b2, b3), bytes/s: a server-cache hit (the paper takes b3 >> b2, giving b2)."""
        return min(self.b2, self.b3)

    @property
    def miss_bandwidth(self) -> float:
        """min(b2, b3, b4), bytes/s: a miss in both caches (= min(b2, b4) when b3 >> b2)."""
        return min(self.b2, self.b3, self.b4)

    def case_bandwidths(self) -> dict[str, float]:
        """The three cases: ``{"client_hit": b1, "server_hit": ..., "miss": ...}``, bytes/s."""
        return {
            "client_hit": self.client_hit_bandwidth,
            "server_hit": self.server_hit_bandwidth,
            "miss": self.miss_bandwidth,
        }

    def bottleneck(self, client_hit: Any, server_hit: Any) -> str:
        """Name of the resource that limits a single case (booleans only).

        One of ``"b1"`` (client memory), ``"b2"`` (network), ``"b3"``
        (server memory), ``"b4"`` (storage); ties go to the earlier name.
        """
        if not isinstance(client_hit, bool | np.bool_) or not isinstance(
            server_hit, bool | np.bool_
        ):
            raise InvalidTypeError(
                "bottleneck() names the limit of one case: client_hit and server_hit must be "
                f"booleans, got {client_hit!r} and {server_hit!r}"
            )
        if client_hit:
            return "b1"
        path = {"b2": self.b2, "b3": self.b3}
        if not server_hit:
            path["b4"] = self.b4
        return min(path, key=path.__getitem__)

    def bandwidth(self, client_hit: Any, server_hit: Any) -> float | np.ndarray:
        """Expected NFS bandwidth, bytes/s, for client and server hits or hit ratios.

        Parameters
        ----------
        client_hit : bool, float or array_like
            ``True``/``False`` for one request, or the client-cache hit ratio
            h_c in [0, 1].
        server_hit : bool, float or array_like
            The server-cache hit ratio h_s in [0, 1] of the requests that miss
            the client cache (``True``/``False`` for one request).

        Returns
        -------
        float or ndarray
            ``1 / (h_c/b1 + (1-h_c) (h_s/min(b2,b3) + (1-h_s)/min(b2,b3,b4)))``,
            time-weighted ([Cao07] sec. 1 per case); the arguments broadcast.
            At h_c = 1, or h_c = 0 with h_s in {0, 1}, the case bandwidth is
            returned exactly.
        """
        hc = as_hit_ratio(client_hit, "client_hit")
        hs = as_hit_ratio(server_hit, "server_hit")
        hc, hs = np.broadcast_arrays(np.asarray(hc, dtype=np.float64), hs)
        rates = [self.client_hit_bandwidth, self.server_hit_bandwidth, self.miss_bandwidth]
        weights = [hc, (1.0 - hc) * hs, (1.0 - hc) * (1.0 - hs)]
        return _harmonic(weights, [1.0 / r for r in rates], rates)
