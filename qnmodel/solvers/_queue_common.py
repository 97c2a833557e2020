"""Shared parts of the single-queue kernels (:mod:`qnmodel.solvers.queue`,
:mod:`qnmodel.solvers.queue_finite`, :mod:`qnmodel.solvers.queue_approx`): the inputs, the
saturation error, the result builder and the birth-death distribution p_n of exponential
queues (its numerics are described in :mod:`qnmodel.solvers.queue`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import as_positive_int, as_quantity, check_memory
from ..errors import InvalidModelError, InvalidTypeError, UnstableModelError
from ..results.queue import QueueResult
from .open_stations import erlang_c

#: half-width of the enumerated bulk of an infinite queue's distribution, in sqrt(a) and
#: states: the Poisson(a) mass beyond a +- (40 sqrt(a) + 60) is below exp(-140) (Chernoff)
_BULK_SIGMAS, _BULK_PAD = 40.0, 60.0


# --------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------


def as_arrival_rate(value: Any) -> float:
    return as_quantity(value, "arrival_rate", "frequency")


def as_service_time(value: Any, name: str = "service_time") -> float:
    return as_quantity(value, name, "time", positive=True)


def mmm_wait(m: int, a: float, S: float) -> tuple[float, float]:
    """``(C, W)`` of the M/M/m queue with offered load a = lambda S < m and mean service time
    S (s): Erlang's C(m, a), the probability to wait, and the mean wait W = C S / (m - a)
    ([Kle75] sec. 3.5)."""
    C = float(erlang_c(m, a))
    return C, C * S / (m - a)


def as_states(states: Any, capacity: float) -> np.ndarray | None:
    """The requested numbers of jobs k, an int64 array (or None)."""
    if states is None:
        return None
    if isinstance(states, str | bytes) or not hasattr(states, "__iter__"):
        raise InvalidTypeError(
            f"states must be a sequence of numbers of jobs k >= 0 (e.g. range(11)), got {states!r}"
        )
    ks = [as_positive_int(k, f"states[{i}]", 0) for i, k in enumerate(states)]
    arr = np.asarray(ks, dtype=np.int64).reshape(-1)
    if arr.size and arr.max() > capacity:
        i = int(np.argmax(arr))
        raise InvalidModelError(
            f"states[{i}] = {int(arr[i])} exceeds the capacity K = {int(capacity)}: the "
            f"system never holds more than K jobs (ask for k in 0..{int(capacity)})"
        )
    return arr


def unstable_error(lam: float, S: float, m: float, what: str) -> UnstableModelError:
    rho = lam * S / m
    return UnstableModelError(
        f"{what} is saturated: utilisation rho = lambda S / m = {lam:.6g}/s x {S:.6g} s / "
        f"{m:g} = {rho:.6g} >= 1, so its queue grows without bound; it is stable only "
        f"for arrival_rate < m / S = {m / S:.6g}/s: lower the arrival rate, add servers, "
        "or give a finite capacity"
    )


# --------------------------------------------------------------------------------------
# The birth-death distribution p_n of exponential queues
# --------------------------------------------------------------------------------------


def log_weights(a: float, m: float, lo: int, hi: int) -> np.ndarray:
    """log(w_n / w_max) for n = lo..hi, w_n = prod_{i<=n} a / min(i, m), a > 0.

    First summed from lo to find the largest weight, then again outward from it, so the
    running sums are small near the mass (their rounding is what the probabilities keep).
    """
    n = np.arange(lo + 1, hi + 1, dtype=np.float64)
    steps = np.log(a / np.minimum(n, m))  # log(w_n / w_{n-1}), n = lo+1..hi
    rough = np.concatenate(([0.0], np.cumsum(steps)))
    j = int(np.argmax(rough))
    lw = np.empty(hi - lo + 1)
    lw[j] = 0.0
    lw[j + 1 :] = np.cumsum(steps[j:])
    lw[:j] = -np.cumsum(steps[:j][::-1])[::-1]
    return lw


class Distribution:
    """p_n of the birth-death queue (lambda, min(n, m) / S, room K): an enumerated window
    lo..hi plus, for K = inf with m <= hi, the geometric tail beyond m (ratio rho)."""

    def __init__(self, a: float, m: float, K: float, want: np.ndarray | None) -> None:
        self.a, self.m, self.K = a, m, K
        if a == 0.0:
            self.lo, self.hi, self.p = 0, 0, np.ones(1)
            self.tail = self.tail_n = self.tail_wait = 0.0
            return
        if math.isfinite(K):
            lo, hi = 0, int(K)
        else:
            half = _BULK_SIGMAS * math.sqrt(a) + _BULK_PAD
            lo = max(0, int(math.floor(a - half)))
            hi = int(math.ceil(a + half))
            if m <= hi:  # the geometric tail starts inside the bulk: enumerate up to m
                hi, lo = int(m), min(lo, int(m))
            if want is not None and want.size:
                lo = min(lo, int(want.min()))
                if m > hi:
                    hi = max(hi, int(want.max()))
        check_memory(
            8.0 * 4 * (hi - lo + 1),
            f"the state probabilities p_n, n = {lo}..{hi}",
            "ask for fewer states, or give a smaller capacity",
        )
        lw = log_weights(a, m, lo, hi)
        w = np.exp(lw)
        tail = tail_n = tail_wait = 0.0
        if not math.isfinite(K) and hi == m:
            rho = a / m
            wm = w[-1]
            tail = wm * rho / (1.0 - rho)  # sum_{j>=1} w_m rho^j
            tail_wait = wm * rho / ((1.0 - rho) * (1.0 - rho))  # sum_j j w_m rho^j
            tail_n = m * tail + tail_wait
        Z = float(w.sum()) + tail
        self.lo, self.hi = lo, hi
        self.p = w / Z
        self.tail, self.tail_n, self.tail_wait = tail / Z, tail_n / Z, tail_wait / Z

    def prob(self, k: np.ndarray) -> np.ndarray:
        """p_k for requested k (0 outside the window where there is no tail)."""
        out = np.zeros(k.size)
        inside = (k >= self.lo) & (k <= self.hi)
        out[inside] = self.p[k[inside] - self.lo]
        beyond = k > self.hi
        if beyond.any() and self.tail > 0.0:
            rho = self.a / self.m
            out[beyond] = self.p[-1] * rho ** (k[beyond] - self.hi).astype(np.float64)
        return out

    def p0(self) -> float:
        return float(self.p[0]) if self.lo == 0 else 0.0

    def sums(self) -> tuple[float, float, float]:
        """(L, busy servers, Lq) = sums of n, min(n, m), (n - m)^+ times p_n."""
        n = np.arange(self.lo, self.hi + 1, dtype=np.float64)
        L = float(n @ self.p) + self.tail_n
        busy = float(np.minimum(n, self.m) @ self.p) + self.m * self.tail
        Lq = float(np.maximum(n - self.m, 0.0) @ self.p) + self.tail_wait
        return L, busy, Lq

    def at_least(self, k: float) -> float:
        """P(n >= k) over the enumerated window plus the tail."""
        n = np.arange(self.lo, self.hi + 1)
        return float(self.p[n >= k].sum()) + self.tail


def make_result(method: str, lam: float, S: float, scv: float, m: float, K: float, **f: Any):
    return QueueResult(
        method=method,
        arrival_rate=lam,
        service_time=S,
        scv=scv,
        servers=float(m),
        capacity=float(K),
        **f,
    )


def lossless_result(
    method: str,
    lam: float,
    S: float,
    scv: float,
    m: float,
    R: float,
    W: float,
    busy: float,
    empty: float,
    wait: float,
    states: np.ndarray | None = None,
    probabilities: np.ndarray | None = None,
) -> QueueResult:
    """The result of an infinite-capacity queue that loses no job, from its mean response
    time R and waiting time W (s): X = lambda, ``busy`` servers a, U = a / m,
    L = lambda R and L_q = lambda W (Little's law); ``empty`` p_0 and ``wait`` P(wait)."""
    return make_result(
        method,
        lam,
        S,
        scv,
        m,
        math.inf,
        throughput=lam,
        loss_probability=0.0,
        utilization=busy / m,
        busy_servers=busy,
        queue_length=lam * R,
        waiting_jobs=lam * W,
        response_time=R,
        waiting_time=W,
        empty_probability=empty,
        wait_probability=wait,
        states=states,
        state_probabilities=probabilities,
    )
