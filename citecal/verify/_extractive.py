"""Extractive verification (README "Routing"): does the cited code contain the claim's terms?

Each term of the claim (:func:`~citecal.verify.extract_terms`) is looked for
in the cited lines, using the file's :class:`~citecal.source.SymbolIndex`:

* names (code spans, identifiers): exact, then case-insensitive, then
  ignoring ``_`` ("validateToken" = "validate_token"), then a dotted name by
  its last part (``axios.create`` → ``create``), then Levenshtein distance
  ≤ ``fuzzy_max_distance`` for names of ``fuzzy_min_length``+ characters
  (rapidfuzz). A name the claim calls "the X function/class/method/field"
  must be a *definition* of that kind (or a family member: a Go struct is a
  "class", a Python ``@property`` a "property") whose name line lies in the
  range, or which encloses the whole range (the class around a cited
  method); a mere use of X (a call) counts as missing, with the reason;
* code expressions (`` `return None` ``): verbatim in the cited code up to
  whitespace and case;
* quoted strings: case-insensitive, not glued to letters (``"s"`` is not
  any s);
* words: case-insensitive, or the same Snowball stem as a word or an
  identifier part in the range ("validates" ~ ``validation``,
  "expiry" ~ ``expires``: stems equal, or one a prefix of the other
  differing by at most two letters with the shorter at least four long).

Scoring (README "Routing", weighted): code spans weigh 3, identifiers and quoted
strings 2, words 1; ``score = matched weight / total weight``;
``score >= supports_threshold`` → supports, ``>= partial_threshold`` →
partial, else not_supports. Names are the strong evidence the issue asks
for: if any code span, identifier or quoted string is missing the verdict
is at most ``partial``, and if *every* such term is missing it is
``not_supports`` whatever the words say. Confidence is high for supports
and not_supports, medium for partial, and one step lower (to medium) when
the claim has a single term, when it names no code at all (prose words are
weak evidence either way), when supports rests on a fuzzy name match, or
when not_supports comes from the all-names-missing rule rather than the
score, or when not_supports comes from prose words although every named
code term was found (the names back the claim, the description does not:
a paraphrase the judge should see).

A missing name that is defined (or used) elsewhere in the same file is
reported in ``hint``/``hint_lines`` so that the correction loop can move or
widen the citation (``fix_reference`` / ``expand_range``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import snowballstemmer
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from citecal.config import ExtractiveConfig
from citecal.models import Confidence, Verdict, VerdictLabel
from citecal.source import Definition, SymbolIndex, is_code_language
from citecal.verify._literal import check_literal, literal_form, main_statement
from citecal.verify._terms import ClaimParse, ClaimTerm, ExpectedKind, parse_claim

TERM_WEIGHTS: dict[str, float] = {
    "code_span": 3.0,
    "identifier": 2.0,
    "quoted": 2.0,
    "number": 2.0,
    "word": 1.0,
}
"""Weight of each term kind in the score (names count more than prose words)."""

STRONG_KINDS = frozenset({"code_span", "identifier", "quoted", "number"})

LANGUAGE_LITERALS = frozenset(
    {"true", "false", "null", "none", "nil", "undefined", "nan", "self", "this", "super", "cls"}
    | {"in", "of", "is", "new", "typeof", "instanceof", "async", "await", "yield"}
)
"""Values and receivers every language spells the same way: naming them asks for no code."""

KIND_FAMILIES: dict[str, frozenset[str]] = {
    "function": frozenset({"function", "method"}),
    "method": frozenset({"method", "function"}),
    "class": frozenset({"class", "struct", "interface", "enum", "trait", "type"}),
    "struct": frozenset({"struct", "class", "type"}),
    "interface": frozenset({"interface", "trait", "class", "type"}),
    "enum": frozenset({"enum", "class", "type"}),
    "field": frozenset({"field", "variable", "constant"}),
    "property": frozenset({"field", "method", "function", "variable", "constant"}),
    "variable": frozenset({"variable", "constant", "field"}),
    "constant": frozenset({"constant", "variable", "field"}),
}
"""Definition kinds accepted for each kind a claim can name (a Go struct is a "class")."""

_NAME_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::)[A-Za-z_$][A-Za-z0-9_$]*)*")
_SUBWORD_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_SPACE_RE = re.compile(r"\s+")
_PART_SEP_RE = re.compile(r"\.|::")
_STEMMER = snowballstemmer.stemmer("english")


def _last_part(name: str) -> str:
    """``axios.create`` → ``create``, ``Config::new`` → ``new``."""
    return _PART_SEP_RE.split(name)[-1]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Snowball (Porter 2) stem of a lower-case word; memoised, stemming is pure."""
    return str(_STEMMER.stemWord(word))


