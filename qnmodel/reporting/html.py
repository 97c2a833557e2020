"""Reports as one self-contained HTML page: the Markdown of :mod:`qnmodel.reporting.report`, images
embedded, so a report can be mailed or opened without a Markdown viewer or its PNG files."""

from __future__ import annotations

import base64
import html
import os
import re
from pathlib import Path

__all__ = ["markdown_to_html", "write_html"]

_BULLET = re.compile(r"^\s*[*-]\s+")


_INLINE = (
    (re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)"), "img"),
    (re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)"), "link"),
    (re.compile(r"\*\*([^*]+)\*\*"), "strong"),
    (re.compile(r"`([^`]+)`"), "code"),
)
_HTML_STYLE = (
    "body{font-family:sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}"
    "table{border-collapse:collapse;font-size:.85rem}td,th{border:1px solid #ccc;padding:.2rem"
    " .5rem;text-align:right}th{background:#f3f3f3}pre{background:#f6f6f6;padding:.6rem;"
    "overflow-x:auto;font-size:.8rem}img{max-width:100%}code{background:#f3f3f3}"
)


def _embed(src: str, base: Path) -> str:
    """``src`` as a data URI when it names an image file beside the report."""
    path = base / src
    kinds = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg"}
    if "/" in src or ":" in src or path.suffix not in kinds or not path.is_file():
        return html.escape(src, quote=True)
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"data:{kinds[path.suffix]};base64,{data}"


def _inline(text: str, base: Path) -> str:
    """Escape a line of Markdown text and render its images, links, bold and code spans."""
    out, pos = [], 0
    spans = []
    for rx, kind in _INLINE:
        spans += [(m.start(), m.end(), kind, m) for m in rx.finditer(text)]
    spans.sort(key=lambda s: (s[0], -s[1]))
    for start, end, kind, m in spans:
        if start < pos:
            continue  # inside an earlier span (an image is also a link's shape)
        out.append(html.escape(text[pos:start]))
        if kind == "img":
            out.append(f'<img alt="{html.escape(m[1])}" src="{_embed(m[2], base)}">')
        elif kind == "link":
            out.append(f'<a href="{html.escape(m[2], quote=True)}">{html.escape(m[1])}</a>')
        else:
            out.append(f"<{kind}>{html.escape(m[1])}</{kind}>")
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out)


def markdown_to_html(text: str, base_dir: str | os.PathLike = ".", title: str = "") -> str:
    """One HTML page from a report written by this module, its images embedded.

    Renders the Markdown these writers produce (headings, bullet lists, pipe tables,
    fenced code, images, links, bold and code spans); images named relative to
    ``base_dir`` become data URIs, so the page can be mailed or opened alone.
    """
    base = Path(base_dir)
    lines = text.splitlines()
    body: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            body.append("<pre>" + html.escape("\n".join(lines[i + 1 : j])) + "</pre>")
            i = j + 1
        elif m := re.match(r"^(#{1,6})\s+(.*)$", line):
            n = len(m[1])
            body.append(f"<h{n}>{_inline(m[2], base)}</h{n}>")
            title = title or m[2]
            i += 1
        elif _BULLET.match(line):
            items = []
            while i < len(lines) and _BULLET.match(lines[i]):
                items.append(f"<li>{_inline(_BULLET.sub('', lines[i]), base)}</li>")
                i += 1
            body.append("<ul>" + "".join(items) + "</ul>")
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            head, rest = rows[0], [r for r in rows[1:] if not all(set(c) <= set("-:") for c in r)]
            th = "".join(f"<th>{_inline(c, base)}</th>" for c in head)
            trs = "".join(
                "<tr>" + "".join(f"<td>{_inline(c, base)}</td>" for c in r) + "</tr>" for r in rest
            )
            body.append(f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>")
        elif line.strip():
            para = []
            while (
                i < len(lines)
                and lines[i].strip()
                and not re.match(r"^(#|```|\||\s*[*-]\s)", lines[i])
            ):
                para.append(_inline(lines[i], base))
                i += 1
            body.append("<p>" + "\n".join(para) + "</p>")
        else:
            i += 1
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title or 'qnmodel report')}</title>"
        f"<style>{_HTML_STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def write_html(markdown_path: str | os.PathLike) -> Path:
    """Write ``<stem>.html`` beside a Markdown report: one self-contained file."""
    md = Path(markdown_path)
    page = markdown_to_html(md.read_text(encoding="utf-8"), md.parent)
    out = md.with_suffix(".html")
    out.write_text(page, encoding="utf-8")
    return out
