"""The report command, ``python -m calibnb.report`` (the code is in :mod:`calibnb.apps.report`)."""

from .apps.report import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    from .apps._command import run_command

    run_command(main)  # without jsonschema's grammars (1.1 s of start-up) and the last garbage collection (0.5 s)
