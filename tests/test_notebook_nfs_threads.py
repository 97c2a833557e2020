"""Execute the "how many NFS server threads?" notebook and check the numbers it reports."""

from __future__ import annotations

import re

import pytest

from .test_notebooks_user import execute


@pytest.mark.notebook
def test_nfs_server_threads_notebook(monkeypatch):
    nb, text, elapsed, images = execute("nfs_server_threads.ipynb", monkeypatch)
    print(f"notebook ran in {elapsed:.1f} s")  # a speed target belongs in the benchmarks
    assert images >= 1
    assert "unlimited threads: X(40) = 427.0 req/s, R = 43.7 ms, bottleneck disk0" in text
    # T = 1 is one request at a time: X below 1 / 8.3 ms = 120.5 req/s
    rows = {
        int(m[0]): float(m[1]) for m in re.findall(r"^\s*(\d+)\s+([\d.]+)\s+[\d.]+", text, re.M)
    }
    assert rows[1] == 120.5 and rows[8] == 361.9 and rows[32] == 427.0
    assert "fes (approximate: flow-equivalent server)" in text
    assert "knee: 14 threads give 95 % of the unlimited throughput, 19 give 99 %" in text
    assert "8 threads (a common default) give 85%" in text
    assert "2 disks: unlimited  241.2 req/s, knee 12 threads (95 %), 22 (99 %)" in text
    assert "8 disks: unlimited  583.9 req/s, knee 10 threads (95 %), 14 (99 %)" in text
    # the simulated point: model within the documented error (CPU then disk: X low, < 3.1 %)
    m = re.search(r"model - simulation: ([+-][\d.]+)% on X", text)
    assert m and -3.1 < float(m[1]) < 0.0
    assert "T = 4: model X = 282.3 req/s" in text
