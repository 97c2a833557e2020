"""The bound formulas on aggregates, broadcast over any array shape: asymptotic (ABA) and
balanced job (BJB) bounds of a closed single-class network ([LZGS] ch. 5; [Cui06] eq. 1).

Shared by :mod:`qnmodel.solvers.bounds` (one network), the geometric and proportional
bounds (:mod:`qnmodel.solvers.bounds_geometric`) and the what-if grid
(:mod:`qnmodel.whatif.grid`, a whole grid at once); see :mod:`qnmodel.solvers.bounds` for
the references and the treatment of delay stations.
"""

from __future__ import annotations

import numpy as np

__all__ = ["aba_from_aggregates", "bjb_from_aggregates"]


def aba_from_aggregates(n, D, Dmax, Z, Ddelay=0.0):
    """ABA on X(n) and R(n) from aggregate demands; all arguments broadcast.

    Parameters
    ----------
    n : array_like
        Populations (>= 1).
    D : array_like
        Sum of queueing-station demands, s (>= 0).
    Dmax : array_like
        Largest per-server queueing demand D_k / m_k, s (>= 0).
    Z : array_like
        Think time, s (>= 0).
    Ddelay : array_like
        Sum of delay-station demands, s (>= 0).

    Returns
    -------
    x_lo, x_hi, r_lo, r_hi : ndarray
        Of the arguments' common broadcast shape (numpy scalars when all are
        scalars); [LZGS] sec. 5.2, with Z' = Z + Ddelay:
        ``N / (N D + Z') <= X(N) <= min(N / (D + Z'), 1 / Dmax)``,
        ``max(D, N Dmax - Z') <= R_q(N) <= N D`` and R = R_q + Ddelay.
    """
    n = np.asarray(n, dtype=np.float64)
    D = np.asarray(D, dtype=np.float64)
    Dmax = np.asarray(Dmax, dtype=np.float64)
    Zp = np.asarray(Z, dtype=np.float64) + Ddelay
    Dd = np.asarray(Ddelay, dtype=np.float64)
    # Each output is written into one array of the full broadcast shape, in place: a grid of
    # 10^5 points x 64 populations then needs 4 such arrays instead of a dozen temporaries.
    shape = np.broadcast_shapes(n.shape, D.shape, Dmax.shape, Zp.shape, Dd.shape)
    x_lo, x_hi, r_lo, r_hi = (np.empty(shape) for _ in range(4))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x_sat = np.where(Dmax > 0, 1.0 / np.where(Dmax > 0, Dmax, 1.0), np.inf)
        np.divide(n, D + Zp, out=x_hi)
        np.minimum(x_hi, x_sat, out=x_hi)
        np.multiply(n, D, out=x_lo)
        x_lo += Zp
        np.divide(n, x_lo, out=x_lo)
    np.multiply(n, Dmax, out=r_lo)
    r_lo -= Zp
    np.maximum(D, r_lo, out=r_lo)
    r_lo += Dd
    np.multiply(n, D, out=r_hi)
    r_hi += Dd
    return _unwrap(x_lo, x_hi, r_lo, r_hi)


def _unwrap(*arrays):
    """The arrays, with 0-d ones as numpy scalars (as ufuncs on scalars return them)."""
    return tuple(a[()] if a.ndim == 0 else a for a in arrays)


def bjb_from_aggregates(n, D, Dmax, Davg, Z, Ddelay=0.0):
    """Balanced job bounds on X(n) and R(n) from aggregate demands; all broadcast.

    With D the total, Dmax the largest and Davg = D / K the mean queueing
    demand, Z' = Z + Ddelay ([LZGS] sec. 5.3, terminal workload):

    ``N / (D + Z' + (N-1) Dmax / (1 + Z'/(N D))) <= X(N)
    <= min(1/Dmax, N / (D + Z' + (N-1) Davg / (1 + Z'/D)))``

    ``max(N Dmax - Z', D + (N-1) Davg / (1 + Z'/D)) <= R_q(N)
    <= D + (N-1) Dmax / (1 + Z'/(N D))``, R = R_q + Ddelay.

    For Z' = 0 these are ``max(N Dmax, D + (N-1) Davg) <= R(N) <= D + (N-1) Dmax``,
    [Cui06] eq. (1). When D = 0 (no queueing demand) the network is a pure
    delay and X = N / Z' exactly.

    Parameters are those of :func:`aba_from_aggregates` plus ``Davg`` (s, >= 0);
    the four outputs ``x_lo, x_hi, r_lo, r_hi`` (jobs/s, jobs/s, s, s) have the
    arguments' common broadcast shape.
    """
    n = np.asarray(n, dtype=np.float64)
    D = np.asarray(D, dtype=np.float64)
    Dmax = np.asarray(Dmax, dtype=np.float64)
    Davg = np.asarray(Davg, dtype=np.float64)
    Zp = np.asarray(Z, dtype=np.float64) + Ddelay
    Dd = np.asarray(Ddelay, dtype=np.float64)
    pos = D > 0
    Ds = np.where(pos, D, 1.0)  # safe divisor; results for D == 0 replaced below
    shape = np.broadcast_shapes(n.shape, D.shape, Dmax.shape, Davg.shape, Zp.shape, Dd.shape)
    # Outputs are built in place in arrays of the full broadcast shape (5 for a whole grid,
    # not a dozen temporaries), with the same operations in the same order as the formulas.
    x_lo, x_hi, r_lo, r_hi, tmp = (np.empty(shape) for _ in range(5))
    DZ = D + Zp
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # shrink_hi = (N-1) Davg / (1 + Z'/D), written (N-1) Davg D / (D + Z') to stay finite
        shrink_hi = r_lo
        np.multiply(n - 1.0, Davg, out=shrink_hi)
        shrink_hi *= Ds
        shrink_hi /= Ds + Zp
        # shrink_lo = (N-1) Dmax / (1 + Z'/(N D)) = (N-1) Dmax N D / (N D + Z')
        shrink_lo = r_hi
        np.multiply(n - 1.0, Dmax, out=shrink_lo)
        shrink_lo *= n
        shrink_lo *= Ds
        np.multiply(n, Ds, out=tmp)
        tmp += Zp
        shrink_lo /= tmp
        x_sat = np.where(Dmax > 0, 1.0 / np.where(Dmax > 0, Dmax, 1.0), np.inf)
        np.add(DZ, shrink_hi, out=x_hi)
        np.divide(n, x_hi, out=x_hi)
        np.minimum(x_sat, x_hi, out=x_hi)
        np.add(DZ, shrink_lo, out=x_lo)
        np.divide(n, x_lo, out=x_lo)
        np.multiply(n, Dmax, out=tmp)
        tmp -= Zp
        shrink_hi += D  # r_lo = max(N Dmax - Z', D + shrink_hi)
        np.maximum(tmp, shrink_hi, out=r_lo)
        shrink_lo += D  # r_hi = D + shrink_lo
        if not np.all(pos):  # a pure delay network: X = N / Z' exactly, R = delays only
            np.divide(n, Zp, out=tmp)
            np.copyto(x_lo, tmp, where=~pos)
            np.copyto(x_hi, tmp, where=~pos)
            np.copyto(r_lo, 0.0, where=~pos)
            np.copyto(r_hi, 0.0, where=~pos)
    r_lo += Dd
    r_hi += Dd
    return _unwrap(x_lo, x_hi, r_lo, r_hi)
