"""Statistics against published values, hand arithmetic and the libraries' own results."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from calibrate_factories import row, synthetic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from citecal.calibrate import _bootstrap as bs
from citecal.calibrate import compute_metrics, prepare
from citecal.calibrate._ceiling import krippendorff_alpha, pairwise_human_agreement
from citecal.config import CalibrationConfig

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C:
# 4 coders x 12 units, values 1-5, "*" (NaN) = not coded. Published: nominal
# alpha = 0.743, interval alpha = 0.849 (three decimals in the paper).
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _long(matrix: list[list[int | None]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"record_id": f"u{unit:02d}", "annotator": f"coder{coder}", "human_score": value}
            for coder, values in enumerate(matrix)
            for unit, value in enumerate(values)
            if value is not None
        ]
    )


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("interval", 0.849)])
def test_krippendorff_2011_worked_example(level: str, published: float) -> None:
    alpha, why = krippendorff_alpha(_long(KRIPPENDORFF_2011), level=level)
    assert why is None
    assert alpha is not None
    assert round(alpha, 3) == published


def test_krippendorff_undefined_is_a_note() -> None:
    same = _long([[2, 2, 2], [2, 2, 2]])
    alpha, why = krippendorff_alpha(same)
    assert alpha is None and why is not None and "identical" in why


def _binary_table() -> pd.DataFrame:
    # Wikipedia "Cohen's kappa", simple example (50 grant proposals, readers A and B):
    # both yes 20, A yes / B no 5, A no / B yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = (25/50)(30/50) + (25/50)(20/50) = 0.3 + 0.2 = 0.5;
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4. Judge = reader A, human = reader B.
    cells = [
        ("supports", 3, 20),
        ("supports", 0, 5),
        ("not_supports", 3, 10),
        ("not_supports", 0, 15),
    ]
    rows = []
    i = 0
    for verdict, human, count in cells:
        for _ in range(count):
            rows.append(row(f"r{i:02d}", "ann", human, verdict, report=f"rep{i % 5}"))
            i += 1
    return prepare(pd.DataFrame(rows))


def test_binary_figures_match_the_textbook_example() -> None:
    m = compute_metrics(_binary_table(), CalibrationConfig(bootstrap_resamples=200))
    assert (m.confusion.tp, m.confusion.fp, m.confusion.fn, m.confusion.tn) == (20, 5, 10, 15)
    assert m.agreement_rate is not None and math.isclose(m.agreement_rate, 0.7, abs_tol=1e-12)
    assert m.cohen_kappa is not None and math.isclose(m.cohen_kappa, 0.4, abs_tol=1e-12)
    # precision = tp/(tp+fp) = 20/25; recall = tp/(tp+fn) = 20/30; F1 = 2tp/(2tp+fp+fn) = 40/55
    assert m.precision is not None and math.isclose(m.precision, 0.8, abs_tol=1e-12)
    assert m.recall is not None and math.isclose(m.recall, 2 / 3, abs_tol=1e-12)
    assert m.f1 is not None and math.isclose(m.f1, 40 / 55, abs_tol=1e-12)
    # "not supports": precision = tn/(tn+fn) = 15/25, recall = tn/(tn+fp) = 15/20
    assert m.precision_not_supports is not None
    assert math.isclose(m.precision_not_supports, 0.6, abs_tol=1e-12)
    assert m.recall_not_supports is not None
    assert math.isclose(m.recall_not_supports, 0.75, abs_tol=1e-12)
    # Brier: judge score 1.0 (supports/high) or 0.0 (not/high); squared error 1 on
    # the 15 disagreeing pairs only: 15/50 = 0.3.
    assert m.brier is not None and math.isclose(m.brier, 0.3, abs_tol=1e-12)
    lo, hi = m.ci["cohen_kappa"] or [math.nan, math.nan]
    assert lo <= 0.4 <= hi


def test_quadratic_weighted_kappa_worked_example() -> None:
    # Human 0-3 scores h and judge scores s mapped to 0-3 by min(3, floor(4 s)):
    # s = 0.0, 0.3, 0.6, 0.9, 0.6  ->  j = 0, 1, 2, 3, 2;  h = 0, 1, 2, 3, 3.
    # Weights w = (i - j)^2. Observed sum w*O = 1 (one pair h=3, j=2).
    # Margins: rows (h) r = [1, 1, 1, 2]; cols (j) c = [1, 1, 2, 1]; n = 5.
    # sum_ij r_i c_j (i-j)^2 = 18 + 7 + 6 + 30 = 61, so sum w*E = 61/5.
    # kappa_w = 1 - 1 / (61/5) = 56/61.
    scores = [0.0, 0.3, 0.6, 0.9, 0.6]
    humans = [0, 1, 2, 3, 3]
    rows = [
        row(f"r{i}", "ann", h, None, score=s, confidence=None, report=f"rep{i}")
        for i, (s, h) in enumerate(zip(scores, humans, strict=True))
    ]
    m = compute_metrics(prepare(pd.DataFrame(rows)), CalibrationConfig(bootstrap_resamples=0))
    assert m.weighted_kappa is not None
    assert math.isclose(m.weighted_kappa, 56 / 61, abs_tol=1e-12)


def test_pairwise_human_agreement_worked_example() -> None:
    # Record a: scores 2, 2, 3 -> pairs (2,2) equal, (2,3) x2 adjacent.
    # Record b: scores 0, 3    -> one pair, neither equal nor within 1.
    # 4 pairs: exact 1/4, within-1 3/4.
    df = pd.DataFrame(
        {
            "record_id": ["a", "a", "a", "b", "b"],
            "annotator": ["x", "y", "z", "x", "y"],
            "human_score": [2, 2, 3, 0, 3],
        }
    )
    exact, within1 = pairwise_human_agreement(df)
    assert exact is not None and math.isclose(exact, 0.25, abs_tol=1e-12)
    assert within1 is not None and math.isclose(within1, 0.75, abs_tol=1e-12)


def test_table_formulas_reproduce_scipy_and_sklearn() -> None:
    """The bootstrap's table formulas equal the libraries on the unresampled data (ties too)."""
    df = prepare(synthetic(200, 2, 7, seed=3))
    codes = bs.cluster_codes(df["report_id"].to_numpy())
    ones = np.ones((1, codes.n_clusters))
    j = df["judge_pos"].to_numpy(dtype=np.int64)
    h = df["human_pos"].to_numpy(dtype=np.int64)
    t2 = bs.resampled_tables(ones, bs.cluster_tables(codes, j, h, 2, 2), 2, 2)
    assert math.isclose(bs.kappa_from_tables(t2)[0], cohen_kappa_score(h, j), abs_tol=1e-12)
    assert math.isclose(bs.agreement_from_tables(t2)[0], float((j == h).mean()), abs_tol=1e-12)
    jo = df["judge_ord"].to_numpy(dtype=np.int64)
    hs = df["human_score"].to_numpy(dtype=np.int64)
    t4 = bs.resampled_tables(ones, bs.cluster_tables(codes, jo, hs, 4, 4), 4, 4)
    expected = cohen_kappa_score(hs, jo, labels=[0, 1, 2, 3], weights="quadratic")
    assert math.isclose(bs.kappa_from_tables(t4, "quadratic")[0], expected, abs_tol=1e-12)
    levels, nx, binned = bs.level_codes(df["judge_score"].to_numpy(dtype=np.float64), 4096)
    assert not binned
    tr = bs.resampled_tables(ones, bs.cluster_tables(codes, levels, hs, nx, 4), nx, 4)
    rho = stats.spearmanr(df["judge_score"], hs).statistic
    assert math.isclose(bs.spearman_from_tables(tr)[0], rho, abs_tol=1e-12)


