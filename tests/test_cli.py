"""The ``qnmodel`` command: demo, solve, sweep, plot, report; formats and exit codes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import qnmodel as qn
from qnmodel import cli
from qnmodel.io import modelfile

from ._ci import IN_CI
from ._cli import run
from ._tol import closed_form

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo_storage.toml"


def demo_network() -> qn.Network:
    """The demo model built by hand with the Python API (independently of the TOML reader)."""
    return qn.Network(
        (
            qn.Station("client_cpu", "0.4 ms"),
            qn.Station("client_nic", 65536 / 125e6),
            qn.Station("network", 65536 / 12.5e6),
            qn.Station("server_cpu", 2 * 0.35e-3),
            qn.Station("disk", 0.5 * 9.763e-3),
        ),
        think_time="50 ms",
    )


# -- demo --------------------------------------------------------------------------------
def test_demo_writes_table_and_plots(tmp_path):
    code, out, err = run("demo", "--offline", "--out", str(tmp_path / "d"))
    assert code == 0, err
    files = {p.name for p in (tmp_path / "d").iterdir()}
    assert {
        "demo-storage.csv",
        "demo-storage.md",
        "demo-storage.json",
        "demo-storage.toml",
        "demo-storage_bounds.png",
        "demo-storage_utilization.png",
    } <= files
    for name in sorted(files):
        assert str(tmp_path / "d" / name) in err  # tells the user where it wrote (stderr)
    frame = pd.read_csv(tmp_path / "d" / "demo-storage.csv", float_precision="round_trip")
    assert list(frame["n"]) == list(range(1, 41))
    ref = qn.mva(demo_network(), 40)
    np.testing.assert_allclose(frame["throughput"], ref.throughput, rtol=1e-15)
    np.testing.assert_allclose(frame["response_time"], ref.response_time, rtol=1e-15)
    # Bounds bracket the exact curve, BJB inside ABA.
    for q in ("throughput", "response_time"):
        assert (frame[f"{q}_bjb_lower"] <= frame[q] * (1 + 1e-12)).all()
        assert (frame[q] <= frame[f"{q}_bjb_upper"] * (1 + 1e-12)).all()
        assert (frame[f"{q}_aba_lower"] <= frame[f"{q}_bjb_lower"] * (1 + 1e-12)).all()
        assert (frame[f"{q}_bjb_upper"] <= frame[f"{q}_aba_upper"] * (1 + 1e-12)).all()
    png = (tmp_path / "d" / "demo-storage_bounds.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    md = (tmp_path / "d" / "demo-storage.md").read_text()
    assert "bottleneck **network**" in md and "| 40 |" in md.replace("|  40 |", "| 40 |")


def test_demo_model_matches_examples_file():
    assert DEMO.read_text() == modelfile.DEMO_MODEL_TOML


def test_demo_numbers_by_hand():
    # Saturation 1/D_max with D_max = 64 KiB / 100 Mbit/s = 5.24288 ms; N* = (D + Z) / D_max.
    sol = modelfile.load(DEMO).solve()
    s = sol.summary()
    assert s["bottleneck"] == "network"
    # unit strings to SI (a rounding or two each), a sum of 5 and a quotient or two
    assert s["saturation_throughput"] == pytest.approx(1 / 5.24288e-3, rel=closed_form(4))
    D = 0.4e-3 + 0.524288e-3 + 5.24288e-3 + 0.7e-3 + 4.8815e-3
    assert s["total_demand"] == pytest.approx(D, rel=closed_form(16))
    assert s["n_star"] == pytest.approx((D + 0.05) / 5.24288e-3, rel=closed_form(20))


# -- solve: identical numbers to the Python API ---------------------------------------------
def test_solve_json_equals_python_api():
    code, out, err = run("solve", str(DEMO), "--format", "json")
    assert code == 0 and err == ""
    doc = json.loads(out)  # JSON alone on stdout
    assert doc["schema"] == "qnmodel.solve" and doc["schema_version"] == 1
    net = demo_network()
    mres, bjb, aba = qn.mva(net, 40), qn.bounds(net, 40, "bjb"), qn.bounds(net, 40, "aba")
    rows = doc["results"]
    assert [r["n"] for r in rows] == list(range(1, 41))
    # Exactly equal: JSON floats round-trip, both paths run the same solver on the same demands.
    assert [r["throughput"] for r in rows] == mres.throughput.tolist()
    assert [r["response_time"] for r in rows] == mres.response_time.tolist()
    assert [r["throughput_bjb_lower"] for r in rows] == bjb.throughput_lower.tolist()
    assert [r["response_time_aba_upper"] for r in rows] == aba.response_time_upper.tolist()
    assert [s["demand"] for s in doc["model"]["stations"]] == net.demands.tolist()


def test_solve_csv_and_population_override():
    code, out, _ = run("solve", str(DEMO), "-N", "200", "--format", "csv")
    assert code == 0
    frame = pd.read_csv(io.StringIO(out), float_precision="round_trip")
    assert len(frame) == 200
    ref = qn.mva(demo_network(), 200)
    np.testing.assert_array_equal(frame["throughput"].to_numpy(), ref.throughput)


def test_solve_set_override_changes_the_bottleneck():
    code, out, _ = run("solve", str(DEMO), "--set", "network.rate=1 Gbit/s", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["summary"]["bottleneck"] == "disk"
    assert doc["model"]["stations"][2]["demand"] == pytest.approx(65536 / 125e6, rel=1e-15)


def test_solve_table_names_bottleneck():
    code, out, _ = run("solve", str(DEMO), "-N", "3")
    assert code == 0
    assert "bottleneck = network" in out
    assert out.strip().splitlines()[-1].split()[0] == "3"


def test_solve_populations_list(tmp_path):
    text = modelfile.DEMO_MODEL_TOML.replace("N = 40", "populations = [1, 10, 200]")
    f = tmp_path / "m.toml"
    f.write_text(text)
    code, out, _ = run("solve", str(f), "--format", "json")
    assert code == 0
    rows = json.loads(out)["results"]
    ref = qn.mva(demo_network(), 200)
    assert [r["n"] for r in rows] == [1, 10, 200]
    assert [r["throughput"] for r in rows] == ref.throughput[[0, 9, 199]].tolist()


# -- errors and exit codes ----------------------------------------------------------------
def test_bad_model_file_is_one_line_exit_1(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text(modelfile.DEMO_MODEL_TOML.replace('rate = "100 Mbit/s"', 'rate = "100 Mb/s"'))
    code, out, err = run("solve", str(f))
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    line_no = modelfile.DEMO_MODEL_TOML.splitlines().index('rate = "100 Mbit/s"') + 1
    assert lines[0].startswith(f"qnmodel: error: {f}:{line_no}: station[2].rate:")
    assert "ambiguous" in lines[0]


def test_missing_file_exit_1():
    code, _, err = run("solve", "/nonexistent/model.toml")
    assert code == 1
    assert err.strip() == "qnmodel: error: /nonexistent/model.toml: no such model file"


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate"],
        ["solve"],
        ["solve", str(DEMO), "--format", "xml"],
        ["sweep", str(DEMO)],
        ["sweep", str(DEMO), "--vary", "novalues"],
        ["plot", str(DEMO), "--out", "x.gif"],
    ],
)
def test_usage_errors_exit_2(argv):
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("qnmodel: usage error:")


def test_debug_shows_traceback(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text("[model]\nN = 0\n[[station]]\nname='a'\ndemand='1 ms'\n")
    with pytest.raises(modelfile.ModelFileError, match=r"model\.N: must be an integer >= 1"):
        cli.main(["--debug", "solve", str(f)])


@pytest.mark.parametrize(
    "command", ["demo", "solve", "sweep", "plot", "report", "bench", "calibrate"]
)
def test_every_command_help_has_examples(command, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([command, "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "examples:" in text and f"qnmodel {command}" in text


# -- sweep, plot, report -----------------------------------------------------------------
def test_sweep_grid_matches_python_api():
    code, out, err = run(
        "sweep",
        str(DEMO),
        "-N",
        "20",
        "--vary",
        "network.rate=100 Mbit/s,1 Gbit/s",
        "--vary",
        "think_time=0 s,50 ms",
        "--format",
        "csv",
    )
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out), float_precision="round_trip")
    assert len(frame) == 2 * 2 * 20
    assert list(frame.columns) == [
        "network.rate",
        "think_time",
        "bottleneck",
        "n",
        "throughput",
        "response_time",
    ]
    sel = frame[(frame["network.rate"] == "1 Gbit/s") & (frame["think_time"] == "0 s")]
    stations = list(demo_network().stations)
    stations[2] = qn.Station("network", 65536 / 125e6)
    ref = qn.mva(qn.Network(tuple(stations), think_time=0.0), 20)
    np.testing.assert_array_equal(sel["throughput"].to_numpy(), ref.throughput)
    assert set(sel["bottleneck"]) == {"disk"}


OPEN_FILE = """
[model]
name = "open disks"
arrival_rate = "200 Hz"
[[station]]
name = "cpu"
service_time = "1 ms"
[[station]]
name = "disk"
service_time = "3 ms"
"""


@pytest.mark.parametrize("vary", ["disk.service_time=3 ms,2 ms", "arrival_rate=100 Hz,300 Hz"])
def test_sweep_of_an_open_model_file(tmp_path, vary):
    """An open model file sweeps (it ended in ``KeyError: "['n'] not in index"``; varying
    its arrival rate in 'cannot insert arrival_rate, already exists'): M/M/1 stations in
    series, R = sum S_k / (1 - lambda S_k)."""
    path = tmp_path / "open.toml"
    path.write_text(OPEN_FILE)
    code, out, err = run("sweep", str(path), "--vary", vary, "--format", "csv")
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    key = vary.split("=")[0]
    assert list(frame.columns) == ([key] if key != "arrival_rate" else []) + [
        "bottleneck", "arrival_rate", "throughput", "response_time"]  # fmt: skip
    assert len(frame) == 2 and set(frame["bottleneck"]) == {"disk"}
    S = {"disk.service_time=3 ms,2 ms": [(200, 3e-3), (200, 2e-3)],
         "arrival_rate=100 Hz,300 Hz": [(100, 3e-3), (300, 3e-3)]}[vary]  # fmt: skip
    for row, (lam, s_disk) in zip(frame.itertuples(), S, strict=True):
        r = 1e-3 / (1 - lam * 1e-3) + s_disk / (1 - lam * s_disk)
        assert row.arrival_rate == lam and row.throughput == pytest.approx(lam, rel=1e-12)
        assert row.response_time == pytest.approx(r, rel=1e-12)


def test_sweep_json_is_alone_on_stdout():
    code, out, err = run(
        "sweep", str(DEMO), "-N", "2", "--vary", "disk.visits=0.1,1", "--format", "json"
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "qnmodel.sweep"
    assert len(doc["results"]) == 4 and doc["vary"] == {"disk.visits": [0.1, 1]}


def test_plot_and_report(tmp_path):
    meas = tmp_path / "m.csv"
    ref = qn.mva(demo_network(), 40)
    pd.DataFrame(
        {
            "n": [1, 5, 10, 20, 40],
            "throughput": ref.throughput[[0, 4, 9, 19, 39]] * 0.97,
            "throughput_halfwidth": [1.0, 2, 3, 4, 5],
            "response_time_s": ref.response_time[[0, 4, 9, 19, 39]] * 1.05,
        }
    ).to_csv(meas, index=False)
    code, out, err = run(
        "plot",
        str(DEMO),
        "--measured",
        str(meas),
        "--utilization",
        "--out",
        str(tmp_path / "p.svg"),
    )
    assert code == 0, err
    svg = (tmp_path / "p.svg").read_text()
    assert "<svg" in svg and (tmp_path / "p_utilization.svg").exists()
    code, out, err = run("report", str(DEMO), "--measured", str(meas), "--out", str(tmp_path / "r"))
    assert code == 0, err
    md = (tmp_path / "r" / "demo-storage.md").read_text()
    assert "![plot](demo-storage_bounds.png)" in md
    assert (tmp_path / "r" / "demo-storage_bounds.png").stat().st_size > 20_000


def test_bad_measured_file_exit_1(tmp_path):
    meas = tmp_path / "m.csv"
    meas.write_text("clients,iops\n1,2\n")
    code, _, err = run("plot", str(DEMO), "--measured", str(meas), "--out", str(tmp_path / "p.png"))
    assert code == 1
    assert "needs columns n and a throughput (X, throughput) and/or a response time" in err
    code, _, err = run("plot", str(DEMO), "--measured", str(DEMO), "--out", str(tmp_path / "p.png"))
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"qnmodel: error: {DEMO}: not a CSV of measured points")


def test_console_script_entry_point_runs_as_module(tmp_path):
    """The real process: JSON alone on stdout, nothing on stderr, exit status 0."""
    proc = subprocess.run(
        [sys.executable, "-m", "qnmodel.cli", "solve", str(DEMO), "-N", "3", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},  # the installed package, as a user runs it
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert len(json.loads(proc.stdout)["results"]) == 3
    bad = subprocess.run(
        [sys.executable, "-m", "qnmodel.cli", "solve"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},  # the installed package, as a user runs it
        timeout=60,
    )
    assert bad.returncode == 2 and bad.stdout == ""


def test_multiclass_solve_and_plot_refusal(tmp_path):
    # examples/read_write_mix.toml with its link and CPU processor-shared (the classes'
    # service times differ there: under FCFS the exact solver refuses the model)
    text = (ROOT / "examples" / "read_write_mix.toml").read_text()
    text = text.replace('rate = "1 Gbit/s"\n', 'rate = "1 Gbit/s"\ndiscipline = "PS"\n', 1)
    text = text.replace("servers = 2\n", 'servers = 2\ndiscipline = "PS"\n', 1)
    mix = tmp_path / "read_write_mix.toml"
    mix.write_text(text)
    code, out, err = run("solve", str(mix), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["model"]["classes"] == ["read", "write"]
    sol = modelfile.load(mix).solve()
    assert [r["throughput"] for r in doc["results"]] == sol.result.throughput.tolist()
    assert doc["model"]["stations"][3]["demand"] == {"read": 0.0, "write": 0.006}
    code, out, _ = run("solve", str(mix))
    assert code == 0 and "bottleneck = disk" in out and out.splitlines()[-1].startswith("write")
    code, out, err = run("plot", str(mix), "--out", str(tmp_path / "p.png"))
    assert code == 1 and "draws single-class models" in err
    code, out, err = run("sweep", str(mix), "--vary", "class.write.N=0,10", "--format", "csv")
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert len(frame) == 4 and set(frame["class"]) == {"read", "write"}


# -- bench and calibrate: the real qnbench -------------------------------------------------
def _qnbench_or_skip():
    from qnmodel import bench
    from qnmodel.errors import BenchNotFoundError

    try:
        return bench.executable()
    except BenchNotFoundError as exc:
        if IN_CI:
            pytest.fail(f"qnbench must be built under CI: {exc}")
        pytest.skip(f"qnbench is not built here ({exc}); the bench/calibrate CLI is untested")


def test_bench_null_json_alone_on_stdout(tmp_path):
    _qnbench_or_skip()
    code, out, err = run(
        "-q",
        "bench",
        "null",
        "jobs=1,2",
        "runtime=0.1 s",
        "--format",
        "json",
        "--out",
        str(tmp_path / "t.json"),
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["engine"] == "null" and [r["jobs"] for r in doc["results"]] == [1, 2]
    saved = json.loads((tmp_path / "t.json").read_text())
    assert saved["results"] == doc["results"]


def test_bench_bad_unit_in_option_is_usage_error():
    _qnbench_or_skip()
    code, out, err = run("-q", "bench", "emu", "jobs=1", "dev_latency=5 mss")
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        "qnmodel: usage error: dev_latency: unknown unit 'mss' in '5 mss'; known units are "
        "times (s, ms, us, ns), sizes (B, kB, MB, KiB, MiB, bit, Mbit), rates (B/s, MB/s, "
        "MiB/s, Mbit/s, Gbps) and frequencies (Hz, kHz, IOPS, kIOPS, ops/s, req/s, /s)"
    ]


def test_bench_bad_option_is_usage_error():
    _qnbench_or_skip()
    code, out, err = run("-q", "bench", "null", "no_such_option=3")
    assert code == 2 and out == ""
    assert "qnbench rejected the options" in err and len(err.strip().splitlines()) == 1


@pytest.mark.alone  # measures this machine's timing: run after the parallel suite
def test_bench_and_calibrate_end_to_end(tmp_path):
    """Measure an emulated device (a = 4 ms, r = 80 MB/s), calibrate from the CLI, compare."""
    from qnmodel.calibration import calibrate_and_compare

    _qnbench_or_skip()
    dev, closed = tmp_path / "dev.json", tmp_path / "closed.json"
    common = ["dev_latency=4 ms", "dev_rate=80 MB/s", "warmup=0.05 s"]
    code, _, err = run(
        "-q",
        "bench",
        "emu",
        "jobs=1",
        "bs=4KiB,64KiB,1MiB",
        "dev_dist=const",
        "devices=1",
        "runtime=0.2 s",
        *common,
        "--out",
        str(dev),
        "--format",
        "csv",
    )
    assert code == 0, err
    code, _, err = run(
        "-q",
        "bench",
        "emu",
        "jobs=1,2,4",
        "bs=64 KiB",
        "devices=2",
        "dev_select=random",
        "dev_dist=exp",
        "think=10 ms",
        "runtime=0.3 s",
        *common,
        "--out",
        str(closed),
    )
    assert code == 0, err
    code, out, err = run(
        "-q", "calibrate", str(dev), str(closed), "--format", "json", "--out", str(tmp_path / "rep")
    )
    assert code == 0, err
    doc = json.loads(out)
    # The fitted positioning time and rate recover the emulated device within a few percent.
    assert doc["parameters"]["a"]["value"] == pytest.approx(4e-3, rel=0.05)
    assert doc["parameters"]["r"]["value"] == pytest.approx(80e6, rel=0.05)
    # Identical numbers to the Python API on the same traces.
    cmp = calibrate_and_compare(dev, closed)
    assert doc["mape_throughput"] == cmp.mape_throughput
    assert [s["demand"] for s in doc["network"]["stations"]] == cmp.network.demands.tolist()
    assert (tmp_path / "rep" / "report.md").exists() and (tmp_path / "rep" / "report.png").exists()


def test_calibrate_usage_errors(tmp_path):
    code, _, err = run("calibrate")
    assert code == 2 and "DEVICE_TRACE and CLOSED_TRACE" in err
    code, _, err = run("calibrate", "a.json", "b.json", "--demo", "--out", str(tmp_path))
    assert code == 2 and "--demo measures by itself" in err
    code, _, err = run("calibrate", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert code == 1 and "no such trace file" in err


def test_sweep_over_system_parameters_quiet_after_command():
    code, out, err = run(
        "sweep",
        str(ROOT / "examples" / "networked_raid.toml"),
        "-N",
        "3",
        "--vary",
        "system.link_rate=100 Mbit/s,10 Gbit/s",
        "--vary",
        "system.master_cache_hit=0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9",
        "--format",
        "csv",
        "-q",
    )
    assert code == 0 and err == ""  # 20 points would show progress without -q
    frame = pd.read_csv(io.StringIO(out), float_precision="round_trip")
    assert len(frame) == 2 * 10 * 3
    from qnmodel.models.storage import NetworkedRAID

    ref = NetworkedRAID.cui2006(op="write", link_rate="10 Gbit/s", master_cache_hit=0.5).mva(3)
    sel = frame[
        (frame["system.link_rate"] == "10 Gbit/s") & (frame["system.master_cache_hit"] == 0.5)
    ]
    np.testing.assert_allclose(sel["throughput"], ref.throughput, rtol=1e-15)
    code, out, err = run(
        "sweep",
        str(ROOT / "examples" / "networked_raid.toml"),
        "-N",
        "2",
        "--vary",
        "system.master_cache_hit=0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9",
        "--vary",
        "system.link_rate=100 Mbit/s,10 Gbit/s",
        "--format",
        "csv",
    )
    assert code == 0 and "sweep: 20/20 (100%)" in err  # progress on stderr, data on stdout
    assert "sweep:" not in out


def test_set_values_are_read_as_toml():
    code, out, err = run(
        "solve",
        str(DEMO),
        "--set",
        "populations=[1, 10, 100]",
        "--set",
        "disk.visits=0.25",
        "--format",
        "json",
    )
    assert code == 0, err
    rows = json.loads(out)["results"]
    assert [r["n"] for r in rows] == [1, 10, 100]
    stations = list(demo_network().stations)
    stations[4] = qn.Station("disk", 0.25 * 9.763e-3)
    ref = qn.mva(qn.Network(tuple(stations), think_time=0.05), 100)
    assert [r["throughput"] for r in rows] == ref.throughput[[0, 9, 99]].tolist()
    code, _, err = run("solve", str(DEMO), "--set", "populations=[0, 10]")
    assert code == 2 and "model.populations: must be an integer >= 1, got 0" in err


def test_paper_model_text_is_the_shipped_example():
    shipped = Path(__file__).resolve().parents[1] / "examples" / "networked_raid.toml"
    assert shipped.read_text() == modelfile.PAPER_MODEL_TOML
    spec = modelfile.loads(modelfile.PAPER_MODEL_TOML)
    ref = qn.NetworkedRAID.cui2006(op="write")
    # the same eqs. (2)-(10) of [Cui06] (~16 operations a demand), parameters read from TOML
    demands = list(ref.demands().values())
    assert spec.network.demands == pytest.approx(demands, rel=closed_form(16))


def test_networked_raid_form_on_the_command_line():
    """The shipped model names form = "corrected" (the default); --set switches to the paper's."""
    model = str(ROOT / "examples" / "networked_raid.toml")
    code, out, err = run("solve", model, "-N", "2", "--format", "json")
    assert code == 0, err
    corrected = qn.NetworkedRAID.cui2006(op="write")
    rows = json.loads(out)["results"]
    assert rows[-1]["throughput"] == pytest.approx(corrected.mva(2).throughput[-1], rel=1e-12)
    code, out, err = run("solve", model, "-N", "2", "--set", "system.form=paper")
    assert code == 0, err
    assert "network  queue        1      24 s" in out  # eq. (9): 300e6 B / 12.5e6 B/s
    code, _, err = run("solve", model, "--set", "system.form=pape")
    assert code == 2
    assert "system.form: form must be one of 'paper', 'corrected'; got 'pape'" in err


