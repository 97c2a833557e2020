"""The what-if sliders, driven headlessly: change a value, the figure and the status follow."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("ipywidgets", reason="ipywidgets (the 'widgets' extra) is not installed")

import qnmodel as qn  # noqa: E402
from qnmodel.models.storage import NetworkedRAID  # noqa: E402
from qnmodel.whatif.widgets import Knob, WhatIfExplorer, networked_raid_whatif  # noqa: E402
from tests._tol import closed_form, recursion  # noqa: E402


def mva_line(ax):
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "exact MVA"]
    return np.asarray(line.get_ydata())


def test_networked_raid_sliders_redraw_and_name_bottleneck():
    ex = networked_raid_whatif(N=20)
    assert set(ex.sliders) == {
        "link_rate", "master_cache_hit", "master_time_per_unit", "disk_rate", "N",
    }  # fmt: skip
    base = NetworkedRAID.cui2006(op="write")  # the default, corrected form
    assert ex.network.names == base.network().names  # link_out, link_in: the corrected form
    # Initial state: the paper's test bed, 100 Mbit/s; the link is among the busiest.
    assert ex.values()["link_rate"] == pytest.approx(12.5e6, rel=closed_form(2))  # 100 Mbit/s
    # the plotted curve is exact MVA of the same network (N = 20 on K <= 6 stations), its
    # parameters converted from the sliders' units (two roundings, which X feels at most 1:1)
    tol = recursion(20, 4 * 6 + 2) + closed_form(2)
    x0 = mva_line(ex.axes[0]).copy()
    np.testing.assert_allclose(x0, qn.mva(base.network(), 20).throughput, rtol=tol)
    bn0 = ex.last_bounds.bottleneck
    assert f"bottleneck: <b>{bn0}</b>" in ex.status.value
    redraws = ex.redraws

    ex.sliders["link_rate"].value = 10000.0  # 10 Gbit/s, set programmatically
    assert ex.redraws == redraws + 1
    faster = base.replace(link_rate=10e9 / 8)
    x1 = mva_line(ex.axes[0])
    np.testing.assert_allclose(x1, qn.mva(faster.network(), 20).throughput, rtol=tol)
    assert x1[-1] > x0[-1]
    assert ex.network.station("link_out").demand < base.network().station("link_out").demand
    bn1 = qn.bounds(faster.network(), 20).bottleneck
    assert ex.last_bounds.bottleneck == bn1 and f"<b>{bn1}</b>" in ex.status.value

    ex.sliders["N"].value = 50
    assert len(mva_line(ex.axes[1])) == 50
    assert ex.axes[0].get_xlim() == (1.0, 50.0)
    assert "X(50) = " in ex.status.value


def test_redraw_displays_an_image_whatever_the_backend(monkeypatch):
    # What the Output widget receives must render as a picture in a kernel that never ran
    # `%matplotlib inline` (a bare matplotlib Figure renders there as text only).
    from IPython import display as ipd
    from IPython.core.interactiveshell import InteractiveShell

    shown = []
    monkeypatch.setattr(ipd, "display", lambda *objs, **kw: shown.extend(objs))
    ex = networked_raid_whatif(N=5)
    ex.sliders["N"].value = 8
    assert len(shown) == ex.redraws == 2  # the first drawing, then the slider move
    formatter = InteractiveShell.instance().display_formatter
    bundle, _ = formatter.format(shown[-1])
    png = bundle["image/png"]
    png = png if isinstance(png, bytes) else __import__("base64").b64decode(png)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    bundle, _ = formatter.format(ex.figure)
    assert "image/png" not in bundle  # why the explorer does not display the Figure itself


def test_generic_explorer_over_a_builder():
    def build(v):
        return qn.Network.from_demands([v["disk"], 0.002], think_time=0.1, names=["disk", "cpu"])

    ex = WhatIfExplorer(build, [Knob("disk", "disk [ms]", 0.1, 20.0, 5.0, to_si=1e-3)], N=10)
    assert "bottleneck: <b>disk</b>" in ex.status.value
    ex.sliders["disk"].value = 1.0
    assert "bottleneck: <b>cpu</b>" in ex.status.value
    # exact MVA, N = 10 on K = 2, of 1.0 ms converted to seconds and R back to ms
    np.testing.assert_allclose(
        mva_line(ex.axes[1]),
        qn.mva(build({"disk": 1e-3}), 10).response_time * 1e3,
        rtol=recursion(10, 4 * 2 + 2) + closed_form(3),
    )


def test_knob_validation():
    with pytest.raises(qn.InvalidModelError, match="outside"):
        Knob("x", "x", 0.0, 1.0, 2.0)
    with pytest.raises(qn.InvalidModelError, match="low must be < high"):
        Knob("x", "x", 1.0, 1.0, 1.0)
    with pytest.raises(qn.InvalidModelError, match="log slider needs low > 0"):
        Knob("x", "x", 0.0, 1.0, 0.5, log=True)
    with pytest.raises(qn.InvalidModelError, match="1 <= N <= N_max"):
        WhatIfExplorer(lambda v: None, [], N=0)
