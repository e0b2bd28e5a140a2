"""Markdown block structure and code masking, the ground every later scan stands on.

Why a real parser: whether ``[a.py:3]`` is a citation depends on whether it
sits in a fenced block, an indented code block, a list item or a table, and
CommonMark's rules for those (fence lengths, lazy continuation lines, nesting)
are easy to get subtly wrong by hand. ``markdown-it-py`` (already installed
with rich) parses the block structure in linear time; we run only its block
stage (the inline stage is switched off, it triples the cost and we need
character offsets, which its inline tokens do not carry) and read the line
maps of the leaf blocks. Reports made only of paragraphs, ``#`` headings
and flat lists skip it: :mod:`citecal.extract._simple` reads those line by
line, with the same result (property-tested).

Inline code spans are found here with CommonMark's backtick-run rule in one
pass per block, because markdown-it does not report their offsets.

Everything is expressed as character offsets into the *original* text (CRLF
and lone CR line endings included), so positions reported to users point at
what they wrote.
"""

from __future__ import annotations

import gc
import re
from bisect import bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from markdown_it import MarkdownIt

from citecal.extract._lines import BlockKind, Leaf, line_end, line_starts
from citecal.extract._simple import simple_leaves

_NOT_NEWLINE = re.compile(r"[^\r\n]")
_BACKTICKS = re.compile(r"`+")
_ALNUM = re.compile(r"[^\W_]")
# Container prefix on a block's first line: indentation, blockquote markers,
# list markers (which need a space or the line end after them), a task box.
_PREFIX = re.compile(
    r"[ \t]*(?:(?:>[ \t]?|(?:[-+*]|\d{1,9}[.)])(?:[ \t]+|(?=[\r\n]|$)))[ \t]*)*"
    r"(?:\[[ xX]\](?:[ \t]+|(?=[\r\n]|$)))?"
)
# YAML front matter: "---", a first line that is a "key:", lines, "---" or "...".
_FRONT_MATTER = re.compile(
    r"---[ \t]*\r?\n[\w-]+[ \t]*:(?:[^\n]*\n)*?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)"
)
_ATX_OPEN = re.compile(r"#{1,6}(?:[ \t]+|(?=[\r\n]|$))")

INLINE_FILL = "x"
"""What inline code content becomes in the scan text: a non-space, non-
punctuation letter, so the sentence splitter sees one opaque word."""


class Block(NamedTuple):
    """A leaf block of the report: the unit for sections, paragraphs and context.

    ``start``/``end`` span its lines (end excludes the last line break);
    ``content_start``/``content_end`` skip the container prefix of the first
    line (``> - [ ] ``), heading markers and a setext underline. ``paragraph_index``
    is the block's index (-1 for blocks that are not counted: code,
    rules, punctuation-only lines). Table rows share the index and the
    ``context`` span of their table.
    """

    kind: BlockKind
    start: int
    end: int
    content_start: int
    content_end: int
    paragraph_index: int
    context_start: int
    context_end: int
    quoted: bool = False
    claimable: bool = False


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed report: its blocks in order, and the text with code masked.

    ``scan`` has the same length as ``text``; code blocks are blanked to
    spaces (line breaks kept) and each inline code span keeps its outer
    backticks around :data:`INLINE_FILL` letters, so regexes over ``scan``
    never see inside code yet still see that code was there.
    ``code_spans`` lists inline code spans (start, end) in order, ``hidden``
    the regions blanked entirely: code blocks, front matter, HTML comments.
    """

    text: str
    scan: str
    blocks: tuple[Block, ...]
    code_spans: tuple[tuple[int, int], ...]
    hidden: tuple[tuple[int, int], ...]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many acyclic objects.

    Extraction allocates a few objects per citation and per token and frees
    none of them until it returns; every generation-2 pass would re-walk all
    of them. Measured on 100 000 citations: 3.1 s with the collector, 2.0 s
    paused. Reference counting still frees memory; the previous state is
    restored on exit.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table")
    md.core.ruler.disable(["inline", "text_join"])
    return md


def _atx_content_end(text: str, start: int, end: int) -> int:
    """End of an ATX heading's text: before an optional closing ``#`` run and blanks."""
    e = end
    while e > start and text[e - 1] in " \t":
        e -= 1
    k = e
    while k > start and text[k - 1] == "#":
        k -= 1
    if k < e and (k == start or text[k - 1] in " \t"):
        e = k
        while e > start and text[e - 1] in " \t":
            e -= 1
    return e