@lru_cache(maxsize=65536)
def _token_stems(token: str) -> tuple[str, ...]:
    """Stems of a token's words (``validate_token`` → ``valid``, ``token``); memoised."""
    return tuple(stem(part.lower()) for part in _SUBWORD_RE.findall(token))


def _stems_related(a: str, b: str) -> bool:
    """One stem extends the other by one or two letters, the shorter being 4+ long."""
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 4 and 0 < len(long_) - len(short) <= 2 and long_.startswith(short)


def _norm(name: str) -> str:
    return name.lower().replace("_", "").replace("$", "")


@dataclass(frozen=True, slots=True)
class TermResult:
    """How one claim term fared: where it was found, or why it is missing."""

    term: ClaimTerm
    found: bool
    where: str = ""
    fuzzy: bool = False
    in_range: bool = False
    """For a missing name: it does occur in the range, only not as the claimed kind."""

    @property
    def strong(self) -> bool:
        return self.term.kind in STRONG_KINDS

    @property
    def weight(self) -> float:
        return TERM_WEIGHTS[self.term.kind]


def _show(term: ClaimTerm) -> str:
    if term.kind in ("code_span", "identifier"):
        return f"`{term.text}`"
    if term.kind == "quoted":
        return f'"{term.text}"'
    return term.text


