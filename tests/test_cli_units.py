"""Issue 26 item 1 at the command line and in measured files: a bare number is refused.

``--target 'R <= 5'`` answered "47874 clients" (5 s), ``--set think_time=20`` was 20 s, a
measured CSV in ms was read as seconds and a ``latency_mean_ms`` column was ignored. Each
refusal names the option or column, the value and the fix; a unit in the header is read.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import qnmodel as qn
from qnmodel.calibration.comparison import read_measured
from qnmodel.calibration.traces import load_trace
from qnmodel.errors import InvalidModelError, TraceError

from ._cli import run

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo_storage.toml"


# -- options -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--target", "R <= 5"],
         "qnmodel: usage error: --target 'R <= 5': the bound 5 has no unit; write 'R <= 5 ms' "
         "or 'R <= 5 s'"),
        (["--target", "X >= 2000"], "the bound 2000 has no unit; write 'X >= 2000/s'"),
        (["--set", "think_time=20"],
         "qnmodel: usage error: --set think_time=20: model.think_time: got the bare number 20: "
         "a time needs its unit: write '20 ms' or '20 s'"),
        (["--set", "disk.service_time=0.005"],
         "--set disk.service_time=0.005: station[4].service_time: got the bare number 0.005: "
         "a time needs its unit: write '0.005 ms' or '0.005 s'"),
        (["--set", "network.rate=100"],
         "--set network.rate=100: station[2].rate: got the bare number 100: a rate needs its "
         "unit: write '100 MB/s' or '100 Mbit/s'"),
    ],
)  # fmt: skip
def test_solve_refuses_bare_numbers_in_options(argv, message):
    code, out, err = run("solve", str(DEMO), *argv)
    assert (code, out) == (2, "")
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_sweep_refuses_a_bare_number_before_solving():
    code, out, err = run("sweep", str(DEMO), "--vary", "think_time=0 s,20")
    assert (code, out) == (2, "")
    assert "--vary think_time=20: model.think_time: got the bare number 20: a time" in err


def test_options_with_units_are_read():
    code, out, err = run("solve", str(DEMO), "-N", "3", "--set", "think_time=20 ms",
                         "--format", "json")  # fmt: skip
    assert code == 0, err
    code, _, err = run("solve", str(DEMO), "--target", "R <= 50 ms")
    assert code == 0, err
    code, _, err = run("solve", str(DEMO), "-N", "3", "--set", "think_time=0")  # 0: any unit
    assert code == 0, err


# -- measured CSV (plot/report --measured) -------------------------------------------------------
def _write(tmp_path: Path, columns: dict) -> Path:
    p = tmp_path / "m.csv"
    pd.DataFrame(columns).to_csv(p, index=False)
    return p


@pytest.mark.parametrize(
    ("header", "factor"),
    [("R_ms", 1e-3), ("response_time_ms", 1e-3), ("latency_mean_ms", 1e-3), ("R [ms]", 1e-3),
     ("response_time (us)", 1e-6), ("R_s", 1.0), ("response_time [s]", 1.0)],
)  # fmt: skip
def test_measured_csv_reads_the_unit_in_the_header(tmp_path, header, factor):
    values = [12.5, 20.0, 41.0]
    p = _write(tmp_path, {"n": [1, 2, 4], "X": [80.0, 100.0, 97.5], header: values})
    frame = read_measured(p)
    assert frame["response_time"].tolist() == [v * factor for v in values]
    assert frame["throughput"].tolist() == [80.0, 100.0, 97.5]  # per second, by definition


def test_measured_csv_error_bars_and_kilo_iops(tmp_path):
    p = _write(tmp_path, {"n": [1, 2], "throughput [kIOPS]": [1.5, 2.0],
                          "throughput_halfwidth [kIOPS]": [0.1, 0.2], "R_ms": [0.7, 1.0],
                          "R_err_ms": [0.05, 0.1]})  # fmt: skip
    frame = read_measured(p)
    assert frame["throughput"].tolist() == [1500.0, 2000.0]
    assert frame["throughput_halfwidth"].tolist() == [100.0, 200.0]
    np.testing.assert_allclose(frame["response_time_halfwidth"], [5e-5, 1e-4], rtol=1e-15)


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"n": [1], "throughput": [80.0], "response_time": [12.5]},
         "column 'response_time' holds times without a unit (first value 12.5): name it with its "
         "unit, e.g. 'response_time_ms', 'response_time_s' or 'response_time [ms]'"),
        ({"n": [1], "latency_mean": [12.5]},
         "column 'latency_mean' holds times without a unit (first value 12.5)"),
        ({"n": [1], "R": [3.0], "throughput_halfwidth": [1.0]},
         "column 'R' holds times without a unit"),
        ({"n": [1], "R [MB/s]": [3.0]}, "column 'R [MB/s]' has a unit of rate, but "
         "response_time is a time"),
        ({"n": [1], "R [msec]": [3.0]}, "column 'R [msec]': unknown unit 'msec'"),
        ({"n": [1], "R_ms": [3.0], "latency_mean_s": [0.003]},
         "two columns for response_time: 'R_ms' and 'latency_mean_s'; keep one"),
    ],
)  # fmt: skip
def test_measured_csv_refuses_times_without_units(tmp_path, columns, message):
    p = _write(tmp_path, columns)
    with pytest.raises(InvalidModelError) as exc:
        read_measured(p)
    assert str(exc.value) == f"{p}: {message}" or message in str(exc.value)


def test_plot_refuses_a_csv_in_unnamed_units_and_draws_one_in_ms(tmp_path):
    ref = qn.mva(qn.load_model(DEMO).network, 10)
    ms = ref.response_time[[0, 4, 9]] * 1e3
    bare = _write(tmp_path, {"n": [1, 5, 10], "response_time": ms})
    code, out, err = run("plot", str(DEMO), "-N", "10", "--measured", str(bare),
                         "--out", str(tmp_path / "p.png"))  # fmt: skip
    assert (code, out) == (1, "")
    assert f"{bare}: column 'response_time' holds times without a unit" in err
    assert not (tmp_path / "p.png").exists()
    named = tmp_path / "named.csv"
    pd.DataFrame({"n": [1, 5, 10], "response_time_ms": ms}).to_csv(named, index=False)
    code, _, err = run("-q", "plot", str(DEMO), "-N", "10", "--measured", str(named),
                       "--out", str(tmp_path / "p.png"))  # fmt: skip
    assert code == 0, err
    np.testing.assert_allclose(read_measured(named)["response_time"], ref.response_time[[0, 4, 9]],
                               rtol=1e-12)  # fmt: skip


# -- trace CSV (calibration) -------------------------------------------------------------------
def test_trace_csv_reads_latency_mean_ms(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("# engine: emu\njobs,bs [KiB],throughput_ops_s,latency_mean_ms\n"
                 "1,64,150,6.5\n2,64,280,7.0\n")  # fmt: skip
    t = load_trace(p)
    assert t.points["latency_mean_s"].tolist() == pytest.approx([0.0065, 0.007], rel=1e-15)
    assert t.points["bs_bytes"].tolist() == [65536, 65536]
    assert "latency_mean_ms" not in t.points.columns


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("jobs,latency_mean", "column 'latency_mean' has no unit: name it with its unit, e.g. "
         "'latency_mean_ms', 'latency_mean_s' or 'latency_mean [ms]'"),
        ("jobs,throughput", "column 'throughput' has no unit: name it with its unit, e.g. "
         "'throughput_ops_s' or 'throughput_B_s'"),
        ("jobs,bs,latency_p50_s", "column 'bs' has no unit: name it with its unit, e.g. "
         "'bs_bytes' or 'bs [KiB]'"),
    ],
)  # fmt: skip
def test_trace_csv_refuses_measured_columns_without_units(tmp_path, header, message):
    p = tmp_path / "t.csv"
    p.write_text(header + "\n" + ",".join(["1"] * len(header.split(","))) + "\n")
    with pytest.raises(TraceError) as exc:
        load_trace(p)
    assert message in str(exc.value)


# -- qnmodel bench options -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["emu", "jobs=1", "dev_latency=5"],
         "qnmodel: usage error: dev_latency=5: got the bare number 5: a time needs its unit: "
         "write '5 ms' or '5 s'"),
        (["emu", "bs=4096,65536"],
         "bs=4096,65536: got the bare number 4096: a size needs its unit: write '4096 KiB' or "
         "'4096 B'"),
        (["emu", "dev_rate=50"], "dev_rate=50: got the bare number 50: a rate needs its unit"),
        (["plan", "a=4", "r=50 MB/s"], "a=4: got the bare number 4: a time needs its unit"),
    ],
)  # fmt: skip
def test_bench_refuses_bare_quantities_before_running(argv, message):
    code, out, err = run("-q", "bench", *argv)
    assert (code, out) == (2, "")
    assert message in err
