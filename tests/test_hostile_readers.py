"""Issue 29, readers that accept what cannot be: fio JSON, CSV traces, measured points, qnbench
documents, JMVA and LINE JSON refuse impossible values (naming the field, the value and the
rule) instead of reading them as something else.
"""

from __future__ import annotations

import copy
import json
import re

import numpy as np
import pytest

import qnmodel as qn
from qnmodel import bench
from qnmodel.calibration.comparison import compare, read_measured
from qnmodel.calibration.traces import load_trace
from qnmodel.errors import InvalidModelError, TraceError
from qnmodel.io.jmva import from_jmva, to_jmva
from qnmodel.io.linejson import from_line_json, to_line_json

from .calibration.conftest import make_document

# -- fio JSON ----------------------------------------------------------------------------------
FIO = {
    "fio version": "fio-3.33",
    "global options": {"bs": "4k", "rw": "randread", "numjobs": "2", "iodepth": "1"},
    "jobs": [
        {
            "jobname": "j",
            "error": 0,
            "usr_cpu": 1.0,
            "sys_cpu": 2.0,
            "read": {
                "total_ios": 1000,
                "iops": 100.0,
                "bw_bytes": 409600,
                "io_bytes": 4096000,
                "runtime": 10000,
                "lat_ns": {"mean": 1e6, "min": 5e5, "max": 3e6},
                "clat_ns": {"percentile": {"50.000000": 1e6}},
            },
        }
    ],
}


def _fio(tmp_path, edit):
    doc = copy.deepcopy(FIO)
    edit(doc)
    p = tmp_path / "fio.json"
    p.write_text(json.dumps(doc))  # NaN and Infinity as Python's json writes them
    return load_trace(p)


def test_a_good_fio_document_reads(tmp_path):
    t = _fio(tmp_path, lambda d: None)
    assert t.points["jobs"].tolist() == [2]
    assert t.points["throughput_ops_s"].tolist() == [100.0]


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("iops", float("nan"), r"jobs\[0\]\.iops must be a finite number >= 0, got nan"),
        ("iops", -5.0, r"jobs\[0\]\.iops must be a finite number >= 0, got -5\.0"),
        ("runtime", float("inf"), r"jobs\[0\]\.runtime must be a finite number >= 0, got inf"),
        ("runtime", -10, r"jobs\[0\]\.runtime must be a finite number >= 0, got -10"),
        ("bw_bytes", float("-inf"), r"jobs\[0\]\.bw_bytes must be a finite number"),
        ("total_ios", float("nan"), r"jobs\[0\]\.total_ios must be a finite number"),
        ("io_bytes", -1, r"jobs\[0\]\.io_bytes must be a finite number >= 0, got -1"),
    ],
)
def test_fio_numbers_must_be_finite_and_non_negative(tmp_path, key, value, match):
    with pytest.raises(TraceError, match=r"fio\.json: " + match):
        _fio(tmp_path, lambda d: d["jobs"][0]["read"].__setitem__(key, value))


def test_fio_latencies_must_be_finite(tmp_path):
    with pytest.raises(TraceError, match=r"jobs\[0\]\.lat_ns\.mean must be a finite number"):
        _fio(tmp_path, lambda d: d["jobs"][0]["read"]["lat_ns"].__setitem__("mean", float("nan")))
    with pytest.raises(TraceError, match=r"clat_ns\.percentile\['50\.000000'\] must be a finite"):
        _fio(
            tmp_path,
            lambda d: d["jobs"][0]["read"]["clat_ns"]["percentile"].__setitem__("50.000000", -1),
        )


@pytest.mark.parametrize("numjobs", ["0", "-2", 0, "2.5", "x", True])
def test_fio_numjobs_must_be_a_whole_number_of_at_least_one(tmp_path, numjobs):
    with pytest.raises(
        TraceError, match=r"jobs\[0\]\.numjobs must be a whole number >= 1, got " + repr(numjobs)
    ):
        _fio(tmp_path, lambda d: d["global options"].__setitem__("numjobs", numjobs))


def test_fio_iodepth_zero_is_refused(tmp_path):
    with pytest.raises(TraceError, match=r"jobs\[0\]\.iodepth must be a whole number >= 1"):
        _fio(tmp_path, lambda d: d["jobs"][0].__setitem__("job options", {"iodepth": "0"}))


# -- CSV traces ----------------------------------------------------------------------------------
def _csv(tmp_path, text: str, encoding: str = "utf-8"):
    p = tmp_path / "t.csv"
    p.write_bytes(text.encode(encoding))
    return load_trace(p)


