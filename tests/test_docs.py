"""Every ```python snippet in docs/**/*.md runs, page by page, and its shown output matches.

One page is one session: its snippets run in order in one namespace, in a
fresh temporary working directory (so files a page writes do not leak).
A snippet whose lines start with ``>>>`` is checked as a doctest (the shown
output must match); any other ``python`` snippet is executed as a script and
must not raise. A snippet that cannot run here (it needs a device, a second
machine, ...) is preceded by the line ``<!-- docs-test: skip REASON -->``
with a reason; a skip marker without a reason is an error.

The strict build of the whole site, and the site in a browser, are in ``tests/test_site.py``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
_SNIPPETS = ROOT / "docs" / "_build" / "snippets.py"
_spec = importlib.util.spec_from_file_location("qnmodel_docs_snippets", _SNIPPETS)
docsnip = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = docsnip
_spec.loader.exec_module(docsnip)
FENCE, SKIP = docsnip.FENCE, docsnip.SKIP


def snippets(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, code, skip reason) of each ```python block of a Markdown page."""
    where = str(path.relative_to(ROOT))
    return [(s.line, s.code, s.skip) for s in docsnip.snippets(path.read_text("utf-8"), where)]


PAGES = sorted(p for p in DOCS.rglob("*.md") if any(r is None for _, _, r in snippets(p)))


def test_docs_have_snippets():
    assert len(PAGES) >= 5, PAGES


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_snippets_run(page):
    """One page, one session (docs/_build/snippets.py, which the site build also uses)."""
    ran = docsnip.run_page(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
    assert len(ran) > 0


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
    from qnmodel.io import modelfile

    page, line, body = block
    spec = modelfile.loads(body, source=f"{page.name}:{line}")
    assert spec.solve().to_frame()["throughput"].gt(0).all()


def test_skip_markers_have_reasons():
    for page in DOCS.rglob("*.md"):
        for line_no, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if "docs-test:" in line:
                m = SKIP.search(line)
                assert m and m.group("reason").strip(), f"{page}:{line_no}: {line!r}"


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


# -- statements that lagged the code (issue 26 item 10) -------------------------------------
@pytest.mark.parametrize(
    ("page", "stale", "current"),
    [
        ("explanation/open-and-mixed.md", "percentile targets, the command-line",
         "`qnmodel solve model.toml --target 'p95 <= 80 ms'`"),
        ("explanation/assumptions.md", "needs either\n  measurement or a distributional model",
         "An SLA on the 99th percentile is answered\n  from the response-time law"),
        ("explanation/assumptions.md", "the spread (percentiles) is not modelled at all",
         "the percentile laws assume exponential service"),
        ("explanation/fork-join.md", "fork-join, `fork_join` equals exact MVA.",
         "Not with a multi-server or\nrate-curve queue"),
        ("index.md", "models storage systems with closed queueing networks.",
         "closed (a fixed\nnumber of clients), open (an arrival rate) and mixed"),
    ],
)  # fmt: skip
def test_pages_state_what_the_code_does(page, stale, current):
    text = (DOCS / page).read_text(encoding="utf-8")
    assert stale not in text
    assert current in text


def test_what_the_pages_now_claim_holds():
    """The claims the pages above now make, checked on the code."""
    import qnmodel as qn
    from qnmodel.solvers.response_laws import response_time_law

    net = qn.Network.from_demands(["2 ms", "5 ms"])
    assert qn.max_arrival_rate(net, "p95 <= 30 ms") < qn.max_arrival_rate(net, "R <= 30 ms")
    assert response_time_law(net, arrival_rate=100).exact
    assert not response_time_law(net, N=4).exact
    two = qn.Network([qn.Station("cpu", "1 ms"), qn.Station("disk", "2 ms", servers=2)],
                     think_time="10 ms")  # fmt: skip
    fj, exact = qn.fork_join(two, 5).throughput[-1], qn.mva(two, 5).throughput[-1]
    assert fj / exact - 1 == pytest.approx(0.0102, abs=5e-4)  # 373.6 against 369.9
    assert "approximate" in qn.fork_join(two, 5).method
