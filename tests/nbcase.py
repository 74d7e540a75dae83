"""The declaration of a papermill test case for a notebook.

Each notebook ``notebooks/<stem>.ipynb`` has a file
``tests/notebook_cases/<stem>.py`` that defines::

    from nbcase import Case

    def check_default(results):
        ...  # asserts on the default run's parsed results JSON

    CASES = [
        Case("more_bins", {"n_bins": 15}, check_more_bins),
        Case("other_seed", {"seed": 1}, check_other_seed),
    ]

``tests/test_notebooks.py`` runs the notebook once at its defaults and once per
case with ``params`` injected by papermill (``results_path`` is always set by
the test), then calls ``check(results, default_results)`` with the parsed
results JSON of the case's run and of the default run. A check asserts how the
results should change (or not) with the parameters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Case"]

_ID = re.compile(r"^[A-Za-z0-9_.=+-]+$")


@dataclass(frozen=True)
class Case:
    """One papermill run of a notebook with other parameters.

    Parameters
    ----------
    id : str
        Short name used in the test id (letters, digits, ``_.=+-``).
    params : dict
        Parameters injected into the notebook's ``parameters`` cell; must not
        contain ``results_path`` (the test sets it).
    check : callable
        ``check(results, default_results)``; raises ``AssertionError`` when the
        results did not change the way they should.
    """

    id: str
    params: dict[str, Any] = field(default_factory=dict)
    check: Callable[[dict, dict], None] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _ID.match(self.id):
            raise ValueError(f"Case id must be a short name of letters, digits and _.=+-; got {self.id!r}.")
        if not isinstance(self.params, dict) or not all(isinstance(k, str) for k in self.params):
            raise TypeError(f"Case {self.id!r}: params must be a dict with string keys.")
        if not self.params:
            raise ValueError(f"Case {self.id!r}: params is empty; a case must change at least one parameter.")
        if "results_path" in self.params:
            raise ValueError(f"Case {self.id!r}: params must not set results_path; the test sets it.")
        if not callable(self.check):
            raise TypeError(f"Case {self.id!r}: check must be callable as check(results, default_results).")
