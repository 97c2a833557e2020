"""Where outputs go: a directory created one level at most, a file never written through a
symbolic link.

A path typed by a person (``--out``) or built from a model's name is checked here, once,
before anything is written: a typo must not grow a tree of directories somewhere
unexpected, and a link planted where an output file goes must not redirect the write to
the file it points to.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from ..errors import InvalidModelError

__all__ = ["open_output", "output_directory", "refuse_symlinks"]


def refuse_symlinks(paths: Sequence[Path]) -> None:
    """Refuse to write through a symbolic link planted where an output file goes: it would
    overwrite whatever file the link points to, outside the output directory."""
    for p in paths:
        p = Path(p)
        if p.is_symlink():
            raise InvalidModelError(
                f"{p} is a symbolic link (to {os.readlink(p)!r}): refusing to write through it; "
                "remove it or write the report to another directory"
            )


def output_directory(path: str | os.PathLike, option: str = "--out") -> Path:
    """The directory outputs go into, created when only its last level is missing.

    Parameters
    ----------
    path : path
        The directory (for an output file: the file's parent).
    option : str
        How the person gave it, for the messages (``"--out"``).

    Raises
    ------
    FileNotFoundError
        Its parent directory does not exist (named, with the fix): only the last level is
        ever created, so a mistyped path cannot grow a tree of directories.
    NotADirectoryError
        It exists and is not a directory.
    """
    p = Path(path)
    if p.is_dir():
        return p
    if p.exists() or p.is_symlink():
        raise NotADirectoryError(f"{option} {str(p)!r}: exists and is not a directory")
    parent = p.parent
    if not parent.is_dir():
        raise FileNotFoundError(
            f"{option} {str(p)!r}: the directory {str(parent)!r} does not exist; create it "
            "first (only the last level of an output directory is created)"
        )
    p.mkdir()
    return p


def open_output(path: str | os.PathLike) -> IO[bytes]:
    """Open ``path`` to write it from the start, never through a symbolic link.

    A link at ``path`` is refused with :func:`refuse_symlinks`'s message; the file is then
    opened with ``O_NOFOLLOW``, so a link planted between the check and the write is
    refused too (``ELOOP``) instead of followed.
    """
    p = Path(path)
    refuse_symlinks([p])
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(p, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_symlinks([p])
        raise
    return os.fdopen(fd, "wb")