@pytest.mark.parametrize("cell", ["nan", "inf", "-inf", "NaN", "Infinity"])
def test_csv_non_finite_cells_are_refused(tmp_path, cell):
    with pytest.raises(
        TraceError,
        match=rf"t\.csv: line 3, column 'throughput_ops_s': '{cell}' is not a finite number",
    ):
        _csv(tmp_path, f"jobs,throughput_ops_s\n1,100\n2,{cell}\n")


@pytest.mark.parametrize(("cell", "shown"), [("2.7", "2.7"), ("0", "0"), ("", ""), ("-1", "-1")])
def test_csv_jobs_must_be_a_whole_number_of_at_least_one(tmp_path, cell, shown):
    with (
        pytest.raises(
            TraceError, match=rf"line 2, column 'jobs' must be a whole number >= 1, got '{shown}'"
        )
        if cell != "-1"
        else pytest.raises(TraceError, match=r"column 'jobs' must be >= 0, got -1")
    ):
        _csv(tmp_path, f"jobs,throughput_ops_s\n{cell},100\n")


def test_csv_bs_bytes_may_not_be_fractional(tmp_path):
    with pytest.raises(TraceError, match=r"column 'bs_bytes' must be a whole number >= 0"):
        _csv(tmp_path, "jobs,bs_bytes,throughput_ops_s\n1,4096.5,100\n")


def test_a_byte_order_mark_keeps_the_first_column(tmp_path):
    t = _csv(tmp_path, "jobs,throughput_ops_s\n7,100\n", encoding="utf-8-sig")
    assert t.points["jobs"].tolist() == [7]


def test_an_empty_measured_cell_is_still_a_missing_value(tmp_path):
    t = _csv(tmp_path, "jobs,throughput_ops_s,latency_mean_s\n1,100,\n")
    assert np.isnan(t.points["latency_mean_s"].iloc[0])


# -- measured points -----------------------------------------------------------------------------
NET = qn.Network.from_demands([0.01, 0.02], think_time=1.0)


@pytest.mark.parametrize(
    ("row", "match"),
    [
        ("3,nan,0.05", r"row 3, column 'throughput' must be a finite number >= 0 .*got nan"),
        ("3,-40,0.05", r"row 3, column 'throughput' must be a finite number >= 0 .*got -40"),
        ("3,40,inf", r"row 3, column 'response_time' must be a finite number >= 0 .*got inf"),
        ("2.5,40,0.05", r"n\[2\] must be an integer >= 1, got 2\.5"),
        ("0,40,0.05", r"n\[2\] must be an integer >= 1, got 0"),
    ],
)
def test_measured_csv_values_must_be_possible(tmp_path, row, match):
    p = tmp_path / "m.csv"
    p.write_text(f"n,throughput,response_time_s\n1,1,0.03\n2,2,0.03\n{row}\n")
    with pytest.raises(InvalidModelError, match=r"m\.csv:? " + match):
        read_measured(p)


def test_measured_mapping_values_must_be_possible():
    with pytest.raises(InvalidModelError, match=r"row 2, column 'throughput' must be a finite"):
        compare(NET, {"n": [1, 2], "throughput": [0.9, float("nan")]})


def test_measured_csv_with_a_bom_reads_n(tmp_path):
    p = tmp_path / "m.csv"
    p.write_bytes("n,throughput\n1,0.95\n".encode("utf-8-sig"))
    assert list(read_measured(p).columns) == ["n", "throughput"]


# -- qnbench documents ---------------------------------------------------------------------------
DOC = make_document([{"jobs": 1, "bs_bytes": 4096, "latency": 0.002, "samples": [400, 480, 500]}])


def test_a_consistent_document_reads():
    bench.validate(copy.deepcopy(DOC))


@pytest.mark.parametrize("key", ["ops", "bytes"])
def test_samples_must_add_up_to_the_totals(key):
    doc = copy.deepcopy(DOC)
    doc["results"][0]["samples"][1][key] += 1000
    with pytest.raises(
        TraceError,
        match=rf"results\[0\]\.samples: their {key} add up to .*, but results\[0\]\.{key} is",
    ):
        bench.validate(doc)
    with pytest.raises(TraceError, match="samples must partition"):
        load_trace(doc)


