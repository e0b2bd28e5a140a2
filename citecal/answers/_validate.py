"""Checking one question-answer item's citations at the three levels of README "`citecal validate`".

1. **Structure**: the required fields (``source``, ``relevance``, ``quote``)
   are present, of the right type and in range; each missing *enhanced* field
   (``evidence_idx``, ``alignment_score``, ``span_in_answer``) is a warning
   and costs ``missing_field_penalty`` (0.05).
2. **Semantics**: ``evidence_idx`` lies inside the evidence list;
   ``span_in_answer`` is in the answer, whole or by its first
   ``span_prefix_chars`` (50) characters, else it is a *hallucinated span*
   (an error costing ``hallucinated_span_penalty``, 0.3); the ``quote`` is in
   the cited evidence, verbatim or fuzzily (rapidfuzz partial ratio ≥
   ``quote_match_threshold``; a quote shortened with "..." must match piece
   by piece). The search is bounded (README "`citecal validate`", Limits): a
   piece longer than :data:`QUOTE_FUZZY_MAX_CHARS` must appear verbatim, and
   an item's searches compare at most :data:`QUOTE_SEARCH_BUDGET` characters
   (a quote left unchecked when it is spent is an error).
3. **Quality**: ``alignment_score`` ≥ ``min_alignment_score`` (0.3), else a
   warning costing ``low_alignment_penalty``.

Every other error costs ``error_penalty``. Field names come from
:class:`~citecal.config.AnswerFields`, so another producer's JSON can be read
without converting it. The functions are pure: reading files and writing
output live in :mod:`._stream`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from rapidfuzz import fuzz

from citecal.answers._gate import answer_gate
from citecal.answers._models import AnswerMetrics, CitationCheck, ItemResult, SpanMatch
from citecal.config import AnswersConfig

_ELLIPSIS = re.compile(r"\.\.\.+|…")


def _number(value: Any) -> float | None:
    """A JSON number as float (booleans are not numbers), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


@lru_cache(maxsize=256)
def _norm(text: str) -> str:
    """Case and whitespace folded; cached, as an item's evidence is searched once per citation."""
    return " ".join(text.split()).casefold()


QUOTE_FUZZY_MAX_CHARS = 500
"""A quote piece longer than this is not searched fuzzily: it must appear verbatim.

rapidfuzz's partial ratio costs up to the piece's length times the evidence's,
and a long piece against long evidence ran for minutes with Ctrl-C ignored
(README "Security", resource bounds)."""

QUOTE_SEARCH_BUDGET = 100_000_000
"""Character comparisons one item's quote searches may make: a verbatim search
costs the evidence's length, a fuzzy one the piece's length times that (about
a second at worst; README "`citecal validate`", Limits)."""


class QuoteSearch:
    """One item's evidence, normalised once, and what is left of its search budget."""

    __slots__ = ("left", "texts")

    def __init__(self, evidence: Sequence[str], budget: int = QUOTE_SEARCH_BUDGET) -> None:
        self.texts = [_norm(e) for e in evidence]
        self.left = budget

    def spend(self, cost: int) -> bool:
        """Take ``cost`` from the budget; False (nothing taken) when it does not cover it."""
        if cost > self.left:
            return False
        self.left -= cost
        return True


class QuoteMatch(NamedTuple):
    """How well a quote appears in one evidence text."""

    score: float | None
    """0–1 (1 when verbatim); None when the search budget ran out before it was searched."""
    note: str | None = None
    """Why a fuzzy search was skipped, if it was."""


def _pieces(quote: str) -> list[str]:
    return [p for p in (_norm(x) for x in _ELLIPSIS.split(quote)) if p]


def _match(pieces: Sequence[str], text: str, search: QuoteSearch) -> QuoteMatch:
    """Score normalised ``pieces`` against normalised ``text`` within the budget."""
    if not pieces:
        return QuoteMatch(0.0)
    worst = 1.0
    note = None
    for piece in pieces:
        if not search.spend(len(text)):
            return QuoteMatch(None)
        if piece in text:
            continue
        if len(piece) > QUOTE_FUZZY_MAX_CHARS:
            worst, note = (
                0.0,
                (
                    f"a piece of {len(piece)} characters must appear verbatim "
                    f"(fuzzy search stops at {QUOTE_FUZZY_MAX_CHARS})"
                ),
            )
        elif not search.spend(len(piece) * len(text)):
            worst, note = 0.0, "fuzzy search skipped: the item's search budget is spent"
        else:
            worst = min(worst, fuzz.partial_ratio(piece, text) / 100.0)
    return QuoteMatch(worst, note)


def quote_score(quote: str, evidence: str) -> float:
    """How well ``quote`` appears in ``evidence``, 0–1 (1 when verbatim).

    Case and runs of whitespace are ignored. A quote shortened with ``...`` or
    ``…`` is split there and scores as its worst piece, so every quoted piece
    must be in the evidence. A piece longer than :data:`QUOTE_FUZZY_MAX_CHARS`
    scores 0 unless it is verbatim.
    """
    search = QuoteSearch([evidence])
    return _match(_pieces(quote), search.texts[0], search).score or 0.0


