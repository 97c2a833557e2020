"""Service-time laws: the shape of a station's service times, and their parsing from user input.

Each law is fixed by a *shape*; its mean is always the station's mean service time, so a law
can be set once and the model's demands varied. A station carries one
(``Station(..., service=...)``; :func:`qnmodel.simulate` can override it), and its squared
coefficient of variation :attr:`scv` is what the analytic solvers read. Accepted forms:

``"exponential"`` (or ``"exp"``)
    Exponential, CV 1 (product-form networks: the simulator then estimates what exact MVA computes).
``"deterministic"`` (or ``"constant"``, ``"det"``)
    Every service takes exactly the demand.
``Lognormal(cv)`` or ``("lognormal", cv)``
    Lognormal with the demand as mean and coefficient of variation ``cv``: sigma^2 = ln(1 + cv^2),
    mu = ln(mean) - sigma^2 / 2 (Johnson, Kotz, Balakrishnan, *Continuous Univariate
    Distributions*, vol. 1, 2nd ed., Wiley 1994, ch. 14, eq. 14.8a-b).
``Empirical.from_qnbench(doc)`` or a qnbench document / result / ``latency_s`` object
    The shape of a latency histogram measured by ``qnbench --histogram`` (buckets
    ``[lower_s, upper_s, count]``), sampled by inverse CDF, uniform within a bucket, rescaled
    so its mean equals the demand (the histogram's own mean is :attr:`Empirical.mean`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidModelError, InvalidTypeError

__all__ = [
    "Exponential", "Deterministic", "Lognormal", "Empirical", "as_distribution", "law_for_scv",
]  # fmt: skip

EXP, DET, LOGN, EMP = 0, 1, 2, 3


@dataclass(frozen=True)
class Exponential:
    """Exponential service times (CV = 1)."""

    kind = EXP
    scv = 1.0


@dataclass(frozen=True)
class Deterministic:
    """Constant service times (CV = 0)."""

    kind = DET
    scv = 0.0


@dataclass(frozen=True)
class Lognormal:
    """Lognormal service times of coefficient of variation ``cv`` (> 0)."""

    cv: float
    kind = LOGN

    def __post_init__(self) -> None:
        if isinstance(self.cv, bool) or not isinstance(self.cv, numbers.Real):
            raise InvalidTypeError(f"Lognormal: cv must be a number, got {self.cv!r}")
        cv = float(self.cv)
        if not (math.isfinite(cv) and cv > 0):
            raise InvalidModelError(f"Lognormal: cv must be finite and > 0, got {self.cv!r}")
        object.__setattr__(self, "cv", cv)

    @property
    def scv(self) -> float:
        """Squared coefficient of variation, cv^2."""
        return self.cv * self.cv

    def params(self, mean: float) -> tuple[float, float]:
        """(mu, sigma) of the underlying normal for this mean."""
        s2 = math.log1p(self.cv * self.cv)
        return math.log(mean) - 0.5 * s2, math.sqrt(s2)


@dataclass(frozen=True, eq=False)
class Empirical:
    """A measured latency histogram used as a service-time shape.

    Parameters
    ----------
    lower, upper : array (B,)
        Bucket bounds in seconds, increasing and non-overlapping (``lower < upper``).
    counts : array (B,)
        Non-negative integer counts, not all zero.
    source : str
        Where the histogram came from (for messages).

    Notes
    -----
    Sampling draws a bucket with probability count / total and a point uniform inside it, so
    the sampled mean is ``sum(count * (lower + upper) / 2) / total`` (:attr:`mean`); the
    simulator multiplies samples by ``demand / mean``.
    """

    lower: np.ndarray
    upper: np.ndarray
    counts: np.ndarray
    source: str = "histogram"
    kind = EMP
    mean: float = field(init=False)

    def __post_init__(self) -> None:
        where = f"Empirical ({self.source})"
        lo = np.asarray(self.lower, dtype=np.float64).ravel()
        hi = np.asarray(self.upper, dtype=np.float64).ravel()
        n = np.asarray(self.counts, dtype=np.float64).ravel()
        if not (lo.size == hi.size == n.size):
            raise InvalidModelError(f"{where}: lower, upper and counts must have equal lengths")
        if n.size == 0 or not np.all(np.isfinite(n)) or n.sum() <= 0:
            raise InvalidModelError(
                f"{where}: the histogram is empty (no bucket has a count); was qnbench run with "
                "--histogram and did the point complete operations?"
            )
        bad = (
            ~np.isfinite(lo)
            | ~np.isfinite(hi)
            | (lo < 0)
            | (hi <= lo)
            | (n < 0)
            | (n != np.round(n))
        )
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise InvalidModelError(
                f"{where}: bucket {i} [{lo[i]!r}, {hi[i]!r}) count {n[i]!r} is not a qnbench "
                "bucket (need 0 <= lower < upper, finite, and a non-negative integer count)"
            )
        if np.any(lo[1:] < hi[:-1]):
            raise InvalidModelError(
                f"{where}: buckets overlap or are not increasing; not a qnbench histogram"
            )
        for name, a in (("lower", lo), ("upper", hi), ("counts", n)):
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        object.__setattr__(self, "mean", float(np.sum(n * 0.5 * (lo + hi)) / n.sum()))

    @property
    def scv(self) -> float:
        """Squared coefficient of variation of the sampled law (uniform within each bucket:
        E[S^2] = sum p (lo^2 + lo hi + hi^2) / 3), dimensionless: rescaling keeps it."""
        p = self.counts / self.counts.sum()
        m2 = float(np.sum(p * (self.lower**2 + self.lower * self.upper + self.upper**2) / 3.0))
        return max(m2 / (self.mean * self.mean) - 1.0, 0.0) if self.mean > 0 else 0.0

    @classmethod
    def from_qnbench(cls, doc: Any, point: int | None = None) -> Empirical:
        """The histogram of one qnbench result.

        ``doc`` is a parsed qnbench JSON document (``schema == "qnbench"``), one of its
        ``results`` entries, or that entry's ``latency_s`` object; it must carry
        ``latency_s.histogram`` (run qnbench with ``--histogram``). ``point`` selects the result
        (index into ``results``) of a document that has several.
        """
        if not isinstance(doc, Mapping):
            raise InvalidTypeError(
                f"Empirical.from_qnbench: expected a qnbench document (dict), got "
                f"{type(doc).__name__}"
            )
        source = "qnbench latency_s"
        if "schema" in doc:
            # the whole document: only its results are read here (each histogram is checked
            # below); qnmodel.bench.load validates a document against its whole schema
            if doc.get("schema") != "qnbench":
                raise InvalidModelError(
                    f"Empirical.from_qnbench: not a qnbench document (schema "
                    f"{doc.get('schema')!r}, expected 'qnbench')"
                )
            results = doc.get("results")
            if not isinstance(results, list) or not all(isinstance(r, Mapping) for r in results):
                raise InvalidModelError(
                    "Empirical.from_qnbench: the document's results must be a list of objects"
                )
            if not results:
                raise InvalidModelError("Empirical.from_qnbench: the document has no results")
            if point is None:
                if len(results) > 1:
                    raise InvalidModelError(
                        f"Empirical.from_qnbench: the document has {len(results)} results; "
                        "choose one with point=<index>"
                    )
                point = 0
            if not 0 <= int(point) < len(results):
                raise InvalidModelError(
                    f"Empirical.from_qnbench: point={point!r} is out of range "
                    f"(0..{len(results) - 1})"
                )
            doc = results[int(point)]
            source = f"qnbench results[{int(point)}]"
        if "latency_s" in doc:
            doc = doc["latency_s"]
        if not isinstance(doc, Mapping) or "histogram" not in doc:
            raise InvalidModelError(
                f"Empirical.from_qnbench: not a qnbench latency histogram: no "
                f"'latency_s.histogram' in {sorted(doc) if isinstance(doc, Mapping) else doc!r} "
                "(run qnbench with --histogram)"
            )
        rows = doc["histogram"]
        if not isinstance(rows, Sequence) or isinstance(rows, str):
            raise InvalidModelError(
                f"Empirical.from_qnbench: latency_s.histogram must be a list of "
                f"[lower_s, upper_s, count], got {type(rows).__name__}"
            )
        if not rows:
            raise InvalidModelError(
                f"Empirical.from_qnbench: the histogram of {source} is empty (no operations)"
            )
        try:
            arr = np.array(rows, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidModelError(
                f"Empirical.from_qnbench: latency_s.histogram rows must be [lower_s, upper_s, "
                f"count]: {exc}"
            ) from exc
        if arr.ndim != 2 or arr.shape[1] != 3:
            raise InvalidModelError(
                "Empirical.from_qnbench: latency_s.histogram rows must be [lower_s, upper_s, count]"
            )
        return cls(arr[:, 0], arr[:, 1], arr[:, 2], source=source)

    def table(self, mean: float) -> np.ndarray:
        """(B, 3) rows of (cumulative probability, lower, upper), rescaled to ``mean``."""
        f = mean / self.mean if self.mean > 0 else 0.0
        cdf = np.cumsum(self.counts) / self.counts.sum()
        cdf[-1] = 1.0
        return np.column_stack([cdf, self.lower * f, self.upper * f])


_NAMES = {
    "exponential": Exponential(),
    "exp": Exponential(),
    "deterministic": Deterministic(),
    "constant": Deterministic(),
    "det": Deterministic(),
}


def law_for_scv(scv: float) -> Exponential | Deterministic | Lognormal:
    """The law the simulator draws for a station given only an SCV: deterministic at 0,
    exponential at 1, lognormal of that SCV otherwise (cv = sqrt(scv))."""
    if scv == 0.0:
        return Deterministic()
    if scv == 1.0:
        return Exponential()
    return Lognormal(math.sqrt(scv))


def as_distribution(spec: Any, where: str) -> Exponential | Deterministic | Lognormal | Empirical:
    """Parse one service specification (see the module docstring); ``where`` names the field."""
    if isinstance(spec, Exponential | Deterministic | Lognormal | Empirical):
        return spec
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key in _NAMES:
            return _NAMES[key]
        if key == "lognormal":
            raise InvalidModelError(
                f"{where}: 'lognormal' needs a coefficient of variation: use Lognormal(cv) or "
                "('lognormal', cv)"
            )
        raise InvalidModelError(
            f"{where}: unknown service distribution {spec!r}; known: 'exponential', "
            "'deterministic', Lognormal(cv) / ('lognormal', cv), or a qnbench histogram "
            "(Empirical.from_qnbench)"
        )
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        if spec[0].strip().lower() == "lognormal":
            return Lognormal(spec[1])
        if spec[0].strip().lower() in ("empirical", "histogram"):
            return Empirical.from_qnbench(spec[1])
        raise InvalidModelError(f"{where}: unknown service distribution {spec[0]!r}")
    if isinstance(spec, Mapping):
        try:
            return Empirical.from_qnbench(spec)
        except InvalidModelError as exc:
            raise InvalidModelError(f"{where}: {exc}") from exc
    raise InvalidTypeError(
        f"{where}: a service distribution must be a name, Lognormal(cv), ('lognormal', cv) or a "
        f"qnbench histogram, got {spec!r} ({type(spec).__name__})"
    )
