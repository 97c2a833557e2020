"""Measured points are never hidden: inside the axes, off-scale ones marked, not under a legend.

Each figure kind that draws measurements (model against measurement, a validation study's
curves, a sensitivity sweep) is drawn for data the model gets badly wrong, laid out as it
is saved, and checked in display coordinates. Warnings are errors here: a layout warning on
stderr (constrained_layout giving up on axes collapsed by off-axes points) is a failure.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import qnmodel as qn  # noqa: E402
from qnmodel.calibration.comparison import read_measured  # noqa: E402
from qnmodel.reporting import plotting  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")

TRACE = Path(__file__).resolve().parents[2] / "data" / "traces" / "emu-closed-loop.json"


def _figure(ncols: int = 2) -> tuple[Figure, np.ndarray]:
    fig = Figure(figsize=(5.0 * ncols, 4.0), layout="constrained")
    return fig, np.atleast_1d(fig.subplots(1, ncols))


def _saved(fig: Figure) -> None:
    """Lay the figure out exactly as saving does (and save it: a warning there fails)."""
    fig.savefig(io.BytesIO(), format="png", dpi=80)


def _measured_boxes(ax, label: str) -> tuple[np.ndarray, np.ndarray]:
    """Data of the measured container (x, y, bar ends) and the display boxes of its markers
    and error bars."""
    (cont,) = [c for c in ax.containers if c.get_label() == label]
    marker = cont.lines[0]
    xy = np.asarray(marker.get_xydata(), dtype=float)
    half = 0.5 * marker.get_markersize() * ax.figure.dpi / 72.0
    centres = ax.transData.transform(xy)
    boxes = [np.column_stack([centres - half, centres + half])]
    ends = xy[:, 1:2].repeat(2, axis=1)
    if cont.has_yerr:
        segs = np.asarray(cont.lines[2][0].get_segments(), dtype=float)  # (M, 2, 2)
        ends = segs[:, :, 1]
        d = ax.transData.transform(segs.reshape(-1, 2)).reshape(-1, 2, 2)
        boxes.append(np.column_stack([d.min(axis=1), d.max(axis=1)]))
    return np.column_stack([xy, ends]), np.concatenate(boxes)


def _assert_in_view(ax, label: str = "measured") -> None:
    data, boxes = _measured_boxes(ax, label)
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    assert np.all((x0 <= data[:, 0]) & (data[:, 0] <= x1)), (ax.get_xlim(), data[:, 0])
    assert np.all((y0 <= data[:, 1:]) & (data[:, 1:] <= y1)), (ax.get_ylim(), data[:, 1:])
    leg = ax.get_legend().get_window_extent()
    overlap = (
        (boxes[:, 0] < leg.x1) & (boxes[:, 2] > leg.x0)
        & (boxes[:, 1] < leg.y1) & (boxes[:, 3] > leg.y0)
    )  # fmt: skip
    assert not overlap.any(), f"the legend covers measured points {data[overlap[: len(data)]]}"


def test_model_vs_measurement_shows_every_point_the_model_gets_wrong():
    # The case: a device of 1.3 ms where qnbench measured S = 6.3 ms; measured R
    # climbs to 80 ms where the model's band ends near 20 ms (n = 8, 12, 16 were lost above
    # the axes, the legend covered n = 6, and constrained_layout warned).
    net = qn.Network.from_demands(["1.3 ms"], think_time="20 ms")
    measured = read_measured(TRACE)
    fig, axes = _figure()
    plotting.bounds_vs_measured(net, 16, measured, axes=axes)
    _saved(fig)
    for ax in axes:
        _assert_in_view(ax)
        assert ax.get_ylim()[0] == 0.0
    r = measured["response_time"].to_numpy() * 1e3
    r_err = measured["response_time_halfwidth"].to_numpy() * 1e3
    assert axes[1].get_ylim()[1] >= float(np.max(r + r_err))
    # the model's range is kept: the exact curve and the bands are drawn as before
    assert axes[0].get_xlim() == (1.0, 16.0)


def test_measured_points_beyond_the_models_populations_and_below_zero_error_bars():
    net = qn.Network.from_demands(["5 ms", "8 ms"], think_time="100 ms")
    measured = pd.DataFrame(
        {
            "n": [1, 5, 40],  # the model is solved to 20 only
            "throughput": [8.0, 40.0, 130.0],
            "throughput_halfwidth": [9.0, 2.0, 3.0],  # the first bar reaches below 0
            "response_time": [0.02, 0.05, 0.4],
            "response_time_halfwidth": [0.001, 0.002, 0.02],
        }
    )
    fig, axes = _figure()
    plotting.bounds_vs_measured(net, 20, measured, axes=axes)
    _saved(fig)
    for ax in axes:
        _assert_in_view(ax)
        assert ax.get_xlim()[1] >= 40.0


def test_legend_goes_beside_the_axes_when_every_corner_holds_a_point():
    net = qn.Network.from_demands(["5 ms"], think_time="10 ms")
    n = np.arange(1, 31)
    # points along all four edges of the throughput axes: no corner is free
    x = np.where(n % 2 == 0, 0.0, 200.0) + np.where(n % 3 == 0, 100.0, 0.0)
    measured = pd.DataFrame({"n": n, "throughput": x, "throughput_halfwidth": np.full(30, 5.0)})
    fig, axes = _figure()
    plotting.bounds_vs_measured(net, 30, measured, axes=axes)
    _saved(fig)
    ax = axes[0]
    _assert_in_view(ax)
    leg = ax.get_legend().get_window_extent()
    assert leg.x0 >= ax.bbox.x1  # beside the axes, not over them


def test_validation_curves_show_every_point_and_its_interval():
    pts = []
    for n in (1, 2, 4, 8, 16):
        x_model = min(n / 0.0213, 769.0)
        pts.append(
            {
                "n": n,
                "x_measured": min(40.0 * n, 160.0),
                "x_ci": 6.0,
                "r_measured": n / min(40.0 * n, 160.0) - 0.02,
                "r_ci": 0.004,
                "x_model": x_model,
                "r_model": n / x_model - 0.02 + 1e-9,
                "x_lower": 0.6 * x_model,
                "x_upper": x_model,
                "r_lower": 0.0013,
                "r_upper": 0.0013 * n,  # the model's band ends far below the measured R
            }
        )
    fig, axes = _figure()
    plotting.validation_curves(pts, axes=axes, title="validation")
    _saved(fig)
    for ax in axes:
        _assert_in_view(ax, "measured (95 % CI)")


def test_sensitivity_keeps_points_in_view_and_marks_what_a_log_axis_cannot_show():
    frame = pd.DataFrame(
        {
            "x": np.tile([1.0, 10.0, 100.0, 1000.0], 2),
            "series": np.repeat(["a", "b"], 4),
            "y": [5.0, 50.0, 500.0, 0.0, 4.0, 40.0, 400.0, 4000.0],
        }
    )
    fig, (ax,) = _figure(1)
    plotting.sensitivity(frame, "x", "y", hue="series", ax=ax, logy=True)
    _saved(fig)
    assert ax.get_yscale() == "log"
    off = [ln for ln in ax.get_lines() if "off scale" in ln.get_label()]
    assert len(off) == 1 and off[0].get_xdata().tolist() == [1000.0]  # marked, not dropped
    assert off[0].get_ydata().tolist() == [0.0]  # at the bottom edge (axes coordinates)
    for ln in ax.get_lines():
        xy = ln.get_xydata()
        xy = xy[xy[:, 1] > 0] if ln not in off else xy[:, :1]
        x0, x1 = ax.get_xlim()
        assert np.all((x0 <= xy[:, 0]) & (xy[:, 0] <= x1))
    # "auto" does not pick a log axis for data with a value it could not show
    fig, (ax,) = _figure(1)
    plotting.sensitivity(frame, "x", "y", hue="series", ax=ax)
    assert ax.get_yscale() == "linear"


def test_n_star_inside_the_population_axis_when_drawn():
    net = qn.Network.from_demands(["1.3 ms"], think_time="20 ms")
    n_star = qn.bounds(net, 16).n_star
    assert n_star > 16  # (1.3 + 20) / 1.3 = 16.4: beyond the largest population solved
    fig, (ax,) = _figure(1)
    plotting.utilization(qn.mva(net, 16), ax=ax, n_star=n_star)
    _saved(fig)
    x0, x1 = ax.get_xlim()
    assert x0 <= n_star <= x1
