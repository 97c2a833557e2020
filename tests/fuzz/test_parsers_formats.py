# ruff: noqa: E501  (strategies read best one per line)
"""Fuzzing the parsers of capacity targets, LINE JSON models, validation study files, the
best-bandwidth search space and open model files: a valid value or our error, never
anything else (see ``test_parsers.py``; same profiles, ``_strategies.py``).

Study files are parsed only (``qnmodel.lab.validation.parse_study``): nothing is brought up.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import qnmodel as qn
from qnmodel.io.linejson import from_line_json, to_line_json
from qnmodel.io.modelfile import loads as load_model_text
from qnmodel.io.modelfile import solve
from qnmodel.lab.experiments.search import SearchSpace
from qnmodel.lab.validation import parse_study
from qnmodel.solvers.targets import Target, as_target

from ._strategies import (
    FUZZ,
    ROOT,
    json_values,
    model_text,
    numbers_text,
    ours_or_value,
    paths_of,
    quantity_text,
    removed,
    replaced,
    scalars,
    toml_value,
    toml_values,
)

# -- capacity targets ----------------------------------------------------------------------------
METRIC_WORDS = [
    "R",
    "r",
    "mean",
    "X",
    "x",
    "throughput",
    "p95",
    "p99.9",
    "p0",
    "p100",
    "p 50",
    "P99",
    "p",
    "p1e3",
    "q95",
    "",
    "RR",
]
OPS = ["<=", "<", ">=", ">", "=<", "=>", "==", "=", "<<", ""]
target_text = st.builds(
    lambda m, s1, op, s2, v: f"{m}{s1}{op}{s2}{v}", st.sampled_from(METRIC_WORDS),
    st.sampled_from(["", " "]), st.sampled_from(OPS), st.sampled_from(["", " "]),
    st.one_of(numbers_text, quantity_text, st.text(max_size=6)),
)  # fmt: skip


def _valid_target(t: Target) -> None:
    assert t.metric in ("mean", "percentile", "throughput")
    assert math.isfinite(t.value) and t.value > 0
    assert (t.q is None) == (t.metric != "percentile")
    if t.q is not None:
        assert 0 < t.q < 1
    # what a report prints reads back as the same target: times to 4 significant digits
    # (format_quantity), rates to 6 (not within a rounding of the largest double, 1.8e308,
    # where 4 digits round up past it)
    if t.value > 1e300:
        return
    back = as_target(str(t))
    assert back.metric == t.metric and back.q == t.q
    assert abs(back.value / t.value - 1) <= (5e-4 if t.is_response_time else 5e-6)


@FUZZ
@given(st.one_of(target_text, st.text(max_size=30)))
def test_target_text(text):
    ours_or_value(as_target, text, check=_valid_target)


@FUZZ
@given(scalars)
def test_target_any_object(value):
    ours_or_value(as_target, value, check=_valid_target)


# -- LINE JSON -----------------------------------------------------------------------------------
def _line_template() -> dict:
    net = qn.Network(
        (qn.Station("disk", {"a": 0.01, "b": 0.02}, discipline="PS"),
         qn.Station("cpu", {"a": 0.005, "b": 0.001}, servers=2, discipline="PS"),
         qn.Station("lan", {"a": 0.002, "b": 0.0}, kind="delay")),
        classes=(qn.ClosedClass("a", 3, 1.0), qn.OpenClass("b", 5.0)),
    )  # fmt: skip
    return json.loads(to_line_json(net))


def _line_ld_template() -> dict:
    net = qn.Network(
        (qn.Station("disk", 0.01, rate_multipliers=[1.0, 1.8, 2.4]), qn.Station("cpu", 0.004)),
        think_time=0.5,
    )
    return json.loads(to_line_json(net, N=4))


LINE = _line_template()
LINE_LD = _line_ld_template()
LINE_PATHS = [("m", p) for p in paths_of(LINE) if p] + [("ld", p) for p in paths_of(LINE_LD) if p]


def _valid_network(net) -> None:
    D = np.asarray(net.D if hasattr(net, "D") else net.demands, dtype=float)
    assert np.all(np.isfinite(D)) and np.all(D >= 0)


def test_line_templates_read_back():
    assert from_line_json(LINE).class_names == ("a", "b")
    assert (
        from_line_json(LINE_LD).class_names == ("class1",)
        or len(from_line_json(LINE_LD).class_names) == 1
    )


@FUZZ
@given(st.sampled_from(LINE_PATHS), json_values)
def test_line_json_one_field_replaced(where, value):
    doc = LINE if where[0] == "m" else LINE_LD
    ours_or_value(from_line_json, replaced(doc, where[1], value), check=_valid_network)


@FUZZ
@given(st.sampled_from(LINE_PATHS))
def test_line_json_one_field_removed(where):
    doc = LINE if where[0] == "m" else LINE_LD
    ours_or_value(from_line_json, removed(doc, where[1]), check=_valid_network)


@FUZZ
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200), json_values,
                 st.integers(1, len(json.dumps(LINE)) - 1).map(lambda n: json.dumps(LINE)[:n])))  # fmt: skip
def test_line_json_random_truncated_or_any_document(doc):
    ours_or_value(from_line_json, doc, check=_valid_network)


# -- validation study files (parse only) --------------------------------------------------------
RAID_TOPOLOGY = str(ROOT / "examples" / "testbed" / "raid_100mbit.toml")
STUDIES = {
    "raid": {
        "study": {"kind": "raid", "topology": RAID_TOPOLOGY, "title": "t"},
        "raid": {"chunk": "64 KiB", "populations": [1, 4], "runtime": "1 s", "warmup": "500 ms", "repeat": 3, "form": "corrected",
                 "cases": [{"raid": "raid0", "op": "read", "servers": 3}, {"raid": "raid5", "op": "write", "servers": 3, "chunks": 1}]},
    },
    "nfs": {
        "study": {"kind": "nfs"},
        "nfs": {"bs": "1 MiB", "repeats": 3, "runtime": "1.5 s", "miss_seconds": "6 s",
                "configs": [{"link": "100 Mbit/s", "disk": "6 MB/s"}, {"link": "1 Gbit/s", "disk": "50 MB/s", "cases": False}],
                "mixed": {"config": 0, "server_hit": [0.25, 0.5]}, "clients": {"config": 1, "n": [1, 2], "runtime": "3 s", "bs": "64 KiB"}},
    },
    "stripe": {
        "study": {"kind": "stripe"},
        "stripe": {"workloads": ["raid0-read", "raid5-rmw"], "widths": [2, 4], "members": ["emu-exp", "emu-const"],
                   "jobs": [1, 4], "service": 0.004, "runtime": 3.0},
    },
}  # fmt: skip
STUDY_PATHS = [(kind, p) for kind, doc in STUDIES.items() for p in paths_of(doc) if len(p) > 1]


def study_text(doc: dict) -> str:
    """A study document as TOML: top-level tables, their scalars, then arrays of tables."""
    lines = []
    for table, body in doc.items():
        if not isinstance(body, dict):
            lines.append(f"{table} = {toml_value(body)}")
            continue
        lines.append(f"[{table}]")
        lines += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in body.items()]
    return "\n".join(lines) + "\n"


def _parse_study_text(tmp: Path, text: str):
    p = tmp / "study.toml"
    p.write_text(text)
    return parse_study(p)


def test_study_templates_parse(tmp_path):
    for kind, doc in STUDIES.items():
        spec, _topology, params = _parse_study_text(tmp_path, study_text(doc))
        assert spec["study"]["kind"] == kind and params


@FUZZ
@given(st.sampled_from(STUDY_PATHS), toml_values)
def test_study_one_field_replaced(tmp_path_factory, where, value):
    kind, path = where
    doc = replaced(STUDIES[kind], path, value)
    ours_or_value(_parse_study_text, tmp_path_factory.mktemp("study"), study_text(doc))


@FUZZ
@given(st.sampled_from(STUDY_PATHS))
def test_study_one_field_removed(tmp_path_factory, where):
    kind, path = where
    doc = removed(STUDIES[kind], path)
    ours_or_value(_parse_study_text, tmp_path_factory.mktemp("study"), study_text(doc))


@FUZZ
@given(st.one_of(st.text(max_size=200), st.sampled_from(list(STUDIES)).map(lambda k: study_text(STUDIES[k])).flatmap(
    lambda t: st.integers(1, len(t) - 1).map(lambda n: t[:n]))))  # fmt: skip
def test_study_random_or_truncated_text(tmp_path_factory, text):
    ours_or_value(_parse_study_text, tmp_path_factory.mktemp("study"), text)


# -- the best-bandwidth search space (qnmodel.lab.experiments.search) -------------------------------
SPACE = {"chunk": [16384, 65536], "bs": ["64 KiB", 131072], "jobs": [1, 2], "raid": 5, "members": 5, "rw": "write",
         "start": [65536, 65536, 1]}  # fmt: skip


def _space(kw):
    kw = dict(kw)
    for k in ("chunk", "bs", "jobs", "start"):
        if isinstance(kw.get(k), list):
            kw[k] = tuple(kw[k])
    return SearchSpace(**kw)


def test_search_space_template_is_valid():
    assert _space(SPACE).size == 8


@FUZZ
@given(st.sampled_from([p for p in paths_of(SPACE) if p]), json_values)
def test_search_space_one_field_replaced(path, value):
    ours_or_value(_space, replaced(SPACE, path, value))


# -- open model files ([model] arrival_rate) and a target in the file --------------------------
OPEN_MODEL = {
    "model": {"name": "o", "arrival_rate": "40/s", "target": "R <= 50 ms"},
    "station": [
        {"name": "cpu", "demand": "2 ms"},
        {"name": "disk", "demand": "10 ms", "servers": 2},
    ],
}


def test_open_model_template_solves():
    sol = solve(load_model_text(model_text(OPEN_MODEL)))
    assert sol is not None


rates_text = st.one_of(
    quantity_text, numbers_text, st.lists(st.one_of(quantity_text, numbers_text), max_size=4)
)


@FUZZ
@given(
    st.sampled_from(["arrival_rate", "target", "N", "think_time"]),
    st.one_of(toml_values, rates_text, st.text(max_size=12)),
)
def test_open_model_field_replaced(key, value):
    doc = copy.deepcopy(OPEN_MODEL)
    doc["model"][key] = value
    spec = ours_or_value(load_model_text, model_text(doc))
    if spec is not None:
        ours_or_value(solve, spec)
