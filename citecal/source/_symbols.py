"""Per-file symbol index: definitions, string literals and comments (README "Routing").

Extractive verification asks, for every citation, "which names are defined
in lines 10-25, and which words appear there?". A file is parsed once with
tree-sitter (grammars shipped offline by ``tree-sitter-language-pack``
0.13.0) and the answers are kept in sorted arrays so that each citation's
question is a pair of binary searches, not a walk over the tree.

What to index is data, not code: :data:`LANGUAGE_QUERIES`
(:mod:`citecal.source._symbol_queries`) holds one tree-sitter query per
language (Python, JavaScript, TypeScript, TSX, Go, Java, Rust, C, C++, C#,
Ruby) whose captures are named ``definition.<kind>`` (the defining node)
with ``name`` (its name node), plus the node types of string literals and
comments. The query runs inside tree-sitter's C engine in the same pass for
all three, so indexing costs about twice the bare parse (2 000 files of ~90
lines: ~1.0 s of CPU, of which the parse is ~0.5 s).
Languages without a query (or a parse that raises) fall back to identifier
tokens found by a regular expression: ``parsed`` is then ``False`` and no
definitions are known, so callers must not enforce definition kinds.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Generic, Literal, Protocol, TypeVar, cast

import tree_sitter
import tree_sitter_language_pack

from citecal.source._symbol_queries import (
    LANGUAGE_ALIASES,
    LANGUAGE_QUERIES,
    LanguageSpec,
    normalize_language,
)

DefinitionKind = Literal[
    "class",
    "constant",
    "enum",
    "field",
    "function",
    "impl",
    "interface",
    "method",
    "module",
    "struct",
    "trait",
    "type",
    "variable",
]
"""What a name is defined as. Functions nested directly in a class, ``impl``
or trait body are reported as ``method``."""

IDENTIFIER_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*")
"""Identifier tokens, including dotted chains such as ``self.timeout``."""

_UPPER_CONSTANT = re.compile(r"[A-Z][A-Z0-9_]*")
_PROSE_RE = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|/\*[\s\S]*?\*/'  # docstrings, block comments
    r"|(?:#|//|--)[^\n]*"  # line comments (and the rest of a line after a stray '#')
    r'|"[^"\n]* [^"\n]*"|\'[^\'\n]* [^\'\n]*\'|`[^`\n]* [^`\n]*`'  # strings holding prose
)
"""Comments and prose strings, found without a parser (see :meth:`SymbolIndex.symbol_words`)."""
_PART_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
"""Parts of an identifier: ``HTTPAdapter`` → HTTP, Adapter; ``max_retries`` → max, retries."""


_Parsed = tuple[bool, list["Definition"], list["Span"], list["Span"]]
"""(parsed?, definitions, strings, comments) as the parse returns them."""


@dataclass(frozen=True, slots=True)
class Definition:
    """One named definition in a file.

    Lines are 1-indexed and inclusive. ``start_line``/``end_line`` span the
    whole defining node (a function's signature and body, without
    decorators); ``name_line`` is the line of the name itself, which is what
    "defined inside the cited range" is decided on.
    """

    name: str
    kind: DefinitionKind
    start_line: int
    end_line: int
    name_line: int = 0

    def __post_init__(self) -> None:
        if self.name_line == 0:
            object.__setattr__(self, "name_line", self.start_line)


@dataclass(frozen=True, slots=True)
class Span:
    """Where a string literal or comment is: lines 1-indexed and inclusive,
    columns 0-based UTF-8 byte offsets in the start and end line (end exclusive).

    The text is not copied out of the tree (that alone doubled the indexing
    time); :meth:`SymbolIndex.span_text` cuts it from the lines on demand.
    """

    start_line: int
    end_line: int
    start_col: int = 0
    end_col: int = 0


@cache
def _compiled_query(language: str) -> tuple[tree_sitter.Query, int]:
    """A language's query, compiled once, and the index of its first string/comment pattern.

    Strings and comments are appended to the definitions query rather than
    run as a second query: one pass over the tree is cheaper than two.
    """
    spec = LANGUAGE_QUERIES[language]
    lang = tree_sitter_language_pack.get_language(
        cast("tree_sitter_language_pack.SupportedLanguage", spec.grammar)
    )
    definitions = tree_sitter.Query(lang, spec.query)
    text_patterns = [f"({t}) @string" for t in spec.string_types]
    text_patterns += [f"({t}) @comment" for t in spec.comment_types]
    query = tree_sitter.Query(lang, spec.query + "\n" + "\n".join(text_patterns))
    return query, definitions.pattern_count


class SymbolIndex:
    """What a file defines and says, queryable by line range.

    Built once per file by :func:`build_symbol_index`; every query is a
    binary search over arrays sorted by line, so asking about thousands of
    citations into one large file stays cheap. The only state that changes
    after construction is memoisation: the tokens of each line (filled the
    first time a query covers it) and the joined text behind
    :meth:`lines_with` (built on first use).
    """

    def __init__(
        self,
        lines: list[str],
        language: str | None,
        parsed: bool,
        definitions: list[Definition],
        strings: list[Span],
        comments: list[Span],
        *,
        parse: Callable[[], _Parsed] | None = None,
    ) -> None:
        self.language = language
        self._lines = lines
        self._parse = parse
        self.parseable = parse is not None or parsed
        """A grammar exists and the file is small enough: definitions can be known."""
        self.syntax_errors = False
        """The parse recovered from errors (set once parsed): some definitions may be missing,
        so absence from this index proves nothing (docs/explanation/routing.md)."""
        self._definition_spans: _SpanIndex[Definition] | None = None
        if parse is None:
            self._load(parsed, definitions, strings, comments)
        self._text: str | None = None  # joined lower-cased lines, built by lines_with
        self._symbol_words: frozenset[str] | None = None
        self._symbol_stems: frozenset[str] | None = None
        self._line_starts: list[int] = []
        # Tokens of each line, filled the first time a citation covers the line.
        self._line_tokens: list[tuple[str, ...] | None] = [None] * len(lines)

    def _load(
        self, parsed: bool, definitions: list[Definition], strings: list[Span], comments: list[Span]
    ) -> None:
        self._parsed = parsed
        self._definitions: tuple[Definition, ...] = tuple(
            sorted(definitions, key=lambda d: (d.name_line, d.start_line, d.name))
        )
        self._name_lines = [d.name_line for d in self._definitions]
        self._by_name: dict[str, list[Definition]] = {}
        self._by_lower: dict[str, list[Definition]] = {}
        for d in self._definitions:
            self._by_name.setdefault(d.name, []).append(d)
            self._by_lower.setdefault(d.name.lower(), []).append(d)
        self._strings = tuple(strings)
        self._comments = tuple(comments)
        self._string_index = _SpanIndex(self._strings)
        self._comment_index = _SpanIndex(self._comments)

    def _ensure_parsed(self) -> None:
        """Run tree-sitter on first need: many citations are decided from tokens alone."""
        if self._parse is not None:
            parse, self._parse = self._parse, None
            self._load(*parse())

    @property
    def is_loaded(self) -> bool:
        """True once definitions, strings and comments are known (no parse pending)."""
        return self._parse is None

    @property
    def parsed(self) -> bool:
        """True when tree-sitter parsed the file (parses it if that is still pending)."""
        self._ensure_parsed()
        return self._parsed

    @property
    def definitions(self) -> tuple[Definition, ...]:
        """Every definition, sorted by name line (parses the file on first use)."""
        self._ensure_parsed()
        return self._definitions

    @property
    def strings(self) -> tuple[Span, ...]:
        """String literal spans (parses the file on first use)."""
        self._ensure_parsed()
        return self._strings

    @property
    def comments(self) -> tuple[Span, ...]:
        """Comment spans (parses the file on first use)."""
        self._ensure_parsed()
        return self._comments

    # ------------------------------------------------------------------ basics

    @property
    def line_count(self) -> int:
        """Number of lines (a trailing newline does not start a new line)."""
        return len(self._lines)

    def lines(self, start: int, end: int) -> list[str]:
        """Lines ``start..end`` (1-indexed, inclusive, clamped to the file), without newlines."""
        lo = max(start, 1) - 1
        hi = min(end, len(self._lines))
        return self._lines[lo:hi] if hi > lo else []

    # ------------------------------------------------------------------ definitions

    def definitions_in(self, start: int, end: int) -> list[Definition]:
        """Definitions whose name line lies in ``[start, end]``, in line order."""
        self._ensure_parsed()
        lo = bisect.bisect_left(self._name_lines, start)
        hi = bisect.bisect_right(self._name_lines, end)
        return list(self.definitions[lo:hi])

    def find_definition(self, name: str, *, case_sensitive: bool = True) -> list[Definition]:
        """Every definition of ``name`` in the file, in line order.

        A dotted name (``axios.create``, ``self.timeout``) is looked up by its
        last component, which is the name tree-sitter records.
        """
        key = name.rsplit(".", 1)[-1]
        self._ensure_parsed()
        found = self._by_name.get(key) if case_sensitive else self._by_lower.get(key.lower())
        return list(found or ())

    def enclosing_definitions(self, line: int) -> list[Definition]:
        """Definitions whose span contains ``line``, outermost first."""
        if self._definition_spans is None:
            self._definition_spans = _SpanIndex(self.definitions)
        return self._definition_spans.overlapping(line, line)

    # ------------------------------------------------------------------ text

    def span_text(self, span: Span) -> str:
        """The source text of a string or comment span."""
        lines = self.lines(span.start_line, span.end_line)
        if not lines:
            return ""
        data = [line.encode("utf-8", "surrogatepass") for line in lines]
        data[-1] = data[-1][: span.end_col]
        data[0] = data[0][span.start_col :]
        return b"\n".join(data).decode("utf-8", "replace")

    def text_kind_at(self, line: int, column: int) -> str | None:
        """``"string"`` or ``"comment"`` when the character at (line, 0-based column) is in one.

        ``column`` counts characters (as ``str.find`` gives); spans store byte
        columns, so the line's prefix is encoded to compare them.
        """
        text = self.lines(line, line)
        byte_col = len(text[0][:column].encode("utf-8", "surrogatepass")) if text else column
        for kind, found in (
            ("comment", self.comments_in(line, line)),
            ("string", self.strings_in(line, line)),
        ):
            for span in found:
                after_start = line > span.start_line or byte_col >= span.start_col
                before_end = line < span.end_line or byte_col < span.end_col
                if after_start and before_end:
                    return kind
        return None

    def strings_in(self, start: int, end: int) -> list[Span]:
        """String literals overlapping lines ``[start, end]``."""
        self._ensure_parsed()
        return self._string_index.overlapping(start, end)

    def comments_in(self, start: int, end: int) -> list[Span]:
        """Comments overlapping lines ``[start, end]``."""
        self._ensure_parsed()
        return self._comment_index.overlapping(start, end)

    def line_tokens(self, line: int) -> tuple[str, ...]:
        """Identifier-shaped tokens of one line (1-indexed), memoised.

        Tokens come from the raw text, so they include names in code, words
        in string literals and words in comments; a dotted chain yields the
        chain and each of its parts (``self.timeout`` → ``self.timeout``,
        ``self``, ``timeout``).
        """
        tokens = self._line_tokens[line - 1]
        if tokens is None:
            found: list[str] = []
            for token in IDENTIFIER_RE.findall(self._lines[line - 1]):
                found.append(token)
                if "." in token:
                    found.extend(token.split("."))
            tokens = self._line_tokens[line - 1] = tuple(found)
        return tokens

    def iter_tokens(self, start: int, end: int) -> Iterator[tuple[int, str]]:
        """(line, token) for every token (see :meth:`line_tokens`) in lines ``[start, end]``."""
        for line in range(max(start, 1), min(end, len(self._lines)) + 1):
            for token in self.line_tokens(line):
                yield line, token

    def tokens_in(self, start: int, end: int) -> frozenset[str]:
        """Identifier tokens (code names, string and comment words) in lines ``[start, end]``."""
        return frozenset(token for _, token in self.iter_tokens(start, end))

    def symbol_words(self) -> frozenset[str]:
        """Lower-cased parts of the file's identifiers outside comments and prose, memoised.

        ``validate_token`` and ``validateToken`` give ``validate`` and ``token``;
        a dotted chain gives each part. This is what makes a prose word in a
        claim ("the session's headers") checkable content: it names something
        the file's code names (README, "Routing: who decides a claim").
        Comments and string literals holding prose (docstrings, messages: a
        space inside) are left out: a word only they use names nothing. They
        are found lexically (:data:`_PROSE_RE`), not by parsing, so the answer
        never depends on whether the file was parsed yet and costs a few
        regular-expression passes.
        """
        if self._symbol_words is None:
            code = _PROSE_RE.sub(" ", "\n".join(self._lines))
            tokens = " ".join(IDENTIFIER_RE.findall(code))
            self._symbol_words = frozenset(p.lower() for p in _PART_RE.findall(tokens))
        return self._symbol_words

    def symbol_stems(self, stem: Callable[[str], str]) -> frozenset[str]:
        """``stem`` of every :meth:`symbol_words` entry, memoised (one stemmer per process)."""
        if self._symbol_stems is None:
            self._symbol_stems = frozenset(stem(w) for w in self.symbol_words())
        return self._symbol_stems

    def lines_with(self, name: str) -> list[int]:
        """Lines (sorted) where ``name`` occurs as a whole token, case-insensitively.

        A ``str.find`` scan over the file's lower-cased text (joined on the
        first call): a hint for a missing name costs a C-speed search, not a
        tokenisation of the whole file or a regex compiled per name.
        """
        needle = name.lower()
        if not needle:
            return []
        if self._text is None:
            self._text = "\n".join(self._lines).lower()
            starts, offset = [], 0
            for text in self._lines:
                starts.append(offset)
                offset += len(text) + 1
            self._line_starts = starts
        text, size = self._text, len(needle)
        found: list[int] = []
        at = text.find(needle)
        while at >= 0:
            before = text[at - 1] if at else " "
            after = text[at + size : at + size + 1] or " "
            if not _is_word_char(before) and not _is_word_char(after):
                line = bisect.bisect_right(self._line_starts, at)
                if not found or found[-1] != line:
                    found.append(line)
            at = text.find(needle, at + 1)
        return found


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char in "_$"


class _Lined(Protocol):
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...


_L = TypeVar("_L", bound=_Lined)


class _SpanIndex(Generic[_L]):
    """Spans sorted by start line with a running maximum of end lines, for range overlap.

    The items overlapping ``[start, end]`` lie between the first item whose
    running maximum end reaches ``start`` and the last item starting by
    ``end``; only that window is scanned.
    """

    def __init__(self, spans: Sequence[_L]) -> None:
        self._spans = sorted(spans, key=lambda s: (s.start_line, -s.end_line))
        self._starts = [s.start_line for s in self._spans]
        running = 0
        self._max_end: list[int] = []
        for s in self._spans:
            running = max(running, s.end_line)
            self._max_end.append(running)

    def overlapping(self, start: int, end: int) -> list[_L]:
        lo = bisect.bisect_left(self._max_end, start)
        hi = bisect.bisect_right(self._starts, end)
        return [s for s in self._spans[lo:hi] if s.end_line >= start]


def _split_lines(text: str) -> list[str]:
    """Lines as tree-sitter numbers them (split on ``\\n``), without ``\\r``."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _node_text(node: tree_sitter.Node) -> str:
    raw = node.text
    return raw.decode("utf-8", "replace") if raw is not None else ""