class _RangeView:
    """The cited range seen from every angle the matcher needs, computed on demand."""

    def __init__(
        self, code: str, start: int, end: int, index: SymbolIndex, config: ExtractiveConfig
    ) -> None:
        self.start, self.end, self.index, self.config = start, end, index, config
        self.code = code
        self.code_lower = code.lower()
        self.code_squeezed = _SPACE_RE.sub("", code)
        self.tokens: dict[str, tuple[str, int]] = {}  # exact token -> (token, first line)
        self.lower: dict[str, tuple[str, int]] = {}
        tokens, lower = self.tokens, self.lower
        for line in range(max(start, 1), min(end, index.line_count) + 1):
            for token in index.line_tokens(line):
                if token not in tokens:
                    tokens[token] = (token, line)
                    lower.setdefault(token.lower(), (token, line))
        self._definitions: list[Definition] | None = None
        self._enclosing: list[Definition] | None = None
        self._normalized: dict[str, tuple[str, int]] | None = None
        self._parts: dict[str, tuple[str, int]] | None = None
        self.kinds = False
        """Label comment/string positions (set once a decision needs the parse anyway)."""

    @property
    def definitions(self) -> list[Definition]:
        """Definitions whose name line is in the range (parses the file on first use)."""
        if self._definitions is None:
            self._definitions = self.index.definitions_in(self.start, self.end)
        return self._definitions

    @property
    def enclosing(self) -> list[Definition]:
        """Definitions the range starts inside: named above it, still open at its first line.

        The lines a citation points at sit in a function or class whose name is
        context, not content (README "The cascade": on natural reports ranges
        often run a few lines past the function's end, and rejecting a claim
        about ``mount`` for lines inside ``mount`` was a false alarm).
        """
        if self._enclosing is None:
            self._enclosing = [
                d for d in self.index.enclosing_definitions(self.start) if d.name_line < self.start
            ]
        return self._enclosing

    @property
    def normalized(self) -> dict[str, tuple[str, int]]:
        """Tokens keyed without case, ``_`` and ``$`` ("validateToken" = "validate_token")."""
        if self._normalized is None:
            table: dict[str, tuple[str, int]] = {}
            for token, line in self.tokens.values():
                table.setdefault(_norm(token), (token, line))
            self._normalized = table
        return self._normalized

    def find_stem(self, word: str) -> tuple[str, int] | None:
        """A range token with a word part whose stem is related to ``word``'s.

        Related: equal stems first, else one a prefix of the other, differing
        by at most two letters, the shorter at least four long. Only tokens
        containing the stem's first letters are stemmed (Snowball rewrites
        endings, not beginnings), which keeps this cheap on long ranges.
        """
        target = stem(word)
        probe = target[:4] if len(target) > 4 else (target[:-1] or target)
        related: tuple[str, int] | None = None
        for low, (token, line) in self.lower.items():
            if probe not in low:
                continue
            for key in _token_stems(token):
                if key == target:
                    return token, line
                if related is None and _stems_related(key, target):
                    related = (token, line)
        return related

    def label(self, line: int, needle: str) -> str:
        """ "line 14", or "comment, line 14" / "string, line 14" when ``needle``'s
        first occurrence on that line sits inside a comment or string literal."""
        text = self.index.lines(line, line)
        column = text[0].lower().find(needle.lower()) if text else -1
        kind = self.index.text_kind_at(line, column) if column >= 0 and self.kinds else None
        return f"{kind}, line {line}" if kind else f"line {line}"

    def label_offset(self, offset: int) -> str:
        """:meth:`label` for a character offset into the cited code."""
        line = self.start + self.code.count("\n", 0, offset)
        column = offset - (self.code.rfind("\n", 0, offset) + 1)
        kind = self.index.text_kind_at(line, column) if self.kinds else None
        return f"{kind}, line {line}" if kind else f"line {line}"

    def find_name(self, name: str, config: ExtractiveConfig) -> tuple[str, int, bool] | None:
        """(matched token, line, fuzzy?) for a name used anywhere in the range."""
        for table, key in (
            (self.tokens, name),
            (self.lower, name.lower()),
            (self.normalized, _norm(name)),
        ):
            if key in table:
                token, line = table[key]
                return token, line, False
        if "." in name or "::" in name:
            last = _last_part(name)
            if last.lower() in self.lower:
                token, line = self.lower[last.lower()]
                return token, line, False
        if len(name) >= config.fuzzy_min_length and config.fuzzy_max_distance > 0:
            best = process.extractOne(
                name.lower(),
                self.lower.keys(),
                scorer=Levenshtein.distance,
                score_cutoff=config.fuzzy_max_distance,
            )
            if best is not None:
                token, line = self.lower[best[0]]
                return token, line, True
        last = _last_part(name)
        if len(last) > 3 and last.endswith("s") and last[:-1].lower() in self.lower:
            token, line = self.lower[last[:-1].lower()]  # "ArrayLists": instances of ArrayList
            return token, line, True
        parts = _SUBWORD_RE.findall(last)
        if len(parts) == 1 and len(parts[0]) >= 3:
            # `Send` in `assert_send_sync`: a name the range uses as part of another name.
            hit = self.parts.get(parts[0].lower())
            if hit is not None:
                return hit[0], hit[1], True
        return None

    @property
    def parts(self) -> dict[str, tuple[str, int]]:
        """Lower-cased identifier parts of the range's tokens → (token, first line)."""
        if self._parts is None:
            table: dict[str, tuple[str, int]] = {}
            for token, line in self.tokens.values():
                for part in _SUBWORD_RE.findall(token):
                    table.setdefault(part.lower(), (token, line))
            self._parts = table
        return self._parts

    # ---------------------------------------------------------- RangeFacts (literal checks)

    def defines(self, name: str, kind: str | None = None) -> bool:
        family = KIND_FAMILIES.get(kind) if kind else None
        found = self.find_definition(name, self.config, family)
        return found is not None and not found[1] and (family is None or found[0].kind in family)

    def contains(self, text: str) -> bool:
        return text.lower() in self.code_lower

    def calls(self, name: str) -> bool:
        found = self.find_name(name, self.config)
        token = found[0] if found is not None and not found[2] else name
        last = re.escape(_last_part(token))
        return re.search(rf"(?<![\w$]){last}\s*(?:\(|::<|!\(|<[^>\n]*>\()", self.code) is not None

    def on_one_line(self, first: str, then: str) -> bool:
        left = r"(?<![\w$])" if first[:1].isalnum() or first[:1] in "_$" else ""
        right = r"(?![\w$])" if first[-1:].isalnum() or first[-1:] in "_$" else ""
        rx = re.compile(left + re.escape(first) + right + then)
        return any(rx.search(line) for line in self.code.split("\n"))

    def signature_has(self, owner: str | None, names: Sequence[str]) -> bool:
        if owner is not None:
            found = self.find_definition(owner, self.config)
            candidates = [found[0]] if found is not None and not found[1] else []
        else:
            candidates = list(self.definitions)
        for d in candidates:
            last = d.end_line
            for n in range(d.start_line, min(d.end_line, d.start_line + 12) + 1):
                text = self.index.lines(n, n)[0] if self.index.lines(n, n) else ""
                if re.search(r"[:{]\s*(?:#.*|//.*)?$|=>", text) and n >= d.name_line:
                    last = n
                    break
            lo, hi = max(d.start_line, self.start), min(last, self.end)
            if lo > hi:
                continue
            header = "\n".join(self.index.lines(lo, hi))
            if all(
                re.search(rf"(?<![\w$]){re.escape(_last_part(n))}(?![\w$])", header) for n in names
            ):
                return True
        return False

    def find_definition(
        self, name: str, config: ExtractiveConfig, family: frozenset[str] | None = None
    ) -> tuple[Definition, bool] | None:
        """(definition, fuzzy?) named ``name`` in the range, else enclosing the range.

        Same name rules as :meth:`find_name`; a definition of a kind in
        ``family`` is preferred over another one of the same name. A
        definition that encloses the whole cited range (the class around a
        cited method body) counts too: the cited code is part of it.
        """
        last = _last_part(name)
        keys = {_norm(name), _norm(last)}
        inside = [d for d in self.definitions if _norm(d.name) in keys]
        fitting = [d for d in inside if family is None or d.kind in family]
        if fitting:
            return fitting[0], False
        # The enclosing definitions are only worked out when the range has no fit.
        around = [d for d in self.enclosing if _norm(d.name) in keys]
        fitting = [d for d in around if family is None or d.kind in family]
        if fitting or inside or around:
            return (fitting or inside or around)[0], False
        candidates = self.definitions + self.enclosing
        if len(last) >= config.fuzzy_min_length and config.fuzzy_max_distance > 0 and candidates:
            best = process.extractOne(
                last.lower(),
                [d.name.lower() for d in candidates],
                scorer=Levenshtein.distance,
                score_cutoff=config.fuzzy_max_distance,
            )
            if best is not None:
                return candidates[best[2]], True
        return None

    def where(self, d: Definition) -> str:
        """How a found definition is described in the reasoning."""
        if self.start <= d.name_line <= self.end:
            return f"definition at line {d.name_line}"
        where = "enclosing" if d.end_line >= self.end else "around the start of"
        return f"definition at lines {d.start_line}-{d.end_line}, {where} the cited range"


