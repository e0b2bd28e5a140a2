"""Resolving location specifiers to lines of a file (README "Excerpt citations").

Level 1, the item: ``[[ctx-001]]`` names a file of the context directory by
path, by file name without extension (``ctx-001.md``) or by file name; an id
that matches nothing, or several files, is an ``invalid_file`` failure.
Level 2, the location, resolved against the item's text:

==============  =========================================================
``L42-67``      lines, checked as any line citation
``p12``         page 12: lines 551-600 with ``excerpt.page_lines`` = 50
``sec-intro``   the section under the first Markdown / reStructuredText
                heading whose slug is ``intro``, starts with it, or holds it
                as a word (``Introduction``); in code, the definition named
                ``intro`` (a function, class, ...); up to the next heading of
                the same or a higher level
``2:15``        the cue of a ``.vtt`` / ``.srt`` transcript playing at
                2 min 15 s (``1:02:15`` with hours)
``S:3``         sentence chunk 3 of ``citecal chunks``
``general``     the whole item (also ``[[ctx-001]]`` without a specifier)
==============  =========================================================

A location that does not exist is an ``invalid_range`` failure with a message
naming what does exist. Parsing a file (headings, cues, chunks, definitions)
happens once per file per store.
"""

from __future__ import annotations

import posixpath
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from citecal.chunks import Chunk, chunk_text
from citecal.config import ExcerptConfig
from citecal.extract._citations import LINES_SPEC
from citecal.models import Citation, ValidationResult
from citecal.source import (
    GitMetadata,
    SourceFile,
    SourceFileError,
    SourceStore,
    build_symbol_index,
)
from citecal.verify._structural import validate_citation

_PAGE = re.compile(r"p([0-9]{1,9})")
_TIME = re.compile(r"(?:([0-9]{1,3}):)?([0-9]{1,3}):([0-9]{2})")
_SENTENCE = re.compile(r"S:([0-9]{1,9})")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_RST_ADORN = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*$")
_CUE_TIME = re.compile(
    r"((?:\d{1,3}:)?\d{1,3}:\d{2}(?:[.,]\d{1,3})?)\s*-->\s*((?:\d{1,3}:)?\d{1,3}:\d{2}(?:[.,]\d{1,3})?)"
)
_SLUG_DROP = re.compile(r"[^\w]+")
_NUMBERING = re.compile(r"^\d+(?:\.\d+)*\.?-?")
TRANSCRIPT_SUFFIXES = frozenset({".vtt", ".srt"})


@dataclass(frozen=True, slots=True)
class Heading:
    """A section heading: its text, level (1 = top) and 1-based line."""

    title: str
    level: int
    line: int


@dataclass(frozen=True, slots=True)
class Cue:
    """One transcript cue: start and end in seconds, and its lines (timing line included)."""

    start: float
    end: float
    first_line: int
    last_line: int


@dataclass
class _Parsed:
    """What has been parsed of one file, filled on first use."""

    headings: list[Heading] | None = None
    cues: list[Cue] | None = None
    chunks: list[Chunk] | None = None
    text: str | None = None


@dataclass
class LocationCache:
    """Per-store caches: item ids → paths, and parsed files."""

    ids: dict[str, list[str]] | None = None
    names: dict[str, list[str]] | None = None
    files: dict[str, _Parsed] = field(default_factory=dict)


_CACHES: weakref.WeakKeyDictionary[SourceStore, LocationCache] = weakref.WeakKeyDictionary()


def _cache(store: SourceStore) -> LocationCache:
    try:
        cache = _CACHES.get(store)
        if cache is None:
            cache = _CACHES[store] = LocationCache()
        return cache
    except TypeError:  # a store that cannot be weakly referenced: no caching across calls
        return LocationCache()


@dataclass(frozen=True, slots=True)
class Resolved:
    """A citation resolved to lines: the citation with them, and what was cited."""

    citation: Citation
    validation: ValidationResult
    description: str = ""


def whole_text(file: SourceFile, store: SourceStore) -> str:
    """The file's whole text, decoded once per store."""
    parsed = _cache(store).files.setdefault(file.path, _Parsed())
    if parsed.text is None:
        parsed.text = file.text
    return parsed.text


def slug(text: str) -> str:
    """Lower-case words joined by ``-`` (GitHub-style anchors, roughly)."""
    text = text.replace("`", "").replace("*", "").strip().lower()
    return _SLUG_DROP.sub("-", text).strip("-").replace("_", "-")