@pytest.mark.parametrize(
    "argv, line",
    [
        (
            ["solve", str(DEMO), "--set", "disk.visits=abc"],
            "--set disk.visits=abc: station[4].visits: must be a number >= 0, got 'abc'",
        ),
        (["solve", str(DEMO), "-N", "0"], "-N 0: model.N: must be an integer >= 1, got 0"),
        (
            ["sweep", str(DEMO), "--vary", "think_time=1 s,5 parsecs"],
            "--vary think_time=5 parsecs: model.think_time: unknown unit 'parsecs' in '5 parsecs'",
        ),
        (["plot", str(DEMO), "--set", "nosuch=3", "--out", "x.png"], "--set nosuch=3: cannot set"),
        (
            ["solve", str(ROOT / "examples" / "read_write_mix.toml"), "-N", "5"],
            "-N sets the population of a single-class model; this one has classes "
            "['read', 'write']: use --set class.read.N=...",
        ),
    ],
)
def test_bad_value_on_the_command_line_is_a_usage_error(argv, line):
    # The file is fine; the value typed on the command line is not: exit 2, and the
    # message quotes the option as typed instead of pointing at a line of the file.
    code, out, err = run(*argv)
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"qnmodel: usage error: {line}")


def test_demo_help_describes_the_main_job():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["demo"]
    text = sub.format_help()
    for fragment in ("qnbench", "calibrate", "Cui et al. (2006)", "demo storage model"):
        assert fragment in text


