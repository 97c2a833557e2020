"""The one home for writing output files: every file qnmodel writes (reports, figures, traces,
summaries, exported models) goes through :func:`write_output`, :func:`open_output` or
:func:`save_figure`.

The promises (``docs/reference/bad-input.md``, "Safety"): outputs go only where ``--out``
says, and nothing planted there is followed.

* A symbolic link where an output file goes is refused (it would overwrite whatever the link
  points to, outside the output directory), as is anything there that is not a regular file
  (a directory, a FIFO that would block the writer, a device).
* The data is written to a new file created in the same directory with ``O_CREAT | O_EXCL |
  O_NOFOLLOW`` (so it can be neither a planted link nor an existing file) and then renamed over
  the target with :func:`os.replace`. A rename replaces a directory entry and never writes
  through it: even a link planted between the check and the rename is replaced, its target
  untouched. A reader never sees a half-written file.
* :func:`check_outputs` runs the same checks up front, so a command refuses a bad ``--out``
  before a run whose results it could not save.
* :func:`output_dir` creates the output directory (and only it and its missing parents) and
  refuses one that is a symbolic link or not a directory.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from .errors import InvalidModelError

__all__ = [
    "check_output",
    "check_output_dir",
    "check_outputs",
    "open_output",
    "output_dir",
    "output_directory",
    "save_figure",
    "write_output",
]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def check_output(path: str | os.PathLike) -> Path:
    """Refuse an output path that is a symbolic link or an existing non-regular file.

    Returns the path. A path that does not exist yet, or is a regular file (overwritten), is
    accepted.
    """
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return p
    except OSError as exc:
        raise InvalidModelError(f"output {str(p)!r}: cannot check it ({exc.strerror})") from None
    if stat.S_ISLNK(st.st_mode):
        try:
            to = os.readlink(p)
        except OSError:
            to = "?"
        raise InvalidModelError(
            f"output {str(p)!r} is a symbolic link (to {to!r}): refusing to write through it; "
            "remove the link or write to another path"
        )
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise InvalidModelError(
            f"output {str(p)!r} is {kind}: an output must be a regular file or a new name"
        )
    return p


def check_outputs(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """:func:`check_output` of each path (all checked before anything is written)."""
    return [check_output(p) for p in paths]


def check_output_dir(path: str | os.PathLike, names: Iterable[str] = ()) -> Path:
    """Check an output directory and the files ``names`` inside it without creating anything:
    the checks of :func:`output_dir` and :func:`check_output`, for a command to run before its
    work."""
    p = Path(path)
    _check_dir(p)
    if p.is_dir():
        check_outputs(p / n for n in names)
    return p


def _check_dir(p: Path) -> None:
    if p.is_symlink():
        raise InvalidModelError(
            f"output directory {str(p)!r} is a symbolic link (to {os.readlink(p)!r}): refusing "
            "to write through it; give the real directory"
        )
    if p.exists() and not p.is_dir():
        raise InvalidModelError(f"output directory {str(p)!r} exists and is not a directory")


def output_dir(path: str | os.PathLike) -> Path:
    """Create the output directory ``path`` (with missing parents) and return it.

    Refused: a symbolic link as the directory itself (it would send every output elsewhere)
    and an existing path that is not a directory.
    """
    p = Path(path)
    _check_dir(p)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidModelError(
            f"output directory {str(p)!r}: cannot create it ({exc.strerror})"
        ) from None
    return p


def output_directory(path: str | os.PathLike, option: str = "--out") -> Path:
    """The directory a person named for outputs (``--out``), created when only its last level
    is missing: a mistyped path must not grow a tree of directories somewhere unexpected.

    Raises
    ------
    InvalidModelError
        It is a symbolic link (see :func:`output_dir`).
    FileNotFoundError
        Its parent directory does not exist (named, with the fix).
    NotADirectoryError
        It exists and is not a directory.
    """
    p = Path(path)
    if p.is_symlink():
        _check_dir(p)
    if p.is_dir():
        return p
    if p.exists():
        raise NotADirectoryError(f"{option} {str(p)!r}: exists and is not a directory")
    if not p.parent.is_dir():
        raise FileNotFoundError(
            f"{option} {str(p)!r}: the directory {str(p.parent)!r} does not exist; create it "
            "first (only the last level of an output directory is created)"
        )
    p.mkdir()
    return p


@contextlib.contextmanager
def open_output(
    path: str | os.PathLike, mode: str = "w", *, encoding: str = "utf-8", newline: str | None = None
) -> Iterator[IO[Any]]:
    """A file object writing ``path`` safely (see the module docstring); ``mode`` is ``"w"``
    (text) or ``"wb"``. The target is replaced only when the block ends without an error."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    target = check_output(path)
    parent = target.parent
    tmp = parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o666)  # the umask applies, as for any new file
    except OSError as exc:
        raise InvalidModelError(f"output {str(target)!r}: cannot write ({exc.strerror})") from None
    try:
        if mode == "wb":
            fh: IO[Any] = os.fdopen(fd, "wb")
        else:
            fh = os.fdopen(fd, "w", encoding=encoding, newline=newline)
        with fh:
            yield fh
        check_output(target)  # refused if something was planted while we wrote
        os.replace(tmp, target)  # replaces the entry; never writes through a link
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return


def write_output(path: str | os.PathLike, data: str | bytes, *, encoding: str = "utf-8") -> Path:
    """Write ``data`` (text or bytes) to ``path`` safely; returns the path."""
    with open_output(path, "wb" if isinstance(data, bytes) else "w", encoding=encoding) as fh:
        fh.write(data)
    return Path(path)


def save_figure(fig: Any, path: str | os.PathLike, **kwargs: Any) -> Path:
    """``fig.savefig`` to ``path`` safely; the format comes from the suffix."""
    p = Path(path)
    kwargs.setdefault("format", p.suffix.lstrip(".").lower() or "png")
    with open_output(p, "wb") as fh:
        fig.savefig(fh, **kwargs)
    return p
