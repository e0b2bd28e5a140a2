"""PPI++ arithmetic: worked examples, the reference implementation, and coverage by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from citecal.calibrate._ppi import (
    Moments,
    classical_mean,
    merge_strata,
    power_tuning,
    ppi_mean,
    stratified_ppi,
    z_value,
)

Z = 1.959963984540054


def test_worked_example_plain_ppi() -> None:
    # Labelled: Y = 1 1 0 1, judge Ŷ = 1 0 0 1; all 10 judged: six 1s.
    # λ = 1: θ = mean(Ŷ_all) + mean(Y − Ŷ) = 0.6 + (0 + 1 + 0 + 0)/4 = 0.85.
    # se² = var₀(Ŷ_all)/N + var₀(Y − Ŷ)/n = 0.6·0.4/10 + (0.25 − 0.0625)/4
    #     = 0.024 + 0.046875 = 0.070875.
    y = np.array([1.0, 1.0, 0.0, 1.0])
    yhat = np.array([1.0, 0.0, 0.0, 1.0])
    judged = Moments.of(np.array([1.0] * 6 + [0.0] * 4))
    r = ppi_mean(y, yhat, judged, lam=1.0)
    assert math.isclose(float(r.estimate), 0.85, abs_tol=1e-12)
    assert math.isclose(float(r.se), math.sqrt(0.070875), abs_tol=1e-12)
    assert math.isclose(float(r.low), 0.85 - Z * math.sqrt(0.070875), abs_tol=1e-12)
    # λ = 0 is the labels alone: mean(Y) = 0.75, se² = 0.75·0.25/4.
    r0 = ppi_mean(y, yhat, judged, lam=0.0)
    assert math.isclose(float(r0.estimate), 0.75, abs_tol=1e-12)
    assert math.isclose(float(r0.se), math.sqrt(0.1875 / 4), abs_tol=1e-12)
    c = classical_mean(y)
    assert math.isclose(float(c.se), float(r0.se), abs_tol=1e-12)


def test_worked_example_power_tuning() -> None:
    # Same data. θ₁ = 0.85; g = Y − θ₁, ĝ = Ŷ − θ₁ on the 4 labels:
    # cov₀(Y, Ŷ) = mean(YŶ) − mean(Y)·mean(Ŷ) = 0.5 − 0.75·0.5 = 0.125.
    # var₁ of the 14 values Ŷ_lab ∪ Ŷ_all (eight 1s, six 0s): 8·6/14/13 = 48/182.
    # λ = 0.125 / ((1 + 4/10) · 48/182) = 0.125·182 / (1.4·48) = 22.75/67.2.
    y = np.array([1.0, 1.0, 0.0, 1.0])
    yhat = np.array([1.0, 0.0, 0.0, 1.0])
    judged = Moments.of(np.array([1.0] * 6 + [0.0] * 4))
    lam = power_tuning(y, yhat, judged)
    assert math.isclose(float(lam), 22.75 / 67.2, abs_tol=1e-12)
    # A constant judge carries no information: λ = 0 (not a division by zero).
    flat = Moments.of(np.ones(10))
    assert float(power_tuning(y, np.ones(4), flat)) == 0.0
    # λ is clipped to [0, 1]: a judge anti-correlated with people gets 0.
    assert float(power_tuning(y, 1.0 - yhat, Moments.of(np.array([0.0] * 6 + [1.0] * 4)))) == 0.0


def test_z_value() -> None:
    assert math.isclose(z_value(0.95), Z, abs_tol=1e-12)
    assert math.isclose(z_value(0.9), 1.6448536269514722, abs_tol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_ppi_python(weighted: bool, seed: int) -> None:
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(seed)
    big_n, n = 3000, 150
    truth = rng.random(big_n) < 0.65
    score = np.clip(truth * 0.5 + rng.normal(0.25, 0.25, big_n), 0, 1)
    labelled = rng.choice(big_n, n, replace=False)
    y, yhat = truth[labelled].astype(float), score[labelled]
    w = rng.uniform(0.5, 3.0, n) if weighted else None
    mine = ppi_mean(y, yhat, Moments.of(score), w=w)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, score, alpha=0.05, w=w)
    est = ppi_py.ppi_mean_pointestimate(y, yhat, score, w=w)
    assert math.isclose(float(mine.low), float(lo[0]), abs_tol=1e-12)
    assert math.isclose(float(mine.high), float(hi[0]), abs_tol=1e-12)
    assert math.isclose(float(mine.estimate), float(np.ravel(est)[0]), abs_tol=1e-12)
    c_lo, c_hi = ppi_py.classical_mean_ci(y, w=w, alpha=0.05)
    c = classical_mean(y, w=w)
    assert math.isclose(float(c.low), float(c_lo), abs_tol=1e-12)
    assert math.isclose(float(c.high), float(c_hi), abs_tol=1e-12)


def test_stratified_combines_strata_by_their_share() -> None:
    rng = np.random.default_rng(5)
    yhat_all = (rng.random(1000) < 0.6).astype(float)
    stratum_all = (np.arange(1000) >= 700).astype(np.int64)  # 700 / 300 judged
    lab = rng.choice(1000, 120, replace=False)
    y = np.clip(yhat_all[lab] + (rng.random(120) < 0.15), 0, 1)
    res = stratified_ppi(y, yhat_all[lab], stratum_all[lab], yhat_all, stratum_all)
    a, b = res.strata
    assert (a.n_judged, b.n_judged) == (700, 300)
    # θ = 0.7·θ₀ + 0.3·θ₁ and se² = 0.7²·se₀² + 0.3²·se₁².
    assert math.isclose(
        float(res.corrected.estimate),
        0.7 * float(a.corrected.estimate) + 0.3 * float(b.corrected.estimate),
        abs_tol=1e-12,
    )
    assert math.isclose(
        float(res.corrected.se) ** 2,
        0.49 * float(a.corrected.se) ** 2 + 0.09 * float(b.corrected.se) ** 2,
        abs_tol=1e-12,
    )
    # Each stratum is plain PPI++ on its own records.
    m0 = stratum_all[lab] == 0
    alone = ppi_mean(y[m0], yhat_all[lab][m0], Moments.of(yhat_all[stratum_all == 0]))
    assert math.isclose(float(a.corrected.estimate), float(alone.estimate), abs_tol=1e-12)
    # One stratum is unstratified PPI++.
    one = stratified_ppi(
        y, yhat_all[lab], np.zeros(120, np.int64), yhat_all, np.zeros(1000, np.int64)
    )
    whole = ppi_mean(y, yhat_all[lab], Moments.of(yhat_all))
    assert math.isclose(float(one.corrected.high), float(whole.high), abs_tol=1e-12)


def test_stratum_without_labels_is_refused() -> None:
    with pytest.raises(ValueError, match="stratum 1 has 0 labelled"):
        stratified_ppi(
            np.array([1.0, 0.0]),
            np.array([1.0, 0.0]),
            np.array([0, 0]),
            np.array([1.0, 0.0, 1.0]),
            np.array([0, 0, 1]),
        )


def test_merge_strata() -> None:
    # Labels per cell: 30, 25, 3, 0, 4 with min 20 → cells 0 and 1 stand alone; 2, 3, 4
    # (7 labels) are too few for a pool, so they join cell 0 (the most labels).
    labelled = np.repeat(np.arange(5), [30, 25, 3, 0, 4])
    assert merge_strata(labelled, 5, 20).tolist() == [0, 1, 0, 0, 0]
    # With min 5 the small cells pool: 3 + 0 + 4 = 7 ≥ 5 → their own stratum 2.
    assert merge_strata(labelled, 5, 5).tolist() == [0, 1, 2, 2, 2]
    # No cell big enough: one stratum.
    assert merge_strata(labelled, 5, 100).tolist() == [0, 0, 0, 0, 0]


# ------------------------------------------------------------ coverage by simulation

JUDGES = {
    # name: (prevalence of support, P(judge supports | supports), P(judge not | not))
    "good": (0.7, 0.85, 0.85),
    "biased_toward_supports": (0.6, 0.97, 0.50),
    "poor": (0.7, 0.60, 0.55),
}


def _simulate(
    rng: np.random.Generator, sims: int, big_n: int, n: int, judge: tuple[float, float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Truth and verdicts for ``sims`` populations; the first ``n`` records are labelled.

    Records are i.i.d., so the first n are a uniform random sample of the N.
    """
    p, tpr, tnr = judge
    truth = rng.random((sims, big_n)) < p
    right = np.where(truth, rng.random((sims, big_n)) < tpr, rng.random((sims, big_n)) < tnr)
    verdict = (truth == right).astype(np.float64)
    return truth.astype(np.float64), verdict, truth.mean(axis=1)


