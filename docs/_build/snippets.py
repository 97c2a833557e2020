"""The Python snippets of a documentation page: found, run and their figures kept.

One home for what the docs build (``docs/_build/hooks.py``, which puts every figure a
snippet draws on the page under it) and the test suite (``tests/test_docs.py``, which checks
that every snippet runs and every shown doctest output matches) both need.

A page is one session: its snippets run in order in one namespace, in a fresh temporary
working directory. A snippet whose lines start with ``>>>`` is a doctest (the shown output
must match); any other ``python`` snippet runs as a script. A snippet that cannot run here
is preceded by ``<!-- docs-test: skip REASON -->`` (the reason is required).
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S
)
SKIP = re.compile(r"<!--\s*docs-test:\s*skip(?P<reason>[^>]*?)-->\s*$")
LANGUAGES = ("python", "py", "pycon")


@dataclass
class Snippet:
    """One fenced Python block of a page."""

    line: int  # 1-based line of the opening fence
    code: str  # dedented body
    skip: str | None  # the skip marker's reason, or None
    start: int  # character offsets of the whole fence in the page text
    end: int
    indent: str


@dataclass
class Ran:
    """What running one snippet produced."""

    snippet: Snippet
    figures: list[bytes] = field(default_factory=list)  # PNG images, in drawing order


class SnippetError(AssertionError):
    """A snippet raised or a doctest's shown output did not match."""


def snippets(text: str, where: str = "<page>") -> list[Snippet]:
    """The ```python / ```pycon blocks of a Markdown text, in order."""
    out = []
    for m in FENCE.finditer(text):
        info = m.group("info").strip().split()
        if not info or info[0] not in LANGUAGES:
            continue
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip("\n").splitlines()
        reason = None
        if before:
            s = SKIP.search(before[-1])
            if s:
                reason = s.group("reason").strip()
                if not reason:
                    raise SnippetError(f"{where}:{line}: docs-test skip marker needs a reason")
        indent = m.group("indent")
        if "--8<--" in m.group("body"):  # a file included at render time, run where it lives
            reason = reason or "includes a source file (pymdownx.snippets)"
        body = "\n".join(
            ln[len(indent) :] if ln.startswith(indent) else ln
            for ln in m.group("body").splitlines()
        )
        out.append(Snippet(line, body + "\n", reason, m.start(), m.end(), indent))
    return out


@contextlib.contextmanager
def page_session() -> Iterator[dict]:
    """A fresh namespace, run in a temporary directory with a non-interactive backend."""
    import matplotlib

    matplotlib.use("Agg")
    old_cwd = Path.cwd()
    old_env = {k: os.environ.get(k) for k in ("MPLBACKEND", "QNMODEL_EXAMPLES")}
    with tempfile.TemporaryDirectory(prefix="qnmodel-docs-") as tmp:
        os.chdir(tmp)
        os.environ["MPLBACKEND"] = "Agg"
        os.environ["QNMODEL_EXAMPLES"] = str(ROOT / "examples")
        try:
            yield {"__name__": "__docs__"}
        finally:
            os.chdir(old_cwd)
            for k, v in old_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            import matplotlib.pyplot as plt

            plt.close("all")


def _new_figures(before: set[int], dpi: int) -> list[bytes]:
    import matplotlib.pyplot as plt

    out = []
    for num in plt.get_fignums():
        if num in before:
            continue
        fig = plt.figure(num)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
        out.append(buf.getvalue())
        plt.close(fig)
    return out


def run_page(text: str, where: str, *, dpi: int = 90) -> list[Ran]:
    """Run every snippet of a page in one session; return each one's new figures.

    Raises :class:`SnippetError` naming ``where`` and the line of the first snippet that
    raised or whose doctest output did not match. Skipped snippets are not run.
    """
    import matplotlib.pyplot as plt

    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    results = []
    with page_session() as namespace:
        for snip in snippets(text, where):
            if snip.skip is not None:
                continue
            at = f"{where}:{snip.line}"
            before = set(plt.get_fignums())
            if snip.code.lstrip().startswith(">>>"):
                test = parser.get_doctest(snip.code, namespace, at, where, snip.line)
                out: list[str] = []
                result = runner.run(test, out=out.append, clear_globs=False)
                namespace.update(test.globs)  # DocTest works on a copy of the globals
                if result.failed:
                    raise SnippetError(f"doctest failed at {at}:\n" + "".join(out))
            else:
                try:
                    with contextlib.redirect_stdout(io.StringIO()):  # the page shows its own
                        exec(compile(snip.code, at, "exec"), namespace)
                except Exception as exc:  # noqa: BLE001 - report the page and line
                    raise SnippetError(f"snippet at {at} raised {exc!r}") from exc
            results.append(Ran(snip, _new_figures(before, dpi)))
    return results
