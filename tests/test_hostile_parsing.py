"""Issue 29, super-linear parsing: the model-file key scanner, the unit parser and the target
parser are linear in their input. Each test feeds about a megabyte of the pattern that made the
old regular expressions cubic or quadratic (runs of spaces where a match then fails); with the
old code these inputs take hours, now they finish in well under a second. (No timing
assertions: the size of the input is the test.)
"""

from __future__ import annotations

import pytest

import qnmodel as qn
from qnmodel import units
from qnmodel.errors import InvalidModelError, UnitError
from qnmodel.io.modelfile import loads
from qnmodel.io.modelfile._scanner import _key_lines
from qnmodel.solvers.targets import as_target

MB = 2**20

MODEL = """\
[model]
name = "m"
think_time = "1 s"
N = 4
description = \"\"\"
{body}
\"\"\"

[[station]]
name = "disk"
demand = "10 ms"
"""


@pytest.mark.parametrize(
    "body",
    [
        " " * MB + "a",  # a megabyte of spaces, a key-like word, no '=' (was cubic)
        "a" + " " * MB,  # a key-like word, a megabyte of spaces, no '='
        " " * (MB // 2) + "a" + " " * (MB // 2) + "b",
        "[" + " " * MB,  # a header-like line without its ']'
        "[a" + " " * MB + "x",
        "[[" + " " * MB + "]]" + " " * 10 + "x",
        ("a " * (MB // 2)),
        "\n".join(["a" + " " * 1000] * 1000),  # many long lines
    ],
    ids=[
        "spaces-key",
        "key-spaces",
        "spaces-key-spaces",
        "open-bracket",
        "header-spaces",
        "double-header",
        "words",
        "lines",
    ],
)
def test_a_megabyte_of_spaces_in_a_multiline_string_solves(body):
    spec = loads(MODEL.format(body=body), source="m.toml")
    sol = qn.modelfile.solve(spec)
    assert sol.spec.network.names == ("disk",) or list(sol.spec.network.names) == ["disk"]


def test_the_scanner_still_points_at_the_line_after_a_multiline_string():
    text = MODEL.format(body="x = 1\n[fake]\ndemand = 2") + 'kind = "tape"\n'
    lines = _key_lines(text)
    assert ("fake",) not in lines and ("x",) not in lines  # inside the string: not keys
    assert lines[("station", 0, "name")] == text.splitlines().index('name = "disk"') + 1
    kind_line = text.splitlines().index('kind = "tape"') + 1
    with pytest.raises(InvalidModelError, match=rf"m\.toml:{kind_line}: station\[0\]\.kind"):
        loads(text, source="m.toml")


def test_the_scanner_reads_headers_and_keys_as_before():
    text = '[ model ]\n  a . "b" = 1\n[[ station ]] # c\nname = "x"\n[[station]]\nname = "y"\n'
    lines = _key_lines(text)
    assert lines[("model",)] == 1
    assert lines[("model", "a", "b")] == 2
    assert lines[("station", 0)] == 3 and lines[("station", 1, "name")] == 6


@pytest.mark.parametrize(
    "text",
    [
        "1 a" + " " * MB + "b",
        "1" + " " * MB + "s",
        " " * MB + "1 s",
        "1 " + "m " * (MB // 2) + "s",
    ],
    ids=["unit-spaces", "number-spaces", "leading", "words"],
)
def test_a_megabyte_quantity_string_is_refused_by_its_length(text):
    with pytest.raises(UnitError, match=r"has \d+ characters, more than the 100 .*MAX_QUANTITY"):
        units.parse(text, "time")


def test_the_quadratic_case_below_the_length_limit_is_read_linearly():
    # what the limit lets through still fails fast (and a 60 000-space unit would have taken
    # 10 s); the limit itself is what a user meets
    with pytest.raises(UnitError, match=r"unknown unit 'ab'"):
        units.parse("1 a" + " " * 90 + "b", "time")
    assert units.parse("  4.9   ms  ", "time") == pytest.approx(4.9e-3)
    assert units.parse("16KiB", "size") == 16384.0


def test_the_unit_limit_reaches_model_files_and_set():
    text = MODEL.format(body="").replace('"10 ms"', '"10 m' + " " * 5000 + 's"')
    with pytest.raises(InvalidModelError, match=r"station\[0\]\.demand: .*characters"):
        loads(text, source="m.toml")


@pytest.mark.parametrize(
    "text",
    ["R <= 1 a" + " " * MB + "b", "R" + " " * MB + "<= 1 s", "p9" + " " * MB + "x <= 1 s"],
    ids=["value", "operator", "metric"],
)
def test_a_megabyte_target_is_refused_by_its_length(text):
    with pytest.raises(InvalidModelError, match=r"target .* characters, more than the 200"):
        as_target(text)


def test_targets_parse_as_before():
    t = as_target("  p95 <= 80 ms ")
    assert t.metric == "percentile" and t.q == pytest.approx(0.95) and t.value == 0.08
    assert as_target("X >= 2000/s").value == 2000.0
    with pytest.raises(InvalidModelError, match=r"target 'R <=   '"):
        as_target("R <=   ")
