"""Human ceiling, consensus, line ranges, disagreement categories and comparison, by hand."""

from __future__ import annotations

import math

import pandas as pd
from calibrate_factories import row, synthetic

from citecal.calibrate import (
    categorise,
    category_counts,
    compare_judges,
    compute_metrics,
    prepare,
)
from citecal.config import CalibrationConfig


def _three_records() -> pd.DataFrame:
    rows = [
        # r1: scores 3, 3, 0; judge supports.
        row("r1", "a", 3, "supports", line_range="correct", report="p"),
        row("r1", "b", 3, "supports", line_range="too_narrow", report="p"),
        row("r1", "c", 0, "supports", line_range=None, report="p"),
        # r2: scores 1, 0, 1; judge does not support.
        row("r2", "a", 1, "not_supports", line_range="correct", report="q"),
        row("r2", "b", 0, "not_supports", line_range="correct", report="q"),
        row("r2", "c", 1, "not_supports", line_range="too_broad", report="q"),
        # r3: scores 2, 3 (two annotators); judge does not support.
        row("r3", "a", 2, "not_supports", line_range=None, report="q"),
        row("r3", "b", 3, "not_supports", line_range=None, report="q"),
    ]
    return prepare(pd.DataFrame(rows))


def test_worked_example_of_ceiling_consensus_and_line_ranges() -> None:
    m = compute_metrics(_three_records(), CalibrationConfig(bootstrap_resamples=0))
    # Pairs: r1 a, b agree, c not; r2 all 3 agree; r3 both disagree -> 5/8.
    assert m.agreement_rate is not None and math.isclose(m.agreement_rate, 5 / 8, abs_tol=1e-12)
    # Consensus: medians 3 (judge +, agree), 1 (judge -, agree), 2.5 (judge -, disagree) -> 2/3.
    assert m.consensus_agreement_rate is not None
    assert math.isclose(m.consensus_agreement_rate, 2 / 3, abs_tol=1e-12)
    # Leave-one-out: r1 a and b see the others split 1-1 (left out, tie); r1 c sees a, b
    # supporting -> c disagrees, judge agrees. r2: everyone sees "not" -> 3 humans and the
    # judge agree. r3: each sees the other supporting -> 2 humans agree, judge disagrees twice.
    # Humans 5/6, judge 4/6, judge - ceiling = -1/6.
    assert m.human_ceiling is not None and math.isclose(m.human_ceiling, 5 / 6, abs_tol=1e-12)
    assert m.judge_ceiling_agreement is not None
    assert math.isclose(m.judge_ceiling_agreement, 4 / 6, abs_tol=1e-12)
    assert m.judge_vs_ceiling is not None
    assert math.isclose(m.judge_vs_ceiling, -1 / 6, abs_tol=1e-12)
    assert m.within_ceiling is False
    assert any("2 annotation(s) left out" in n for n in m.notes)
    # Human pairs: r1 (3,3) equal, (3,0) x2 far; r2 (1,1) equal, (1,0) x2 adjacent; r3 (2,3)
    # adjacent. Exact 2/7, within one 5/7.
    assert m.human_exact_agreement is not None
    assert math.isclose(m.human_exact_agreement, 2 / 7, abs_tol=1e-12)
    assert m.human_within1_agreement is not None
    assert math.isclose(m.human_within1_agreement, 5 / 7, abs_tol=1e-12)
    # line_range: 5 answers, 3 correct.
    assert m.line_range_accuracy is not None and math.isclose(m.line_range_accuracy, 0.6)
    assert m.line_range_counts == {"correct": 3, "too_narrow": 1, "too_broad": 1}
    assert m.confusion.model_dump() == {"tp": 2, "fp": 1, "fn": 2, "tn": 3}
    assert m.krippendorff_alpha is not None and -1 <= m.krippendorff_alpha <= 1
    assert any("bootstrap disabled" in n for n in m.notes) and m.ci == {}


def test_one_annotator_gives_null_reliability_with_a_reason() -> None:
    df = prepare(synthetic(30, 1, 3, seed=2))
    m = compute_metrics(df, CalibrationConfig(bootstrap_resamples=100))
    assert m.krippendorff_alpha is None and m.human_ceiling is None and m.judge_vs_ceiling is None
    assert any("one annotator per record" in n for n in m.notes)
    assert m.agreement_rate is not None and m.ci["agreement_rate"] is not None