def inline_code_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Code spans in ``text[start:end]`` by CommonMark's rule, in one pass.

    A backtick run opens a span closed by the next run of exactly the same
    length; a run with no such partner is literal. A backslash escapes the
    first backtick of an opening run (never of a closing one).
    """
    if text.find("`", start, end) < 0:
        return []
    runs = [m.span() for m in _BACKTICKS.finditer(text, start, end)]
    if len(runs) < 2:
        return []
    if len(runs) == 2 and text[runs[0][0] - 1 : runs[0][0]] != "\\":
        (s1, e1), (s2, e2) = runs
        return [(s1, e2)] if e1 - s1 == e2 - s2 else []
    by_len: dict[int, list[int]] = {}
    for i, (s, e) in enumerate(runs):
        by_len.setdefault(e - s, []).append(i)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        s, e = runs[i]
        k = s
        while k > start and text[k - 1] == "\\":
            k -= 1
        if (s - k) % 2:
            s += 1
        same = by_len.get(e - s)
        if same is not None:
            j = bisect_right(same, i)
            if j < len(same):
                close = same[j]
                spans.append((s, runs[close][1]))
                i = close + 1
                continue
        i += 1
    return spans


def _leaf_blocks(text: str, starts: list[int]) -> list[Leaf]:
    """(kind, first line, end line exclusive, quoted, markup) for each leaf block.

    YAML front matter (``---`` ... ``---`` at the very top) is metadata, not
    prose: it becomes one hidden block, like code, and the rest is parsed
    as if those lines were blank.
    """
    front = _FRONT_MATTER.match(text)
    if front is None:
        head: list[Leaf] = []
    else:
        lines = text.count("\n", 0, front.end()) + (not front.group().endswith("\n"))
        head = [("code", 0, lines, False, "")]
        text = _NOT_NEWLINE.sub(" ", front.group()) + text[front.end() :]
    leaves = simple_leaves(text, starts)
    return head + (leaves if leaves is not None else _markdown_it_leaves(text, starts))


def _markdown_it_leaves(text: str, starts: list[int]) -> list[Leaf]:
    leaves: list[Leaf] = []
    depth = 0
    for tok in _parser().parse(text):
        kind = tok.type
        if kind == "blockquote_open":
            depth += 1
        elif kind == "blockquote_close":
            depth -= 1
        elif tok.map is None:
            continue
        elif kind in ("paragraph_open", "heading_open", "html_block", "hr"):
            name: BlockKind = {
                "paragraph_open": "paragraph",
                "heading_open": "heading",
                "html_block": "html",
                "hr": "rule",
            }[kind]  # type: ignore[assignment]
            leaves.append((name, tok.map[0], tok.map[1], depth > 0, tok.markup))
        elif kind in ("fence", "code_block"):
            leaves.append(("code", tok.map[0], tok.map[1], depth > 0, ""))
        elif kind == "table_open":
            leaves.append(("table_row", tok.map[0], tok.map[1], depth > 0, ""))
    # Lines no leaf claimed (reference definitions, "-" alone, over-nesting).
    covered = bytearray(len(starts) + 1)
    for _, first, last, _q, _m in leaves:
        covered[first:last] = b"\x01" * (last - first)
    run_start = -1
    for line in range(len(starts) + 1):
        blank = (
            line >= len(starts)
            or covered[line]
            or not text[starts[line] : line_end(text, starts, line)].strip()
        )
        if blank:
            if run_start >= 0:
                leaves.append(("other", run_start, line, False, ""))
                run_start = -1
        elif run_start < 0:
            run_start = line
    leaves.sort(key=lambda leaf: leaf[1])
    return leaves


def parse_markdown(text: str) -> Document:
    """Parse ``text`` into blocks and build the masked scan text (linear time)."""
    starts = line_starts(text)
    blocks: list[Block] = []
    code_blocks: list[tuple[int, int]] = []
    index = 0
    for kind, first, last, quoted, markup in _leaf_blocks(text, starts):
        last = min(last, len(starts))
        if last <= first:
            continue
        start, end = starts[first], line_end(text, starts, last - 1)
        if kind == "code":
            code_blocks.append((start, end))
            blocks.append(Block("code", start, end, start, end, -1, start, end, quoted))
            continue
        if kind == "table_row":
            for row in range(first, last):
                r_start, r_end = starts[row], line_end(text, starts, row)
                c_start = _PREFIX.match(text, r_start, r_end).end()  # type: ignore[union-attr]
                body = row >= first + 2
                blocks.append(
                    Block(kind, r_start, r_end, c_start, r_end, index, start, end, quoted, body)
                )
            index += 1
            continue
        c_start = _PREFIX.match(text, start, end).end()  # type: ignore[union-attr]
        c_end = end
        if kind == "heading":
            if markup in ("=", "-"):  # setext: the last line is the underline
                c_end = line_end(text, starts, last - 2) if last - first >= 2 else end
            else:
                atx = _ATX_OPEN.match(text, c_start, end)
                c_start = atx.end() if atx else c_start
                c_end = _atx_content_end(text, c_start, end)
        counted = kind in ("heading", "paragraph", "html") or (
            kind == "other" and _ALNUM.search(text, start, end) is not None
        )
        claimable = kind in ("paragraph", "other")
        idx = index if counted else -1
        index += counted
        blocks.append(Block(kind, start, end, c_start, c_end, idx, start, end, quoted, claimable))
    spans: list[tuple[int, int]] = []
    hidden = list(code_blocks)
    for block in blocks:
        if block.kind in ("code", "rule"):
            continue
        pos = block.start
        for c_start, c_end in html_comments(text, block.start, block.end):
            spans.extend(inline_code_spans(text, pos, c_start))
            hidden.append((c_start, c_end))
            pos = c_end
        spans.extend(inline_code_spans(text, pos, block.end))
    hidden.sort()
    return Document(
        text, _mask(text, hidden, spans, True), tuple(blocks), tuple(spans), tuple(hidden)
    )


def html_comments(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``<!-- ... -->`` comments in ``text[start:end]``: invisible when rendered, so never cited."""
    found: list[tuple[int, int]] = []
    pos = start
    while True:
        s = text.find("<!--", pos, end)
        if s < 0:
            return found
        e = text.find("-->", s + 4, end)
        if e < 0:
            return found
        found.append((s, e + 3))
        pos = e + 3