def _match_kinded(
    term: ClaimTerm, kind: ExpectedKind, view: _RangeView, config: ExtractiveConfig
) -> TermResult:
    """A name the claim says is a definition of ``kind``."""
    family = KIND_FAMILIES[kind]
    found = view.find_definition(term.text, config, family)
    if found is not None and found[0].kind in family:
        d, fuzzy = found
        via = f" `{d.name}`" if d.name != term.text else ""
        return TermResult(term, True, f"{d.kind}{via} {view.where(d)}", fuzzy)
    if found is not None:
        d = found[0]
        why = f"defined at line {d.name_line} as a {d.kind}, not a {kind}"
        return TermResult(term, False, why, in_range=True)
    used = view.find_name(term.text, config)
    if used is not None:
        why = f"used at line {used[1]} but not defined as a {kind} here"
        return TermResult(term, False, why, in_range=True)
    return TermResult(term, False, "not in the cited range")


def _match_name(
    term: ClaimTerm, view: _RangeView, config: ExtractiveConfig, enforce_kind: bool
) -> TermResult:
    if term.expected_kind is not None:
        if enforce_kind:
            return _match_kinded(term, term.expected_kind, view, config)
        # No parser for this language: the name's presence is all we can check.
    else:
        found_def = view.find_definition(term.text, config)
        if found_def is not None and not found_def[1]:
            d = found_def[0]
            return TermResult(term, True, f"{d.kind} {view.where(d)}")
    return _match_used(term, view, config)


def _match_used(term: ClaimTerm, view: _RangeView, config: ExtractiveConfig) -> TermResult:
    """A name among the range's tokens (exact, case, ``_``, last part, fuzzy, parts)."""
    used = view.find_name(term.text, config)
    if used is None:
        return TermResult(term, False, "not in the cited range")
    token, line, fuzzy = used
    via = f"as `{token}`, " if token != term.text else ""
    return TermResult(term, True, f"{via}{view.label(line, token)}", fuzzy)