def test_one_report_gives_no_ci_with_a_reason() -> None:
    df = prepare(synthetic(30, 2, 1, seed=2))
    m = compute_metrics(df, CalibrationConfig(bootstrap_resamples=100))
    assert all(v is None for v in m.ci.values())
    assert any("one report only" in n for n in m.notes)


def test_unverified_verdicts_are_left_out_with_a_note() -> None:
    rows = [row(f"r{i}", "a", i % 4, "supports" if i % 2 else "not_supports") for i in range(8)]
    rows.append(row("r9", "a", 3, "unverified"))
    m = compute_metrics(prepare(pd.DataFrame(rows)), CalibrationConfig(bootstrap_resamples=0))
    assert m.n_annotations == 9 and m.n_pairs == 8
    assert any("1 annotation(s) without a binary judge verdict" in n for n in m.notes)


def test_categories_come_from_the_data() -> None:
    rows = [
        row("wrong", "a", 0, "supports", notes="Cites the wrong file: see pricing.py"),
        row("lines", "a", 0, "supports", line_range="too_narrow"),
        row("split", "a", 3, "not_supports"),
        row("split", "b", 0, "not_supports"),
        row("rule", "a", 3, "not_supports", matched_terms="Cart, items", missing_terms=""),
        row("partial", "a", 1, "supports"),
        row("overstate", "a", 0, "supports"),
        row("overlook", "a", 3, "not_supports", judge_reasoning="nothing about caching"),
        row("agree", "a", 3, "supports"),
    ]
    mismatch = categorise(prepare(pd.DataFrame(rows)))
    got = dict(zip(mismatch["record_id"], mismatch["category"], strict=True))
    assert got == {
        "wrong": "wrong_file_or_symbol",
        "lines": "lines_off",
        "split": "annotators_disagree",
        "rule": "rule_check_disagrees",
        "partial": "partial_support",
        "overstate": "claim_overstates_code",
        "overlook": "judge_overlooked_evidence",
    }
    types = dict(zip(mismatch["record_id"], mismatch["type"], strict=True))
    assert types["wrong"] == "false_positive" and types["overlook"] == "false_negative"
    assert mismatch.set_index("record_id").loc["overlook", "reasoning"] == "nothing about caching"
    counts = category_counts(mismatch)
    assert sum(counts.values()) == 7 and set(counts.values()) == {1}


def test_comparing_a_judge_with_itself_finds_nothing() -> None:
    df = prepare(synthetic(80, 2, 6, seed=9))
    c = compare_judges(df, df, config=CalibrationConfig(bootstrap_resamples=200))
    for figure in c.figures.values():
        assert figure.diff == 0.0 and figure.ci == [0.0, 0.0]
    assert c.mcnemar_p == 1.0 and c.flipped == []
    assert not c.significantly_worse and not c.significantly_better


def test_partial_is_not_support_in_calibrate() -> None:
    # The same rule as eval (citecal.support): partial is a "no"; humans >= 2 are a "yes".
    # r1: partial vs 3 -> disagree (false negative); r2: partial vs 0 -> agree;
    # r3: supports vs 2 -> agree; r4: not_supports vs 1 -> agree. Agreement 3/4.
    rows = [
        row("r1", "a", 3, "partial"),
        row("r2", "a", 0, "partial"),
        row("r3", "a", 2, "supports"),
        row("r4", "a", 1, "not_supports"),
    ]
    table = prepare(pd.DataFrame(rows))
    assert list(table["judge_pos"]) == [0.0, 0.0, 1.0, 0.0]
    m = compute_metrics(table, CalibrationConfig(bootstrap_resamples=0))
    assert m.agreement_rate == 0.75
    assert (m.confusion.tp, m.confusion.fp, m.confusion.fn, m.confusion.tn) == (1, 0, 1, 2)
    mismatch = categorise(table)
    assert list(mismatch["record_id"]) == ["r1"] and list(mismatch["type"]) == ["false_negative"]
