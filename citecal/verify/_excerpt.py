"""Excerpt verification: does the quoted text appear where the citation points?

README "Excerpt citations" describes the statuses.

Three levels: the item exists, the location exists (both in
:mod:`._locations`), the excerpt appears there. An excerpt is what the report
quotes before the citation (see :class:`~citecal.models.ExtractedCitation`);
it appears when it is

1. a substring of the cited text, ignoring differences in whitespace; else
2. at least ``match_threshold`` (80%) of its significant words (at least
   ``min_word_chars`` = 4 characters once ``.,!?;:"'()[]{}`` are stripped,
   compared lower-cased) are among the cited text's words, where a word of
   ``prefix_chars`` (5) or more characters also matches a word it is a prefix
   of or that is a prefix of it ("improve" ~ "improvement").

Beyond the seed, the best-matching span of the whole item (rapidfuzz's
partial-ratio alignment) is reported with its line numbers, so a reader sees
where the excerpt nearly is, even when the citation points elsewhere.

Status and confidence degrade step by step (README "Excerpt citations"): ``verified``/high when
the excerpt appears; ``unverified``/medium when there is no excerpt to check;
``unverified``/low when there is one and it does not appear; ``failed``/low
when the item or the location does not exist.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from rapidfuzz.fuzz import partial_ratio_alignment

from citecal.config import Config, ExcerptConfig
from citecal.models import (
    Citation,
    CitationResult,
    Confidence,
    ExcerptMatch,
    ExtractedCitation,
    ValidationResult,
)
from citecal.source import SourceFile, SourceFileError, SourceStore
from citecal.verify._locations import find_item, resolve_location, whole_text
from citecal.verify._structural import validate_citation

ExcerptStatus = Literal["verified", "unverified", "failed"]
MatchMethod = Literal["exact", "words"]

_STRIP = str.maketrans("", "", ".,!?;:\"'()[]{}“”‘’«»`*")


@dataclass(frozen=True, slots=True)
class ExcerptSpan:
    """Where in the item the excerpt matches best: lines, score 0-1, the text."""

    start_line: int
    end_line: int
    score: float
    text: str


@dataclass(frozen=True, slots=True)
class ExcerptCheck:
    """The outcome of the three levels for one citation."""

    excerpt: str | None
    quoted: bool
    status: ExcerptStatus
    confidence: Confidence
    verified: bool
    score: float | None = None
    method: MatchMethod | None = None
    best: ExcerptSpan | None = None
    located: str = ""


def significant_words(text: str, min_chars: int = 4) -> list[str]:
    """Lower-cased words of at least ``min_chars`` characters, punctuation stripped."""
    return [w for w in text.lower().translate(_STRIP).split() if len(w) >= min_chars]


def _exact(excerpt: str, content: str) -> tuple[int, int] | None:
    """Where ``excerpt`` occurs in ``content`` with runs of whitespace treated as equal.

    A plain search first (most quotes keep the source's spacing); the regular
    expression, costly to compile per excerpt, only when the whitespace-collapsed
    texts say the excerpt is there.
    """
    needle = " ".join(excerpt.split())
    if not needle:
        return None
    at = content.find(needle)
    if at >= 0:
        return at, at + len(needle)
    if needle not in " ".join(content.split()):
        return None
    m = re.search(r"\s+".join(map(re.escape, needle.split(" "))), content)
    return m.span() if m is not None else None


def word_overlap(excerpt: str, content: str, cfg: ExcerptConfig) -> float | None:
    """Share of the excerpt's significant words found in ``content`` (None: it has none)."""
    wanted = significant_words(excerpt, cfg.min_word_chars)
    if not wanted:
        return None
    have = set(significant_words(content, cfg.min_word_chars))
    k = cfg.prefix_chars
    prefixes: set[str] | None = None
    found = 0
    for w in wanted:
        if w in have:
            found += 1
            continue
        if len(w) < k:
            continue
        if prefixes is None:  # every prefix of k+ characters of every word, built once
            prefixes = {v[:n] for v in have if len(v) > k for n in range(k, len(v))}
        if w in prefixes or any(w[:n] in have for n in range(k, len(w))):
            found += 1
    return found / len(wanted)


def match_excerpt(
    excerpt: str, content: str, cfg: ExcerptConfig
) -> tuple[bool, float | None, MatchMethod | None]:
    """(appears, score, how) for ``excerpt`` in the cited ``content`` (module docstring)."""
    if _exact(excerpt, content) is not None:
        return True, 1.0, "exact"
    score = word_overlap(excerpt, content, cfg)
    if score is None:
        return False, None, None
    return score >= cfg.match_threshold, score, "words"


def _span_at(text: str, start: int, end: int, score: float, first_line: int) -> ExcerptSpan:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    first = first_line + text.count("\n", 0, start)
    last = first + text.count("\n", start, end)
    return ExcerptSpan(first, last, round(score / 100.0, 4), text[start:end])


def best_span(excerpt: str, text: str, first_line: int = 1) -> ExcerptSpan | None:
    """The span of ``text`` that best matches ``excerpt`` (rapidfuzz alignment), with lines."""
    needle = " ".join(excerpt.split())
    if not needle or not text:
        return None
    exact = _exact(needle, text)
    if exact is not None:
        return _span_at(text, exact[0], exact[1], 100.0, first_line)
    hay = text.lower()
    if len(hay) != len(text):  # a few characters change length when lower-cased
        hay = text
    found = partial_ratio_alignment(needle.lower(), hay)
    if found is None or found.score == 0:
        return None
    return _span_at(text, found.dest_start, found.dest_end, found.score, first_line)


def _item_text(file: SourceFile, store: SourceStore, cfg: ExcerptConfig) -> str | None:
    """The whole item for the best-span search, when it is small enough."""
    if file.line_count == 0 or cfg.align_max_chars == 0:
        return None
    text = whole_text(file, store)
    return text if len(text) <= cfg.align_max_chars else None


def check_excerpt(
    excerpt: str | None,
    quoted: bool,
    validation: ValidationResult,
    cfg: ExcerptConfig,
    *,
    first_line: int = 1,
    item_text: str | None = None,
    located: str = "",
) -> ExcerptCheck:
    """Decide status, confidence and the best span for one citation (module docstring).

    Args:
        excerpt: what the report quotes; None when it quotes nothing.
        quoted: the excerpt was in quotation marks (else it is the sentence).
        validation: levels 1 and 2; ``cited_content`` is the located text.
        first_line: line number of the first cited line (for the span's lines).
        item_text: the whole item, searched for the best span when the excerpt
            is not at the cited location.
        located: a description of the location, e.g. "page 2 (lines 51-100)".
    """
    if not validation.valid:
        best = best_span(excerpt, item_text) if excerpt and item_text else None
        return ExcerptCheck(excerpt, quoted, "failed", "low", False, best=best, located=located)
    if excerpt is None:
        return ExcerptCheck(None, quoted, "unverified", "medium", False, located=located)
    content = validation.cited_content or ""
    exact = _exact(excerpt, content)
    if exact is not None:
        best = _span_at(content, exact[0], exact[1], 100.0, first_line)
        return ExcerptCheck(excerpt, quoted, "verified", "high", True, 1.0, "exact", best, located)
    score = word_overlap(excerpt, content, cfg)
    ok = score is not None and score >= cfg.match_threshold
    method: MatchMethod | None = None if score is None else "words"
    # Where it nearly is: near the location when it passed; anywhere in the item when not.
    if ok or item_text is None:
        best = best_span(excerpt, content, first_line)
    else:
        best = best_span(excerpt, item_text)
    if ok:
        return ExcerptCheck(excerpt, quoted, "verified", "high", True, score, method, best, located)
    return ExcerptCheck(excerpt, quoted, "unverified", "low", False, score, method, best, located)


def reads_context(citation: Citation) -> bool:
    """Whether a citation is read from the context directory when there is one (``--context``).

    Item citations and citations with a location specifier are excerpt-style
    citations of documents; plain line citations always read the repository.
    """
    return citation.item is not None or citation.location is not None


def needs_location(ex: ExtractedCitation) -> bool:
    """Citations that go through :func:`locate_citation`: items, locations, quoted excerpts."""
    c = ex.citation
    return c.item is not None or c.location is not None or ex.excerpt is not None


def locate_citation(
    ex: ExtractedCitation, store: SourceStore, config: Config
) -> tuple[ExtractedCitation, ValidationResult, ExcerptCheck]:
    """Levels 1-3 for one citation: the citation resolved to lines, its validation, the check.

    Never raises for a bad citation: a missing item or location is an invalid
    :class:`ValidationResult` and a ``failed`` check.
    """
    cfg = config.excerpt
    c = ex.citation
    file: SourceFile | None = None
    path = c.file_path
    if c.item is not None:
        try:
            path = find_item(c.item, store)
        except LookupError as exc:
            validation = ValidationResult(valid=False, error=str(exc), failure_type="invalid_file")
            check = check_excerpt(ex.excerpt, ex.excerpt_quoted, validation, cfg)
            return ex, validation, check
    if c.item is None and c.location is None:  # a line citation with a quoted excerpt
        validation = validate_citation(c, store)
        located = ""
        resolved = c
    else:
        try:
            file = store.read(path)
        except SourceFileError as exc:
            validation = ValidationResult(valid=False, error=str(exc), failure_type="invalid_file")
            check = check_excerpt(ex.excerpt, ex.excerpt_quoted, validation, cfg)
            return replace(ex, citation=replace(c, file_path=path)), validation, check
        result = resolve_location(c, file, store, cfg)
        resolved, validation, located = result.citation, result.validation, result.description
    if file is None and validation.valid:
        file = store.read(resolved.file_path)
    item_text = _item_text(file, store, cfg) if file is not None else None
    check = check_excerpt(
        ex.excerpt,
        ex.excerpt_quoted,
        validation,
        cfg,
        first_line=max(1, resolved.start_line),
        item_text=item_text,
        located=located,
    )
    return replace(ex, citation=resolved), validation, check


def excerpt_fields(citation: Citation, check: ExcerptCheck | None) -> dict[str, Any]:
    """The excerpt columns of a :class:`~citecal.models.CitationResult` (null when unchecked)."""
    fields: dict[str, Any] = {"item": citation.item, "location": citation.location}
    if check is None:
        return fields
    best = check.best
    fields.update(
        located=check.located or None,
        excerpt=check.excerpt,
        excerpt_quoted=check.quoted if check.excerpt is not None else None,
        excerpt_status=check.status,
        excerpt_confidence=check.confidence,
        excerpt_verified=check.verified,
        excerpt_score=None if check.score is None else round(check.score, 4),
        excerpt_match=None
        if best is None
        else ExcerptMatch(
            start_line=best.start_line, end_line=best.end_line, score=best.score, text=best.text
        ),
    )
    return fields


def excerpt_summary(rows: Sequence[CitationResult]) -> dict[str, int]:
    """The summary's excerpt counts."""
    statuses = [r.excerpt_status for r in rows if r.excerpt_status is not None]
    return {
        "excerpt_checked": len(statuses),
        "excerpt_verified": statuses.count("verified"),
        "excerpt_unverified": statuses.count("unverified"),
        "excerpt_failed": statuses.count("failed"),
    }
