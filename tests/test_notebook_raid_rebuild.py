"""Execute the "RAID rebuild under priority" notebook and check the numbers it reports."""

from __future__ import annotations

import re

import pytest

from .test_notebooks_user import execute


def _row(text: str, head: str) -> list[float]:
    m = re.search(rf"^\s*{head}\s+(.*)$", text, re.M)
    assert m, head
    return [float(x) for x in m.group(1).split() if x != "-"]


@pytest.mark.notebook
def test_raid_rebuild_priority_notebook(monkeypatch):
    nb, text, elapsed, images = execute("raid_rebuild_priority.ipynb", monkeypatch)
    print(f"notebook ran in {elapsed:.1f} s")
    assert images == 1
    # exact M/G/1 means (Cobham), ms: no rebuild, and 40 MB/s under FCFS, HOL, PRIO-PR
    assert _row(text, "0")[:3] == [10.15, 10.15, 10.15]
    assert _row(text, "40") == [23.84, 12.86, 10.15, 25.84, 42.31, 49.69]
    worst = float(re.search(r"exact M/G/1 formulas: largest difference ([\d.]+)%", text)[1])
    assert worst < 6.0  # the simulator agrees with the exact means
    # simulated foreground p99 at 40 MB/s of rebuild: FCFS 99 ms, HOL 44 ms, PRIO-PR 42 ms
    fcfs, hol, pr = _row(text, r"40\s{10,}")
    assert 85.0 < fcfs < 110.0 and 41.0 < hol < 49.0 and 39.0 < pr < 45.0
    # closed: amva's foreground R within 8.1 % of the simulator, its rebuild rate 30 % low
    m = re.search(r"foreground R within ([\d.]+)% \(priorities\), rebuild MB/s within ([\d.]+)%",
                  text)  # fmt: skip
    assert float(m[1]) < 10.0 and 20.0 < float(m[2]) < 40.0
    assert "(approximate: priority MVA (shadow server" in text
    # the planner's answer
    assert "FCFS     largest simulated rebuild rate with foreground p99 <= 55 ms: 10 MB/s" in text
    assert "HOL      largest simulated rebuild rate with foreground p99 <= 55 ms: 40 MB/s" in text
    assert "PRIO-PR  largest simulated rebuild rate with foreground p99 <= 55 ms: 40 MB/s" in text
