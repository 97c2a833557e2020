"""Rewrite the table of docs/reference/bad-input.md from the catalogue.

Run ``.venv/bin/python tests/bad_input/render.py`` after changing ``catalogue.py``;
``test_catalogue.py::test_docs_table_is_the_catalogue`` fails until the two agree.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogue import markdown_table  # noqa: E402

DOC = Path(__file__).resolve().parents[2] / "docs" / "reference" / "bad-input.md"
START, END = "<!-- catalogue: start -->", "<!-- catalogue: end -->"


def main() -> None:
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{START}\n{markdown_table()}{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
