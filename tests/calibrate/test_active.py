"""Estimates from an active sample: weights, rounds, refusals, and the label budget."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from citecal.annotate._sampling import active_probabilities, poisson_draw
from citecal.calibrate._active import active_mean, active_plan
from citecal.calibrate._estimate import estimate_frame
from citecal.calibrate._ppi import Moments, ppi_mean, z_value
from citecal.calibrate._table import prepare_labels
from citecal.errors import InputError


def judged(scores: list[float]) -> pd.DataFrame:
    n = len(scores)
    return pd.DataFrame(
        {
            "record_id": [f"r{i}" for i in range(n)],
            "verdict": ["supports" if s >= 0.5 else "not_supports" for s in scores],
            "confidence": ["high"] * n,
            "score": scores,
            "mode": ["abstractive"] * n,
            "language": ["python"] * n,
            "repo": ["shop"] * n,
            "report": ["rep"] * n,
        }
    )


def rows(records: list[dict[str, object]]) -> pd.DataFrame:
    return prepare_labels(
        pd.DataFrame([{"annotator": "a", "sampling_strategy": "active", **r} for r in records])
    )


def test_point_estimate_is_ppi_pythons_weighted_one() -> None:
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(4)
    big_n = 4000
    score = rng.beta(0.5, 0.5, big_n)
    truth = (rng.random(big_n) < score).astype(float)
    probs, _ = active_probabilities(2 * np.sqrt(score * (1 - score)), 300)
    pi = np.asarray(probs)
    picked = np.asarray(poisson_draw(probs, 1))
    est = active_mean(truth[picked], score[picked], pi[picked], Moments.of(score))
    ref = ppi_py.ppi_mean_pointestimate(
        truth[picked], score[picked], score, lam=est.lam, w=1.0 / pi[picked]
    )
    assert math.isclose(est.estimate, float(np.ravel(ref)[0]), abs_tol=1e-12)


def test_two_rounds_combine_as_computed_by_hand() -> None:
    # Six judged citations, judge scores ŷ = 0.6, 0.5, 0.4 (labelled r0–r2), 0.9, 0.1, 0.8:
    # mean(ŷ_all) = 3.3 / 6 = 0.55.
    # Round 1 drew r0 (π₁ = 0.5) and r1 (π₁ = 0.25); round 2, from the rest, drew r2
    # (π₂ = 0.375; it had π₁ = 0.2 in round 1). Each record's probability of being drawn
    # in either round is 1 − (1 − π₁)(1 − π₂), with π₂ for r0, r1 what round 2 would have
    # given them (0.5, 0.2):
    #   r0: 1 − 0.5·0.5 = 0.75 (w = 4/3); r1: 1 − 0.75·0.8 = 0.4 (w = 2.5);
    #   r2: 1 − 0.8·0.625 = 0.5 (w = 2).
    # Labels y = 1, 1, 0. The weighted slope of y on ŷ is far above 1, so λ = 1;
    # a = Σ w(y − ŷ) / Σ w = (4/3·0.4 + 2.5·0.5 − 2·0.4) / (35/6) = 0.98333… / 5.8333…
    # θ = a + λ·0.55; r = y − a − ŷ; se² = Σ (1 − π) r² w² / 6².
    pi = {"r0": 1 - 0.5 * 0.5, "r1": 1 - 0.75 * 0.8, "r2": 1 - 0.8 * 0.625}
    w = {k: 1 / v for k, v in pi.items()}
    a = (w["r0"] * 0.4 + w["r1"] * 0.5 - w["r2"] * 0.4) / sum(w.values())
    theta = a + 0.55
    resid = {"r0": 1 - a - 0.6, "r1": 1 - a - 0.5, "r2": 0 - a - 0.4}
    se = math.sqrt(sum((1 - pi[k]) * resid[k] ** 2 * w[k] ** 2 for k in pi) / 36)
    lab = rows(
        [
            {"record_id": "r0", "human_score": 3, "sampling_round": 1, "sampling_drawn": 2},
            {"record_id": "r1", "human_score": 2, "sampling_round": 1, "sampling_drawn": 2},
            {"record_id": "r2", "human_score": 0, "sampling_round": 2, "sampling_drawn": 1},
        ]
    )
    lab["sampling_probability"] = lab["record_id"].map(pi)
    lab["sampling_weight"] = lab["record_id"].map(w)
    r = estimate_frame(judged([0.6, 0.5, 0.4, 0.9, 0.1, 0.8]), lab, by=())
    assert r.design == "active"
    assert math.isclose(r.corrected.estimate or 0, theta, abs_tol=1e-12)
    z = z_value(0.95)
    assert r.corrected.ci == pytest.approx([theta - z * se, min(1.0, theta + z * se)], abs=1e-12)
    assert r.stratification.strata[0].power_tuning == 1.0


def test_a_partly_labelled_earlier_round_is_refused() -> None:
    lab = rows(
        [
            {"record_id": "r0", "human_score": 3, "sampling_round": 1, "sampling_drawn": 3},
            {"record_id": "r1", "human_score": 2, "sampling_round": 1, "sampling_drawn": 3},
            {"record_id": "r2", "human_score": 0, "sampling_round": 2, "sampling_drawn": 1},
        ]
    )
    lab["sampling_probability"] = 0.5
    with pytest.raises(InputError, match="round 1 of the active sample has 2 of its 3"):
        estimate_frame(judged([0.6, 0.5, 0.4, 0.9, 0.1, 0.8]), lab, by=())


@pytest.mark.parametrize("design", ["bandit", "importance"])
def test_unknown_designs_are_refused(design: str) -> None:
    lab = prepare_labels(
        pd.DataFrame(
            [
                {"record_id": f"r{i}", "annotator": "a", "human_score": 3, "sampling_weight": 2.0}
                | {"sampling_strategy": design}
                for i in range(4)
            ]
        )
    )
    with pytest.raises(InputError, match=f"unknown design '{design}'"):
        estimate_frame(judged([0.6, 0.5, 0.4, 0.9, 0.1, 0.8]), lab, by=())


def test_active_without_probabilities_is_refused() -> None:
    lab = rows([{"record_id": f"r{i}", "human_score": 3} for i in range(3)])
    with pytest.raises(InputError, match="have no sampling_probability"):
        estimate_frame(judged([0.6, 0.5, 0.4, 0.9, 0.1, 0.8]), lab, by=())


def census(order: bool) -> pd.DataFrame:
    return prepare_labels(
        pd.DataFrame(
            [
                {
                    "record_id": f"r{i}",
                    "annotator": "a",
                    "human_score": 3 * (i % 2),
                    "sampling_strategy": "census",
                    "sampling_weight": 1.0,
                    "sampling_order": i if order else None,
                }
                for i in range(4)
            ]
        )
    )


def test_partly_labelled_census_needs_a_recorded_random_order() -> None:
    scores = [0.6, 0.5, 0.4, 0.9, 0.1, 0.8]
    with pytest.raises(InputError, match="only 4 of the 6 citations pushed as a census"):
        estimate_frame(judged(scores), census(order=False), by=())
    r = estimate_frame(judged(scores), census(order=True), by=())
    assert r.design == "census (random order)"
    assert "uniform random sample" in r.sampling


def test_plan_inverts_the_variance_formula() -> None:
    # The plan for the width the sample has now is the sample itself (n labels), for an
    # active design of the same shape; a uniform design's plan follows σ²(1/m − 1/N).
    rng = np.random.default_rng(2)
    big_n = 5000
    score = rng.beta(0.4, 0.4, big_n)
    truth = (rng.random(big_n) < score).astype(float)
    probs, _ = active_probabilities(2 * np.sqrt(score * (1 - score)), 400)
    pi = np.asarray(probs)
    picked = np.asarray(poisson_draw(probs, 3))
    est = active_mean(truth[picked], score[picked], pi[picked], Moments.of(score))
    z = z_value(0.95)
    plan = active_plan(est, 2 * z * est.se, 0.95)
    # se²(m) = ((n/m)·spread − total) / N² solved for z·se = width/2 = z·se_now:
    # m = n·spread / (N²·se² + total); spread and total are ratio estimates of what
    # se² uses (Σ(1 − π) r² w² = Σ r² w² − Σ r² w), so m is close to n, not equal.
    h2 = est.se**2
    m = est.n * est.spread / (big_n**2 * h2 + est.total)
    assert plan.current == pytest.approx(m, rel=1e-12)
    assert plan.current == pytest.approx(est.n, rel=0.15)
    assert plan.uniform == pytest.approx(1 / (h2 / est.residual_var + 1 / big_n), rel=1e-12)
    assert est.uniform_labels == pytest.approx(plan.uniform, rel=1e-9)


def test_small_monte_carlo_covers_and_beats_uniform() -> None:
    # The full version is benchmarks/active_sampling.py (≥ 1 000 runs).
    rng = np.random.default_rng(11)
    big_n, n, runs = 3000, 200, 200
    covered = 0
    widths = []
    uniform = []
    for run in range(runs):
        score = rng.beta(0.3, 0.3, big_n)
        truth = (rng.random(big_n) < score).astype(float)
        probs, _ = active_probabilities(2 * np.sqrt(score * (1 - score)), n)
        pi = np.asarray(probs)
        picked = np.asarray(poisson_draw(probs, run))
        est = active_mean(truth[picked], score[picked], pi[picked], Moments.of(score))
        lo, hi = est.interval(0.95)
        covered += lo <= truth.mean() <= hi
        widths.append(hi - lo)
        same = rng.choice(big_n, picked.size, replace=False)
        u = ppi_mean(truth[same], score[same], Moments.of(score))
        uniform.append(float(u.high - u.low))
    assert covered / runs >= 0.92
    assert float(np.mean(widths)) < 0.8 * float(np.mean(uniform))