def _is_method(node: tree_sitter.Node, spec: LanguageSpec) -> bool:
    """True when the nearest enclosing function boundary or method container is a container."""
    parent = node.parent
    while parent is not None:
        ptype = parent.type
        if ptype in spec.method_containers:
            return True
        if ptype in spec.function_boundaries:
            return False
        parent = parent.parent
    return False


def _span(node: tree_sitter.Node) -> Span:
    """:class:`Span` of a string or comment node (each point read once: they are not free)."""
    start_row, start_col = node.start_point
    end_row, end_col = node.end_point
    if end_col == 0 and end_row > start_row:  # swallowed its newline: ends on the line before
        return Span(start_row + 1, end_row, start_col, 1 << 30)
    return Span(start_row + 1, end_row + 1, start_col, end_col)


def _line_span(node: tree_sitter.Node) -> tuple[int, int]:
    """1-indexed inclusive lines of a node; a node ending at column 0 (a line
    comment that swallowed its newline) ends on the line before."""
    start_row, _ = node.start_point
    end_row, end_col = node.end_point
    if end_col == 0 and end_row > start_row:
        end_row -= 1
    return start_row + 1, end_row + 1


def _index_tree(
    root: tree_sitter.Node, spec: LanguageSpec, language: str
) -> tuple[list[Definition], list[Span], list[Span]]:
    query, first_text_pattern = _compiled_query(language)
    strings: list[Span] = []
    comments: list[Span] = []
    # (definition node, name node) -> (pattern index, kind, nodes): earliest pattern wins.
    chosen: dict[tuple[int, int, int], tuple[int, str, tree_sitter.Node, tree_sitter.Node]] = {}
    for pattern, captures in tree_sitter.QueryCursor(query).matches(root):
        if pattern >= first_text_pattern:
            for capture, nodes in captures.items():
                (strings if capture == "string" else comments).append(_span(nodes[0]))
            continue
        names = captures.get("name")
        if not names:
            continue
        name_node = names[0]
        for capture, nodes in captures.items():
            if capture.startswith("definition."):
                node = nodes[0]
                key = (node.start_byte, node.end_byte, name_node.start_byte)
                previous = chosen.get(key)
                if previous is None or pattern < previous[0]:
                    chosen[key] = (pattern, capture[11:], node, name_node)
    definitions: list[Definition] = []
    for _, kind, node, name_node in chosen.values():
        name = _node_text(name_node).lstrip("@:")  # Ruby @ivar, :symbol
        if kind == "function" and spec.method_containers and _is_method(node, spec):
            kind = "method"
        elif kind == "variable" and _UPPER_CONSTANT.fullmatch(name):
            kind = "constant"
        start_line, end_line = _line_span(node)
        definitions.append(
            Definition(
                name,
                cast("DefinitionKind", kind),
                start_line,
                end_line,
                name_node.start_point[0] + 1,
            )
        )
    return definitions, strings, comments


