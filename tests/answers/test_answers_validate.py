"""Seed 003's four scenarios and the rules behind each level, on single items."""

from __future__ import annotations

import math

import pytest

from citecal.answers import answer_gate, check_citation, quote_score, validate_item
from citecal.answers._validate import coverage, item_metrics
from citecal.config import AnswerFields, AnswersConfig

CFG = AnswersConfig()
ANSWER = "Brunelleschi introduced the principles of linear perspective in Florence around 1415."
EVIDENCE = [
    "Vasari writes that the Duomo was finished in 1436.",
    "Brunelleschi introduced the principles of linear perspective, demonstrated in Florence.",
]


def perfect(**changes: object) -> dict[str, object]:
    citation: dict[str, object] = {
        "source": "Renaissance Art History",
        "relevance": 0.92,
        "quote": "Brunelleschi introduced the principles of linear perspective",
        "evidence_idx": 1,
        "alignment_score": 0.85,
        "span_in_answer": "Brunelleschi introduced the principles of linear perspective",
    }
    citation.update(changes)
    return {k: v for k, v in citation.items() if v is not None}


def item(*citations: dict[str, object], answer: str = ANSWER) -> dict[str, object]:
    return {"id": "q1", "answer": answer, "evidence": EVIDENCE, "citations": list(citations)}


# --------------------------------------------------------------------------- the four scenarios


def test_scenario_perfect_citation() -> None:
    result = validate_item(item(perfect()), CFG)
    c = result.citations[0]
    assert (c.valid, c.errors, c.warnings, c.quality_score) == (True, [], [], 1.0)
    assert c.span_match == "exact" and c.quote_found is True and c.quote_score == 1.0
    assert result.valid is True


def test_scenario_hallucinated_span() -> None:
    c = validate_item(item(perfect(span_in_answer="This does NOT exist in answer")), CFG).citations[
        0
    ]
    assert c.valid is False
    assert c.errors == ["Hallucinated span not found in answer"]
    assert c.quality_score == 0.7  # 1 - 0.3, the seed's heavy penalty
    assert c.hallucinated_span is True and c.span_match == "missing"


def test_scenario_missing_enhanced_fields() -> None:
    basic = {"source": "Basic Source", "relevance": 0.7, "quote": "linear perspective"}
    c = validate_item(item(basic), CFG).citations[0]
    assert c.valid is True
    assert c.warnings == [
        "missing enhanced field 'evidence_idx'",
        "missing enhanced field 'alignment_score'",
        "missing enhanced field 'span_in_answer'",
    ]
    assert c.quality_score == 0.85  # 1 - 3 × 0.05
    assert c.quote_evidence_idx == 1  # no index given: found in the best evidence


def test_scenario_low_quality_alignment() -> None:
    result = validate_item(item(perfect(alignment_score=0.1)), CFG)
    c = result.citations[0]
    assert c.valid is True
    assert c.warnings == ["alignment_score 0.1 below 0.3"]
    assert c.quality_score == 0.9
    assert result.gate.status == "WARN"
    assert "average alignment_score 0.10 < 0.40" in result.gate.reasons


# --------------------------------------------------------------------------- level 1: structure


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"source": None}, "missing required field 'source'"),
        ({"source": "  "}, "'source' must be a non-empty string"),
        ({"relevance": None}, "missing required field 'relevance'"),
        ({"relevance": "high"}, "'relevance' must be a number"),
        ({"relevance": True}, "'relevance' must be a number"),
        ({"relevance": 1.5}, "'relevance' 1.5 outside 0–1"),
        ({"relevance": math.nan}, "'relevance' nan outside 0–1"),
        ({"quote": None}, "missing required field 'quote'"),
        ({"quote": 3}, "'quote' must be a non-empty string"),
        ({"evidence_idx": 1.5}, "'evidence_idx' must be an integer"),
        ({"alignment_score": -0.2}, "'alignment_score' -0.2 outside 0–1"),
        ({"span_in_answer": 7}, "'span_in_answer' must be a string"),
    ],
)
def test_structure_errors(changes: dict[str, object], error: str) -> None:
    raw = perfect()
    for key, value in changes.items():
        if value is None:
            raw.pop(key)
        else:
            raw[key] = value
    c = check_citation(raw, 0, ANSWER, EVIDENCE, CFG)
    assert c.valid is False
    assert error in c.errors
    assert c.quality_score == pytest.approx(1 - 0.2 * len(c.errors))


def test_a_citation_that_is_not_an_object() -> None:
    c = check_citation("see source 1", 2, ANSWER, EVIDENCE, CFG)
    assert (c.valid, c.errors, c.quality_score) == (False, ["citation 2 is not an object"], 0)


# --------------------------------------------------------------------------- level 2: semantics


