"""Structural tests of the plots: what is drawn, where, with which labels and limits."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import (  # noqa: E402
    FillBetweenPolyCollection,
    LineCollection,
    QuadMesh,
)

import qnmodel as qn  # noqa: E402
from qnmodel.reporting import plotting  # noqa: E402
from tests._tol import closed_form  # noqa: E402

# Drawn data are the computed numbers, at most rescaled to another unit (one rounding on
# either side: the plot's and the test's).
DRAWN = closed_form(2)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture
def net():
    return qn.Network.from_demands(
        ["5 ms", "8 ms", "2 ms"], think_time="100 ms", names=["cpu", "disk", "nic"]
    )


def bands(ax):
    return [c for c in ax.collections if isinstance(c, FillBetweenPolyCollection)]


def line(ax, label):
    found = [ln for ln in ax.get_lines() if ln.get_label() == label]
    assert len(found) == 1, [ln.get_label() for ln in ax.get_lines()]
    return found[0]


def band_limits(coll, x):
    """Lower and upper edge of a fill_between band at abscissa x."""
    verts = coll.get_paths()[0].vertices
    ys = verts[np.isclose(verts[:, 0], x), 1]
    return ys.min(), ys.max()


def test_bounds_vs_measured_structure(net):
    N = 30
    measured = pd.DataFrame(
        {
            "n": [1, 10, 30],
            "throughput": [7.0, 70.0, 120.0],
            "throughput_halfwidth": [0.5, 2.0, 3.0],
            "response_time": [0.016, 0.04, 0.15],
            "response_time_halfwidth": [0.001, 0.002, 0.01],
        }
    )
    axes = plotting.bounds_vs_measured(net, N, measured)
    assert len(axes) == 2
    ax_x, ax_r = axes
    assert ax_x.figure is ax_r.figure
    assert ax_x.get_xlabel() == "population n [jobs]"
    assert ax_x.get_ylabel() == "throughput X(n) [jobs/s]"
    assert ax_r.get_ylabel() == "response time R(n) [ms]"
    mres = qn.mva(net, N)
    bjb = qn.bounds(net, N, "bjb")
    aba = qn.bounds(net, N, "aba")
    # The exact curve is drawn with the solver's numbers (ms on the R axis).
    np.testing.assert_allclose(line(ax_x, "exact MVA").get_ydata(), mres.throughput, rtol=DRAWN)
    np.testing.assert_allclose(
        line(ax_r, "exact MVA").get_ydata(), mres.response_time * 1e3, rtol=DRAWN
    )
    # Two bands per axes, labelled, their edges the bounds.
    for ax, q, scale in ((ax_x, "throughput", 1.0), (ax_r, "response_time", 1e3)):
        bs = bands(ax)
        assert [b.get_label() for b in bs] == ["ABA bounds", "BJB bounds"]
        for b, res in zip(bs, (aba, bjb), strict=True):
            lo, hi = band_limits(b, 10.0)
            assert lo == pytest.approx(getattr(res, f"{q}_lower")[9] * scale, rel=DRAWN)
            assert hi == pytest.approx(getattr(res, f"{q}_upper")[9] * scale, rel=DRAWN)
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend == ["ABA bounds", "BJB bounds", "exact MVA", "measured"]
        assert ax.get_xlim() == (1.0, 30.0)
        assert ax.get_ylim()[0] == 0.0
        assert ax.get_xscale() == "linear"
    # Measured points with error bars.
    cont = [c for c in ax_x.containers if c.get_label() == "measured"]
    assert len(cont) == 1 and cont[0].has_yerr
    np.testing.assert_allclose(cont[0].lines[0].get_ydata(), [7.0, 70.0, 120.0], rtol=DRAWN)
    cont_r = [c for c in ax_r.containers if c.get_label() == "measured"][0]
    np.testing.assert_allclose(cont_r.lines[0].get_ydata(), [16.0, 40.0, 150.0], rtol=DRAWN)
    title = ax_x.figure.get_suptitle()
    assert "bottleneck disk" in title and "N* = " in title


def test_log_axis_when_population_spans_decades(net):
    axes = plotting.bounds_vs_measured(net, 1000)
    assert all(ax.get_xscale() == "log" for ax in axes)
    axes = plotting.bounds_vs_measured(net, 1000, logx=False)
    assert all(ax.get_xscale() == "linear" for ax in axes)


def test_population_axis_linear_below_three_decades_and_time_unit(net):
    axes = plotting.bounds_vs_measured(net, 200, time_unit="ms")
    assert axes[0].get_xscale() == "linear"
    assert axes[1].get_ylabel() == "response time R(n) [ms]"
    np.testing.assert_allclose(
        line(axes[1], "exact MVA").get_ydata(), qn.mva(net, 200).response_time * 1e3, rtol=DRAWN
    )
    with pytest.raises(qn.InvalidModelError, match="time_unit must be one of"):
        plotting.bounds_vs_measured(net, 5, time_unit="min")


def test_multiserver_network_draws_aba_only():
    net = qn.Network((qn.Station("cpu", "10 ms", servers=4), qn.Station("disk", "2 ms")))
    axes = plotting.bounds_vs_measured(net, 20)
    assert [b.get_label() for b in bands(axes[0])] == ["ABA bounds"]


def test_bounds_band_on_given_axes_and_seconds_scale():
    net = qn.Network.from_demands(["0.5 s", "0.8 s"])
    fig, ax = plt.subplots()
    out = plotting.bounds_band(
        qn.bounds(net, 10, "bjb"), quantity="response_time", mva=qn.mva(net, 10), ax=ax
    )
    assert out is ax
    assert ax.get_ylabel() == "response time R(n) [s]"
    R10 = qn.mva(net, 10).response_time[-1]
    assert line(ax, "exact MVA").get_ydata()[-1] == pytest.approx(R10, rel=DRAWN)


def test_utilization_marks_bottleneck(net):
    res = qn.mva(net, 50)
    ax = plotting.utilization(res, n_star=qn.bounds(net, 50).n_star)
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert "disk (bottleneck)" in labels and "cpu" in labels and "nic" in labels
    bn = line(ax, "disk (bottleneck)")
    assert bn.get_linewidth() > line(ax, "cpu").get_linewidth()
    np.testing.assert_allclose(bn.get_ydata(), res.utilization[:, 1], rtol=DRAWN)
    assert ax.get_ylim() == (0.0, 1.05)
    assert "bottleneck: disk" in ax.get_title()
    nstar = [ln for ln in ax.get_lines() if ln.get_label().startswith("N* = ")]
    # N* = (sum D + Z) / D_max: a sum of 3 demands and a quotient
    n_star = pytest.approx((0.015 + 0.1) / 0.008, rel=closed_form(8))
    assert len(nstar) == 1 and nstar[0].get_xdata()[0] == n_star


def test_utilization_leaves_out_delay_stations():
    net = qn.Network(
        (
            qn.Station("client_link", "5 s", kind="delay"),
            qn.Station("network", "0.5 s"),
            qn.Station("disk", "1.4 s"),
        )
    )
    res = qn.mva(net, 30)
    assert res.utilization[-1, 0] > 1.0  # X D of a delay station: busy servers, not a fraction
    ax = plotting.utilization(res, network=net)
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert "client_link" not in " ".join(labels)
    assert "disk (bottleneck)" in labels and "network" in labels
    with pytest.raises(qn.InvalidModelError, match="differ from the result's"):
        plotting.utilization(res, network=qn.Network.from_demands(["1 s"]))


def test_sensitivity_curves_per_hue():
    frame = pd.DataFrame(
        {
            "rate": np.tile([1e6, 1e7, 1e8, 1e9], 2),
            "hit": np.repeat([0.0, 0.5], 4),
            "response_time": [4.0, 0.4, 0.04, 0.004, 2.0, 0.2, 0.02, 0.002],
        }
    )
    ax = plotting.sensitivity(
        frame,
        "rate",
        "response_time",
        hue="hit",
        xlabel="link rate [B/s]",
        ylabel="R [ms]",
        yscale=1e3,
    )
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["0", "0.5"]
    np.testing.assert_allclose(lines[1].get_ydata(), [2000.0, 200.0, 20.0, 2.0], rtol=DRAWN)
    assert ax.get_legend().get_title().get_text() == "hit"
    assert ax.get_xlabel() == "link rate [B/s]"
    with pytest.raises(qn.InvalidModelError, match="column 'nope' is not in the frame"):
        plotting.sensitivity(frame, "nope", "response_time")


def test_heatmap_grid_and_contour():
    xs, ys = np.meshgrid([1.0, 2.0, 3.0], [10.0, 20.0])
    frame = pd.DataFrame({"x": xs.ravel(), "y": ys.ravel(), "v": (xs * ys).ravel()})
    ax = plotting.heatmap(frame, "x", "y", "v", label="R [ms]", contour=35.0)
    mesh = [c for c in ax.collections if isinstance(c, QuadMesh)]
    assert len(mesh) == 1
    np.testing.assert_allclose(
        mesh[0].get_array().reshape(2, 3), [[10, 20, 30], [20, 40, 60]], rtol=DRAWN
    )
    cbar_axes = [a for a in ax.figure.axes if a is not ax]
    assert cbar_axes and cbar_axes[0].get_ylabel() == "R [ms]"
    assert len(ax.collections) >= 2  # the mesh and the iso-line
    with pytest.raises(qn.InvalidModelError, match="one row per"):
        plotting.heatmap(frame.iloc[:-1], "x", "y", "v")


def test_heatmap_annotates_each_cell_readably():
    xs, ys = np.meshgrid([1.0, 2.0, 3.0], [10.0, 20.0])
    frame = pd.DataFrame({"x": xs.ravel(), "y": ys.ravel(), "v": (xs * ys).ravel() * 1e-3})
    ax = plotting.heatmap(frame, "x", "y", "v", scale=1e3, annotate="{:.0f}")
    cells = {(t.get_position(), t.get_text()): t.get_color() for t in ax.texts}
    assert set(cells) == {
        ((1.0, 10.0), "10"), ((2.0, 10.0), "20"), ((3.0, 10.0), "30"),
        ((1.0, 20.0), "20"), ((2.0, 20.0), "40"), ((3.0, 20.0), "60"),
    }  # fmt: skip
    # viridis runs from dark purple (low) to light yellow (high): white text on the
    # smallest value, black on the largest.
    assert cells[((1.0, 10.0), "10")] == "white"
    assert cells[((3.0, 20.0), "60")] == "black"
    ax = plotting.heatmap(frame, "x", "y", "v", annotate=True)
    assert sorted(t.get_text() for t in ax.texts)[:2] == ["0.01", "0.02"]
    with pytest.raises(qn.InvalidModelError, match="annotate must be True or a format string"):
        plotting.heatmap(frame, "x", "y", "v", annotate="{:.0q}")
    with pytest.raises(qn.InvalidTypeError, match="annotate must be a bool or a format string"):
        plotting.heatmap(frame, "x", "y", "v", annotate=3)


def test_grid_cells_on_a_log_axis_have_equal_widths():
    # Rates a decade apart on a log axis: each cell spans one decade centred on its value
    # (edges at geometric midpoints). Linear midpoints made the first cell a sliver.
    xs, ys = np.meshgrid([1e7, 1e8, 1e9], [0.0, 0.5, 0.9])
    frame = pd.DataFrame(
        {"x": xs.ravel(), "y": ys.ravel(), "v": xs.ravel() * 0 + ys.ravel(), "b": "disk"}
    )
    frame.loc[frame.x == 1e7, "b"] = "nic"
    for ax in (
        plotting.heatmap(frame, "x", "y", "v"),
        plotting.bottleneck_map(frame, "x", "y", station="b"),
    ):
        assert ax.get_xscale() == "log" and ax.get_yscale() == "linear"
        mesh = next(c for c in ax.collections if isinstance(c, QuadMesh))
        edges = mesh.get_coordinates()
        # geometric midpoints sqrt(a b) (or a log10, a mean and a power) against 10**x: a few
        # operations; linear midpoints (a + b) / 2 and the outer edges a - (b - a) / 2
        np.testing.assert_allclose(
            edges[0, :, 0], 10.0 ** np.array([6.5, 7.5, 8.5, 9.5]), rtol=closed_form(8)
        )
        np.testing.assert_allclose(edges[:, 0, 1], [-0.25, 0.25, 0.7, 1.1], rtol=closed_form(4))
    with pytest.raises(qn.InvalidModelError, match="logy=True needs positive y values"):
        plotting.heatmap(frame, "x", "y", "v", logy=True)


def test_default_labels_carry_readable_names_and_known_units():
    df = qn.sweep(
        qn.NetworkedRAID.cui2006(op="write"),
        N=[8],
        link_rate=["100 Mbit/s", "1 Gbit/s", "10 Gbit/s"],
        master_cache_hit=[0.0, 0.5],
    )
    ax = plotting.sensitivity(df, "link_rate", "response_time_mva", hue="master_cache_hit")
    assert (ax.get_xlabel(), ax.get_ylabel()) == (
        "Ethernet link rate [B/s]",
        "response time R, exact MVA [s]",  # 68 s .. 204 s: drawn in seconds
    )
    assert ax.get_legend().get_title().get_text() == "master cache hit rate"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["0", "0.5"]
    # a legend of rates in readable units, not 1.25e+07 (the gallery's sensitivity figure)
    ax = plotting.sensitivity(df, "master_cache_hit", "response_time_mva", hue="link_rate")
    assert ax.get_legend().get_title().get_text() == "Ethernet link rate"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["12.5 MB/s", "125 MB/s", "1.25 GB/s"]
    ax = plotting.sensitivity(df, "link_rate", "response_time_mva", yscale=1e3)
    assert ax.get_ylabel() == "response time R, exact MVA [ms]"
    drawn = np.sort(ax.get_lines()[0].get_ydata())
    np.testing.assert_allclose(drawn, np.sort(df.response_time_mva * 1e3), rtol=DRAWN)
    ax = plotting.sensitivity(df, "link_rate", "throughput_mva", yscale=2.0)
    assert ax.get_ylabel() == "throughput X, exact MVA"  # unknown scale: no unit, not a wrong one
    ax = plotting.sensitivity(df, "n", "response_time_bjb_upper")
    assert (ax.get_xlabel(), ax.get_ylabel()) == (
        "population n [jobs]",
        "response time R, BJB upper bound [s]",
    )
    ax = plotting.heatmap(df, "link_rate", "master_cache_hit", "throughput_mva")
    assert (ax.get_xlabel(), ax.get_ylabel()) == (
        "Ethernet link rate [B/s]",
        "master cache hit rate",
    )
    cbar = next(a for a in ax.figure.axes if a is not ax)
    assert cbar.get_ylabel() == "throughput X, exact MVA [jobs/s]"
    ax = plotting.bottleneck_map(df, "link_rate", "master_cache_hit")
    assert ax.get_xlabel() == "Ethernet link rate [B/s]"
    ax = plotting.sensitivity(df, "n", "throughput_mva", xlabel="clients", ylabel="X")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("clients", "X")  # given labels win


def test_sensitivity_draws_times_in_a_readable_unit_by_default():
    frame = pd.DataFrame({"n": [1, 2, 3], "response_time": [0.004, 0.006, 0.009]})
    ax = plotting.sensitivity(frame, "n", "response_time")
    assert ax.get_ylabel() == "response time R [ms]"
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), [4.0, 6.0, 9.0], rtol=DRAWN)


def test_iso_line_interpolates_on_the_log_scale():
    # Two columns a decade apart, values 160 and 6 in both rows: the level 100 lies 60/154
    # of the way from 1e7 to 1e8 *in log10*, at 10**(7 + 60/154), not linearly at 4.5e7.
    frame = pd.DataFrame(
        {"x": [1e7, 1e8, 1e7, 1e8], "y": [0.0, 0.0, 1.0, 1.0], "v": [160.0, 6.0, 160.0, 6.0]}
    )
    ax = plotting.heatmap(frame, "x", "y", "v", contour=100.0, logx=True)
    (iso,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    (seg,) = iso.get_segments()
    # interpolation in log10 x: a log, a few operations and a power, each side
    np.testing.assert_allclose(seg[:, 0], 10.0 ** (7 + 60 / 154), rtol=closed_form(8))
    assert sorted(seg[:, 1]) == [0.0, 1.0]
    assert [t.get_text() for t in ax.texts] == ["100"]
    cbar = next(a for a in ax.figure.axes if a is not ax)
    assert [ln.get_ydata()[0] for ln in cbar.get_lines()] == [100.0]  # the level, marked
    ax = plotting.heatmap(frame, "x", "y", "v", contour=100.0, logx=True, annotate="{:.0f}")
    assert sorted(t.get_text() for t in ax.texts) == ["160", "160", "6", "6"]  # no level label
    # Linear axes interpolate linearly.
    ax = plotting.heatmap(frame, "x", "y", "v", contour=100.0, logx=False)
    (iso,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    np.testing.assert_allclose(
        iso.get_segments()[0][:, 0], 1e7 + 60 / 154 * 9e7, rtol=closed_form(6)
    )


def test_legends_beside_crowded_axes(net):
    # Utilisation curves fill the plot from top to bottom: the legend sits to the right.
    ax = plotting.utilization(qn.mva(net, 30), n_star=5.0)
    legend = ax.get_legend()
    ax.figure.canvas.draw()
    box = legend.get_window_extent()
    assert box.x0 >= ax.get_window_extent().x1


def test_bad_inputs():
    net = qn.Network.from_demands(["1 ms"])
    with pytest.raises(qn.InvalidModelError, match="quantity must be"):
        plotting.bounds_band(qn.bounds(net, 3), quantity="latency")
    with pytest.raises(qn.InvalidTypeError, match="net must be a Network"):
        plotting.bounds_vs_measured([1, 2], 3)
    with pytest.raises(qn.InvalidModelError, match="no 'n' column"):
        plotting.bounds_vs_measured(net, 3, {"throughput": [1.0]})
    with pytest.raises(qn.InvalidModelError, match="'throughput' has 1 values but 'n' has 2"):
        plotting.bounds_vs_measured(net, 3, {"n": [1, 2], "throughput": [1.0]})
    with pytest.raises(qn.InvalidTypeError, match="result must be an MVAResult"):
        plotting.utilization(qn.bounds(net, 3))


def test_time_scale():
    assert plotting.time_scale([1e-5, 5e-4]) == (1e6, "us")
    assert plotting.time_scale([0.002]) == (1e3, "ms")
    assert plotting.time_scale([2.0]) == (1.0, "s")


def test_bottleneck_map_from_a_sweep():
    from qnmodel.models.storage import NetworkedRAID
    from qnmodel.whatif import sweep

    df = sweep(
        NetworkedRAID.cui2006(),
        N=[32],
        methods=("aba",),
        link_rate=[12.5e6, 125e6, 1.25e9],
        master_cache_hit=[0.0, 0.5, 0.9],
    )
    ax = plotting.bottleneck_map(df, "link_rate", "master_cache_hit")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == list(dict.fromkeys(df["bottleneck"]))
    assert ax.get_xscale() == "log" and ax.get_yscale() == "linear"
    mesh = [c for c in ax.collections if isinstance(c, QuadMesh)][0]
    codes = np.asarray(mesh.get_array()).reshape(3, 3)
    # Row = cache hit, column = link rate; the code names the bottleneck of that point.
    for _, row in df.iterrows():
        i = [0.0, 0.5, 0.9].index(row["master_cache_hit"])
        j = [12.5e6, 125e6, 1.25e9].index(row["link_rate"])
        assert legend[int(codes[i, j])] == row["bottleneck"]
    assert len(set(legend)) >= 2  # a faster link shifts the bottleneck
    with pytest.raises(qn.InvalidModelError, match="select one population first"):
        plotting.bottleneck_map(pd.concat([df, df]), "link_rate", "master_cache_hit")
