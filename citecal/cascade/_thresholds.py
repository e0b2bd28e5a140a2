"""Thresholds with a guarantee: fixed-sequence testing (README "The cascade").

After Jung, Brahman and Choi, "Trust or Escalate" (ICLR 2025), and Angelopoulos
et al.'s Learn-then-Test: for a tier's verdict, walk a grid of confidence
thresholds fixed in advance, strictest first. At each threshold λ the null
hypothesis is "the verdicts given with confidence ≥ λ disagree with people at a
rate ≥ α"; with k disagreements among n such calibration labels its exact
binomial p-value is P(Bin(n, α) ≤ k). Reject while p ≤ δ and keep the last
rejected λ: then, with probability ≥ 1 − δ over the draw of the labels, the
verdicts given at that threshold on new claims of the same kind agree with people
at rate ≥ 1 − α. No correction for the number of thresholds is needed because
testing stops at the first failure.

Testing starts at the strictest threshold that decides enough calibration
claims for the test to have power: the fewest ``n`` with which a tier whose true
disagreement is α/2 would pass (its median count of disagreements rejects), or
every claim the tier could decide when there are fewer. Stricter thresholds,
which decide too few claims for any test to reject, are skipped. Which ones
those are depends on the confidences only, never on people's labels, so the
order of the tests stays fixed before the labels are looked at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

# scipy.stats is imported where it is used: ``eval`` loads a cascade file and never tests a
# threshold, and the import costs ~50 MB and a second (docs/explanation/cascade.md).

GRID: tuple[float, ...] = tuple(round(1.0 - i * 0.005, 3) for i in range(101))
"""Candidate thresholds, strictest first: 1.000, 0.995, …, 0.500."""


@dataclass(frozen=True, slots=True)
class Threshold:
    """The chosen threshold for one verdict of one tier, and what it rests on."""

    value: float | None
    """Decide with confidence ≥ value; ``None``: the tier never decides this verdict."""
    n: int
    """Calibration labels the tier decides at that threshold."""
    errors: int
    """Of those, the ones people disagree with."""
    candidates: int
    """Labels where the tier would give this verdict at any confidence."""
    p_value: float | None

    @property
    def agreement(self) -> float | None:
        return (self.n - self.errors) / self.n if self.n else None

    @property
    def coverage(self) -> float | None:
        return self.n / self.candidates if self.candidates else None

    def interval(self, level: float = 0.95) -> tuple[float, float] | None:
        """Clopper–Pearson interval of the agreement at this threshold."""
        if not self.n:
            return None
        from scipy.stats import beta

        k, n = self.n - self.errors, self.n
        a = (1 - level) / 2
        lo = float(beta.ppf(a, k, n - k + 1)) if k > 0 else 0.0
        hi = float(beta.ppf(1 - a, k + 1, n - k)) if k < n else 1.0
        return lo, hi


def p_value(errors: int, n: int, alpha: float) -> float:
    """Exact binomial p-value of H0 "error rate ≥ α" given ``errors`` in ``n``."""
    from scipy.stats import binom

    return float(binom.cdf(errors, n, alpha)) if n else 1.0


def min_labels(alpha: float, delta: float) -> int:
    """Fewest decided labels with which zero disagreements reject "error ≥ α" at δ."""
    return int(np.ceil(np.log(delta) / np.log1p(-alpha)))


def powered_labels(alpha: float, delta: float, limit: int = 100_000) -> int:
    """Fewest decided labels with which a tier disagreeing at rate α/2 passes half the time."""
    from scipy.stats import binom

    n = min_labels(alpha, delta)
    while n < limit:
        if binom.cdf(int(np.floor(n * alpha / 2)), n, alpha) <= delta:
            return n
        n += max(1, n // 50)
    return limit


def fixed_sequence(
    confidence: ArrayLike,
    correct: ArrayLike,
    alpha: float,
    delta: float,
    grid: Sequence[float] = GRID,
) -> Threshold:
    """The most lenient threshold of ``grid`` reached before the first test fails.

    Args:
        confidence: the tier's confidence in the verdict it gives, one per label
            where it gives *this* verdict.
        correct: whether people agree with that verdict, same order.
        alpha: tolerated disagreement (1 − the agreement asked for).
        delta: tolerated probability that the guarantee fails.
        grid: thresholds, strictest first, fixed before seeing the labels.
    """
    conf = np.asarray(confidence, dtype=float)
    ok = np.asarray(correct, dtype=bool)
    if conf.shape != ok.shape:
        raise ValueError("confidence and correct must have the same length")
    if not 0 < alpha < 1 or not 0 < delta < 1:
        raise ValueError("alpha and delta must be in (0, 1)")
    chosen: Threshold = Threshold(None, 0, 0, len(conf), None)
    n_start = max(min_labels(alpha, delta), min(powered_labels(alpha, delta), len(conf)))
    for lam in grid:
        decided = conf >= lam
        n = int(decided.sum())
        if n < n_start:  # too few claims decided here for the test to have power
            continue
        errors = int((decided & ~ok).sum())
        p = p_value(errors, n, alpha)
        if p > delta:
            break
        chosen = Threshold(float(lam), n, errors, len(conf), p)
    return chosen


__all__ = ["GRID", "Threshold", "fixed_sequence", "min_labels", "p_value", "powered_labels"]