def has_symbol_index(language: str | None) -> bool:
    """True when citecal's symbol index knows ``language``'s definitions (a query exists).

    Code in any other language is searched as text only: its definitions are
    unknown, so no caller may conclude that a name is defined nowhere from it
    (docs/explanation/routing.md, "Languages").
    """
    lang = normalize_language(language)
    return lang is not None and lang in LANGUAGE_QUERIES


@cache
def _line_regexes(language: str) -> tuple[tuple[re.Pattern[str], str, str], ...]:
    spec = LANGUAGE_QUERIES[language]
    return tuple((re.compile(p.regex), p.kind, p.end) for p in spec.line_patterns)


def _line_definitions(lines: list[str], language: str, found: list[Definition]) -> list[Definition]:
    """Definitions a language's :attr:`LanguageSpec.line_patterns` find, not found already."""
    seen = {(d.name, d.name_line) for d in found}
    out: list[Definition] = []
    for i, line in enumerate(lines):
        if not line or line.isspace():
            continue
        for regex, kind, end in _line_regexes(language):
            m = regex.match(line)
            if m is None or (m.group("name"), i + 1) in seen:
                continue
            last = _block_end(lines, i, m.end(), end)
            out.append(Definition(m.group("name"), cast("DefinitionKind", kind), i + 1, last))
            seen.add((m.group("name"), i + 1))
    return out


