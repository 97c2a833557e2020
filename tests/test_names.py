"""One vocabulary (docs/reference/names.md): the code uses exactly the names the page lists.

The "Frame columns" table of the page is read and compared with the columns the code writes:
``qn.sweep``, ``ModelSolution.to_frame`` and the rows of ``qnmodel solve --format json``,
``Comparison.table``. Then the conventions themselves: ``at(n)``, ``response_time_quantile``,
the exporters' argument order, ``N`` as the population keyword, ``Station(size=, rate=)``
and a one-class JMVA / LINE import solved by ``qn.mva``.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.io import modelfile
from qnmodel.io.jmva import from_jmva, read_jmva, to_jmva, write_jmva
from qnmodel.io.linejson import from_line_json, read_line_json, to_line_json, write_line_json

from ._cli import run

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "names.md"
DEMO = ROOT / "examples" / "demo_storage.toml"


def _documented_columns() -> dict[str, list[str]]:
    """producer cell -> column names listed, from the page's "Frame columns" table."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## Frame columns", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or cells[0] in ("producer", "---"):
            continue
        out[cells[0]] = [c for c in re.findall(r"`([^`]+)`", cells[1]) if c != "..."]
    return out


DOCUMENTED = _documented_columns()


def _listed(key: str) -> list[str]:
    hits = [cols for producer, cols in DOCUMENTED.items() if key in producer]
    assert len(hits) == 1, (key, list(DOCUMENTED))
    return hits[0]


def test_the_page_is_in_the_site_navigation():
    assert "reference/names.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert len(DOCUMENTED) == 4


def test_sweep_columns_are_the_listed_ones():
    net = qn.Network.from_demands(["5 ms", "8 ms"], think_time="100 ms")
    df = qn.sweep(net, [1, 4], think_time=[0.1, 0.2])
    results = [c for c in df.columns if c not in ("think_time", "n", "bottleneck")]
    assert results == _listed("qn.sweep")


def test_solve_frame_and_cli_json_rows_are_the_listed_ones():
    listed = _listed("qnmodel solve --format json")
    frame = modelfile.solve(modelfile.load(DEMO)).to_frame()
    assert list(frame.columns) == listed
    code, out, err = run("solve", str(DEMO), "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["results"]
    assert list(rows[0]) == listed


def test_comparison_table_columns_are_the_listed_ones():
    from qnmodel.calibration.comparison import compare

    net = qn.Network.from_demands(["10 ms", "4 ms"])
    m = qn.mva(net, 8)
    c = compare(net, {"n": [1, 8], "throughput": m.throughput[[0, 7]]})
    assert c.band == "bjb"
    assert list(c.table.columns) == _listed("Comparison.table")


def test_simulation_frame_uses_the_halfwidth_names():
    listed = _listed("SimulationResult.to_frame()")
    r = qn.simulate(qn.Network.from_demands(["5 ms"]), N=2, seed=1, quantiles=(0.5,))
    cols = list(r.to_frame().columns)
    assert cols[: len(listed)] == listed
    assert not [c for c in cols if c.endswith("_hw")]


# -- population keyword: N -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "fn",
    [
        qn.mva,
        qn.bounds,
        qn.best_upgrade,
        qn.min_servers,
        to_jmva,
        to_line_json,
        write_jmva,
        write_line_json,
    ],  # fmt: skip
    ids=lambda f: f.__name__,
)
def test_the_population_keyword_is_N(fn):
    params = inspect.signature(fn).parameters
    assert "N" in params and "population" not in params


def test_a_model_file_and_the_command_line_say_N():
    spec = modelfile.loads('[model]\nN = 3\n[[station]]\nname = "d"\ndemand = "1 ms"\n')
    assert spec.populations.tolist() == [1, 2, 3]
    old = r"model\.population: unknown key; allowed keys here are .*\bN\b"
    with pytest.raises(modelfile.ModelFileError, match=old):
        modelfile.loads('[model]\npopulation = 3\n[[station]]\nname = "d"\ndemand = "1 ms"\n')
    code, out, _ = run("solve", str(DEMO), "-N", "2", "--format", "json")
    assert code == 0 and [r["n"] for r in json.loads(out)["results"]] == [1, 2]


# -- at(n) ---------------------------------------------------------------------------------------
def test_at_n_is_the_row_of_population_n():
    net = qn.Network.from_demands(["5 ms", "8 ms"], think_time="100 ms")
    r = qn.mva(net, 64)
    row = r.at(64)
    assert row.n == 64 and row.throughput == r.throughput[63]
    np.testing.assert_array_equal(row.queue_length, r.queue_length[63])
    assert row.response_time == pytest.approx(64 / row.throughput - 0.1, rel=1e-12)  # Little
    b = qn.bounds(net, 10)
    assert b.at(3).throughput_upper == b.throughput_upper[2]
    last = qn.mva(net, 20, keep="last")
    assert last.at(20).throughput == pytest.approx(r.at(20).throughput, rel=1e-14)


