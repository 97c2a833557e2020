"""Closed forms of fork-join that :mod:`.forkjoin` and :mod:`._forkjoin_scv` share: harmonic
numbers and Nelson and Tantawi's open n-way fork-join of identical M/M/1 branches.

References
----------
.. [NT88] R. Nelson, A. N. Tantawi, "Approximate analysis of fork/join synchronization in
   parallel queues", IEEE Trans. Computers 37(6), 1988.
.. [Tho14] A. Thomasian, "Analysis of fork/join and related queueing systems", ACM Computing
   Surveys 47(2), 2014.
.. [FH84] L. Flatto, S. Hahn, "Two parallel queues created by arrivals with two demands I",
   SIAM J. Appl. Math. 44(5), 1984.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UnstableModelError

__all__ = ["fewer_than", "harmonic", "nelson_tantawi"]


def harmonic(n: int) -> float:
    """H_n = 1 + 1/2 + ... + 1/n (H_0 = 0)."""
    return math.fsum(1.0 / i for i in range(1, int(n) + 1))


def nelson_tantawi(n: int, rho: float, demand: float) -> float:
    """Mean response time of an open n-way fork-join of identical M/M/1 branches.

    ``[H_n/H_2 + (1 - H_n/H_2) 4 rho / 11] (12 - rho)/8 * demand / (1 - rho)``
    ([NT88]; [Tho14] Table I eq. (3)); n = 1 is the M/M/1 queue, n = 2 the exact
    [FH84] result.
    """
    if not 0.0 <= rho < 1.0:
        raise UnstableModelError(f"branch utilisation rho must be in [0, 1), got {rho!r}")
    r = demand / (1.0 - rho)
    if n == 1:
        return r
    h = harmonic(n) / 1.5
    return (h + (1.0 - h) * 4.0 * rho / 11.0) * (12.0 - rho) / 8.0 * r


def fewer_than(done: np.ndarray, k: int) -> float:
    """P(fewer than k of independent events with probabilities ``done`` occur): the
    Poisson-binomial distribution, dist[j] = P(exactly j), truncated at k."""
    dist = np.zeros(k + 1)
    dist[0] = 1.0
    for p in done:
        dist[1:] = dist[1:] * (1.0 - p) + dist[:-1] * p
        dist[0] *= 1.0 - p
    return float(dist[:k].sum())
