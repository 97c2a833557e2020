"""A server's page cache: prepare served files, evict them (the miss case), measure residency.

Seed 001's three cases need a server whose cache really holds the file (server hit) or really
does not (miss). The page cache is the host's, so a file written into a server's disk directory
is cached until evicted; :func:`evict` runs, in the server's namespace, ``fsync`` (dirty pages
must be written before they can be dropped) and ``posix_fadvise(POSIX_FADV_DONTNEED)`` over a
byte range of each file, and reports the share of the file's pages resident before and after
(``mincore`` on an untouched private mapping). Evicting the tail ``[keep * size, size)`` of a
file read once sequentially gives a server-cache hit ratio ``h_s = keep`` -- seed 001's mixed
case. The disk as the server sees it (b4, bottom-up) is measured by
:func:`qnmodel.lab.validation.bottomup.disk_rate` (``method="dd"`` or ``"pread"``), with the
mechanics here.

On a tmpfs disk the page cache *is* the storage: nothing can be evicted (``evict`` reports the
pages still resident and :func:`evictable` says so); a miss case needs a ``dir`` or
``throttled`` disk on a real file system.

References
----------
.. [Cao07] Cao L., Luo H., Zhang X., "Measurement and analysis of factors affecting NFS
   bandwidth in cluster", Computer Engineering, 2007, sec. 1 (the three cases).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from .cgroups import BLKIO, exec_argv
from .lifecycle import status
from .system import TestbedError, run
from .topology import Topology

__all__ = [
    "server_dir",
    "prepare_files",
    "evict",
    "evictable",
    "job_file",
]

# Runs in the server's namespace (a fresh interpreter: the caller's threads stay out of it).
_HELPER = r"""
import ctypes, json, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
PAGE = os.sysconf("SC_PAGE_SIZE")

def resident(fd, size):
    if size == 0:
        return 1.0
    # a private mapping never touched: mincore reports the file's pages in the page cache
    m = mmap.mmap(fd, size, access=mmap.ACCESS_COPY)
    n = (size + PAGE - 1) // PAGE
    vec = ctypes.create_string_buffer(n)
    head = ctypes.c_char.from_buffer(m)
    rc = libc.mincore(ctypes.c_void_p(ctypes.addressof(head)), size, vec)
    del head
    m.close()
    if rc != 0:
        raise OSError(ctypes.get_errno(), "mincore")
    return sum(b & 1 for b in vec.raw) / n

