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
    "mva_single",
    "mva_curve",
    "mva_ld1",
    "mva_ldn",
    "mva_multiclass",
    "amva_core",
]

ABI_VERSION = 2

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
    lib.qnk_mva_single.restype = ctypes.c_int
    lib.qnk_mva_single.argtypes = [_I64, _f8, _f8, ctypes.c_double, _I64, ctypes.c_int, _f8, _f8]
    lib.qnk_mva_curve.restype = ctypes.c_int
    lib.qnk_mva_curve.argtypes = [
        _I64, _f8, _f8, _f8, ctypes.c_double, _I64, _f8, _f8, _f8, _f8, _f8, _f8,
    ]  # fmt: skip
    lib.qnk_mva_ld1.restype = ctypes.c_int
    lib.qnk_mva_ld1.argtypes = [
        _I64, _f8, _f8, _f8, ctypes.c_double, _I64, _I64, _I64, ctypes.c_int,
        _f8, _f8, _f8, _f8, _f8,
    ]  # fmt: skip
    lib.qnk_mva_ldn.restype = ctypes.c_int
    lib.qnk_mva_ldn.argtypes = [
        _I64, _f8, _f8, _f8, ctypes.c_double, _I64, _I64, _i8, _i8, _f8, ctypes.c_int,
        _f8, _f8, _f8, _f8, _f8, _f8,
    ]  # fmt: skip
    lib.qnk_mva_multiclass.restype = ctypes.c_int
    lib.qnk_mva_multiclass.argtypes = [_I64, _I64, _i8, _f8, _f8, _f8, _f8, _f8]
    lib.qnk_amva_core.restype = ctypes.c_int
    lib.qnk_amva_core.argtypes = [
        _I64, _I64, _f8, _f8, _f8, _f8, ctypes.c_void_p, _f8,
        ctypes.c_double, _I64, _f8, _f8, ctypes.POINTER(_I64), ctypes.POINTER(ctypes.c_double),
    ]  # fmt: skip


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


def mva_single(D, Dq, Z: float, N: int, keep_all: bool):
    """Single-class exact MVA recursion: X (P,), R_k (P, K); P = N or 1."""
    lib = _lib()
    D, Dq = _f(D), _f(Dq)
    K = D.size
    P = N if keep_all else 1
    X = np.empty(P)
    Rk = np.empty((P, K))
    _check(lib.qnk_mva_single(K, D, Dq, float(Z), int(N), int(keep_all), X, Rk), "mva")
    return X, Rk


def mva_curve(D, Dq, Du, Z: float, N: int):
    """Single-class exact MVA, whole curve in one pass: n, X, R (N,) and R_k, Q_k, U_k (N, K).

    Every array is freshly allocated here and written once by the kernel (no
    temporaries, no post-passes), ready to be handed to a result uncopied.
    """
    lib = _lib()
    D, Dq, Du = _f(D), _f(Dq), _f(Du)
    K = D.size
    n, X, R = np.empty(N), np.empty(N), np.empty(N)
    Rk, Q, U = np.empty((N, K)), np.empty((N, K)), np.empty((N, K))
    _check(lib.qnk_mva_curve(K, D, Dq, Du, float(Z), int(N), n, X, R, Rk, Q, U), "mva")
    return n, X, R, Rk, Q, U


def mva_ld1(D, Dq, Du, Z: float, N: int, s: int, m: int, keep_all: bool):
    """Exact MVA with one multi-server station ``s`` of ``m`` servers (complement form).

    Returns X, R (P,) and R_k, Q_k, U_k (P, K); P = N or 1.
    """
    lib = _lib()
    D, Dq, Du = _f(D), _f(Dq), _f(Du)
    K = D.size
    P = N if keep_all else 1
    X, R = np.empty(P), np.empty(P)
    Rk, Q, U = np.empty((P, K)), np.empty((P, K)), np.empty((P, K))
    rc = lib.qnk_mva_ld1(
        K, D, Dq, Du, float(Z), int(N), int(s), int(m), int(keep_all), X, R, Rk, Q, U
    )
    _check(rc, "mva_load_dependent")
    return X, R, Rk, Q, U


def mva_ldn(D, Dq, Du, Z: float, N: int, idx, m, Tc, mode: str):
    """One subset pass of the complement recursion: T (N,) and, for ``mode`` "all" or
    "last", (X, R, R_k, Q_k, U_k); None for "none"."""
    lib = _lib()
    D, Dq, Du, Tc = _f(D), _f(Dq), _f(Du), _f(Tc)
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    m = np.ascontiguousarray(m, dtype=np.int64)
    K = D.size
    code = {"none": 0, "all": 1, "last": 2}[mode]
    P = N if code == 1 else 1
    T = np.empty(N)
    X, R = np.empty(P), np.empty(P)
    Rk, Q, U = np.empty((P, K)), np.empty((P, K)), np.empty((P, K))
    rc = lib.qnk_mva_ldn(
        K, D, Dq, Du, float(Z), int(N), idx.size, idx, m, Tc, code, T, X, R, Rk, Q, U
    )
    _check(rc, "mva_load_dependent")
    return T, (None if code == 0 else (X, R, Rk, Q, U))


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
