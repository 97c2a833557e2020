"""Shared pieces of the network-kernel peer batches against GNU Octave ``queueing`` 1.2.7.

Each test module builds one Octave script for all of its random cases, runs it once
(a module-scoped fixture through :func:`run_batch`) and compares the tagged numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests._ci import IN_CI
from tests.octave import octave_missing_reason, octave_vec, parse_tagged, run_octave

__all__ = ["PRELUDE", "run_batch", "octave_array", "max_rel", "EXACT"]

#: Exact methods against Octave: both are double-precision evaluations of the same exact
#: formulas in different operation orders (and Octave solves some of them with Gaussian
#: elimination or subtractions): 1e-12 relative.
EXACT = 1e-12

PRELUDE = r"""1;
function emit(tag, v)
  printf("%s", tag); printf(" %.17g", v); printf("\n");
end
pkg load queueing
warning("off", "all");
"""


def run_batch(lines: list[str], timeout: float = 600.0) -> dict[str, np.ndarray]:
    """Run one Octave script (``PRELUDE`` + lines) or skip/fail naming the missing peer."""
    reason = octave_missing_reason("queueing")
    if reason is not None:
        msg = f"peer cross-check needs GNU Octave with 'queueing': {reason}"
        if IN_CI:
            pytest.fail(f"{msg} (CI=true: the peer must be installed, see .ci/run)")
        pytest.skip(msg)
    return parse_tagged(run_octave(PRELUDE + "\n".join(lines) + "\n", timeout=timeout))


def octave_array(a) -> str:
    """An Octave expression for a numpy array of any rank (column-major, 17 digits)."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim <= 1:
        return octave_vec(a.ravel())
    flat = octave_vec(a.ravel(order="F"))
    return f"reshape({flat}, [{' '.join(str(s) for s in a.shape)}])"


def max_rel(ours, theirs, floor: float = 0.0) -> float:
    """max |ours - theirs| / max(|theirs|, floor) over all entries (0 for equal zeros)."""
    a = np.asarray(ours, dtype=np.float64).ravel()
    b = np.asarray(theirs, dtype=np.float64).ravel()
    assert a.shape == b.shape, (a.shape, b.shape)
    both_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
    den = np.maximum(np.abs(b), floor)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(den > 0, np.abs(a - b) / den, np.abs(a - b))
    r = np.where(both_inf, 0.0, r)
    return float(r.max()) if r.size else 0.0
