"""Sentence segmentation of a markdown report, markdown-aware and linear-time.

A general-purpose sentence splitter does not fit: technical prose is full of
dots that end nothing (``Axios.js``, ``src/auth.py``, ``1.6.8``, ``e.g.``,
code spans) and of citation brackets that sit after the period they belong
to. So the rules are ours, applied over the masked scan text of each block:

* Units first: every heading, table row, code block and rule is one unit;
  paragraphs (including list-item and blockquote paragraphs), HTML blocks
  and stray lines are split.
* A sentence ends at a run of ``.``/``!``/``?``/``…`` (plus closing quotes,
  parentheses and emphasis) that is followed by whitespace and then an
  uppercase letter, a digit, a backtick, a quote, ``(``, ``[``, ``*``, ``_``
  or ``<``, or by the end of the block. CJK ``。！？`` always end one.
* Never inside code (it is masked), inside a bracket pair (a citation, link
  text; up to 300 characters, so a stray ``[`` cannot swallow a paragraph),
  or after an abbreviation (:data:`ABBREVIATIONS`). Dots followed by a
  non-space (file names, versions, decimals) are never candidates.
* Citation brackets right after the terminator (``... credentials. [a.py:1]``)
  belong to the sentence before them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from typing import NamedTuple

from citecal.extract._citations import CitationGroup, find_groups
from citecal.extract._markdown import Block, Document, parse_markdown, paused_gc

ABBREVIATIONS: frozenset[str] = frozenset(
    {
        "e.g", "eg", "i.e", "ie", "vs", "cf", "viz", "al", "approx", "incl", "esp",
        "resp", "dr", "mr", "mrs", "ms", "prof", "sr", "jr", "st", "fig", "figs",
        "eq", "sec", "ch", "vol", "pp", "ca", "w.r.t", "a.k.a", "n.b", "nb", "ex",
    }
)  # fmt: skip
"""Lower-cased words (without the final dot) after which a period never ends
a sentence. ``etc.`` is deliberately absent: it ends a sentence when an
uppercase word follows, and does not when a lowercase one does."""

# Always matches a whole run (possessive, and nothing after it can fail), so
# scanning resumes after the run: a run of a million dots costs one pass. The
# blank-after test is done in Python; a leading character class lets the
# regex engine skip ahead fast.
_TERMINATOR = re.compile(r"[.!?…]++[\"'”’»)*_]*+|[。！？]++[」』”’)]*+")
_CJK_STOPS = frozenset("。！？")
_NON_SPACE = re.compile(r"\S")
_WORD_BEFORE = re.compile(r"(?<![\w.])[A-Za-z]+(?:\.[A-Za-z]+)*$")
_TRAILING_PUNCT = re.compile(r"[.,;:]*")
_BRACKET = re.compile(r"\[[^\[\]]*\]")
_MAX_BRACKET = 300
_QUOTE_SKIP = re.compile(r"[>\s]*")
_OPENERS = frozenset("`\"'“‘«(*_[<")
CLAUSE_BOUNDARY = re.compile(
    r"(?:;|,\s*+(?:and|but|while|whilst|whereas|or|so|yet)\b)\s*+", re.IGNORECASE
)
"""Where a sentence with several citations is cut so each gets its own clause."""


class Unit(NamedTuple):
    """One sentence (or heading, row, code block) of the report.

    ``start``/``end`` are offsets into the report, trimmed of surrounding
    whitespace; ``groups`` the citation brackets inside, in order.
    """

    start: int
    end: int
    block: Block
    groups: tuple[CitationGroup, ...]


def _starts_sentence(ch: str) -> bool:
    if not ch:
        return False
    return ch.isupper() or ch.isdigit() or ch in _OPENERS or (ch.isalpha() and not ch.islower())


def _abbreviation(scan: str, floor: int, period: int) -> bool:
    if period <= floor or not scan[period - 1].isascii() or not scan[period - 1].isalpha():
        return False
    m = _WORD_BEFORE.search(scan, max(floor, period - 16), period)
    return m is not None and m.group().lower() in ABBREVIATIONS


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    seg = text[start:end]
    body = seg.lstrip()
    if not body:
        return None
    return start + len(seg) - len(body), start + len(seg.rstrip())


def block_sentences(
    text: str,
    scan: str,
    start: int,
    end: int,
    groups: Sequence[CitationGroup],
    content_start: int | None = None,
    quoted: bool = False,
) -> list[tuple[int, int]]:
    """Sentence spans of the prose in ``text[start:end]`` (see module rules).

    Boundaries are looked for in ``scan`` (code masked) from
    ``content_start`` on, so a list marker such as ``1.`` never ends a
    sentence; spans are trimmed in ``text`` so that they cover everything
    written, markers and HTML comments included. ``quoted`` lets a sentence
    start after a continuation line's ``>``. One pass over the terminator
    candidates; ``groups`` (sorted) is walked with a pointer, so the cost is
    linear in the block length.
    """
    first = _trimmed(text, start, end)
    if first is None:
        return []
    pos, end = first
    spans: list[tuple[int, int]] = []
    gi = bi = 0
    if scan.count("[", pos, end) > len(groups):  # brackets that are not citations
        brackets = [
            m.span()
            for m in _BRACKET.finditer(scan, pos, end)
            if m.end() - m.start() <= _MAX_BRACKET
        ]
    else:
        brackets = [(g.start, g.end) for g in groups]
    from_ = pos if content_start is None else max(pos, content_start)
    for m in _TERMINATOR.finditer(scan, from_, end):
        t_start, boundary = m.span()
        term = m.group()
        if boundary < end and not scan[boundary].isspace() and term[0] not in _CJK_STOPS:
            continue  # "Axios.js", "1.6.8", "a.b": nothing ends here
        if t_start < pos:
            continue  # swallowed by a citation attached to the previous sentence
        while gi < len(groups) and groups[gi].end <= t_start:
            gi += 1
        while bi < len(brackets) and brackets[bi][1] <= t_start:
            bi += 1
        if bi < len(brackets) and brackets[bi][0] <= t_start:
            continue  # inside a bracket: a citation, link text, a note
        if term[0] == "." and term[1:2] != "." and _abbreviation(scan, pos, t_start):
            continue
        nxt = _NON_SPACE.search(scan, boundary, end)
        if nxt is None:
            break
        p = nxt.start()
        if gi < len(groups) and groups[gi].start == p:  # "... credentials. [a.py:1-3]"
            k = gi
            while nxt is not None and k < len(groups) and groups[k].start == p:
                boundary = _TRAILING_PUNCT.match(scan, groups[k].end, end).end()  # type: ignore[union-attr]
                k += 1
                nxt = _NON_SPACE.search(scan, boundary, end)
                p = nxt.start() if nxt is not None else end
            if nxt is None:
                break
        else:
            ch = scan[p]
            if quoted and ch == ">":
                q = _QUOTE_SKIP.match(scan, p, end).end()  # type: ignore[union-attr]
                ch = scan[q] if q < end else ""
            if not _starts_sentence(ch):
                continue
        spans.append((pos, boundary))
        pos = _NON_SPACE.search(text, boundary, end).start()  # type: ignore[union-attr]
    spans.append((pos, end))
    return spans


def clause_cuts(scan: str, groups: tuple[CitationGroup, ...]) -> list[tuple[int, int] | None]:
    """For each gap between consecutive groups, the clause boundary in it (or None)."""
    cuts: list[tuple[int, int] | None] = []
    for a, b in pairwise(groups):
        m = CLAUSE_BOUNDARY.search(scan, a.end, b.start)
        cuts.append(m.span() if m else None)
    return cuts


def analyse(text: str) -> tuple[Document, tuple[Unit, ...]]:
    """Parse ``text`` and cut it into units.

    Not cached: the units are intermediate, and freeing them as soon as
    claims are built keeps a large report's live object count (and every
    later garbage-collection pass) small; :mod:`._claims` caches its result.
    """
    with paused_gc():
        return _analyse(text)


def _analyse(text: str) -> tuple[Document, tuple[Unit, ...]]:
    doc = parse_markdown(text)
    scan = doc.scan
    units: list[Unit] = []
    for block in doc.blocks:
        if block.kind in ("code", "rule"):
            span = _trimmed(doc.text, block.start, block.end)
            if span is not None:
                units.append(Unit(span[0], span[1], block, ()))
            continue
        groups = find_groups(scan, block.start, block.end, ref_definitions=block.kind == "other")
        if block.kind in ("heading", "table_row"):
            span = _trimmed(doc.text, block.start, block.end)
            if span is not None:
                units.append(Unit(span[0], span[1], block, tuple(groups)))
            continue
        spans = block_sentences(
            doc.text, scan, block.start, block.end, groups, block.content_start, block.quoted
        )
        if len(spans) == 1:
            units.append(Unit(spans[0][0], spans[0][1], block, tuple(groups)))
            continue
        gi = 0
        for s, e in spans:
            gj = gi
            while gj < len(groups) and groups[gj].start < e:
                gj += 1
            units.append(Unit(s, e, block, tuple(groups[gi:gj])))
            gi = gj
    return doc, tuple(units)


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` into ``text``, in order, covering all its non-space text.

    Headings, table rows, code blocks and rules are one span each; paragraphs
    are split by the rules of this module. Spans never overlap and are
    trimmed of surrounding whitespace.
    """
    return [(u.start, u.end) for u in analyse(text)[1]]


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*(?:\r?\n[ \t]*)+")


def sentence_blocks(text: str, *, markdown: bool = True) -> list[tuple[int, int, str]]:
    """Sentence spans with the kind of block each sits in: ``(start, end, kind)``.

    ``kind`` is a :data:`~citecal.extract._lines.BlockKind` (``heading``,
    ``paragraph``, ``code``, ``table_row``, ...). With ``markdown=False`` the
    text is plain prose: paragraphs are separated by blank lines and nothing is
    code, a heading or a table (indentation means nothing there). Spans cover all
    non-space text, in order, without overlapping, as :func:`split_sentences`.
    """
    if markdown:
        return [(u.start, u.end, u.block.kind) for u in analyse(text)[1]]
    spans: list[tuple[int, int, str]] = []
    pos = 0
    for m in [*_PARAGRAPH_BREAK.finditer(text), None]:
        end = m.start() if m is not None else len(text)
        for s, e in block_sentences(text, text, pos, end, ()):
            spans.append((s, e, "paragraph"))
        if m is not None:
            pos = m.end()
    return spans
