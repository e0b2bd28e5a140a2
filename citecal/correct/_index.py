"""The repository index the correction loop searches: definitions and code chunks.

Relocating a citation (README "`citecal correct`") asks "where in this
repository is the code the claim talks about?". Every text file with a
tree-sitter language is parsed once (:func:`citecal.source.build_symbol_index`)
and cut into chunks the way ``citecal chunks`` cuts code (one chunk per
outermost definition, members of long definitions, the code between
definitions; :func:`citecal.chunks.code_line_pieces`), with long stretches of
code outside definitions cut into windows. Three lookups are kept:

* **definitions by name** (lower-cased): where a name the claim gives is defined;
* **postings**: lower-cased identifier tokens → the chunks that use them, so the
  chunks holding a claim's names are found without scanning any file;
* **BM25** over the chunks' identifier words (``bm25s``), for claims whose
  words, not names, say where the code is.

Building it for 2 000 files of ~90 lines takes about two seconds on this
project's machine (``benchmarks/correct_speed.py``); every query afterwards is
dictionary look-ups and one sparse BM25 scoring.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from citecal.chunks import code_line_pieces
from citecal.errors import InputError
from citecal.source import (
    Definition,
    SourceFile,
    SourceFileError,
    SourceStore,
    SymbolIndex,
    build_symbol_index,
    is_code_language,
    language_for_path,
    project_names,
)

ChunkKind = Literal["definition", "code"]

MAX_INDEXED_CHARS = 1_000_000
"""Larger files (bundles, generated code) are left out of the index: a report's
claims are about code people wrote, and parsing them would dominate the build."""

WINDOW_LINES = 40
"""Code outside definitions is cut into windows of at most this many lines."""

MAX_PARENT_LINES = 150
"""A definition cut into several chunks gets one of its own up to this many lines."""

_TOKEN_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_PART_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@dataclass(frozen=True, slots=True)
class Chunk:
    """A stretch of one file that can be cited: a definition or code between definitions."""

    path: str
    start_line: int
    end_line: int
    kind: ChunkKind
    name: str | None = None

    @property
    def lines(self) -> int:
        return self.end_line - self.start_line + 1


@dataclass
class IndexedFile:
    """One indexed file: its text by line and its symbol index (parsed once)."""

    source: SourceFile
    symbols: SymbolIndex
    chunk_ids: list[int] = field(default_factory=list)


_WORDS: dict[str, tuple[str, ...]] = {}  # identifier -> its words, memoised


def token_words(token: str) -> tuple[str, ...]:
    """Lower-cased words of an identifier: ``validateToken`` → ``validate``, ``token``."""
    words = _WORDS.get(token)
    if words is None:
        words = _WORDS[token] = tuple(p.lower() for p in _PART_RE.findall(token) if len(p) > 1)
    return words


def _terms_of(token: str) -> tuple[str, ...]:
    """BM25 terms of one identifier: itself (lower-cased) when it has several words, its words."""
    lower = token.lower()
    words = token_words(token)
    head = (lower,) if len(lower) > 1 and (len(words) != 1 or words[0] != lower) else ()
    return head + words


def query_words(text: str) -> list[str]:
    """The BM25 terms of a piece of text: each identifier whole and by its words."""
    out: list[str] = []
    for token in _TOKEN_RE.findall(text):
        lower = token.lower()
        words = token_words(token)
        if len(lower) > 1 and (len(words) != 1 or words[0] != lower):
            out.append(lower)
        out.extend(words)
    return out


class RepoIndex:
    """Definitions, chunks, postings and a BM25 index over one repository.

    Build it with :meth:`build`; it holds every indexed file's text and symbol
    index, so verifying a candidate location never reads or parses again.
    """

    def __init__(self, store: SourceStore) -> None:
        self.store = store
        self.files: dict[str, IndexedFile] = {}
        self.chunks: list[Chunk] = []
        self.definitions: dict[str, list[tuple[str, Definition]]] = {}
        self.postings: dict[str, set[int]] = {}
        self.file_names: dict[str, list[str]] = {}  # lower-cased base name -> paths
        self.project: frozenset[str] = frozenset()
        self._bm25: Any = None  # bm25s.BM25, imported when built (it brings numba)
        self._vocab: dict[str, int] = {}
        self._token_ids: dict[str, tuple[int, ...]] = {}
        self.skipped: int = 0
        self.text_only: set[str] = set()
        """Files whose definitions are not all known: a language without a symbol index, or
        a parse that recovered from syntax errors (a macro the grammar does not know, Groovy
        the grammar reads loosely). Searched as text too; absence from the index proves nothing
        there (docs/explanation/routing.md, "Languages")."""

    # ----------------------------------------------------------------- build

    @classmethod
    def build(
        cls,
        store: SourceStore,
        *,
        paths: Iterable[str] | None = None,
        progress: Callable[[int, int], None] | None = None,
        bm25: bool = True,
    ) -> RepoIndex:
        """Index every parsable text file of ``store`` (or only ``paths``).

        Code in a language without a symbol index (Clojure before it had one,
        Cython, Lua, …) is indexed as text: windows of lines, their words in the
        postings and BM25, no definitions (:attr:`text_only`).

        ``bm25=False`` leaves the BM25 scores out (every chunk scores 0): the review
        list's proposed place searches one file by its names and words, and saves
        loading ``bm25s`` and numba (docs/explanation/cascade.md).

        Raises:
            InputError: the repository has no source file at all.
        """
        index = cls(store)
        listed = list(paths) if paths is not None else store.list_files()
        wanted = [p for p in listed if _maybe_code(p)]
        corpus: list[list[int]] = []
        for n, path in enumerate(wanted, 1):
            try:
                source = store.read(path)
            except SourceFileError:
                index.skipped += 1
                continue
            if not is_code_language(source.language):
                continue  # an extensionless file that is not a script
            text = source.text
            if len(text) > MAX_INDEXED_CHARS:
                index.skipped += 1
                continue
            index._add_file(path, source, text, corpus)
            if progress is not None and (n % 200 == 0 or n == len(wanted)):
                progress(n, len(wanted))
        if not index.files:
            raise InputError(
                f"no source files in {store.name}: the correction index needs code "
                "(documents and data files are not searched)"
            )
        index.project = project_names(store)
        if bm25:
            import bm25s
            from bm25s.tokenization import Tokenized

            index._bm25 = bm25s.BM25()
            index._bm25.index(Tokenized(ids=corpus, vocab=index._vocab), show_progress=False)
            index._vocab = dict(index._bm25.vocab_dict)
        return index

    def _add_file(self, path: str, source: SourceFile, text: str, corpus: list[list[int]]) -> None:
        symbols = build_symbol_index(text, source.language)
        if not symbols.parsed or symbols.syntax_errors:
            self.text_only.add(path)
        entry = IndexedFile(source, symbols)
        self.files[path] = entry
        base = path.rsplit("/", 1)[-1].lower()
        self.file_names.setdefault(base, []).append(path)
        for d in symbols.definitions:
            self.definitions.setdefault(d.name.lower(), []).append((path, d))
        lines = symbols.lines(1, symbols.line_count)
        postings = self.postings
        token_ids = self._token_ids
        for first, last, kind, name in code_line_pieces(lines, symbols, WINDOW_LINES):
            chunk_id = len(self.chunks)
            self.chunks.append(Chunk(path, first, last, kind, name))
            entry.chunk_ids.append(chunk_id)
            counts = Counter(_TOKEN_RE.findall("\n".join(lines[first - 1 : last])))
            if name:
                counts[name] += 2  # a definition's name says what it is
            ids: list[int] = []
            for token, count in counts.items():
                term_ids = token_ids.get(token)
                if term_ids is None:
                    term_ids = token_ids[token] = self._term_ids(token)
                ids.extend(term_ids * count)
                lower = token.lower()
                posting = postings.get(lower)
                if posting is None:
                    postings[lower] = {chunk_id}
                else:
                    posting.add(chunk_id)
            corpus.append(ids)
        self._add_parents(path, entry, symbols, lines, corpus)

    def _add_parents(
        self,
        path: str,
        entry: IndexedFile,
        symbols: SymbolIndex,
        lines: list[str],
        corpus: list[list[int]],
    ) -> None:
        """Definitions cut into several chunks (a long method with inner classes) get a chunk
        of their own too, so a claim about the whole of one finds it in one piece."""
        split = [
            d
            for d in symbols.definitions
            if WINDOW_LINES < d.end_line - d.start_line + 1 <= MAX_PARENT_LINES
        ]  # only a definition longer than a window can have been cut into several chunks
        if not split:
            return
        have = {(self.chunks[c].start_line, self.chunks[c].end_line) for c in entry.chunk_ids}
        for d in split:
            if (d.start_line, d.end_line) in have:
                continue
            inside = [
                c
                for c in entry.chunk_ids
                if d.start_line <= self.chunks[c].start_line <= d.end_line
            ]
            if len(inside) < 2:
                continue
            have.add((d.start_line, d.end_line))
            chunk_id = len(self.chunks)
            self.chunks.append(Chunk(path, d.start_line, d.end_line, "definition", d.name))
            entry.chunk_ids.append(chunk_id)
            ids: list[int] = []
            for c in inside:
                ids.extend(corpus[c])
            corpus.append(ids)
            text = "\n".join(lines[d.start_line - 1 : d.end_line])
            for token in {t.lower() for t in _TOKEN_RE.findall(text)}:
                self.postings.setdefault(token, set()).add(chunk_id)

    def _term_ids(self, token: str) -> tuple[int, ...]:
        vocab = self._vocab
        out = []
        for term in _terms_of(token):
            tid = vocab.get(term)
            if tid is None:
                tid = vocab[term] = len(vocab)
            out.append(tid)
        return tuple(out)

    # ----------------------------------------------------------------- queries

    def bm25_scores(self, words: Iterable[str]) -> npt.NDArray[np.float64]:
        """BM25 score of every chunk for ``words`` (unknown words are ignored; all 0 without
        BM25)."""
        if self._bm25 is None:
            return np.zeros(len(self.chunks))
        known = [w for w in dict.fromkeys(words) if w in self._vocab]
        if not known:
            return np.zeros(len(self.chunks))
        return np.asarray(self._bm25.get_scores(known), dtype=np.float64)

    def chunks_using(self, name: str) -> set[int]:
        """Chunks in which the identifier ``name`` (or a dotted name's last part) appears."""
        key = name.lower()
        found = self.postings.get(key)
        if found is None and ("." in key or "::" in key):
            found = self.postings.get(re.split(r"\.|::", key)[-1])
        return found or set()

    def definitions_named(self, name: str) -> list[tuple[str, Definition]]:
        """Every (path, definition) named ``name`` (case-insensitive; dotted: last part)."""
        key = re.split(r"\.|::", name.lower())[-1]
        return list(self.definitions.get(key, ()))

    def chunk_at(self, path: str, line: int) -> int | None:
        """The innermost chunk of ``path`` holding ``line``."""
        entry = self.files.get(path)
        if entry is None:
            return None
        best: int | None = None
        for cid in entry.chunk_ids:
            c = self.chunks[cid]
            if c.start_line <= line <= c.end_line and (
                best is None or c.lines < self.chunks[best].lines
            ):
                best = cid
        return best

    def text_only_uses(self, name: str) -> list[str]:
        """Files whose definitions are not all known (:attr:`text_only`) in which ``name``
        appears.

        Their definitions are unknown, so a name found there may be defined there: a
        caller must not conclude the repository defines nothing by that name.
        """
        if not self.text_only:
            return []
        paths = {self.chunks[c].path for c in self.chunks_using(name)}
        return sorted(paths & self.text_only)

    def ignored_names(self, path: str) -> frozenset[str]:
        """Names a claim may use without the lines containing them (see the pipeline)."""
        from citecal.source import file_names

        return self.project | file_names(path)


def _maybe_code(path: str) -> bool:
    """Code by its name, or a file without an extension that may be a script (``bin/n``:
    its ``#!`` line tells, once read)."""
    language = language_for_path(path)
    if language is not None:
        return is_code_language(language)
    return "." not in path.rsplit("/", 1)[-1]


__all__ = ["Chunk", "IndexedFile", "RepoIndex", "query_words", "token_words"]
