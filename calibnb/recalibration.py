"""The recalibration study of Gupta et al. (2021), as reusable pieces.

Used by ``notebooks/03_gupta2021_ks_splines.ipynb``:

* :class:`SyntheticPopulation` -- a population of scores with a *known*
  ``P(correct | score)``, so that Proposition 4.1 (the derivative of the
  cumulative accuracy is the calibrated probability) and Eq. 8 (KS equals the
  expected calibration error when miscalibration has one sign) can be checked
  against exact population values rather than against another estimate.
* :func:`spline_recovery_error` -- how well a spline fitted to a finite sample
  recovers that known ``P(correct | score)``, for a sensitivity study over the
  number of knots and the calibration-set size.

Reference: K. Gupta, A. Rahimi, T. Ajanthan, T. Mensink, C. Sminchisescu and
R. Hartley, "Calibration of Neural Networks using Splines", ICLR 2021.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .validation import as_rng, check_conf, check_positive_int, check_scalar_in_range

__all__ = [
    "SyntheticPopulation",
]


@dataclass(frozen=True)
class SyntheticPopulation:
    r"""Scores with a known probability of being correct.

    Scores follow a Beta distribution and the probability that a prediction
    with score :math:`s` is correct is a logistic (Platt-style) distortion of
    the score:

    .. math::

        S \sim \mathrm{Beta}(a, b), \qquad
        g(s) = P(\text{correct} \mid S = s)
             = \operatorname{expit}\bigl(\alpha \operatorname{logit}(s) + \beta\bigr).

    With :math:`\alpha = 1, \beta = 0` the scores are calibrated; with
    :math:`\alpha = 1, \beta < 0` every score is over-confident
    (:math:`g(s) < s` for all :math:`s`, miscalibration of one sign, as assumed
    by Gupta et al. 2021, Eq. 8); with :math:`\alpha < 1, \beta = 0` scores
    below 0.5 are under-confident and scores above 0.5 over-confident (two
    signs).

    Population quantities, all computed by quadrature on the Beta density (no
    sampling): the fractile score :math:`s(t)` (Eq. 14), the cumulative
    accuracy :math:`h(t) = P(\text{correct}, S \le s(t))` (Eq. 14), its
    derivative :math:`h'(t) = g(s(t))` (Proposition 4.1), the population KS
    error (Eq. 7)

    .. math::

        \mathrm{KS} = \max_\sigma \Bigl| \int_0^\sigma \bigl(g(z) - z\bigr) p(z)\, dz \Bigr|,

    and the expected calibration error it equals when :math:`g(z) - z` has one
    sign (Eq. 8), :math:`\int_0^1 |g(z) - z|\, p(z)\, dz`.

    Parameters
    ----------
    score_a, score_b : float, default 5.0 and 1.5
        Beta parameters of the score distribution (both > 0). The default puts
        most scores near 1, like the top-1 scores of an image classifier.
    slope : float, default 1.0
        :math:`\alpha`, the logit slope (> 0; < 1 means over-confident at both
        ends).
    intercept : float, default -0.8
        :math:`\beta`, the logit shift (< 0 means over-confident everywhere
        when ``slope == 1``).

    Examples
    --------
    >>> pop = SyntheticPopulation(slope=1.0, intercept=0.0)   # calibrated
    >>> float(pop.probability(0.8))
    0.8
    >>> scores, correct = pop.sample(4, seed=0)
    >>> scores.shape, correct.dtype
    ((4,), dtype('bool'))
    >>> round(SyntheticPopulation().ks_population() - SyntheticPopulation().ece_limit(), 12)
    0.0
    """

    score_a: float = 5.0
    score_b: float = 1.5
    slope: float = 1.0
    intercept: float = -0.8

    def __post_init__(self) -> None:
        check_scalar_in_range(self.score_a, "score_a", low=0.0, low_inclusive=False)
        check_scalar_in_range(self.score_b, "score_b", low=0.0, low_inclusive=False)
        check_scalar_in_range(self.slope, "slope", low=0.0, low_inclusive=False)
        check_scalar_in_range(self.intercept, "intercept")

    # --- the model -----------------------------------------------------------
    def probability(self, scores: Any) -> np.ndarray:
        """Return :math:`g(s) = P(\\text{correct} \\mid S = s)` for each score."""
        from scipy.special import expit, logit

        s = np.asarray(scores, dtype=np.float64)
        if s.ndim == 0:
            s = check_conf(s.reshape(1), "scores")[0]
        else:
            s = check_conf(s.ravel(), "scores").reshape(s.shape)
        with np.errstate(divide="ignore"):
            return expit(self.slope * logit(s) + self.intercept)

    def density(self, scores: Any) -> np.ndarray:
        """Return the Beta density :math:`p(s)` of the scores."""
        from scipy.stats import beta

        return beta.pdf(np.asarray(scores, dtype=np.float64), self.score_a, self.score_b)

    def fractile_score(self, t: Any) -> np.ndarray:
        """Return :math:`s(t)`, the score below which a fraction ``t`` of scores lie."""
        from scipy.stats import beta

        return beta.ppf(np.asarray(t, dtype=np.float64), self.score_a, self.score_b)

    def sample(self, n: int, *, seed: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n`` (score, correct) pairs: scores from the Beta, correct ~ Bernoulli(g(score))."""
        n = check_positive_int(n, "n")
        rng = as_rng(seed)
        scores = rng.beta(self.score_a, self.score_b, size=n)
        correct = rng.random(n) < self.probability(scores)
        return scores, correct

    # --- population quantities -----------------------------------------------
    def _grid(self, n_grid: int) -> tuple[np.ndarray, np.ndarray]:
        """Score grid on (0, 1) and the integrand (g(z) - z) p(z) on it."""
        z = np.linspace(0.0, 1.0, n_grid + 2)[1:-1]
        return z, (self.probability(z) - z) * self.density(z)

    def cumulative_accuracy(self, t: Any, *, n_grid: int = 20001) -> np.ndarray:
        r"""Return :math:`h(t) = P(\text{correct}, S \le s(t))` (Gupta et al. 2021, Eq. 14)."""
        from scipy.integrate import cumulative_trapezoid

        z = np.linspace(0.0, 1.0, n_grid + 2)[1:-1]
        h = cumulative_trapezoid(self.probability(z) * self.density(z), z, initial=0.0)
        return np.interp(self.fractile_score(t), z, h)

    def cumulative_accuracy_derivative(self, t: Any) -> np.ndarray:
        r"""Return :math:`h'(t) = g(s(t))`, Proposition 4.1 of Gupta et al. 2021."""
        return self.probability(np.clip(self.fractile_score(t), 0.0, 1.0))

    def ks_population(self, *, n_grid: int = 20001) -> float:
        r"""Population KS error, :math:`\max_\sigma |\int_0^\sigma (g(z) - z) p(z) dz|` (Eq. 7)."""
        from scipy.integrate import cumulative_trapezoid

        z, f = self._grid(n_grid)
        return float(np.max(np.abs(cumulative_trapezoid(f, z, initial=0.0))))

    def ece_limit(self, *, n_grid: int = 20001) -> float:
        r"""Expected calibration error :math:`\int_0^1 |g(z) - z| p(z) dz` (Eq. 8)."""
        from scipy.integrate import trapezoid

        z, f = self._grid(n_grid)
        return float(trapezoid(np.abs(f), z))

    def is_one_signed(self, *, n_grid: int = 20001) -> bool:
        """True when :math:`g(z) - z` has the same sign for every score (Eq. 8 applies)."""
        z = np.linspace(0.0, 1.0, n_grid + 2)[1:-1]
        d = self.probability(z) - z
        return bool(np.all(d <= 1e-12) or np.all(d >= -1e-12))
