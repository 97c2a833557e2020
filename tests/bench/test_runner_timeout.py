"""``qnmodel.bench.run(timeout=...)`` (``qnmodel bench --timeout``) keeps what qnbench measured.

At the timeout the runner sends SIGTERM; qnbench stops at once, even with every client asleep
(here a 1000 s think time), prints the points measured so far and exits; the runner returns
that partial trace (``check=False``) or attaches it to the error and lists its points in the
message. Before, the runner sent SIGINT, which a sleeping qnbench did not act on, killed it
10 s later and had no document left.
"""

from __future__ import annotations

import time

import pytest

from qnmodel import bench
from qnmodel.errors import BenchError

SLEEPY = {"dev_latency": "1 ms", "think": "1000 s", "jobs": [1, 2], "runtime": "60 s",
          "warmup": 0}  # fmt: skip


def test_a_timeout_returns_the_partial_trace_with_check_false(qnbench_exe):
    t0 = time.monotonic()
    trace = bench.run("emu", timeout=1.0, check=False, executable_path=qnbench_exe, **SLEEPY)
    took = time.monotonic() - t0
    assert trace.complete is False
    assert any("interrupted by a signal" in e for e in trace.errors), trace.errors
    (r,) = trace.results  # the first point, cut short: each client made its first request
    assert r["jobs"] == 1 and r["complete"] is False and r["ops"] == 1
    assert trace.to_frame()["ops"].tolist() == [1]
    assert took < 1.0 + 5.0, f"{took:.1f} s for a 1 s timeout"


def test_a_timeout_raises_with_the_partial_trace_and_lists_its_points(qnbench_exe):
    with pytest.raises(BenchError, match="timed out after 1 s and was stopped") as info:
        bench.run("emu", timeout=1.0, executable_path=qnbench_exe, **SLEEPY)
    msg = str(info.value)
    assert "it had measured 1 point(s), 0 complete; point 0: jobs=1 bs=4096 op=read: 1 ops" in msg
    assert "(incomplete) (the partial trace: exc.trace" in msg
    trace = info.value.trace
    assert trace is not None and trace.results[0]["ops"] == 1
