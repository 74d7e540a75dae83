"""What a calibnb command (``python -m calibnb.audit``, ``python -m calibnb.report``) sets up in its own process.

Only the ``__main__`` blocks of those modules call :func:`skip_iri_grammars`; importing calibnb, or calling
``calibnb.apps.audit.main`` from Python, never changes the caller's process.
"""

from __future__ import annotations

import sys

__all__ = ["IRI_GRAMMAR_MODULE", "skip_iri_grammars"]

#: The module that jsonschema (4.26, imported by nbformat and papermill) imports eagerly for its ``iri`` format
#: checker: it compiles about 35 Lark grammars at import, 1.1 s of CPU measured here (2026-11-26), which every
#: command run paid before reading its input. Upstream reports: python-jsonschema/jsonschema#1428 (closed, no
#: change), jupyter-server/jupyter_server#1559; the fork that loads lazily (rfc3987-syntax2) is not what
#: jsonschema imports.
IRI_GRAMMAR_MODULE = "rfc3987_syntax"


def skip_iri_grammars() -> bool:
    """Keep jsonschema from importing :data:`IRI_GRAMMAR_MODULE` in this process; True if it took effect.

    A ``None`` entry in ``sys.modules`` makes ``import rfc3987_syntax`` raise ImportError, which jsonschema
    catches: it then has no checker for the ``iri`` and ``iri-reference`` formats. Neither the notebook
    format's schema nor the claims ledger's uses them, and nbformat validates without format checkers; a
    command never validates IRIs. Nothing changes once jsonschema or the module is already imported.
    """
    if "jsonschema" in sys.modules or IRI_GRAMMAR_MODULE in sys.modules:
        return False
    sys.modules[IRI_GRAMMAR_MODULE] = None  # type: ignore[assignment]
    return True
