"""Placement or content: what kind of error an unsupported citation is (issue 31)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from citecal.bench import CitationLabel


def label(**over: object) -> CitationLabel:
    base: dict[str, object] = {
        "id": "x-n001",
        "citation": "[a.py:1-2]",
        "claim": "c",
        "structural": "valid",
        "human_score": 3,
        "category": "behaviour",
        "claim_kind": "behaviour",
        "difficulty": "easy",
        "rationale": "r",
        "origin": "natural",
    }
    base.update(over)
    return CitationLabel.model_validate(base)


def test_supported_citation_has_no_error_class() -> None:
    assert label().error_class is None


def test_shifted_range_of_a_true_claim_is_placement() -> None:
    where = {"file_path": "a.py", "start_line": 9, "end_line": 12}
    got = label(human_score=0, fault="off_range", category="off_range", correct=where)
    assert got.error_class == "placement"


def test_claim_nothing_supports_is_content() -> None:
    got = label(human_score=1, fault="contradicted", category="contradicted")
    assert got.error_class == "content"


def test_overstated_claim_with_a_right_place_is_placement() -> None:
    where = {"file_path": "a.py", "start_line": 9, "end_line": 12}
    got = label(human_score=1, fault="overstated", category="overstated", correct=where)
    assert got.error_class == "placement"


def test_written_fault_class_wins() -> None:
    got = label(human_score=0, fault="nonexistent", category="nonexistent", fault_class="content")
    assert got.error_class == "content"


def test_content_fault_cannot_name_a_correct_place() -> None:
    where = {"file_path": "a.py", "start_line": 9, "end_line": 12}
    with pytest.raises(ValidationError, match="content fault has no correct"):
        label(
            human_score=0,
            fault="contradicted",
            category="contradicted",
            fault_class="content",
            correct=where,
        )


def test_supported_citation_cannot_carry_a_fault_class() -> None:
    with pytest.raises(ValidationError, match="fault_class is for a citation with a fault"):
        label(fault_class="placement")
