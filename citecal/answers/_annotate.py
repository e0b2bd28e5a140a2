"""Answer citations as evaluation rows, so ``citecal push`` / ``pull`` / ``calibrate`` take them.

The annotation loop is built on :class:`~citecal.models.EvalResult`; a
``citecal validate`` result becomes one with a row per citation: the claim is
the answer span the citation backs (the answer when there is none), the
cited text is the evidence it points at, the excerpt its quote, and the
"judge" is the answer system itself: its ``alignment_score`` is the support
score and the verdict follows from the validation (README "One annotation
loop"). Annotators then rate whether the evidence supports the span, and
``calibrate`` measures how well ``alignment_score`` agrees with them.
"""

from __future__ import annotations

import hashlib

from citecal.answers._models import CitationCheck, ItemResult, ValidateResult
from citecal.config import AnswersConfig
from citecal.models import CitationResult, Confidence, EvalResult, Summary, VerdictLabel

ANSWER_MODEL = "answer alignment_score"
"""What stands in the judge-model column: the producer's own alignment score."""


def answer_verdict(
    check: CitationCheck, cfg: AnswersConfig
) -> tuple[VerdictLabel, Confidence, float | None]:
    """(verdict, confidence, score) that a citation's validation implies.

    Invalid (a hallucinated span, a quote not in its evidence, a bad field):
    not_supports. Valid with an alignment_score: supports at or above
    ``warn_avg_alignment`` (0.4; high from 0.7), else partial. Valid without
    one: supports (medium) when the quote was found in the evidence, else partial.
    """
    a = check.alignment_score
    if not check.valid:
        return "not_supports", "high", 0.0 if check.hallucinated_span else a
    if a is not None:
        if a >= cfg.warn_avg_alignment:
            return "supports", "high" if a >= 0.7 else "medium", a
        return "partial", "low", a
    if check.quote_found:
        return "supports", "medium", None
    return "partial", "low", None


def _row(item: ItemResult, check: CitationCheck, cfg: AnswersConfig) -> CitationResult:
    where = check.quote_evidence_idx if check.quote_evidence_idx is not None else check.evidence_idx
    evidence = item.evidence[where] if where is not None and where < len(item.evidence) else ""
    lines = max(1, evidence.count("\n") + 1)
    source = check.source or "(no source)"
    label = f"{source} · evidence[{where}]" if where is not None else source
    claim = check.span_in_answer if check.span_match in ("exact", "prefix") else item.answer
    verdict, confidence, score = answer_verdict(check, cfg)
    problems = check.errors + check.warnings
    digest = hashlib.sha256(f"{item.id}\x1f{check.index}".encode()).hexdigest()[:16]
    return CitationResult(
        id=digest,
        citation=f"[{item.id} #{check.index}: {label}]",
        file_path=source,
        start_line=1,
        end_line=lines,
        claim=claim or "",
        section=item.question or "",
        paragraph_index=0,
        position=check.span_start or 0,
        valid=check.valid,
        error="; ".join(check.errors) or None,
        failure_type=None if check.valid else "not_supporting",
        mode=None,
        verdict=verdict,
        method="extractive",
        confidence=confidence,
        score=score,
        reasoning="; ".join(problems) or "all checks passed",
        matched_terms=[],
        missing_terms=[],
        suggested_action=None if check.valid else "fix_reference",
        model=ANSWER_MODEL,
        prompt_version=None,
        context=item.answer,
        cited_code=evidence,
        excerpt=check.quote,
        excerpt_quoted=True if check.quote is not None else None,
        excerpt_status=None
        if check.quote_found is None
        else "verified"
        if check.quote_found
        else "unverified",
        excerpt_score=check.quote_score,
    )


def answers_to_eval(result: ValidateResult, cfg: AnswersConfig | None = None) -> EvalResult:
    """One evaluation row per answer citation (see module docstring).

    Every citation becomes a valid row, even an invalid one: annotators should
    see hallucinated spans and misquotes too, with the verdict ``not_supports``
    pre-filled.
    """
    cfg = cfg or AnswersConfig()
    rows = [
        _row(item, check, cfg).model_copy(update={"valid": True})
        for item in result.items
        for check in item.citations
    ]
    decided = [r for r in rows if r.verdict != "unverified"]
    supports = sum(r.verdict == "supports" for r in decided)
    a = result.aggregate
    summary = Summary(
        total_citations=len(rows),
        valid_citations=a.valid_citations,
        validity_rate=a.valid_citations / a.total_citations if a.total_citations else None,
        extractive_checked=len(decided),
        extractive_supports=supports,
        extractive_precision=supports / len(decided) if decided else None,
        abstractive_checked=0,
        abstractive_supports=0,
        abstractive_precision=None,
        overall_precision=supports / len(decided) if decided else None,
        unverified=0,
        total_claims=result.total_qa,
        cited_claims=result.total_qa - a.items_without_citations,
        coverage=a.citation_coverage,
    )
    return EvalResult(
        report=result.input,
        repo=result.input,
        summary=summary,
        citations=rows,
        failed_citations=[],
        gate=result.gate,
    )
