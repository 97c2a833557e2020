"""Tables of long curves: thinned on screen (CSV and JSON keep every row), populations chosen
with ``--populations``, and a refusal for memory told in the command's own terms."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.io import modelfile
from qnmodel.reporting.report import MAX_TABLE_ROWS, thin_rows, write_model_report

from ._cli import run

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo_storage.toml"


def table_ns(out: str) -> list[int]:
    """The populations of the rows of the solve table (after its dashed rule)."""
    lines = out.splitlines()
    rule = max(i for i, line in enumerate(lines) if set(line.replace(" ", "")) == {"-"})
    ns = []
    for line in lines[rule + 1 :]:
        first = line.split()[0] if line.split() else ""
        if not first.isdigit():
            break
        ns.append(int(first))
    return ns


def test_a_long_curve_prints_a_few_rows_and_says_how_to_get_the_others():
    code, out, err = run("solve", str(DEMO), "-N", "100000")
    assert code == 0, err
    ns = table_ns(out)
    # 1, 2, 5, 10, ..., 50000 and the last: the rows a log axis would show
    assert ns == [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000,
                  100000]  # fmt: skip
    assert len(out.splitlines()) < 40  # bounded whatever N is: not one line per n
    assert f"({len(ns)} of 100000 populations shown;" in out
    assert "--populations" in out and "--format csv" in out and "--format json" in out
    assert "keep=" not in out + err  # the Python argument means nothing on the command line
    # the rows shown are the solver's numbers at those populations
    res = qn.mva(modelfile.load(DEMO).network, 100000, keep="last")
    last = out.splitlines()[[i for i, ln in enumerate(out.splitlines())
                             if ln.split()[:1] == ["100000"]][0]].split()  # fmt: skip
    assert float(last[1]) == pytest.approx(res.throughput[-1], rel=5e-5)  # 5 digits shown


def test_a_short_curve_is_printed_whole():
    code, out, _ = run("solve", str(DEMO), "-N", str(MAX_TABLE_ROWS))
    assert code == 0
    assert table_ns(out) == list(range(1, MAX_TABLE_ROWS + 1))
    assert "populations shown" not in out


def test_csv_and_json_keep_every_row():
    code, out, _ = run("solve", str(DEMO), "-N", "300", "--format", "csv")
    assert code == 0 and len(out.splitlines()) == 301  # header + one row per n
    code, out, _ = run("solve", str(DEMO), "-N", "300", "--format", "json")
    assert code == 0 and [r["n"] for r in json.loads(out)["results"]] == list(range(1, 301))


def test_populations_choose_the_rows():
    code, out, err = run("solve", str(DEMO), "--populations", "1,10,1000")
    assert code == 0, err
    assert table_ns(out) == [1, 10, 1000]
    code, out, err = run("solve", str(DEMO), "--populations", "10:40:10", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["results"]
    assert [r["n"] for r in rows] == [10, 20, 30, 40]
    ref = qn.mva(modelfile.load(DEMO).network, 40)
    assert [r["throughput"] for r in rows] == ref.throughput[[9, 19, 29, 39]].tolist()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--populations", "1,x"], "--populations expects integers N1,N2,..."),
        (["--populations", "1:2:3:4"], "or START:STOP[:STEP] (e.g. 10:200:10), got '1:2:3:4'"),
        (["-N", "10", "--populations", "1,2"], "give -N (n = 1..N) or --populations"),
    ],
)
def test_populations_usage_errors(argv, message):
    code, out, err = run("solve", str(DEMO), *argv)
    assert code == 2 and out == ""
    assert message in err


def test_memory_refusal_names_the_command_line_way_out(monkeypatch):
    # 1 MiB: N = 10000 rows of a model file's solution and table need about 22.6 MiB
    # (qnmodel.io.modelfile._fields.SOLVE_BYTES / PRINT_BYTES, measured): refused when the
    # file and its options are read, before any work, naming the option and the limit
    monkeypatch.setenv("QNMODEL_MAX_MEMORY", "1 MiB")
    code, out, err = run("solve", str(DEMO), "-N", "10000")
    assert code == 2 and out == ""
    assert "-N 10000: model.N: N = 10000 populations" in err
    assert "would need about 22.58 MiB, more than the allowed 1 MiB" in err
    assert "$QNMODEL_MAX_MEMORY" in err and "solve fewer populations" in err
    assert "keep=" not in err
    code, _, err = run("plot", str(DEMO), "-N", "10000", "--out", "/nonexistent-dir-x/p.png")
    assert code in (1, 2) and "keep=" not in err


def test_thin_rows():
    assert thin_rows(range(1, 11)).tolist() == list(range(10))
    # two decades or less: evenly spaced, first and last included
    assert thin_rows(range(1, 101), max_rows=5).tolist() == [0, 25, 50, 74, 99]
    idx = thin_rows(np.arange(1, 10**7 + 1))
    assert (idx[[0, -1]] + 1).tolist() == [1, 10**7] and idx.size == 22
    # chosen populations: the first at or above 1, 2, 5, 10, 20, ... and the last
    pops = np.array([1, 2, 3, 4, 6, 12, 15, 30, 101, 150, 1000])
    assert pops[thin_rows(pops, max_rows=4)].tolist() == [1, 2, 6, 12, 30, 101, 1000]


def test_markdown_report_table_is_thinned_too(tmp_path):
    spec = modelfile.with_values(modelfile.load(DEMO), {"N": 1000})
    paths = write_model_report(spec, tmp_path)
    md = paths["markdown"].read_text(encoding="utf-8")
    assert "10 of 1000 populations shown; the CSV holds every one." in md
    assert len(paths["csv"].read_text().splitlines()) == 1001
