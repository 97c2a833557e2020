"""Build hooks of the documentation site (``hooks:`` in mkdocs.yml).

* Every notebook of ``notebooks/`` becomes a page (rendered and executed at build by
  mkdocs-jupyter), so the site and the notebooks never disagree; the repository keeps them
  output-free.
* Every Python snippet of a page runs at build (one session per page, see
  :mod:`snippets`), and each figure a snippet draws is put on the page right under it:
  the pictures are drawn by the library at build time, never pasted.
* ``<!-- gallery -->`` in a page is replaced by the gallery of :mod:`gallery`: one small
  figure per entry, drawn at build, each linking to the code that drew it.
"""

from __future__ import annotations

import base64
import html
import importlib.util
import posixpath
import re
import sys
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NOTEBOOKS = ROOT / "notebooks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"qnmodel_docs_{name}", HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


snippets = _load("snippets")


def _check_installed() -> None:
    """The pages must show what the installed package draws, not a source-tree import."""
    import qnmodel

    where = Path(qnmodel.__file__).resolve().parent
    if where == (ROOT / "qnmodel").resolve():
        raise RuntimeError(
            f"the docs build imported qnmodel from the source tree ({where}); build with the "
            "installed package: `make docs`"
        )


def on_config(config):
    _check_installed()
    return config


@event_priority(100)  # before mkdocs-jupyter decides which files are notebooks
def on_files(files, config):
    for nb in sorted(NOTEBOOKS.glob("*.ipynb")):
        files.append(
            File(
                f"notebooks/{nb.name}",
                str(ROOT),
                config["site_dir"],
                config["use_directory_urls"],
            )
        )
    return files


def _img(png: bytes, alt: str, cls: str = "qn-figure") -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="{cls}" alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _with_figures(markdown: str, where: str) -> str:
    """The page with each snippet's figures inserted under the snippet."""
    ran = snippets.run_page(markdown, where)
    out, pos = [], 0
    for r in ran:
        if not r.figures:
            continue
        out.append(markdown[pos : r.snippet.end])
        pos = r.snippet.end
        ind = r.snippet.indent
        for i, png in enumerate(r.figures, 1):
            alt = f"Figure {i} drawn by the snippet at line {r.snippet.line}"
            out.append(f"\n\n{ind}<figure markdown>\n{ind}{_img(png, alt)}\n{ind}</figure>\n")
    out.append(markdown[pos:])
    return "".join(out)


def _gallery_html() -> str:
    gallery = _load("gallery")
    cells = []
    for entry in gallery.ENTRIES:
        png = gallery.draw(entry)
        cells.append(
            f'<div class="qn-gallery-cell"><a href="#{entry.anchor}">'
            f"{_img(png, entry.title, 'qn-gallery-img')}</a>"
            f'<p><a href="#{entry.anchor}">{html.escape(entry.title)}</a></p></div>'
        )
    return '<div class="qn-gallery">\n' + "\n".join(cells) + "\n</div>\n"


FIGURE = re.compile(r"<!--\s*figure:\s*(?P<name>\w+)\s*-->")


def _one_figure(m: re.Match, src_uri: str) -> str:
    """``<!-- figure: NAME -->``: the gallery entry NAME, linked to its code."""
    gallery = _load("gallery")
    entry = {e.name: e for e in gallery.ENTRIES}[m.group("name")]
    data = base64.b64encode(gallery.draw(entry, dpi=90)).decode("ascii")
    link = posixpath.relpath("gallery.md", posixpath.dirname(src_uri) or ".")
    return f"[![{entry.title}](data:image/png;base64,{data})]({link}#{entry.anchor})"


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri.endswith(".ipynb"):
        return markdown
    if "<!-- gallery -->" in markdown:
        markdown = markdown.replace("<!-- gallery -->", _gallery_html())
    markdown = FIGURE.sub(lambda m: _one_figure(m, page.file.src_uri), markdown)
    if any(s.skip is None for s in snippets.snippets(markdown, page.file.src_uri)):
        markdown = _with_figures(markdown, f"docs/{page.file.src_uri}")
    return markdown