class _Check:
    """Accumulates one citation's errors, warnings and penalties."""

    __slots__ = ("cfg", "errors", "penalty", "warnings")

    def __init__(self, cfg: AnswersConfig) -> None:
        self.cfg = cfg
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.penalty = 0.0

    def error(self, message: str, penalty: float | None = None) -> None:
        self.errors.append(message)
        self.penalty += self.cfg.error_penalty if penalty is None else penalty

    def missing(self, name: str) -> None:
        self.warnings.append(f"missing enhanced field '{name}'")
        self.penalty += self.cfg.missing_field_penalty


def _required_text(c: _Check, raw: Mapping[str, Any], name: str) -> str | None:
    if name not in raw or raw[name] is None:
        c.error(f"missing required field '{name}'")
        return None
    value = raw[name]
    if not isinstance(value, str) or not value.strip():
        c.error(f"'{name}' must be a non-empty string")
        return None
    return value


def _unit_number(c: _Check, raw: Mapping[str, Any], name: str, required: bool) -> float | None:
    if name not in raw or raw[name] is None:
        if required:
            c.error(f"missing required field '{name}'")
        else:
            c.missing(name)
        return None
    value = _number(raw[name])
    if value is None:
        c.error(f"'{name}' must be a number")
        return None
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        c.error(f"'{name}' {raw[name]!r} outside 0–1")
        return None
    return value


def _evidence_index(
    c: _Check, raw: Mapping[str, Any], name: str, evidence: Sequence[str] | None
) -> int | None:
    if name not in raw or raw[name] is None:
        c.missing(name)
        return None
    value = raw[name]
    number = _number(value)
    if number is None or not math.isfinite(number) or number != int(number):
        c.error(f"'{name}' must be an integer")
        return None
    idx = int(number)
    if evidence is None:
        c.warnings.append(f"no evidence list: '{name}' {idx} not checked")
        return None
    if not 0 <= idx < len(evidence):
        c.error(f"'{name}' {idx} out of bounds ({len(evidence)} evidence items)")
        return None
    return idx


def _span(
    c: _Check, raw: Mapping[str, Any], name: str, answer: str
) -> tuple[str | None, SpanMatch | None, int | None, int | None]:
    if name not in raw or raw[name] is None or raw[name] == "":
        c.missing(name)
        return None, None, None, None
    span = raw[name]
    if not isinstance(span, str):
        c.error(f"'{name}' must be a string")
        return None, None, None, None
    if not span.strip():
        c.missing(name)
        return span, None, None, None
    at = answer.find(span)
    if at >= 0:
        return span, "exact", at, at + len(span)
    prefix = span[: c.cfg.span_prefix_chars]
    at = answer.find(prefix)
    if at >= 0:
        return span, "prefix", at, at + len(prefix)
    c.error("Hallucinated span not found in answer", c.cfg.hallucinated_span_penalty)
    return span, "missing", None, None


def check_citation(
    raw: object,
    index: int,
    answer: str,
    evidence: Sequence[str] | None,
    cfg: AnswersConfig,
    *,
    search: QuoteSearch | None = None,
) -> CitationCheck:
    """Check one citation of an item (module docstring); never raises on bad input.

    ``search`` carries the item's normalised evidence and quote-search budget
    across its citations (a fresh one per call when omitted).
    """
    c = _Check(cfg)
    if not isinstance(raw, Mapping):
        c.errors.append(f"citation {index} is not an object")
        return CitationCheck(
            index=index, valid=False, errors=c.errors, warnings=[], quality_score=0
        )
    f = cfg.fields
    source = _required_text(c, raw, f.source)
    relevance = _unit_number(c, raw, f.relevance, required=True)
    quote = _required_text(c, raw, f.quote)
    idx = _evidence_index(c, raw, f.evidence_idx, evidence)
    idx_given = raw.get(f.evidence_idx) is not None
    alignment = _unit_number(c, raw, f.alignment_score, required=False)
    if alignment is not None and alignment < cfg.min_alignment_score:
        c.warnings.append(f"alignment_score {alignment:g} below {cfg.min_alignment_score:g}")
        c.penalty += cfg.low_alignment_penalty
    span, match, start, end = _span(c, raw, f.span_in_answer, answer)
    found: bool | None = None
    score: float | None = None
    where: int | None = None
    if quote is not None and evidence:
        search = search if search is not None else QuoteSearch(evidence)
        pieces = _pieces(quote)
        best: QuoteMatch | None = None
        if idx is not None:
            where, best = idx, _match(pieces, search.texts[idx], search)
        elif not idx_given:  # no index: the quote may come from any evidence
            for n, text in enumerate(search.texts):
                m = _match(pieces, text, search)
                if m.score is None or best is None or m.score > (best.score or 0.0):
                    where, best = n, m
                if m.score is None or m.score == 1.0:
                    break
        if best is not None and best.score is None:
            c.error(
                f"quote not checked against evidence[{where}]: the item's quote searches "
                f"reached their bound ({QUOTE_SEARCH_BUDGET:,} characters compared)"
            )
        elif best is not None:
            score = best.score
            found = score is not None and score >= cfg.quote_match_threshold
            if not found:
                why = f"; {best.note}" if best.note else ""
                c.error(f"quote not found in evidence[{where}] (best match {score:.0%}){why}")
    return CitationCheck(
        index=index,
        valid=not c.errors,
        errors=c.errors,
        warnings=c.warnings,
        quality_score=round(min(1.0, max(0.0, 1.0 - c.penalty)), 4),
        source=source,
        quote=quote,
        span_in_answer=span,
        evidence_idx=idx,
        relevance=relevance,
        alignment_score=alignment,
        span_match=match,
        span_start=start,
        span_end=end,
        hallucinated_span=match == "missing",
        quote_found=found,
        quote_score=None if score is None else round(score, 4),
        quote_evidence_idx=where,
    )