_ASSIGNMENT_RE = re.compile(r"^\s*([A-Za-z_$][\w$.]*)\s*(?::[^=]+)?=\s*(.+?)\s*;?$")


def _match_code(term: ClaimTerm, view: _RangeView) -> TermResult:
    """A code expression such as ``return None`` or ``timeout=30``: verbatim up to spacing/case.

    An assignment also matches with a type annotation in between
    (``x = "a"`` is in ``x: str = "a"``).
    """
    squeezed = _SPACE_RE.sub("", term.text)
    if squeezed and (
        squeezed in view.code_squeezed or squeezed.lower() in view.code_squeezed.lower()
    ):
        pos = view.code_lower.find(term.text.lower())
        where = view.label_offset(pos) if pos >= 0 else "in the cited code"
        return TermResult(term, True, where)
    assignment = _ASSIGNMENT_RE.match(term.text)
    if assignment is not None:
        name, value = assignment.group(1), assignment.group(2)
        rx = re.compile(
            rf"(?<![\w$]){re.escape(name)}\s*(?::[^=\n]+)?=\s*{re.escape(value)}(?![\w$])"
        )
        for n, line in enumerate(view.code.split("\n")):
            if rx.search(line):
                return TermResult(term, True, f"line {view.start + n}")
    return TermResult(term, False, "not verbatim in the cited range")


def _match_quoted(term: ClaimTerm, view: _RangeView) -> TermResult:
    """A quoted string: case-insensitive, not glued to letters ("s" is not any s)."""
    text = term.text
    left = r"(?<!\w)" if text[:1].isalnum() or text[:1] == "_" else ""
    right = r"(?!\w)" if text[-1:].isalnum() or text[-1:] == "_" else ""
    found = re.search(left + re.escape(text) + right, view.code, re.IGNORECASE)
    if found is not None:
        return TermResult(term, True, view.label_offset(found.start()))
    return TermResult(term, False, "not in the cited range")


def _match_number(term: ClaimTerm, view: _RangeView) -> TermResult:
    """A number as a whole token ("10" is not in "100" or "1.0"); ``1_000`` reads as 1000."""
    digits = re.escape(term.text)
    found = re.search(rf"(?<![\w.]){digits}(?![\w.])", view.code.replace("_", ""))
    if found is not None:
        return TermResult(term, True, view.label_offset(found.start()))
    return TermResult(term, False, "not in the cited range")


def _match_word(term: ClaimTerm, view: _RangeView, enforce_kind: bool) -> TermResult:
    word = term.text.lower()
    if term.expected_kind is not None and enforce_kind:
        # Soft expectation ("a save method"): report the definition when there is one.
        for d in view.definitions + view.enclosing:
            if d.name.lower() == word and d.kind in KIND_FAMILIES[term.expected_kind]:
                return TermResult(term, True, f"{d.kind} {view.where(d)}")
    if word in view.lower:
        token, line = view.lower[word]
        return TermResult(term, True, view.label(line, token))
    hit = view.find_stem(word)
    if hit is not None:
        token, line = hit
        return TermResult(term, True, f"as `{token}`, {view.label(line, token)}")
    return TermResult(term, False, "not in the cited range")


def _match_term(
    term: ClaimTerm,
    view: _RangeView,
    config: ExtractiveConfig,
    enforce_kind: bool,
    definitions: bool = True,
) -> TermResult:
    """Look for one term in the range (rules in the module docstring).

    With ``definitions=False`` names are looked up among the range's tokens only
    (no parse): enough to know what is present, not what is defined.
    """
    if term.kind == "word":
        return _match_word(term, view, enforce_kind)
    if term.kind == "quoted":
        return _match_quoted(term, view)
    if term.kind == "number":
        return _match_number(term, view)
    if _NAME_RE.fullmatch(term.text):
        if not definitions:
            return _match_used(term, view, config)
        return _match_name(term, view, config, enforce_kind)
    return _match_code(term, view)


