"""``qnmodel validate STUDY.toml --out DIR``: the command-line face of the validation studies."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable

__all__ = ["register", "main"]

_DESCRIPTION = """\
Run one validation study end to end (root: it brings a testbed up): bring the study's
testbed up, calibrate the model bottom-up from component benchmarks, predict, measure,
compare, and bring the testbed down (always). Writes summary.json (mape_x, mape_r,
inside_bounds_share, the per-point table), report.md, report.html and one figure per case
into DIR; a DIR that already holds a summary.json is refused without --force.
See docs/how-to/validate.md for the study file."""

_EPILOG = """examples:
  sudo qnmodel validate examples/testbed/raid_study_quick.toml --out results/raid-quick
  sudo qnmodel validate examples/testbed/raid_study.toml --out results/raid --force
"""


def register(add: Callable[..., argparse.ArgumentParser]) -> None:
    """Add the ``validate`` sub-command through the main parser's ``add(name, help, descr)``."""
    p = add("validate", "validate a model against a real testbed, end to end (root)",
            _DESCRIPTION)  # fmt: skip
    p.epilog = _EPILOG
    p.add_argument("study", help="study TOML file ([study] kind, topology, ...)")
    p.add_argument("--out", required=True, help="directory for summary.json, report, figures")
    p.add_argument("--force", action="store_true", help="overwrite results already in --out")
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    p.set_defaults(func=main)


def _pct(v) -> str:
    return "n/a" if v is None or not math.isfinite(v) else f"{v:.1f} %"


def main(args: argparse.Namespace) -> int:
    """Run ``qnmodel validate STUDY --out DIR``; returns the exit status."""
    from . import validate
    from ._common import _clean

    def log(msg: str) -> None:
        print(f"qnmodel validate: {msg}", file=sys.stderr)

    s = validate(args.study, args.out, force=args.force, log=log)
    if args.json:
        json.dump(_clean(s), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"{s.get('title', s.get('kind'))}: MAPE X {_pct(s['mape_x'])}, "
              f"R {_pct(s['mape_r'])}; inside the bounds "
              f"{_pct(100 * s['inside_bounds_share'])} of {len(s['points'])} points; "
              f"results in {args.out}")  # fmt: skip
    return 0
