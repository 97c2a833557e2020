"""Loading traces: qnbench JSON, CSV and fio JSON; clear errors on bad files."""

import json
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qnmodel import bench
from qnmodel.calibration.traces import POINT_COLUMNS, load_trace, trace_from_document
from qnmodel.errors import TraceError

from .conftest import make_document

DOC = make_document(
    [
        {"jobs": 1, "bs_bytes": 4096, "latency": 0.002, "samples": [400, 480, 500, 495, 505]},
        {"jobs": 2, "bs_bytes": 4096, "latency": 0.004},
    ]
)


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_qnbench_document_becomes_tidy_frames(tmp_path):
    t = load_trace(_write(tmp_path, "t.json", json.dumps(DOC)))
    assert t.format == "qnbench" and t.schema_version == 1 and t.engine == "emu"
    pts = t.to_frame()
    assert list(pts.columns[: len(POINT_COLUMNS)]) == list(POINT_COLUMNS)
    assert pts["jobs"].tolist() == [1, 2]
    assert pts["latency_mean_s"].tolist() == [0.002, 0.004]
    assert pts["service_s"].tolist() == [0.002, 0.004]
    s = t.to_frame("samples")
    assert len(s) == 10 and set(s["point"]) == {0, 1}
    st = t.steady()
    assert st.loc[0, "steady"] and st.loc[0, "start_index"] == 1 and st.loc[0, "value"] == 500
    assert trace_from_document(DOC).points.equals(t.points)