def _hint(
    missing: list[TermResult],
    index: SymbolIndex,
    start: int,
    end: int,
    file_text_lines: Callable[[int, int], str] | None = None,
    definitions: bool = True,
) -> tuple[str | None, tuple[int, int] | None]:
    """Where missing names are in the rest of the file (definitions first, then uses).

    ``definitions=False`` looks for uses only, without parsing the file: the hint
    of a claim the judge decides is evidence, not worth a parse of its own.
    """
    notes: list[str] = []
    lines: tuple[int, int] | None = None
    cited = f"the cited range {start}-{end}"
    for result in missing:
        if not result.strong or not _NAME_RE.fullmatch(result.term.text):
            continue
        name = result.term.text
        expected = result.term.expected_kind
        defs = (
            [
                d
                for d in index.find_definition(name)
                or index.find_definition(name, case_sensitive=False)
                if not start <= d.name_line <= end
            ]
            if definitions
            else []
        )
        if expected is not None:
            # A name present here with another kind: only a definition of the
            # claimed kind elsewhere is worth pointing to.
            fitting = [d for d in defs if d.kind in KIND_FAMILIES[expected]]
            defs = fitting or ([] if result.in_range else defs)
        if defs:
            d = min(defs, key=lambda d: min(abs(d.name_line - start), abs(d.name_line - end)))
            span = (
                f"line {d.start_line}"
                if d.start_line == d.end_line
                else (f"lines {d.start_line}-{d.end_line}")
            )
            notes.append(f"`{name}` is defined at {span} ({d.kind}), outside {cited}")
            lines = lines or (d.start_line, d.end_line)
            continue
        if result.in_range:
            continue
        occurrences = index.lines_with(name) or index.lines_with(_last_part(name))
        outside = [n for n in occurrences if not start <= n <= end]
        if outside:
            near = min(outside, key=lambda n: min(abs(n - start), abs(n - end)))
            shown = ", ".join(str(n) for n in outside[:5]) + (", ..." if len(outside) > 5 else "")
            plural = "s" if len(outside) > 1 else ""
            quote = ""
            if file_text_lines is not None:
                text = " ".join(file_text_lines(near, near).split())
                quote = f" (line {near}: `{text[:80]}`)" if text else ""
            notes.append(f"`{name}` appears at line{plural} {shown}, outside {cited}{quote}")
            lines = lines or (near, near)
    return ("; ".join(notes) or None), lines


def content_terms(
    parse: ClaimParse,
    index: SymbolIndex,
    ignore_names: frozenset[str] = frozenset(),
) -> list[ClaimTerm]:
    """The claim's terms that are worth looking for in this file (README, "Content terms").

    Names, code, quoted strings and numbers always are, except names in
    ``ignore_names`` (the project's own name, the cited file's name: they
    locate the code rather than describe it). A prose word is content only
    when the file's code uses it as (part of) an identifier: "headers" in a
    file with ``headers`` / ``merge_headers``, not "ships" or "instead".
    General English words never got this far (:func:`citecal.verify._terms.general_words`).
    """
    out: list[ClaimTerm] = []
    for term in parse.terms:
        named = term.kind in ("code_span", "identifier") and _NAME_RE.fullmatch(term.text)
        if named and {term.text.lower(), _last_part(term.text).lower()} & ignore_names:
            continue
        if term.kind == "word":
            if term.text not in ignore_names and _is_symbol_word(term.text, index):
                out.append(term)
            continue
        out.append(term)
    return out


def _is_symbol_word(word: str, index: SymbolIndex) -> bool:
    """The word, or its Snowball stem, is a part of one of the file's identifiers."""
    return word in index.symbol_words() or stem(word) in index.symbol_stems(stem)


def _is_required_name(term: ClaimTerm, negated: frozenset[str]) -> bool:
    """A code name whose absence from the range counts against the citation."""
    return (
        term.kind in ("code_span", "identifier")
        and _NAME_RE.fullmatch(term.text) is not None
        and term.text.lower() not in negated
        and len(_last_part(term.text)) > 1
        and term.text.lower() not in LANGUAGE_LITERALS
    )


def _coverage(results: list[TermResult]) -> float:
    total = sum(r.weight for r in results)
    return round(sum(r.weight for r in results if r.found) / total, 4) if total else 0.0


def _describe(results: list[TermResult]) -> str:
    found = [r for r in results if r.found]
    missing = [r for r in results if not r.found]
    text = f"{len(found)} of {len(results)} content terms found (score {_coverage(results):.2f})"
    if found:
        text += ": " + ", ".join(f"{_show(r.term)} ({r.where})" for r in found)
    if missing:
        text += "; missing: " + ", ".join(f"{_show(r.term)} ({r.where})" for r in missing)
    return text


