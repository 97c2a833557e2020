"""The command's manners: --version without the numerical stack, -q and stderr for messages,
output directories created one level at most and never written through a link, clear
messages for a key that cannot be set, and a calibration that shows its parameters and
refuses traces that do not fit it."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from qnmodel.calibration import calibrate_and_compare
from qnmodel.calibration.pipeline import check_traces_fit
from qnmodel.errors import TraceError, TraceMismatchWarning

from ._cli import run
from ._user_env import user_env

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo_storage.toml"
RAID = ROOT / "examples" / "networked_raid.toml"
TRACES = ROOT / "data" / "traces"
SWEEP, LOOP = TRACES / "emu-size-sweep.json", TRACES / "emu-closed-loop.json"


# -- --version ---------------------------------------------------------------------------------
def test_version_loads_no_numerical_stack():
    # what the console script does (`qnmodel = "qnmodel.cli:main"`), in a fresh interpreter
    code = (
        "import sys\n"
        "from qnmodel.cli import main\n"
        "status = main(['--version'])\n"
        "heavy = [m for m in ('numpy', 'pandas', 'matplotlib', 'scipy') if m in sys.modules]\n"
        "print(status, ','.join(heavy) or '-')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=user_env(),
        cwd=ROOT.parent, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    import qnmodel

    assert proc.stdout.splitlines() == [f"qnmodel {qnmodel.__version__}", "0 -"]
    # and `import qnmodel` alone: every public name is loaded on first use
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, qnmodel; print('numpy' in sys.modules)"],
        capture_output=True, text=True, env=user_env(), cwd=ROOT.parent, timeout=120,
    )  # fmt: skip
    assert proc.stdout.strip() == "False", proc.stderr


def test_version_only_where_the_parser_takes_it():
    assert run("--version")[:2] == (0, f"qnmodel {__import__('qnmodel').__version__}\n")
    assert run("-q", "--version")[0] == 0
    code, out, err = run("solve", str(DEMO), "--version")  # an option of the command: refused
    assert code == 2 and out == "" and "unrecognized arguments: --version" in err


# -- -q and stderr -----------------------------------------------------------------------------
def test_wrote_lines_go_to_stderr_and_q_silences_them(tmp_path):
    code, out, err = run("plot", str(DEMO), "-N", "5", "--out", str(tmp_path / "p.png"))
    assert code == 0 and out == ""  # stdout holds data only
    assert f"wrote {tmp_path / 'p.png'}" in err
    code, out, err = run("-q", "report", str(DEMO), "-N", "5", "--out", str(tmp_path / "r"))
    assert (code, out, err) == (0, "", "")
    assert (tmp_path / "r" / "demo-storage.md").is_file()
    code, out, err = run("report", str(DEMO), "-N", "5", "--out", str(tmp_path / "r"), "-q")
    assert (code, out, err) == (0, "", "")


# -- --out -------------------------------------------------------------------------------------
def test_out_creates_the_last_level_only(tmp_path):
    code, out, err = run("plot", str(DEMO), "-N", "5", "--out", str(tmp_path / "a" / "b" / "p.png"))
    assert code == 1 and out == ""
    assert f"the directory '{tmp_path / 'a'}' does not exist; create it first" in err
    assert not (tmp_path / "a").exists()  # nothing created on the way
    code, _, err = run("-q", "plot", str(DEMO), "-N", "5", "--out", str(tmp_path / "a" / "p.png"))
    assert code == 0, err
    assert (tmp_path / "a" / "p.png").read_bytes()[:4] == b"\x89PNG"
    code, _, err = run("-q", "report", str(DEMO), "-N", "5", "--out", str(tmp_path / "x" / "y"))
    assert code == 1 and f"the directory '{tmp_path / 'x'}' does not exist" in err
    (tmp_path / "file").write_text("")
    code, _, err = run("-q", "report", str(DEMO), "-N", "5", "--out", str(tmp_path / "file"))
    assert code == 1 and "exists and is not a directory" in err


def test_plot_never_writes_through_a_symbolic_link(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "p.png").symlink_to(victim)
    code, out, err = run("-q", "plot", str(DEMO), "-N", "5", "--out", str(tmp_path / "p.png"))
    assert code == 1 and out == ""
    assert "is a symbolic link" in err and "refusing to write through it" in err
    assert victim.read_text() == "keep me"


def test_a_link_planted_after_the_check_is_replaced_never_written_through(tmp_path, monkeypatch):
    from qnmodel import _files

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    target = tmp_path / "p.png"
    target.symlink_to(victim)
    monkeypatch.setattr(_files, "check_output", lambda path: Path(path))  # the race: check passed
    with _files.open_output(target, "wb") as fh:
        fh.write(b"new")
    assert victim.read_text() == "keep me"
    assert not target.is_symlink() and target.read_bytes() == b"new"


# -- --set -------------------------------------------------------------------------------------
def test_set_model_key_with_its_table_prefix_names_the_key():
    code, out, err = run("solve", str(DEMO), "--set", "model.arrival_rate=100/s")
    assert code == 2 and out == ""
    assert (
        "cannot set 'model.arrival_rate': a [model] key is set by its name alone: "
        "use 'arrival_rate'" in err
    )


def test_set_unknown_key_lists_what_this_model_can_set():
    code, _, err = run("solve", str(RAID), "--set", "foo=1")
    assert code == 2
    assert "among []" not in err  # a [system] model has no station tables to list
    assert "a [model] key (name, description, think_time, N, populations" in err
    assert "'system.<parameter>' (a key of its [system] table, 'networked_raid')" in err
    assert "station" not in err
    code, _, err = run("solve", str(DEMO), "--set", "tape.demand=1 ms")
    assert "'<station>.<key>' with a station among ['client_cpu', 'client_nic'" in err
    assert "system.<parameter>" not in err  # no [system] table in this model


# -- calibrate ---------------------------------------------------------------------------------
def test_calibrate_prints_the_parameters_with_errors_within_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run("calibrate", str(SWEEP), str(LOOP))
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= 80
    fit = calibrate_and_compare(SWEEP, LOOP).calibration["device"]
    lines = [line.strip() for line in out.splitlines()]
    for name in ("a", "r"):
        (line,) = [ln for ln in lines if ln.startswith(f"{name} = ")]
        assert line.startswith(f"{fit.parameter_lines()[('a', 'r').index(name)]}")
        assert " +/- " in line and "[" in line  # standard error and interval
    assert "fitted: value +/- standard error [95% interval]" in out
    assert "bar meets BJB" in out and "every column: --format csv or json" in out
    monkeypatch.setenv("COLUMNS", "200")  # room for the band's bounds too
    code, out, _ = run("calibrate", str(SWEEP), str(LOOP))
    assert "X BJB lower" in out and max(len(line) for line in out.splitlines()) <= 200


@pytest.mark.parametrize(
    ("device", "closed", "message"),
    [
        ("mem-stream.json", "emu-closed-loop.json",
         "mem-stream.json: a qnbench `mem` trace measures memory bandwidth, not a device; "
         "DEVICE_TRACE (the request-size sweep) must be a run of a device engine"),
        ("emu-size-sweep.json", "tcp-loopback-closed-loop.json",
         "tcp-loopback-closed-loop.json: a qnbench `tcp` trace measures a network link"),
        ("file-direct-randread-sizes.json", "emu-closed-loop.json",
         "emu-closed-loop.json: a qnbench `emu` closed loop does not check a device calibrated "
         "from"),
        ("emu-closed-loop.json", "emu-size-sweep.json",
         "emu-closed-loop.json: DEVICE_TRACE must sweep request sizes at one client"),
        ("emu-size-sweep.json", "emu-single-device.json",
         "emu-single-device.json: CLOSED_TRACE must be a closed loop at one request size"),
    ],
)  # fmt: skip
def test_calibrate_refuses_traces_that_do_not_fit(device, closed, message):
    code, out, err = run("calibrate", str(TRACES / device), str(TRACES / closed))
    assert code == 1 and out == ""
    assert message in err
    with pytest.raises(TraceError):
        check_traces_fit(TRACES / device, TRACES / closed)


def test_calibrate_warns_when_the_traces_measured_different_devices():
    other = TRACES / "emu-single-device.json"  # a = 2 ms, r = 100 MB/s: not the loop's device
    code, out, err = run("calibrate", str(other), str(LOOP))
    assert code == 0 and out
    assert "qnmodel: warning: " in err
    assert "measured different devices (dev_latency_s 0.002 against 0.005" in err
    with pytest.warns(TraceMismatchWarning, match="reads against writes|dev_rate_B_s"):
        check_traces_fit(other, LOOP)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_traces_fit(SWEEP, LOOP)  # one device: no warning (constant vs exp service is fine)
