# ruff: noqa: E501  (strategies read best one per line)
"""What every fuzz module shares: the profiles (example counts), the "ours or a value" check
and the value strategies that reach parsers (numbers, unit strings, JSON and TOML values).

Profiles: ``fuzz`` (CI, the default: 60 examples a test, derandomized so that a failure is
reproducible) and ``long`` (5000 fresh examples a test: ``HYPOTHESIS_PROFILE=long``).
"""

from __future__ import annotations

import copy
import json
import math
import os
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from qnmodel.errors import QNModelError

# CI: the same 60 examples a test every run (derandomized), so a failure is reproducible and
# the suite deterministic; "long" draws fresh examples each run, to explore.
settings.register_profile(
    "fuzz",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
FUZZ = settings.get_profile("long" if os.environ.get("HYPOTHESIS_PROFILE") == "long" else "fuzz")

ROOT = Path(__file__).resolve().parents[2]


def ours_or_value(f, *args, check=None):
    """Call ``f``; a QNModelError is fine, any other exception fails with the input shown."""
    try:
        value = f(*args)
    except QNModelError:
        return None
    if check is not None:
        check(value)
    return value


# -- value strategies ------------------------------------------------------------------------
UNIT_WORDS = ["s", "ms", "us", "ns", "B", "kB", "KiB", "MiB", "GB", "bit", "Mbit", "Mbit/s",
              "MB/s", "Gbps", "Hz", "IOPS", "/s", "KB", "Mb", "MT/s", "x", "", "min", "h"]  # fmt: skip
numbers_text = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(["1e308", "1e-320", "-0", "1_000", "1__0", ".5", "5.", "0x10", "1e", "++1"]),
)
quantity_text = st.builds(
    lambda n, sp, u: f"{n}{sp}{u}", numbers_text, st.sampled_from(["", " ", "  "]),
    st.sampled_from(UNIT_WORDS),
)  # fmt: skip
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    quantity_text,
)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip


def toml_value(v) -> str:
    """A Python value as TOML (strings via JSON escapes, which TOML's basic strings share)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return (
            "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        )
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return (
            "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(x)}" for k, x in v.items()) + " }"
        )
    return '""'  # None has no TOML form: an empty string


toml_values = json_values.filter(lambda v: v is not None)


def model_text(doc: dict) -> str:
    """A qnmodel model file from ``{"model": {...}, "station": [{...}, ...]}``."""
    lines = ["[model]"] + [f"{k} = {toml_value(v)}" for k, v in doc["model"].items()]
    for s in doc["station"]:
        lines += ["", "[[station]]"] + [f"{k} = {toml_value(v)}" for k, v in s.items()]
    return "\n".join(lines) + "\n"


def replaced(doc, path, value):
    """A deep copy of ``doc`` with the field at ``path`` (keys and indices) set to ``value``."""
    doc = copy.deepcopy(doc)
    here = doc
    for k in path[:-1]:
        here = here[k]
    here[path[-1]] = value
    return doc


def removed(doc, path):
    """A deep copy of ``doc`` without the field at ``path``."""
    doc = copy.deepcopy(doc)
    here = doc
    for k in path[:-1]:
        here = here[k]
    del here[path[-1]]
    return doc


def finite(x: float) -> None:
    assert math.isfinite(x), x


def paths_of(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths_of(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:2]):
            yield from paths_of(v, (*prefix, i))
