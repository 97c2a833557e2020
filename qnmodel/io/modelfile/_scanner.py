"""Where a key stands in a model file: a light line scanner, and the error that names it."""

from __future__ import annotations

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
# Linear-time scanning, no backtracking regular expression: the earlier patterns
# (``^\s*([...' ]+?)\s*=`` and ``\[\s*([^\]]+?)\s*\]``) were cubic and quadratic in a
# run of spaces, and a multi-line string of 8 KB of spaces hung ``qnmodel solve``.
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.\"' \t")


def _split_dotted(key: str) -> list[str]:
    return [part.strip().strip("\"'") for part in key.split(".")]


def _header(raw: str) -> tuple[str, str] | None:
    """``("[" or "[[", name)`` of a table header line, else None."""
    s = raw.strip()
    if not s.startswith("["):
        return None
    opener = "[[" if s.startswith("[[") else "["
    end = s.find("]", len(opener))
    if end < 0:
        return None
    name = s[len(opener) : end].strip()
    rest = s[end + 1 :]
    if rest.startswith("]"):
        rest = rest[1:]
    rest = rest.lstrip()
    if not name or (rest and not rest.startswith("#")):
        return None
    return opener, name


def _assignment(raw: str) -> str | None:
    """The key of a ``key = value`` line, else None."""
    eq = raw.find("=")
    if eq < 0:
        return None
    key = raw[:eq]
    if not key.strip() or not _KEY_CHARS.issuperset(key):
        return None
    return key.strip()


def _multiline_strings(line: str, open_quote: str | None) -> str | None:
    """The multi-line string delimiter (three double or single quotes) open after ``line``."""
    i = 0
    while True:
        if open_quote is None:
            found = [(line.find(q, i), q) for q in ('"""', "'''")]
            found = [(k, q) for k, q in found if k >= 0]
            if not found:
                return None
            i, open_quote = min(found)
            i += 3
        else:
            k = line.find(open_quote, i)
            if k < 0:
                return open_quote
            i, open_quote = k + 3, None


def _key_lines(text: str) -> dict[tuple, int]:
    """Map key paths (tuples of str/int) to the 1-based line where they are defined.

    A light scanner for the subset of TOML model files use: table headers,
    arrays of tables and ``key = value`` lines. Values spanning several lines
    are skipped over by bracket counting, multi-line strings by their delimiters. Good
    enough to point at a line; the parsing itself is done by :mod:`tomllib`. Linear in
    the length of the text.
    """
    lines: dict[tuple, int] = {}
    counters: dict[tuple, int] = {}
    prefix: tuple = ()
    depth = 0
    in_string: str | None = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if in_string is not None:
            in_string = _multiline_strings(raw, in_string)
            continue
        stripped = raw.split("#", 1)[0] if '"' not in raw and "'" not in raw else raw
        if depth > 0:
            depth += stripped.count("[") + stripped.count("{")
            depth -= stripped.count("]") + stripped.count("}")
            in_string = _multiline_strings(raw, None)
            continue
        h = _header(raw)
        if h is not None and "=" not in raw.split("#", 1)[0]:
            parts = tuple(_split_dotted(h[1]))
            if h[0] == "[[":
                idx = counters.get(parts, 0)
                counters[parts] = idx + 1
                prefix = (*parts, idx)
            else:
                prefix = parts
            lines.setdefault(prefix, lineno)
            continue
        key = _assignment(raw)
        if key is not None:
            path = (*prefix, *_split_dotted(key))
            lines.setdefault(path, lineno)
            value = raw[raw.find("=") + 1 :]
            depth = value.count("[") + value.count("{") - value.count("]") - value.count("}")
            depth = max(depth, 0)
            in_string = _multiline_strings(value, None)
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
