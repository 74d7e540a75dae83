"""The report command, ``python -m calibnb.report`` (the code is in :mod:`calibnb.apps.report`)."""

import sys

from .apps.report import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    from .apps._command import skip_iri_grammars

    skip_iri_grammars()  # the command's own process only: 1.1 s of start-up that it never uses
    sys.exit(main())
