"""What every part of the ``qnmodel`` command shares and ``--version`` needs: the program name,
the exit codes, the usage error. Standard library only: the command answers ``--version``
and reports a usage error without loading numpy."""

from __future__ import annotations

import argparse

__all__ = ["PROG", "EXIT_OK", "EXIT_FAILURE", "EXIT_USAGE", "UsageError", "_Parser"]

PROG = "qnmodel"
EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A command-line mistake: exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")
