"""The environment a user's process has: the installed qnmodel, never this source tree.

Subprocesses, notebook kernels and example scripts started by the suite get the
suite's environment with every ``PYTHONPATH`` entry that points into the repository
removed, so they import the same installed package the suite tests.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _outside_repo(entry: str) -> bool:
    try:
        p = Path(entry or ".").resolve()
    except OSError:
        return True
    return p != ROOT and ROOT not in p.parents


def user_env(**extra: str) -> dict[str, str]:
    """``os.environ`` without source-tree ``PYTHONPATH`` entries, plus ``extra``."""
    env = dict(os.environ)
    kept = [e for e in env.get("PYTHONPATH", "").split(os.pathsep) if e and _outside_repo(e)]
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        env.pop("PYTHONPATH", None)
    env.update(extra)
    return env


def drop_source_tree(monkeypatch) -> None:
    """Make the current environment a user's (for kernels started by nbclient)."""
    env = user_env()
    if "PYTHONPATH" in env:
        monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])
    else:
        monkeypatch.delenv("PYTHONPATH", raising=False)
