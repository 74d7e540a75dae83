"""Synthetic data shared by several test files."""

from __future__ import annotations

import numpy as np

import calibnb as cn


def distorted_logits(n, seed, w, b=0.0):
    """Logits ``z`` of ``n`` items and ``len(w)`` classes with labels drawn from ``softmax(w * z + b)``.

    Per-class scales ``w`` and biases ``b`` distort the logits' calibration
    (vector scaling's model); ``w = 1, b = 0`` gives calibrated logits.

    >>> z, y = distorted_logits(5, 0, np.ones(3))
    >>> z.shape, y.shape
    ((5, 3), (5,))
    """
    rng = np.random.default_rng(seed)
    w = np.asarray(w, dtype=np.float64)
    z = rng.normal(size=(n, w.size)) * 2.0
    p = cn.softmax(z * w + b)
    y = (rng.random((n, 1)) < np.cumsum(p, axis=1)).argmax(axis=1)
    return z, y


def calibrated_logits(n, k, seed, scale=1.0):
    """Logits ``z * scale`` of ``n`` items and ``k`` classes with labels drawn from ``softmax(z)``.

    The labels are calibrated for the unscaled logits, so temperature scaling's
    optimum is ``scale`` (tau = 1e4 for ``scale=1e4``).

    >>> z, y = calibrated_logits(5, 3, 0)
    >>> z.shape, y.shape
    ((5, 3), (5,))
    """
    z, y = distorted_logits(n, seed, np.ones(k))
    return z * scale, y


def nll(p, y):
    """Mean negative log-likelihood of the labels ``y`` under the rows of ``p``."""
    return float(-np.mean(np.log(p[np.arange(len(y)), y])))
