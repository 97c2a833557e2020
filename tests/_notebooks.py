"""Executing a committed notebook as a reader would, and what it printed, as one text: the one
runner and the one reader of notebook outputs."""

from __future__ import annotations

from pathlib import Path

#: seconds one cell may run: a guard against a hung kernel, not a speed check. Cells that take
#: 20 s on a quiet machine took over 180 s beside the parallel suite and six other workers.
CELL_TIMEOUT = 900


def execute_notebook(path: Path, cwd: Path):
    """Run the committed notebook ``path`` (committed without outputs) in a fresh kernel whose
    working directory is ``cwd``; refuse any cell that raised. Returns the executed notebook."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        f"commit {path.name} without outputs"
    )
    nbclient.NotebookClient(
        nb, timeout=CELL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    ).execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    return nb


def outputs_text(cells_or_outputs) -> str:
    """The printed text (streams) and plain-text results of executed notebook cells.

    A kernel flushes a stream in chunks whenever it likes (every 0.2 s, or mid-line on a
    busy machine), so consecutive chunks of one stream are joined as they came, never with an
    invented line break; other outputs are separated by a newline.
    """
    outputs = []
    for item in cells_or_outputs:
        if "output_type" in item:
            outputs.append(item)
        elif item.get("cell_type") == "code":
            outputs.extend(item.get("outputs", []))
    parts: list[str] = []
    prev_stream = None
    for o in outputs:
        if o.get("output_type") == "stream":
            if prev_stream == o.get("name") and parts:
                parts[-1] += o["text"]
            else:
                parts.append(o["text"])
            prev_stream = o.get("name")
            continue
        prev_stream = None
        text = o.get("data", {}).get("text/plain")
        if text:
            parts.append(text)
    return "\n".join(parts)
