"""Run the ``qnmodel`` command in-process, as the CLI tests do: exit code, stdout, stderr."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from qnmodel import cli


def run(*argv: str) -> tuple[int, str, str]:
    """``qnmodel ARGV...`` through :func:`qnmodel.cli.main`: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()
