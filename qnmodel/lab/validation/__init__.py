"""Validation studies: a model against a real testbed, end to end (``qnmodel validate``).

A study file names its kind, its testbed topology and kind-specific keys::

    [study]
    kind = "raid"                        # the module qnmodel.lab.validation.<kind>
    topology = "raid_100mbit.toml"       # relative to the study file
    title = "networked RAID, 100 Mbit/s" # optional

    [raid]                               # the kind's own keys (see its module)
    ...

:func:`validate` loads it, calls ``qnmodel.lab.validation.<kind>.run(spec, topology, out_dir)``
(``spec`` the parsed TOML, ``topology`` the loaded :class:`~qnmodel.lab.testbed.Topology` or
None when the study has none) -- which brings the testbed up, calibrates the model bottom-up
from component benchmarks, predicts, measures, compares and always brings the testbed down
-- and writes ``summary.json``, ``report.md``/``report.html`` and the figures into the
output directory. Kinds: ``raid`` (seed 002, :mod:`qnmodel.lab.validation.raid`), ``nfs`` (seed
001, :mod:`qnmodel.lab.validation.nfs`) and ``stripe`` (qnbench stripe over emulated members,
:mod:`qnmodel.lab.validation.stripe`, no topology).

Every summary carries at least ``mape_x``, ``mape_r`` (percent), ``inside_bounds_share``
(0..1) and ``points`` (see :mod:`qnmodel.lab.validation._common`).
"""

from __future__ import annotations

import importlib
import logging
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import InvalidModelError
from ._common import POINT_KEYS, inside, mape, mean_ci, summarize, write_outputs

__all__ = [
    "LOG",
    "POINT_KEYS",
    "REQUIRED",
    "inside",
    "load_study",
    "mape",
    "mean_ci",
    "parse_study",
    "summarize",
    "validate",
    "write_outputs",
]

#: keys every study's summary must carry
REQUIRED = ("mape_x", "mape_r", "inside_bounds_share", "points")

#: the logger studies report progress to (``qnmodel validate`` prints it on stderr)
LOG = logging.getLogger("qnmodel.lab.validation")


class _LogHandler(logging.Handler):
    def __init__(self, fn: Callable[[str], None]) -> None:
        super().__init__(logging.INFO)
        self.fn = fn

    def emit(self, record: logging.LogRecord) -> None:
        self.fn(record.getMessage())


_KIND_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def load_study(path: str | Path) -> tuple[dict, Any]:
    """Read a study file: ``(spec, topology)``; topology is None when the study names none.

    Raises
    ------
    InvalidModelError
        unreadable or invalid TOML, no ``[study]`` table, a ``kind`` that is not a name, a
        topology file that cannot be read (naming the path).
    """
    p = Path(path)
    try:
        spec = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidModelError(f"cannot read study {str(p)!r}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InvalidModelError(f"{p}: not valid TOML: {exc}") from None
    study = spec.get("study")
    if not isinstance(study, dict):
        raise InvalidModelError(f'{p}: a study needs a [study] table with kind = "..."')
    kind = study.get("kind")
    if not isinstance(kind, str) or not _KIND_RE.match(kind):
        raise InvalidModelError(f"{p}: study.kind must be a name such as 'raid', got {kind!r}")
    topology = None
    if "topology" in study:
        if not isinstance(study["topology"], str):
            raise InvalidModelError(
                f"{p}: study.topology must be a path string, got {study['topology']!r}"
            )
        from ..testbed import load_topology

        topology = load_topology(p.parent / study["topology"])
    return spec, topology


def _kind_module(kind: str):
    try:
        return importlib.import_module(f"{__name__}.{kind}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{kind}":
            raise
        raise InvalidModelError(
            f"study.kind: no validation study of kind {kind!r} (no module {__name__}.{kind})"
        ) from None


def parse_study(path: str | Path) -> tuple[dict, Any, dict]:
    """Read and check a study file without running it: ``(spec, topology, params)``.

    ``params`` is the kind's own table checked and in SI units, as the kind's ``parse(spec,
    topology)`` returns it (what ``run`` measures); nothing is brought up or written.

    Raises
    ------
    InvalidModelError, InvalidTypeError, UnitError
        as :func:`load_study`, or a kind's table with an unknown key or a bad value (naming
        the field and the value).
    """
    spec, topology = load_study(path)
    module = _kind_module(spec["study"]["kind"])
    parse = getattr(module, "parse", None)
    if parse is None:
        raise InvalidModelError(
            f"study.kind: the {spec['study']['kind']!r} study has no parser of its table"
        )
    return spec, topology, parse(spec, topology)


def validate(
    study_path: str | Path,
    out_dir: str | Path,
    *,
    force: bool = False,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Run one study end to end and write its results into ``out_dir``; returns the summary.

    Parameters
    ----------
    study_path : path
        The study TOML file (module docstring).
    out_dir : path
        Directory for ``summary.json``, ``report.md``, ``report.html`` and figures; created
        when missing. A directory that already holds a ``summary.json`` is refused unless
        ``force``.
    force : bool
        Overwrite earlier results.
    log : callable, optional
        Receives the progress lines the study logs to :data:`LOG`.

    Raises
    ------
    InvalidModelError
        a bad study file, an unknown kind, results already in ``out_dir`` without ``force``,
        or a kind whose summary lacks one of :data:`REQUIRED`.
    """
    from ..._files import check_output_dir, output_dir

    out = Path(out_dir)
    check_output_dir(out, ("summary.json", "report.md", "report.html"))  # before any run
    if (out / "summary.json").exists() and not force:
        raise InvalidModelError(
            f"{out} already holds results (summary.json): choose another --out or pass --force"
        )
    spec, topology = load_study(study_path)
    spec["study"]["path"] = str(study_path)
    module = _kind_module(spec["study"]["kind"])
    if hasattr(module, "parse"):  # a bad table is refused before anything is created
        module.parse(spec, topology)
    output_dir(out)
    handler = _LogHandler(log) if log is not None else None
    if handler is not None:
        LOG.addHandler(handler)
        LOG.setLevel(logging.INFO)
    try:
        summary = module.run(spec, topology, out)
    finally:
        if handler is not None:
            LOG.removeHandler(handler)
    missing = [k for k in REQUIRED if k not in summary]
    if missing:
        raise InvalidModelError(
            f"study kind {spec['study']['kind']!r} returned no {', '.join(missing)}"
        )
    summary.setdefault("kind", spec["study"]["kind"])
    summary.setdefault("title", spec["study"].get("title", spec["study"]["kind"]))
    summary.setdefault("topology", topology.source if topology is not None else None)
    write_outputs(summary, out)
    return summary
