"""How big a ground-truth package is: the figures by package size (issue 31).

Range drift and misremembered claims grow with what a writer has to hold in
memory, so ``bench groundtruth`` reports its figures for small, medium and
large packages apart (datasets/groundtruth/README.md). Size is the number of
lines of code in the pinned sources (documents and data files left out).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Literal

from citecal.source import is_code_language, language_for_path

Size = Literal["small", "medium", "large"]
SMALL_LINES = 5_000
"""Fewer lines of code than this: a package one can read in one sitting."""
LARGE_LINES = 20_000
"""At least this many: a multi-directory package no report covers whole."""


def size_of(code_lines: int) -> Size:
    if code_lines < SMALL_LINES:
        return "small"
    return "medium" if code_lines < LARGE_LINES else "large"


@cache
def code_lines(sources: Path) -> int:
    """Lines of code under ``sources`` (files whose name says a programming language)."""
    total = 0
    for root, dirs, files in os.walk(sources):
        dirs.sort()
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path) or not is_code_language(language_for_path(name)):
                continue
            with open(path, "rb") as fh:
                total += sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 16), b""))
    return total


def package_size(sources: Path) -> Size:
    """``small``, ``medium`` or ``large`` by the lines of code of a fetched package."""
    return size_of(code_lines(sources))


__all__ = ["LARGE_LINES", "SMALL_LINES", "Size", "code_lines", "package_size", "size_of"]
