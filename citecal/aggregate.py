"""Stage 5: turn per-citation outcomes into failures, suggested actions and metrics.

Pure functions over in-memory records: the pipeline hands over what each stage
found and gets back the public :class:`~citecal.models.CitationResult` rows and
the :class:`~citecal.models.Summary`. Keeping this separate from the pipeline
makes the metric definitions (README "JSON output") testable on hand-made rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from citecal.models import (
    CitationResult,
    Classification,
    EscalationRecord,
    ExtractedCitation,
    FailureType,
    SuggestedAction,
    Summary,
    ValidationResult,
    Verdict,
    VerdictLabel,
)
from citecal.support import verdict_supports
from citecal.verify._excerpt import ExcerptCheck, excerpt_fields


@dataclass(frozen=True, slots=True)
class Outcome:
    """Everything the stages found about one citation."""

    extracted: ExtractedCitation
    validation: ValidationResult
    classification: Classification | None = None
    verdict: Verdict | None = None
    excerpt: ExcerptCheck | None = None
    route: str | None = None
    """``rules`` / ``judge`` / ``coverage`` (see :func:`citecal.verify.route_claim`)."""
    judge_classifies: bool = False
    """The judge is asked for this claim's mode too (``use_llm_classification``)."""
    p_supports: float | None = None
    """The local verifier's calibrated support probability (docs/explanation/cascade.md)."""


def rate(numerator: int, denominator: int) -> float | None:
    """A ratio, or ``None`` when there is nothing to divide by (README "JSON output")."""
    return numerator / denominator if denominator else None


def _hint_action(
    verdict: Verdict, citation_start: int, citation_end: int, near: int
) -> SuggestedAction | None:
    """Where the missing evidence was seen decides between widening and re-pointing."""
    if verdict.hint_lines is None:
        return None
    lo, hi = verdict.hint_lines
    if lo >= citation_start - near and hi <= citation_end + near:
        return "expand_range"
    return "fix_reference"


def failure_of(
    outcome: Outcome, near_lines: int = 10
) -> tuple[FailureType | None, SuggestedAction | None]:
    """Failure type and first correction to try (README "`citecal correct`"), or ``(None, None)``.

    Any structural error fails; so does any verdict short of a confident
    "supports" (the target is 100 % accuracy, README "`citecal correct`"). ``unverified``
    is not a failure: nobody could decide, and the summary counts it apart.
    """
    validation, verdict = outcome.validation, outcome.verdict
    citation = outcome.extracted.citation
    if not validation.valid:
        structural: FailureType = validation.failure_type or "invalid_file"
        error = (validation.error or "").lower()
        if structural == "invalid_file" and error.startswith("binary"):
            return structural, "remove_citation"
        return structural, "fix_reference"
    if verdict is None:
        return None, None
    if verdict.verdict == "unverified":
        # A person decides: text addressed to the judge (README "Security"), or no tier of
        # the cascade was confident enough (README "The cascade").
        held = verdict.abstain_reason in (
            "possible prompt injection",
            "needs a person",
            "judge and verifier disagree",
        )
        return None, ("annotate" if held else None)
    hinted = _hint_action(verdict, citation.start_line, citation.end_line, near_lines)
    if verdict.verdict == "not_supports":
        return "not_supporting", hinted or "rewrite_claim"
    if verdict.verdict == "partial":
        failure: FailureType = "low_confidence" if verdict.confidence == "low" else "not_supporting"
        return failure, hinted or (
            "expand_range" if failure == "low_confidence" else "rewrite_claim"
        )
    if verdict.confidence == "low":
        return "low_confidence", hinted or "expand_range"
    return None, None