def test_at_n_refuses_a_population_not_solved_naming_the_range():
    net = qn.Network.from_demands(["5 ms"])
    with pytest.raises(qn.InvalidModelError, match=r"n=65 was not solved; this result holds "
                       r"n = 1\.\.64: solve with N >= 65"):  # fmt: skip
        qn.mva(net, 64).at(65)
    with pytest.raises(qn.InvalidModelError, match=r"n=65 was not solved.*n = 1\.\.64"):
        qn.bounds(net, 64).at(65)
    with pytest.raises(qn.InvalidModelError, match=r"n must be an integer >= 1, got 0"):
        qn.bounds(net, 64).at(0)
    with pytest.raises(qn.InvalidModelError, match=r"holds n in \[20\]: solve with keep='all'"):
        qn.mva(net, 20, keep="last").at(3)
    with pytest.raises(qn.InvalidModelError, match=r"n must be an integer >= 1, got 2\.5"):
        qn.mva(net, 4).at(2.5)


def test_row_index_names_chosen_populations_and_rows_name_their_fields():
    from qnmodel.results._rows import row_index

    assert row_index(np.array([1.0, 10.0, 100.0]), 10) == 1
    with pytest.raises(qn.InvalidModelError, match=r"n=5 was not solved; this result holds "
                       r"n in \[1, 10, 100\]: solve the curve that contains it"):  # fmt: skip
        row_index(np.array([1.0, 10.0, 100.0]), 5)
    many = np.arange(1, 40, 2)
    with pytest.raises(qn.InvalidModelError, match=r"n in \[1, 3, 5, \.\.\., 39\] "
                       r"\(20 populations\): solve with N >= 41"):  # fmt: skip
        row_index(many, 41)
    row = qn.mva(qn.Network.from_demands(["5 ms"]), 3).at(2)
    assert row.fields() == ("throughput", "response_time", "queue_length", "utilization",
                            "residence_time")  # fmt: skip
    assert row.to_dict()["n"] == 2 and not row.queue_length.flags.writeable
    with pytest.raises(AttributeError, match=r"no field 'throughput_lower'; it has n, throughput"):
        _ = row.throughput_lower


def test_at_n_of_a_multiclass_result_names_its_rows():
    net = qn.Network(
        [qn.Station("d", {"a": 0.01, "b": 0.02})],
        classes=[qn.ClosedClass("a", 2), qn.ClosedClass("b", 1)],
    )
    with pytest.raises(qn.InvalidModelError, match="not indexed by population.*its classes"):
        qn.amva(net).at(1)


# -- response_time_quantile ----------------------------------------------------------------------
def test_closed_quantile_at_n_one_is_the_exponential_tandem_law():
    """n = 1: the job is alone; one 5 ms exponential station: p95 = 5 ms ln 20."""
    r = qn.mva(qn.Network.from_demands(["5 ms"]), 4)
    assert r.response_time_quantile(0.95, n=1) == pytest.approx(0.005 * np.log(20), rel=1e-6)
    assert r.response_time_quantile(0.95) > r.response_time_quantile(0.95, n=1)


def test_open_quantile_is_the_mm1_law():
    """M/M/1, S = 5 ms, lambda = 100/s: R ~ Exp(1/S - lambda), p99 = ln 100 / 100 s."""
    r = qn.open_network(qn.Network.from_demands(["5 ms"]), "100/s")
    assert r.response_time_quantile(0.99) == pytest.approx(np.log(100) / 100.0, rel=1e-6)