def coverage(answer: str, checks: Sequence[CitationCheck]) -> float | None:
    """Share of the answer's characters inside at least one found cited span."""
    if not answer:
        return None
    spans = sorted(
        (c.span_start, c.span_end)
        for c in checks
        if c.span_start is not None and c.span_end is not None
    )
    covered = 0
    reach = 0
    for start, end in spans:
        start = max(start, reach)
        if end > start:
            covered += end - start
            reach = end
    return covered / len(answer)


def _share(count: int, total: int) -> float | None:
    return count / total if total else None


def item_metrics(answer: str, checks: Sequence[CitationCheck]) -> AnswerMetrics:
    """The aggregate metrics over one item's citations (README "`citecal validate`")."""
    n = len(checks)
    valid = sum(c.valid for c in checks)
    aligned = [c.alignment_score for c in checks if c.alignment_score is not None]
    return AnswerMetrics(
        total_citations=n,
        valid_citations=valid,
        invalid_citations=n - valid,
        hallucinated_spans=sum(c.hallucinated_span for c in checks),
        avg_alignment_score=sum(aligned) / len(aligned) if aligned else None,
        citation_coverage=coverage(answer, checks),
        has_evidence_idx=_share(sum(c.evidence_idx is not None for c in checks), n),
        has_alignment_score=_share(len(aligned), n),
        has_span=_share(sum(c.span_start is not None for c in checks), n),
        avg_quality_score=sum(c.quality_score for c in checks) / n if n else None,
    )


def _evidence_texts(value: object, cfg: AnswersConfig, errors: list[str]) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        errors.append(f"'{cfg.fields.evidence}' must be a list")
        return None
    texts: list[str] = []
    key = cfg.fields.evidence_text
    for n, e in enumerate(value):
        if isinstance(e, str):
            texts.append(e)
        elif isinstance(e, Mapping) and isinstance(e.get(key), str):
            texts.append(e[key])
        else:
            errors.append(f"{cfg.fields.evidence}[{n}] is neither text nor an object with '{key}'")
            texts.append("")
    return texts


def validate_item(
    item: Mapping[str, Any], cfg: AnswersConfig, number: int = 1, line: int | None = None
) -> ItemResult:
    """Validate one question-answer item (``number`` is its 1-based position in the input)."""
    f = cfg.fields
    errors: list[str] = []
    raw_id = item.get(f.id)
    item_id = f"#{number}" if raw_id is None or isinstance(raw_id, dict | list) else str(raw_id)
    answer = item.get(f.answer)
    if not isinstance(answer, str):
        errors.append(
            f"missing '{f.answer}' (a string)"
            if answer is None
            else f"'{f.answer}' must be a string"
        )
        answer = ""
    question = item.get(f.question)
    evidence = _evidence_texts(item.get(f.evidence), cfg, errors)
    raw_citations = item.get(f.citations)
    if raw_citations is None:
        raw_citations = []
    elif not isinstance(raw_citations, list):
        errors.append(f"'{f.citations}' must be a list")
        raw_citations = []
    search = QuoteSearch(evidence) if evidence else None
    checks = [
        check_citation(c, i, answer, evidence, cfg, search=search)
        for i, c in enumerate(raw_citations)
    ]
    metrics = item_metrics(answer, checks)
    return ItemResult(
        id=item_id,
        line=line,
        valid=not errors and bool(checks) and all(c.valid for c in checks),
        errors=errors,
        gate=answer_gate(metrics, cfg),
        metrics=metrics,
        citations=checks,
        question=question if isinstance(question, str) else None,
        answer=answer,
        evidence=evidence or [],
    )
