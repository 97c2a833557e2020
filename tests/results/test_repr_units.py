"""Reprs print times as the command line does: one formatter, :func:`qnmodel.units.format_quantity`
(``104.9 us``, not ``0.000104858s``)."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import qnmodel as qn
from qnmodel import cli
from qnmodel.units import format_quantity

D = 104.8576e-6  # 100 KiB at 1 GB/s... as a demand: 104.9 us


def test_station_and_network_reprs_use_the_formatter():
    st = qn.Station("nvme", D)
    assert repr(st) == "Station('nvme', 104.9 us)"
    net = qn.Network([st, qn.Station("cpu", "5 ms")], think_time="20 ms")
    assert repr(net).startswith("Network(K=2, Z=20 ms: Station('nvme', 104.9 us)")
    assert "0.000104858" not in repr(net)


def test_result_reprs_use_the_formatter():
    net = qn.Network.from_demands([D, "5 ms"], think_time="20 ms")
    mva = qn.mva(net, 3)
    assert f"R(3)={format_quantity(mva.response_time[-1], 'time')}," in repr(mva)
    assert "Z=20 ms," in repr(mva)
    b = qn.bounds(net, 3)
    lo, hi = (
        format_quantity(v[-1], "time") for v in (b.response_time_lower, b.response_time_upper)
    )
    assert f"R(3) in [{lo}, {hi}])" in repr(b)
    q = qn.single_queue("40000/s", "80 us", servers=4)
    r = repr(q)
    assert "S=80 us," in r and f"R={format_quantity(q.response_time, 'time')}," in r
    o = qn.open_network(net, "40/s")
    assert f"R={format_quantity(o.response_time[-1], 'time')} at lambda=40/s" in repr(o)


def test_the_command_line_prints_the_same_text(tmp_path):
    model = tmp_path / "m.toml"
    model.write_text(
        '[model]\nname = "m"\nthink_time = "20 ms"\nN = 2\n\n'
        '[[station]]\nname = "nvme"\ndemand = "104.8576 us"\n'
    )
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["solve", str(model)]) == 0
    assert "104.9 us" in out.getvalue()  # the station table
    assert "104.9 us" in repr(qn.load_model(model).network)
