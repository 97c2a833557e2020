"""Reports as one self-contained HTML page: the Markdown of :mod:`qnmodel.reporting.report`, images
embedded, so a report can be mailed or opened without a Markdown viewer or its PNG files."""

from __future__ import annotations

import base64
import html
import os
from pathlib import Path

from .._files import write_output

__all__ = ["markdown_to_html", "write_html"]

_HTML_STYLE = (
    "body{font-family:sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}"
    "table{border-collapse:collapse;font-size:.85rem}td,th{border:1px solid #ccc;padding:.2rem"
    " .5rem;text-align:right}th{background:#f3f3f3}pre{background:#f6f6f6;padding:.6rem;"
    "overflow-x:auto;font-size:.8rem}img{max-width:100%}code{background:#f3f3f3}"
)


def _embed(src: str, base: Path) -> str:
    """``src`` as a data URI when it names an image file beside the report (the renderer
    escapes the attribute)."""
    path = base / src
    kinds = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg"}
    if (
        "/" in src
        or ":" in src
        or path.suffix not in kinds
        or not path.is_file()
        or (path.is_symlink())
    ):
        return src
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"data:{kinds[path.suffix]};base64,{data}"


def markdown_to_html(text: str, base_dir: str | os.PathLike = ".", title: str = "") -> str:
    """One HTML page from a Markdown report, its images embedded.

    Rendered by markdown-it-py (CommonMark with pipe tables), with raw HTML escaped rather
    than passed through and links of unsafe schemes (``javascript:``, ``vbscript:``,
    ``file:``, ``data:`` other than images) not made live; images named relative to
    ``base_dir`` become data URIs, so the page can be mailed or opened alone. The title is
    the first heading unless ``title`` is given.
    """
    from markdown_it import MarkdownIt

    base = Path(base_dir)
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    for tok in tokens:
        for child in tok.children or ():
            if child.type == "image":
                child.attrSet("src", _embed(str(child.attrGet("src") or ""), base))
    if not title:
        for a, b in zip(tokens, tokens[1:], strict=False):
            if a.type == "heading_open" and b.type == "inline":
                title = b.content
                break
    body = md.renderer.render(tokens, md.options, {})
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title or 'qnmodel report')}</title>"
        f"<style>{_HTML_STYLE}</style></head><body>\n" + body + "\n</body></html>\n"
    )


def write_html(markdown_path: str | os.PathLike) -> Path:
    """Write ``<stem>.html`` beside a Markdown report: one self-contained file."""
    md = Path(markdown_path)
    page = markdown_to_html(md.read_text(encoding="utf-8"), md.parent)
    return write_output(md.with_suffix(".html"), page)