def test_plot_and_report_take_a_qnbench_trace_as_measured(tmp_path):
    # The user's path: `qnmodel bench emu ... --out cl.json`, then plot the model against it.
    # The stored trace is such a run: one exponential queue of mean 6.31 ms, Z = 20 ms.
    trace = ROOT / "data" / "traces" / "emu-closed-loop.json"
    model = tmp_path / "emu.toml"
    model.write_text(
        '[model]\nname = "emu"\nthink_time = "20 ms"\nN = 16\n'
        '[[station]]\nname = "device"\nservice_time = "6.31072 ms"\n'
    )
    out = tmp_path / "vs.png"
    code, _, err = run("plot", str(model), "--measured", str(trace), "--out", str(out))
    assert code == 0, err
    assert out.stat().st_size > 20_000
    from qnmodel.calibration.pipeline import measured_curve

    measured = measured_curve(trace)
    assert measured["n"].tolist() == [1, 2, 3, 4, 6, 8, 12, 16]
    # Every measured point within 5 % of exact MVA (the trace's documented known answer).
    exact = qn.mva(modelfile.load(model).network, 16).throughput[measured["n"] - 1]
    assert np.max(np.abs(measured["throughput"] / exact - 1)) < 0.05
    code, _, err = run("report", str(model), "--measured", str(trace), "--out", str(tmp_path / "r"))
    assert code == 0, err
    assert (tmp_path / "r" / "emu_bounds.png").stat().st_size > 20_000
    # The report compares point by point: measured X, its error bar, exact MVA, the BJB band.
    md = (tmp_path / "r" / "emu.md").read_text()
    section = md.split("## Measured against the model")[1].split("## Plots")[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("|")][2:]
    assert [int(r.split("|")[1]) for r in rows] == measured["n"].tolist()
    b = qn.bounds(modelfile.load(model).network, 16, method="bjb")
    i = measured["n"].to_numpy() - 1
    x, e = measured["throughput"].to_numpy(), measured["throughput_halfwidth"].to_numpy()
    ok = (b.throughput_lower[i] <= x + e) & (x - e <= b.throughput_upper[i])
    inside = (b.throughput_lower[i] <= x) & (x <= b.throughput_upper[i])
    assert [r.split("|")[8].strip() for r in rows] == ["yes" if v else "no" for v in inside]
    assert [r.split("|")[9].strip() for r in rows] == ["yes" if v else "no" for v in ok]
    assert [float(r.split("|")[4]) for r in rows] == pytest.approx(exact, rel=1e-4)
    mean_err = np.mean(np.abs((exact - x) / x)) * 100  # errors are (model - measured)/measured
    assert f"mean absolute error of X: {mean_err:.1f}%" in section
    assert f"{int(inside.sum())} of 8 measured throughputs inside the BJB band" in section
    assert f"{int(ok.sum())} of 8 with their error bar overlapping it" in section