def find_item(item: str, store: SourceStore) -> str:
    """The path of item ``item`` in ``store`` (module docstring, level 1).

    Raises:
        LookupError: no file, or several files, answer to the id (the message says which).
    """
    try:
        store.read(item)
        return item
    except GitMetadata as exc:  # README "Security": .git/ is never an item
        raise LookupError(str(exc)) from None
    except SourceFileError:
        pass
    cache = _cache(store)
    if cache.ids is None or cache.names is None:
        cache.ids, cache.names = {}, {}
        for path in store.list_files():
            name = posixpath.basename(path)
            cache.names.setdefault(name, []).append(path)
            cache.ids.setdefault(posixpath.splitext(name)[0], []).append(path)
            stem = posixpath.splitext(path)[0]
            if stem != posixpath.splitext(name)[0]:
                cache.ids.setdefault(stem, []).append(path)
    found = cache.ids.get(item) or cache.names.get(item) or []
    if len(found) == 1:
        return found[0]
    if not found:
        raise LookupError(f"Item not found: {item} (no file of {store.name} has that id or path)")
    raise LookupError(f"Ambiguous item id {item!r}: {', '.join(sorted(found))}")


def _headings(text: str, path: str) -> list[Heading]:
    """Markdown (ATX, setext) and reStructuredText headings, outside fenced code."""
    lines = text.split("\n")
    out: list[Heading] = []
    rst_levels: list[tuple[str, bool]] = []
    fence = ""
    markdown = not path.lower().endswith((".rst", ".txt"))
    for i, line in enumerate(lines):
        f = _FENCE.match(line)
        if f is not None and (not fence or f.group(1)[0] == fence[0]):
            fence = "" if fence else f.group(1)
            continue
        if fence:
            continue
        atx = _ATX.match(line) if markdown else None
        if atx is not None:
            out.append(Heading(atx.group(2), len(atx.group(1)), i + 1))
            continue
        if i == 0 or not lines[i - 1].strip():
            continue
        title = lines[i - 1].strip()
        if markdown and _SETEXT.match(line) and not _RST_ADORN.match(lines[i - 2] if i > 1 else ""):
            if not out or out[-1].line != i:
                out.append(Heading(title, 1 if line.strip()[0] == "=" else 2, i))
            continue
        adorn = _RST_ADORN.match(line)
        if adorn is not None and len(line.rstrip()) >= len(title) and not _RST_ADORN.match(title):
            over = i > 1 and lines[i - 2].strip() == line.strip()
            style = (adorn.group(1), over)
            if style not in rst_levels:
                rst_levels.append(style)
            out.append(Heading(title, rst_levels.index(style) + 1, i))
    return out


def _seconds(stamp: str) -> float:
    parts = stamp.replace(",", ".").split(":")
    total = 0.0
    for p in parts:
        total = total * 60 + float(p)
    return total


def _cues(text: str) -> list[Cue]:
    lines = text.split("\n")
    cues: list[Cue] = []
    i = 0
    while i < len(lines):
        m = _CUE_TIME.search(lines[i])
        if m is None:
            i += 1
            continue
        first = i + 1
        j = i + 1
        while j < len(lines) and lines[j].strip():
            j += 1
        cues.append(Cue(_seconds(m.group(1)), _seconds(m.group(2)), first, max(first, j)))
        i = j
    return cues


def _clock(seconds: float) -> str:
    s = int(seconds)
    return (
        f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
    )


def _lines(file: SourceFile, first: int, last: int) -> ValidationResult:
    return ValidationResult(
        valid=True, cited_content=file.lines(first, last), language=file.language
    )


def _fail(error: str, language: str | None, failure: str = "invalid_range") -> ValidationResult:
    return ValidationResult(
        valid=False,
        error=error,
        failure_type="invalid_range" if failure == "invalid_range" else "invalid_file",
        language=language,
    )


