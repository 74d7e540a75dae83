"""What a calibnb command (``python -m calibnb.audit``, ``python -m calibnb.report``) sets up in its own process.

Only the ``__main__`` blocks of those modules run :func:`run_command` (which calls :func:`skip_iri_grammars`);
importing calibnb, or calling ``calibnb.apps.audit.main`` from Python, never changes the caller's process.
"""

from __future__ import annotations

import sys
from typing import Callable, NoReturn

__all__ = ["IRI_GRAMMAR_MODULE", "skip_iri_grammars", "KERNEL_EXEC_LINE", "run_command"]

#: The module that jsonschema (4.26, imported by nbformat and papermill) imports eagerly for its ``iri`` format
#: checker: it compiles about 35 Lark grammars at import, 1.1 s of CPU measured here (2026-11-26), which every
#: command run paid before reading its input. Upstream reports: python-jsonschema/jsonschema#1428 (closed, no
#: change), jupyter-server/jupyter_server#1559; the fork that loads lazily (rfc3987-syntax2) is not what
#: jsonschema imports.
IRI_GRAMMAR_MODULE = "rfc3987_syntax"


#: The same, as a line the kernels that calibnb's report and audit start run before a notebook's first cell
#: (``--IPKernelApp.exec_lines``, calibnb.apps.report.KERNEL_ARGUMENTS): every paper notebook loads its claims
#: ledger, which imports jsonschema, so each such kernel paid the 1.1 s too. A notebook run by hand in Jupyter
#: is left alone.
KERNEL_EXEC_LINE = (f"import sys; sys.modules.setdefault({IRI_GRAMMAR_MODULE!r}, None) "
                    "if 'jsonschema' not in sys.modules else None")


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


def run_command(main: Callable[[], int]) -> NoReturn:
    """Run a command's ``main()`` in this process and exit with its status (``python -m calibnb.audit``, ``.report``).

    Before it, :func:`skip_iri_grammars`. After it (also when ``main`` exits by raising, as argparse does),
    ``gc.freeze()``: as the interpreter ends it collects garbage over every object the process made, which
    for a process that imported the scientific stack is about 0.5 s of CPU (0.52-0.56 s in four runs here,
    2026-11-27; 0.04-0.05 s after the freeze). Exit handlers still run; only cyclic garbage is left to the
    end of the process.
    """
    import gc

    skip_iri_grammars()
    try:
        status = main()
    finally:
        gc.freeze()
    sys.exit(status)
