"""Cutting sources into chunks with provenance: sentences of prose, definitions of code.

README "`citecal chunks`" describes the chunk ids.

Prose (Markdown, plain text) is cut with citecal's own sentence rules
(:func:`citecal.extract.sentence_blocks`, the ones claims are read with), so a
file name or ``e.g.`` never ends a chunk; in Markdown a heading, code block,
table row or rule is one chunk. Code is cut by the tree-sitter symbol index
(:mod:`citecal.source`): each outermost function, class, struct, ... is a
chunk, a definition longer than ``max_lines`` that holds others is cut into
its header and its members, and the code between definitions forms chunks of
its own. Languages without a parser, or files without definitions, are cut at
blank lines.

Chunks partition the source: each chunk's ``text`` runs up to where the next
chunk's content starts, so ``"".join(c.text for c in chunks)`` is the source,
character for character (the property test in ``tests/chunks`` holds this).
Indexes are the chunks' positions, so no two chunks of a source share one.
"""

from __future__ import annotations

import itertools
import os
import posixpath
import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Literal, NamedTuple

from citecal._io import read_text_file
from citecal.chunks._models import Chunk, ChunkKind
from citecal.errors import InputError
from citecal.extract import sentence_blocks
from citecal.source import Definition, SymbolIndex, build_symbol_index, language_for_path
from citecal.source._paths import git_metadata_error, inside_git_dir, is_within, real_root

SourceKind = Literal["markdown", "text", "code"]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".mkd", ".mdx"})
TEXT_SUFFIXES = frozenset({".txt", ".text", ".rst", ".vtt", ".srt", ".adoc", ""})
CHUNKED_KINDS = frozenset(
    {"class", "function", "method", "struct", "interface", "trait", "enum", "module"}
)
"""Definition kinds that make a chunk (variables, fields, constants stay in the code around)."""

MAX_DEFINITION_LINES = 60
"""A definition longer than this that holds other definitions is cut into its members."""

_BLOCK_KIND: dict[str, ChunkKind] = {
    "heading": "heading",
    "code": "code_block",
    "table_row": "table_row",
    "rule": "rule",
}
_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv"})


def source_kind(path: str) -> SourceKind:
    """How a file is chunked, from its name: Markdown, plain text, or code."""
    suffix = posixpath.splitext(path.lower())[1]
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in TEXT_SUFFIXES or language_for_path(path) in (None, "markdown", "rst"):
        return "text"
    return "code"


class _Piece(NamedTuple):
    start: int  # content offsets
    end: int
    kind: ChunkKind
    name: str | None


