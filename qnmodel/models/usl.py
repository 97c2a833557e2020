"""Gunther's Universal Scalability Law: evaluation, peak and the unchecked kernel of the fit.

    X(N) = lam N / (1 + sigma (N - 1) + kappa N (N - 1))            [Gun07] eq. 4.31

``lam`` is the throughput of one client (X(1), in the unit of X: ops/s or bytes/s), ``sigma``
the contention (serialisation) coefficient in [0, 1] and ``kappa`` the coherency (crosstalk)
coefficient >= 0. It is the form for measured aggregate curves that rise, peak and *fall*
([Cao07] fig. 5: a peak near 18 clients, then a collapse), which no product-form closed network
can produce (its throughput never decreases with N).

The peak
--------
With kappa > 0, dX/dN = 0 at the real-valued concurrency

    N* = sqrt((1 - sigma) / kappa)                                   [Gun07] eq. 4.33

and the **maximum throughput** of this module is X at N* (at N = 1 when N* < 1, since N >= 1):
``USL.max_throughput``, :func:`usl_max_throughput` and the ``peak_throughput`` that
:func:`qnmodel.calibration.fit_usl` reports are this one number. The best *integer* client
count and its throughput are separate, named so: ``USL.peak_clients`` and
``USL.peak_clients_throughput`` (always <= ``max_throughput``). With kappa = 0 there is no
peak: N* = inf and X rises to the limit lam / sigma (inf when sigma = 0 too).

Evaluation lives here (one home, used by :mod:`qnmodel.models.nfs` and the calibration fit);
fitting lives in :mod:`qnmodel.calibration.usl`.

References
----------
.. [Gun07] N. J. Gunther, *Guerrilla Capacity Planning*, Springer, 2007, ch. 4 (eq. 4.31 the
   USL, eq. 4.33 the peak N*), ch. 5 (fitting by regression).
.. [Cao07] Cao L., Luo H., Zhang X., "Measurement and analysis of factors affecting NFS
   bandwidth in cluster", Computer Engineering, 2007, sec. 3.4 and fig. 5.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_probability, as_quantity
from ..errors import InvalidModelError, InvalidTypeError

__all__ = [
    "USL",
    "usl_kernel",
    "usl_peak_kernel",
    "usl_max_throughput",
    "usl_peak_concurrency",
    "usl_throughput",
]


# --------------------------------------------------------------------------- kernels
def usl_kernel(n: Any, lam: float, sigma: float, kappa: float) -> np.ndarray:
    """X(N) of [Gun07] eq. 4.31 on float64 arrays, **without checks**.

    The inner loop of :func:`qnmodel.calibration.fit_usl`, whose optimiser must evaluate
    coefficients on their bounds (``lam = 0``); everything public goes through
    :func:`usl_throughput`, which validates first.
    """
    n = np.asarray(n, dtype=np.float64)
    return lam * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def usl_peak_kernel(lam: float, sigma: float, kappa: float) -> tuple[float, float]:
    """``(N*, X_max)`` without checks: N* = sqrt((1 - sigma)/kappa) ([Gun07] eq. 4.33) and
    X at max(N*, 1); ``(inf, lam / sigma)`` when kappa = 0 (``inf`` when sigma = 0 too)."""
    if kappa <= 0.0:
        return math.inf, (lam / sigma if sigma > 0.0 else math.inf)
    n_star = math.sqrt(max(1.0 - sigma, 0.0) / kappa)
    return n_star, float(usl_kernel(max(n_star, 1.0), lam, sigma, kappa))


# --------------------------------------------------------------------------- checked API
def _usl_params(lam: Any, sigma: Any, kappa: Any) -> tuple[float, float, float]:
    lam_v = as_quantity(lam, "lam", "rate", positive=True)
    sigma_v = as_probability(sigma, "sigma")
    if not isinstance(kappa, numbers.Real) or isinstance(kappa, bool | np.bool_):
        raise InvalidTypeError(f"kappa must be a number >= 0, got {kappa!r}")
    kappa_v = float(kappa)
    if not (math.isfinite(kappa_v) and kappa_v >= 0.0):
        raise InvalidModelError(f"kappa (coherency) must be finite and >= 0, got {kappa!r}")
    return lam_v, sigma_v, kappa_v


def _as_concurrency(N: Any) -> np.ndarray:
    """Real-valued concurrency N >= 1 (the curve is defined between integers too)."""
    arr = np.asarray(N)
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise InvalidTypeError(f"N must be numbers >= 1 (clients), got {N!r}")
    arr = arr.astype(np.float64)
    bad = ~(arr >= 1.0) | ~np.isfinite(arr)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidModelError(f"N must be finite and >= 1 (clients), got {float(arr[idx])!r}")
    return arr


def _out(x: np.ndarray) -> float | np.ndarray:
    """A Python float for a 0-d result, the array otherwise."""
    return float(x) if np.ndim(x) == 0 else x


def usl_throughput(N: Any, lam: Any, sigma: Any, kappa: Any) -> float | np.ndarray:
    """Universal Scalability Law ([Gun07] eq. 4.31), broadcasting over ``N``.

    ``X(N) = lam N / (1 + sigma (N - 1) + kappa N (N - 1))``.

    Parameters
    ----------
    N : float or array_like
        Concurrency (clients, processes), >= 1.
    lam : float or str
        X(1), the throughput of one client (> 0), in the unit of X (a rate
        string such as ``"11 MB/s"`` is read as bytes/s).
    sigma : float
        Contention (serial fraction), in [0, 1].
    kappa : float
        Coherency (crosstalk) coefficient, >= 0; with kappa > 0 the curve
        peaks and then falls.

    Returns
    -------
    float or numpy.ndarray
        X(N) in the unit of ``lam`` (a float for a scalar N).
    """
    lam_v, s, k = _usl_params(lam, sigma, kappa)
    return _out(usl_kernel(_as_concurrency(N), lam_v, s, k))


def usl_peak_concurrency(sigma: Any, kappa: Any) -> float:
    """N* = sqrt((1 - sigma) / kappa), where X(N) of the USL peaks ([Gun07] eq. 4.33).

    ``inf`` when kappa = 0 (no retrograde region). Can be below 1 (sigma near
    1): then the best concurrency is 1.
    """
    _, s, k = _usl_params(1.0, sigma, kappa)
    return usl_peak_kernel(1.0, s, k)[0]


def usl_max_throughput(lam: Any, sigma: Any, kappa: Any) -> float:
    """The largest X(N) over real N >= 1: X(max(N*, 1)) ([Gun07] eq. 4.31 at eq. 4.33).

    ``lam / sigma`` when kappa = 0 (the limit N -> inf; ``inf`` when sigma = 0 too).
    The same number as :attr:`USL.max_throughput` and the ``peak_throughput`` of
    :func:`qnmodel.calibration.fit_usl`.
    """
    return usl_peak_kernel(*_usl_params(lam, sigma, kappa))[1]


@dataclass(frozen=True)
class USL:
    """Gunther's Universal Scalability Law with fixed coefficients ([Gun07] ch. 4).

    Attributes
    ----------
    lam : float
        X(1), throughput of one client (> 0), in the unit of X.
    sigma : float
        Contention, in [0, 1].
    kappa : float
        Coherency, >= 0.

    Examples
    --------
    >>> u = USL(lam=1.0, sigma=0.05, kappa=0.0029)
    >>> round(u.peak_concurrency, 2), u.peak_clients
    (18.1, 18)
    """

    lam: float
    sigma: float
    kappa: float

    def __post_init__(self) -> None:
        lam, s, k = _usl_params(self.lam, self.sigma, self.kappa)
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "sigma", s)
        object.__setattr__(self, "kappa", k)

    def throughput(self, N: Any) -> float | np.ndarray:
        """X(N), broadcasting over N (>= 1)."""
        return _out(usl_kernel(_as_concurrency(N), self.lam, self.sigma, self.kappa))

    def efficiency(self, N: Any) -> float | np.ndarray:
        """X(N) / (N X(1)): the fraction of linear scaling achieved, in (0, 1]."""
        n = _as_concurrency(N)
        return _out(usl_kernel(n, self.lam, self.sigma, self.kappa) / (self.lam * n))

    @property
    def peak_concurrency(self) -> float:
        """N* = sqrt((1 - sigma) / kappa), the real-valued peak (``inf`` when kappa = 0)."""
        return usl_peak_kernel(self.lam, self.sigma, self.kappa)[0]

    @property
    def max_throughput(self) -> float:
        """X at the real-valued peak max(N*, 1); lam / sigma when kappa = 0 (inf if sigma = 0).

        The same number as :func:`usl_max_throughput` and the fit's ``peak_throughput``; the
        throughput at the best integer client count is :attr:`peak_clients_throughput`.
        """
        return usl_peak_kernel(self.lam, self.sigma, self.kappa)[1]

    @property
    def peak_clients(self) -> int | float:
        """The integer N >= 1 with the largest X(N) (``inf`` when kappa = 0)."""
        p = self.peak_concurrency
        if math.isinf(p):
            return math.inf
        lo = max(1, math.floor(p))
        cands = [lo, lo + 1]
        xs = [float(self.throughput(c)) for c in cands]
        return cands[int(np.argmax(xs))]

    @property
    def peak_clients_throughput(self) -> float:
        """X at :attr:`peak_clients` (<= :attr:`max_throughput`); the limit when kappa = 0."""
        p = self.peak_clients
        if math.isinf(p):
            return self.max_throughput
        return float(self.throughput(p))