def test_resample_counts_draw_every_cluster_count_times() -> None:
    rng = np.random.default_rng(0)
    w = bs.resample_counts(7, 500, rng)
    assert w.shape == (500, 7)
    assert np.all(w.sum(axis=1) == 7)
    # Each cluster is drawn 1 time per resample on average.
    assert abs(w.mean() - 1.0) < 0.05


# ---------------------------------------------------------------- invariants (hypothesis)

_scores = st.lists(st.integers(0, 3), min_size=6, max_size=40)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_scores)
def test_perfect_agreement_gives_one(humans: list[int]) -> None:
    # A judge whose score maps exactly onto each human score: floor(4 (h/4 + 0.1)) = h.
    rows = [
        row(f"r{i}", "ann", h, None, score=h / 4 + 0.1, confidence=None, report=f"rep{i % 3}")
        for i, h in enumerate(humans)
    ]
    m = compute_metrics(prepare(pd.DataFrame(rows)), CalibrationConfig(bootstrap_resamples=50))
    assert m.agreement_rate == 1.0
    if len({h >= 2 for h in humans}) == 2:
        assert m.cohen_kappa is not None and math.isclose(m.cohen_kappa, 1.0, abs_tol=1e-12)
    else:
        assert m.cohen_kappa is None and any("one class" in n for n in m.notes)
    if len(set(humans)) >= 2:
        assert m.weighted_kappa is not None
        assert math.isclose(m.weighted_kappa, 1.0, abs_tol=1e-12)
        assert m.spearman_rho is not None and math.isclose(m.spearman_rho, 1.0, abs_tol=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.permutations(["ann0", "ann1", "ann2"]))