def to_result(outcome: Outcome, near_lines: int = 10) -> CitationResult:
    """Flatten one outcome into the public JSON row."""
    ex, val, cls, v = outcome.extracted, outcome.validation, outcome.classification, outcome.verdict
    failure, action = failure_of(outcome, near_lines)
    escalated = None
    if v is not None and v.escalated_from is not None:
        first = v.escalated_from
        escalated = EscalationRecord(
            model=first.model,
            verdict=first.verdict,
            confidence=first.confidence,
            score=first.score,
            reasoning=first.reasoning,
            confidence_source=first.confidence_source,
            confidence_value=first.confidence_value,
        )
    return CitationResult(
        id=ex.id,
        citation=str(ex.citation),
        file_path=ex.citation.file_path,
        start_line=ex.citation.start_line,
        end_line=ex.citation.end_line,
        claim=ex.claim_text,
        section=ex.section,
        paragraph_index=ex.paragraph_index,
        position=ex.position,
        valid=val.valid,
        error=val.error,
        failure_type=failure,
        mode=cls.mode if cls is not None else None,
        verdict=v.verdict if v is not None else None,
        method=v.method if v is not None else None,
        confidence=v.confidence if v is not None else None,
        score=v.score if v is not None else None,
        reasoning=v.reasoning if v is not None else None,
        matched_terms=list(v.matched_terms) if v is not None else [],
        missing_terms=list(v.missing_terms) if v is not None else [],
        suggested_action=action,
        model=v.model if v is not None else None,
        prompt_version=v.prompt_version if v is not None else None,
        language=val.language,
        context=ex.context,
        cited_code=val.cited_content,
        hint=v.hint if v is not None else None,
        tokens=v.tokens if v is not None else 0,
        cost_usd=v.cost_usd if v is not None else 0.0,
        escalated_from=escalated,
        abstain_reason=v.abstain_reason if v is not None else None,
        confidence_source=v.confidence_source if v is not None else None,
        confidence_value=v.confidence_value if v is not None else None,
        p_supports=outcome.p_supports if val.valid else None,
        **excerpt_fields(ex.citation, outcome.excerpt),
    )


def summarize(
    rows: Sequence[CitationResult],
    *,
    total_claims: int,
    cited_claims: int,
    llm_calls: int = 0,
    llm_tokens: int = 0,
    cost_usd: float = 0.0,
) -> Summary:
    """Report metrics (README "JSON output").

    Only ``supports`` is support (:mod:`citecal.support`). Precision figures
    count decided citations only; ``decision_coverage`` says how many those are.
    """
    valid = [r for r in rows if r.valid]
    extractive = [r for r in valid if r.method == "extractive" and r.verdict != "unverified"]
    llm = [r for r in valid if r.method == "llm" and r.verdict != "unverified"]
    ext_sup = sum(verdict_supports(r.verdict) for r in extractive)
    llm_sup = sum(verdict_supports(r.verdict) for r in llm)
    unverified = sum(r.verdict in (None, "unverified") for r in valid)
    decided = len(rows) - unverified
    return Summary(
        total_citations=len(rows),
        valid_citations=len(valid),
        validity_rate=rate(len(valid), len(rows)),
        extractive_checked=len(extractive),
        extractive_supports=ext_sup,
        extractive_precision=rate(ext_sup, len(extractive)),
        abstractive_checked=len(llm),
        abstractive_supports=llm_sup,
        abstractive_precision=rate(llm_sup, len(llm)),
        overall_precision=rate(ext_sup + llm_sup, len(extractive) + len(llm)),
        unverified=unverified,
        decided=decided,
        undecided=unverified,
        decision_coverage=rate(decided, len(rows)),
        decided_precision=rate(ext_sup + llm_sup, decided),
        total_claims=total_claims,
        cited_claims=cited_claims,
        coverage=rate(cited_claims, total_claims),
        llm_calls=llm_calls,
        llm_tokens=llm_tokens,
        cost_usd=round(cost_usd, 8),
    )


def joint_verdicts(rows: Sequence[CitationResult]) -> list[CitationResult]:
    """Each row with its sentence's joint verdict (README "The cascade").

    A sentence is supported when its citations together support it: each
    citation is judged for the part it is there for (the judge sees its
    siblings), so the sentence is supported when every citation is valid and
    supports its part; it is not supported as soon as every citation is decided
    and one does not; otherwise it is undecided.
    """
    groups: dict[tuple[int, str], list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r.paragraph_index, r.claim), []).append(i)
    out = list(rows)
    for members in groups.values():
        verdicts = [rows[i].verdict if rows[i].valid else "not_supports" for i in members]
        joint: VerdictLabel
        if all(v == "supports" for v in verdicts):
            joint = "supports"
        elif all(v in ("supports", "partial", "not_supports") for v in verdicts):
            joint = "not_supports"
        else:
            joint = "unverified"
        for i in members:
            out[i] = rows[i].model_copy(
                update={"claim_citations": len(members), "claim_verdict": joint}
            )
    return out