def coverage_verdict(verdict: Verdict, config: ExtractiveConfig) -> Verdict:
    """The term-coverage verdict (README "Routing") for a claim rules left undecided.

    Only used when ``classify.default_unknown_handling = "extractive"`` keeps
    unknown claims away from the judge: the score thresholds decide, with
    medium confidence, because coverage is not proof either way.
    """
    score = verdict.score if verdict.score is not None else 0.0
    label: VerdictLabel = (
        "supports"
        if score >= config.supports_threshold
        else "partial"
        if score >= config.partial_threshold
        else "not_supports"
    )
    return replace(
        verdict,
        verdict=label,
        confidence="medium",
        reasoning=f"{verdict.reasoning} Term coverage decides ({label}): "
        "unknown claims are handled as extractive.",
    )


def verify_extractive(
    claim: str,
    code: str,
    start_line: int,
    end_line: int,
    index: SymbolIndex,
    config: ExtractiveConfig,
    file_text_lines: Callable[[int, int], str] | None = None,
    ignore_names: frozenset[str] = frozenset(),
) -> Verdict:
    """Decide ``claim`` against the cited lines by rules, where rules can prove it.

    Rules decide only what they can prove (README, "Routing"):

    * ``not_supports`` (high) when a code name the claim gives (a code span
      or identifier, not one it mentions after "not"/"rather than", not the
      project's or file's own name) occurs nowhere in the cited range, not
      even as part of another name or within two edits. ``hint`` says where
      the name is in the file, for ``fix_reference`` / ``expand_range``.
    * ``supports`` (high) when the claim is a literal statement of what the
      range contains (:mod:`citecal.verify._literal`), its frame checks hold
      and every content term is found exactly (no fuzzy or part matches).
    * otherwise ``unverified``: the judge decides, and this verdict's terms
      and reasoning are the evidence it is shown.

    Args:
        claim: The claim sentence (citation markers are ignored).
        code: The cited lines' text (``ValidationResult.cited_content``).
        start_line: First cited line (1-indexed).
        end_line: Last cited line (inclusive).
        index: The cited file's symbol index, built once per file by the caller.
        config: Fuzzy-matching settings.
        file_text_lines: Optional ``SourceFile.lines``-like accessor; a hint
            about a name used (not defined) elsewhere in the file quotes that line.
        ignore_names: Lower-cased names that are never required (project name,
            the cited file's stem).

    Returns:
        A ``method="extractive"`` verdict; ``score`` is the weighted share of
        content terms found (names weigh more than words).
    """
    parse = parse_claim(claim)
    terms = content_terms(parse, index, ignore_names)
    if not terms:
        return Verdict(
            verdict="unverified",
            method="extractive",
            confidence="low",
            score=None,
            reasoning="no checkable terms: the judge decides",
        )
    view = _RangeView(code, start_line, end_line, index, config)
    negated = parse.negated
    # Tokens first: most claims are routed without knowing the file's definitions,
    # and tree-sitter runs only when a decision needs them (README "Routing").
    results = [_match_term(t, view, config, enforce_kind=False, definitions=False) for t in terms]
    full = index.parseable

    def refine(keep: Callable[[TermResult], bool]) -> None:
        view.kinds = True
        for i, r in enumerate(results):
            if full and keep(r):
                results[i] = _match_term(r.term, view, config, enforce_kind=True)

    named = [r for r in results if _is_required_name(r.term, negated)]
    if sum(not r.found for r in named) * 2 > len(named):
        # A reject is possible: a name not among the range's tokens may still be
        # the definition around the range.
        refine(lambda r: not r.found and _is_required_name(r.term, negated))
        named = [r for r in results if _is_required_name(r.term, negated)]
    absent = [r for r in named if not r.found and not r.in_range]
    if absent and file_text_lines is not None and start_line > 1:
        results = _found_just_above(results, absent, start_line, file_text_lines)
        named = [r for r in results if _is_required_name(r.term, negated)]
        absent = [r for r in named if not r.found and not r.in_range]
    missing = [r for r in results if not r.found]
    # Without a symbol index the definition around the range is unknown, and its name is
    # context, not content: no rejection by rule there (docs/explanation/routing.md).
    blind = not full and is_code_language(index.language)
    if absent and len(absent) * 2 > len(named) and not blind:
        names = ", ".join(_show(r.term) for r in absent)
        return _rule_verdict(
            "not_supports",
            "high",
            results,
            f"not_supports: {names} {'is' if len(absent) == 1 else 'are'} not in the cited lines.",
            _hint(missing, index, start_line, end_line, file_text_lines),
        )
    prose = frozenset(t.text for t in parse.terms if t.kind == "word") - {
        t.text for t in terms if t.kind == "word"
    }
    why = literal_form(parse, prose)
    main = {x.text for x in main_statement(parse.sequence) if isinstance(x, ClaimTerm)}

    def exact() -> bool:
        return all(
            r.found and not r.fuzzy
            for r in results
            if r.term.text.lower() not in negated and (r.term.text in main or r.term.kind != "word")
        )

    if why is None:
        refine(lambda r: True)
        literal = check_literal(parse, view, prose)
        if literal.holds and exact():
            frames = ", ".join(dict.fromkeys(literal.frames))
            return _rule_verdict(
                "supports",
                "high",
                results,
                f"supports: a literal statement ({frames}) the cited lines show.",
                (None, None),
            )
        why = (
            literal.reason
            if not literal.holds
            else "some terms are missing or match only approximately"
        )
    missing = [r for r in results if not r.found]
    hint = _hint(missing, index, start_line, end_line, file_text_lines, definitions=view.kinds)
    return _rule_verdict(
        "unverified", "low", results, f"Rules cannot decide ({why}): the judge decides.", hint
    )


