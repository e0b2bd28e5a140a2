"""What ``citecal validate --format json`` writes (schema_version 1, README "citecal validate").

The issue's minimum is ``{"schema_version", "total_qa", "valid_qa", "aggregate",
"gate", "items": [{"id", "valid", "gate", "citations": [{"valid", "errors",
"warnings", "quality_score"}]}]}``; every other field is additive. Items also
carry their question, answer and evidence texts, so ``citecal push`` can
send them to annotators without the original input file.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citecal.models import SCHEMA_VERSION, Gate

SpanMatch = Literal["exact", "prefix", "missing"]
"""How ``span_in_answer`` was found in the answer: whole, by its first characters, or not."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CitationCheck(_Model):
    """One citation of one answer, checked at the three levels (README "`citecal validate`")."""

    index: int = Field(description="0-based position in the item's citation list.")
    valid: bool = Field(description="No errors (structure and semantics).")
    errors: list[str] = Field(description="Structural and semantic problems; any makes it invalid.")
    warnings: list[str] = Field(description="Quality problems (missing enhanced fields, ...).")
    quality_score: float = Field(description="1 minus the penalties, clipped to [0, 1].")
    source: str | None = Field(None, description="The cited source's name, when a string.")
    quote: str | None = Field(None, description="The quoted evidence text, when a string.")
    span_in_answer: str | None = Field(None, description="The answer span the citation backs.")
    evidence_idx: int | None = Field(None, description="Index of the cited evidence, when valid.")
    relevance: float | None = Field(None, description="The producer's relevance, when valid.")
    alignment_score: float | None = Field(
        None, description="The producer's span-evidence alignment, when valid."
    )
    span_match: SpanMatch | None = Field(
        None, description="How span_in_answer was found; null when there is no span."
    )
    span_start: int | None = Field(None, description="Character offset of the span in the answer.")
    span_end: int | None = Field(None, description="End offset (exclusive) of what matched.")
    hallucinated_span: bool = Field(False, description="span_in_answer is not in the answer.")
    quote_found: bool | None = Field(
        None, description="The quote is in the cited evidence; null when it could not be checked."
    )
    quote_score: float | None = Field(
        None, description="Fuzzy match of the quote in the evidence, 0–1 (1 = verbatim)."
    )
    quote_evidence_idx: int | None = Field(
        None, description="Evidence the quote was found in (the cited one, or the best)."
    )


class AnswerMetrics(_Model):
    """Aggregates of one item or of a whole batch (README "`citecal validate`").

    Shares are null when their denominator is 0.
    """

    total_citations: int
    valid_citations: int
    invalid_citations: int
    hallucinated_spans: int = Field(description="Citations whose span is not in the answer.")
    avg_alignment_score: float | None = Field(
        description="Mean alignment_score of the citations that have a valid one."
    )
    citation_coverage: float | None = Field(
        description="Share of answer characters inside a found cited span (batch: item mean)."
    )
    has_evidence_idx: float | None = Field(description="Share of citations with evidence_idx.")
    has_alignment_score: float | None = Field(
        description="Share of citations with alignment_score."
    )
    has_span: float | None = Field(description="Share of citations with span_in_answer.")
    avg_quality_score: float | None = Field(description="Mean quality_score of the citations.")
    items_without_citations: int = Field(0, description="Batch only: items with no citation.")


class ItemResult(_Model):
    """One question-answer item."""

    id: str = Field(description="The item's id field, else '#<n>' (1-based item number).")
    line: int | None = Field(None, description="Line of the item in a JSONL input.")
    valid: bool = Field(description="At least one citation, no item error, every citation valid.")
    errors: list[str] = Field(default_factory=list, description="Item-level problems.")
    gate: Gate
    metrics: AnswerMetrics
    citations: list[CitationCheck]
    question: str | None = Field(None, description="The question, when present.")
    answer: str = Field("", description="The answer text.")
    evidence: list[str] = Field(default_factory=list, description="Evidence texts, in order.")


class MalformedRecord(_Model):
    """A line (JSONL) or element (JSON array) that is not a JSON object."""

    line: int | None = Field(description="1-based line in a JSONL input.")
    item: int = Field(description="1-based record number in the input.")
    error: str


class ValidateResult(_Model):
    """The whole of ``citecal validate``'s JSON output."""

    schema_version: int = SCHEMA_VERSION
    input: str = Field("<answers>", description="The validated file.")
    total_qa: int = Field(description="Items validated (malformed records excluded).")
    valid_qa: int = Field(description="Items with valid set.")
    aggregate: AnswerMetrics
    gate: Gate
    malformed: list[MalformedRecord] = Field(
        default_factory=list, description="Records that could not be read, with where."
    )
    items: list[ItemResult]
