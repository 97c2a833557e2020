"""The bottom-up check on every rank of an MPI run, and the links between random pairs of ranks.

Seed 004 ran STREAM and LINPACK on every server and compared them (two "identical" servers at a
3:2 memory-bandwidth ratio, a CPU more than 10 % slower), then measured bandwidth and latency
between random pairs of nodes with the OSU micro-benchmarks and found cables at the wrong rate.
:func:`measure_ranks` does both with ``mpirun``:

1. every rank runs the bottom-up set of :func:`~qnmodel.lab.check.measure.measure_node` (memory,
   CPU per unit, loopback link, file write, metadata create) with the single-node qnbench and
   writes its own figures into its own file, so one rank that fails or hangs costs only its own
   figures: after ``timeout`` the run is stopped and that rank is reported incomplete while the
   others are reported as measured (Open MPI is told not to abort the job when one rank exits
   non-zero);
2. the MPI build of qnbench (``qnbench-mpi --engine mpilink``) exchanges ping-pongs between
   random pairs of ranks (a new random pairing per repetition): the bandwidth of 1 MiB
   messages and the latency of 8-byte ones per pair.

:func:`~qnmodel.lab.check.analysis.analyse` then compares each rank's figures with the median of
the others (median absolute deviation beside it) and finds the rank whose pairs are all slow.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import bench
from ..._validate import as_quantity
from ...bench.launch import mpi_env, mpirun_command
from ...errors import BenchError, BenchNotFoundError, InvalidModelError, InvalidTypeError

__all__ = ["RankMeasurements", "measure_ranks", "mpirun_command"]

#: environment variables that name the rank of a process under the common MPI launchers
_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")


@dataclass(frozen=True)
class RankMeasurements:
    """What :func:`measure_ranks` measured.

    Attributes
    ----------
    nodes : dict
        ``{"rank<r>": {figure: value}}`` for every rank; ``None`` for a rank that failed or did
        not finish in time (the reason is in ``incomplete``).
    hosts : dict
        ``{"rank<r>": hostname}`` of the ranks that reported.
    pairs : dict
        ``{("rank<a>", "rank<b>"): bandwidth in bytes/s}`` of the pairs measured (both
        directions' bytes over the exchange time, 1 MiB messages).
    pair_latency : dict
        ``{("rank<a>", "rank<b>"): one-way latency in s}`` (half the 8-byte round trip, as
        osu_latency reports).
    incomplete : tuple of str
        Ranks or the pair test that did not report, and why.
    """

    nodes: dict[str, dict[str, float] | None]
    hosts: dict[str, str] = field(default_factory=dict)
    pairs: dict[tuple[str, str], float] = field(default_factory=dict)
    pair_latency: dict[tuple[str, str], float] = field(default_factory=dict)
    incomplete: tuple[str, ...] = ()


def _run(cmd: list[str], timeout: float, cwd: str | None = None) -> tuple[int | None, str, str]:
    """Run `cmd` in its own session; on timeout stop the whole session. rc None: timed out."""
    p = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=mpi_env(),
        cwd=cwd,
        start_new_session=True,
    )
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                out, err = p.communicate(timeout=10)
                break
            except subprocess.TimeoutExpired:
                continue
        else:  # pragma: no cover - the session ignored SIGKILL
            out, err = "", ""
        return None, out or "", err or ""


def measure_ranks(
    ranks: int,
    *,
    runtime: Any = "0.3 s",
    timeout: Any = "300 s",
    pairs: bool = True,
    exchanges: int = 200,
    repeats: int = 3,
    directory: str | os.PathLike | None = None,
    wrap: Sequence[str] = (),
    mpirun: str | None = None,
) -> RankMeasurements:
    """Measure the bottom-up set on every rank of an MPI run, and random pairs of ranks.

    Parameters
    ----------
    ranks : int
        Number of MPI ranks (processes) to start, >= 2; the MPI launcher's host file or
        scheduler allocation decides where they run.
    runtime : time
        Seconds per qnbench measurement on each rank.
    timeout : time
        Wall-clock limit of each of the two MPI runs; a rank still running then is stopped and
        reported incomplete.
    pairs : bool
        Also measure links between random pairs of ranks (needs the MPI build of qnbench,
        :func:`qnmodel.bench.executable` with ``mpi=True``).
    exchanges, repeats : int
        Ping-pongs per pair and message size, and how many random pairings.
    directory : path, optional
        Where each rank's file and metadata tests create (and remove) their own files; by
        default a fresh temporary directory per rank.
    wrap : sequence of str
        A command prefix every rank runs under (a profiler, ``taskset``, a fault injector).
    mpirun : str, optional
        The MPI launcher (default: ``mpirun`` on ``PATH``).

    Raises
    ------
    InvalidModelError
        ``ranks`` < 2, ``exchanges`` or ``repeats`` < 1.
    BenchNotFoundError
        No MPI launcher.
    """
    for name, v, low in (("ranks", ranks, 2), ("exchanges", exchanges, 1), ("repeats", repeats, 1)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise InvalidTypeError(f"{name} must be an integer, got {v!r}")
        if v < low:
            raise InvalidModelError(f"{name} must be >= {low}, got {v}")
    run_s = as_quantity(runtime, "runtime", "time", positive=True)
    limit = as_quantity(timeout, "timeout", "time", positive=True)
    names = [f"rank{r}" for r in range(ranks)]
    nodes: dict[str, dict[str, float] | None] = dict.fromkeys(names)
    hosts: dict[str, str] = {}
    incomplete: list[str] = []
    base = mpirun_command(ranks, mpirun)
    with tempfile.TemporaryDirectory(prefix="qnmodel-check-ranks-") as out:
        worker = "qnmodel.lab.check._rank_worker"
        cmd = [*base, *wrap, sys.executable, "-m", worker, out, repr(run_s)]
        if directory is not None:
            cmd.append(os.fspath(directory))
        # in the output directory: the ranks import the installed qnmodel, not a source tree
        rc, _, err = _run(cmd, limit, cwd=out)
        for name in names:
            path = Path(out) / f"{name}.json"
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                why = f"did not finish within {limit:g} s" if rc is None else "failed"
                incomplete.append(f"{name}: no figures (the rank {why}; {err.strip()[-200:]})")
                continue
            hosts[name] = doc["host"]
            if doc.get("error"):
                incomplete.append(f"{name}: {doc['error']}")
            nodes[name] = doc["figures"] or None
    bw: dict[tuple[str, str], float] = {}
    lat: dict[tuple[str, str], float] = {}
    if pairs:
        try:
            bw, lat = _pairs(base, wrap, exchanges, repeats, limit)
        except (BenchNotFoundError, BenchError) as exc:
            incomplete.append(f"pairs: {exc}")
    return RankMeasurements(nodes, hosts, bw, lat, tuple(incomplete))


def _pairs(
    base: list[str], wrap: Sequence[str], exchanges: int, repeats: int, limit: float
) -> tuple[dict, dict]:
    """Bandwidth (1 MiB) and latency (8 B) of every pair the mpilink engine formed."""
    exe = bench.executable(mpi=True)
    cmd = [*base, *wrap, str(exe), "--engine", "mpilink", "--ops", str(exchanges),
           "--bs", "8,1MiB", "--repeat", str(repeats)]  # fmt: skip
    rc, out, err = _run(cmd, limit)
    if rc is None:
        raise BenchError(f"the pair test did not finish within {limit:g} s")
    try:
        doc = bench.validate(json.loads(out), error=BenchError)
    except ValueError:
        raise BenchError(f"the pair test failed (exit status {rc}): {err.strip()[-300:]}") from None
    if not doc["complete"] or "mpi" not in doc:
        raise BenchError(f"the pair test failed: {'; '.join(doc['errors']) or err.strip()[-300:]}")
    bw: dict[tuple[str, str], list[float]] = {}
    lat: dict[tuple[str, str], list[float]] = {}
    for res, agg in zip(doc["results"], doc["mpi"]["aggregate"], strict=True):
        per = {one["rank"]: one for one in agg["per_rank"]}
        for a, b in res["engine_stats"]["pairs"]:
            one = per[a]
            key = (f"rank{min(a, b)}", f"rank{max(a, b)}")
            if one["ops"] <= 0 or one["elapsed_s"] <= 0:
                continue
            if res["bs_bytes"] > 8:
                bw.setdefault(key, []).append(one["throughput_B_s"])
            else:
                lat.setdefault(key, []).append(one["elapsed_s"] / one["ops"] / 2)
    return ({k: max(v) for k, v in bw.items()}, {k: min(v) for k, v in lat.items()})


def _rank() -> int | None:
    for var in _RANK_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return None


def _rank_main(argv: Sequence[str]) -> int:
    """One rank: measure the bottom-up set, write ``<out>/rank<r>.json``; always exit 0."""
    from .measure import measure_node

    out, runtime = argv[0], float(argv[1])
    directory = argv[2] if len(argv) > 2 else None
    rank = _rank()
    if rank is None:
        sys.stderr.write(f"qnmodel.lab.check.ranks: no rank in the environment ({_RANK_VARS})\n")
        return 0
    doc: dict[str, Any] = {"rank": rank, "host": socket.gethostname(), "figures": {}}
    errors: list[str] = []
    try:
        doc["figures"] = measure_node(runtime=runtime, directory=directory, errors=errors)
    except Exception as exc:  # noqa: BLE001 - every failure is this rank's report
        errors.append(f"{type(exc).__name__}: {exc}")
    if errors:
        doc["error"] = "; ".join(errors)
    from ..._files import write_output  # a new file renamed into place; no link followed

    write_output(Path(out) / f"rank{rank}.json", json.dumps(doc))
    return 0
