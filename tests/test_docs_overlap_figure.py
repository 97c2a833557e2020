"""The regime figure of docs/explanation/overlap.md draws the numbers of the page's table.

The figure (``overlap_regime`` of ``docs/_build/gallery.py``) and the table of the small
regime grid both come from the recorded summaries in ``data/validation/``: the figure computes
its numbers with :func:`qnmodel.lab.validation.raid.regime_rows`, the table was written by
hand. Here the figure is built, the values of its markers are read back, and both are
compared with the table to its printed precision.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from qnmodel.lab.validation.raid import regime_rows
from qnmodel.reporting.plotting.validation import regime_error_values, regime_x

matplotlib = pytest.importorskip("matplotlib", reason="matplotlib (the plot extra) is missing")
matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "explanation" / "overlap.md"
_spec = importlib.util.spec_from_file_location(
    "qnmodel_docs_gallery", ROOT / "docs" / "_build" / "gallery.py"
)
gallery = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = gallery
_spec.loader.exec_module(gallery)

HEADER = "| study | case | link | disk per chunk (calibrated) | d/c |"
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def page_table() -> dict[tuple[str, str], list[str]]:
    """The grid's table of overlap.md: cells by (study name, case label)."""
    lines = PAGE.read_text("utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(HEADER))
    rows = {}
    for ln in lines[start + 2 :]:
        if not ln.startswith("|"):
            break
        cells = [c.strip() for c in ln.strip("|").split("|")]
        rows[cells[0], cells[1]] = cells[1:]
    return rows


def printed(cell: str) -> list[tuple[float, float]]:
    """Each number of a cell with half a unit of its last printed digit."""
    out = []
    for m in NUMBER.finditer(cell):
        s = m.group()
        decimals = len(s.split(".")[1]) if "." in s else 0
        out.append((float(s), 0.5 * 10.0**-decimals + 1e-9))
    return out


def assert_printed(cell: str, values: list[float]) -> None:
    got = printed(cell)
    assert len(got) == len(values), (cell, values)
    for (shown, tol), v in zip(got, values, strict=True):
        assert abs(shown - v) <= tol, f"{cell!r}: {v} does not print as {shown}"


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, str], dict]:
    out = {}
    for name, file in gallery.REGIME_STUDIES:
        for r in regime_rows(json.loads((gallery.VALIDATION / file).read_text())):
            out[name, r["label"]] = r
    return out


def test_the_page_table_is_the_recorded_numbers(rows):
    table = page_table()
    assert set(table) == set(rows)
    for name, r in rows.items():
        cells = table[name]
        assert ("constant" in cells[2]) == (r["disk_scv"] == 0.0), name
        assert_printed(cells[2], [r["disk"] * 1e3])
        assert_printed(cells[3], [r["ratio"]])
        assert_printed(cells[4], [r["mape_x_overlap"], r["mape_x"]])
        assert_printed(cells[5], [r["mape_r_overlap"], r["mape_r"]])
        assert_printed(cells[6], [r["r1_measured"] * 1e3])
        assert_printed(cells[7], [100 * r["r1_error_overlap"], 100 * r["r1_error"]])
        assert_printed(cells[8], [r["inside_overlap"], r["n_points"]])


def test_regime_rows_agree_with_the_stored_summary(rows):
    """The numbers computed again from the points equal what the study stored for its case."""
    for name, file in gallery.REGIME_STUDIES:
        doc = json.loads((gallery.VALIDATION / file).read_text())
        assert len(doc["cases"]) == 6
        for case in doc["cases"]:
            r = rows[name, case["label"]]
            for key in ("mape_x", "mape_r", "mape_x_overlap", "mape_r_overlap"):
                assert r[key] == pytest.approx(case[key], rel=1e-12), (name, key)
            assert r["inside_overlap"] / r["n_points"] == pytest.approx(
                case["inside_overlap_bounds_share"]
            )
            # d/c per chunk: the calibrated disk and link rates (and TCP's goodput)
            cal = case["calibration"]
            want = cal["link_rate"] * doc["goodput_factor"] / cal["disk_rate"]
            assert r["ratio"] == pytest.approx(want, rel=1e-12)
            # a RAID0 full-stripe read's link demand is one chunk's time per chunk (the
            # demand from the data direction's calibration, chunk_link from the case's median
            # over both directions of its links: they differ by up to 0.6 %)
            if case["raid"] == "raid0" and case["op"] == "read":
                dem = case["demands"]
                assert r["chunk_link"] == pytest.approx(dem["link_in"] / case["chunks"], rel=1e-2)


