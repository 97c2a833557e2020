"""Loader of the compiled solver kernels (``libqnkernels``), with a numpy fallback.

The kernels are a plain C11 shared library built by the package's CMake build
(sources in ``qnmodel/solvers/_csrc``) and installed as
``qnmodel/_lib/libqnkernels.so`` (``.dylib`` on macOS, ``qnkernels.dll`` on
Windows). It is not a Python extension module, so one wheel serves every
CPython version; it is loaded with :mod:`ctypes` on first use, never at import.

When the library is missing the solvers use their pure-numpy code paths,
which give the same results (to rounding, tested to 1e-12 relative).
:func:`available` says which path is in use and :func:`status` why.

Environment
-----------
``QNMODEL_NO_C=1``
    Never load the library: always use numpy.
``QNMODEL_KERNELS_LIB=/path/to/libqnkernels.so``
    Load this file instead of the installed one.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

__all__ = [
    "available",
    "status",
    "library_path",
    "load",
    "force_numpy",
    "result_arrays",
    "mva",
    "mva_ld",
    "mva_multiclass",
    "amva_core",
    "log_convolve",
    "log_moment",
]

ABI_VERSION = 4

_state: dict = {"tried": False, "lib": None, "path": None, "why": "not loaded yet", "off": 0}

_f8 = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")
_i8 = np.ctypeslib.ndpointer(dtype=np.int64, flags="C_CONTIGUOUS")
_I64 = ctypes.c_int64


def _default_path() -> Path:
    lib_dir = Path(__file__).resolve().parent.parent / "_lib"
    if sys.platform == "win32":
        return lib_dir / "qnkernels.dll"
    if sys.platform == "darwin":
        return lib_dir / "libqnkernels.dylib"
    return lib_dir / "libqnkernels.so"


def _bind(lib: ctypes.CDLL) -> None:
    lib.qnk_abi_version.restype = ctypes.c_int
    lib.qnk_abi_version.argtypes = []
    lib.qnk_mva.restype = ctypes.c_int
    lib.qnk_mva.argtypes = [_I64, _I64] + [ctypes.c_void_p] * 4 + [_I64] + [ctypes.c_void_p] * 6
    lib.qnk_mva_ld.restype = ctypes.c_int
    lib.qnk_mva_ld.argtypes = [
        _I64, _f8, _f8, _f8, ctypes.c_double, _I64, _I64, _i8, _i8, ctypes.c_int,
        _f8, _f8, _f8, _f8, _f8,
    ]  # fmt: skip
    lib.qnk_mva_multiclass.restype = ctypes.c_int
    lib.qnk_mva_multiclass.argtypes = [_I64, _I64, _i8, _f8, _f8, _f8, _f8, _f8]
    lib.qnk_amva_core.restype = ctypes.c_int
    lib.qnk_amva_core.argtypes = [
        _I64, _I64, _f8, _f8, _f8, _f8, ctypes.c_void_p, _f8,
        ctypes.c_double, _I64, _f8, _f8, ctypes.POINTER(_I64), ctypes.POINTER(ctypes.c_double),
    ]  # fmt: skip
    lib.qnk_log_convolve.restype = ctypes.c_int
    lib.qnk_log_convolve.argtypes = [_I64, _f8, _f8, _f8]
    lib.qnk_log_moment.restype = ctypes.c_int
    lib.qnk_log_moment.argtypes = [_I64, _i8, _f8, _f8, _f8, _f8]


def load(path: str | os.PathLike | None = None) -> bool:
    """(Re)load the library from ``path`` (default: env override, then installed).

    Returns True when it loaded; otherwise :func:`status` gives the reason and
    the numpy path stays in use.
    """
    _state.update(tried=True, lib=None, path=None)
    if path is None:
        if os.environ.get("QNMODEL_NO_C", "") not in ("", "0"):
            _state["why"] = "disabled by QNMODEL_NO_C"
            return False
        env = os.environ.get("QNMODEL_KERNELS_LIB", "")
        path = Path(env) if env else _default_path()
    path = Path(path)
    if not path.is_file():
        _state["why"] = f"no compiled kernels at {path}"
        return False
    try:
        lib = ctypes.CDLL(str(path))
        _bind(lib)
        abi = lib.qnk_abi_version()
    except (OSError, AttributeError) as exc:
        _state["why"] = f"cannot load {path}: {exc}"
        return False
    if abi != ABI_VERSION:
        _state["why"] = f"{path} has ABI version {abi}, expected {ABI_VERSION}"
        return False
    _state.update(lib=lib, path=path, why=f"compiled kernels loaded from {path}")
    return True


def _lib() -> ctypes.CDLL | None:
    if _state["off"]:
        return None
    if not _state["tried"]:
        load()
    return _state["lib"]


def available() -> bool:
    """True when the compiled kernels are loaded and in use."""
    return _lib() is not None


def status() -> str:
    """Why the compiled kernels are (not) in use, for diagnostics."""
    if _state["off"]:
        return "numpy path forced by force_numpy()"
    _lib()
    return _state["why"]


def library_path() -> Path | None:
    """Path of the loaded library, or None."""
    return _state["path"] if available() else None


@contextlib.contextmanager
def force_numpy() -> Iterator[None]:
    """Use the pure-numpy paths inside the block (tests and benchmarks)."""
    _state["off"] += 1
    try:
        yield
    finally:
        _state["off"] -= 1


def _check(rc: int, what: str) -> None:
    if rc < 0:
        raise MemoryError(f"{what}: the compiled kernel could not allocate its work memory")


def _f(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


# glibc serves blocks above a dynamic threshold (initially 128 KiB, at most 32 MiB on
# 64-bit) with mmap, and returns freed memory above twice that threshold to the OS.
# Freeing one mmap-served block raises the threshold to its size (mallopt(3),
# "M_MMAP_THRESHOLD"). A whole MVA curve is three N x K arrays; without this, every call
# maps them afresh and pays a page fault per 4 KiB, which costs three times the
# recursion. One block of their total size, allocated and freed once per process (and
# again only when a larger curve comes), makes glibc keep that much memory for reuse.
_ALLOC_WARM = {"bytes": 0}
_GLIBC_MMAP_THRESHOLD_MAX = 32 << 20


def _warm_allocator(nbytes: int) -> None:
    if _ALLOC_WARM["bytes"] < nbytes <= _GLIBC_MMAP_THRESHOLD_MAX and sys.platform == "linux":
        np.empty(nbytes // 8 + 4096)  # allocated and freed at once
        _ALLOC_WARM["bytes"] = nbytes


def result_arrays(lead: tuple, rows: int, K: int, want: set):
    """Fresh result arrays X, R (lead + (rows,)) and R_k, Q, U (lead + (rows, K)); None for
    those not in ``want``. Used by the compiled kernels and their numpy twins alike, after
    preparing the allocator for the per-station arrays (see above)."""
    per = [w for w in ("Rk", "Q", "U") if w in want]
    _warm_allocator(len(per) * 8 * rows * K * (lead[0] if lead else 1))
    out = [np.empty((*lead, rows)) if w in want else None for w in ("X", "R")]
    out += [np.empty((*lead, rows, K)) if w in want else None for w in ("Rk", "Q", "U")]
    return out


def _ptr(a) -> int | None:
    """Address of a C-contiguous float64/int64 array for the kernel, None for None."""
    if a is None:
        return None
    if not (a.flags.c_contiguous and a.dtype in (np.float64, np.int64)):
        raise ValueError("kernel arrays must be C-contiguous float64 or int64")
    return a.ctypes.data


def mva(D, Dq, Du, Z, rows: int, kept, X, R, Rk, Q, U) -> None:
    """Batched single-class exact MVA (``qnk_mva``) into the given arrays.

    D, Dq (and Du, or None) are (K,) or (P, K), Z (P,); ``kept`` is None (every n = 1..rows)
    or the strictly increasing populations to keep (int64). Outputs from
    :func:`result_arrays`; R_k, Q, U may be None.
    """
    lib = _lib()
    D, Dq, Z = _f(D), _f(Dq), _f(Z)
    Du = None if Du is None else _f(Du)
    K = D.shape[-1]
    P = D.size // K if K else Z.size
    args = [_ptr(a) for a in (D, Dq, Du, Z)] + [int(rows), _ptr(kept)]
    args += [_ptr(a) for a in (X, R, Rk, Q, U)]
    _check(lib.qnk_mva(int(P), int(K), *args), "mva")


def mva_ld(D, Dq, Du, Z: float, N: int, idx, m, keep_all: bool, X, R, Rk, Q, U) -> None:
    """The complement recursion over every subset of the multi-server stations ``idx``
    (``qnk_mva_ld``) into the given arrays (from :func:`result_arrays`), rows n = 1..N
    (``keep_all``) or n = N."""
    lib = _lib()
    D, Dq, Du = _f(D), _f(Dq), _f(Du)
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    m = np.ascontiguousarray(m, dtype=np.int64)
    rc = lib.qnk_mva_ld(
        D.size, D, Dq, Du, float(Z), int(N), idx.size, idx, m, int(keep_all), X, R, Rk, Q, U
    )
    _check(rc, "mva_load_dependent")


def mva_multiclass(D, Dq, Z, N):
    """Multi-class exact MVA at N (every N_c >= 1): X (C,), R_ck (C, K)."""
    lib = _lib()
    D, Dq, Z = _f(D), _f(Dq), _f(Z)
    N = np.ascontiguousarray(N, dtype=np.int64)
    C, K = D.shape
    X = np.empty(C)
    R = np.empty((C, K))
    _check(lib.qnk_mva_multiclass(C, K, N, D, Dq, Z, X, R), "mva_multiclass")
    return X, R


def amva_core(M, D, Dq, Z, Dlt, Q, tol: float, max_iter: int):
    """Schweitzer (Dlt None) / Linearizer core; Q (C, K) is updated in place.

    Returns X (C,), R (C, K), converged, iterations, residual.
    """
    lib = _lib()
    M, D, Dq, Z = _f(M), _f(D), _f(Dq), _f(Z)
    C, K = D.shape
    if not (Q.flags.c_contiguous and Q.dtype == np.float64):
        raise ValueError("Q must be a C-contiguous float64 array")
    dptr = None
    if Dlt is not None:
        Dlt = _f(Dlt)
        dptr = Dlt.ctypes.data
    X = np.empty(C)
    R = np.empty((C, K))
    it = _I64(0)
    res = ctypes.c_double(0.0)
    rc = lib.qnk_amva_core(
        C, K, M, D, Dq, Z, dptr, Q, float(tol), int(max_iter), X, R,
        ctypes.byref(it), ctypes.byref(res),
    )  # fmt: skip
    _check(rc, "amva")
    return X, R, rc == 0, int(it.value), float(res.value)


def log_convolve(la, lb) -> np.ndarray:
    """c[n] = log sum_j exp(la[j] + lb[n-j]) (``qnk_log_convolve``), equal lengths."""
    la, lb = _f(la), _f(lb)
    out = np.empty(la.size)
    _check(_lib().qnk_log_convolve(la.size, la, lb, out), "log_convolve")
    return out


def log_moment(lf, comp, lG, n_idx) -> np.ndarray:
    """sum_j j exp(lf[j] + comp[n-j] - lG[n]) for n in n_idx (``qnk_log_moment``)."""
    lf, comp, lG = _f(lf), _f(comp), _f(lG)
    n_idx = np.ascontiguousarray(n_idx, dtype=np.int64)
    out = np.empty(n_idx.size)
    _check(_lib().qnk_log_moment(n_idx.size, n_idx, lf, comp, lG, out), "log_moment")
    return out
