"""Checkable terms of a claim (README "Routing"): what extractive verification looks for.

A claim such as "The `validate_token` function checks the expiry timestamp"
yields ``validate_token`` (a code span that must be a *function definition*),
``expiry`` and ``timestamp`` (content words). Everything else is either a
stop word or a *generic* word: words about code in general ("function",
"class", "file") and relation verbs ("returns", "checks", "uses", "calls")
that hold between the named things rather than naming something one could
find in the code. Abstract verbs from the abstractive indicator list
("handles", "ensures") are generic too: they are for the judge, not for
string matching.

Term kinds, strongest first: ``code_span`` (backticks), ``identifier``
(CamelCase, snake_case, dotted, ``name()``, or a capitalised word next to a
kind word such as "the User class"), ``quoted`` ("..." or '...'), ``word``.
Numbers outside code spans ("3 retries", "500ms", "HTTP 429") and file paths
are not terms: a prose number is as often a count or a paraphrase ("24
hours" for ``86400``) as a literal, and a path locates code rather than
describing it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

TermKind = Literal["code_span", "identifier", "quoted", "number", "word"]

ExpectedKind = Literal[
    "class",
    "function",
    "method",
    "field",
    "property",
    "variable",
    "constant",
    "interface",
    "struct",
    "enum",
]
"""Definition kinds a claim can ask for ("the X class", "method Y", "field Z")."""


@dataclass(frozen=True, slots=True)
class ClaimTerm:
    """One thing the cited code must contain for the claim to hold.

    ``expected_kind`` is set when the claim says what the name *is*
    ("the `User` class", "function parse", "fields `name` and `email`"):
    the cited range must then contain a definition of that kind.
    """

    text: str
    kind: TermKind
    expected_kind: ExpectedKind | None = None


def _words(text: str) -> frozenset[str]:
    """A word list written as whitespace-separated text (easier to read and extend)."""
    return frozenset(text.split())


# Kind words (singular and plural) → the definition kind they announce.
KIND_WORDS: dict[str, ExpectedKind] = {
    "function": "function",
    "functions": "function",
    "func": "function",
    "method": "method",
    "methods": "method",
    "constructor": "method",
    "class": "class",
    "classes": "class",
    "model": "class",
    "models": "class",
    "field": "field",
    "fields": "field",
    "attribute": "field",
    "attributes": "field",
    "property": "property",
    "properties": "property",
    "getter": "property",
    "getters": "property",
    "member": "field",
    "members": "field",
    "variable": "variable",
    "variables": "variable",
    "constant": "constant",
    "constants": "constant",
    "interface": "interface",
    "interfaces": "interface",
    "trait": "interface",
    "traits": "interface",
    "struct": "struct",
    "structs": "struct",
    "enum": "enum",
    "enums": "enum",
    "exception": "class",
    "exceptions": "class",
}

CODE_WORDS = _words(
    """function functions func method methods class classes module modules file files code
    codebase line lines variable variables field fields attribute attributes property
    properties constant constants parameter parameters param params argument arguments arg
    args value values object objects instance instances type types member members
    constructor interface interfaces struct structs enum enums trait traits model models
    implementation logic statement statements expression expressions block body helper
    helpers utility utilities routine call calls called calling invoke invokes invoked
    return returns returned returning raise raises raised throw throws thrown import imports
    imported export exports exported define defines defined declare declares declared
    locate located find finds found name named names contain contains contained include
    includes included use uses used using take takes taken accept accepts accepted
    implement implements implemented extend extends extended inherit inherits inherited
    subclass subclasses delegate delegates delegated wrap wraps wrapped default defaults
    signature signatures package packages crate crates library set sets equals assigns
    has have holds hold exposes forwards forward receives receive expects expect embeds
    embed derives derive re-exports passes pass passed result check checks checked checking
    get gets make makes made do does perform performs exist exists existing provide provides
    provided handle handles handled handling manage manages managed responsible ensure
    ensures ensured guarantee guarantees prevent prevents prevented architecture design
    pattern patterns approach mechanism way case cases part parts thing things example
    following above below here see shown show shows given specific various several many
    multiple certain main simple basic standard"""
)
"""Words about code in general and relation verbs: the vocabulary of statements about
what code contains (see :mod:`citecal.verify._literal`), never content to look for."""

_GENERAL_CACHE: dict[float, frozenset[str]] = {}
GENERAL_WORD_ZIPF = 5.0


def _forget_frequencies() -> None:
    """Drop wordfreq's memoised frequency tables once the word set is made.

    The English tables take ~38 MB per process and citecal needs only the
    thousand-odd words above the cut-off: an eval-batch worker keeps them
    under its memory line (README "Many reports").
    """
    import wordfreq

    for name in ("get_frequency_dict", "get_frequency_list", "top_n_list"):
        cached = getattr(wordfreq, name, None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()


def general_words(min_zipf: float = GENERAL_WORD_ZIPF) -> frozenset[str]:
    """English words at least as frequent as ``min_zipf`` on the Zipf scale (wordfreq).

    Such words ("every", "instead", "value", "only") say nothing checkable about a
    particular piece of code. The list comes from wordfreq's English frequencies
    (bundled with the package, read offline) rather than a hand-grown stop list;
    a Zipf value of 5 is a word used about once per 100 000 words. wordfreq's
    ranked list is in frequency order, so the cut-off is found by bisection.
    """
    words = _GENERAL_CACHE.get(min_zipf)
    if words is None:
        from wordfreq import top_n_list, zipf_frequency

        ranked = top_n_list("en", 5000)
        lo, hi = 0, len(ranked)
        while lo < hi:  # first index whose Zipf frequency is below the cut-off
            mid = (lo + hi) // 2
            if zipf_frequency(ranked[mid], "en") >= min_zipf:
                lo = mid + 1
            else:
                hi = mid
        words = frozenset(w for w in ranked[:lo] if w.isalpha())
        _GENERAL_CACHE[min_zipf] = words
        _forget_frequencies()
    return words


_MODIFIERS = _words(
    """the a an this that its their our helper async static private public protected
    abstract internal exported nested inner outer top-level base parent child wrapper
    utility factory main same each every another other given single separate dedicated
    custom global local new old anonymous arrow default generic core"""
)
"""Words that may stand between "the" and a kind word without being a name."""

_CLOSED_CLASS = _words(
    """a an the and or but of in on at to for from with by as is are was were be been it its
    this that these those which who whom whose what when where why how not no nor all any
    both each every either neither few more most much many some such own only same so than
    too very can will just should now also into onto over under about after before"""
)
"""Function words: never a name, even right before a kind word ("every method")."""

_CITATION_RE = re.compile(r"\[[^\[\]\n]*?:\s*L?[0-9]+[^\[\]\n]*\]")
_FENCE_RE = re.compile(r"`([^`\n]+)`")
_DOUBLE_QUOTED_RE = re.compile(r"[\"“”]([^\"“”\n]{1,200})[\"“”]")
_SINGLE_QUOTED_RE = re.compile(r"(?<![\w'])['‘]([^'‘’\n]{1,200})['’](?![\w'])")
_TOKEN_RE = re.compile(
    r"(?P<sep>,|\band\b|\bor\b|&)"
    r"|(?P<number>\d[\w.]*)"
    r"|(?P<ident>[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::)[A-Za-z_$][A-Za-z0-9_$]*)*(?:\(\))?)"
    r"|(?P<other>\S)"
)
_PLACEHOLDER_RE = re.compile(r"(\x00\d+\x00)")
_FILE_PATH_RE = re.compile(
    r"(?:\.{0,2}/|~/)\S*|\S+/|[\w./@-]+\.(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|go|java|rs|rb|c|h|cc|cpp|"
    r"hpp|cs|php|kt|swift|md|rst|txt|json|toml|yaml|yml|cfg|ini|lock|html|css|sh|sql)"
    r"|(?:[a-z][\w-]*\.)+(?:io|com|org|net|dev)(?:/\S*)?|[a-z]+://\S+",
    re.IGNORECASE,
)
"""A code span that is a file path (``src/auth.py``, ``./lib/``), not code.
Stricter than :data:`_PATH_RE`: ``cart/itemAdded`` in backticks is a string."""
_CALL_SUFFIX_RE = re.compile(r"\((?:[^()]*)\)$")
_SIMPLE_NAME_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::)[A-Za-z_$][A-Za-z0-9_$]*)*")
_DECL_PREFIX_RE = re.compile(
    r"^(?:(?:async|export|pub|public|private|static|default)\s+)*"
    r"(?P<kw>def|class|function|func|fn|struct|interface|enum|trait|type|const|let|var)\s+"
    r"(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)\s*(?:\(.*\)?|<.*>?|\{.*|:.*)?$"
)
_DECL_KIND: dict[str, ExpectedKind] = {
    "def": "function",
    "function": "function",
    "func": "function",
    "fn": "function",
    "class": "class",
    "struct": "struct",
    "interface": "interface",
    "trait": "interface",
    "enum": "enum",
    "const": "constant",
    "let": "variable",
    "var": "variable",
}
_PATH_RE = re.compile(
    r"(?<![\w`])(?:\.{0,2}/)?(?:[\w.@-]+/)+[\w.@-]*[\w]"
    r"|\b[\w-]+\.(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|go|java|rs|rb|c|h|cc|cpp|hpp|cs|php|kt|"
    r"swift|md|rst|txt|json|toml|yaml|yml|cfg|ini|lock|html|css|sh|sql)\b"
    r"|\b(?:[a-z][\w-]*\.)+(?:io|com|org|net|dev)\b|\b[a-z]+://\S+",
    re.IGNORECASE,
)
"""File paths, file names, domains and URLs: they locate things rather than describe code."""
_CAMEL_RE = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_ACRONYM_RE = re.compile(r"[A-Z][A-Z0-9]+s?")


def strip_citations(claim: str) -> str:
    """The claim without its ``[path:10-25]`` citation markers (they are not terms)."""
    return _CITATION_RE.sub(" ", claim)


def _is_identifier_shape(token: str) -> bool:
    """CamelCase / camelCase / snake_case / dotted / ``name()`` / UPPER_SNAKE."""
    if token.endswith("()") or "." in token or "::" in token:
        return True
    core = token.strip("_$")
    if "_" in core or "$" in token:
        return True
    if token.startswith("_") and len(core) > 0:
        return True
    return bool(_CAMEL_RE.search(token)) and not _ACRONYM_RE.fullmatch(token)


def _code_span_term(content: str) -> ClaimTerm | None:
    """Term for a code span: a name (call parens and declaration keywords removed) or code."""
    text = content.strip()
    if not text or _FILE_PATH_RE.fullmatch(text):
        return None
    decl = _DECL_PREFIX_RE.match(text)
    if decl and decl.group("kw") != "type":
        return ClaimTerm(decl.group("name"), "code_span", _DECL_KIND.get(decl.group("kw")))
    if decl:
        return ClaimTerm(decl.group("name"), "code_span")
    stripped = _CALL_SUFFIX_RE.sub("", text).strip()
    if stripped.startswith("@"):
        stripped = stripped[1:]
    if _SIMPLE_NAME_RE.fullmatch(stripped):
        return ClaimTerm(stripped, "code_span")
    return ClaimTerm(text, "code_span")


@dataclass(slots=True)
class _Token:
    text: str
    kind: str  # "term", "kind", "sep", "stop", "other"
    term: ClaimTerm | None = None
    capitalised: bool = False


def _tokenize(claim: str) -> list[_Token]:
    """Claim → tokens, with code spans and quotes replaced by single term tokens."""
    placeholders: list[ClaimTerm] = []

    def hold(term: ClaimTerm | None) -> str:
        if term is None:
            return " "
        placeholders.append(term)
        return f" \x00{len(placeholders) - 1}\x00 "

    text = _FENCE_RE.sub(lambda m: hold(_code_span_term(m.group(1))), claim)
    text = _DOUBLE_QUOTED_RE.sub(lambda m: hold(ClaimTerm(m.group(1).strip(), "quoted")), text)
    text = _SINGLE_QUOTED_RE.sub(lambda m: hold(ClaimTerm(m.group(1).strip(), "quoted")), text)
    text = _PATH_RE.sub(" ", text)
    tokens: list[_Token] = []
    sentence_start = True
    for piece in _PLACEHOLDER_RE.split(text):
        if piece.startswith("\x00"):
            term = placeholders[int(piece.strip("\x00"))]
            tokens.append(_Token(term.text, "term", term if term.text else None))
            sentence_start = False
            continue
        for match in _TOKEN_RE.finditer(piece):
            if match.group("sep"):
                tokens.append(_Token(match.group(), "sep"))
                continue
            if match.group("number"):
                tokens.append(_number_token(match.group()))
                sentence_start = False
                continue
            if match.group("other"):
                char = match.group()
                tokens.append(_Token(char, "other"))
                if char in ".!?:":
                    sentence_start = True
                continue
            raw = match.group("ident")
            after_number = (
                bool(tokens) and tokens[-1].term is not None and (tokens[-1].term.kind == "number")
            )
            if after_number and raw.lower() in UNIT_WORDS:  # "10 KiB", "30 seconds"
                tokens.append(_Token(raw, "stop"))
            else:
                tokens.append(_classify_word(raw, sentence_start))
            sentence_start = False
    return tokens


_PLAIN_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")


def _number_token(raw: str) -> _Token:
    """A plain number ("10", "0.5") is a term; "500ms", "5xx", "2.0.1" are not words either."""
    if _PLAIN_NUMBER_RE.fullmatch(raw):
        return _Token(raw, "term", ClaimTerm(raw, "number"))
    return _Token(raw, "other")


def _classify_word(raw: str, sentence_start: bool) -> _Token:
    """A fresh token for one word (later stages change tokens in place)."""
    text, kind, term, capitalised = _word_class(raw, sentence_start)
    return _Token(text, kind, term, capitalised)


@lru_cache(maxsize=65536)
def _word_class(raw: str, sentence_start: bool) -> tuple[str, str, ClaimTerm | None, bool]:
    token = _classify(raw, sentence_start)
    return token.text, token.kind, token.term, token.capitalised


def _classify(raw: str, sentence_start: bool) -> _Token:
    lower = raw.lower()
    if lower in KIND_WORDS:
        return _Token(raw, "kind")
    if lower in CODE_WORDS or lower in NEGATION_CUES or lower in general_words():
        return _Token(raw, "stop")
    if "." in raw and all(len(part) <= 2 for part in raw.split(".")):
        return _Token(raw, "stop")  # e.g, i.e, p.m, vs
    if len(raw) <= 3 and raw.isalpha():  # units and abbreviations: KiB, ms, URL
        return _Token(raw, "term", ClaimTerm(lower, "word"))
    if _is_identifier_shape(raw):
        name = raw[:-2] if raw.endswith("()") else raw
        return _Token(name, "term", ClaimTerm(name, "identifier"))
    if len(raw) < 2 or raw.isdigit():
        return _Token(raw, "other")
    capitalised = raw[0].isupper() and not sentence_start and not _ACRONYM_RE.fullmatch(raw)
    return _Token(raw, "term", ClaimTerm(lower, "word"), capitalised=capitalised)


def _name_term(token: _Token, kind: ExpectedKind, *, after: bool) -> ClaimTerm | None:
    """The term ``token`` becomes when a kind word names it, or ``None`` if it cannot be a name."""
    term = token.term
    if term is None:
        return None
    if term.kind in ("code_span", "identifier"):
        if term.expected_kind is not None or " " in term.text:
            return term
        return replace(term, expected_kind=kind)
    if term.kind == "word" and token.capitalised:
        return ClaimTerm(token.text, "identifier", kind)
    if term.kind == "word" and not after and term.text not in _MODIFIERS:
        # "a save method": a soft expectation (see ``extract_terms``).
        return replace(term, expected_kind=kind)
    return None


def _assign_kinds(tokens: list[_Token]) -> None:
    """Give names next to kind words their expected kind, in place.

    "the `X` function", "X class" (name before) and "function X",
    "fields `a`, `b` and `c`" (name or list after) are both recognised.
    """
    for i, token in enumerate(tokens):
        if token.kind != "kind":
            continue
        prev = tokens[i - 1] if i else None
        if (
            prev is not None
            and prev.kind == "stop"
            and prev.text.isalpha()
            and prev.text.lower() not in _MODIFIERS
            and prev.text.lower() not in CODE_WORDS
            and prev.text.lower() not in _CLOSED_CLASS
        ):
            # "a save method": a common English word right before a kind word names it.
            prev.kind, prev.term = "term", ClaimTerm(prev.text.lower(), "word")
        kind = KIND_WORDS[token.text.lower()]
        plural = token.text.lower().endswith("s") and token.text.lower() != "class"
        # Name(s) before: "the `User` class", "`a` and `b` fields".
        j = i - 1
        named_before = False
        while j >= 0:
            prev = tokens[j]
            new = _name_term(prev, kind, after=False) if prev.kind == "term" else None
            if new is None:
                break
            prev.term = new
            named_before = True
            j -= 1
            if not plural or j < 0 or tokens[j].kind != "sep":
                break
            while j >= 0 and tokens[j].kind == "sep":
                j -= 1
        if named_before:
            continue
        # Name(s) after: "function `parse`", "fields `a`, `b` and `c`".
        j = i + 1
        while j < len(tokens):
            nxt = tokens[j]
            new = _name_term(nxt, kind, after=True) if nxt.kind == "term" else None
            if new is None:
                break
            nxt.term = new
            j += 1
            if not plural or j >= len(tokens) or tokens[j].kind != "sep":
                break
            while j < len(tokens) and tokens[j].kind == "sep":
                j += 1


UNIT_WORDS = _words(
    """b byte bytes kb kib mb mib gb gib bit bits s sec secs second seconds ms millisecond
    milliseconds us microseconds ns minute minutes min h hour hours day days char chars
    character characters percent times entries items elements"""
)
"""Units right after a number ("10 KiB", "30 seconds"): part of the number, not a term."""

NEGATION_CUES = _words("not nor never without unlike instead rather than except neither")
"""Words after which a named thing is what the code is *not* or does *not* use
("derives from `BadData`, not from `BadSignature`", "rather than `==`")."""
_NEGATION_WINDOW = 4


@dataclass(frozen=True, slots=True)
class ClaimParse:
    """A claim as the verifier reads it.

    ``terms`` as :func:`extract_terms`; ``words`` the lower-cased words that are
    not terms (function words, general English, code vocabulary, kind words),
    in order, which is what :mod:`citecal.verify._literal` reads to tell a
    statement of what code contains from a description of what it does;
    ``negated`` the lower-cased terms the claim names only after a negation
    ("not", "rather than", "unlike"): the code need not contain those.
    ``sequence`` is the claim in order: a term (after de-duplication, the
    strongest reading of it) or a lower-cased word, separators as ``","``.
    """

    terms: tuple[ClaimTerm, ...]
    words: tuple[str, ...]
    negated: frozenset[str]
    sequence: tuple[ClaimTerm | str, ...] = ()


def _ends_list_item(tokens: list[_Token], n: int) -> bool:
    """Token ``n`` closes a list item: a separator, punctuation or the end follows it."""
    if n + 1 >= len(tokens):
        return True
    nxt = tokens[n + 1]
    return (
        nxt.kind == "sep"
        or nxt.text.lower() == "nor"
        or (nxt.kind == "other" and nxt.text in ".;:,!?)")
    )


def parse_claim(claim: str) -> ClaimParse:
    """Terms, function words and negated names of ``claim`` (memoised)."""
    return _parse_claim(claim)


@lru_cache(maxsize=4096)
def _parse_claim(claim: str) -> ClaimParse:
    tokens = _tokenize(strip_citations(claim))
    _assign_kinds(tokens)
    words: list[str] = []
    negated: set[str] = set()
    window = 0  # > 0: tokens left to find the negated name; -1: just after one (a list?)
    listing = False  # the window continues a list after a negated name
    for n, token in enumerate(tokens):
        if token.kind in ("stop", "kind"):
            low = token.text.lower()
            words.append(low)
            if low in NEGATION_CUES:
                window, listing = _NEGATION_WINDOW, False
                continue
        if window == -1:
            window = 2 if token.kind == "sep" else 0  # "not `a`, `b` or `c`"
            listing = window > 0
        elif window > 0 and not listing and token.text == ",":
            window = 0  # "for patterns that do not end in `/`, `Mount` ...": the clause ended
        elif token.kind == "term" and token.term is not None and window:
            if listing and tokens[n - 1].text == "," and not _ends_list_item(tokens, n):
                # "do not end in `/`, `Mount` registers ...": a name followed by its verb
                # starts a new clause; it is not one more item of the negated list.
                window = 0
                continue
            negated.add(token.term.text.lower())
            window = -1
        elif token.kind == "other" and token.text in ".;:,!?":
            window = 0
        elif window > 0:
            window -= 1
    terms = _dedupe(tokens)
    by_key = {t.text.lower(): t for t in terms}
    sequence: list[ClaimTerm | str] = []
    for token in tokens:
        if token.kind == "term" and token.term is not None and token.term.text:
            sequence.append(by_key.get(token.term.text.lower(), token.term))
        elif token.kind in ("stop", "kind"):
            sequence.append(token.text.lower())
        elif token.kind == "sep":
            sequence.append(",")
        elif token.kind == "other" and token.text in ".;:!?":
            sequence.append(token.text)
    return ClaimParse(terms, tuple(words), frozenset(negated), tuple(sequence))


def extract_terms(claim: str) -> list[ClaimTerm]:
    """Checkable terms of ``claim``, in order of appearance, without duplicates.

    Citation markers are removed first. Duplicates (case-insensitive) keep
    the first occurrence, upgraded to the strongest kind and the expected
    definition kind of any occurrence.

    A plain lower-case ``word`` right before a kind word ("a save method")
    gets an expected kind too, but the verifier treats it as a *soft*
    expectation: it is reported as a definition when one exists and
    otherwise matched as an ordinary word, because "the validation
    function" is as often a description as a name. A capitalised word next
    to a kind word ("the User class", "class User") becomes an identifier
    with a firm expectation.

    Examples:
        >>> [t.text for t in extract_terms("The `validate_token` function checks expiry")]
        ['validate_token', 'expiry']

    Memoised (the result is rebuilt from an immutable tuple): a claim backed
    by several citations is verified once per citation.
    """
    return list(_extract_terms(claim))


def _extract_terms(claim: str) -> tuple[ClaimTerm, ...]:
    return _parse_claim(claim).terms


def _dedupe(tokens: list[_Token]) -> tuple[ClaimTerm, ...]:
    strength = {"code_span": 3, "identifier": 2, "quoted": 1, "number": 1, "word": 0}
    out: dict[str, ClaimTerm] = {}
    for token in tokens:
        term = token.term
        if token.kind != "term" or term is None or not term.text:
            continue
        key = term.text.lower()
        seen = out.get(key)
        if seen is None:
            out[key] = term
            continue
        kind = term.kind if strength[term.kind] > strength[seen.kind] else seen.kind
        expected = seen.expected_kind or term.expected_kind
        out[key] = ClaimTerm(seen.text if kind == seen.kind else term.text, kind, expected)
    return tuple(out.values())


__all__ = [
    "CODE_WORDS",
    "KIND_WORDS",
    "NEGATION_CUES",
    "ClaimParse",
    "ClaimTerm",
    "extract_terms",
    "general_words",
    "parse_claim",
]
