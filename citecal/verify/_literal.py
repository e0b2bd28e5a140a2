"""Statements of what code contains: the only claims rules may accept (README "Routing").

Rules decide only what they can prove. A claim such as "`Session` defines
`mount`", "`send` calls `get_adapter`", "`DEFAULT_RETRIES` is 0",
"`Version::new` takes `major`, `minor` and `patch`" or "`BadPayload` derives
from `BadData`" says what the cited lines *contain*; each of those can be
checked against the lines themselves. A claim that says what the code *does*
("merges", "retries", "gives priority"), why, in which order, or how often
("every", "only", "always", "never") cannot, and goes to the judge.

A claim is *literal* when every word that is not a code term belongs to
:data:`LITERAL_VOCABULARY` (function words, kind words such as "class" or
"field", and the frame verbs below) and it has at least one named code term.
Each frame verb then asks for a check against the cited lines; the claim is
accepted only when every check holds (and, separately, every content term
was found: see :mod:`citecal.verify._extractive`):

======== ============================================ ===========================================
frame    verbs                                        check
======== ============================================ ===========================================
define   defines, declares, "is defined", "the X      every named term is a definition in, or
         class" (no verb)                             around, the range
has      has, contains, holds, includes, exposes      the named terms are in the range (a kind
                                                      word such as "fields" is checked per term)
call     calls, invokes, delegates to, forwards to    each object appears as a call: ``name(``,
                                                      ``name::<``, ``name!(``
use      uses                                         each object is in the range
take     takes, accepts, receives, expects            each object is in the subject's signature
value    is V, equals V, "sets X to V", "defaults     one cited line holds the name, then ``=`` /
         to V"                                        ``:`` / ``:=`` / ``=>``, then the value
kind     "X is a struct/function/…"                   X is defined here as that kind
return   returns V                                    one cited line holds ``return`` then V
raise    raises V, throws V                           one cited line holds raise/throw/panic then V
inherit  extends, inherits, subclasses, derives,      one cited line holds both names
         implements, embeds, wraps
import   imports, exports, re-exports                 the object is on an import/export line
======== ============================================ ===========================================

A check that fails is not proof that the claim is wrong (the code may say it
another way): the claim is then undecided, not rejected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from citecal.verify._terms import KIND_WORDS, UNIT_WORDS, ClaimParse, ClaimTerm, _words

Frame = Literal[
    "define", "has", "call", "use", "take", "value", "kind", "return", "raise", "inherit", "import"
]

FRAME_VERBS: dict[str, Frame] = {
    **dict.fromkeys(("define", "defines", "defined", "declare", "declares", "declared"), "define"),
    **dict.fromkeys(
        ("has", "have", "contains", "contain", "holds", "hold", "includes", "include", "exposes"),
        "has",
    ),
    **dict.fromkeys(
        (
            "calls",
            "call",
            "called",
            "invokes",
            "invoke",
            "invoked",
            "delegates",
            "delegate",
            "forwards",
            "forward",
        ),
        "call",
    ),
    **dict.fromkeys(("uses", "use", "used", "using", "passes", "pass", "passed"), "use"),
    **dict.fromkeys(
        ("takes", "take", "accepts", "accept", "receives", "receive", "expects", "expect"), "take"
    ),
    **dict.fromkeys(("sets", "set", "equals", "defaults", "assigns"), "value"),
    **dict.fromkeys(("returns", "return", "returned"), "return"),
    **dict.fromkeys(("raises", "raise", "raised", "throws", "throw", "thrown"), "raise"),
    **dict.fromkeys(
        (
            "extends",
            "extend",
            "inherits",
            "inherit",
            "subclasses",
            "subclass",
            "derives",
            "derive",
            "implements",
            "implement",
            "embeds",
            "embed",
            "wraps",
            "wrap",
        ),
        "inherit",
    ),
    **dict.fromkeys(
        ("imports", "import", "imported", "exports", "export", "exported", "re-exports"), "import"
    ),
}
"""Verbs of statements about what code contains, and the check each asks for."""

_COPULA = frozenset({"is", "are", "be"})
_PUNCT = frozenset({",", ".", ";", ":", "!", "?"})

FUNCTION_WORDS = _words(
    """the a an its their it this these and or of in on at to for from with inside within here
    also simply just directly named called by as both module file package crate finally through
    which that
    additionally similarly likewise"""
)
"""Words that carry no claim of their own in a literal statement."""

MODIFIER_WORDS = _words(
    """public private protected static async exported const final abstract pub default new
    top-level module-level helper implementation body instance value values parameter
    parameters argument arguments attribute attributes member members constructor
    signature result type types name names list key keys entry entries option options"""
)
DETERMINERS = _words("the a an its their this these public private static default named")
"""Words after which a prose word is a noun ("the session", "a cookies attribute")."""
"""Words that describe the code's shape, not its behaviour ("the public field", "a helper")."""

