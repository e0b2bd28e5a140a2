"""Stage 5: failure types, suggested actions and metric arithmetic (seed §3.2.6, §15.2)."""

from __future__ import annotations

import pytest

from citecal.aggregate import Outcome, failure_of, rate, summarize, to_result
from citecal.models import Citation, Classification, ExtractedCitation, ValidationResult, Verdict


def outcome(
    verdict: str | None = "supports",
    *,
    valid: bool = True,
    error: str | None = None,
    failure: str | None = None,
    method: str = "extractive",
    confidence: str = "high",
    hint_lines: tuple[int, int] | None = None,
    lines: tuple[int, int] = (10, 20),
) -> Outcome:
    ex = ExtractedCitation(
        citation=Citation("a.py", *lines),
        claim_text="The `f` function returns 1",
        section="S",
        paragraph_index=0,
        position=0,
        context="",
    )
    val = ValidationResult(valid=valid, error=error, failure_type=failure)  # type: ignore[arg-type]
    if not valid:
        return Outcome(ex, val)
    v = (
        Verdict(verdict=verdict, method=method, confidence=confidence, hint_lines=hint_lines)  # type: ignore[arg-type]
        if verdict
        else None
    )
    return Outcome(ex, val, Classification("extractive", 0.9), v)


@pytest.mark.parametrize(
    ("o", "expected"),
    [
        (
            outcome(valid=False, error="File not found: a.py", failure="invalid_file"),
            ("invalid_file", "fix_reference"),
        ),
        (
            outcome(valid=False, error="Binary file: a.png", failure="invalid_file"),
            ("invalid_file", "remove_citation"),
        ),
        (
            outcome(valid=False, error="End line 1 before start line 5", failure="invalid_range"),
            ("invalid_range", "fix_reference"),
        ),
        (outcome("supports"), (None, None)),
        (outcome("unverified", method="llm", confidence="low"), (None, None)),
        (outcome(None), (None, None)),
        (outcome("not_supports"), ("not_supporting", "rewrite_claim")),
        (outcome("not_supports", hint_lines=(80, 90)), ("not_supporting", "fix_reference")),
        (outcome("not_supports", hint_lines=(22, 25)), ("not_supporting", "expand_range")),
        (outcome("partial", confidence="medium"), ("not_supporting", "rewrite_claim")),
        (outcome("partial", confidence="low"), ("low_confidence", "expand_range")),
        (outcome("supports", confidence="low", method="llm"), ("low_confidence", "expand_range")),
    ],
)
def test_failure_of(o: Outcome, expected: tuple[str | None, str | None]) -> None:
    assert failure_of(o, near_lines=10) == expected


def test_rate_is_none_without_denominator() -> None:
    assert rate(0, 0) is None
    assert rate(1, 4) == 0.25


def test_summarize_counts_only_decided_verdicts() -> None:
    rows = [
        to_result(outcome("supports")),
        to_result(outcome("partial", confidence="medium")),
        to_result(outcome("supports", method="llm")),
        to_result(outcome("not_supports", method="llm")),
        to_result(outcome("unverified", method="llm", confidence="low")),
        to_result(outcome(valid=False, error="File not found: x", failure="invalid_file")),
    ]
    s = summarize(rows, total_claims=8, cited_claims=6, llm_calls=2, llm_tokens=300, cost_usd=0.001)
    assert (s.total_citations, s.valid_citations) == (6, 5)
    assert s.validity_rate == 5 / 6
    assert (s.extractive_checked, s.extractive_supports, s.extractive_precision) == (2, 1, 0.5)
    assert (s.abstractive_checked, s.abstractive_supports, s.abstractive_precision) == (2, 1, 0.5)
    assert s.overall_precision == 2 / 4
    assert s.unverified == 1
    assert s.coverage == 6 / 8
    assert (s.llm_calls, s.llm_tokens, s.cost_usd) == (2, 300, 0.001)


def test_summarize_empty_report_has_null_rates() -> None:
    s = summarize([], total_claims=0, cited_claims=0)
    assert s.validity_rate is None and s.overall_precision is None and s.coverage is None
    assert s.extractive_precision is None and s.abstractive_precision is None


def test_to_result_keeps_invalid_verdict_null() -> None:
    r = to_result(outcome(valid=False, error="Line 99 out of range", failure="invalid_range"))
    assert r.verdict is None and r.mode is None and r.valid is False
    assert r.error == "Line 99 out of range" and r.suggested_action == "fix_reference"
    assert r.citation == "[a.py:10-20]"


def test_partial_is_not_support_in_any_eval_figure() -> None:
    # DESIGN.md "The meaning of partial": two judged citations, one supports, one partial.
    rows = [
        to_result(outcome("supports", method="llm")),
        to_result(outcome("partial", method="llm", confidence="high")),
    ]
    s = summarize(rows, total_claims=2, cited_claims=2)
    assert (s.abstractive_supports, s.abstractive_precision) == (1, 0.5)
    assert (s.overall_precision, s.decided, s.decided_precision) == (0.5, 2, 0.5)
