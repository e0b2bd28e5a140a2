"""Claims: the sentence text each citation backs, and every claim sentence for coverage.

Claim text is what verifiers read, so it is normalised the same way
everywhere: citation brackets removed, whitespace collapsed (inside code
spans too), the container prefix of the block's first line (``- ``, ``1. ``,
``> ``, ``[ ]``, heading ``#``) and blockquote markers dropped, ``**`` and
paired single-``*`` emphasis removed, links reduced to their text, HTML
comments, footnote markers and parentheses left empty (``(see [a.py:3])``)
dropped, trailing ``.``/``,``/``;``/``:`` stripped. Backticks stay: code spans are the
strongest evidence the extractive verifier has. Underscores stay too, since
``__init__`` and ``snake_case`` written without backticks are names, not
emphasis.

When a sentence holds several citation brackets, it is cut at the clause
boundaries (``;``, ``, and``, ``, but``, ``, while``, ...) that sit between
them, and each bracket gets its clause; brackets with nothing but blanks or
commas between them share one. If two brackets have words but no boundary
between them (``login [a] and logout [b], and ...``), which words belong to
which is unclear and every bracket gets the whole sentence.
A citation whose part has no words (``- [a.py:3]`` under "Login is handled
in:") or only a label (``Source: [a.py:3]``) backs the sentence before it in
the same section (or the section's heading): that sentence becomes its claim
and counts as cited for coverage.

``paragraph_index`` counts blocks in document order: headings, paragraphs
(each paragraph of a list item or blockquote is its own), HTML blocks, and
tables (one index per table, shared by its rows). Code blocks, rules and
punctuation-only lines are not counted. ``context`` is the block's original
text (the whole table for a table row).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from citecal._regex import bounded_patterns
from citecal.config import ExtractConfig
from citecal.extract._citations import CitationGroup
from citecal.extract._markdown import Block, Document, html_comments, paused_gc
from citecal.extract._sentences import Unit, analyse, clause_cuts
from citecal.models import Claim, ExtractedCitation

MAX_CLAIM_CHARS = 2000
"""A claim longer than this (a "sentence" with no punctuation at all) is cut
to the text just before its citation, so one runaway paragraph cannot turn
100 000 citations into 100 000 copies of a megabyte-long claim."""

_QUOTE_LEAD = re.compile(r"(?:>[ \t]?)*")
_QUOTE_MARKS = re.compile(r"([\r\n])[ \t]*(?:>[ \t]?)+")
_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^()]*\)")
_EM_STAR = re.compile(r"(?<![\w*])\*([^\s*](?:[^*]*?[^\s*])?)\*(?![\w*])")
_SPACE = re.compile(r"\s+")
_SPACE_PUNCT = re.compile(r" (?=[.,;:!?)](?:[\s.,;:!?)]|$))")
_FOOTNOTE = re.compile(r"\[\^[^\[\]\s]*\]:?")
# Parentheses a removed citation leaves empty: "( )", "(see )", "(cf. , )".
_EMPTY_PARENS = re.compile(
    r"\(\s*+(?:(?:see|see also|cf\.?|e\.g\.|ref\.?|source|sources)\s*+:?)?[\s,;]*+\)",
    re.IGNORECASE,
)
_PIPE = re.compile(r" ?(?<!\\)\| ?")  # applied after whitespace is collapsed
_EMPTY_CELLS = re.compile(r"(?<! \|)(?: \|)++ ")
_ALNUM = re.compile(r"[^\W_]")
_ADJACENT = re.compile(r"[\s,;]*+")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_TRAILING = " \t.,;:"
_MARKUP = ("*", "<", "[", "(")  # what _clean may rewrite besides whitespace
_LABEL = re.compile(r"[^\W\d_][\w ]{0,30}:")


class _Sentence(NamedTuple):
    full: str  # normalised, final punctuation kept (non-claim patterns see "?")
    text: str  # claim text
    section: str
    paragraph_index: int
    position: int
    cited: bool
    end: int = -1  # offset just past the sentence (its citations included)


def _clean(piece: str, quoted: bool, row: bool, html: bool = False) -> str:
    if "<" in piece:
        if "<!--" in piece:
            piece = _drop_comments(piece)
        if html:
            piece = _TAG.sub(" ", piece)
    if quoted and ">" in piece:
        piece = _QUOTE_MARKS.sub(r"\1", piece)
    if "](" in piece:
        piece = _LINK.sub(r"\1", piece)
    if "*" in piece:
        piece = _EM_STAR.sub(r"\1", piece.replace("**", ""))
    if "[^" in piece:
        piece = _FOOTNOTE.sub("", piece)
    if "(" in piece:
        piece = _EMPTY_PARENS.sub("", piece)
    piece = _SPACE.sub(" ", piece)
    if row:
        piece = _PIPE.sub(" | ", piece)
    return _SPACE_PUNCT.sub("", piece)


def _drop_comments(piece: str) -> str:
    kept: list[str] = []
    pos = 0
    for start, end in html_comments(piece, 0, len(piece)):
        kept.append(piece[pos:start])
        pos = end
    kept.append(piece[pos:])
    return "".join(kept)


class _Normaliser:
    """Builds normalised text for spans of one document (code spans kept verbatim)."""

    def __init__(self, doc: Document) -> None:
        self.text = doc.text
        self.spans = doc.code_spans
        self.span_starts = [s for s, _ in doc.code_spans]

    def __call__(self, start: int, end: int, block: Block, groups: Sequence[CitationGroup]) -> str:
        text = self.text
        quoted, row, html = block.quoted, block.kind == "table_row", block.kind == "html"
        spans = self.spans
        if groups:
            pieces: list[str] = []
            pos = start
            for g in groups:
                if start <= g.start < end:
                    pieces.append(text[pos : g.start])
                    pos = g.end
            pieces.append(text[pos:end])
            prose = " ".join(pieces)  # a removed citation still separates words
        else:
            prose = text[start:end]
        i = bisect_left(self.span_starts, start)
        if (
            i < len(spans)
            and spans[i][0] < end
            and (row or (quoted and ">" in prose) or any(c in prose for c in _MARKUP))
        ):  # markup to remove next to code that must stay verbatim
            result = self._with_code(start, end, i, quoted, row, html, groups)
        else:
            result = _clean(prose, quoted, row, html).strip()
        if row:
            result = _EMPTY_CELLS.sub(" | ", result).strip(" |")
        return result

    def _with_code(
        self,
        start: int,
        end: int,
        i: int,
        quoted: bool,
        row: bool,
        html: bool,
        groups: Sequence[CitationGroup],
    ) -> str:
        text, spans = self.text, self.spans
        cuts = [(g.start, g.end, False) for g in groups if start <= g.start < end]
        while i < len(spans) and spans[i][0] < end:
            cuts.append((spans[i][0], min(spans[i][1], end), True))
            i += 1
        cuts.sort()
        out: list[str] = []
        prose: list[str] = []
        pos = start
        for s, e, is_code in cuts:
            prose.append(text[pos:s])
            if is_code:
                out.append(_clean("".join(prose), quoted, row, html))
                prose = []
                out.append(_SPACE.sub(" ", text[s:e]))
            else:
                prose.append(" ")
            pos = e
        prose.append(text[pos:end])
        out.append(_clean("".join(prose), quoted, row, html))
        return "".join(out).strip()


def _is_label(full: str, claim: str) -> bool:
    """``Source:``, ``See also:`` -- a short label that only introduces a citation."""
    head = full.rstrip(" .,;")
    return head.endswith(":") and _LABEL.fullmatch(head) is not None and count_words(claim) <= 3


def _strip_claim(full: str) -> str:
    return full.rstrip(_TRAILING).lstrip(" ,;:")


def _cap(claim: str) -> str:
    if len(claim) <= MAX_CLAIM_CHARS:
        return claim
    tail = claim[-MAX_CLAIM_CHARS:]
    space = tail.find(" ")
    return tail[space + 1 :] if 0 <= space < len(tail) - 1 else tail


@dataclass(frozen=True, slots=True)
class _Extraction:
    citations: tuple[ExtractedCitation, ...]
    sentences: tuple[_Sentence, ...]


def _unit_bounds(text: str, unit: Unit) -> tuple[int, int]:
    block = unit.block
    start = block.content_start if unit.start <= block.content_start else unit.start
    if block.quoted and start == unit.start:  # a sentence starting a "> " continuation line
        start = _QUOTE_LEAD.match(text, start, unit.end).end()  # type: ignore[union-attr]
    end = min(unit.end, block.content_end) if block.kind == "heading" else unit.end
    return start, max(start, end)


@lru_cache(maxsize=2)
def _extract(text: str) -> _Extraction:
    with paused_gc():
        return _build(text)


def _build(text: str) -> _Extraction:
    doc, units = analyse(text)
    norm = _Normaliser(doc)
    citations: list[ExtractedCitation] = []
    sentences: list[_Sentence] = []
    seen: dict[tuple[str, str], int] = {}
    section = ""
    last_claim = ""
    last_index = -1  # the claimable sentence last_claim came from, if any
    context_block: Block | None = None
    context = ""
    for unit in units:
        block = unit.block
        if block.kind in ("code", "rule"):
            continue
        if not (unit.groups or block.claimable or block.kind == "heading"):
            continue
        start, end = _unit_bounds(text, unit)
        full = norm(start, end, block, unit.groups)
        claim = _strip_claim(full)
        if block.kind == "heading":
            section, last_claim, last_index = full, "", -1
        if block.claimable:
            sentences.append(
                _Sentence(
                    full, claim, section, block.paragraph_index, start, bool(unit.groups), end
                )
            )
        here = len(sentences) - 1 if block.claimable else -1
        if not unit.groups:
            if _ALNUM.search(claim):
                last_claim, last_index = claim, here
            continue
        if not _ALNUM.search(claim) or (
            last_claim and block.kind in ("paragraph", "other") and _is_label(full, claim)
        ):  # "[a.py:3]" or "Source: [a.py:3]" backs the sentence before it
            claim = last_claim
            if last_index >= 0 and not sentences[last_index].cited:
                sentences[last_index] = sentences[last_index]._replace(cited=True)
        else:
            last_claim, last_index = claim, here
        if block is not context_block:
            context_block = block
            context = text[block.context_start : block.context_end].strip()
        parts = (
            [claim]
            if len(unit.groups) == 1 and len(claim) <= MAX_CLAIM_CHARS
            else _clause_claims(unit, start, end, block, claim, norm, doc.scan)
        )
        excerpts = (
            _excerpts(unit, start, block, norm, doc.scan)
            if any(_located(g) for g in unit.groups) or _QUOTE.search(doc.scan, start, end)
            else None
        )
        for k, (group, part) in enumerate(zip(unit.groups, parts, strict=True)):
            excerpt, quoted = excerpts[k] if excerpts is not None else (None, False)
            raw = text[group.start : group.end]
            for cit in group.citations:
                key = (part, str(cit))
                occurrence = seen.get(key, 0)
                seen[key] = occurrence + 1
                citations.append(
                    ExtractedCitation(
                        citation=cit,
                        claim_text=part,
                        section=section,
                        paragraph_index=block.paragraph_index,
                        position=group.start,
                        context=context,
                        raw=raw,
                        occurrence=occurrence,
                        excerpt=excerpt,
                        excerpt_quoted=quoted,
                    )
                )
    return _Extraction(tuple(citations), tuple(sentences))


def _located(group: CitationGroup) -> bool:
    """``[[item]]`` or a location specifier: an excerpt-style citation (README)."""
    return group.double or any(c.location is not None for c in group.citations)


_QUOTE = re.compile(r'"([^"\r\n]+)"|“([^”\r\n]+)”|«([^»\r\n]+)»')


def _excerpts(
    unit: Unit, start: int, block: Block, norm: _Normaliser, scan: str
) -> list[tuple[str | None, bool]]:
    """What each citation of a sentence claims to quote (README "Excerpt citations").

    The text between the previous citation (or the sentence start) and this
    one: its last quoted passage (``"..."``, ``“...”``, ``«...»``; never inside
    code) when there is one, else, for excerpt-style citations (``[[item]]``,
    ``[doc.md:p2]``, ``[doc.md:S:3]``; not line ranges), all of it.
    """
    out: list[tuple[str | None, bool]] = []
    for k, group in enumerate(unit.groups):
        seg_start = start if k == 0 else unit.groups[k - 1].end
        last = None
        for last in _QUOTE.finditer(scan, seg_start, group.start):  # noqa: B007
            pass
        if last is not None:
            inner = last.lastindex or 1
            quoted = norm.text[last.start(inner) : last.end(inner)]
            out.append((" ".join(quoted.split()), True))
            continue
        if _located(group):
            said = _strip_claim(norm(seg_start, group.start, block, ()))
            out.append((said if _ALNUM.search(said) else None, False))
        else:
            out.append((None, False))
    return out


def _clause_claims(
    unit: Unit, start: int, end: int, block: Block, claim: str, norm: _Normaliser, scan: str
) -> list[str]:
    """The claim text of each group of ``unit`` (see module docstring)."""
    groups = unit.groups
    whole = len(groups) == 1 or block.kind in ("heading", "table_row")
    cuts = [] if whole else clause_cuts(scan, groups)
    if (
        whole
        or not any(cuts)
        or any(
            cut is None and _ADJACENT.fullmatch(scan, a.end, b.start) is None
            for cut, a, b in zip(cuts, groups, groups[1:], strict=False)
        )
    ):  # one bracket, or words between two brackets and no boundary: the whole sentence
        return _shared(claim, start, groups, 0, len(groups), block, norm)
    parts: list[str] = []
    seg_start = start
    first = 0
    for i in range(len(groups)):
        cut = cuts[i] if i < len(cuts) else None
        if cut is None and i < len(groups) - 1:
            continue
        seg_end = cut[0] if cut is not None else end
        part = _strip_claim(norm(seg_start, seg_end, block, groups[first : i + 1]))
        parts.extend(
            _shared(
                part if _ALNUM.search(part) else claim, seg_start, groups, first, i + 1, block, norm
            )
        )
        first = i + 1
        if cut is not None:
            seg_start = cut[1]
    return parts


def _shared(
    claim: str,
    seg_start: int,
    groups: tuple[CitationGroup, ...],
    first: int,
    stop: int,
    block: Block,
    norm: _Normaliser,
) -> list[str]:
    """``claim`` for ``groups[first:stop]``; for a runaway claim, the text before each group."""
    if len(claim) <= MAX_CLAIM_CHARS:
        return [claim] * (stop - first)
    parts: list[str] = []
    for k in range(first, stop):
        prev = groups[k - 1].end if k > first else seg_start
        local = _strip_claim(norm(prev, groups[k].end, block, groups[k : k + 1]))
        parts.append(_cap(local if _ALNUM.search(local) else claim))
    return parts


def extract_citations(text: str) -> list[ExtractedCitation]:
    """Every citation in a markdown report, with its claim, section, paragraph and context.

    Citations inside code (fenced or indented blocks, inline spans) and link,
    footnote and reference brackets are ignored. The list is ordered by
    ``position``; citations sharing one bracket share its position and keep
    their written order. Never raises on any string.
    """
    return list(_extract(text).citations)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the claimable sentences of a report, in order.

    ``start`` is where the sentence's text begins (after list and quote
    markers), ``end`` just past it, citations included. The correction loop
    rewrites a claim in place with these (README "`citecal correct`").
    """
    return [(s.position, s.end) for s in _extract(text).sentences]


