"""``seed=None`` is the default of every public signature (issue 25, item 8).

A public callable (every ``__all__`` name under calibnb, a class's ``__init__``,
``fit`` and ``transform``) that takes a seed defaults it to None (fresh
entropy); callers that need reproducibility (the audit, the notebooks, tests,
doctests) pass one. The exceptions are listed with their reason.
"""

from __future__ import annotations

import inspect

import calibnb

import badinput as bi

#: Seeds that keep another default, with the reason.
EXCEPTIONS = {
    ("calibnb.teaching.answer_key", "seed"): "the notebook's seed parameter, whose default (0) the answer key "
                                             "reproduces",
}


def _seed_defaults():
    for qual, obj in bi.public_callables(calibnb).items():
        parts = [(qual, obj)]
        if isinstance(obj, type):
            parts = [(qual, obj.__init__)] + [(f"{qual}.{m}", getattr(obj, m)) for m in ("fit", "transform")
                                               if hasattr(obj, m)]
        for where, fn in parts:
            try:
                sig = inspect.signature(fn)
            except (TypeError, ValueError):
                continue
            for name, p in sig.parameters.items():
                if name == "seed" or name.endswith("_seed"):
                    yield where, name, p.default


def test_every_public_seed_defaults_to_none():
    found = list(_seed_defaults())
    assert any(w == "calibnb.apps.summary.metric_summary" for w, _, _ in found)  # the walk reaches the summary
    wrong = [(w, n, d) for w, n, d in found
             if d is not None and d is not inspect.Parameter.empty and (w, n) not in EXCEPTIONS]
    assert not wrong, wrong
    for key in EXCEPTIONS:  # an exception that no longer exists is removed from the list
        assert any((w, n) == key for w, n, _ in found), key
