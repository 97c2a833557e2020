"""ctypes binding of the compiled event loop (``libqnsim``, sources in ``simulation/_csrc``).

The library is a plain C11 shared object installed as ``qnmodel/_lib/libqnsim.so`` (``.dylib``
on macOS, ``qnsim.dll`` on Windows) by the package's CMake build; it is loaded on first use.
There is no Python fallback for the event loop: without the library :func:`library` raises
:class:`SimulatorUnavailableError` saying where it looked and how to build it.

Environment
-----------
``QNMODEL_SIM_LIB=/path/to/libqnsim.so``
    Load this file instead of the installed one.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import QNModelError

__all__ = ["SimulatorUnavailableError", "CompiledModel", "library", "run"]

ABI_VERSION = 4

_f8 = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")
_i8 = np.ctypeslib.ndpointer(dtype=np.int64, flags="C_CONTIGUOUS")
_I64 = ctypes.c_int64
_state: dict = {"lib": None}


class SimulatorUnavailableError(QNModelError, RuntimeError):
    """The compiled event loop (``libqnsim``) is not installed or cannot be loaded."""


def _default_path() -> Path:
    lib_dir = Path(__file__).resolve().parent.parent / "_lib"
    if sys.platform == "win32":
        return lib_dir / "qnsim.dll"
    if sys.platform == "darwin":
        return lib_dir / "libqnsim.dylib"
    return lib_dir / "libqnsim.so"


def library() -> ctypes.CDLL:
    """The loaded event-loop library (loaded once); raises if it is missing."""
    if _state["lib"] is not None:
        return _state["lib"]
    env = os.environ.get("QNMODEL_SIM_LIB", "")
    path = Path(env) if env else _default_path()
    hint = (
        "the simulator's event loop is compiled C with no Python fallback; reinstall qnmodel "
        "with a C compiler and CMake available (pip install .), or build it with "
        "`cmake -S qnmodel/simulation/_csrc -B build/sim && cmake --build build/sim` and set "
        "QNMODEL_SIM_LIB to the library"
    )
    if not path.is_file():
        raise SimulatorUnavailableError(f"no compiled simulator at {path}: {hint}")
    try:
        lib = ctypes.CDLL(str(path))
        lib.qns_abi_version.restype = ctypes.c_int
        lib.qns_abi_version.argtypes = []
        abi = lib.qns_abi_version()
    except (OSError, AttributeError) as exc:
        raise SimulatorUnavailableError(f"cannot load {path}: {exc}; {hint}") from exc
    if abi != ABI_VERSION:
        raise SimulatorUnavailableError(
            f"{path} has ABI version {abi}, this qnmodel expects {ABI_VERSION}; {hint}"
        )
    lib.qns_run.restype = ctypes.c_int
    lib.qns_run.argtypes = (
        [_I64] * 3  # C, K, P
        + [_i8] * 5  # nodes
        + [_i8] * 4
        + [_f8, _i8]  # stations
        + [_i8, _i8, _f8, _f8, _i8, _i8, _i8]  # classes
        + [_I64, _i8, _f8, _i8]  # routing matrix
        + [_i8, _I64]  # priority levels
        + [_i8, _f8, _f8, _f8, _i8, _i8, _f8]  # service
        + [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_double, ctypes.c_double, _I64]
        + [ctypes.c_double, _I64, _f8, _I64]
        + [_f8] * 10
        + [_i8]
    )
    _state["lib"] = lib
    return lib


@dataclass(frozen=True)
class CompiledModel:
    """Flat arrays describing a network for the event loop (layout of ``qnsim.h``)."""

    C: int
    K: int
    P: int
    node_kind: np.ndarray
    node_first: np.ndarray
    node_count: np.ndarray
    node_k: np.ndarray
    node_fan: np.ndarray
    st_kind: np.ndarray
    st_servers: np.ndarray
    st_ld_off: np.ndarray
    st_ld_len: np.ndarray
    ld_rates: np.ndarray
    st_cap: np.ndarray
    cls_open: np.ndarray
    cls_pop: np.ndarray
    cls_think: np.ndarray
    cls_rate: np.ndarray
    route_off: np.ndarray
    route_len: np.ndarray
    routes: np.ndarray
    cls_level: np.ndarray
    levels: int
    svc_kind: np.ndarray
    svc_mean: np.ndarray
    svc_p1: np.ndarray
    svc_p2: np.ndarray
    svc_tab_off: np.ndarray
    svc_tab_len: np.ndarray
    svc_tab: np.ndarray
    #: routing matrix rows (a routed run; qnsim.h): offsets (C (K + 1) + 1,), destination
    #: states c' (K + 1) + k' and cumulative probabilities; None: the class routes
    rt_off: np.ndarray | None = None
    rt_dst: np.ndarray | None = None
    rt_cum: np.ndarray | None = None


@dataclass(frozen=True)
class RunOutput:
    """Per-batch sums of one run (arrays with a leading batch axis)."""

    done: np.ndarray  # (B, C)
    rsum: np.ndarray  # (B, C)
    quant: np.ndarray  # (B, C, NQ)
    area: np.ndarray  # (B, C, P)
    busy: np.ndarray  # (B, C, P)
    narea: np.ndarray  # (B, C, K)
    visits: np.ndarray  # (B, C, K)
    resid: np.ndarray  # (B, C, K)
    arrivals: np.ndarray  # (B, C) open arrivals
    lost: np.ndarray  # (B, C, K) open jobs lost at a full station
    events: int


def _interruptible(call, *args):
    """``call(*args)`` (a ctypes call, which releases the GIL) in a worker thread, the main
    thread waiting in short joins: Ctrl-C then raises KeyboardInterrupt at once instead of
    after the whole run. The abandoned run finishes in the background (its length is bounded
    by :data:`qnmodel.simulation._work.MAX_EVENTS`) and its results are dropped."""
    if threading.current_thread() is not threading.main_thread():
        return call(*args)
    out: list = []
    worker = threading.Thread(target=lambda: out.append(call(*args)), name="qnsim", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.05)
    if not out:  # pragma: no cover - a ctypes call does not raise
        raise RuntimeError("simulate: the event loop ended without a result")
    return out[0]


def run(
    m: CompiledModel,
    *,
    seed: int,
    stream: int,
    warmup: float,
    batch: float,
    batches: int,
    r_scale: float,
    quantiles: np.ndarray,
    max_tasks: int,
) -> RunOutput:
    """One simulation run: a warm-up, then ``batches`` consecutive periods of ``batch`` s."""
    lib = library()
    B, C, K, P = int(batches), m.C, m.K, m.P
    qs = np.ascontiguousarray(quantiles, dtype=np.float64)
    NQ = qs.size
    routed = m.rt_off is not None
    rt_off = m.rt_off if routed else np.zeros(1, np.int64)
    rt_dst = m.rt_dst if routed else np.zeros(1, np.int64)
    rt_cum = m.rt_cum if routed else np.ones(1)
    done, rsum = np.empty((B, C)), np.empty((B, C))
    quant = np.empty((B, C, max(NQ, 1)))
    area, busy = np.empty((B, C, P)), np.empty((B, C, P))
    narea, visits, resid = np.empty((B, C, K)), np.empty((B, C, K)), np.empty((B, C, K))
    arrivals, lost = np.empty((B, C)), np.empty((B, C, K))
    events = np.zeros(1, dtype=np.int64)
    rc = _interruptible(
        lib.qns_run,
        C, K, P,
        m.node_kind, m.node_first, m.node_count, m.node_k, m.node_fan,
        m.st_kind, m.st_servers, m.st_ld_off, m.st_ld_len, m.ld_rates, m.st_cap,
        m.cls_open, m.cls_pop, m.cls_think, m.cls_rate, m.route_off, m.route_len, m.routes,
        int(routed), rt_off, rt_cum, rt_dst,
        m.cls_level, int(m.levels),
        m.svc_kind, m.svc_mean, m.svc_p1, m.svc_p2, m.svc_tab_off, m.svc_tab_len, m.svc_tab,
        ctypes.c_uint64(int(seed) & 0xFFFFFFFFFFFFFFFF), ctypes.c_uint64(int(stream)),
        float(warmup), float(batch), B, float(r_scale), NQ, qs if NQ else np.zeros(1),
        int(max_tasks),
        done, rsum, quant, area, busy, narea, visits, resid, arrivals, lost, events,
    )  # fmt: skip
    if rc == -1:
        raise MemoryError("simulate: the event loop could not allocate its memory")
    if rc == -2:
        from ..errors import UnstableModelError

        raise UnstableModelError(
            f"simulate: more than {max_tasks} jobs in the system at once; an open class is "
            "saturating a station (check arrival_rate against the capacities), or raise max_jobs"
        )
    if rc == -3:
        from ..errors import InvalidModelError

        raise InvalidModelError(
            "simulate: the network deadlocked: every closed job is blocked, each waiting for "
            "room at a full station (capacity) held by the others; raise the capacities or "
            "lower the population"
        )
    return RunOutput(
        done, rsum, quant[:, :, :NQ], area, busy, narea, visits, resid, arrivals, lost,
        int(events[0]),
    )  # fmt: skip
