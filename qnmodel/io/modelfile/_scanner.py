"""Where a key stands in a model file: a light line scanner, and the error that names it."""

from __future__ import annotations

import re

from ...errors import InvalidModelError

__all__ = ["ModelFileError"]


class ModelFileError(InvalidModelError):
    """A model file cannot be read: syntax, unknown key, wrong unit, bad value.

    Attributes
    ----------
    source : str
        File name (or ``"<string>"``).
    key : str
        Key path of the offending value, e.g. ``"station[2].rate"`` ("" for syntax errors).
    line : int or None
        1-based line of the key in the file, when it can be located.
    reason : str
        The rule that was broken and the fix.
    """

    def __init__(self, source: str, key: str, line: int | None, reason: str) -> None:
        self.source = source
        self.key = key
        self.line = line
        self.reason = reason
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {key}: {reason}" if key else f"{where}: {reason}")


# -- locating keys in the text --------------------------------------------------------
_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")


def _split_dotted(key: str) -> list[str]:
    return [part.strip().strip("\"'") for part in key.split(".")]


def _key_lines(text: str) -> dict[tuple, int]:
    """Map key paths (tuples of str/int) to the 1-based line where they are defined.

    A light scanner for the subset of TOML model files use: table headers,
    arrays of tables and ``key = value`` lines. Values spanning several lines
    are skipped over by bracket counting. Good enough to point at a line; the
    parsing itself is done by :mod:`tomllib`.
    """
    lines: dict[tuple, int] = {}
    counters: dict[tuple, int] = {}
    prefix: tuple = ()
    depth = 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.split("#", 1)[0] if '"' not in raw and "'" not in raw else raw
        if depth > 0:
            depth += stripped.count("[") + stripped.count("{")
            depth -= stripped.count("]") + stripped.count("}")
            continue
        m = _HEADER.match(raw)
        if m and "=" not in raw.split("#", 1)[0]:
            parts = tuple(_split_dotted(m.group(2)))
            if m.group(1) == "[[":
                idx = counters.get(parts, 0)
                counters[parts] = idx + 1
                prefix = (*parts, idx)
            else:
                prefix = parts
            lines.setdefault(prefix, lineno)
            continue
        m = _ASSIGN.match(raw)
        if m:
            path = (*prefix, *_split_dotted(m.group(1)))
            lines.setdefault(path, lineno)
            value = raw[m.end() :]
            depth = value.count("[") + value.count("{") - value.count("]") - value.count("}")
            depth = max(depth, 0)
    return lines


def _fmt_path(path: tuple) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


class _Ctx:
    """Carries the source name and key-line map while validating."""

    def __init__(self, source: str, text: str, bare_si: bool = False) -> None:
        self.source = source
        self.text = text
        self.lines = _key_lines(text)
        #: plain numbers are SI (values given from Python to ``with_values``), not refused
        self.bare_si = bare_si

    def line(self, path: tuple) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None

    def error(self, path: tuple, reason: str) -> ModelFileError:
        return ModelFileError(self.source, _fmt_path(path), self.line(path), reason)