LITERAL_VOCABULARY: frozenset[str] = (
    FUNCTION_WORDS
    | MODIFIER_WORDS
    | UNIT_WORDS
    | frozenset(KIND_WORDS)
    | frozenset(FRAME_VERBS)
    | _COPULA
)
"""Every word a literal statement may use besides its code terms."""

NAME_KINDS = frozenset({"code_span", "identifier"})
VALUE_KINDS = frozenset({"code_span", "identifier", "quoted", "number"})
_NAME_RE = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")


class RangeFacts(Protocol):
    """What a frame check may ask about the cited lines (implemented by the verifier)."""

    def defines(self, name: str, kind: str | None = None) -> bool:
        """``name`` is defined in the range or around it (as ``kind``, when given)."""
        ...

    def contains(self, text: str) -> bool:
        """``text`` (a name or code) occurs in the range."""
        ...

    def calls(self, name: str) -> bool:
        """``name`` occurs as a call in the range."""
        ...

    def on_one_line(self, first: str, then: str) -> bool:
        """One cited line holds the word ``first`` directly followed by a match of ``then``."""
        ...

    def signature_has(self, owner: str | None, names: Sequence[str]) -> bool:
        """``names`` are in the signature of ``owner`` (or of a definition starting in range)."""
        ...


@dataclass(frozen=True, slots=True)
class LiteralCheck:
    """Whether a claim is a literal statement, and whether the cited lines bear it out."""

    literal: bool
    holds: bool
    frames: tuple[Frame, ...] = ()
    reason: str = ""


@dataclass(frozen=True, slots=True)
class _Clause:
    frame: Frame
    verb: str
    before: tuple[ClaimTerm, ...]
    after: tuple[ClaimTerm | str, ...]


def _is_name(item: ClaimTerm | str) -> bool:
    return (
        isinstance(item, ClaimTerm)
        and item.kind in NAME_KINDS
        and bool(_NAME_RE.fullmatch(item.text))
    )


def _clauses(sequence: Sequence[ClaimTerm | str]) -> tuple[list[_Clause], list[ClaimTerm]]:
    """Split the claim at its frame verbs: the terms before each verb and what follows it."""
    verbs: list[tuple[int, Frame, str]] = []
    for i, item in enumerate(sequence):
        if not isinstance(item, str):
            continue
        if item in FRAME_VERBS:
            verbs.append((i, FRAME_VERBS[item], item))
        elif item in _COPULA:
            nxt = next((x for x in sequence[i + 1 :] if x not in ("the", "a", "an")), None)
            if isinstance(nxt, str) and nxt in FRAME_VERBS:
                continue  # "is defined", "is called by": the participle is the verb
            kind: Frame = "kind" if isinstance(nxt, str) and nxt in KIND_WORDS else "value"
            verbs.append((i, kind, item))
    clauses: list[_Clause] = []
    lead = [x for x in sequence[: verbs[0][0]] if isinstance(x, ClaimTerm)] if verbs else []
    for n, (i, frame, verb) in enumerate(verbs):
        end = verbs[n + 1][0] if n + 1 < len(verbs) else len(sequence)
        before_start = verbs[n - 1][0] + 1 if n else 0
        before = tuple(x for x in sequence[before_start:i] if isinstance(x, ClaimTerm))
        clauses.append(_Clause(frame, verb, before, tuple(sequence[i + 1 : end])))
    return clauses, lead


def _terms(items: Sequence[ClaimTerm | str]) -> list[ClaimTerm]:
    return [x for x in items if isinstance(x, ClaimTerm)]


def _names(items: Sequence[ClaimTerm | str]) -> list[str]:
    return [x.text for x in _terms(items) if _is_name(x)]


def _value_pattern(term: ClaimTerm) -> str:
    """The regex a value term must match on its line (quotes of any kind around strings)."""
    if term.kind == "quoted":
        return r"[\"'`]" + re.escape(term.text) + r"[\"'`]"
    if term.kind == "number":
        return r"(?<![\w.])" + re.escape(term.text) + r"(?![\w])"
    return re.escape(term.text)


