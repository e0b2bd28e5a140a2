"""What a claim asks the locator to look for (README "`citecal correct`", Locate).

A failed citation's claim becomes a :class:`ClaimQuery`: the code names
verification requires (code spans, identifiers; README "Routing"), every
strong term (negated names too, quoted strings, numbers, code expressions),
the BM25 words, and what the ranking needs to know about the sentence — the
name it is about (:func:`claim_subject`), whether it says something raises,
whether it is about documentation. Two readings go beyond verification's,
because they say *where* rather than *whether*: a call written with its
arguments (`createInstance(defaults)`) is kept whole, so the line making the
call ranks above the definition; and a plain word written as a call
(``value(Number)``) is a name, with its arguments as search words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from citecal.correct._index import query_words
from citecal.verify import ClaimTerm, parse_claim
from citecal.verify._extractive import LANGUAGE_LITERALS

_NAME_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::)[A-Za-z_$][A-Za-z0-9_$]*)*")
_SPLIT_RE = re.compile(r"\.|::")
_STRONG = frozenset({"code_span", "identifier", "quoted", "number"})
_WEIGHT = {"code_span": 3.0, "identifier": 2.0, "quoted": 2.0, "number": 1.0}

MIN_LITERAL = 6
"""A quoted string or code expression this long is specific enough to place a claim by."""


def _last(name: str) -> str:
    return _SPLIT_RE.split(name)[-1]


def _norm(name: str) -> str:
    """Case, ``_`` and ``$`` aside (``validateToken`` = ``validate_token``), but leading
    underscores kept: ``__setProxy`` is an export of ``setProxy``, not the same name."""
    body = name.lstrip("_")
    return "_" * (len(name) - len(body)) + body.lower().replace("_", "").replace("$", "")


@dataclass(frozen=True, slots=True)
class ClaimQuery:
    """The parts of a claim the search uses."""

    names: tuple[ClaimTerm, ...]
    """Code names the verifier requires (not negated, not the project's own name)."""
    strong: tuple[ClaimTerm, ...]
    """Every code name (negated ones too), quoted strings, numbers and code expressions."""
    words: tuple[str, ...]
    """BM25 words of the whole claim."""
    raising: bool = False
    """The claim says something raises, throws or fails with an error."""
    subject: str | None = None
    """Normalised last part of the name the claim is about (:func:`claim_subject`)."""
    documented: bool = False
    """The claim is about documentation ("documented", "docstring", "doc comment")."""

    @property
    def locators(self) -> tuple[ClaimTerm, ...]:
        """Every code name the claim gives, negated ones included."""
        return tuple(t for t in self.strong if is_name(t))

    @property
    def searchable(self) -> bool:
        """Rules can place the claim: it names code, or quotes a distinctive literal."""
        return bool(self.locators) or any(len(t.text) >= MIN_LITERAL for t in self.strong)

    @property
    def weight(self) -> float:
        return sum(term_weight(t) for t in self.strong) or 1.0


def term_weight(term: ClaimTerm) -> float:
    """How much finding ``term`` says about a place: a short literal (`:`, `\\n`) little."""
    if not is_name(term) and len(term.text) < MIN_LITERAL:
        return 0.5
    return _WEIGHT[term.kind]


def is_name(term: ClaimTerm) -> bool:
    """A code name (a code span or identifier shaped like one), not an expression."""
    return term.kind in ("code_span", "identifier") and _NAME_RE.fullmatch(term.text) is not None


def claim_query(claim: str, ignore: frozenset[str] = frozenset()) -> ClaimQuery:
    """What to look for: the claim's required names, strong terms and words."""
    parse = parse_claim(claim)
    names: list[ClaimTerm] = []
    strong: list[ClaimTerm] = []
    for term in parse.terms:
        if term.kind not in _STRONG:
            continue
        text = term.text
        low = text.lower()
        if is_name(term):
            if {low, _last(low)} & ignore or low in LANGUAGE_LITERALS or len(_last(text)) < 2:
                continue
            if low not in parse.negated:  # a name after "not" still says where to look
                names.append(term)
        strong.append(term)
    # A call written with its arguments (`createInstance(defaults)`) is read as the name
    # by verification; the call itself says where: the line making it, not the definition.
    known = {t.text for t in strong}
    for match in _CALL_SPAN.finditer(claim):
        call = match.group(1)
        if call not in known and _last(match.group(2)).lower() not in ignore:
            strong.append(ClaimTerm(call, "code_span"))
            known.add(call)
    # A plain word written as a call (value(Number) validates ...) is code too, though
    # too common an English word for verification to require: it helps find the place.
    prose = _CODE_SPAN.sub(" ", claim)
    calls = []
    lowered = {t.text.lower() for t in strong}
    arguments: list[str] = []
    for match in _PROSE_CALL.finditer(prose):
        name = match.group(1)
        arguments.append(match.group(2))  # value(Number): the signature's words say which
        if name.lower() not in lowered and _last(name).lower() not in ignore:
            calls.append(ClaimTerm(name, "identifier"))
            lowered.add(name.lower())
    strong.extend(calls)
    words = query_words(" ".join([*(t.text for t in (*parse.terms, *calls)), *arguments]))
    raising = _RAISING.search(claim) is not None
    locators = [t for t in strong if is_name(t)]
    subject = claim_subject(parse.sequence, locators)
    opening = _PROSE_CALL.match(prose.lstrip())
    if opening is not None and calls and opening.group(1) == calls[0].text:
        subject = _norm(_last(calls[0].text))  # the claim opens with it: it is the subject
    documented = _DOCUMENTED.search(claim) is not None
    return ClaimQuery(tuple(names), tuple(strong), tuple(words), raising, subject, documented)


_DOCUMENTED = re.compile(
    r"\b(?:document(?:ed|s|ation)?|docs?|docstrings?|doc[- ]comments?)\b", re.IGNORECASE
)


_LEADING_CLAUSE = frozenset(
    {
        "when", "whenever", "if", "unless", "once", "after", "before",
        "while", "because", "since", "although", "though", "with", "without",
    }
)  # fmt: skip
"""Words that open a leading clause ("When no `proxy` is configured, `setProxy` ...")."""


def claim_subject(sequence: Sequence[ClaimTerm | str], locators: Sequence[ClaimTerm]) -> str | None:
    """The name a claim is about: usually the first it gives ("`getAdapter` throws ...").

    A leading conditional or temporal clause names the condition, not the
    subject: in "When no `proxy` is configured, `setProxy` looks the proxy up"
    the claim is about ``setProxy``, the name that opens the main clause. Only a
    name right after the clause's comma (``the`` aside) is taken; otherwise the
    first name stands.
    """
    if not locators:
        return None
    first = _norm(_last(locators[0].text))
    if not sequence or not isinstance(sequence[0], str) or sequence[0] not in _LEADING_CLAUSE:
        return first
    try:
        comma = sequence.index(",")
    except ValueError:
        return first
    rest = [x for x in sequence[comma + 1 : comma + 3] if x != "the"]
    head = rest[0] if rest else None
    if isinstance(head, ClaimTerm) and any(head.text == t.text for t in locators):
        return _norm(_last(head.text))
    return first


_CALL_SPAN = re.compile(
    r"`(([A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*)\([^()`]*[^()`\s][^()`]*\))`"
)
"""A code span that is a call with arguments: `createInstance(defaults)`."""
_CODE_SPAN = re.compile(r"`[^`]*`")
_PROSE_CALL = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\(([^()]{0,40})\)")
"""A word written as a call or signature: ``value(Number)``, ``toString()``."""
_RAISING = re.compile(r"\b(?:raise[sd]?|throw[sn]?|fails?|panics?|rejects?)\b", re.IGNORECASE)


__all__ = [
    "MIN_LITERAL",
    "ClaimQuery",
    "claim_query",
    "claim_subject",
    "is_name",
    "term_weight",
]