def _has_words(text: str, n: int) -> bool:
    """``count_words(text) >= n``, stopping as soon as it is known."""
    for tok in text.split():
        if _ALNUM.search(tok):
            n -= 1
            if n <= 0:
                return True
    return n <= 0


def count_words(text: str) -> int:
    """Whitespace-separated tokens with at least one letter or digit."""
    return sum(1 for tok in text.split() if _ALNUM.search(tok))


def find_claims(text: str, config: ExtractConfig) -> list[Claim]:
    """Claim sentences of a report for coverage (README "`citecal eval`").

    A claim is a sentence of a paragraph, list item or table body row (not a
    heading, code, HTML block or table header) with at least
    ``config.min_claim_words`` words once citations are removed, matching
    none of ``config.non_claim_patterns`` (searched case-insensitively in the
    normalised sentence, final punctuation kept). ``cited`` says whether the
    sentence carried a citation, or was backed by a bare or label-only
    citation right after it. ``position`` is where the sentence's text starts
    (after list and quote markers).

    Raises:
        ConfigError: a non-claim pattern is not a valid regular expression.
    """
    patterns = bounded_patterns("extract.non_claim_patterns", tuple(config.non_claim_patterns))
    claims: list[Claim] = []
    with paused_gc():
        for s in _extract(text).sentences:
            if not _has_words(s.text, config.min_claim_words):
                continue
            if patterns.any(s.full):
                continue
            claims.append(Claim(s.text, s.section, s.paragraph_index, s.position, s.cited))
    return claims
