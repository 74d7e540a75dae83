"""The audit of one's own model: ``calibnb.audit(df)`` and ``python -m calibnb.audit FILE``.

The code is in :mod:`calibnb.apps.audit`. This module is also the call:
``calibnb.audit(data, ...)`` is :func:`calibnb.apps.audit.audit` (the module's
class is a ``ModuleType`` subclass with ``__call__``), so ``import
calibnb.audit`` and ``from calibnb import audit`` never hide the call.
"""

import sys
import types

from .apps.audit import AuditInputError, AuditResult, audit, main

__all__ = ["audit", "AuditResult", "AuditInputError", "main"]


class _CallableModule(types.ModuleType):
    """``calibnb.audit(...)`` calls :func:`calibnb.apps.audit.audit`."""

    def __call__(self, *args, **kwargs):
        return audit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":  # pragma: no cover
    from .apps._command import run_command

    run_command(main)  # without jsonschema's grammars (1.1 s of start-up) and the last garbage collection (0.5 s)
