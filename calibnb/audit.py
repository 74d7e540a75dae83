"""The audit command, ``python -m calibnb.audit FILE`` (the code is in :mod:`calibnb.apps.audit`)."""

import sys

from .apps.audit import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