_ASSIGN = r"[\"']?\s*(?::\s*[^=\n]{0,60}?)?\s*(?:=(?!=)|:=|:|=>)\s*(?:new\s+|&)?[^\n;=]{0,40}?"
"""After a name: an optional type annotation, then ``=``/``:=``/``:``/``=>`` (not ``==``), then
at most 40 characters before the value (``10 * 1024``, ``Duration::from_secs(30)``)."""
_ANYWHERE = r".*?"


def _check(clause: _Clause, facts: RangeFacts, subject: list[ClaimTerm]) -> str | None:
    """None when the clause's frame holds on the cited lines, else why not."""
    after = clause.after
    objects = _names(after)
    owner = [t for t in (clause.before or subject) if _is_name(t)]
    frame = clause.frame
    if frame == "define":
        passive = clause.verb == "defined" or clause.verb == "declared"
        wanted = [t.text for t in owner] if passive and not objects else objects
        wanted = wanted or [t.text for t in owner]
        missing = [n for n in wanted if not facts.defines(n)]
        return f"{', '.join(missing)} not defined here" if missing else None
    if frame == "has":
        return None if _terms(after) else "nothing named after the verb"
    if frame in ("call", "use"):
        passive = clause.verb in ("called", "invoked", "used")
        targets = [t.text for t in owner] if passive else objects
        codes = [t.text for t in _terms(after) if t.kind == "code_span" and "(" in t.text]
        if not targets and not codes:
            return "nothing named as called"
        if frame == "use":
            return None
        missing = [n for n in targets if not facts.calls(n)]
        return f"{', '.join(missing)} not called here" if missing else None
    if frame == "take":
        if not objects:
            return "no parameters named"
        who = owner[-1].text if owner else None
        return None if facts.signature_has(who, objects) else "not in the signature"
    if frame in ("value", "kind"):
        return _check_value(clause, facts, owner)
    values = [t for t in _terms(after) if t.kind in VALUE_KINDS]
    if frame == "return":
        if not values:
            return "no returned value named"
        ok = facts.on_one_line("return", _ANYWHERE + _value_pattern(values[0]))
        return None if ok else "no `return` of that value"
    if frame == "raise":
        if not values:
            return "no exception named"
        ok = any(
            facts.on_one_line(word, _ANYWHERE + _value_pattern(values[0]))
            for word in ("raise", "throw", "panic", "Err")
        )
        return None if ok else "no raise/throw of that exception"
    if frame == "inherit":
        if not owner or not objects:
            return "needs both names"
        s, o = owner[-1].text, objects[0]
        s, o = re.split(r"\.|::", s)[-1], re.split(r"\.|::", o)[-1]
        ok = facts.on_one_line(s, _ANYWHERE + re.escape(o)) or facts.on_one_line(
            o, _ANYWHERE + re.escape(s)
        )
        return None if ok else "the names are not on one line"
    if frame == "import":
        if not objects:
            return "nothing named as imported"
        ok = all(
            any(
                facts.on_one_line(word, _ANYWHERE + re.escape(re.split(r"\.|::", name)[-1]))
                for word in ("import", "export", "from", "require", "use", "__all__")
            )
            for name in objects
        )
        return None if ok else "not on an import/export line"
    return f"unknown frame {frame}"  # pragma: no cover - Frame is closed


def _check_value(clause: _Clause, facts: RangeFacts, owner: list[ClaimTerm]) -> str | None:
    after = clause.after
    if clause.frame == "kind":
        kind = next((KIND_WORDS[x] for x in after if isinstance(x, str) and x in KIND_WORDS), None)
        if not owner:
            return "nothing named"
        missing = [t.text for t in owner if not facts.defines(t.text, kind)]
        return f"{', '.join(missing)} not defined here as a {kind}" if missing else None
    target: ClaimTerm | None
    value: ClaimTerm | None
    if clause.verb in ("sets", "set", "assigns"):
        # "sets X to V": the target follows the verb, the value follows "to".
        terms = _terms(after)
        target = terms[0] if terms and _is_name(terms[0]) else None
        to = [i for i, x in enumerate(after) if x == "to"]
        value = next((x for x in after[to[0] :] if isinstance(x, ClaimTerm)), None) if to else None
    else:
        target = owner[-1] if owner else None
        value = next((x for x in after if isinstance(x, ClaimTerm)), None)
    if target is None or value is None or value.kind not in VALUE_KINDS:
        return "needs a name and a value"
    if value is target:
        return "needs a name and a value"
    last = re.split(r"\.|::", target.text)[-1]
    if facts.on_one_line(last, _ASSIGN + _value_pattern(value)):
        return None
    return f"no line sets {target.text} to {value.text}"