CONTEXT_ABOVE = 3
"""Lines above a range a reader sees with it: a signature, a decorator, a doc comment."""


def _found_just_above(
    results: list[TermResult],
    absent: list[TermResult],
    start_line: int,
    file_text_lines: Callable[[int, int], str],
) -> list[TermResult]:
    """Absent names that the few lines above the range show count as context, not missing.

    Where no parser knows the language's definitions (or a definition's span
    was cut short), the signature just above a range still names the function
    the lines belong to (README "The cascade").
    """
    above = file_text_lines(max(1, start_line - CONTEXT_ABOVE), start_line - 1)
    if not above:
        return results
    out = list(results)
    for i, r in enumerate(out):
        if r not in absent:
            continue
        name = _last_part(r.term.text.strip("`").split("(")[0])
        if len(name) < 2:
            continue
        lines = above.split("\n")
        for k, text in enumerate(lines):
            if _declares(text, name):
                line = start_line - len(lines) + k
                out[i] = TermResult(
                    r.term, True, f"declared just above the cited range, line {line}"
                )
                break
    return out


_DECL_WORDS = (
    r"def|class|func|fn|function|fun|interface|struct|enum|impl|trait|object|type|module|"
    r"namespace|val|var|let|const|static|public|private|protected|internal|override|async|"
    r"export|pub|macro_rules!|#define"
)


@lru_cache(maxsize=4096)
def _declaration_patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The two patterns of :func:`_declares` for one name, compiled once per run and name."""
    n = re.escape(name)
    return (
        re.compile(rf"(?:^|[\s(])(?:{_DECL_WORDS})\b[^\n]*(?<![\w$]){n}(?![\w$])"),
        re.compile(rf"(?<![\w$.]){n}\s*(?:<[^>]*>)?\s*\([^\n]*[{{:=]\s*$"),
    )


def _declares(line: str, name: str) -> bool:
    """A line that declares ``name``: a declaration keyword before it, or a signature."""
    if name not in line:  # both patterns match the name itself
        return False
    keyword, signature = _declaration_patterns(name)
    return keyword.search(line) is not None or signature.search(line) is not None


def _rule_verdict(
    label: VerdictLabel,
    confidence: Confidence,
    results: list[TermResult],
    why: str,
    hint: tuple[str | None, tuple[int, int] | None],
) -> Verdict:
    return Verdict(
        verdict=label,
        method="extractive",
        confidence=confidence,
        score=_coverage(results),
        reasoning=f"{_describe(results)}. {why}",
        matched_terms=tuple(r.term.text for r in results if r.found),
        missing_terms=tuple(r.term.text for r in results if not r.found),
        hint=hint[0],
        hint_lines=hint[1],
    )


__all__ = [
    "KIND_FAMILIES",
    "TERM_WEIGHTS",
    "TermResult",
    "content_terms",
    "coverage_verdict",
    "stem",
    "verify_extractive",
]
