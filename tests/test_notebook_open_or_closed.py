"""Execute the "open or closed?" notebook and check the numbers it reports."""

from __future__ import annotations

import re

import pytest

from .test_notebooks_user import execute


@pytest.mark.notebook
def test_open_or_closed_notebook(monkeypatch):
    nb, text, elapsed, images = execute("open_or_closed.ipynb", monkeypatch)
    assert images >= 1
    assert "saturates at 35000 IOPS, bottleneck nvme" in text
    # light load: open and closed agree within 1.2 %; at N = 40 they differ by ~59 %
    rows = {int(m[0]): float(m[1]) for m in re.findall(r"^\s*(\d+) .* (-?[\d.]+)%$", text, re.M)}
    assert rows[1] < 1.2 and rows[5] < 1.2 and 50.0 < rows[40] < 70.0
    gaps = [float(g) for g in re.findall(r"gap ([\d.]+)%", text)]
    assert len(gaps) == 4 and gaps[-1] < 0.1 and gaps == sorted(gaps, reverse=True)
    assert "best upgrade nvme: 2x faster" in text
    assert "26542 IOPS (open), 34 clients (closed)" in text
