"""Reference cases from ``data/reference/*.json`` and exact-rational oracles for the tests.

A reference case is a JSON object with

``id``          file stem, unique
``title``       one line
``source``      the book, paper or derivation the expected numbers come from
``page``        page, example or equation (a string; "n/a" for derivations)
``provenance``  how the expected numbers were obtained and checked (be honest: "printed in
                the book, 3 decimals", "closed form evaluated in exact rationals", ...)
``solver``      ``"mva"`` or ``"bounds"`` (with ``"method"``: ``"aba"`` or ``"bjb"``)
``inputs``      ``N`` and either ``demands`` (s) or ``service_times`` (s) with ``visits``;
                optional ``kinds``, ``servers``, ``names``, ``think_time`` (s)
``expected``    values at population N (or ``expected_curve``: arrays over n = 1..N), keyed
                by result field name; see :func:`actual_values` for the extra keys
                ``per_visit_response_time`` and ``station_throughput``
``tolerance``   ``{"rel": ..., "abs": ...}`` used with ``numpy.testing.assert_allclose``

Other modules' cases (papers, traces) may live in the same folder with other ``solver``
values; :func:`load_cases` filters by solver.

The oracles below use :class:`fractions.Fraction` only, so they are exact for rational
inputs and independent of floating point: :func:`exact_normalising_constants` (Buzen's
convolution of the station factors) and :func:`exact_mva` (queue lengths from the marginal
probabilities p_k(j|n) = f_k(j) G_{-k}(n-j) / G(n), never by subtraction).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

import qnmodel as qn

__all__ = [
    "REFERENCE_DIR",
    "load_case",
    "load_cases",
    "case_network",
    "actual_values",
    "exact_normalising_constants",
    "exact_mva",
]

REFERENCE_DIR = Path(__file__).resolve().parents[1] / "data" / "reference"

_REQUIRED = ("id", "title", "source", "page", "provenance", "solver", "inputs", "tolerance")


def load_case(case_id: str) -> dict[str, Any]:
    """Load ``data/reference/<case_id>.json`` and check that it has the required keys."""
    path = REFERENCE_DIR / f"{case_id}.json"
    case = json.loads(path.read_text(encoding="utf-8"))
    missing = [k for k in _REQUIRED if k not in case]
    if missing:
        raise KeyError(f"{path.name}: missing keys {missing}")
    if "expected" not in case and "expected_curve" not in case:
        raise KeyError(f"{path.name}: needs 'expected' or 'expected_curve'")
    if case["id"] != path.stem:
        raise KeyError(f"{path.name}: id {case['id']!r} differs from the file name")
    return case


def load_cases(solver: str | None = None) -> list[dict[str, Any]]:
    """All reference cases whose ``solver`` matches (all queueing-network cases if None)."""
    out = []
    for path in sorted(REFERENCE_DIR.glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("solver") not in ("mva", "bounds"):
            continue  # another module's case (paper parameters, traces, ...)
        if solver is None or raw["solver"] == solver:
            out.append(load_case(path.stem))
    return out


def _demands(inputs: dict[str, Any]) -> list[float]:
    if "demands" in inputs:
        return [float(d) for d in inputs["demands"]]
    return [
        float(s) * float(v) for s, v in zip(inputs["service_times"], inputs["visits"], strict=True)
    ]


def case_network(case: dict[str, Any]) -> qn.Network:
    """The :class:`qnmodel.Network` a case describes."""
    inp = case["inputs"]
    return qn.Network.from_demands(
        _demands(inp),
        think_time=inp.get("think_time", 0.0),
        names=inp.get("names"),
        kinds=inp.get("kinds"),
        servers=inp.get("servers"),
    )


def actual_values(case: dict[str, Any], result: Any, key: str) -> np.ndarray:
    """The value of ``key`` at population N (last row) of a solver result.

    Besides result field names, ``per_visit_response_time`` = R_k / V_k and
    ``station_throughput`` = X V_k are understood (books that give S_k and V_k tabulate these).
    """
    visits = np.asarray(case["inputs"].get("visits", [1.0] * len(result.station_names)))
    if key == "per_visit_response_time":
        return np.asarray(result.residence_time)[-1] / visits
    if key == "station_throughput":
        return np.asarray(result.throughput)[-1] * visits
    value = np.asarray(getattr(result, key))
    return value[-1] if value.ndim >= 1 and key not in _SCALAR_FIELDS else value


_SCALAR_FIELDS = {"n_star", "saturation_throughput", "total_demand", "max_demand"}


# ---------------------------------------------------------------------------------------
# Exact rational oracles
# ---------------------------------------------------------------------------------------


def _as_fraction(x: Any) -> Fraction:
    return x if isinstance(x, Fraction) else Fraction(str(x))


def _station_factor(D: Fraction, kind: str, m: int, N: int) -> list[Fraction]:
    """f(j) = D^j / prod_{i=1..j} a(i), a(i) = min(i, m) (queue) or i (delay), j = 0..N."""
    f = [Fraction(1)]
    for j in range(1, N + 1):
        a = j if kind == "delay" else min(j, m)
        f.append(f[-1] * D / a)
    return f


def _convolve(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
    N = len(a) - 1
    return [sum((a[j] * b[n - j] for j in range(n + 1)), Fraction(0)) for n in range(N + 1)]


def exact_normalising_constants(
    demands: Sequence[Any],
    N: int,
    think_time: Any = 0,
    kinds: Sequence[str] | None = None,
    servers: Sequence[int] | None = None,
) -> list[Fraction]:
    """G(0..N) of the closed product-form network, in exact rationals ([Buz73] convolution).

    The think time is a delay station of demand Z. Inputs are converted with
    ``Fraction(str(x))``, so ``0.1`` means exactly 1/10.
    """
    K = len(demands)
    kinds = list(kinds) if kinds is not None else ["queue"] * K
    servers = list(servers) if servers is not None else [1] * K
    G = [Fraction(1)] + [Fraction(0)] * N
    for d, kd, m in zip(demands, kinds, servers, strict=True):
        G = _convolve(G, _station_factor(_as_fraction(d), kd, int(m), N))
    Z = _as_fraction(think_time)
    if Z:
        G = _convolve(G, _station_factor(Z, "delay", 1, N))
    return G


def exact_mva(
    demands: Sequence[Any],
    N: int,
    think_time: Any = 0,
    kinds: Sequence[str] | None = None,
    servers: Sequence[int] | None = None,
) -> dict[str, list]:
    """Exact mean values for n = 1..N in rationals: ``X`` (N,), ``Q`` and ``R`` (N lists of K).

    X(n) = G(n-1)/G(n); Q_k(n) = sum_j j f_k(j) G_{-k}(n-j) / G(n), where G_{-k} is the
    constant of the network without station k; R_k(n) = Q_k(n) / X(n). Works for queueing,
    multi-server and delay stations alike. Cost grows fast: keep N K small (N <= 40, K <= 8).
    """
    K = len(demands)
    kinds = list(kinds) if kinds is not None else ["queue"] * K
    servers = list(servers) if servers is not None else [1] * K
    D = [_as_fraction(d) for d in demands]
    G = exact_normalising_constants(D, N, think_time, kinds, servers)
    X = [G[n - 1] / G[n] for n in range(1, N + 1)]
    Q = [[Fraction(0)] * K for _ in range(N)]
    for k in range(K):
        others = [i for i in range(K) if i != k]
        G_minus = exact_normalising_constants(
            [D[i] for i in others],
            N,
            think_time,
            [kinds[i] for i in others],
            [servers[i] for i in others],
        )
        f = _station_factor(D[k], kinds[k], int(servers[k]), N)
        for n in range(1, N + 1):
            Q[n - 1][k] = (
                sum((j * f[j] * G_minus[n - j] for j in range(1, n + 1)), Fraction(0)) / G[n]
            )
    R = [[Q[n][k] / X[n] for k in range(K)] for n in range(N)]
    return {"G": G, "X": X, "Q": Q, "R": R}
