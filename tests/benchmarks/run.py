"""Run every ``bench_*.py`` in this folder, one after the other (``make bench``).

Each benchmark module defines ``main(argv) -> int`` that prints its own table (timings
beside peers measured in the same run, as ratios) and returns a non-zero status only when a
peer disagrees numerically. Speed is reported, never asserted. Usage::

    python tests/benchmarks/run.py            # all benchmarks
    python tests/benchmarks/run.py mva        # only those whose file name contains "mva"
"""

from __future__ import annotations

import importlib.util
import sys
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # for tests.octave; an installed qnmodel still comes first


def _own_tests_package() -> None:
    """Make ``tests`` this repository's folder: a peer package (ciw) installs a top-level
    ``tests`` package into site-packages, which would otherwise shadow ours."""
    mod = sys.modules.get("tests")
    here = str(ROOT / "tests")
    if mod is None or here not in list(getattr(mod, "__path__", [])):
        for name in [n for n in sys.modules if n == "tests" or n.startswith("tests.")]:
            del sys.modules[name]
        pkg = types.ModuleType("tests")
        pkg.__path__ = [here]
        sys.modules["tests"] = pkg


_own_tests_package()


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"qnmodel_bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    patterns = argv or [""]
    paths = [p for p in sorted(HERE.glob("bench_*.py")) if any(s in p.stem for s in patterns)]
    if not paths:
        print(f"no benchmark matches {patterns}", file=sys.stderr)
        return 2
    failed = []
    for path in paths:
        print(f"== {path.stem}")
        t0 = time.perf_counter()
        try:
            status = _load(path).main([])
        except Exception as exc:  # report and go on with the other benchmarks
            print(f"   error: {type(exc).__name__}: {exc}")
            status = 1
        print(f"   ({time.perf_counter() - t0:.1f} s)\n")
        if status:
            failed.append(path.stem)
    if failed:
        print(f"benchmarks with problems: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
