"""Fixed-sequence threshold selection (README "The cascade"): worked example and guarantee."""

from __future__ import annotations

import math

import numpy as np
import pytest

from citecal.cascade import fixed_sequence, min_labels
from citecal.cascade._thresholds import p_value, powered_labels


def test_min_labels_is_where_zero_errors_first_reject() -> None:
    # (1 - 0.1)^21 = 0.1094 > 0.1 and (1 - 0.1)^22 = 0.0985 <= 0.1
    assert min_labels(0.1, 0.1) == 22
    assert 0.9**21 > 0.1 >= 0.9**22


def test_worked_example_starts_where_the_test_has_power_and_stops_at_the_first_failure() -> None:
    # alpha = delta = 0.1. Testing starts at the strictest threshold deciding at least
    # powered_labels(0.1, 0.1) = 38 labels: the fewest n with which a tier disagreeing at
    # alpha/2 = 0.05 passes half the time, i.e. P(Bin(n, 0.1) <= floor(0.05 n)) <= 0.1.
    assert powered_labels(0.1, 0.1) == 38
    assert p_value(1, 38, 0.1) <= 0.1 < p_value(1, 37, 0.1)
    # 5 labels at 0.999, 40 at 0.99 (all agreeing), 10 at 0.90 with 3 disagreeing.
    conf = [0.999] * 5 + [0.99] * 40 + [0.90] * 10
    ok = [True] * 45 + [True] * 7 + [False] * 3
    grid = (0.995, 0.99, 0.9)
    # 0.995: n = 5 < 38, skipped (no outcome of so few labels could be trusted).
    # 0.99: n = 45, k = 0, p = 0.9^45 = 0.0087 <= 0.1: rejected, threshold 0.99.
    assert math.isclose(p_value(0, 45, 0.1), 0.9**45, abs_tol=1e-12)
    # 0.90: n = 55, k = 3, p = sum_{k<=3} C(55,k) 0.1^k 0.9^(55-k) = 0.1870 > 0.1: stop.
    by_hand = sum(math.comb(55, k) * 0.1**k * 0.9 ** (55 - k) for k in range(4))
    assert math.isclose(p_value(3, 55, 0.1), by_hand, abs_tol=1e-12)
    assert 0.18 < by_hand < 0.19
    t = fixed_sequence(conf, ok, alpha=0.1, delta=0.1, grid=grid)
    assert (t.value, t.n, t.errors, t.candidates) == (0.99, 45, 0, 55)
    assert t.agreement == 1.0 and math.isclose(t.coverage or 0, 45 / 55)


def test_too_few_labels_never_decide() -> None:
    t = fixed_sequence([0.99] * 21, [True] * 21, alpha=0.1, delta=0.1)
    assert t.value is None and t.n == 0


def test_bad_levels_are_refused() -> None:
    with pytest.raises(ValueError):
        fixed_sequence([0.9], [True], alpha=0.0, delta=0.1)


def _run(
    rng: np.random.Generator, n_cal: int, n_test: int, alpha: float, delta: float
) -> tuple[float | None, float]:
    """One synthetic tier: confidence U(0.5, 1), overconfident by 0.1 (true accuracy conf - 0.1)."""

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        conf = rng.uniform(0.5, 1.0, n)
        return conf, rng.uniform(size=n) < np.clip(conf - 0.1, 0, 1)

    conf, ok = draw(n_cal)
    t = fixed_sequence(conf, ok, alpha, delta)
    tc, tok = draw(n_test)
    if t.value is None:
        return None, 1.0
    sel = tc >= t.value
    return t.value, float(tok[sel].mean()) if sel.any() else 1.0


def test_seeded_small_monte_carlo_keeps_the_guarantee() -> None:
    # Full version (>= 1 000 runs, several tiers): benchmarks/cascade_guarantee.py.
    rng = np.random.default_rng(20261125)
    alpha, delta, runs = 0.1, 0.1, 200
    held = [
        acc >= 1 - alpha for _, acc in (_run(rng, 800, 4000, alpha, delta) for _ in range(runs))
    ]
    assert sum(held) / runs >= 1 - delta
    # The uncalibrated threshold "confidence >= 1 - alpha" does not keep it: true accuracy is
    # conf - 0.1, so deciding at conf >= 0.9 gives about 0.85 agreement.
    tc = rng.uniform(0.5, 1.0, 20000)
    tok = rng.uniform(size=20000) < tc - 0.1
    assert tok[tc >= 1 - alpha].mean() < 1 - alpha
