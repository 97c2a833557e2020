"""The testbed's state file: an intent log of everything ``up`` creates.

Every resource is recorded *before* it is created, so ``down`` finds it even when ``up`` was
killed halfway. The file lives in ``/var/lib/qnmodel-testbed/<name>/state.json`` (outside
``/run``, which the NFS servers' private mount namespaces cover with their own tmpfs).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from .topology import check_testbed_name

__all__ = ["STATE_ROOT", "State"]

#: parent of every testbed's state directory (overridable for tests of the file format only)
STATE_ROOT = Path(os.environ.get("QNMODEL_TESTBED_STATE", "/var/lib/qnmodel-testbed"))

_LISTS = ("namespaces", "mounts", "dirs", "cgroups", "processes")


class State:
    """The recorded resources of one testbed (``name``), kept on disk after every change."""

    def __init__(self, name: str, root: Path | None = None) -> None:
        # the name becomes a directory under the state root (which down removes): never a path
        self.name = check_testbed_name(name)
        self.dir = (root or STATE_ROOT) / name
        self.path = self.dir / "state.json"
        self.data: dict[str, Any] = {k: [] for k in _LISTS}
        self.data.update(name=name, complete=False)

    @classmethod
    def load(cls, name: str, root: Path | None = None) -> State | None:
        st = cls(name, root)
        try:
            doc = json.loads(st.path.read_text())
        except (OSError, ValueError):
            return None
        for k in _LISTS:
            doc.setdefault(k, [])
        st.data = doc
        return st

    def exists(self) -> bool:
        return self.path.exists()

    def create(self, **info: Any) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir, 0o700)
        self.data.update(info, created=time.time())
        self.save()

    def save(self) -> None:
        from ..._files import write_output  # a new file renamed into place; no link followed

        write_output(self.path, json.dumps(self.data, indent=2))

    def record(self, kind: str, item: Any) -> None:
        """Append ``item`` to the list ``kind`` and write the file (call before creating it)."""
        if item not in self.data[kind]:
            self.data[kind].append(item)
            self.save()

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def set(self, key: str, value: Any) -> None:
        self.data[key] = value
        self.save()