def test_a_pickled_result_answers_quantiles_in_a_fresh_process(tmp_path):
    """A result sent to another process (a worker) carries its law: unpickled where only
    ``qnmodel`` was imported (the solvers load lazily), p99 of M/M/1 is still ln 100 / 100 s."""
    import pickle
    import subprocess
    import sys

    from ._user_env import user_env

    r = qn.open_network(qn.Network.from_demands(["5 ms"]), "100/s")
    path = tmp_path / "r.pickle"
    path.write_bytes(pickle.dumps(r))
    code = (
        "import pickle, sys, qnmodel\n"
        "assert 'qnmodel.solvers' not in sys.modules\n"
        f"r = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        "print(repr(r.response_time_quantile(0.99)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env=user_env(), timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == pytest.approx(np.log(100) / 100.0, rel=1e-6)


def test_results_without_a_law_refuse_naming_the_reason():
    net = qn.Network(
        [qn.Station("d", {"a": 0.01, "b": 0.02}, discipline="PS")],
        classes=[qn.ClosedClass("a", 2), qn.ClosedClass("b", 1)],
    )
    with pytest.raises(qn.InvalidModelError, match="single-class.*qnmodel.simulate"):
        qn.mva_multiclass(net).response_time_quantile(0.9)
    with pytest.raises(qn.InvalidModelError, match="approximate MVA computes means only"):
        qn.amva(qn.Network.from_demands([0.01]), 3).response_time_quantile(0.9)
    with pytest.raises(qn.InvalidModelError, match="one arrival rate"):
        qn.open_network(qn.Network.from_demands([0.01]), [10, 20]).response_time_quantile(0.9)
    with pytest.raises(qn.InvalidModelError, match="means and state probabilities"):
        qn.queue_mm1("10/s", "20 ms").response_time_quantile(0.9)
    with pytest.raises(qn.InvalidModelError, match=r"n applies to a closed curve; this result "
                       r"has one workload, got n=3"):  # fmt: skip
        qn.open_network(qn.Network.from_demands([0.01]), 10.0).response_time_quantile(0.9, n=3)
    with pytest.raises(qn.InvalidModelError, match=r"q must be in \(0, 1\)"):
        qn.mva(qn.Network.from_demands([0.01]), 2).response_time_quantile(1.0)


# -- exporters -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("to", "write", "read", "parse"),
    [
        (to_jmva, write_jmva, read_jmva, from_jmva),
        (to_line_json, write_line_json, read_line_json, from_line_json),
    ],  # fmt: skip
    ids=["jmva", "linejson"],
)
def test_every_format_has_the_same_pair(tmp_path, to, write, read, parse):
    """to_<f>(net, N) -> str and write_<f>(net, path, N) -> path, the file holding that text."""
    assert list(inspect.signature(to).parameters)[:2] == ["net", "N"]
    assert list(inspect.signature(write).parameters) == ["net", "path", "N"]
    net = qn.Network.from_demands(["5 ms", "8 ms"], think_time="100 ms")
    text = to(net, 7)
    assert isinstance(text, str)
    path = write(net, tmp_path / "m", 7)
    assert path.read_text(encoding="utf-8") == text
    back = read(path)
    assert back.population.tolist() == [7]
    np.testing.assert_allclose(parse(text).demands, back.demands, rtol=0)


def test_exporters_refuse_N_with_classes():
    net = qn.Network([qn.Station("d", {"a": 0.01})], classes=[qn.ClosedClass("a", 2)])
    for to in (to_jmva, to_line_json):
        with pytest.raises(qn.InvalidModelError, match=r"N applies to a network without "
                           r"classes \(classes carry theirs\)"):  # fmt: skip
            to(net, 3)


# -- a one-class import is solved by qn.mva --------------------------------------------------------
@pytest.mark.parametrize("fmt", ["jmva", "linejson"])
def test_a_one_class_import_is_solved_by_mva(fmt):
    net = qn.Network.from_demands(["5 ms", "8 ms"], think_time="100 ms")
    text = to_jmva(net, 10) if fmt == "jmva" else to_line_json(net, 10)
    back = from_jmva(text) if fmt == "jmva" else from_line_json(text)
    assert not back.single and back.population.tolist() == [10]
    r = qn.mva(back)  # up to the class's own population
    assert r.n.tolist() == list(range(1, 11))
    np.testing.assert_allclose(r.throughput, qn.mva(net, 10).throughput, rtol=1e-12)
    assert qn.mva(back, 3).n.tolist() == [1, 2, 3]
    b = qn.bounds(back, 10)
    np.testing.assert_allclose(b.throughput_upper, qn.bounds(net, 10).throughput_upper, rtol=1e-12)


def test_mva_without_N_names_it():
    with pytest.raises(qn.InvalidModelError, match=r"N is required .*qnmodel\.mva\(net, N\)"):
        qn.mva(qn.Network.from_demands(["5 ms"]))


# -- Station: size and rate, as model files say them ------------------------------------------
def test_station_size_and_rate_are_a_service_time():
    s = qn.Station("disk", size="64 KiB", rate="100 MB/s", visits=2)
    assert s.service_time == pytest.approx(65536 / 1e8, rel=1e-15)
    assert s.demand == pytest.approx(2 * 65536 / 1e8, rel=1e-15)
    spec = modelfile.loads(
        '[model]\nN = 2\n[[station]]\nname = "disk"\nsize = "64 KiB"\nrate = "100 MB/s"\n'
        "visits = 2\n"
    )
    assert spec.network.stations[0].demand == s.demand
    per = qn.Station("d", size={"r": "4 KiB", "w": "64 KiB"}, rate="1 MB/s")
    assert dict(per.demand) == pytest.approx({"r": 4096 / 1e6, "w": 65536 / 1e6}, rel=1e-15)
    assert s.replace(rate="200 MB/s").demand == pytest.approx(s.demand / 2, rel=1e-15)
    assert s.replace(demand="1 ms").size is None


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"size": "64 KiB"}, r"size goes with rate .* give both"),
        ({"rate": "100 MB/s"}, r"rate goes with size"),
        ({"size": "64 KiB", "rate": "100 MB/s", "demand": "1 ms"}, "not several"),
        ({"size": "64 KiB", "rate": "100 MB/s", "service_time": "1 ms"}, "not several"),
        ({"size": "64 KiB", "rate": 0}, r"rate must be > 0"),
        ({"size": {"r": "4 KiB"}, "rate": {"w": "1 MB/s"}}, r"size of class 'r' has no rate"),
    ],
)
def test_station_size_and_rate_refusals(kw, match):
    with pytest.raises(qn.InvalidModelError, match=match):
        qn.Station("disk", **kw)
