"""Execute the queue-depth-limit notebook and check its numbers against birth-death chains.

A device whose throughput with j requests inside is r(j) / D, behind a queue-depth limit QD,
is one birth-death process with death rate r(min(j, QD)) / D ([Kle75] sec. 3.1): the test
solves that chain directly (truncated far in the geometric tail, or at the capacity C), the
closed variant with birth rate (N - j) / Z, and QD = 1 with a finite host queue by the
M/M/1/K closed form ([Kle75] sec. 3.6), and compares the numbers the notebook printed.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from .test_notebooks_user import execute

DEPTHS = [1, 2, 4, 8, 16, 32, 64]
IOPS = [12_500, 24_000, 45_000, 78_000, 118_000, 150_000, 160_000]
D = 1.0 / IOPS[0]
# the rate curve fitted by qn.fit_rate_multipliers: X(j) interpolated linearly, / X(1)
R_CURVE = np.interp(np.arange(1, 65), DEPTHS, IOPS) / IOPS[0]


def _open_chain(lam, qd, capacity=None):
    """Host-queue wait, device time, throughput, loss of the open chain (seconds, 1/s)."""
    top = capacity if capacity is not None else 20_000
    j = np.arange(top + 1)
    mu = R_CURVE[np.minimum(np.maximum(j, 1), qd) - 1] / D
    logp = np.concatenate([[0.0], np.cumsum(np.log(lam) - np.log(mu[1:]))])
    p = np.exp(logp - logp.max())
    p /= p.sum()
    loss = p[-1] if capacity is not None else 0.0
    x = lam * (1.0 - loss)
    host = float(p @ np.maximum(j - qd, 0)) / x
    device = float(p @ np.minimum(j, qd)) / x
    return host, device, x, loss


def _closed_chain(n, qd, think):
    j = np.arange(n + 1)
    mu = R_CURVE[np.minimum(np.maximum(j, 1), qd) - 1] / D
    logp = np.concatenate([[0.0], np.cumsum(np.log((n - j[:-1]) / think) - np.log(mu[1:]))])
    p = np.exp(logp - logp.max())
    p /= p.sum()
    x = float(p[1:] @ mu[1:])
    return x, float(p @ np.maximum(j - qd, 0)) / x, float(p @ np.minimum(j, qd)) / x


@pytest.mark.notebook
def test_queue_depth_limit_notebook(monkeypatch):
    nb, text, elapsed, images = execute("queue_depth_limit.ipynb", monkeypatch)
    print(f"notebook ran in {elapsed:.1f} s")  # a speed target belongs in the benchmarks
    assert images >= 1
    assert "one request alone: 80 us; the device saturates at 160,000 IOPS from depth 64" in text
    assert "fes (exact: flow-equivalent server)" in text
    loads = [60_000, 110_000, 140_000]

    # the open table, unbounded host queue: host + device = R in us, or unstable
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+) \|(.*\|.*\|.*)$", line)
        if m and ("+" in m[2] or "unstable" in m[2]):
            rows[int(m[1])] = m[2].split("|")
    assert sorted(rows) == [1, 2, 4, 8, 12, 16, 24, 32, 64]
    for qd, cells in rows.items():
        for lam, cell in zip(loads, cells, strict=True):
            if R_CURVE[qd - 1] / D <= lam:
                assert f"unstable (max {R_CURVE[qd - 1] / D:6.0f} IOPS)" in cell
                continue
            host, dev, _, _ = _open_chain(lam, qd)
            got = [float(v) for v in re.findall(r"[\d.]+", cell)]
            assert got == pytest.approx([host * 1e6, dev * 1e6, (host + dev) * 1e6], abs=0.051)

    # the choice of QD: smallest stable, within 10 % of no limit, meeting 250 us
    for lam in loads:
        R = np.array(
            [
                np.inf if R_CURVE[q - 1] / D <= lam else sum(_open_chain(lam, q)[:2])
                for q in range(1, 65)
            ]
        )
        stable = int(np.flatnonzero(np.isfinite(R))[0]) + 1
        near = int(np.flatnonzero(R <= 1.10 * R[-1])[0]) + 1
        meets = int(np.flatnonzero(R <= 250e-6)[0]) + 1
        assert (
            f"{lam // 1000:3d}k IOPS: unlimited R = {R[-1] * 1e6:.1f} us; stable from QD "
            f"{stable}, within 10 % from QD {near}; R <= 250 us: QD >= {meets}"
        ) in text
    assert "60k IOPS: unlimited R = 101.4 us; stable from QD 6, within 10 % from QD 9" in text
    assert "140k IOPS: unlimited R = 216.8 us; stable from QD 28, within 10 % from QD 33" in text

    # the finite host queue, C = 128: X, loss, R
    C = 128
    frows = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+) \|(.*%.*\|.*%.*\|.*%.*)$", line)
        if m:
            frows[int(m[1])] = m[2].split("|")
    assert sorted(frows) == [1, 2, 4, 8, 16, 32, 64]
    for qd, cells in frows.items():
        for lam, cell in zip(loads, cells, strict=True):
            host, dev, x, loss = _open_chain(lam, qd, C)
            got = re.findall(r"[\d.]+", cell)
            assert float(got[0]) == pytest.approx(x, abs=0.51)
            assert float(got[1]) == pytest.approx(loss * 100, abs=0.051)
            assert float(got[2]) == pytest.approx((host + dev) * 1e6, abs=0.051)

    # QD = 1 with C = 128 is M/M/1/K: p_n = (1 - a) a^n / (1 - a^(K+1)), a = lambda D
    lam, a = 140_000, 140_000 * D
    n = np.arange(C + 1)
    p = a ** (n - C) * (a - 1) / (a - a ** (-C))  # the same p_n, scaled to stay finite
    L, loss = float(p @ n), float(p[-1])
    R = L / (lam * (1 - loss))
    m = re.search(
        r"QD = 1, 140k IOPS, C = 128: thread_pool_open R = ([\d.]+) us, loss ([\d.]+); "
        r"queue_mm1k R = ([\d.]+) us, loss ([\d.]+)",
        text,
    )
    assert m
    assert float(m[1]) == float(m[3]) == pytest.approx(R * 1e6, abs=5e-4)
    assert float(m[2]) == float(m[4]) == pytest.approx(loss, abs=5e-7)

    # the closed table: N threads thinking 100 us
    crow = re.findall(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s*$", text, re.M)
    assert len(crow) == 6
    for nn, qd, x, host, dev in crow:
        ex, eh, ed = _closed_chain(int(nn), int(qd), 100e-6)
        assert float(x) == pytest.approx(ex, abs=0.51)
        assert float(host) == pytest.approx(eh * 1e6, abs=0.051)
        assert float(dev) == pytest.approx(ed * 1e6, abs=0.051)

    # the simulated point: the model is exact, so within the simulation's noise
    m = re.search(r"model - simulation: ([+-][\d.]+)% on X, ([+-][\d.]+)% on R", text)
    assert m and abs(float(m[1])) < 2.0 and abs(float(m[2])) < 10.0
