"""Sentence and definition chunks with provenance (README "`citecal chunks`"): ``citecal chunks``.

A chunk is a sentence of prose or a definition of code, with an id that a
report can cite (``[doc.md:S:3]``, ``[src/a.py:10-25]``), its position and its
neighbours. Chunks partition their source exactly, so they can be joined back.
"""

from citecal.chunks._evaluate import AttributionScore, ExpectedCitation, score_attribution
from citecal.chunks._models import Chunk, ChunkKind, ChunksResult
from citecal.chunks._split import (
    MAX_DEFINITION_LINES,
    SourceKind,
    chunk_file,
    chunk_text,
    code_line_pieces,
    iter_source_files,
    source_kind,
)

__all__ = [
    "MAX_DEFINITION_LINES",
    "AttributionScore",
    "Chunk",
    "ChunkKind",
    "ChunksResult",
    "ExpectedCitation",
    "SourceKind",
    "chunk_file",
    "chunk_text",
    "code_line_pieces",
    "iter_source_files",
    "score_attribution",
    "source_kind",
]
