"""Open multi-class networks over a sweep of arrival-rate vectors, in one call.

Each row p of a sweep is one vector of class arrival rates lambda_pc. The offered load
of station k is a_pk = sum_c lambda_pc D_ck and, as in :mod:`qnmodel.solvers.open`,
every mean value follows from the stretch factor g_k(a) of the isolated station:

    R_pc = sum_k D_ck g_k(a_pk),   Q_pk = a_pk g_k(a_pk),   U_pk = a_pk / c_k

([LZGS] sec. 7.4.1; [MAD04] ch. 13). When every row is a multiple of one rate vector
lambda (the usual sweep "scale the whole workload"), the load is linear in the scale:
a_pk = s_p a_k with a = lambda D, so the (P, C) x (C, K) product is replaced by an outer
product, and for single-server queues g = 1 / (1 - s_p a_k) and Q = g - 1 need no
further work. The class response times are then one (P, K) x (K, C) matrix product,
R = g D^T, O(P K C) multiply-adds in BLAS; the per-class station values R_pck =
D_ck g_pk are formed on request (:meth:`OpenSweepResult.residence_time_of`), never as a
(P, C, K) array.

References
----------
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984, sec. 7.4.
.. [MAD04] D. A. Menasce, V. A. F. Almeida, L. W. Dowdy, *Performance by Design*,
   Prentice Hall 2004, ch. 13 (open multi-class models).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._validate import as_choice
from ..errors import InvalidModelError, UnstableModelError
from ..results.open import OpenSweepResult
from .open import _station_arguments, _unstable_message, stretch

__all__ = ["open_multiclass_sweep", "common_direction"]


def common_direction(rates: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(s (P,), base (C,)) with rates[p] == s[p] * base to rounding, or None.

    ``base`` is the first row with a non-zero rate and s[p] = rates[p, c*] / base[c*]
    (c*: the class with the largest base rate); every entry must agree with s[p] base to
    8 units in the last place (``np.linspace(a, b, P)[:, None] * lam`` passes, though
    its rows are not bitwise multiples of the first), so the loads s a differ from
    lambda D by rounding only.
    """
    nz = np.flatnonzero(rates.any(axis=1))
    if nz.size == 0:
        return None
    base = rates[nz[0]]
    c = int(np.argmax(base))
    s = rates[:, c] / base[c]
    diff = np.multiply.outer(s, base)
    diff -= rates
    np.abs(diff, out=diff)
    tol = np.abs(rates)
    tol *= 8.0 * np.finfo(np.float64).eps
    if np.all(diff <= tol):
        return s, base
    return None


def open_multiclass_sweep(
    D: np.ndarray,
    rates: np.ndarray,
    delay: np.ndarray,
    servers: np.ndarray,
    multipliers: Sequence | None = None,
    names: Sequence[str] | None = None,
    class_names: Sequence[str] | None = None,
    unstable: str = "raise",
) -> OpenSweepResult:
    """Open multi-class network at P vectors of arrival rates (one row each), in one call.

    Parameters
    ----------
    D : ndarray (C, K)
        Demands D_ck, seconds.
    rates : ndarray (P, C)
        lambda_pc, jobs/s (finite, >= 0).
    delay, servers, multipliers, names
        As in :func:`qnmodel.solvers.open.open_single`.
    class_names : sequence of str (C,), optional
    unstable : {"raise", "inf"}
        At a row where a queueing station has U >= 1: raise :class:`UnstableModelError`
        naming it (default) or fill that row's response times and queue lengths with inf.

    Returns
    -------
    OpenSweepResult

    Notes
    -----
    See the module docstring. Rows that are multiples of one vector (to rounding, see
    :func:`common_direction`) take the outer product path (a = s lambda D); the result
    does not depend on the path (to rounding).
    """
    as_choice(unstable, "unstable", ("raise", "inf"))
    D = np.atleast_2d(np.asarray(D, dtype=np.float64))
    C, K = D.shape
    lam = np.asarray(rates, dtype=np.float64)
    if lam.ndim != 2 or lam.shape[1] != C or lam.shape[0] == 0:
        raise InvalidModelError(
            f"arrival_rate sweep must have shape (P, {C}) (one row per point, one column "
            f"per class), got {lam.shape}"
        )
    bad = ~np.isfinite(lam) | (lam < 0)
    if bad.any():
        p, c = np.argwhere(bad)[0]
        raise InvalidModelError(
            f"arrival_rate[{p}, {c}] must be finite and >= 0, got {float(lam[p, c])!r}"
        )
    delay, servers, multipliers, names, class_names, cap = _station_arguments(
        K, C, delay, servers, multipliers, names, class_names
    )
    plain = (~delay & (servers == 1)).all() and all(r is None for r in multipliers)
    direction = common_direction(lam)
    queueing_load = np.where(delay, 0.0, 1.0 / cap)  # U per unit of offered load
    a = a1 = s = None
    if direction is not None:
        s, base = direction
        a1 = base @ D
        load1 = a1 * queueing_load
        kmax = np.full(s.size, int(np.argmax(load1)), dtype=np.int64)
        umax = s * load1[kmax[0]]
    else:
        a = lam @ D
        load = a * queueing_load[None, :]
        kmax = np.argmax(load, axis=1)
        umax = load[np.arange(load.shape[0]), kmax]
        del load
    # saturation: the factor that would bring each row's bottleneck to U = 1
    with np.errstate(divide="ignore"):
        s_max = np.where(umax > 0, 1.0 / np.where(umax > 0, umax, 1.0), np.inf)
    bad_rows = umax >= 1.0
    if bad_rows.any() and unstable == "raise":
        p = int(np.flatnonzero(bad_rows)[0])
        k = int(kmax[p])
        raise UnstableModelError(
            _unstable_message(
                names[k],
                float(umax[p]),
                f"at sweep row {p} of the arrival rates",
                f"scale that row's rates by less than {s_max[p]:.6g} to keep it stable",
            )
        )
    s_ok = s if s is None or not bad_rows.any() else np.where(bad_rows, 0.0, s)
    if plain and a is None:  # single-server queues along one vector: g = 1 / (1 - s a1)
        g = np.multiply.outer(s_ok, -a1)
        g += 1.0
        np.reciprocal(g, out=g)
    else:
        if a is None:
            a_ok = np.multiply.outer(s_ok, a1)
        else:
            a_ok = np.where(bad_rows[:, None], 0.0, a) if bad_rows.any() else a
        if plain:
            g = np.subtract(1.0, a_ok)
            np.reciprocal(g, out=g)
        else:
            g = stretch(a_ok, delay, servers, multipliers)
    R = g @ D.T
    if bad_rows.any():
        g[bad_rows] = np.inf
        R[bad_rows] = np.inf
    g.setflags(write=False)
    R.setflags(write=False)
    if a is not None:
        a.setflags(write=False)
    return OpenSweepResult(
        method="open",
        class_names=class_names,
        arrival_rate=lam,
        response_time=R,
        stretch=g,
        station_names=names,
        demands=D,
        is_delay=delay,
        capacity=cap,
        saturation_scale=s_max,
        bottleneck_index=kmax,
        load_table=a,
        load_scale=s,
        load_base=a1,
    )
