"""Execute the striping notebook (recorded data/validation/stripe.json) and check its numbers."""

from __future__ import annotations

import re

import pytest

from .test_notebooks_user import execute


@pytest.mark.notebook
def test_striping_notebook(monkeypatch):
    nb, text, elapsed, images = execute("striping.ipynb", monkeypatch)
    assert images >= 3  # R and X vs N, p99 vs N, RAID5
    assert "108 points, 18 cases, member service d = 4 ms" in text
    fj, fj_sim, sim = map(
        float,
        re.search(
            r"exponential service: fork-join MVA MAPE ([\d.]+) % vs measured, ([\d.]+) % vs "
            r"simulator; simulator ([\d.]+) % vs measured",
            text,
        ).groups(),
    )
    assert fj <= 10.0 and fj_sim <= 5.0 and sim <= 10.0  # the targets
    p95, p99, within, of = map(
        float,
        re.search(
            r"reads: fork-join p95 within ([\d.]+) %, p99 within ([\d.]+) % of measured "
            r"\((\d+) of (\d+) p99 within 10 %\)",
            text,
        ).groups(),
    )
    assert p95 <= 10.0 and p99 <= 13.0 and within >= 0.85 * of  # recorded: 8.2, 12.5, 27 of 30
    series, one = map(
        float,
        re.search(r"members in series MAPE ([\d.]+) %, one combined station ([\d.]+) %", text)
        .groups(),
    )  # fmt: skip
    assert series > 3 * fj and one > 3 * fj
    # one client: exponential members cost about d H_w, constant ones d
    exp = [
        float(v) for v in re.findall(r"w=\d: ([\d.]+) d", re.search(r"exp +one client.*", text)[0])
    ]
    assert exp == pytest.approx([1.5, 2.08, 2.72], rel=0.08)
    line = re.search(r"const one client.*", text)[0]
    const = [float(v) for v in re.findall(r"w=\d: ([\d.]+) d", line)]
    assert const == pytest.approx([1.0, 1.0, 1.0], rel=0.02)