def _noun_words_only(sequence: Sequence[ClaimTerm | str]) -> str | None:
    """A prose content word may name a thing ("the session", "headers field"), not act.

    Without a part-of-speech tagger, a word counts as a noun when a determiner
    or shape word comes right before it, or a kind word right after it;
    "`X` merges headers" is then not literal ("merges" follows a name).
    """
    for i, item in enumerate(sequence):
        if not isinstance(item, ClaimTerm) or item.kind != "word":
            continue
        before = sequence[i - 1] if i else None
        after = sequence[i + 1] if i + 1 < len(sequence) else None
        if isinstance(before, str) and (before in DETERMINERS or before in MODIFIER_WORDS):
            continue
        if isinstance(after, str) and after in KIND_WORDS:
            continue
        if isinstance(before, ClaimTerm) and before.kind == "word":
            continue  # "the session headers": second word of a noun phrase
        earlier = sequence[i - 2] if i > 1 else None
        if isinstance(before, ClaimTerm) and isinstance(earlier, str) and earlier in DETERMINERS:
            continue  # "the `Authorization` header": a name used as a modifier
        return item.text
    return None


def main_statement(sequence: Sequence[ClaimTerm | str]) -> Sequence[ClaimTerm | str]:
    """The part after a topic prefix: "Finally, the exception hierarchy: `X` inherits from `Y`".

    Reports often open a sentence with a topic and a colon; the citation backs
    what follows it. The topic's names still have to be in the cited lines
    (the caller checks every content term), only its wording is not read as
    part of the statement.
    """
    colons = [i for i, x in enumerate(sequence) if x == ":"]
    return sequence[colons[-1] + 1 :] if colons else sequence


def literal_form(parse: ClaimParse, prose: frozenset[str] = frozenset()) -> str | None:
    """None when the claim has the form of a literal statement, else why it has not.

    Looks at the words only, so it needs nothing from the cited file but which
    of the claim's words are not content there (``prose``: no identifier of the
    file uses them); any such word describes more than what the code contains.
    """
    sequence = main_statement(parse.sequence)
    odd = [w for w in sequence if isinstance(w, str) and w not in _PUNCT | LITERAL_VOCABULARY]
    odd += [t.text for t in sequence if isinstance(t, ClaimTerm) and t.text in prose]
    if odd:
        return f"describes more than contents ({odd[0]!r})"
    verb_like = _noun_words_only(sequence)
    if verb_like is not None:
        return f"describes more than contents ({verb_like!r})"
    if not any(_is_name(t) or t.kind == "code_span" for t in parse.terms):
        return "names no code"
    clauses, _ = _clauses(sequence)
    if not clauses:
        names = [t for t in parse.terms if _is_name(t)]
        if not names or any(t.expected_kind is None for t in names):
            return "no statement verb"
    return None


def check_literal(
    parse: ClaimParse, facts: RangeFacts, prose: frozenset[str] = frozenset()
) -> LiteralCheck:
    """Is the claim a literal statement (module docstring), and do its frames hold?

    Term presence is checked by the caller; this decides the statement's form
    (:func:`literal_form`) and runs the frame checks.
    """
    why_not = literal_form(parse, prose)
    if why_not is not None:
        return LiteralCheck(False, False, reason=why_not)
    clauses, subject = _clauses(main_statement(parse.sequence))
    if not clauses:
        # "The `Cart` class": definitions named with their kind, nothing else.
        kinded = [t for t in parse.terms if _is_name(t)]
        missing = [t.text for t in kinded if not facts.defines(t.text, t.expected_kind)]
        if missing:
            return LiteralCheck(True, False, ("define",), f"{missing[0]} not defined here")
        return LiteralCheck(True, True, ("define",))
    frames = tuple(c.frame for c in clauses)
    for clause in clauses:
        why = _check(clause, facts, subject)
        if why is not None:
            return LiteralCheck(True, False, frames, f"{clause.verb}: {why}")
    return LiteralCheck(True, True, frames)


__all__ = [
    "FRAME_VERBS",
    "LITERAL_VOCABULARY",
    "Frame",
    "LiteralCheck",
    "RangeFacts",
    "check_literal",
    "literal_form",
    "main_statement",
]
