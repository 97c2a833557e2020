"""Networks the tests build from demand matrices: one home for the product-form convention.

Peers (Octave ``qncmmva``/``qncmmvabs``, line-solver ``pfqn_*``) and textbook tables give a
multi-class network as a demand matrix D (C, K) and solve it as a product-form network: at a
single-server queue every class's demand enters R_ck = D_ck (1 + Q_k), which is processor
sharing (BCMP type 2) when the classes' demands differ. A FCFS station whose classes have
different service times is not product form and the exact solvers refuse it, so
:func:`pf_net` gives ``discipline="PS"`` to exactly those stations (FCFS elsewhere: the
means are the same) and the comparison is with the product-form model the peer solves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from qnmodel.model import ClosedClass, Network, OpenClass

__all__ = ["mixed_net", "pf_disciplines", "pf_net"]


def pf_disciplines(D: Any, kinds: Sequence[str] | None = None) -> list[str]:
    """Per station: "IS" at delays, "PS" at queues whose visiting classes' demands differ,
    "FCFS" elsewhere."""
    D = np.atleast_2d(np.asarray(D, dtype=np.float64))
    K = D.shape[1]
    kinds = ["queue"] * K if kinds is None else list(kinds)
    out = []
    for k in range(K):
        if kinds[k] == "delay":
            out.append("IS")
            continue
        d = D[D[:, k] > 0, k]
        differ = d.size > 1 and not np.allclose(d, d[0], rtol=1e-12, atol=0.0)
        out.append("PS" if differ else "FCFS")
    return out


def pf_net(
    D: Any,
    N: Any,
    think_time: Any = 0.0,
    *,
    kinds: Sequence[str] | None = None,
    servers: Sequence[int] | None = None,
    names: Sequence[str] | None = None,
) -> Network:
    """A closed multi-class product-form network of demands D (C, K), populations N (C,) and
    think times (one, or one per class), classes named "c0", "c1", ... (see the module
    docstring for the disciplines)."""
    D = np.atleast_2d(np.asarray(D, dtype=np.float64))
    return Network.from_demands(
        D,
        N=list(np.atleast_1d(N)),
        think_time=think_time,
        kinds=kinds,
        servers=servers,
        names=names,
        disciplines=pf_disciplines(D, kinds),
    )


def mixed_net(
    D: Any,
    is_open: Any,
    arrival_rate: Any,
    N: Any,
    think_time: Any = None,
    kinds: Sequence[str] | None = None,
    servers: Sequence[int] | None = None,
) -> Network:
    """A product-form network of demands D (C, K) whose class c ("c0", "c1", ...) is open
    at ``arrival_rate[c]`` where ``is_open[c]``, else closed with ``N[c]`` jobs and think
    time ``think_time[c]`` (default 0); disciplines as :func:`pf_net`."""
    D = np.atleast_2d(np.asarray(D, dtype=np.float64))
    C = D.shape[0]
    Z = np.zeros(C) if think_time is None else np.broadcast_to(think_time, (C,))
    classes = [
        OpenClass(f"c{c}", float(arrival_rate[c]))
        if is_open[c]
        else ClosedClass(f"c{c}", int(N[c]), float(Z[c]))
        for c in range(C)
    ]
    return Network.from_demands(
        D, classes=classes, kinds=kinds, servers=servers, disciplines=pf_disciplines(D, kinds)
    )
