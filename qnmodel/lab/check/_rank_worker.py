"""Entry point of one rank of :func:`qnmodel.lab.check.measure_ranks` (``python -m``, under
mpirun)."""

from __future__ import annotations

import sys

from .ranks import _rank_main

if __name__ == "__main__":  # pragma: no cover - runs under mpirun
    sys.exit(_rank_main(sys.argv[1:]))