def test_sample_times_must_increase_within_the_run():
    doc = copy.deepcopy(DOC)
    s = doc["results"][0]["samples"]
    s[0]["t_s"], s[1]["t_s"] = s[1]["t_s"], s[0]["t_s"]
    with pytest.raises(TraceError, match=r"t_s must increase"):
        bench.validate(doc)
    doc = copy.deepcopy(DOC)
    doc["results"][0]["samples"][-1]["t_s"] = doc["results"][0]["elapsed_s"] * 2
    with pytest.raises(TraceError, match=r"samples\[2\]\.t_s = .* is past results\[0\]\.elapsed_s"):
        bench.validate(doc)


# -- JMVA ----------------------------------------------------------------------------------------
JMVA = to_jmva(qn.Network((qn.Station("disk", {"a": 0.01}),), classes=(qn.ClosedClass("a", 3),)))


@pytest.mark.parametrize("servers", ["0", "2.7", "-1", "nan"])
def test_jmva_servers_are_whole_numbers_of_at_least_one(servers):
    text = re.sub(r'(<listation name="disk"[^>]*servers=)"1"', rf'\1"{servers}"', JMVA)
    assert f'servers="{servers}"' in text
    with pytest.raises(InvalidModelError, match=rf"JMVA station 'disk'.* servers.*'{servers}'"):
        from_jmva(text)


def test_a_duplicate_jmva_service_time_is_refused():
    one = '<servicetime customerclass="a">0.01</servicetime>'
    assert one in JMVA
    text = JMVA.replace(one, one + '<servicetime customerclass="a">0.05</servicetime>')
    with pytest.raises(
        InvalidModelError,
        match=r"JMVA station 'disk': <servicetime> for customerclass 'a' appears twice "
        r"\('0\.01' and '0\.05'\)",
    ):
        from_jmva(text)


def test_a_duplicate_jmva_visit_and_class_are_refused():
    visit = re.search(r'<visit customerclass="a">[^<]*</visit>', JMVA).group(0)
    with pytest.raises(InvalidModelError, match=r"<visit> for customerclass 'a' appears twice"):
        from_jmva(JMVA.replace(visit, visit * 2))
    cls = re.search(r"<closedclass [^>]*/>", JMVA).group(0)
    with pytest.raises(InvalidModelError, match=r"the class name 'a' appears twice"):
        from_jmva(JMVA.replace(cls, cls * 2))


# -- LINE JSON -----------------------------------------------------------------------------------
LINE = json.loads(to_line_json(NET, 4))


def _line(edit):
    doc = copy.deepcopy(LINE)
    edit(doc["model"])
    return from_line_json(doc)


def test_a_good_line_document_reads():
    net = _line(lambda m: None)
    got = qn.mva(net.class_network(0), 4).throughput[-1]
    np.testing.assert_allclose(got, qn.mva(NET, 4).throughput[-1], rtol=1e-12)


def _rows(m):
    (key,) = m["routing"]["matrix"]
    return m["routing"]["matrix"][key]


@pytest.mark.parametrize("probs", [(0.25, 0.25), (1.0, 1.0), (0.5,)])
def test_a_closed_routing_row_must_sum_to_one(probs):
    def edit(m):
        rows = _rows(m)
        a = next(a for a in rows if rows[a])
        names = [n["name"] for n in m["nodes"] if n["name"] != a][: len(probs)]
        rows[a] = dict(zip(names, probs, strict=True))

    with pytest.raises(
        InvalidModelError, match=rf"routing probabilities from .* sum to {sum(probs):g};"
    ):
        _line(edit)


def test_a_closed_class_routed_to_a_sink_is_refused():
    def edit(m):
        m["nodes"].append({"name": "out", "type": "Sink"})
        rows = _rows(m)
        a = next(iter(rows))
        b = next(iter(rows[a]))
        rows[a] = {b: 0.5, "out": 0.5}

    with pytest.raises(InvalidModelError, match=r"closed class is routed .* -> sink 'out'"):
        _line(edit)


@pytest.mark.parametrize("value", [True, "2.0", None, [2.0]])
def test_an_exp_rate_must_be_a_number(value):
    def edit(m):
        node = next(n for n in m["nodes"] if n.get("type") == "Queue")
        (dist,) = node["service"].values()
        dist["params"]["lambda"] = value

    with pytest.raises(InvalidModelError, match=r"Exp params\.lambda must be a number .*got "):
        _line(edit)


@pytest.mark.parametrize("bs", [-4096, 4096.5, float("inf")])
def test_fio_block_sizes_must_be_whole_non_negative_numbers(tmp_path, bs):
    with pytest.raises(TraceError, match=r"jobs\[0\]\.bs must be a whole number of bytes >= 0"):
        _fio(tmp_path, lambda d: d["global options"].__setitem__("bs", bs))
