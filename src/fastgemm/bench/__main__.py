"""``python -m fastgemm.bench``: see fastgemm.bench (the method) and fastgemm.bench.cli."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
