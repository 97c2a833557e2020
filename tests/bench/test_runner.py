"""The Python runner: command building with units, running, validation, frames, errors."""

from __future__ import annotations

import json
import os
import stat

import pandas as pd
import pytest

from qnmodel import bench
from qnmodel.errors import (
    BenchError,
    BenchNotFoundError,
    InvalidModelError,
    InvalidTypeError,
    TraceError,
    UnitError,
)


def test_build_command_converts_units_to_si_and_joins_sweeps():
    argv = bench.build_command(
        "emu",
        {
            "jobs": [1, 2, 4],
            "bs": ["4 KiB", 65536, "1 MiB"],
            "dev_latency": "5 ms",
            "dev_rate": "50 MB/s",
            "runtime": 2,
            "end_fsync": False,
            "think": None,
        },
        "/x/qnbench",
    )
    assert argv == [
        "/x/qnbench", "--engine", "emu",
        "--jobs", "1,2,4",
        "--bs", "4096,65536,1048576",
        "--dev-latency", "0.005",
        "--dev-rate", "50000000.0",
        "--runtime", "2.0",
        "--end-fsync", "0",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "options, exc, message",
    [
        ({"bs": "4 KB"}, UnitError, "bs"),
        ({"runtime": "4 KiB"}, UnitError, "runtime"),
        ({"bs": 4096.5}, InvalidModelError, "whole number"),
        ({"dev_latency": -1.0}, InvalidModelError, "dev_latency"),
        ({"rw": ["read", "write"]}, InvalidTypeError, "takes one value"),
        ({"jobs": []}, InvalidModelError, "empty"),
        ({"seed": object()}, InvalidTypeError, "seed"),
    ],
)
def test_build_command_rejects_bad_options_naming_them(options, exc, message):
    with pytest.raises(exc, match=message):
        bench.build_command("emu", options, "qnbench")


def test_executable_env_override_must_be_executable(monkeypatch, tmp_path):
    monkeypatch.setenv(bench.ENV_VAR, str(tmp_path / "missing"))
    with pytest.raises(BenchNotFoundError, match="QNMODEL_QNBENCH"):
        bench.executable()
    exe = tmp_path / "qnbench"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(bench.ENV_VAR, str(exe))
    assert bench.executable() == exe


def test_executable_not_found_says_how_to_build(monkeypatch, tmp_path):
    monkeypatch.delenv(bench.ENV_VAR, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    # Hide the bundled binary (an installed package has one) from the lookup, not skip: the
    # message must be tested wherever the suite runs.
    real_access = os.access

    def access(path, mode, *a, **k):
        if os.path.basename(str(path)) == "qnbench" and "_bin" in str(path):
            return False
        return real_access(path, mode, *a, **k)

    monkeypatch.setattr(os, "access", access)
    with pytest.raises(BenchNotFoundError, match="cmake"):
        bench.executable()


def test_run_returns_trace_with_frames_and_saves(qnbench_exe, tmp_path):
    trace = bench.run(
        "emu",
        jobs=[1, 2],
        bs=["4 KiB", "64 KiB"],
        dev_latency="1 ms",
        dev_rate="100 MB/s",
        runtime="100 ms",
        warmup=0.02,
        executable_path=qnbench_exe,
        progress=False,
    )
    assert trace.complete and trace.engine == "emu" and trace.errors == []
    assert trace.command[0] == str(qnbench_exe)
    df = trace.to_frame()
    assert list(df["jobs"]) == [1, 1, 2, 2]
    assert list(df["bs_bytes"]) == [4096, 65536, 4096, 65536]
    for col in ("throughput_ops_s", "latency_p50_s", "latency_mean_s", "cpu_user_s", "service_s"):
        assert df[col].dtype == "float64", col
    assert (df["latency_min_s"] >= df["service_s"] * (1 - 1e-6)).all()
    samples = trace.samples_frame()
    assert samples.groupby("point")["ops"].sum().tolist() == df["ops"].tolist()
    path = trace.save(tmp_path / "trace.json")
    again = bench.load(path)
    assert again.document == trace.document
    assert again.host["cpus"] >= 1
    pd.testing.assert_frame_equal(again.to_frame(), df)


def test_paths_are_accepted_for_dir(qnbench_exe, tmp_path):
    argv = bench.build_command("file", {"dir": tmp_path}, qnbench_exe)
    assert argv[-2:] == ["--dir", str(tmp_path)]


def test_usage_error_raises_bench_error_with_stderr(qnbench_exe):
    with pytest.raises(BenchError, match="exit status 2.*not one of"):
        bench.run("emu", rw="sideways", executable_path=qnbench_exe)


def test_runtime_error_attaches_partial_trace_or_returns_it(qnbench_exe, tmp_path):
    with pytest.raises(BenchError, match="not an existing directory") as info:
        bench.run("file", dir=str(tmp_path / "nope"), runtime=0.01, executable_path=qnbench_exe)
    assert info.value.trace is not None and info.value.trace.complete is False
    trace = bench.run(
        "file", dir=str(tmp_path / "nope"), runtime=0.01, executable_path=qnbench_exe, check=False
    )
    assert trace.complete is False and trace.to_frame().empty


def test_timeout_interrupts_and_keeps_partial_results(qnbench_exe):
    with pytest.raises(BenchError, match="timed out") as info:
        bench.run("null", runtime=30, interval=0.05, timeout=0.5, executable_path=qnbench_exe)
    trace = info.value.trace
    assert trace is not None and not trace.complete
    assert trace.results[0]["ops"] > 0


def _doc(**changes):
    doc = {
        "schema": "qnbench", "schema_version": 1, "tool_version": "0.1.0",
        "timestamp": "2026-01-01T00:00:00Z", "complete": True,
        "host": {"hostname": "h", "sysname": "Linux", "release": "6", "machine": "x86_64",
                 "cpu_model": "", "cpus": 2, "mem_total_bytes": 1},
        "engine": "null", "options": {}, "results": [], "errors": [],
    }  # fmt: skip
    doc.update(changes)
    return doc


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"schema": "fio"}, "not a qnbench document"),
        ({"schema_version": 2}, "schema_version 2 is not supported"),
        ({"host": {"hostname": "h"}}, "host lacks the required key 'sysname'"),
        ({"results": [{"point": 0}]}, r"results\[0\] lacks"),
        ({"complete": "yes"}, "complete must be of type bool"),
    ],
)
def test_schema_refuses_foreign_or_broken_documents(changes, message):
    with pytest.raises(TraceError, match=message):
        bench.validate(_doc(**changes))
    assert bench.validate(_doc()) is not None


