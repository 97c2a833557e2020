"""Issue 29, planted outputs: every file qnmodel writes goes through ``qnmodel._files``, which
refuses a symbolic link or a non-regular file where an output goes (also the sibling outputs,
such as ``plot``'s ``_utilization.png``), refuses a symlinked output directory, checks before
the run, and writes through a new file renamed into place, so a planted link's target is never
overwritten.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import qnmodel as qn
from qnmodel._files import check_output, open_output, output_dir, save_figure, write_output
from qnmodel.cli import main
from qnmodel.errors import InvalidModelError

MODEL = """\
[model]
name = "m"
think_time = "1 s"
N = 3

[[station]]
name = "disk"
demand = "10 ms"
"""


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    v = tmp_path / "victim.txt"
    v.write_text("keep me")
    return v


@pytest.fixture
def model(tmp_path: Path) -> Path:
    m = tmp_path / "m.toml"
    m.write_text(MODEL)
    return m


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = main(["-q", *argv])
    return code, capsys.readouterr().err


def _refused(code: int, err: str, path: Path) -> None:
    assert code == 1, err
    assert f"output {str(path)!r} is a symbolic link" in err, err
    assert "refusing to write through it" in err


# -- the helper itself -----------------------------------------------------------------------------
def test_write_output_refuses_a_planted_link_and_leaves_its_target(tmp_path, victim):
    link = tmp_path / "o.json"
    link.symlink_to(victim)
    with pytest.raises(InvalidModelError, match=r"o\.json' is a symbolic link \(to '.*victim"):
        write_output(link, "{}")
    assert victim.read_text() == "keep me"
    assert link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.json", "victim.txt"]  # no temp left


def test_a_dangling_link_is_refused_and_nothing_is_created_at_its_target(tmp_path):
    link = tmp_path / "o.png"
    link.symlink_to(tmp_path / "elsewhere.png")
    with pytest.raises(InvalidModelError, match="is a symbolic link"):
        write_output(link, b"png")
    assert not (tmp_path / "elsewhere.png").exists()


def test_a_link_planted_while_writing_is_never_written_through(tmp_path, victim):
    target = tmp_path / "o.md"
    with pytest.raises(InvalidModelError, match="is a symbolic link"):
        with open_output(target) as fh:
            target.symlink_to(victim)  # the race: planted between the check and the rename
            fh.write("report")
    assert victim.read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_non_regular_targets_are_refused(tmp_path, kind):
    p = tmp_path / "o.csv"
    if kind == "directory":
        p.mkdir()
        match = r"o\.csv' is a directory"
    else:
        os.mkfifo(p)  # opening it for writing would block forever
        match = r"o\.csv' is not a regular file"
    with pytest.raises(InvalidModelError, match=match):
        write_output(p, "x")


def test_a_regular_file_is_replaced_with_the_umask_mode(tmp_path):
    p = tmp_path / "o.txt"
    p.write_text("old")
    write_output(p, "new")
    assert p.read_text() == "new"
    umask = os.umask(0)
    os.umask(umask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~umask


def test_an_error_while_writing_keeps_the_old_file_and_no_temporary(tmp_path):
    p = tmp_path / "o.txt"
    p.write_text("old")
    with pytest.raises(RuntimeError):
        with open_output(p) as fh:
            fh.write("half")
            raise RuntimeError("boom")
    assert p.read_text() == "old"
    assert [q.name for q in tmp_path.iterdir()] == ["o.txt"]


def test_output_dir_refuses_a_symlinked_directory_and_a_file(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "out").symlink_to(real, target_is_directory=True)
    with pytest.raises(InvalidModelError, match=r"output directory .*out' is a symbolic link"):
        output_dir(tmp_path / "out")
    (tmp_path / "f").write_text("")
    with pytest.raises(InvalidModelError, match=r"f' exists and is not a directory"):
        output_dir(tmp_path / "f")
    assert output_dir(tmp_path / "a" / "b").is_dir()


def test_save_figure_refuses_a_link(tmp_path, victim):
    from matplotlib.figure import Figure

    link = tmp_path / "f.png"
    link.symlink_to(victim)
    with pytest.raises(InvalidModelError, match="is a symbolic link"):
        save_figure(Figure(), link)
    assert victim.read_text() == "keep me"
    save_figure(Figure(), tmp_path / "g.svg")
    assert (tmp_path / "g.svg").read_text().lstrip().startswith("<?xml")


def test_check_output_accepts_new_and_regular_paths(tmp_path):
    assert check_output(tmp_path / "new.json") == tmp_path / "new.json"


# -- every command ---------------------------------------------------------------------------------
def test_plot_out_link_is_refused(tmp_path, victim, model, capsys):
    link = tmp_path / "o.png"
    link.symlink_to(victim)
    code, err = _run(capsys, "plot", str(model), "--out", str(link))
    _refused(code, err, link)
    assert victim.read_text() == "keep me"


def test_plot_utilization_sibling_link_is_refused_before_anything_is_written(
    tmp_path, victim, model, capsys
):
    out = tmp_path / "o.png"
    sibling = tmp_path / "o_utilization.png"
    sibling.symlink_to(victim)
    code, err = _run(capsys, "plot", str(model), "--utilization", "--out", str(out))
    _refused(code, err, sibling)
    assert victim.read_text() == "keep me"
    assert not out.exists()  # checked before the first figure


def test_plot_writes_both_figures_when_nothing_is_planted(tmp_path, model, capsys):
    out = tmp_path / "sub" / "o.png"
    code, err = _run(capsys, "plot", str(model), "--utilization", "--out", str(out))
    assert code == 0, err
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "sub" / "o_utilization.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_out_link_is_refused_before_the_run(tmp_path, victim, capsys, monkeypatch):
    def no_run(*a, **k):
        raise AssertionError("qnbench ran although --out was refused")

    monkeypatch.setattr(qn.bench, "run", no_run)
    link = tmp_path / "b.json"
    link.symlink_to(victim)
    code, err = _run(capsys, "bench", "null", "--out", str(link))
    _refused(code, err, link)
    assert victim.read_text() == "keep me"


def test_bench_out_directory_is_refused_before_the_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(qn.bench, "run", lambda *a, **k: pytest.fail("ran"))
    code, err = _run(capsys, "bench", "null", "--out", str(tmp_path))
    assert code == 1 and f"output {str(tmp_path)!r} is a directory" in err


def test_trace_save_refuses_a_link(tmp_path, victim):
    from qnmodel.bench.trace import BenchTrace

    link = tmp_path / "t.json"
    link.symlink_to(victim)
    trace = BenchTrace.__new__(BenchTrace)
    object.__setattr__(trace, "document", {"schema": "qnbench"})
    with pytest.raises(InvalidModelError, match="is a symbolic link"):
        trace.save(link)
    assert victim.read_text() == "keep me"


@pytest.mark.parametrize("name", ["check.md", "check.png", "check.html"])
def test_check_out_dir_with_a_planted_link_is_refused_before_measuring(
    tmp_path, victim, capsys, name
):
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(victim)
    # the measured file does not exist: the refusal comes first, before any work
    code, err = _run(capsys, "check", "--measured", str(tmp_path / "none.json"), "--out", str(out))
    _refused(code, err, out / name)
    assert victim.read_text() == "keep me"


@pytest.mark.parametrize("name", ["report.md", "report.png", "report.html"])
def test_calibrate_out_dir_with_a_planted_link_is_refused_before_reading(
    tmp_path, victim, capsys, name
):
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(victim)
    code, err = _run(capsys, "calibrate", "a.json", "b.json", "--out", str(out))
    _refused(code, err, out / name)
    assert victim.read_text() == "keep me"


def test_report_into_a_symlinked_directory_is_refused(tmp_path, model, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.symlink_to(elsewhere, target_is_directory=True)
    code, err = _run(capsys, "report", str(model), "--out", str(out))
    assert code == 1 and "output directory" in err and "is a symbolic link" in err
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("name", ["m.html", "m_utilization.png", "m.json"])
def test_report_refuses_each_planted_sibling(tmp_path, victim, model, capsys, name):
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(victim)
    code, err = _run(capsys, "report", str(model), "--out", str(out))
    _refused(code, err, out / name)
    assert victim.read_text() == "keep me"


def test_write_report_api_refuses_a_planted_link(tmp_path, victim):
    from qnmodel.reporting.report import write_check_report

    out = tmp_path / "out"
    out.mkdir()
    (out / "check.png").symlink_to(victim)
    with pytest.raises(InvalidModelError, match="is a symbolic link"):
        write_check_report(object(), out)
    assert victim.read_text() == "keep me"


def test_validate_refuses_a_planted_summary_before_running(tmp_path, victim, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").symlink_to(victim)
    study = tmp_path / "s.toml"
    study.write_text('[study]\nkind = "raid"\n')
    code, err = _run(capsys, "validate", str(study), "--out", str(out))
    _refused(code, err, out / "report.md")
    assert victim.read_text() == "keep me"


@pytest.mark.parametrize("writer", ["jmva", "line"])
def test_model_exporters_refuse_a_link(tmp_path, victim, writer):
    from qnmodel.io.jmva import write_jmva
    from qnmodel.io.linejson import write_line_json

    net = qn.Network.from_demands([0.01], think_time=1.0)
    link = tmp_path / "m.out"
    link.symlink_to(victim)
    with pytest.raises(InvalidModelError, match="is a symbolic link"):
        (write_jmva if writer == "jmva" else write_line_json)(net, link, 3)
    assert victim.read_text() == "keep me"


def test_no_writer_outside_the_one_home():
    """Every output file goes through qnmodel._files: no other module writes files directly."""
    import re

    root = Path(qn.__file__).resolve().parent
    direct = re.compile(r"\.write_text\(|\.savefig\(\s*(?!fh|buf)|\.to_csv\(\s*(?!fh|stream)")
    allowed = {  # not outputs: kernel files, cgroup knobs, testbed config, a state file
        "lab/testbed/services.py",
        "lab/testbed/lifecycle.py",
        "whatif/widgets.py",
        "reporting/report.py",  # write_csv(frame, stream) writes into open_output's stream
    }
    found = []
    for p in sorted(root.rglob("*.py")):
        rel = str(p.relative_to(root))
        if rel in allowed or rel == "_files.py":
            continue
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if direct.search(line):
                found.append(f"{rel}:{i}: {line.strip()}")
    assert not found, found


def test_bench_out_in_a_missing_directory_is_created_before_the_run(tmp_path, capsys, monkeypatch):
    class Trace:
        document = {"schema": "qnbench"}

        def save(self, path):
            return write_output(path, "{}\n")

        def to_frame(self):
            import pandas as pd

            return pd.DataFrame({"point": [], "jobs": []})

    seen = []

    def run(*a, **k):
        seen.append((tmp_path / "new" / "dir").is_dir())  # created before the run
        return Trace()

    monkeypatch.setattr(qn.bench, "run", run)
    out = tmp_path / "new" / "dir" / "b.json"
    code, err = _run(capsys, "bench", "null", "--out", str(out), "--format", "json")
    assert code == 0, err
    assert seen == [True] and out.read_text() == "{}\n"


def test_demo_checks_all_its_outputs_before_measuring(tmp_path, victim, monkeypatch):
    from qnmodel.lab.demo import run_demo

    monkeypatch.setattr(qn.bench, "run", lambda *a, **k: pytest.fail("measured"))
    out = tmp_path / "out"
    out.mkdir()
    (out / "closed_loop.json").symlink_to(victim)
    with pytest.raises(InvalidModelError, match=r"closed_loop\.json' is a symbolic link"):
        run_demo(out, progress=False)
    assert victim.read_text() == "keep me"


def test_a_planted_hard_link_keeps_its_other_name_intact(tmp_path, victim):
    """A hard link cannot be told from a file, but the rename replaces the directory entry:
    the victim's data is never written."""
    out = tmp_path / "o.json"
    os.link(victim, out)
    write_output(out, "{}")
    assert out.read_text() == "{}" and victim.read_text() == "keep me"
