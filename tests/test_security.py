"""Security: files read from user paths are parsed as data, never executed or evaluated; a
model file cannot make the tool write outside its output directory (hostile names, absolute
paths, symlinks planted in the output directory).

The testbed's side (it removes only what it created, whatever its state file says) is in
tests/testbed/test_security.py.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

import qnmodel
from qnmodel.cli import main

SOURCES = Path(qnmodel.__file__).resolve().parent

# (module or object, attribute) calls that execute or deserialize code
FORBIDDEN_CALLS = {
    ("", "eval"),
    ("", "exec"),
    ("", "compile"),
    ("", "__import__"),
    ("os", "system"),
    ("os", "popen"),
    ("pickle", "load"),
    ("pickle", "loads"),
    ("marshal", "loads"),
    ("yaml", "load"),
    ("yaml", "unsafe_load"),
    ("shelve", "open"),
}


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name):
                yield node, ("", f.id)
            elif isinstance(f, ast.Attribute):
                base = f.value.id if isinstance(f.value, ast.Name) else ""
                yield node, (base, f.attr)


def test_no_code_execution_or_unsafe_deserialisation_in_the_package():
    found = []
    for path in sorted(SOURCES.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, name in _calls(tree):
            where = f"{path.relative_to(SOURCES)}:{node.lineno}"
            if name in FORBIDDEN_CALLS:
                found.append(f"{where} {'.'.join(filter(None, name))}()")
            # subprocess with a shell: a string command line would be parsed by /bin/sh
            if name[1] in {"run", "Popen", "call", "check_call", "check_output"}:
                for kw in node.keywords:
                    if kw.arg == "shell" and not (
                        isinstance(kw.value, ast.Constant) and kw.value.value is False
                    ):
                        found.append(f"{where} {name[1]}(shell=...)")
    assert not found, "code execution from the package: " + ", ".join(found)
    # the parsers are the standard library's data parsers
    text = "".join(p.read_text(encoding="utf-8") for p in SOURCES.rglob("*.py"))
    assert "tomllib.loads" in text and "json.loads" in text and "ElementTree" in text


MODEL = """\
[model]
name = {name}
think_time = "1 s"
N = 3

[[station]]
name = "disk"
demand = "10 ms"
"""

HOSTILE_NAMES = ['"../../escaped"', '"/tmp/qnmodel-escaped-abs"']  # full reports (slow: plots)


@pytest.mark.parametrize(
    ("name", "stem"),
    [("../../escaped", "_.._escaped"), ("/tmp/abs", "_tmp_abs"), ("..", "model"), ("", "model"),
     ("a/b/../../../c", "a_b_.._.._.._c"), ("~/x", "_x"), ("..\\..\\win", "_.._win"),
     ("disk model 1", "disk_model_1"), ("ok-name_1.v2", "ok-name_1.v2")],
)  # fmt: skip
def test_a_model_name_becomes_a_file_stem_inside_the_directory(name, stem):
    from qnmodel.reporting.report import output_stem

    assert output_stem(name) == stem
    assert "/" not in output_stem(name) and not output_stem(name).startswith(".")


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_report_of_a_hostile_model_name_writes_only_inside_out(tmp_path, name, capsys):
    work = tmp_path / "work"
    work.mkdir()
    model = work / "m.toml"
    model.write_text(MODEL.format(name=name))
    out = work / "out"
    before = _tree(tmp_path)
    abs_target = Path("/tmp/qnmodel-escaped-abs.csv")
    abs_target.unlink(missing_ok=True)
    code = main(["-q", "report", str(model), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    new = _tree(tmp_path) - before
    assert new, "the report wrote nothing"
    assert all(p == "work/out" or p.startswith("work/out/") for p in new), sorted(new)
    assert not abs_target.exists()
    assert all(not f.is_symlink() for f in out.iterdir())


def test_report_refuses_to_write_through_a_planted_symlink(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "m.csv").symlink_to(victim)
    model = tmp_path / "m.toml"
    model.write_text(MODEL.format(name='"m"'))
    code = main(["-q", "report", str(model), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and "is a symbolic link" in err and "refusing to write through it" in err
    assert victim.read_text() == "keep me"


def test_input_files_are_read_as_data_even_through_symlinks(tmp_path):
    """A model path that is a symlink to a system file is read and refused as a model, never
    run: the error names the file; nothing is written."""
    link = tmp_path / "m.toml"
    link.symlink_to("/etc/passwd")
    before = _tree(tmp_path)
    with pytest.raises(qnmodel.InvalidModelError, match=r"m\.toml"):
        qnmodel.load_model(link)
    assert _tree(tmp_path) == before


def test_a_model_file_has_no_key_that_names_a_command_or_an_output_path():
    from qnmodel.io.modelfile._fields import _MODEL_KEYS, _STATION_KEYS, _TOP_KEYS

    keys = {*_MODEL_KEYS, *_STATION_KEYS, *_TOP_KEYS}
    assert not keys & {"command", "cmd", "exec", "run", "script", "output", "out", "path", "file"}
    assert os.sep not in "".join(keys)
