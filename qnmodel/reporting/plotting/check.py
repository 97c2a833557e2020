"""The bottom-up check as a picture: every figure of every node against its references."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._style import _new_axes

__all__ = ["check_figures"]


def check_figures(result: Any, *, ax: Any = None) -> Any:
    """Bars of each node's figure relative to the median of the other nodes, per figure.

    Parameters
    ----------
    result : CheckResult
        From :func:`qnmodel.lab.check.analyse`.
    ax : Axes, optional

    Returns
    -------
    Axes
        One group of bars per figure key, one bar per node (flagged bars in red and
        labelled with the node), the tolerance line at 1 - tolerance, and the share of the
        theoretical peak as a black tick where a peak is known.
    """
    if ax is None:
        ax = _new_axes(figsize=(7.0, 3.8))
    rows = list(result.rows)
    keys = sorted({r["key"] for r in rows})
    nodes = sorted({r["node"] for r in rows})
    width = 0.8 / max(len(nodes), 1)
    for i, key in enumerate(keys):
        for j, node in enumerate(nodes):
            r = next((r for r in rows if r["key"] == key and r["node"] == node), None)
            if r is None:
                continue
            x = i - 0.4 + (j + 0.5) * width
            ratio = r["ratio_to_others"] if np.isfinite(r["ratio_to_others"]) else 1.0
            flagged = bool(r["flag"])
            ax.bar(x, ratio, width * 0.9, color="tab:red" if flagged else "tab:blue")
            if flagged:
                ax.annotate(node, (x, ratio), ha="center", va="bottom", fontsize=7, rotation=90)
            if np.isfinite(r["fraction_of_peak"]):
                ax.plot([x - width / 2, x + width / 2], [r["fraction_of_peak"]] * 2, "k-", lw=2)
    ax.axhline(1.0 - result.tolerance, color="0.4", ls="--", lw=1,
               label=f"tolerance ({1 - result.tolerance:.0%} of the others' median)")  # fmt: skip
    ax.plot([], [], "k-", lw=2, label="share of the theoretical peak")
    ax.set_xticks(range(len(keys)), keys, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("measured / median of the other nodes")
    ax.set_ylim(0, max(1.3, ax.get_ylim()[1]))
    n = len(result.findings)
    ax.set_title(f"bottom-up check: {len(nodes)} node(s), {n} finding(s)")
    ax.legend(fontsize="small", loc="lower right")
    return ax
