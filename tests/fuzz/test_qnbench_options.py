# ruff: noqa: E501  (strategies read best one per line)
"""Fuzzing qnbench's newer options through its own option parser: the meta engine and its
options, ``--rwmix``, ``--rate``, ``--arrivals``, ``--file-layout`` and ``--netns``.

Every run is the real binary on a run short enough to finish at once (``--runtime 5ms
--warmup 0``, files in a fresh directory). The answer must be either a valid run (exit 0,
one JSON document marked complete) or a usage error (exit 2, one line on stderr that starts
with ``qnbench:`` and names the option) -- never a crash, another status, or several lines.
The libFuzzer targets (``tests/bench/test_fuzz.py``) cover the parser's C code in depth; this
module checks what a user sees.

``--netns`` names are made so that no namespace of this machine can be joined: names that
could exist get the prefix ``qnfuzz-``, which no tool here creates.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qnmodel import bench
from qnmodel.errors import BenchNotFoundError

from .._ci import IN_CI
from ._strategies import FUZZ, numbers_text, quantity_text

# one qnbench run is 20-60 ms: 40 examples a test keep the module near 10 s
QNB = settings(FUZZ, max_examples=max(40, FUZZ.max_examples * 2 // 3))


@pytest.fixture(scope="module")
def exe():
    try:
        return str(bench.executable())
    except BenchNotFoundError as exc:
        if IN_CI:
            pytest.fail(f"qnbench must be built under CI: {exc}")
        pytest.skip(f"qnbench not built here ({exc})")


SHORT = ["--runtime", "5ms", "--warmup", "0", "--jobs", "1"]
ENGINE_ARGS = {
    "emu": ["--engine", "emu", "--dev-latency", "100us", *SHORT],
    "file": ["--engine", "file", "--size", "64KiB", *SHORT, "--dir", "{tmp}"],
    "meta": ["--engine", "meta", "--files", "3", *SHORT, "--dir", "{tmp}"],
    "null": ["--engine", "null", *SHORT],
    # for --engine itself: what any engine needs to run at once
    "any": ["--files", "3", "--size", "64KiB", "--dev-latency", "100us", *SHORT, "--dir", "{tmp}"],
}
_plain = st.text(
    st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=12
)
ints_text = st.one_of(st.integers(-(10**20), 10**20).map(str), numbers_text, _plain)
# option -> (engines it is given to, values); --arrivals needs an open loop (--rate 200/s)
OPTIONS = {
    "rate": (["emu", "file", "null"], st.one_of(quantity_text, numbers_text, st.sampled_from(["200/s", "1kHz", "5ops/s", "0", "2000 /s"]), _plain)),
    "arrivals": (["emu"], st.one_of(st.sampled_from(["poisson", "constant", "Poisson", "poisson,constant", ""]), _plain)),
    "rwmix": (["file", "emu"], st.one_of(st.integers(-3, 103).map(str), ints_text)),
    "file-layout": (["file", "meta"], st.one_of(st.sampled_from(["per-job", "shared", "per_job", "shared,per-job"]), _plain)),
    "engine": (["any"], st.one_of(st.sampled_from(["meta", "Meta", "meta ", "met", "null,meta"]), _plain)),
    "meta-tree": (["meta"], st.one_of(st.sampled_from(["easy", "hard", "EASY", "easy,hard"]), _plain)),
    "meta-op": (["meta"], st.one_of(st.lists(st.sampled_from(["create", "stat", "open_close", "unlink", "rename", "", " "]), max_size=5).map(",".join), _plain)),
    "files": (["meta"], st.one_of(st.integers(-2, 20).map(str), ints_text)),
    "meta-bytes": (["meta"], st.one_of(quantity_text, st.sampled_from(["0", "4KiB", "16MiB", "17MiB", "47008B"]), _plain)),
    "netns": (["null"], st.one_of(st.lists(st.one_of(st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True), _plain), max_size=3).map(",".join), _plain)),
}  # fmt: skip


def _safe_netns(value: str) -> str:
    """Prefix every name that could be a namespace here, so that none is ever joined."""
    return ",".join(
        f"qnfuzz-{n}" if re.fullmatch(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*", n) else n
        for n in value.split(",")
    )


def _run(exe: str, tmp, option: str, engine: str, value: str, joined: bool) -> None:
    argv = [a.replace("{tmp}", str(tmp)) for a in ENGINE_ARGS[engine]]
    if option == "arrivals":
        argv += ["--rate", "200/s"]
    if option == "netns":
        value = _safe_netns(value)
    argv += [f"--{option}={value}"] if joined else [f"--{option}", value]
    p = subprocess.run(
        [exe, *argv], capture_output=True, text=True, errors="replace", timeout=60, cwd=tmp
    )
    shown = f"qnbench {' '.join(argv)}: exit {p.returncode}\nstderr: {p.stderr[:500]}"
    if p.returncode == 0:
        doc = json.loads(p.stdout)
        assert doc["schema"] == "qnbench" and doc["complete"] is True, shown
        return
    assert p.returncode == 2, shown
    line = p.stderr.removesuffix("\n")
    assert line.startswith("qnbench: ") and not any(ord(ch) < 32 for ch in line), shown
    assert f"--{option}" in line, shown


def test_templates_run(exe, tmp_path):
    for engine in ("emu", "file", "meta", "null"):
        argv = [a.replace("{tmp}", str(tmp_path)) for a in ENGINE_ARGS[engine]]
        p = subprocess.run([exe, *argv], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert p.returncode == 0 and json.loads(p.stdout)["complete"] is True, (engine, p.stderr)
    assert os.listdir(tmp_path) == []  # qnbench removed what it created


@QNB
@given(st.sampled_from(sorted(OPTIONS)).flatmap(lambda o: st.tuples(st.just(o), st.sampled_from(OPTIONS[o][0]), OPTIONS[o][1])),
       st.booleans())  # fmt: skip
def test_new_options_valid_run_or_one_line_usage_error(exe, tmp_path_factory, case, joined):
    option, engine, value = case
    _run(exe, tmp_path_factory.mktemp("qnb"), option, engine, value, joined)


def test_a_value_with_control_characters_is_echoed_on_one_line(exe, tmp_path):
    """Found by the fuzzer: qnbench echoed an option's value raw, so a newline split its usage
    error over two lines and an escape sequence reached the terminal; now they are \\xNN."""
    p = subprocess.run([exe, "--engine", "emu", "--rate", "200/s", "--arrivals", "po\nisson\x1b[31m"],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)  # fmt: skip
    assert p.returncode == 2
    assert p.stderr == (
        "qnbench: --arrivals: 'po\\x0aisson\\x1b[31m' is not one of poisson,constant\n"
    )
