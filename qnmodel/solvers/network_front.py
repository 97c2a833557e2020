"""Front doors on a :class:`~qnmodel.model.Network` for the algorithms Octave's ``queueing``
has beyond MVA: multi-class and open-network bounds, the normalising constant and the
marginal queue-length probabilities, and MVA with finite capacities (blocking).

Each reads the network's compiled form, refuses what its algorithm does not take
(:mod:`qnmodel.solvers.support`), and calls the array kernel of its module:

* :func:`bounds_multiclass` -- ABA, balanced system bounds or Kerola's composite bounds of a
  closed multi-class network (:mod:`qnmodel.solvers.bounds_multiclass`);
* :func:`bounds_open` -- asymptotic or balanced bounds of an open network
  (:mod:`qnmodel.solvers.bounds_open`);
* :func:`normalizing_constant` -- Buzen's convolution in log space: G(0..N), the mean values
  and each station's p_k(j | N) (:mod:`qnmodel.solvers.normconst`);
* :func:`mva_blocking` -- Akyildiz's MVABLO for a closed network whose stations have a
  capacity (approximate; :mod:`qnmodel.solvers.mva_blocking`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_choice, as_population
from ..errors import InvalidModelError, InvalidTypeError
from ..model import Network
from ..results.network import (
    BlockingMVAResult,
    MultiClassBoundsResult,
    NormalizingConstantResult,
    OpenBoundsResult,
)
from ._mva_core import single_class
from .bounds_multiclass import (
    bounds_multiclass_aba,
    bounds_multiclass_bsb,
    bounds_multiclass_composite,
)
from .bounds_open import bounds_open_aba, bounds_open_bsb
from .mva_blocking import mvablo
from .normconst import normconst_convolution, normconst_ld
from .support import require

__all__ = ["bounds_multiclass", "bounds_open", "normalizing_constant", "mva_blocking"]

_MULTICLASS = {
    "aba": bounds_multiclass_aba,
    "bsb": bounds_multiclass_bsb,
    "composite": bounds_multiclass_composite,
}
_OPEN = {"aba": bounds_open_aba, "bsb": bounds_open_bsb}


def _network(net: Any, what: str) -> Network:
    if not isinstance(net, Network):
        raise InvalidTypeError(f"{what}: net must be a Network, got {type(net).__name__}")
    return net


def bounds_multiclass(net: Network, N: Any = None, method: str = "composite"
                      ) -> MultiClassBoundsResult:  # fmt: skip
    """Bounds on each class's throughput and response time of a closed multi-class network.

    Parameters
    ----------
    net : Network
        Closed classes (a network without classes is one class). ``method="aba"`` takes
        multi-server stations (with their per-server demand) and delays; ``"bsb"`` and
        ``"composite"`` single-server queues only (their derivations assume it).
    N : array_like of int (C,), mapping or int, optional
        Populations; default the classes' own.
    method : {"aba", "bsb", "composite"}
        Asymptotic bounds, balanced system bounds ([Ker86]) or Kerola's composite bounds
        ([Ker86] eq. 13), as Octave's ``qncmaba``, ``qncmbsb``, ``qncmcb``.

    Returns
    -------
    MultiClassBoundsResult
    """
    net = _network(net, "bounds_multiclass")
    as_choice(method, "method", tuple(_MULTICLASS))
    cm = net.compiled
    require(cm, "bounds_multiclass_aba" if method == "aba" else "bounds_multiclass_bsb",
            drop=("closed",))  # fmt: skip
    Ns = np.array([as_population(N, "N")]) if net.single else cm.population_vector(N)
    kw: dict[str, Any] = {"delay": cm.is_delay}
    if method == "aba":
        kw["servers"] = cm.servers
    res = _MULTICLASS[method](cm.D, Ns, cm.Z, **kw)
    return _named(res, cm.class_names)


def bounds_open(net: Network, arrival_rate: Any = None, method: str = "aba") -> OpenBoundsResult:
    """Bounds on the response time of an open network (Octave ``qnosaba``, ``qnomaba``,
    ``qnosbsb``): ``method="aba"`` (asymptotic; multi-server stations with their per-server
    demand) or ``"bsb"`` (balanced system bounds; single-server queues).

    ``arrival_rate``: a rate (a network without classes) or the classes' rates (default
    their own), as :func:`qnmodel.open_network` takes them.
    """
    net = _network(net, "bounds_open")
    as_choice(method, "method", tuple(_OPEN))
    cm = net.compiled
    if not net.single and (~cm.is_open).any():
        raise InvalidModelError(
            "bounds_open bounds open networks; this one has closed classes "
            f"{[cm.class_names[c] for c in np.flatnonzero(~cm.is_open)]}"
        )
    require(cm, f"bounds_open_{method}", drop=("open",))
    if method == "bsb" and not net.single:
        raise InvalidModelError(
            "bounds_open(method='bsb') bounds one class (Octave's qnosbsb); with classes use "
            "method='aba'"
        )
    if net.single:
        from .open import _sweep_rates

        lam = _sweep_rates(arrival_rate)
        if lam.size != 1:
            raise InvalidModelError("bounds_open takes one arrival rate, not a sweep")
    else:
        lam = cm.arrival_rate_vector(arrival_rate)
    kw: dict[str, Any] = {"delay": cm.is_delay}
    if method == "aba":
        kw["servers"] = cm.servers
    return _OPEN[method](lam if not net.single else lam[0], cm.D[0] if net.single else cm.D,
                         **kw)  # fmt: skip


def normalizing_constant(net: Network, N: int) -> NormalizingConstantResult:
    """Buzen's convolution of a closed single-class network: the normalising constant
    G(n) for n = 0..N (in log space), X, Q, U, R at N, and the marginal probabilities
    p_k(j | N) of the number of jobs at each station (Octave ``qncsconv``, ``qncsconvld``).

    Product-form networks: single- and multi-server queues (FCFS exponential, PS, LCFS-PR),
    delays and general load-dependent stations. See :mod:`qnmodel.solvers.normconst` for
    the numerics (subtraction-free, finite at N = 10^4 where G underflows).
    """
    net = single_class(net, "normalizing_constant")
    N = as_population(N, "N")
    cm = net.compiled
    D, Z = cm.D[0], float(cm.Z[0])
    if cm.is_ld.any():  # D_k(j) = D_k / r_k(j): the demand while the station holds j jobs
        table = D[:, None] / cm.rate_table(N)
        return normconst_ld(table, N, Z)
    return normconst_convolution(D, N, Z, delay=cm.is_delay, servers=cm.servers)


def mva_blocking(net: Network, N: int, max_iter: int = 10_000) -> BlockingMVAResult:
    """MVABLO: approximate MVA of a closed single-class network whose stations have a
    capacity (blocking; Akyildiz 1988, as Octave's ``qncsmvablo``).

    The network gives its routing (``Network(..., routing=...)``, single-server FCFS
    stations with ``capacity``; no think time) and N jobs. The method is labelled
    approximate; its error against the exact Markov chain is in
    :mod:`qnmodel.solvers.mva_blocking` (median 4 % on throughput, worst 72 %).
    """
    net = single_class(net, "mva_blocking")
    cm = net.compiled
    if cm.routing is None:
        raise InvalidModelError(
            "mva_blocking needs the network's routing (Network(..., routing=...)): blocking "
            "depends on where a blocked job wants to go"
        )
    if float(cm.Z[0]) > 0:
        raise InvalidModelError(
            "mva_blocking takes no think time: model the terminals as a delay station with a "
            "capacity of N"
        )
    K = cm.K
    M = cm.routing[0]
    # with no think time the outside node passes a job on at once: i -> outside -> j
    P = M[:K, 0, :K] + np.outer(M[:K, 0, K], M[K, 0, :K])
    cap = np.where(cm.capacity > 0, cm.capacity, as_population(N, "N"))
    return mvablo(as_population(N, "N"), cm.S[0], cap, P, max_iter=max_iter)


def _named(res: MultiClassBoundsResult, class_names: tuple[str, ...]) -> MultiClassBoundsResult:
    import dataclasses

    return dataclasses.replace(res, class_names=class_names)
