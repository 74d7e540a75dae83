"""Synthetic data shared by several test files."""

from __future__ import annotations

import numpy as np

import calibnb as cn


def calibrated_logits(n, k, seed, scale=1.0):
    """Logits ``z * scale`` of ``n`` items and ``k`` classes with labels drawn from ``softmax(z)``.

    The labels are calibrated for the unscaled logits, so temperature scaling's
    optimum is ``scale`` (tau = 1e4 for ``scale=1e4``).

    >>> z, y = calibrated_logits(5, 3, 0)
    >>> z.shape, y.shape
    ((5, 3), (5,))
    """
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2.0
    p = cn.softmax(z)
    y = (rng.random((n, 1)) < np.cumsum(p, axis=1)).argmax(axis=1)
    return z * scale, y
