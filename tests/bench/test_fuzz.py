"""libFuzzer campaigns on qnbench's unit parsers, option parser, JSON writer and the arithmetic
of its durations, sizes and rates.

Builds the four targets of ``qnmodel/bench/csrc/fuzz`` with clang (AddressSanitizer and
UndefinedBehaviorSanitizer linked in) and runs each for a bounded time from its seed corpus.
A target aborts on any broken claim (see ``fuzz/README.md``): a value that is negative or not
finite, a refusal without a message, a JSON document a strict reader rejects, a string or a
double that does not read back exactly, an accepted time that is not its nearest nanosecond or
a size that is not the value typed, a derived time or a document beyond its limit, a signed
overflow. libFuzzer exits non-zero and writes the crashing input.

``QNBENCH_FUZZ_SECONDS`` (default 10) sets the time per target; raise it for a longer campaign.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests._parts import need

CSRC = Path(__file__).resolve().parents[2] / "qnmodel" / "bench" / "csrc"
SECONDS = int(os.environ.get("QNBENCH_FUZZ_SECONDS", "10"))
TARGETS = ["units", "options", "json", "limits"]

pytestmark = pytest.mark.xdist_group("fuzz")


@pytest.fixture(scope="module")
def fuzzers(tmp_path_factory):
    need("cmake", "clang", "clang-rt")
    build = tmp_path_factory.mktemp("qnbench-fuzz")
    cfg = subprocess.run(
        ["cmake", "-S", str(CSRC), "-B", str(build), "-DCMAKE_C_COMPILER=clang",
         "-DQNBENCH_FUZZ=ON", "-DQNBENCH_WERROR=ON", "-DCMAKE_BUILD_TYPE=Debug"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    targets = [f"qnbench_fuzz_{t}" for t in TARGETS]
    b = subprocess.run(["cmake", "--build", str(build), "-j", "2", "--target", *targets],
                       capture_output=True, text=True)  # fmt: skip
    assert b.returncode == 0, b.stdout + b.stderr
    return build


@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_target_finds_nothing(fuzzers, target, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    seeds = CSRC / "fuzz" / "corpus" / target
    assert len(list(seeds.iterdir())) >= 3
    # -close_fd_mask=2: the targets' own stderr (a usage message per refused input) is closed;
    # libFuzzer and the sanitizers still report on a duplicate of it
    p = subprocess.run(
        [str(fuzzers / f"qnbench_fuzz_{target}"), f"-max_total_time={SECONDS}", "-seed=1",
         "-print_final_stats=1", "-close_fd_mask=2", f"-artifact_prefix={tmp_path}/",
         str(corpus), str(seeds)],
        capture_output=True, text=True, errors="replace", timeout=SECONDS * 6 + 60,
    )  # fmt: skip
    crashes = sorted(x.name for x in tmp_path.iterdir() if x.name != "corpus")
    assert p.returncode == 0 and not crashes, (crashes, p.stderr[-4000:])
    runs = int(next(ln for ln in p.stderr.splitlines()
                    if ln.startswith("stat::number_of_executed_units")).split(":")[-1])  # fmt: skip
    print(f"{target}: {runs} inputs in {SECONDS} s, corpus {len(list(corpus.iterdir()))}")
    # a campaign that ran almost nothing proves nothing (measured: >= 10^4 inputs/s each here)
    assert runs >= 1000 * SECONDS


def test_json_target_round_trips_a_byte_that_is_not_utf8(fuzzers, tmp_path):
    """The seed that found the writer's old defect (a byte that is not UTF-8 copied raw into the
    document, which no JSON reader accepts; qnbench 0.x before this test) passes the target."""
    seed = tmp_path / "input"
    seed.write_bytes(b"\x00" * 8 + b"k\x00\xff")
    p = subprocess.run([str(fuzzers / "qnbench_fuzz_json"), str(seed)],
                       capture_output=True, text=True, errors="replace", timeout=60)  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
