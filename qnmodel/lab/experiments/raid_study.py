"""Seed 003's RAID study, reproducible: speedup S(L, C, B), theoretical T, efficiency E = S/T.

Chen et al. (seed 003, sec. 1.3) measured an array of N members against one member at the
same block size B: the measured speedup ``S(L, C, B) = array / single`` (level L, chunk C),
the theoretical speedup T of the vendor's RAID mathematics (:mod:`qnmodel.models.raid`) and
the efficiency ``E = S / T`` (at most 1; a larger one is a measurement artefact). Each
figure is taken with the paper's steady-state rule (sec. 1.3.1): the point is measured
repeatedly until three consecutive repeats each lie within 10 % of their mean, and the largest
of those three is reported (:func:`qnmodel.calibration.steady_state`, method ``"seed003"``).

:func:`measure_grid` runs qnbench's ``stripe`` engine (user-space RAID0/RAID5) and the
matching single member on one medium:

* ``"emu"``: emulated members (positioning ``a`` + transfer ``B/r``, each its own queue);
* ``"tmpfs"``: member files in a tmpfs directory (``/dev/shm``);
* ``"loop"``: member files on an ext4 file system on a loop device this function creates
  on an image file and removes afterwards (:func:`loop_filesystem`, root only).

:func:`efficiency_table` lays the result out as the paper's tables (rows B, columns C).

References
----------
.. [Chen] Chen X., Liu Y., Gao P., Xu J., performance tests of NVMe SSDs and Intel VROC RAID
   (seed 003): sec. 1.3.1 (steady state), sec. 1.3.2 and table 1 (S, T, E), sec. 2.2.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._validate import as_choice, as_quantities
from ...calibration.steady import steady_state
from ...errors import BenchError, InvalidModelError
from ...models.raid import theoretical_speedup
from ..validation._common import machine_info

__all__ = [
    "MEDIA",
    "CHUNKS",
    "BLOCKS",
    "OPS",
    "loop_filesystem",
    "measure_grid",
    "efficiency_table",
    "machine_info",
]

MEDIA = ("emu", "tmpfs", "loop")
#: Chunk sizes: seed 003's range (4 KiB .. 128 KiB, VROC's default 128 KiB) extended to 1 MiB.
CHUNKS = (4096, 16384, 65536, 131072, 262144, 1048576)
#: Block sizes 4 KiB .. 2 MiB.
BLOCKS = tuple(4096 * 4**k for k in range(5)) + (2 * 2**20,)
#: qnbench access pattern -> (op, pattern) of the speedup table: seed 003's sequential-read
#: bandwidth and random-write IOPS.
OPS = {"read": ("read", "sequential"), "randwrite": ("write", "random")}


@contextlib.contextmanager
def loop_filesystem(
    size: int = 512 * 2**20, parent: str | os.PathLike | None = None
) -> Iterator[Path]:
    """A fresh ext4 file system on a loop device, mounted; all of it removed on exit.

    Creates an image file of ``size`` bytes in ``parent`` (default: the system temporary
    directory), attaches it to a free loop device (``losetup --find --show``), formats it
    (``mkfs.ext4``) and mounts it on a new directory. Only that device, image and mount
    point are touched. Needs root; raises :class:`~qnmodel.errors.BenchError` with the
    failing command otherwise.
    """
    work = Path(tempfile.mkdtemp(prefix="qnmodel-loop-", dir=parent))
    image, mnt = work / "image", work / "mnt"
    dev = None
    mounted = False

    def sh(*argv: str) -> str:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        if p.returncode != 0:
            raise BenchError(f"loop file system: {' '.join(argv)} failed: {p.stderr.strip()}")
        return p.stdout.strip()

    try:
        with open(image, "wb") as f:
            f.truncate(int(size))
        dev = sh("losetup", "--find", "--show", str(image))
        sh("mkfs.ext4", "-q", "-F", dev)
        mnt.mkdir()
        sh("mount", dev, str(mnt))
        mounted = True
        yield mnt
    finally:
        if mounted:
            subprocess.run(["umount", str(mnt)], capture_output=True, timeout=120, check=False)
        if dev:
            subprocess.run(["losetup", "-d", dev], capture_output=True, timeout=60, check=False)
        shutil.rmtree(work, ignore_errors=True)


def _steady(series: np.ndarray) -> tuple[float, bool]:
    """[Chen] sec. 1.3.1 over the repeats of one point: (value, steady)."""
    res = steady_state(series, "seed003")
    if res.steady:
        return float(res.value), True
    return float(np.median(series)), False


def _reduce(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    rows = []
    for (bs, jobs), g in frame.groupby(["bs_bytes", "jobs"], sort=True):
        series = g.sort_values("repeat")[metric].to_numpy(dtype=np.float64)
        value, steady = _steady(series)
        rows.append({"bs": int(bs), "jobs": int(jobs), "value": value, "steady": steady,
                     "repeats": int(series.size)})  # fmt: skip
    return pd.DataFrame(rows)


def _run(engine: str, **options: Any) -> pd.DataFrame:
    from ... import bench

    return bench.run(engine, progress=False, **options).to_frame()


def measure_grid(
    medium: str,
    *,
    levels: Sequence[int] = (0, 5),
    members: int = 4,
    chunks: Sequence[Any] = CHUNKS,
    blocks: Sequence[Any] = BLOCKS,
    ops: Sequence[str] = tuple(OPS),
    jobs: int = 8,
    repeat: int = 4,
    runtime: float | str = "0.1 s",
    warmup: float | str = "0.05 s",
    member_size: int = 16 * 2**20,
    dev_latency: float | str = "100 us",
    dev_rate: float | str = "1 GB/s",
    directory: str | os.PathLike | None = None,
    realtime: bool = False,
) -> pd.DataFrame:
    """Measure S, T and E over levels x chunks x blocks x ops on one medium.

    Parameters
    ----------
    medium : {"emu", "tmpfs", "loop"}
        Members: emulated devices, files in a tmpfs directory, files on a loop-device ext4.
    levels : sequence of {0, 5}
    members : int
        N, the array's members (the single member is measured with the same options).
    chunks, blocks : sequences of sizes
        C and B; points whose block exceeds the array's capacity are skipped.
    ops : sequence of {"read", "randwrite"}
        Sequential-read bandwidth and random-write IOPS, as seed 003.
    jobs : int
        Closed-loop clients (the paper used 128 synchronous threads on real NVMe disks).
    repeat, runtime, warmup
        Repeats per point (the steady-state rule needs >= 3), seconds per repeat and warm-up.
    member_size : int
        Bytes per member (and per single-member file).
    dev_latency, dev_rate
        The emulated member (``"emu"`` only): positioning time and transfer rate.
    directory : path, optional
        ``"tmpfs"``: the tmpfs parent (default ``/dev/shm``); ``"loop"``: where the image file
        goes (default: the temporary directory).
    realtime : bool
        Run the clients of ``"emu"`` with SCHED_FIFO (root or CAP_SYS_NICE): on a loaded
        machine late wake-ups otherwise stretch the emulated members' times. Ignored for the
        file media, whose clients never sleep (real-time ones would starve the machine).

    Returns
    -------
    DataFrame
        One row per (medium, level, op, chunk, bs): ``single`` and ``array`` (bytes/s for
        ``read``, IOPS for ``randwrite``, steady values), ``steady`` (both points steady),
        ``S``, ``T``, ``E`` and ``artefact`` (E > 1).
    """
    medium = as_choice(medium, "medium", MEDIA)
    if repeat < 3:
        raise InvalidModelError(f"repeat must be >= 3 for the steady-state rule, got {repeat!r}")
    for op in ops:
        as_choice(op, "ops", tuple(OPS))
    C = [int(v) for v in as_quantities(chunks, "chunks", "size")]
    B = [int(v) for v in as_quantities(blocks, "blocks", "size")]
    # SCHED_FIFO only for emulated members, which sleep: file clients never sleep and would
    # starve everything else on the machine, qnbench's own timer thread included
    rt = bool(realtime) and medium == "emu"
    common = dict(jobs=jobs, repeat=repeat, runtime=runtime, warmup=warmup, size=member_size,
                  realtime=rt)  # fmt: skip
    if medium == "loop":
        with loop_filesystem(parent=directory) as mnt:
            return _grid(medium, levels, members, C, B, ops, common, {"dir": str(mnt)}, {})
    if medium == "tmpfs":
        d = str(directory or "/dev/shm")
        return _grid(medium, levels, members, C, B, ops, common, {"dir": d}, {})
    emu = {"dev_latency": dev_latency, "dev_rate": dev_rate}
    return _grid(medium, levels, members, C, B, ops, common, emu, {"devices": 1})


def _grid(medium, levels, members, C, B, ops, common, where, single_extra) -> pd.DataFrame:
    member = "emu" if medium == "emu" else "file"
    single_engine = "emu" if medium == "emu" else "file"
    rows = []
    for op in ops:
        metric = "throughput_B_s" if op == "read" else "throughput_ops_s"
        single = _reduce(_run(single_engine, bs=B, rw=op, **common, **where, **single_extra),
                         metric)  # fmt: skip
        base = dict(
            zip(single["bs"], zip(single["value"], single["steady"], strict=True), strict=True)
        )
        opname, pattern = OPS[op]
        for level in levels:
            T = theoretical_speedup(f"raid{level}", members, opname, pattern)
            data = members - 1 if level == 5 else members
            for c in C:
                if common["size"] % c:
                    continue
                cap = (common["size"] // c) * data * c
                bs = [b for b in B if b <= cap]
                arr = _reduce(_run("stripe", raid=level, members=members, member=member, chunk=c,
                                   bs=bs, rw=op, **common, **where), metric)  # fmt: skip
                for row in arr.itertuples():
                    s_val, s_ok = base[row.bs]
                    S = row.value / s_val
                    rows.append({
                        "medium": medium, "level": f"raid{level}", "op": op, "chunk": c,
                        "bs": row.bs, "single": s_val, "array": row.value,
                        "steady": bool(s_ok and row.steady), "S": S, "T": T, "E": S / T,
                        "artefact": bool(S / T > 1.0),
                    })  # fmt: skip
    return pd.DataFrame(rows)


def efficiency_table(
    grid: pd.DataFrame, medium: str, level: str, op: str, value: str = "E"
) -> pd.DataFrame:
    """One of the paper's tables: rows block size B, columns chunk size C, cells ``value``.

    ``value`` is ``"S"``, ``"T"`` or ``"E"``; cells flagged as artefacts (E > 1) keep their
    number (the caller marks them, e.g. with a trailing ``*`` in :func:`table_markdown`).
    """
    as_choice(value, "value", ("S", "T", "E"))
    g = grid[(grid.medium == medium) & (grid.level == level) & (grid.op == op)]
    if g.empty:
        raise InvalidModelError(f"no rows for medium {medium!r}, level {level!r}, op {op!r}")
    return g.pivot(index="bs", columns="chunk", values=value)


def table_markdown(grid: pd.DataFrame, medium: str, level: str, op: str, value: str = "E") -> str:
    """:func:`efficiency_table` as a Markdown table, sizes in KiB, artefacts (E > 1) starred."""
    tab = efficiency_table(grid, medium, level, op, value)
    art = efficiency_table(grid, medium, level, op, "E") > 1.0
    head = "| B \\ C | " + " | ".join(f"{c // 1024} KiB" for c in tab.columns) + " |"
    lines = [head, "|" + "---|" * (len(tab.columns) + 1)]
    for b, row in tab.iterrows():
        cells = []
        for c, v in row.items():
            cells.append("" if pd.isna(v) else f"{v:.2f}" + ("*" if art.loc[b, c] else ""))
        lines.append(f"| {b // 1024} KiB | " + " | ".join(cells) + " |")
    return "\n".join(lines)