def _span(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def resolve_location(
    citation: Citation, file: SourceFile, store: SourceStore, config: ExcerptConfig
) -> Resolved:
    """Resolve ``citation.location`` in ``file`` (module docstring, level 2)."""
    spec = citation.location or "general"
    path, count, lang = file.path, file.line_count, file.language
    parsed = _cache(store).files.setdefault(path, _Parsed())

    def at(first: int, last: int, what: str, result: ValidationResult | None = None) -> Resolved:
        res = result if result is not None else _lines(file, first, last)
        cited = replace(citation, file_path=path, start_line=first, end_line=last)
        return Resolved(cited, res, f"{what} ({_span(first, last)})")

    def fail(error: str) -> Resolved:
        return Resolved(replace(citation, file_path=path), _fail(error, lang))

    if count == 0:
        return fail(f"Empty file: {path}")
    if spec == "general":
        return at(1, count, "whole item")
    lines = LINES_SPEC.fullmatch(spec)
    if lines is not None:
        resolved = replace(citation, file_path=path)
        check = validate_citation(Citation(path, citation.start_line, citation.end_line), store)
        return Resolved(
            resolved, check, _span(citation.start_line, citation.end_line) if check.valid else ""
        )
    page = _PAGE.fullmatch(spec)
    if page is not None:
        n, size = int(page.group(1)), config.page_lines
        pages = -(-count // size)
        if not 1 <= n <= pages:
            return fail(
                f"Page {n} out of range: {path} has {count} lines "
                f"({pages} page{'s' if pages != 1 else ''} of {size} lines)"
            )
        return at((n - 1) * size + 1, min(n * size, count), f"page {n}")
    if spec.startswith("sec-"):
        return _section(file, whole_text(file, store), spec[4:], parsed, at, fail)
    sentence = _SENTENCE.fullmatch(spec)
    if sentence is not None:
        n = int(sentence.group(1))
        if parsed.chunks is None:
            parsed.chunks = chunk_text(whole_text(file, store), path)
        if n >= len(parsed.chunks):
            return fail(
                f"Sentence {n} out of range: {path} has {len(parsed.chunks)} chunks "
                f"(S:0-S:{len(parsed.chunks) - 1})"
            )
        chunk = parsed.chunks[n]
        result = ValidationResult(valid=True, cited_content=chunk.content, language=lang)
        return at(chunk.start_line, chunk.end_line, f"sentence {n}", result)
    clock = _TIME.fullmatch(spec)
    if clock is not None:
        if posixpath.splitext(path.lower())[1] not in TRANSCRIPT_SUFFIXES:
            return fail(f"Timestamp {spec} needs a .vtt or .srt transcript: {path}")
        if parsed.cues is None:
            parsed.cues = _cues(whole_text(file, store))
        t = _seconds(spec)
        for cue in parsed.cues:
            if cue.start <= t < cue.end or (cue.start <= t and cue.start == cue.end):
                return at(cue.first_line, cue.last_line, f"cue at {_clock(cue.start)}")
        span = (
            f"cues {_clock(parsed.cues[0].start)}-{_clock(parsed.cues[-1].end)}"
            if parsed.cues
            else "no cues"
        )
        return fail(f"Timestamp {spec} not found in {path} ({span})")
    return fail(f"Unknown location {spec!r}: use L42, L42-67, p12, sec-name, 2:15, S:3 or general")


def _section(
    file: SourceFile,
    text: str,
    name: str,
    parsed: _Parsed,
    at: Callable[..., Resolved],
    fail: Callable[[str], Resolved],
) -> Resolved:
    """``sec-<name>``: a heading in prose, a definition in code (module docstring)."""
    path, count = file.path, file.line_count
    want = slug(name)
    if file.language not in (None, "markdown", "rst") and not path.lower().endswith(
        (".md", ".markdown", ".rst", ".txt")
    ):
        index = build_symbol_index(text, file.language)
        found = index.find_definition(name) or index.find_definition(name, case_sensitive=False)
        if not found:
            names = sorted({d.name for d in index.definitions})[:8]
            return fail(
                f"Section {name!r} not found in {path}: no definition of that name"
                + (f" (defines {', '.join(names)}, …)" if names else "")
            )
        d = found[0]
        return at(d.start_line, min(d.end_line, count), f"{d.kind} {d.name}")
    if parsed.headings is None:
        parsed.headings = _headings(text, path)
    headings: list[Heading] = parsed.headings
    slugs = [slug(_NUMBERING.sub("", h.title).strip()) or slug(h.title) for h in headings]
    full = [slug(h.title) for h in headings]
    choice = None
    for test in (
        lambda s, f: want in (s, f),
        lambda s, f: s.startswith(want) or f.startswith(want),
        lambda s, f: want in s.split("-"),
    ):
        choice = next(
            (i for i, (s, f) in enumerate(zip(slugs, full, strict=True)) if test(s, f)), None
        )
        if choice is not None:
            break
    if choice is None:
        shown = ", ".join(h.title for h in headings[:8]) or "none"
        return fail(f"Section {name!r} not found in {path} (headings: {shown})")
    h = headings[choice]
    last = count
    for other in headings[choice + 1 :]:
        if other.level <= h.level:
            last = other.line - 1
            break
    while last > h.line and not file.lines(last, last).strip():
        last -= 1
    return at(h.line, last, f"section {h.title!r}")
