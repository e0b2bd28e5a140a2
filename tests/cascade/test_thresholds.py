"""Fixed-sequence threshold selection (README "The cascade"): worked example and guarantee."""

from __future__ import annotations

import math

import numpy as np
import pytest

from citecal.cascade import fixed_sequence, min_labels
from citecal.cascade._thresholds import p_value


def test_min_labels_is_where_zero_errors_first_reject() -> None:
    # (1 - 0.1)^21 = 0.1094 > 0.1 and (1 - 0.1)^22 = 0.0985 <= 0.1
    assert min_labels(0.1, 0.1) == 22
    assert 0.9**21 > 0.1 >= 0.9**22


def test_worked_example_stops_at_the_first_failed_test() -> None:
    # 30 labels at confidence 0.99, all agreeing; 10 more at 0.90 with 3 disagreeing.
    conf = [0.99] * 30 + [0.90] * 10
    ok = [True] * 30 + [True] * 7 + [False] * 3
    # At 0.99: n = 30, k = 0, p = 0.9^30 = 0.0424 <= 0.1: rejected, threshold 0.99.
    assert math.isclose(p_value(0, 30, 0.1), 0.9**30, abs_tol=1e-12)
    # At 0.90: n = 40, k = 3, p = sum_{k<=3} C(40,k) 0.1^k 0.9^(40-k) = 0.4231 > 0.1: stop.
    by_hand = sum(math.comb(40, k) * 0.1**k * 0.9 ** (40 - k) for k in range(4))
    assert math.isclose(p_value(3, 40, 0.1), by_hand, abs_tol=1e-12)
    assert 0.42 < by_hand < 0.43
    t = fixed_sequence(conf, ok, alpha=0.1, delta=0.1, grid=(0.99, 0.9))
    assert (t.value, t.n, t.errors, t.candidates) == (0.99, 30, 0, 40)
    assert t.agreement == 1.0 and t.coverage == 0.75


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
