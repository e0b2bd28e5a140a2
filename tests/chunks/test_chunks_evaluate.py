"""Seed 004 properties 4 (precision = valid / total) and 5 (recall = cited key evidence / total)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from citecal.chunks import ExpectedCitation, chunk_text, score_attribution

DOC = (
    "Metformin is recommended as first-line therapy. Insulin is added when targets are missed. "
    "Lifestyle changes come first. SGLT2 inhibitors protect the kidneys.\n"
)
CHUNKS = chunk_text(DOC, "ada.md")
IDS = [c.id for c in CHUNKS]


def test_worked_example() -> None:
    expected = [
        ExpectedCitation(key_phrase="metformin is recommended  as first-line"),
        ExpectedCitation(chunk_id="ada.md:S:3"),
        ExpectedCitation(key_phrase="insulin"),
    ]
    score = score_attribution(["ada.md:S:0", "ada.md:S:9", "ada.md:S:2"], CHUNKS, expected)
    # 2 of 3 citations exist; they cover the metformin phrase only: recall 1/3
    assert (score.valid_citations, score.cited_expected) == (2, 1)
    assert math.isclose(score.precision or 0, 2 / 3, abs_tol=1e-12)
    assert math.isclose(score.recall or 0, 1 / 3, abs_tol=1e-12)
    assert math.isclose(score.f1 or 0, 2 * (2 / 3) * (1 / 3) / (2 / 3 + 1 / 3), abs_tol=1e-12)
    empty = score_attribution([], CHUNKS, [])
    assert (empty.precision, empty.recall, empty.f1) == (None, None, None)


@given(st.lists(st.sampled_from([*IDS, "ada.md:S:7", "other.md:S:0"]), min_size=1, max_size=12))
def test_property_4_precision_is_valid_over_total(cited: list[str]) -> None:
    score = score_attribution(cited, CHUNKS, [])
    valid = sum(c in IDS for c in cited)
    assert score.valid_citations == valid
    assert score.precision == valid / len(cited)


@given(
    st.lists(st.sampled_from(IDS), max_size=6),
    st.lists(st.sampled_from(IDS), min_size=1, max_size=6, unique=True),
)
def test_property_5_recall_is_cited_key_evidence_over_total(
    cited: list[str], expected_ids: list[str]
) -> None:
    expected = [ExpectedCitation(chunk_id=i) for i in expected_ids]
    score = score_attribution(cited, CHUNKS, expected)
    assert score.recall == len(set(expected_ids) & set(cited)) / len(expected_ids)
