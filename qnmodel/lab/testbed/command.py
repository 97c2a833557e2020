"""``qnmodel testbed up|down|status TOPOLOGY.toml``: the command-line face of the testbed."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from .lifecycle import down, status, up
from .topology import load_topology

__all__ = ["register", "main"]

_DESCRIPTION = """\
A real networked-storage testbed on this machine (root required):
  up      create the namespaces, shaped veth links, disks and servers of TOPOLOGY
  down    remove everything the testbed created (also what a crashed 'up' left)
  status  show what is up (JSON with --json)
Only names starting with qnm-<testbed name>- are created or removed. See
docs/how-to/testbed.md for the topology format."""


def register(add: Callable[..., argparse.ArgumentParser]) -> None:
    """Add the ``testbed`` sub-command through the main parser's ``add(name, help, descr)``."""
    p = add("testbed", "a real networked-storage testbed: up, down, status (root)", _DESCRIPTION)
    p.add_argument("action", choices=("up", "down", "status"), help="what to do")
    p.add_argument("topology", help="topology TOML file")
    p.add_argument("--json", action="store_true", help="print the status as JSON")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds a server may take to start")
    p.set_defaults(func=main)


def _print_status(doc: dict, as_json: bool) -> None:
    if as_json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    state = (
        "up"
        if doc["up"]
        else ("partial (run down)" if doc.get("leftovers") or doc["namespaces"] else "down")
    )
    print(f"testbed {doc['name']}: {state}")
    for name, n in doc.get("nodes", {}).items():
        rate = n.get("rate_B_s")
        link = f"{rate * 8 / 1e6:g} Mbit/s" if rate else "unshaped"
        extra = ""
        if n.get("service") not in (None, "none"):
            run = "running" if n.get("running") else "NOT RUNNING"
            extra = f"  {n['service']} {run}" + (
                f"  {n['url']}" if n.get("url") else f"  port {n.get('port')}"
            )
        print(f"  {n['role']:<6} {name:<14} {n['namespace']:<28} {n['address']:<15} {link}{extra}")


def main(args: argparse.Namespace) -> int:
    """Run ``qnmodel testbed ACTION TOPOLOGY``; returns the exit status."""
    topo = load_topology(args.topology)
    quiet = getattr(args, "quiet", False)

    def log(msg: str) -> None:
        if not quiet:
            print(f"qnmodel testbed: {msg}", file=sys.stderr)

    if args.action == "up":
        _print_status(up(topo, log=log, timeout=args.timeout), args.json)
    elif args.action == "down":
        down(topo, log=log)
    else:
        _print_status(status(topo), args.json)
    return 0
