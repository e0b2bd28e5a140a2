"""Reading the report ``correct`` and ``rebase`` rewrite, keeping what its first bytes were.

Both commands write the report back with only citations changed, so a UTF-8
byte-order mark it started with is kept (README "`citecal correct`"). Shared by
the two commands, it lives here rather than in either (docs: architecture).
"""

from __future__ import annotations

import codecs
from pathlib import Path

from citecal._io import decode_text, read_regular_bytes


def read_report(path: Path) -> tuple[str, str]:
    """The report's text and the BOM it started with ("" if none), so output keeps it.

    Raises:
        InputError: missing, not a regular file (README "Security"), not UTF-8.
    """
    data = read_regular_bytes(path, "report")
    bom = codecs.BOM_UTF8.decode("utf-8") if data.startswith(codecs.BOM_UTF8) else ""
    return decode_text(data, path, "report"), bom


__all__ = ["read_report"]