@pytest.mark.parametrize("name", list(JUDGES))
def test_coverage_by_simulation(name: str) -> None:
    # 1 000 populations of 10 000 judged citations, 300 labelled at random each.
    rng = np.random.default_rng(20261123)
    sims, big_n, n = 1000, 10_000, 300
    truth, verdict, theta = _simulate(rng, sims, big_n, n, JUDGES[name])
    r = ppi_mean(truth[:, :n], verdict[:, :n], Moments.of(verdict))
    h = classical_mean(truth[:, :n])
    covered = float(((r.low <= theta) & (theta <= r.high)).mean())
    assert covered >= 0.93, f"{name}: 95% intervals covered the truth in {covered:.1%}"
    judge_bias = float(np.abs(verdict.mean(axis=1) - theta).mean())
    width = float((r.high - r.low).mean())
    human = float((h.high - h.low).mean())
    if name == "good":
        assert width < 0.8 * human  # narrower than the labels alone
    if name == "biased_toward_supports":
        assert judge_bias > 0.1  # the judge alone is far off; the interval still covers
    # Never meaningfully wider than the labels alone (λ → 0 for a poor judge).
    assert width <= 1.02 * human


def test_stratified_coverage_by_simulation() -> None:
    # Two strata with different prevalence and judge quality; 1 000 populations.
    rng = np.random.default_rng(7)
    sims, big_n, n = 1000, 2000, 200
    covered = 0
    for _ in range(sims):
        stratum = (rng.random(big_n) < 0.4).astype(np.int64)
        p = np.where(stratum == 1, 0.4, 0.85)
        truth = rng.random(big_n) < p
        acc = np.where(stratum == 1, 0.7, 0.95)
        verdict = np.where(rng.random(big_n) < acc, truth, ~truth).astype(np.float64)
        res = stratified_ppi(
            truth[:n].astype(np.float64), verdict[:n], stratum[:n], verdict, stratum
        )
        theta = truth.mean()
        covered += int(float(res.corrected.low) <= theta <= float(res.corrected.high))
    assert covered / sims >= 0.93


def test_realistic_set_is_25_percent_narrower() -> None:
    # The target: 10 000 judged, 300 labelled, judge accuracy 85% with a support
    # score (logit = 1.036·(±1) + N(0, 1), verdict = score ≥ 0.5, Φ(1.036) = 0.85).
    rng = np.random.default_rng(13)
    sims, big_n, n = 200, 10_000, 300
    truth = rng.random((sims, big_n)) < 0.7
    logit = 1.0364 * (2.0 * truth - 1.0) + rng.standard_normal((sims, big_n))
    score = 1.0 / (1.0 + np.exp(-1.5 * logit))
    accuracy = float(((logit > 0) == truth).mean())
    assert abs(accuracy - 0.85) < 0.005
    y = truth[:, :n].astype(np.float64)
    r = ppi_mean(y, score[:, :n], Moments.of(score))
    h = classical_mean(y)
    narrower = 1.0 - float((r.high - r.low).mean()) / float((h.high - h.low).mean())
    assert narrower >= 0.25, f"corrected interval only {narrower:.1%} narrower"
