"""The batch-axis marker of metrics (:func:`batch_axis`), used by :mod:`calibnb.uncertainty`.

It lives here, below both :mod:`calibnb.metrics` and :mod:`calibnb.uncertainty`, so that
the metrics can be marked without importing the bootstrap (no import cycle).
"""

from __future__ import annotations

from typing import Callable

__all__ = ["batch_axis"]

#: Attribute that marks a metric whose arrays may carry a leading batch axis.
BATCH_ATTR = "__calibnb_batch_axis__"


def batch_axis(func: Callable) -> Callable:
    """Mark ``func`` as accepting a leading batch axis on its array arguments.

    A marked metric called with arrays of shape ``(S, N)`` (S resamples or
    systems, N items) must return an array of shape ``(S,)`` equal, row by row,
    to calling it on each row. :func:`bootstrap_ci` then evaluates many
    resamples per call instead of looping over them.

    Examples
    --------
    >>> import numpy as np
    >>> from calibnb.uncertainty import bootstrap_ci
    >>> @batch_axis
    ... def mean_conf(conf, correct):
    ...     return np.mean(conf, axis=-1)
    >>> r = bootstrap_ci(mean_conf, [0.2, 0.4, 0.6, 0.8], [0, 1, 1, 1], seed=0)
    >>> r.estimate
    0.5
    """
    setattr(func, BATCH_ATTR, True)
    return func