def test_load_reports_truncated_file(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_doc())[:-5])
    with pytest.raises(TraceError, match="not valid JSON"):
        bench.load(path)


def test_selftest_passes(qnbench_exe):
    trace = bench.selftest(qnbench_exe)
    assert trace.engine == "emu" and trace.results[0]["latency_s"]["p50"] >= 2e-3


def test_progress_lines_are_relayed_to_stderr(qnbench_exe, capsys):
    bench.run("null", jobs=[1, 2], runtime=0.01, warmup=0, progress=True,
              executable_path=qnbench_exe)  # fmt: skip
    err = capsys.readouterr().err
    assert "point 1/2" in err and "point 2/2" in err


def test_repeat_and_io_size(qnbench_exe):
    trace = bench.run("emu", bs="64 KiB", io_size="1 MiB", runtime=10, warmup=0, repeat=3,
                      dev_latency="1 ms", executable_path=qnbench_exe)  # fmt: skip
    df = trace.to_frame()
    assert list(df["repeat"]) == [0, 1, 2]
    assert (df["bytes"] >= 1 << 20).all() and (df["bytes"] < (1 << 20) + 65536 * 2).all()
    assert df["complete"].all()


def test_runner_knows_the_dimension_of_every_dimensioned_option(qnb):
    # the option echo carries a unit suffix for each dimensioned option of qnbench's table
    from qnmodel.bench._runner import _DIMENSIONS

    rc, doc, _, err = qnb("--engine", "null", "--runtime", "1ms", "--warmup", "0")
    assert rc == 0, err
    suffixes = {"_bytes": "size", "_B_s": "rate", "_per_s": "frequency", "_s": "time"}
    for key in doc["options"]:
        for suffix, dim in suffixes.items():
            if key.endswith(suffix):
                name = key[: -len(suffix)]
                assert _DIMENSIONS.get(name) == dim, (key, name)
                break


def test_engines_come_from_qnbench_and_a_foreign_binary_is_refused(qnbench_exe, tmp_path):
    from qnmodel.bench._runner import engines

    listed = engines(qnbench_exe)
    assert listed[0]["name"] == "null" and all(isinstance(e["help"], str) for e in listed)
    # every listed engine is accepted by the runner's command line and by qnbench
    for e in listed:
        assert bench.build_command(e["name"], {}, qnbench_exe)[1:3] == ["--engine", e["name"]]
    fake = tmp_path / "qnbench"
    fake.write_text('#!/bin/sh\necho \'{"schema": "other"}\'\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(BenchError, match="did not print the engine list"):
        engines(fake)