def test_relabelling_annotators_changes_nothing(seed: int, names: list[str]) -> None:
    raw = synthetic(40, 3, 4, seed=seed)
    renamed = raw.assign(
        annotator=raw["annotator"].map(dict(zip(["ann0", "ann1", "ann2"], names, strict=True)))
    )
    config = CalibrationConfig(bootstrap_resamples=100, seed=1)
    a = compute_metrics(prepare(raw), config).model_dump()
    b = compute_metrics(prepare(renamed), config).model_dump()
    assert a == b


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(4, 12))
def test_bootstrap_ci_contains_the_point_estimate_and_kappa_at_most_one(
    seed: int, reports: int
) -> None:
    m = compute_metrics(
        prepare(synthetic(60, 2, reports, seed=seed)), CalibrationConfig(bootstrap_resamples=300)
    )
    for name in ("agreement_rate", "cohen_kappa"):
        point = getattr(m, name)
        ci = m.ci.get(name)
        assert point is not None and ci is not None
        assert ci[0] <= point <= ci[1], (name, point, ci)
    for name in ("cohen_kappa", "weighted_kappa"):
        value = getattr(m, name)
        assert value is None or value <= 1.0 + 1e-12
        ci = m.ci.get(name)
        assert ci is None or ci[1] <= 1.0 + 1e-12


def test_seed_makes_the_bootstrap_reproducible() -> None:
    df = prepare(synthetic(80, 2, 6, seed=5))
    a = compute_metrics(df, CalibrationConfig(seed=7, bootstrap_resamples=200)).ci
    b = compute_metrics(df, CalibrationConfig(seed=7, bootstrap_resamples=200)).ci
    c = compute_metrics(df, CalibrationConfig(seed=8, bootstrap_resamples=200)).ci
    assert a == b
    assert a != c


def test_no_library_warning_escapes_on_degenerate_data() -> None:
    rows = [row("r1", "a", 3, "supports"), row("r2", "a", 3, "supports")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = compute_metrics(prepare(pd.DataFrame(rows)))
    assert m.agreement_rate == 1.0
    assert m.cohen_kappa is None and m.spearman_rho is None and m.krippendorff_alpha is None
    assert m.notes


def test_weighted_kappa_textbook_example_fleiss_1981() -> None:
    # Fleiss, J. L. (1981). Statistical Methods for Rates and Proportions, 2nd ed., p. 213:
    # 100 subjects, two raters, 3 ordered categories. Proportions (rows rater B, cols rater A):
    #   .75 .01 .04 | .80        columns: .80 .05 .15
    #   .05 .04 .01 | .10
    #   .00 .00 .10 | .10
    # Unweighted: p_o = .89, p_e = .64 + .005 + .015 = .66, kappa = .23/.34 = 23/34 (Fleiss: .68).
    # Agreement weights 1 - |i-j|/2 (linear): p_o = .89 + .5 (.01+.05+.01+.00) = .925,
    #   p_e = .66 + .5 (.04 + .08 + .015 + .005) = .73, kappa = .195/.27 = 13/18.
    # Weights 1 - (i-j)^2/4 (quadratic): p_o = .89 + .75 * .07 = .9425,
    #   p_e = .66 + .75 * .14 = .765, kappa = .1775/.235 = 71/94.
    table = np.array([[[75, 1, 4], [5, 4, 1], [0, 0, 10]]], dtype=np.float64)
    assert math.isclose(bs.kappa_from_tables(table)[0], 23 / 34, abs_tol=1e-12)
    assert math.isclose(bs.kappa_from_tables(table, "linear")[0], 13 / 18, abs_tol=1e-12)
    assert math.isclose(bs.kappa_from_tables(table, "quadratic")[0], 71 / 94, abs_tol=1e-12)
    # scikit-learn agrees on the same data expanded to one row per subject.
    b, a = np.nonzero(table[0])
    counts = table[0][b, a].astype(int)
    rater_b, rater_a = np.repeat(b, counts), np.repeat(a, counts)
    assert math.isclose(
        cohen_kappa_score(rater_b, rater_a, weights="quadratic"), 71 / 94, abs_tol=1e-12
    )
