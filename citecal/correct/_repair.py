"""Repair before relocating: the nearby ranges a failed citation most likely meant.

README "`citecal correct`" (repair). A citation that fails is most often a
slip, not a wrong place: a reversed range (``[f:223-204]``), a zero or
negative start, an end past the last line, a range a few lines off or too
wide. The lines its author meant are next to the ones written, so the loop
tries these first, verifies them exactly as it verifies any candidate, and
searches the repository only when none of them holds the claim's support.

:func:`repair_candidates` is pure: it looks at the citation, the file's
length and its definitions, and returns the ranges to try, most faithful to
what was written first:

1. the range with its slips fixed: ends swapped, start clamped to line 1,
   end clamped to the last line (kept as written when nothing needs fixing:
   it already failed);
2. the function or method enclosing the fixed range (the method around a
   few cited lines of it);
3. the definitions the fixed range holds, largest first (a range too wide
   cut down to the definition it is about);
4. the definitions right before and right after it (a few lines off, in a
   file whose definitions are one after the other);
5. the type (class, struct, impl block...) enclosing it, when short;
6. the same range shifted by half its length either way (a few lines off
   inside one long stretch of code).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from citecal.models import Citation
from citecal.source import Definition

MAX_REPAIR_LINES = 120
"""A definition longer than this is not a repair of a short citation (a whole class)."""
ADJACENT_GAP = 8
"""A definition starting or ending within this many lines of the range is adjacent."""
MAX_CANDIDATES = 8
TYPE_KINDS = frozenset({"class", "struct", "enum", "interface", "trait", "impl", "module", "type"})

RepairKind = str
"""``swap``, ``clamp``, ``enclosing``, ``inner``, ``adjacent``, ``shift``."""


@dataclass(frozen=True, slots=True)
class Repair:
    """One nearby range to try, and how it was derived from the citation."""

    location: Citation
    how: RepairKind


def fixed_range(citation: Citation, line_count: int) -> tuple[int, int, list[str]] | None:
    """The citation's lines with reversed ends swapped and ends clamped into the file.

    Returns ``(start, end, fixes)``, or None when nothing of the range is in the file.
    """
    lo, hi = citation.start_line, citation.end_line
    fixes: list[str] = []
    if lo > hi:
        lo, hi = hi, lo
        fixes.append("swap")
    if lo < 1:
        lo = 1
        fixes.append("clamp")
    if hi > line_count:
        hi = line_count
        fixes.append("clamp")
    if lo > hi or hi < 1:
        return None
    return lo, hi, fixes


def repair_candidates(
    citation: Citation,
    line_count: int,
    definitions: Sequence[Definition],
    named: frozenset[str] = frozenset(),
) -> list[Repair]:
    """The ranges to try for ``citation`` before a search, in the order of the module doc.

    ``named``: lower-cased names the claim gives; among inner and adjacent
    definitions, those it names come first (a range too wide is cut down to the
    definition the claim is about, not to the biggest one).
    """
    fixed = fixed_range(citation, line_count)
    if fixed is None:
        return []
    lo, hi, fixes = fixed
    path = citation.file_path
    out: list[Repair] = []
    seen: set[tuple[int, int]] = set()

    def add(a: int, b: int, how: str) -> None:
        a, b = max(1, a), min(line_count, b)
        if a <= b and (a, b) not in seen:
            seen.add((a, b))
            out.append(Repair(Citation(path, a, b), how))

    if fixes:
        add(lo, hi, fixes[0])
    else:
        seen.add((lo, hi))  # as written: it already failed
    short = [d for d in definitions if d.end_line - d.start_line < MAX_REPAIR_LINES]
    enclosing = [d for d in short if d.start_line <= lo and hi <= d.end_line]
    functions = [d for d in enclosing if d.kind not in TYPE_KINDS]
    if functions:
        d = min(functions, key=lambda d: d.end_line - d.start_line)
        add(d.start_line, d.end_line, "enclosing")
    inner = [
        d
        for d in short
        if lo <= d.start_line and d.end_line <= hi and (d.start_line, d.end_line) != (lo, hi)
    ]
    # Named ones, then outermost first: the definitions the range was about, not their fields.
    inner.sort(
        key=lambda d: (d.name.lower() not in named, -(d.end_line - d.start_line), d.start_line)
    )
    for d in inner[:3]:
        add(d.start_line, d.end_line, "inner")
    before = [d for d in short if d.end_line < lo and lo - d.end_line <= ADJACENT_GAP]
    after = [d for d in short if d.start_line > hi and d.start_line - hi <= ADJACENT_GAP]
    nearest = []
    if before:
        nearest.append(max(before, key=lambda d: (d.end_line, -d.start_line)))
    if after:
        nearest.append(min(after, key=lambda d: (d.start_line, -d.end_line)))
    nearest.sort(key=lambda d: d.name.lower() not in named)  # stable: before, then after
    for d in nearest:
        add(d.start_line, d.end_line, "adjacent")
    types = [d for d in enclosing if d.kind in TYPE_KINDS]
    if types:
        d = min(types, key=lambda d: d.end_line - d.start_line)
        add(d.start_line, d.end_line, "enclosing")
    half = max(1, (hi - lo + 1) // 2)
    add(lo - half, hi - half, "shift")
    add(lo + half, hi + half, "shift")
    return out[:MAX_CANDIDATES]


__all__ = ["MAX_REPAIR_LINES", "Repair", "fixed_range", "repair_candidates"]