def _mask(
    text: str,
    hidden: list[tuple[int, int]],
    spans: list[tuple[int, int]],
    keep_ticks: bool,
) -> str:
    """Blank hidden regions (line breaks kept) and inline spans; same length as ``text``."""
    regions = sorted([(s, e, True) for s, e in hidden] + [(s, e, False) for s, e in spans])
    out: list[str] = []
    pos = 0
    for s, e, is_block in regions:
        out.append(text[pos:s])
        if is_block or not keep_ticks:
            out.append(_NOT_NEWLINE.sub(" ", text[s:e]))
        else:
            ticks = _run_len(text, s)
            out.append("`" * ticks + INLINE_FILL * (e - s - 2 * ticks) + "`" * ticks)
        pos = e
    out.append(text[pos:])
    return "".join(out)


def _run_len(text: str, s: int) -> int:
    n = 0
    while s + n < len(text) and text[s + n] == "`":
        n += 1
    return n


def mask_code(text: str) -> str:
    """``text`` with code blocks, inline code spans, HTML comments and front matter blanked.

    The result has the same length and the same line breaks, so offsets found
    in it are offsets in ``text``; use it to scan prose without matching code.
    """
    doc = parse_markdown(text)
    return _mask(text, list(doc.hidden), list(doc.code_spans), False)
