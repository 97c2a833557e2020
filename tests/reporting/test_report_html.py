"""Reports open as one self-contained HTML page beside their Markdown (figures embedded)."""

from __future__ import annotations

import base64
import re

from qnmodel.io import modelfile
from qnmodel.reporting.html import markdown_to_html
from qnmodel.reporting.report import write_model_report


def test_model_report_has_a_self_contained_html_twin(tmp_path):
    spec = modelfile.loads(modelfile.DEMO_MODEL_TOML)
    paths = write_model_report(spec, tmp_path)
    page = paths["html"].read_text(encoding="utf-8")
    assert paths["html"].name == paths["markdown"].with_suffix(".html").name
    imgs = re.findall(r'<img src="data:image/png;base64,([^"]+)" alt="[^"]*"', page)
    assert len(imgs) == len(re.findall(r"!\[", paths["markdown"].read_text()))
    assert len(imgs) >= 1
    for data in imgs:  # the embedded bytes are the PNG files written beside it
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<table>" in page and "<th" in page and 'src="' not in page.replace('src="data:', "")
    md = paths["markdown"]
    md.with_name(md.stem + "_bounds.png").unlink()  # the page no longer needs the files
    assert base64.b64decode(imgs[0])[:4] == b"\x89PNG"


def test_markdown_subset_renders_and_escapes(tmp_path):
    text = (
        "# Title <x>\n\n* **MAPE**: 3 % and `code`\n* [link](https://example.org)\n\n"
        "| a | b |\n|--:|--:|\n| 1 | <2> |\n\n```\nraw <pre>\n```\nplain & text\n"
    )
    page = markdown_to_html(text, tmp_path)
    assert "<h1>Title &lt;x&gt;</h1>" in page and "<title>Title &lt;x&gt;</title>" in page
    assert "<li><strong>MAPE</strong>: 3 % and <code>code</code></li>" in page
    assert '<a href="https://example.org">link</a>' in page
    assert '<td style="text-align:right">&lt;2&gt;</td>' in page
    assert "<pre><code>raw &lt;pre&gt;\n</code></pre>" in page
    assert "<p>plain &amp; text</p>" in page
    # an image that is not a file beside the report is left as a reference, never read
    assert 'src="../../etc/passwd"' in markdown_to_html("![x](../../etc/passwd)", tmp_path)
