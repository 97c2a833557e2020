"""Capacity of a small file service: bounds, exact MVA and a plot, from unit strings.

Clients read 64 KiB blocks from one file server over 100 Mbit/s Ethernet and
think 50 ms between requests. The script builds the closed network from the
hardware figures, prints where the knee is and which device saturates, then
answers the planner's question "how many clients until R exceeds 50 ms?" for
the link as it is and for a 1 Gbit/s upgrade.

Run:  python examples/demo_storage.py [OUTPUT_DIR]      (default: the current directory)
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import qnmodel as qn  # noqa: E402
from qnmodel import plotting, units  # noqa: E402

BLOCK = units.parse("64 KiB")
DISK_SERVICE = units.parse("4.9 ms") + units.parse("2.99 ms") + BLOCK / units.parse("35 MB/s")
CACHE_MISS = 0.5  # half of the reads miss the server cache


def storage_network(link_rate: str = "100 Mbit/s") -> qn.Network:
    """The file service as a closed network; demands in seconds."""
    return qn.Network(
        [
            qn.Station("client_cpu", "0.4 ms"),
            qn.Station("client_nic", BLOCK / units.parse("1 Gbit/s")),
            qn.Station("network", BLOCK / units.parse(link_rate)),
            qn.Station("server_cpu", 2 * units.parse("0.35 ms")),
            qn.Station("disk", CACHE_MISS * DISK_SERVICE),
        ],
        think_time="50 ms",
    )


def clients_within(net: qn.Network, sla: float, n_max: int = 1000) -> int:
    """Largest population whose exact mean response time stays within ``sla`` seconds."""
    res = qn.mva(net, n_max)
    ok = res.n[res.response_time <= sla]
    return int(ok.max()) if ok.size else 0


def main(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    sla = units.parse("50 ms")
    for rate in ("100 Mbit/s", "1 Gbit/s"):
        net = storage_network(rate)
        b = qn.bounds(net, 40)
        res = qn.mva(net, 40)
        print(
            f"link {rate}: bottleneck {b.bottleneck}, N* = {b.n_star:.1f}, "
            f"X_max = {b.saturation_throughput:.1f} jobs/s, "
            f"X(40) = {res.throughput[-1]:.1f} jobs/s, "
            f"R(40) = {res.response_time[-1] * 1e3:.1f} ms, "
            f"clients within a 50 ms SLA: {clients_within(net, sla)}"
        )
    axes = plotting.bounds_vs_measured(storage_network(), 40)
    path = out_dir / "demo_storage_bounds.png"
    axes[0].figure.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd())
