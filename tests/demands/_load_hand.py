"""Load the independent hand evaluation (hand.py) by path, whatever pytest's import mode."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def load_hand():
    name = "qnmodel_tests_cui2006_hand"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("hand.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