def test_evidence_idx_out_of_bounds() -> None:
    c = check_citation(perfect(evidence_idx=2), 0, ANSWER, EVIDENCE, CFG)
    assert c.errors == ["'evidence_idx' 2 out of bounds (2 evidence items)"]
    assert c.evidence_idx is None and c.quote_found is None  # nothing to check the quote in


def test_evidence_idx_without_evidence_list_is_a_warning() -> None:
    c = check_citation(perfect(), 0, ANSWER, None, CFG)
    assert c.valid is True
    assert c.warnings == ["no evidence list: 'evidence_idx' 1 not checked"]


def test_span_found_by_its_first_50_characters() -> None:
    span = "Brunelleschi introduced the principles of linear perspective in Venice"
    c = check_citation(perfect(span_in_answer=span), 0, ANSWER, EVIDENCE, CFG)
    assert c.valid is True and c.span_match == "prefix"
    assert (c.span_start, c.span_end) == (0, 50)


def test_quote_from_the_wrong_evidence_is_an_error() -> None:
    c = check_citation(perfect(evidence_idx=0), 0, ANSWER, EVIDENCE, CFG)
    assert c.valid is False
    assert c.errors[0].startswith("quote not found in evidence[0] (best match")


def test_quote_matching_ignores_case_and_spacing_and_accepts_ellipsis() -> None:
    assert quote_score("BRUNELLESCHI  introduced", EVIDENCE[1]) == 1.0
    assert quote_score("Brunelleschi introduced ... demonstrated in Florence", EVIDENCE[1]) == 1.0
    assert quote_score("Brunelleschi introduced … painted in Rome", EVIDENCE[1]) < 0.85
    near = quote_score("Brunelleschi introduced the principle of linear perspectives", EVIDENCE[1])
    assert 0.85 <= near < 1.0


def test_coverage_is_the_union_of_found_spans() -> None:
    answer = "a" * 100
    checks = [
        check_citation(perfect(span_in_answer="a" * 30), 0, answer, None, CFG),
        check_citation(perfect(span_in_answer="a" * 20), 1, answer, None, CFG),
    ]
    # both spans start at 0: the union is 30 of 100 characters, not 50
    assert coverage(answer, checks) == 0.3
    assert coverage("", checks) is None


# --------------------------------------------------------------------------- gate


def test_gate_fails_without_citations() -> None:
    result = validate_item(item(), CFG)
    assert result.valid is False
    assert result.gate.model_dump() == {"status": "FAIL", "reasons": ["no citations"]}


def test_gate_invalid_share_must_exceed_thirty_percent() -> None:
    ok = perfect()
    bad = perfect(relevance=2)
    three_of_ten = [bad] * 3 + [ok] * 7
    four_of_ten = [bad] * 4 + [ok] * 6
    assert validate_item(item(*three_of_ten), CFG).gate.status == "PASS"
    gate = validate_item(item(*four_of_ten), CFG).gate
    assert gate.status == "FAIL"
    assert gate.reasons == ["4/10 citations invalid (40% > 30%)"]


def test_gate_warns_on_coverage_and_evidence_idx() -> None:
    short = perfect(span_in_answer="Florence", evidence_idx=None)
    gate = validate_item(item(short), CFG).gate
    assert gate.status == "WARN"
    assert gate.reasons == [
        "citation coverage 9% < 50%",  # "Florence": 8 of 85 characters
        "0% of citations have evidence_idx (< 80%)",
    ]


def test_item_metrics_shares() -> None:
    checks = [
        check_citation(perfect(), 0, ANSWER, EVIDENCE, CFG),
        check_citation(
            perfect(alignment_score=None, span_in_answer=None), 1, ANSWER, EVIDENCE, CFG
        ),
    ]
    m = item_metrics(ANSWER, checks)
    assert (m.has_evidence_idx, m.has_alignment_score, m.has_span) == (1.0, 0.5, 0.5)
    assert m.avg_alignment_score == 0.85
    assert m.avg_quality_score == pytest.approx((1.0 + 0.9) / 2)
    assert answer_gate(m, CFG).status == "PASS"


def test_item_level_errors() -> None:
    result = validate_item({"answer": 3, "evidence": "x", "citations": {}}, CFG, number=7)
    assert result.id == "#7"
    assert result.errors == [
        "'answer' must be a string",
        "'evidence' must be a list",
        "'citations' must be a list",
    ]
    assert result.valid is False


def test_field_names_are_configurable() -> None:
    cfg = AnswersConfig(
        fields=AnswerFields(answer="response", citations="refs", quote="excerpt", evidence="docs")
    )
    raw = {
        "response": ANSWER,
        "docs": [{"text": EVIDENCE[0]}, {"text": EVIDENCE[1]}],
        "refs": [{**perfect(quote=None), "excerpt": "linear perspective"}],
    }
    result = validate_item(raw, cfg)
    assert result.valid is True
    assert result.citations[0].quote == "linear perspective"
    assert result.evidence == EVIDENCE