MAX_BLOCK_LINES = 2_000
"""How far a line pattern's block is followed at most (an unbalanced file ends it)."""


def _block_end(lines: list[str], first: int, col: int, end: str) -> int:
    """1-indexed last line of the block a line pattern opened on line ``first`` (0-indexed)."""
    stop = min(len(lines), first + MAX_BLOCK_LINES)
    if end == "at_end":
        for j in range(first + 1, stop):
            if lines[j].startswith("@end"):
                return j + 1
        return first + 1
    depth, opened = 0, False
    for j in range(first, stop):
        text = lines[j][col:] if j == first else lines[j]
        for ch in text:
            if ch == "{":
                depth, opened = depth + 1, True
            elif ch == "}" and opened:
                depth -= 1
                if depth == 0:
                    return j + 1
    return first + 1


MAX_PARSE_CHARS = 2_000_000
"""Larger files (minified bundles, generated code) get the token-only index:
tree-sitter would need seconds and hundreds of MB for them, and their
"definitions" are rarely what a report cites."""


def build_symbol_index(
    text: str, language: str | None, *, max_parse_chars: int = MAX_PARSE_CHARS, lazy: bool = False
) -> SymbolIndex:
    """Parse ``text`` once and index its definitions, strings and comments.

    Args:
        text: The whole file, decoded.
        language: A language name (``"python"``, ``"js"``, ``"tsx"``, …), as
            guessed from the file name; ``None`` or an unsupported language
            gives a token-only index (``parsed=False``).
        max_parse_chars: Files longer than this are not parsed (token-only
            index, ``parsed=False``).
        lazy: Parse on the first question that needs definitions, strings
            or comments instead of now (the pipeline's choice: most claims
            are routed from tokens alone, README "Routing").

    Returns:
        The index. Never raises for bad source: tree-sitter recovers from
        syntax errors, and a grammar that cannot be loaded degrades to the
        token-only index.
    """
    lang = normalize_language(language)
    lines = _split_lines(text)
    spec = LANGUAGE_QUERIES.get(lang) if lang is not None else None
    if spec is None or lang is None or len(text) > max_parse_chars:
        return SymbolIndex(lines, lang, False, [], [], [])
    grammar, name = spec, lang

    def parse() -> _Parsed:
        try:
            parser = tree_sitter_language_pack.get_parser(
                cast("tree_sitter_language_pack.SupportedLanguage", grammar.grammar)
            )
            tree = parser.parse(text.encode("utf-8", "surrogatepass"))
            definitions, strings, comments = _index_tree(tree.root_node, grammar, name)
            if grammar.line_patterns:
                definitions += _line_definitions(lines, name, definitions)
        except (LookupError, ValueError, RuntimeError, tree_sitter.QueryError):
            return False, [], [], []
        index.syntax_errors = tree.root_node.has_error
        return True, definitions, strings, comments

    index = SymbolIndex(lines, lang, False, [], [], [], parse=parse)
    if not lazy:
        index._ensure_parsed()
    return index


__all__ = [
    "LANGUAGE_ALIASES",
    "LANGUAGE_QUERIES",
    "MAX_PARSE_CHARS",
    "Definition",
    "DefinitionKind",
    "LanguageSpec",
    "Span",
    "SymbolIndex",
    "build_symbol_index",
    "has_symbol_index",
    "normalize_language",
]
