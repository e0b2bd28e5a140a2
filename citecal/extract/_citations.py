"""Citation syntax: which ``[...]`` brackets are citations, and what they cite.

Accepted forms (README "`citecal eval`" plus what LLM writers actually produce)::

    [src/auth.py:10-25]        range
    [src/auth.py:42]           single line (start == end)
    [a.py:1-5, b.py:9]         several in one bracket, "," or ";" between
    [a.py:10–25] [a.py:10—25]  en/em dash (and other Unicode hyphens)
    [a.py:L10-L25] [a.py:L10]  GitHub-style "L" line prefixes
    [./a.py:3]                 a leading "./" is dropped

Location specifiers (README "Excerpt citations")::

    [[ctx-001]]                an item of the context directory, whole
    [[ctx-001:L42]] [[ctx-001:L42-67]]   lines of an item
    [[ctx-001:p12]]            page 12 (``excerpt.page_lines`` lines a page)
    [[ctx-001:sec-intro]]      a section: heading, or a definition in code
    [[talk:2:15]]              a timestamp in a .vtt/.srt transcript
    [[ctx-001:general]]        the whole item
    [doc.md:p12] [doc.md:sec-intro] [talk.vtt:2:15] [doc.md:general]
    [doc.md:S:3]               sentence chunk 3 (``citecal chunks``)

Inside ``[[...]]`` an item is an id or a path (no blanks, ``:``, brackets);
an unknown specifier is still a citation, and resolution says what is wrong.
In single brackets the path must contain ``.`` or ``/`` (``[note:general]``
stays prose), and these forms are tried before line numbers, so
``[talk.vtt:2:15]`` is a time, not line 15 of ``talk.vtt:2``.

A path is one run of non-blank characters without ``[ ] , ;`` or
backticks (so prose in brackets, ``[see the note: 10]``, is never read as a
path). Paths are kept as written otherwise (Windows separators, ``@``, Unicode,
even ``..``): deciding whether a path is acceptable is validation's job, and
it can only explain a problem it gets to see. Line numbers are kept as
written too (0, negative, end before start), so ``[a.py:-1-2]`` is a citation
that validation reports as ``invalid_range`` instead of a sentence that
silently has no citation. A number of more than 18 digits is stored as
:data:`~citecal.models.LINE_NUMBER_OVERFLOW` (no file has that many lines,
and the exact value would overflow int64 columns downstream); validation
reports it as too large.

Not citations: brackets without ``path:line``, markdown links ``[t](u)``,
reference links ``[t][r]``, footnotes ``[^1]``, task boxes, escaped ``\\[``,
URLs (``[http://host:80]``), all-digit "paths" (``[10:30]`` is a time), and
anything inside code (the caller scans masked text).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from citecal.models import LINE_NUMBER_OVERFLOW, Citation

_BRACKET = re.compile(r"\[([^\[\]]*)\]")
_SEPARATOR = re.compile(r"[,;]")
_ITEM = re.compile(
    r"\s*(?P<path>\S+?):[Ll]?(?P<start>-?[0-9]+)"
    r"(?:[ \t]*[-‐‑‒–—−][ \t]*[Ll]?(?P<end>-?[0-9]+))?\s*"
)


def line_number(digits: str) -> int:
    """The written number (ASCII digits, an optional ``-``), or LINE_NUMBER_OVERFLOW when it has
    more than 18 digits: the one reading of a line number (citations, label sets)."""
    if len(digits.lstrip("-")) > 18:
        return -LINE_NUMBER_OVERFLOW if digits.startswith("-") else LINE_NUMBER_OVERFLOW
    return int(digits)


_SPEC = r"p[0-9]{1,9}|sec-[\w.\-]+|[0-9]{1,3}:[0-9]{2}(?::[0-9]{2})?|general|S:[0-9]{1,9}"
_LOCATED = re.compile(r"\s*(?P<path>[^\s:\[\],;`]+):(?P<spec>" + _SPEC + r")\s*")
_ITEM_REF = re.compile(r"\s*(?P<item>[^\s:\[\],;`]+)(?::(?P<spec>[^\[\],;]+?))?\s*")
LINES_SPEC = re.compile(r"[Ll]?(?P<start>[0-9]+)(?:[ \t]*[-‐‑‒–—−][ \t]*[Ll]?(?P<end>[0-9]+))?")
"""Lines inside ``[[item:...]]``: ``L42``, ``L42-67``, ``42-67``, ``L42-L67``."""


class CitationGroup(NamedTuple):
    """One citation bracket: its offsets in the report and the citations inside.

    ``double`` marks a ``[[...]]`` item bracket (its offsets include both
    pairs of brackets).
    """

    start: int
    end: int
    citations: tuple[Citation, ...]
    double: bool = False


def parse_item_group(inner: str) -> list[Citation] | None:
    """Item citations in the contents of a ``[[...]]`` bracket, or None if it is not one."""
    citations: list[Citation] = []
    for part in _SEPARATOR.split(inner) if ("," in inner or ";" in inner) else (inner,):
        m = _ITEM_REF.fullmatch(part)
        if m is None:
            if part.strip():
                return None
            continue
        item, spec = m.group("item", "spec")
        if "://" in part:
            return None  # a URL
        if item[:2] == "./":
            item = item[2:]
        if not item or "://" in item or item[0] == "^":
            return None
        if spec is None:
            citations.append(Citation(item, 0, 0, item=item))
            continue
        spec = spec.strip()
        lines = LINES_SPEC.fullmatch(spec)
        if lines is not None:
            first = line_number(lines.group("start"))
            last = first if lines.group("end") is None else line_number(lines.group("end"))
            citations.append(Citation(item, first, last, location=spec, item=item))
        else:
            citations.append(Citation(item, 0, 0, location=spec, item=item))
    return citations or None


def _located(part: str) -> Citation | None:
    m = _LOCATED.fullmatch(part)
    if m is None:
        return None
    path, spec = m.group("path", "spec")
    if path[:2] == "./":
        path = path[2:]
    if "." not in path and "/" not in path:
        return None
    return Citation(path, 0, 0, location=spec)


def parse_citation_group(inner: str) -> list[Citation] | None:
    """Citations in the contents of one ``[...]`` bracket, or None if it is not a citation.

    Args:
        inner: the text between the brackets, e.g. ``"a.py:1-5, b.py:9"``.

    Returns:
        The citations in written order, or None when any part of the bracket
        is not a ``path:line`` reference (a bracket is all citations or none,
        so prose such as ``[see a.py:3 and more]`` is never half-read).
    """
    if ":" not in inner:
        return None
    citations: list[Citation] = []
    for part in _SEPARATOR.split(inner) if ("," in inner or ";" in inner) else (inner,):
        located = _located(part)
        if located is not None:
            citations.append(located)
            continue
        m = _ITEM.fullmatch(part)
        if m is None:
            if part.strip():
                return None
            continue
        path, start, end = m.group("path", "start", "end")
        if path[:2] == "./":
            path = path[2:]
        if not path or "://" in path or "`" in path or path[0] == "^" or path.isdigit():
            return None
        first = line_number(start)
        citations.append(Citation(path, first, first if end is None else line_number(end)))
    return citations or None


def _escaped(text: str, pos: int, floor: int) -> bool:
    k = pos
    while k > floor and text[k - 1] == "\\":
        k -= 1
    return (pos - k) % 2 == 1


def find_groups(
    scan: str, start: int, end: int, *, ref_definitions: bool = False
) -> list[CitationGroup]:
    """Citation brackets in ``scan[start:end]`` (code already masked), in order.

    Args:
        scan: the masked report text (see ``Document.scan``).
        start: first offset of the block to search.
        end: end offset of the block.
        ref_definitions: the block may hold link reference definitions
            (``[label]: url``), so a bracket followed by ``:`` is a label.
    """
    groups: list[CitationGroup] = []
    if scan.find(":", start, end) < 0 and scan.find("[[", start, end) < 0:
        return groups
    prev_end = -1
    prev_citation = False
    for m in _BRACKET.finditer(scan, start, end):
        s, e = m.span()
        if (
            s > start
            and scan[s - 1] == "["
            and scan[e : e + 1] == "]"
            and e < end
            and scan[e + 1 : e + 2] != "("
            and not _escaped(scan, s - 1, start)
        ):
            items = parse_item_group(m.group(1))
            if items is not None:  # [[item:spec]]
                groups.append(CitationGroup(s - 1, e + 1, tuple(items), double=True))
                prev_end, prev_citation = e + 1, True
                continue
        after = scan[e : e + 1] if e < end else ""
        cites = None
        if scan[s - 1 : s] != "\\" or not _escaped(scan, s, start):
            cites = parse_citation_group(m.group(1))
        is_citation = cites is not None
        if is_citation:
            if after == "(" or (ref_definitions and after == ":"):
                is_citation = False  # link text / reference definition label
            elif after == "[":
                nxt = _BRACKET.match(scan, e, end)
                if nxt is None or parse_citation_group(nxt.group(1)) is None:
                    is_citation = False  # text of a reference link [text][ref]
            if is_citation and prev_end == s and not prev_citation:
                is_citation = False  # label of a reference link [text][ref]
        if is_citation and cites is not None:
            groups.append(CitationGroup(s, e, tuple(cites)))
        prev_end, prev_citation = e, is_citation
    return groups
