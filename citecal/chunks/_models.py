"""What ``citecal chunks --format json`` writes (schema_version 1, README "citecal chunks")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citecal.models import SCHEMA_VERSION

ChunkKind = Literal[
    "sentence", "heading", "code_block", "table_row", "rule", "definition", "code", "blank"
]
"""What a chunk is: a sentence of prose (or a heading, code block, table row or
rule of a Markdown document, which are one chunk each), a definition of a
source file (function, method, class, ...), the code between definitions, or a
document with no text at all."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Chunk(_Model):
    """One sentence or definition of a source, with its provenance (README "`citecal chunks`").

    ``text`` is the exact slice of the source, trailing whitespace included,
    so joining a source's chunks in order gives the source back unchanged;
    ``content`` is that text without surrounding whitespace, and the line and
    offset fields locate the content.
    """

    id: str = Field(
        description="Provenance id: '<source>:S:<index>' for prose, '<source>:<start>-<end>' "
        "(a citecal line citation) for code."
    )
    source: str = Field(description="The source file, as given or relative to the directory.")
    index: int = Field(description="0-based position among the source's chunks (unique).")
    kind: ChunkKind
    name: str | None = Field(None, description="The definition's name (code).")
    text: str = Field(description="Exact slice of the source (whitespace after it included).")
    content: str = Field(description="The text without surrounding whitespace.")
    start: int = Field(description="Character offset of the content in the source.")
    end: int = Field(description="Offset just past the content.")
    start_line: int = Field(description="1-based line where the content starts.")
    end_line: int = Field(description="1-based line where the content ends (inclusive).")
    previous_id: str | None = Field(None, description="Id of the chunk before (±1 context).")
    next_id: str | None = Field(None, description="Id of the chunk after.")
    previous: str | None = Field(None, description="Content of the chunk before.")
    next: str | None = Field(None, description="Content of the chunk after.")


class ChunksResult(_Model):
    """Every chunk of every source given to ``citecal chunks``."""

    schema_version: int = SCHEMA_VERSION
    sources: list[str] = Field(description="The chunked files, in order.")
    chunks: list[Chunk]
