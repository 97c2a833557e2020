"""``qnmodel check`` over MPI: the bottom-up set on every rank, random pairs of ranks.

The synthetic tests plant a slow-latency link; the real runs start 2-4 ranks with ``mpirun`` on
this machine (oversubscribed on 2 cores), so they run in the ``alone`` pass. A rank that hangs
or fails is reported while the others still are.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from qnmodel.errors import InvalidModelError
from qnmodel.lab.check import analyse, measure_ranks
from qnmodel.reporting.report import write_check_report
from tests._parts import need, need_built
from tests._tol import closed_form

FIGURES = {"memory", "cpu", "link:loopback", "device:tmp:write", "metadata:create"}


@pytest.fixture(scope="module")
def mpi():
    need("mpirun")
    need_built("mpi")


def _wrapper(tmp_path, action):
    """A command prefix under which rank 1 does `action` instead of measuring."""
    script = tmp_path / "rank1.sh"
    script.write_text(
        f'#!/bin/sh\nif [ "$OMPI_COMM_WORLD_RANK" = "1" ]; then {action}; fi\nexec "$@"\n'
    )
    script.chmod(0o755)
    return [str(script)]


def test_a_node_with_slow_latency_on_every_pair_is_named():
    nodes = {n: {"memory": 1e10} for n in "abcd"}
    lat = {(x, y): 2e-6 for x, y in itertools.combinations("abcd", 2)}
    bw = {p: 1e10 for p in lat}
    clean = analyse(nodes, pairs=bw, pair_latency=lat)
    assert clean.ok and len(clean.pair_rows) == 6
    for p in lat:
        if "c" in p:
            lat[p] = 4e-6  # a cable at the wrong rate: every pair crossing c is slow
    res = analyse(nodes, pairs=bw, pair_latency=lat)
    assert [(f.node, f.key, f.kind) for f in res.findings] == [("c", "pair:latency", "pair")]
    assert res.findings[0].ratio == pytest.approx(0.5, rel=closed_form(2))  # a quotient
    row = next(r for r in res.pair_rows if (r["a"], r["b"]) == ("a", "c"))
    assert row["latency_s"] == 4e-6 and row["ratio_to_median"] == 1.0


def test_bad_rank_counts_are_refused():
    with pytest.raises(InvalidModelError, match="ranks must be >= 2"):
        measure_ranks(1)
    with pytest.raises(InvalidModelError, match="exchanges"):
        measure_ranks(2, exchanges=0)


@pytest.mark.alone
@pytest.mark.parametrize("ranks", [3])  # odd: one rank idles in every pairing
def test_every_rank_reports_its_figures_and_the_pairs(mpi, tmp_path, ranks):
    m = measure_ranks(ranks, runtime="0.2 s", timeout="240 s", repeats=2)
    assert m.incomplete == ()
    assert sorted(m.nodes) == [f"rank{r}" for r in range(ranks)]
    for figs in m.nodes.values():
        assert set(figs) == FIGURES
        assert figs["metadata:create"] > 10 and figs["memory"] > 1e8
    # each random pairing forms ranks // 2 pairs; two pairings at least that many distinct ones
    assert len(m.pairs) >= ranks // 2 and set(m.pairs) == set(m.pair_latency)
    for bw in m.pairs.values():
        assert bw > 1e7  # 1 MiB messages over shared memory: far above 10 MB/s
    for lat in m.pair_latency.values():
        assert 0 < lat < 1e-3
    res = analyse(m.nodes, pairs=m.pairs, pair_latency=m.pair_latency)
    assert len(res.rows) == ranks * len(FIGURES) and len(res.pair_rows) == len(m.pairs)
    md = write_check_report(res, tmp_path).read_text()
    assert "## Pairs of nodes" in md and "rank1" in md


@pytest.mark.alone
def test_a_hanging_rank_is_reported_and_the_others_still_are(mpi, tmp_path):
    m = measure_ranks(2, runtime="0.2 s", timeout="15 s", pairs=False,
                      wrap=_wrapper(tmp_path, "sleep 600"))  # fmt: skip
    assert set(m.nodes["rank0"]) == FIGURES
    assert m.nodes["rank1"] is None
    assert any(i.startswith("rank1") and "did not finish within 15 s" in i for i in m.incomplete)
    res = analyse(m.nodes)
    assert not res.ok and any("rank1" in i for i in res.incomplete)


@pytest.mark.alone
def test_a_failing_rank_is_reported_and_the_others_still_are(mpi, tmp_path):
    m = measure_ranks(3, runtime="0.2 s", timeout="120 s", pairs=False,
                      wrap=_wrapper(tmp_path, "exit 3"))  # fmt: skip
    assert set(m.nodes["rank0"]) == set(m.nodes["rank2"]) == FIGURES
    assert m.nodes["rank1"] is None
    assert any(i.startswith("rank1") and "failed" in i for i in m.incomplete)


@pytest.mark.alone
def test_check_command_over_ranks_writes_a_report(mpi, tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "qnmodel.cli", "check", "--ranks", "2", "--runtime", "0.2 s",
         "--format", "json", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert {r["node"] for r in doc["rows"]} == {"rank0", "rank1"}
    assert [(r["a"], r["b"]) for r in doc["pairs"]] == [("rank0", "rank1")]
    assert (tmp_path / "check.md").exists() and (tmp_path / "check.png").exists()
