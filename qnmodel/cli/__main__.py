"""``python -m qnmodel.cli``: the ``qnmodel`` command."""

import sys

from . import main

sys.exit(main())
