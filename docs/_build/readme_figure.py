"""Draw the README's picture (model against measurement) from the gallery: `make docs`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gallery  # noqa: E402

if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/assets/model-vs-measured.png")
    entry = {e.name: e for e in gallery.ENTRIES}["bounds_band"]
    out.write_bytes(gallery.draw(entry, dpi=100))
    print(f"wrote {out}")