def test_truncated_file_is_named_and_called_truncated(tmp_path):
    text = json.dumps(DOC)
    p = _write(tmp_path, "cut.json", text[: len(text) // 2])
    with pytest.raises(TraceError, match=r"cut\.json: truncated"):
        load_trace(p)


def test_corrupt_foreign_and_future_files(tmp_path):
    text = json.dumps(DOC).replace('"ops":', '"ops"::', 1)
    with pytest.raises(TraceError, match=r"bad\.json: not valid JSON: .* line 1, column"):
        load_trace(_write(tmp_path, "bad.json", text))
    with pytest.raises(TraceError, match=r"other\.json: not a qnbench trace .*keys are: a, b"):
        load_trace(_write(tmp_path, "other.json", '{"a": 1, "b": 2}'))
    doc = dict(DOC, schema_version=2)
    with pytest.raises(TraceError, match="schema_version 2 is not supported"):
        load_trace(_write(tmp_path, "v2.json", json.dumps(doc)))
    doc = dict(DOC, schema="fio-ish")
    with pytest.raises(TraceError, match="foreign schema 'fio-ish'"):
        load_trace(_write(tmp_path, "s.json", json.dumps(doc)))
    doc = json.loads(json.dumps(DOC))
    del doc["results"][1]["latency_s"]
    with pytest.raises(TraceError, match=r"results\[1\] lacks the required key 'latency_s'"):
        load_trace(doc)
    doc = json.loads(json.dumps(DOC))
    doc["results"][0]["throughput_ops_s"] = "fast"
    with pytest.raises(TraceError, match=r"results\[0\]\.throughput_ops_s must be a number"):
        load_trace(doc)
    with pytest.raises(TraceError, match="missing.json: no such trace file"):
        load_trace(tmp_path / "missing.json")
    with pytest.raises(TraceError, match="empty"):
        load_trace(_write(tmp_path, "e.json", "  \n"))
    with pytest.raises(TraceError, match="JSON list"):
        load_trace(_write(tmp_path, "l.json", "[1, 2]"))


def test_csv_form(tmp_path):
    text = (
        "# engine: fio\n# tool: hand\n"
        "jobs,bs_bytes,throughput_ops_s,latency_mean_s\n"
        "1,65536,200.5,0.005\n2,65536,390,0.0051\n"
    )
    t = load_trace(_write(tmp_path, "m.csv", text))
    assert t.format == "csv" and t.engine == "fio"
    assert t.points["throughput_ops_s"].tolist() == [200.5, 390.0]
    assert t.points["point"].tolist() == [0, 1]
    with pytest.raises(TraceError, match="none of the measured columns"):
        load_trace(_write(tmp_path, "n.csv", "jobs,bs_bytes\n1,2\n"))
    with pytest.raises(TraceError, match=r"line 3, column 'latency_mean_s': '5 ms'"):
        load_trace(_write(tmp_path, "u.csv", "jobs,latency_mean_s\n1,0.005\n2,5 ms\n"))
    with pytest.raises(TraceError, match="line 3 has 1 fields"):
        load_trace(_write(tmp_path, "c.csv", "jobs,latency_mean_s\n1,0.005\n2\n"))


@pytest.mark.peer
def test_fio_json_from_a_real_fio_run(tmp_path):
    fio = shutil.which("fio")
    if fio is None:
        pytest.skip("fio is not installed")
    out = subprocess.run(
        [
            fio,
            "--name=cal",
            f"--filename={tmp_path / 'f'}",
            "--size=2M",
            "--bs=4k",
            "--rw=randread",
            "--numjobs=1",
            "--iodepth=1",
            "--output-format=json",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    p = _write(tmp_path, "fio.json", out)
    t = load_trace(p)
    assert t.format == "fio" and t.engine == "fio"
    row = t.points.iloc[0]
    assert row["jobs"] == 1 and row["bs_bytes"] == 4096 and row["op"] == "randread"
    assert row["bytes"] == 2 * 1024 * 1024 and row["ops"] == 512
    assert 0 < row["latency_min_s"] <= row["latency_p50_s"] <= row["latency_max_s"]
    # Little's law at depth 1: X ~ 1 / mean latency, within fio's own rounding/overheads
    assert row["throughput_ops_s"] * row["latency_mean_s"] == pytest.approx(1.0, rel=0.35)
    assert np.isfinite(row["cpu_sys_s"])


TEXT = json.dumps(DOC)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cut=st.integers(1, len(TEXT) - 1))
def test_any_truncation_raises_a_trace_error(tmp_path, cut):
    p = tmp_path / "cut.json"
    p.write_text(TEXT[:cut])
    with pytest.raises(TraceError, match="cut.json"):
        load_trace(p)


@settings(max_examples=200, deadline=None)
@given(
    path=st.sampled_from(
        [
            ("results", 0, "jobs"),
            ("results", 0, "latency_s"),
            ("results", 1, "samples"),
            ("results", 0, "point"),
            ("results", 1, "cpu"),
            ("results", 0, "engine_stats"),
            ("host",),
            ("options",),
            ("results",),
            ("complete",),
            ("results", 0, "bs_bytes"),
        ]
    ),
    value=st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 5),
        st.floats(allow_nan=False),
        st.text(max_size=3),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    ),
)
def test_any_wrong_field_gives_a_trace_error_or_a_valid_trace(path, value):
    doc = json.loads(TEXT)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    try:
        t = load_trace(doc)
    except TraceError:
        return
    assert len(t.points) == len(doc["results"])  # accepted only when still well-formed
    assert t.points["jobs"].dtype.kind == "i" or t.points.empty


def test_malformed_fio_json_is_a_trace_error():
    with pytest.raises(TraceError, match="malformed fio JSON"):
        load_trace({"fio version": "fio-3.33", "jobs": [{"read": {"lat_ns": 5, "total_ios": 1}}]})
    with pytest.raises(TraceError, match="non-empty 'jobs'"):
        load_trace({"fio version": "fio-3.33", "jobs": []})


# --- one reader, one validator: bench.load and load_trace apply the same rules -------------


def _broken(path, value=None, *, delete=False):
    doc = json.loads(TEXT)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


@pytest.mark.parametrize(
    "path, message",
    [
        (("results", 0, "point"), r"results\[0\] lacks the required key 'point'"),
        (("results", 0, "cpu"), r"results\[0\] lacks the required key 'cpu'"),
        (("host", "hostname"), r"host lacks the required key 'hostname'"),
    ],
)
def test_load_trace_refuses_a_document_bench_load_refuses(tmp_path, path, message):
    doc = _broken(path, delete=True)
    p = _write(tmp_path, "t.json", json.dumps(doc))
    with pytest.raises(TraceError, match=message):
        bench.load(p)
    with pytest.raises(TraceError, match=r"t\.json: qnbench document: " + message):
        load_trace(p)


@pytest.mark.parametrize(
    "path, value, message",
    [
        (
            ("results", 1, "latency_s", "mean"),
            -0.004,
            r"results\[1\]\.latency_s\.mean must be >= 0",
        ),
        (("results", 0, "think_s"), -0.5, r"results\[0\]\.think_s must be >= 0"),
        (("results", 0, "samples", 2, "ops"), -3, r"results\[0\]\.samples\[2\]\.ops must be >= 0"),
        (("results", 0, "repeat"), -1, r"results\[0\]\.repeat must be an integer >= 0"),
    ],
)
def test_bench_load_refuses_a_document_load_trace_refuses(tmp_path, path, value, message):
    p = _write(tmp_path, "t.json", json.dumps(_broken(path, value)))
    with pytest.raises(TraceError, match=message):
        bench.load(p)
    with pytest.raises(TraceError, match=message):
        load_trace(p)


def test_trace_keeps_repeat_and_has_the_bench_frame():
    doc = json.loads(TEXT)
    doc["results"][0]["repeat"] = 0
    doc["results"][1]["repeat"] = 1
    t = load_trace(doc)
    assert t.points["repeat"].tolist() == [0, 1]
    assert sorted(set(t.samples["repeat"])) == [0, 1]
    assert t.steady()["repeat"].tolist() == [0, 1]
    frame = bench.BenchTrace(doc).to_frame()
    assert frame["engine"].tolist() == ["emu", "emu"]
    pd.testing.assert_frame_equal(frame.drop(columns="engine"), t.points)
    pd.testing.assert_frame_equal(bench.BenchTrace(doc).samples_frame(), t.samples)