out = []
for path, keep in json.loads(sys.argv[1]):
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        before = resident(fd, size)
        os.fsync(fd)
        start = (int(size * keep) // PAGE) * PAGE
        os.posix_fadvise(fd, start, size - start, os.POSIX_FADV_DONTNEED)
        after = resident(fd, size)
    finally:
        os.close(fd)
    out.append({"path": path, "size": size, "kept_from": start,
                "resident_before": before, "resident_after": after})
print(json.dumps(out))
"""


def job_file(prefix: str, job: int) -> str:
    """The file qnbench's nfs engine reads for job ``job`` with ``--nfs-prefix prefix``."""
    return f"{prefix}-job{job}.dat"


def server_dir(topo: Topology, server: str) -> Path:
    """The directory ``server`` exports (its disk), from the running testbed's state."""
    doc = status(topo)
    info = doc["nodes"].get(server)
    if not doc["up"] or info is None:
        raise TestbedError(f"testbed {topo.name!r} is not up (or has no server {server!r})")
    if info.get("service") != "nfs" or not (info.get("disk") or {}).get("path"):
        raise TestbedError(f"server {server!r} is not an NFS server with a disk directory")
    return Path(info["disk"]["path"])


def evictable(topo: Topology, server: str) -> bool:
    """Whether ``server``'s files can leave the page cache (not on a tmpfs disk)."""
    return topo.node(server).disk.kind in ("dir", "throttled")


def prepare_files(topo: Topology, server: str, prefix: str, jobs: int, size: int) -> list[Path]:
    """Write ``jobs`` files of ``size`` bytes for ``--nfs-prefix prefix`` on ``server``'s disk.

    Written from the host (not through the server's blkio throttle) and fsync'ed; they are then
    in the page cache (a server hit) until :func:`evict`. Files of the right size are reused.
    """
    if not isinstance(prefix, str) or not prefix or "/" in prefix:
        raise TestbedError(f"prefix must be a file-name prefix without '/', got {prefix!r}")
    d = server_dir(topo, server)
    block = bytes(range(256)) * 4096  # 1 MiB
    paths = []
    for j in range(jobs):
        p = d / job_file(prefix, j)
        if not (p.exists() and p.stat().st_size == size):
            with open(p, "wb") as f:
                left = size
                while left > 0:
                    left -= f.write(block[: min(left, len(block))])
                f.flush()
                os.fsync(f.fileno())
        paths.append(p)
    return paths


def evict(topo: Topology, server: str, paths: list[Any], keep: float = 0.0) -> list[dict]:
    """Drop ``paths`` (files on ``server``'s disk) from the page cache, except a head ``keep``.

    Waits until a throttled disk is idle (read-ahead still queued in the throttle would land in
    the cache afterwards), then runs ``fsync`` + ``posix_fadvise(POSIX_FADV_DONTNEED)`` on
    ``[keep * size, size)`` of each file in ``server``'s namespace. Returns per file
    ``resident_before``/``resident_after`` (shares of its pages in the page cache). Raises
    :class:`TestbedError` when ``keep`` is not in [0, 1] or a file is not on the server's disk.
    """
    if not isinstance(keep, int | float) or isinstance(keep, bool) or not 0.0 <= keep <= 1.0:
        raise TestbedError(f"keep must be a share of the file in [0, 1], got {keep!r}")
    d = server_dir(topo, server).resolve()
    _wait_disk_idle(topo, server)
    args = []
    for p in paths:
        rp = Path(p).resolve()
        if d not in rp.parents or not rp.is_file():
            raise TestbedError(f"{p} is not a file on the disk of server {server!r} ({d})")
        args.append([str(rp), float(keep)])
    cp = run(
        exec_argv(topo, server, [sys.executable, "-c", _HELPER, json.dumps(args)]), timeout=120.0
    )
    return json.loads(cp.stdout)


def _write_rate(topo: Topology, server: str, path: Any, size: int) -> float:
    """Write rate of ``server``'s disk as ganesha sees it, bytes/s: a component benchmark.

    The mechanics of :func:`qnmodel.lab.validation.bottomup.disk_rate` with ``op="write"``,
    ``method="dd"``. ``dd`` writes ``size`` bytes (1 MiB blocks) to ``path`` on the server's
    disk and fsyncs it before it exits (``conv=fsync``), inside the server's namespace *and*
    its blkio cgroup; returns bytes / elapsed and removes the file. This is the write side of
    b4 measured bottom-up (the file flushed as an NFS COMMIT on close flushes it), never
    through NFS.
    """
    d = server_dir(topo, server).resolve()
    rp = Path(path).resolve()
    if d not in rp.parents:
        raise TestbedError(f"{path} is not on the disk of server {server!r} ({d})")
    if not isinstance(size, int) or isinstance(size, bool) or size < 2**20:
        raise TestbedError(f"size must be an integer of at least 1 MiB, got {size!r}")
    _wait_disk_idle(topo, server)
    cmd = f'dd if=/dev/zero of="$0" bs=1M count={size // 2**20} conv=fsync status=none'
    argv = exec_argv(topo, server, ["sh", "-c", cmd, str(rp)], blkio=True)
    t0 = time.monotonic()
    try:
        run(argv, timeout=600.0)
        elapsed = time.monotonic() - t0
    finally:
        rp.unlink(missing_ok=True)
    return (size // 2**20) * 2**20 / elapsed


def _wait_disk_idle(topo: Topology, server: str, quiet: float = 0.5, limit: float = 60.0) -> None:
    """Wait until the server's throttled disk has moved no byte for ``quiet`` seconds.

    Read-ahead the server started for a pass that has ended sits in the blkio throttle's queue
    and lands in the page cache later: evicting before it has would leave those pages cached.
    """
    stats = BLKIO / topo.namespace(server) / "blkio.throttle.io_service_bytes"
    if not stats.exists():
        return
    deadline = time.monotonic() + limit
    last, since = stats.read_text(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = stats.read_text()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return


_PREAD = r"""
import os, sys, threading, time
size, share, files = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
total = sum(os.path.getsize(f) for f in files)
done, t_end, lock = [0], [None], threading.Lock()
def reader(f):
    fd = os.open(f, os.O_RDONLY)
    off = 0
    while True:
        n = len(os.pread(fd, size, off))
        if not n:
            break
        off += n
        with lock:
            done[0] += n
            if t_end[0] is None and done[0] >= share * total:
                t_end[0] = time.monotonic()
    os.close(fd)
threads = [threading.Thread(target=reader, args=(f,)) for f in files]
t0 = time.monotonic()
for t in threads:
    t.start()
for t in threads:
    t.join()
print(share * total / (t_end[0] - t0))
"""


def _read_rate(
    topo: Topology, server: str, paths: list[Any], request: int | None = None, share: float = 1.0
) -> float:
    """Read rate of ``server``'s disk as ganesha sees it, bytes/s: a component benchmark.

    The mechanics of :func:`qnmodel.lab.validation.bottomup.disk_rate` with ``method="dd"``
    (``request=None``) or ``"pread"``. Evicts ``paths`` (:func:`evict`), then reads them
    all at once inside the server's namespace *and* its blkio cgroup (the throttle ganesha
    runs under), and returns bytes / elapsed. This is b4 measured bottom-up, never through
    NFS. ``request=None``: one ``dd`` per file (1 MiB reads); ``request=R``: one thread per
    file in one process issuing ``pread`` calls of R bytes one after the other -- the way
    ganesha's workers read for clients with one R-byte READ in flight each -- timed until a
    ``share`` of all the bytes has arrived (as a study pass that stops there).
    """
    evict(topo, server, paths)
    files = [str(Path(p).resolve()) for p in paths]
    if request is None:
        reads = 'for f in "$@"; do dd if="$f" of=/dev/null bs=1M status=none & done; wait'
        argv = exec_argv(topo, server, ["sh", "-c", reads, "sh", *files], blkio=True)
    else:
        if not 0.0 < share <= 1.0 or int(request) < 4096:
            raise TestbedError(f"request >= 4096 B and share in (0, 1], got {request}, {share}")
        cmd = [sys.executable, "-c", _PREAD, str(int(request)), repr(float(share)), *files]
        argv = exec_argv(topo, server, cmd, blkio=True)
    t0 = time.monotonic()
    cp = run(argv, timeout=600.0)
    elapsed = time.monotonic() - t0
    if request is not None:
        return float(cp.stdout.split()[-1])
    return sum(Path(f).stat().st_size for f in files) / elapsed