class _Lines:
    """Line numbers of offsets: lines end at ``\\n`` (as in :mod:`citecal.source`)."""

    def __init__(self, text: str) -> None:
        self.breaks = [m.start() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect_left(self.breaks, offset) + 1


def _prose_pieces(text: str, markdown: bool) -> list[_Piece]:
    return [
        _Piece(s, e, _BLOCK_KIND.get(kind, "sentence"), None)
        for s, e, kind in sentence_blocks(text, markdown=markdown)
    ]


def _line_partition(
    lo: int, hi: int, defs: Sequence[Definition], max_lines: int
) -> list[tuple[int, int, ChunkKind, str | None]]:
    """Lines ``lo..hi`` cut into definitions and the code between them (module docstring)."""
    outer: list[Definition] = []
    for d in sorted(defs, key=lambda d: (d.start_line, -d.end_line)):
        if not outer or d.start_line > outer[-1].end_line:
            outer.append(d)
    pieces: list[tuple[int, int, ChunkKind, str | None]] = []
    pos = lo
    for d in outer:
        s, e = max(d.start_line, pos), min(d.end_line, hi)
        if s > e:
            continue
        if s > pos:
            pieces.append((pos, s - 1, "code", None))
        inner = [
            c
            for c in defs
            if s <= c.start_line
            and c.end_line <= e
            and (c.start_line, c.end_line) != (d.start_line, d.end_line)
        ]
        if inner and e - s + 1 > max_lines:
            members = _line_partition(s, e, inner, max_lines)
            first = members[0]
            if first[2] == "code":  # the header before the first member
                members[0] = (first[0], first[1], "definition", d.name)
            pieces.extend(members)
        else:
            pieces.append((s, e, "definition", d.name))
        pos = e + 1
    if pos <= hi:
        pieces.append((pos, hi, "code", None))
    return pieces


def _blank_split(lines: Sequence[str], lo: int, hi: int) -> list[tuple[int, int]]:
    """Lines ``lo..hi`` cut at blank lines (code with no definitions to cut at)."""
    out: list[tuple[int, int]] = []
    start = None
    for n in range(lo, hi + 1):
        blank = not lines[n - 1].strip()
        if not blank and start is None:
            start = n
        elif blank and start is not None:
            out.append((start, n - 1))
            start = None
    if start is not None:
        out.append((start, hi))
    return out


def _attach_decorators(
    pieces: list[tuple[int, int, ChunkKind, str | None]], lines: Sequence[str]
) -> list[tuple[int, int, ChunkKind, str | None]]:
    """Decorator lines (``@dataclass``) belong to the definition below them.

    The symbol index starts a definition at its ``def``/``class`` line, so the
    code between definitions would otherwise hold its decorators.
    """
    out: list[tuple[int, int, ChunkKind, str | None]] = []
    for piece in pieces:
        if out and piece[2] == "definition" and out[-1][2] == "code":
            first, last = out[-1][0], out[-1][1]
            body = [lines[n - 1].strip() for n in range(first, last + 1)]
            tail = len(body)
            while tail and (body[tail - 1].startswith("@") or not body[tail - 1]):
                tail -= 1
            if tail < len(body) and any(b.startswith("@") for b in body[tail:]):
                start = first + tail
                while not lines[start - 1].strip():  # blank lines stay in the code above
                    start += 1
                if tail:
                    out[-1] = (first, start - 1, "code", None)
                else:
                    out.pop()
                piece = (start, piece[1], piece[2], piece[3])
        out.append(piece)
    return out


def _line_pieces(
    lines: Sequence[str], definitions: Sequence[Definition], max_lines: int
) -> list[tuple[int, int, ChunkKind, str | None]]:
    """The module docstring's cut of code, as (first line, last line, kind, name)."""
    defs = [d for d in definitions if d.kind in CHUNKED_KINDS]
    if defs:
        by_lines = _line_partition(1, len(lines), defs, max_lines)
    else:
        by_lines = [(a, b, "code", None) for a, b in _blank_split(lines, 1, len(lines))]
    return _attach_decorators(by_lines, lines)


def code_line_pieces(
    lines: Sequence[str], index: SymbolIndex, window_lines: int = MAX_DEFINITION_LINES
) -> list[tuple[int, int, Literal["definition", "code"], str | None]]:
    """Code cut as ``citecal chunks`` cuts it, in lines, for indexes over many files.

    The correction loop's repository index (``citecal.correct``) uses this so
    that a chunk there is a chunk here. Blank lines at either end are dropped,
    and code outside definitions longer than ``window_lines`` is cut at blank
    lines into windows of at most that many lines (a hard cut when a stretch
    has no blank line), so no chunk is a whole module.
    """
    out: list[tuple[int, int, Literal["definition", "code"], str | None]] = []
    for first, last, kind, name in _line_pieces(lines, index.definitions, window_lines):
        while first <= last and not lines[first - 1].strip():
            first += 1
        while last >= first and not lines[last - 1].strip():
            last -= 1
        if first > last:
            continue
        if kind == "definition":
            out.append((first, last, "definition", name))
            continue
        if last - first + 1 <= window_lines:
            out.append((first, last, "code", None))
            continue
        window: tuple[int, int] | None = None
        for a, b in _blank_split(lines, first, last):
            if window is not None and b - window[0] + 1 <= window_lines:
                window = (window[0], b)
                continue
            if window is not None:
                out.append((window[0], window[1], "code", None))
            while b - a + 1 > window_lines:  # a block without blank lines: hard cuts
                out.append((a, a + window_lines - 1, "code", None))
                a += window_lines
            window = (a, b)
        if window is not None:
            out.append((window[0], window[1], "code", None))
    return out


def _code_pieces(text: str, language: str | None, max_lines: int) -> list[_Piece]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    index = build_symbol_index(text, language)
    by_lines = _line_pieces(lines, index.definitions, max_lines)
    pieces: list[_Piece] = []
    for first, last, kind, name in by_lines:
        while first <= last and not lines[first - 1].strip():
            first += 1
        while last >= first and not lines[last - 1].strip():
            last -= 1
        if first > last:
            continue  # blank lines only: they join the chunk before
        end = starts[last - 1] + len(lines[last - 1].rstrip())
        content_start = starts[first - 1] + len(lines[first - 1]) - len(lines[first - 1].lstrip())
        pieces.append(_Piece(content_start, end, kind, name))
    return pieces


def chunk_text(
    text: str,
    source: str,
    *,
    kind: SourceKind | None = None,
    language: str | None = None,
    max_lines: int = MAX_DEFINITION_LINES,
) -> list[Chunk]:
    """Cut ``text`` into chunks with provenance ids, positions and ±1 neighbours.

    Args:
        text: the whole source.
        source: its name in ids (``doc.md`` gives ``doc.md:S:3``).
        kind: Markdown, plain text or code; guessed from ``source`` when omitted.
        language: tree-sitter language for code (guessed from ``source``).
        max_lines: definitions longer than this are cut into their members.
    """
    kind = kind or source_kind(source)
    if kind == "code":
        pieces = _code_pieces(text, language or language_for_path(source), max_lines)
    else:
        pieces = _prose_pieces(text, markdown=kind == "markdown")
    if not pieces:
        if not text:
            return []
        pieces = [_Piece(0, 0, "blank", None)]
    lines = _Lines(text)
    chunks: list[Chunk] = []
    for i, p in enumerate(pieces):
        start_line = lines.line_of(p.start)
        end_line = lines.line_of(max(p.start, p.end - 1))
        if kind == "code" and p.kind != "blank":
            cid = (
                f"{source}:{start_line}"
                if start_line == end_line
                else f"{source}:{start_line}-{end_line}"
            )
        else:
            cid = f"{source}:S:{i}"
        cut_from = 0 if i == 0 else p.start
        cut_to = pieces[i + 1].start if i + 1 < len(pieces) else len(text)
        chunks.append(
            Chunk(
                id=cid,
                source=source,
                index=i,
                kind=p.kind,
                name=p.name,
                text=text[cut_from:cut_to],
                content=text[p.start : p.end],
                start=p.start,
                end=p.end,
                start_line=start_line,
                end_line=end_line,
            )
        )
    for before, after in itertools.pairwise(chunks):
        before.next_id, before.next = after.id, after.content
        after.previous_id, after.previous = before.id, before.content
    return chunks


def chunk_file(path: Path | str, source: str | None = None, **options: object) -> list[Chunk]:
    """Chunks of a UTF-8 file (``source`` defaults to the path as given)."""
    p = Path(path)
    text = read_text_file(p, "source file")
    name = source if source is not None else p.as_posix().removeprefix("./")
    return chunk_text(text, name, **options)  # type: ignore[arg-type]


def iter_source_files(paths: Iterable[Path]) -> Iterator[tuple[Path, str]]:
    """Files to chunk: each file as given, and each directory's text and code files.

    Directories are walked in sorted order, skipping hidden entries, VCS and
    virtual-environment folders, and files whose names say neither prose nor
    a language. A symlink that leads out of the walked directory, or into a git
    directory, is not one of its files and is skipped (README "Security"); a
    FIFO or device is refused when read (:func:`citecal._io.read_text_file`),
    so a walk never blocks. Yields (path, source name).

    Raises:
        InputError: a path that does not exist, or a file inside a git directory.
    """
    for path in paths:
        if path.is_dir():
            root = real_root(path)
            for top, dirs, files in os.walk(path):
                dirs[:] = sorted(
                    d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith(".")
                )
                for name in sorted(files):
                    if name.startswith("."):
                        continue
                    full = Path(top) / name
                    real = os.path.realpath(full)
                    if not is_within(root, real) or inside_git_dir(root, real):
                        continue  # a link out of the directory, or into .git/
                    rel = full.as_posix().removeprefix("./")
                    suffix = posixpath.splitext(name.lower())[1]
                    known = suffix in MARKDOWN_SUFFIXES or (suffix in TEXT_SUFFIXES and suffix)
                    if known or language_for_path(rel) not in (None, "markdown", "rst"):
                        yield full, rel
        elif path.exists():
            if inside_git_dir(os.sep, os.path.realpath(path)):
                raise InputError(str(git_metadata_error(str(path))))
            yield path, path.as_posix().removeprefix("./")
        else:
            raise InputError(f"source file not found: {path}")
