"""Scoring citations against a ground-truth test case (README "`citecal chunks`").

A test case lists the evidence an answer should cite: a chunk id, or a key
phrase that must be in a cited chunk. Precision is the share of the answer's
citations that point at existing chunks (README "`citecal chunks`": valid / total);
recall the share of the expected evidence that some valid citation covers
(property 5: cited key evidence / total key evidence). Pure functions: the
chunks come from :func:`citecal.chunks.chunk_text`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from citecal.chunks._models import Chunk


@dataclass(frozen=True, slots=True)
class ExpectedCitation:
    """One piece of key evidence: a chunk id, or a phrase a cited chunk must contain."""

    chunk_id: str | None = None
    key_phrase: str | None = None

    def covered_by(self, chunk: Chunk) -> bool:
        """Whether citing ``chunk`` cites this evidence."""
        if self.chunk_id is not None:
            return chunk.id == self.chunk_id
        if self.key_phrase is not None:
            return (
                " ".join(self.key_phrase.split()).casefold()
                in " ".join(chunk.content.split()).casefold()
            )
        return False


@dataclass(frozen=True, slots=True)
class AttributionScore:
    """Precision, recall and F1 of one answer's citations; None when undefined."""

    total_citations: int
    valid_citations: int
    expected: int
    cited_expected: int
    precision: float | None
    recall: float | None
    f1: float | None


def score_attribution(
    cited_ids: Sequence[str], chunks: Sequence[Chunk], expected: Sequence[ExpectedCitation]
) -> AttributionScore:
    """Score the chunk ids an answer cited against what it should have cited."""
    by_id = {c.id: c for c in chunks}
    valid = [by_id[i] for i in cited_ids if i in by_id]
    covered = sum(any(e.covered_by(c) for c in valid) for e in expected)
    precision = len(valid) / len(cited_ids) if cited_ids else None
    recall = covered / len(expected) if expected else None
    f1 = (
        2 * precision * recall / (precision + recall)
        if precision is not None and recall is not None and precision + recall > 0
        else None
    )
    return AttributionScore(
        total_citations=len(cited_ids),
        valid_citations=len(valid),
        expected=len(expected),
        cited_expected=covered,
        precision=precision,
        recall=recall,
        f1=f1,
    )
