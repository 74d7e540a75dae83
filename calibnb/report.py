"""The report command, ``python -m calibnb.report`` (the code is in :mod:`calibnb.apps.report`)."""

import sys

from .apps.report import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
