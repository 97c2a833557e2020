"""Every ```python snippet in docs/**/*.md runs, page by page, and its shown output matches.

One page is one session: its snippets run in order in one namespace, in a
fresh temporary working directory (so files a page writes do not leak).
A snippet whose lines start with ``>>>`` is checked as a doctest (the shown
output must match); any other ``python`` snippet is executed as a script and
must not raise. A snippet that cannot run here (it needs a device, a second
machine, ...) is preceded by the line ``<!-- docs-test: skip REASON -->``
with a reason; a skip marker without a reason is an error.

Checks that the docs build (``mkdocs build --strict``) live in the same file,
marked ``slow``-free but skipped with a reason when mkdocs is not installed.
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S
)
SKIP = re.compile(r"<!--\s*docs-test:\s*skip(?P<reason>[^>]*?)-->\s*$")


def snippets(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, code, skip reason) of each ```python block of a Markdown page."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        info = m.group("info").strip().split()
        if not info or info[0] not in ("python", "py", "pycon"):
            continue
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip("\n").splitlines()
        reason = None
        if before:
            s = SKIP.search(before[-1])
            if s:
                reason = s.group("reason").strip()
                if not reason:
                    raise AssertionError(f"{path}:{line}: docs-test skip marker needs a reason")
        indent = m.group("indent")
        body = "\n".join(
            ln[len(indent) :] if ln.startswith(indent) else ln
            for ln in m.group("body").splitlines()
        )
        out.append((line, body + "\n", reason))
    return out


PAGES = sorted(p for p in DOCS.rglob("*.md") if snippets(p))


def test_docs_have_snippets():
    assert len(PAGES) >= 5, PAGES


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_snippets_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("QNMODEL_EXAMPLES", str(ROOT / "examples"))
    namespace: dict = {"__name__": "__docs__"}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    ran = 0
    for line, code, reason in snippets(page):
        if reason is not None:
            continue
        where = f"{page.relative_to(ROOT)}:{line}"
        if code.lstrip().startswith(">>>"):
            test = parser.get_doctest(code, namespace, where, str(page), line)
            out: list[str] = []
            result = runner.run(test, out=out.append, clear_globs=False)
            namespace.update(test.globs)  # DocTest works on a copy of the globals
            assert result.failed == 0, f"doctest failed at {where}:\n" + "".join(out)
        else:
            try:
                exec(compile(code, where, "exec"), namespace)
            except Exception as exc:  # noqa: BLE001 - report the page and line
                raise AssertionError(f"snippet at {where} raised {exc!r}") from exc
        ran += 1
    assert ran > 0
    import matplotlib.pyplot as plt

    plt.close("all")


def toml_models() -> list[tuple[Path, int, str]]:
    """```toml blocks that hold a whole model file (they have a [model] table)."""
    out = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            body = m.group("body")
            if m.group("info").strip() == "toml" and "[model]" in body and "--8<--" not in body:
                out.append((page, text.count("\n", 0, m.start()) + 1, body))
    return out


@pytest.mark.parametrize("block", toml_models(), ids=lambda b: f"{b[0].relative_to(DOCS)}:{b[1]}")
def test_toml_model_snippets_are_valid(block):
    from qnmodel import modelfile

    page, line, body = block
    spec = modelfile.loads(body, source=f"{page.name}:{line}")
    assert spec.solve().to_frame()["throughput"].gt(0).all()


def test_skip_markers_have_reasons():
    for page in DOCS.rglob("*.md"):
        for line_no, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if "docs-test:" in line:
                m = SKIP.search(line)
                assert m and m.group("reason").strip(), f"{page}:{line_no}: {line!r}"


def test_mkdocs_build_strict(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    if mkdocs is None:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail("mkdocs is not installed under CI: install the 'docs' extra")
        pytest.skip(
            "mkdocs not installed (pip install 'qnmodel[docs]'); the docs build is unchecked"
        )
    # No --quiet: it raises the log level above WARNING, and mkdocs' strict mode then
    # never sees the warnings it should turn into a failure.
    proc = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("WARNING")]
    assert proc.returncode == 0 and not warnings, "\n".join(warnings) or proc.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "reference" / "api" / "index.html").exists()


def _shell_commands(text: str) -> list[str]:
    """The `qnmodel ...` commands of a text: `$ `-prompted or bare, continuations joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    cmds = []
    for line in joined.splitlines():
        line = line.strip()
        line = line[2:] if line.startswith("$ ") else line
        if line.startswith("qnmodel "):
            cmds.append(line)
    return cmds


def _documented_commands() -> list[tuple[str, str]]:
    from qnmodel import cli

    out = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            if m.group("info").strip().split()[:1] in (["console"], ["sh"], ["bash"]):
                out += [(str(page.relative_to(ROOT)), c) for c in _shell_commands(m.group("body"))]
    for name, epilog in cli._EPILOGS.items():
        out += [(f"qnmodel {name} --help", c) for c in _shell_commands(epilog)]
    return out


DOCUMENTED_COMMANDS = _documented_commands()


def test_documented_commands_are_found():
    where = {w for w, _ in DOCUMENTED_COMMANDS}
    assert len(DOCUMENTED_COMMANDS) >= 25
    assert "docs/how-to/command-line.md" in where and "qnmodel bench --help" in where


@pytest.mark.parametrize(
    "where, command", DOCUMENTED_COMMANDS, ids=[c for _, c in DOCUMENTED_COMMANDS]
)
def test_documented_commands_parse(where, command):
    """Every `qnmodel ...` line of the docs and of the --help examples is a valid command
    line (options and arguments as the parser knows them today), so a renamed option
    cannot survive in the documentation."""
    import shlex

    from qnmodel import cli

    argv = []
    for tok in shlex.split(command, comments=True)[1:]:
        if tok in (">", "|", "&&", ";") or tok.startswith(">"):
            break  # the shell's business from here on
        argv.append(tok)
    try:
        cli.build_parser().parse_args(argv)
    except cli.UsageError as exc:
        pytest.fail(f"{where}: {command!r}: {exc}")
