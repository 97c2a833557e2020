"""Every row of the bad-input catalogue (tests/bad_input/catalogue.py) gives its stated error,
and docs/reference/bad-input.md shows exactly that table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .catalogue import ROWS, WHERE, CommandFailed, error_class, markdown_table, row_id

DOC = Path(__file__).resolve().parents[2] / "docs" / "reference" / "bad-input.md"


@pytest.mark.parametrize("row", ROWS, ids=[row_id(i, r) for i, r in enumerate(ROWS)])
def test_bad_input_gives_a_clear_error(row, tmp_path):
    classes = tuple(error_class(n) for n in row.error.split("|"))
    with pytest.raises(classes) as info:
        row.run(tmp_path)
    msg = str(info.value)
    assert re.search(row.match, msg, flags=re.S), f"{row.input}: message {msg!r} does not match"
    assert "Traceback" not in msg
    if isinstance(info.value, CommandFailed):
        # one line on stderr, with the program's name, never a Python traceback
        assert msg.count("\n") <= 2, msg


def test_catalogue_has_at_least_100_rows_over_every_input_place():
    assert len(ROWS) >= 100
    assert {r.where for r in ROWS} == set(WHERE)
    assert len({(r.where, r.input) for r in ROWS}) == len(ROWS), "duplicate rows"


def test_docs_table_is_the_catalogue():
    text = DOC.read_text(encoding="utf-8")
    start = text.index("<!-- catalogue: start -->") + len("<!-- catalogue: start -->")
    end = text.index("<!-- catalogue: end -->")
    assert text[start:end].strip() == markdown_table().strip(), (
        "docs/reference/bad-input.md is out of date: regenerate its table with "
        "`.venv/bin/python tests/bad_input/render.py`"
    )
