"""Line offsets and leaf-block records shared by the block parsers.

CRLF, lone CR and LF all end a line, as in markdown-it, so line numbers
from its token maps index :func:`line_starts` directly.
"""

from __future__ import annotations

import re
from typing import Literal

BlockKind = Literal["heading", "paragraph", "table_row", "html", "code", "rule", "other"]
"""``other``: lines markdown-it put in no leaf block (link reference
definitions, marker-only list items, over-nested quotes); scanned as prose so
that no citation is silently dropped."""

Leaf = tuple[BlockKind, int, int, bool, str]
"""(kind, first line, end line exclusive, inside a blockquote, markup)."""

_NEWLINE = re.compile(r"\r\n|\r|\n")


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts; CRLF, CR and LF all end a line (as in markdown-it)."""
    return [0, *(m.end() for m in _NEWLINE.finditer(text))]


def line_end(text: str, starts: list[int], line: int) -> int:
    """Offset just past the last character of ``line`` (its line break excluded)."""
    if line + 1 >= len(starts):
        return len(text)
    nxt = starts[line + 1]
    return nxt - 2 if text.startswith("\r\n", nxt - 2) else nxt - 1
