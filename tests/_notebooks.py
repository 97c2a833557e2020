"""What an executed notebook printed, as one text: the one reader of notebook outputs."""

from __future__ import annotations


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
