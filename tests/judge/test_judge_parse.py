"""Tolerant parsing of judge answers and the structured-output schema."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citecal.verify.judge import AnswerParseError, parse_batch, parse_single, response_format

CASES = [
    ('{"supports": true, "reasoning": "r", "confidence": "high"}', "supports", "high", None),
    ('```json\n{"supports": false, "confidence": "Medium"}\n```', "not_supports", "medium", None),
    ('Sure! {"verdict": "Partially supported", "confidence": 0.4}', "partial", "low", None),
    ('<think>{"supports": 1}</think>{"verdict": "NOT SUPPORTED"}', "not_supports", "low", None),
    ('{"supports": "yes", "confidence": "very high", "score": "87%"}', "supports", "high", 0.87),
    ('[{"supports": true, "confidence": "low", "probability": 0.7}]', "supports", "low", 0.7),
    ('{"supports": true, "score": null, "confidence": "0.9"}', "supports", "high", None),
]


@pytest.mark.parametrize(("text", "verdict", "confidence", "score"), CASES)
def test_parse_single_tolerant(
    text: str, verdict: str, confidence: str, score: float | None
) -> None:
    a = parse_single(text)
    assert (a.verdict, a.confidence, a.score) == (verdict, confidence, score)


def test_parse_single_reasoning_synonyms() -> None:
    assert parse_single('{"supports": true, "explanation": " because "}').reasoning == "because"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "the code supports it",
        '{"reasoning": "no verdict"}',
        "{not json",
        '{"supports": 3}',
    ],
)
def test_parse_single_unparseable_raises_typed_error(text: str) -> None:
    with pytest.raises(AnswerParseError):
        parse_single(text)


@given(st.text(max_size=300))
def test_parse_single_never_crashes(text: str) -> None:
    with contextlib.suppress(AnswerParseError):
        parse_single(text)


def test_parse_batch_array_and_wrapped() -> None:
    items = [
        {"claim_id": 2, "supports": False, "confidence": "high"},
        {"claim_id": "Claim 1", "supports": True, "confidence": "low"},
    ]
    answers, problems = parse_batch(json.dumps(items), 2)
    assert answers[1].verdict == "supports" and answers[2].verdict == "not_supports"
    assert problems == []
    wrapped, _ = parse_batch(json.dumps({"results": items}), 2)
    assert set(wrapped) == {1, 2}


def test_parse_batch_drops_unknown_repeated_and_invalid_items() -> None:
    items = [
        {"claim_id": 1, "supports": True},
        {"claim_id": 1, "supports": False},
        {"claim_id": 9, "supports": True},
        {"claim_id": 3, "reasoning": "no verdict"},
    ]
    answers, problems = parse_batch(json.dumps(items), 3)
    assert set(answers) == {1} and answers[1].verdict == "supports"
    assert any("repeated" in p for p in problems)
    assert any("unknown claim_id 9" in p for p in problems)
    assert any("unusable item" in p for p in problems)


def test_parse_batch_positional_when_no_ids() -> None:
    text = '{"supports": true}\n{"supports": false}'
    answers, _ = parse_batch(text, 2)
    assert answers[1].verdict == "supports" and answers[2].verdict == "not_supports"


def test_parse_batch_without_json_raises() -> None:
    with pytest.raises(AnswerParseError):
        parse_batch("I cannot answer that.", 3)


def test_response_format_schemas_are_strict_objects() -> None:
    single = response_format(batch=False)["json_schema"]
    assert single["strict"] is True and single["name"] == "citecal_judge_single"
    assert single["schema"]["required"] == ["reasoning", "supports", "confidence", "score", "mode"]
    batch = response_format(batch=True)["json_schema"]["schema"]
    assert batch["type"] == "object"
    assert batch["properties"]["results"]["items"]["required"][0] == "claim_id"
