"""A fast path for reports of plain structure: paragraphs, ``#`` headings, flat lists, fences.

markdown-it costs about 15 µs per block in pure Python, the largest single
cost of extracting a report of a hundred thousand one-line claims or list
items. Most generated reports use only paragraphs, ``#`` headings,
single-level lists and unindented code fences; for those the CommonMark
block structure can be read line by line. Everything else (indentation,
quotes, HTML, tables,
rules, setext underlines, reference definitions, nested list markers, an
ordered item that might be a lazy continuation) makes :func:`simple_leaves`
return None, and the caller uses markdown-it. A property test checks that
whenever this returns leaves they are exactly markdown-it's.
"""

from __future__ import annotations

import re

from citecal.extract._lines import Leaf, line_end

_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*$")
_HEADING = re.compile(r"(#{1,6})(?:[ \t]|$)")
_BULLET = re.compile(r"[-+*] {1,4}(?=\S)")
_ORDERED = re.compile(r"(\d{1,9})([.)]) {1,4}(?=\S)")
# Lines (and list item contents) that could open any other block.
_OTHER = re.compile(
    r"[ \t]|>|```|~~~|<|\[[^\]]*\]:"
    r"|([-*_])(?:[ \t]*\1){2,}[ \t]*$"  # thematic break
    r"|=+[ \t]*$|-+[ \t]*$"  # setext underline
    r"|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)"  # list markers not handled above
    r"|#{1,6}(?:[ \t]|$)"  # a heading inside a list item
)


def simple_leaves(text: str, starts: list[int]) -> list[Leaf] | None:
    """Leaf blocks of ``text`` if its structure is plain (see module), else None."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return None  # lone CRs: leave to the full parser
    leaves: list[Leaf] = []
    open_from = -1  # first line of the open paragraph, -1 when none is open
    prev = "blank"  # what the previous line was: blank, heading, plain, bullet, ordered
    prev_delim = ""
    fence = ""  # the open code fence's marker run, "" outside code
    fence_from = -1
    for i, start in enumerate(starts):
        line = text[start : line_end(text, starts, i)]
        if fence:
            close = _FENCE_CLOSE.match(line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                leaves.append(("code", fence_from, i + 1, False, ""))
                fence, prev = "", "blank"
            continue
        if "|" in line:
            return None  # maybe a table row
        opening = _FENCE_OPEN.match(line)
        if opening:
            if opening.group(1)[0] == "`" and "`" in opening.group(2):
                return None  # not a fence: inline code at the start of a line
            if open_from >= 0:
                leaves.append(("paragraph", open_from, i, False, ""))
                open_from = -1
            fence, fence_from = opening.group(1), i
            continue
        if not line.strip(" \t"):
            if open_from >= 0:
                leaves.append(("paragraph", open_from, i, False, ""))
                open_from = -1
            prev = "blank"
            continue
        heading = _HEADING.match(line)
        if heading:
            if open_from >= 0:
                leaves.append(("paragraph", open_from, i, False, ""))
                open_from = -1
            leaves.append(("heading", i, i + 1, False, heading.group(1)))
            prev = "heading"
            continue
        bullet = _BULLET.match(line)
        ordered = None if bullet else _ORDERED.match(line)
        item = bullet or ordered
        if item is not None:
            if _OTHER.match(line, item.end()):
                return None  # the item opens a nested block
            if ordered is not None and not (
                prev in ("blank", "heading")
                or (prev == "ordered" and prev_delim == ordered.group(2))
                or int(ordered.group(1)) == 1
            ):
                return None  # maybe a lazy continuation line: let CommonMark decide
            if open_from >= 0:
                leaves.append(("paragraph", open_from, i, False, ""))
            open_from = i
            prev = "bullet" if bullet else "ordered"
            prev_delim = ordered.group(2) if ordered else ""
            continue
        if _OTHER.match(line):
            return None
        if open_from < 0:
            open_from = i
        prev = "plain"
    if open_from >= 0:
        leaves.append(("paragraph", open_from, len(starts), False, ""))
    if fence:  # an unclosed fence runs to the last line markdown-it counts: a final
        # segment of only blanks (or nothing, after a final break) is not a line to it
        last = len(starts) - (not text[starts[-1] :].strip(" \t"))
        leaves.append(("code", fence_from, last, False, ""))
    return leaves