def test_the_figure_draws_the_rows(rows):
    import matplotlib.pyplot as plt

    fig = gallery.overlap_regime()
    try:
        errors, curves = fig.axes[:3], fig.axes[3:6]
        order = list(rows.values())  # the figure's order: studies, then their cases
        xs = regime_x(order)
        for ax, measure in zip(errors, ("MAPE X", "MAPE R", "R(1) error (signed)"), strict=True):
            drawn = {ln.get_gid(): (ln.get_xdata()[0], ln.get_ydata()[0])
                     for ln in ax.get_lines() if ln.get_gid()}  # fmt: skip
            assert len(drawn) == 2 * len(order)
            for i, r in enumerate(order):
                values = regime_error_values(r)
                for model in ("overlap", "mva"):
                    x, y = drawn[f"{model}:{measure}:{i}"]
                    assert (x, y) == (xs[i], values[model, measure])
                    # each case beside its study's ratio, within the spread
                    assert 2**-0.16 <= x / r["ratio"] <= 2**0.16
            # the target band: 0..10 % for the MAPEs, -10..+10 % for R(1)
            band = next(p for p in ax.patches)
            ys = band.get_transform().transform(band.get_path().vertices)[:, 1]
            lo, hi = ax.transData.inverted().transform([[1.0, ys.min()], [1.0, ys.max()]])[:, 1]
            want = -10.0 if measure.startswith("R(1)") else 0.0
            assert (lo, hi) == (pytest.approx(want, abs=1e-9), pytest.approx(10.0))
        # below: R(n) of the chosen cases, overlapped R(n) in the axis' unit
        for ax, (study, label) in zip(curves, gallery.REGIME_CURVES, strict=True):
            doc = json.loads((gallery.VALIDATION / dict(gallery.REGIME_STUDIES)[study]).read_text())
            curve = next(ln for ln in ax.get_lines() if ln.get_label() == "overlapped structure")
            scale = {"[ms]": 1e3, "[s]": 1.0}[ax.get_ylabel().split()[-1]]
            want = [p["r_overlap"] * scale for p in doc["points"] if p["case"] == label]
            np.testing.assert_allclose(curve.get_ydata(), want, rtol=1e-12)
            assert label in ax.get_title()
        png = gallery.draw(next(e for e in gallery.ENTRIES if e.name == "overlap_regime"))
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        plt.close(fig)


def test_the_plots_refuse_what_they_cannot_draw():
    from qnmodel.errors import InvalidModelError
    from qnmodel.reporting import plotting

    with pytest.raises(InvalidModelError, match=r"regime_errors: rows is empty.*regime_rows"):
        plotting.regime_errors([])
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        row = dict(label="c", ratio=1.0, disk_scv=1.0, mape_x=1.0, mape_r=1.0, mape_x_overlap=1.0,
                   mape_r_overlap=1.0, r1_error=0.1, r1_error_overlap=0.01)  # fmt: skip
        with pytest.raises(InvalidModelError, match=r"regime_errors: axes must be 3 Axes, got 1"):
            plotting.regime_errors([row], axes=[ax])
    finally:
        plt.close(fig)
    mva_only = [dict(n=1, r_measured=0.01, r_ci=0.0, r_model=0.012)]
    with pytest.raises(InvalidModelError, match=r"overlap_response needs .*r_overlap"):
        plotting.overlap_response(mva_only)
    with pytest.raises(InvalidModelError, match=r"overlap_response needs .*r_overlap"):
        plotting.overlap_response([])