def test_sweep_and_calibrate_tables_carry_units():
    code, out, err = run(
        "sweep", str(DEMO), "--set", "populations=[1, 40]", "--vary", "disk.visits=0.2,1"
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == [
        "disk.visits", "bottleneck", "n", "throughput", "[jobs/s]", "response_time", "[ms]",
    ]  # fmt: skip
    # n = 40 at visits = 1: R in ms, as exact MVA gives it in seconds.
    stations = list(demo_network().stations)
    stations[4] = qn.Station("disk", 9.763e-3)
    ref = qn.mva(qn.Network(tuple(stations), think_time=0.05), 40)
    last = lines[-1].split()
    assert float(last[-1]) == pytest.approx(ref.response_time[-1] * 1e3, rel=1e-4)
    assert float(last[-2]) == pytest.approx(ref.throughput[-1], rel=1e-4)
    traces = ROOT / "data" / "traces"
    code, out, err = run(
        "-q", "calibrate", str(traces / "emu-size-sweep.json"), str(traces / "emu-closed-loop.json")
    )
    assert code == 0, err
    headers = [line for line in out.splitlines() if line.lstrip().startswith("n  ")]
    assert len(headers) == 2  # throughput table, response-time table
    for col in ("X meas [jobs/s]", "X err %"):
        assert col in headers[0]
    for col in ("R meas [ms]", "R MVA [ms]", "R err %"):
        assert col in headers[1]


def test_report_and_calibrate_use_one_sign_convention(tmp_path):
    # `qnmodel report --measured` computed X err as measured/model - 1, `qnmodel calibrate`
    # as (model - measured)/measured; both now print (model - measured)/measured.
    traces = ROOT / "data" / "traces"
    sweep, closed = str(traces / "emu-size-sweep.json"), str(traces / "emu-closed-loop.json")
    code, out, err = run("-q", "calibrate", sweep, closed, "--format", "csv")
    assert code == 0, err
    cal = pd.read_csv(io.StringIO(out))
    net = qn.Network.from_demands([5e-3 + 65536 / 50e6], think_time="20 ms")
    model = tmp_path / "emu.toml"
    model.write_text(
        '[model]\nname = "emu"\nthink_time = "20 ms"\nN = 16\n'
        f'[[station]]\nname = "device"\ndemand = "{float(net.demands[0])!r} s"\n'
    )
    code, _, err = run("report", str(model), "--measured", closed, "--out", str(tmp_path / "r"))
    assert code == 0, err
    section = (tmp_path / "r" / "emu.md").read_text().split("## Measured against the model")[1]
    rows = [ln for ln in section.split("## Plots")[0].splitlines() if ln.startswith("|")][2:]
    x_meas = np.array([float(r.split("|")[2]) for r in rows])
    x_mva = np.array([float(r.split("|")[4]) for r in rows])
    x_err = np.array([float(r.split("|")[7]) for r in rows])
    assert x_err == pytest.approx(100 * (x_mva - x_meas) / x_meas, abs=0.06)
    # calibrate prints the same convention
    mva, meas = cal["throughput_mva"], cal["throughput_measured"]
    # 100 (m - x) / x: the same 3 operations each side
    assert cal["throughput_error_pct"].tolist() == pytest.approx(
        100 * (mva - meas) / meas, rel=closed_form(3)
    )


def test_calibrate_names_the_rate_curve_fitter_for_a_parallel_device():
    """A device serving 4 requests at once (a measured trace, data/traces/README.md) fitted as
    one queue: MAPE of X 59.6 %, and the command names qnmodel.fit_rate_multipliers."""
    traces = ROOT / "data" / "traces"
    sweep, qd = str(traces / "emu-size-sweep.json"), str(traces / "emu-queue-depth-4servers.json")
    code, out, err = run("-q", "calibrate", sweep, qd)
    assert code == 0, err
    hint = out.split("\nhint: ", 1)[1]
    assert hint.startswith("the single-queue model misses X by MAPE 59.6 % (> 10 %)")
    assert "qnmodel.fit_rate_multipliers" in hint and "the trace says 4 servers" in hint
    code, out, err = run("-q", "calibrate", sweep, qd, "--format", "json")
    assert code == 0, err
    (hint_json,) = json.loads(out)["hints"]
    assert "qnmodel.fit_rate_multipliers" in hint_json
    # the one-queue device of the same size sweep fits (MAPE within 5 %): no hint
    code, out, err = run("-q", "calibrate", sweep, str(traces / "emu-closed-loop.json"))
    assert code == 0, err
    assert "hint:" not in out
    code, out, err = run(
        "-q", "calibrate", sweep, str(traces / "emu-closed-loop.json"), "--format", "json"
    )
    assert json.loads(out)["hints"] == []
