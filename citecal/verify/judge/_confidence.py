"""Numeric judge confidence: a verdict token's probability, and the agreement of samples.

README "Judge confidence". A judge's own ``high``/``medium``/``low`` is recorded but
real models do not calibrate it (Jung, Brahman and Choi, "Trust or Escalate", ICLR
2025), so citecal can measure how sure the judge is in three other ways:

- ``logprob``: the probability the model put on its verdict token. The answer is
  JSON; :func:`verdict_offsets` finds where each claim's verdict value starts in
  the text (the ``"supports": true`` of a single answer, or of each item of a batch
  answer), :func:`token_index` finds the token holding that character in OpenAI's
  ``logprobs.content``, and :func:`verdict_probability` reads that token's
  ``top_logprobs``: the probability of the verdict given, renormalised over the
  alternatives that name a verdict (when no alternative names the other verdict,
  the rest of the mass is counted against it: conservative).
- ``consistency`` and ``simulated``: K answers (samples at a temperature above 0, or
  K few-shot variants); :func:`aggregate` takes the majority and the share agreeing
  with it.

Every verdict is read as binary here, as everywhere (:mod:`citecal.support`): only
``supports`` supports; ``partial`` sides with ``not_supports``.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from citecal.verify.judge._client import Choice, TokenLogprob
from citecal.verify.judge._parse import (
    _FENCE_RE,
    _THINK_RE,
    _VERDICT_SYNONYMS,
    AnswerParseError,
    JudgeAnswer,
    _norm,
    _validate,
)

_DECODER = json.JSONDecoder()
_OPEN = re.compile(r"[\[{]")
_VERDICT_KEY = re.compile(r'"(supports|verdict|label)"\s*:\s*', re.IGNORECASE)
_STRIP = " \t\r\n\"'`:,{["


def _inside(pos: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in spans)


def _values(text: str, start: int, end: int, skip: Sequence[tuple[int, int]]) -> Iterator[int]:
    """Start offsets of the top-level JSON values in ``text[start:end]`` (as the parser reads)."""
    i = start
    while (m := _OPEN.search(text, i, end)) is not None:
        if _inside(m.start(), skip):
            i = m.start() + 1
            continue
        try:
            _, stop = _DECODER.raw_decode(text, m.start())
        except json.JSONDecodeError:
            i = m.start() + 1
            continue
        yield m.start()
        i = stop


def _json_region(text: str) -> tuple[int, int, list[tuple[int, int]]]:
    """Where the answer's JSON is: the first fenced block holding JSON, else the whole text.

    The same rule as :func:`citecal.verify.judge._parse.iter_json_values`
    (``<think>`` blocks are skipped), but on offsets of the original text.
    """
    think = [m.span() for m in _THINK_RE.finditer(text)]
    for m in _FENCE_RE.finditer(text):
        if _inside(m.start(), think):
            continue
        if next(_values(text, m.start(1), m.end(1), think), None) is not None:
            return m.start(1), m.end(1), think
    return 0, len(text), think


def _answer_objects(text: str) -> list[tuple[dict[str, Any], int, int]]:
    """Every JSON object of the answer that carries a verdict, with its span, in order.

    Wrappers (``{"results": [...]}``) are looked into; an object with a verdict
    is taken whole (its nested objects are not answers of their own).
    """
    start, end, think = _json_region(text)
    out: list[tuple[dict[str, Any], int, int]] = []
    i = start
    while (m := _OPEN.search(text, i, end)) is not None:
        pos = m.start()
        if text[pos] == "[" or _inside(pos, think):
            i = pos + 1
            continue
        try:
            obj, stop = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            i = pos + 1
            continue
        keys = {str(k).lower() for k in obj} if isinstance(obj, dict) else set()
        if keys & {"supports", "verdict", "label"}:
            out.append((obj, pos, stop))
            i = stop
        else:
            i = pos + 1
    return out


@dataclass(frozen=True, slots=True)
class VerdictSpot:
    """Where one answer's verdict value starts in the text, and the verdict it gives."""

    offset: int
    answer: JudgeAnswer


def verdict_offsets(text: str | None, count: int | None = None) -> dict[int, VerdictSpot]:
    """Claim number → where its verdict value starts, for a single (``count`` None) or batch answer.

    Numbers follow :func:`citecal.verify.judge.parse_batch`: an item's ``claim_id``,
    or its place when no item has one and there are exactly ``count`` items; a single
    answer is claim 1. Items without a usable verdict are left out.
    """
    if not text:
        return {}
    found: list[tuple[JudgeAnswer, int]] = []
    for obj, pos, stop in _answer_objects(text):
        try:
            answer = _validate(obj)
        except AnswerParseError:
            continue
        key = _VERDICT_KEY.search(text, pos, stop)
        if key is None:
            continue
        found.append((answer, key.end()))
    if count is None:
        return {1: VerdictSpot(found[0][1], found[0][0])} if found else {}
    if found and all(a.claim_id is None for a, _ in found) and len(found) == count:
        numbered = [(i, a, off) for i, (a, off) in enumerate(found, 1)]
    else:
        numbered = [(a.claim_id or 0, a, off) for a, off in found]
    out: dict[int, VerdictSpot] = {}
    for n, answer, offset in numbered:
        if 1 <= n <= count and n not in out:
            out[n] = VerdictSpot(offset, answer)
    return out


def token_index(tokens: Sequence[TokenLogprob], text: str, offset: int) -> int | None:
    """The token of ``tokens`` holding character ``offset`` of ``text``; None when they differ.

    The tokens must spell the text: by their ``bytes`` (UTF-8; multi-byte characters
    may be split over tokens) or, failing that, by their strings.
    """
    encoded = text.encode("utf-8")
    spelled = bool(tokens) and all(t.bytes is not None for t in tokens)
    if spelled and b"".join(bytes(t.bytes or ()) for t in tokens) == encoded:
        target = len(text[:offset].encode("utf-8"))
        pos = 0
        for i, t in enumerate(tokens):
            size = len(t.bytes or ())
            if pos <= target < pos + size:
                return i
            pos += size
        return None
    if "".join(t.token for t in tokens) != text:
        return None
    pos = 0
    for i, t in enumerate(tokens):
        if pos <= offset < pos + len(t.token):
            return i
        pos += len(t.token)
    return None


def _side_of_word(word: str, boolean: bool) -> bool | None:
    """True (supports), False (does not) or None (no verdict) for a token's text."""
    w = _norm(word.strip(_STRIP))
    if not w:
        return None
    if boolean:
        if "true".startswith(w) or w.startswith("true"):
            return True
        if "false".startswith(w) or w.startswith("false"):
            return False
        return None
    sides = {
        label == "supports"
        for key, label in _VERDICT_SYNONYMS.items()
        if label != "unverified" and len(w) >= 2 and (key.startswith(w) or w.startswith(key))
    }
    return sides.pop() if len(sides) == 1 else None


def verdict_probability(token: TokenLogprob, supports: bool, boolean: bool) -> float | None:
    """How likely the verdict is right, from the verdict token's ``top_logprobs``.

    ``supports``: the verdict's side; ``boolean``: the value is ``true``/``false``
    (else a verdict word). The probability of the verdict's side over both sides'
    alternatives; without an alternative for the other side the rest of the mass
    counts against the verdict. None when the token does not name a verdict.
    """
    side = _side_of_word(token.token, boolean)
    if side is None or side != supports:
        return None
    same = other = 0.0
    seen = False
    for alt, logprob in token.top:
        if not math.isfinite(logprob):
            continue
        p = math.exp(logprob)
        alt_side = _side_of_word(alt, boolean)
        if alt == token.token:
            seen = True
        if alt_side is None:
            continue
        if alt_side == supports:
            same += p
        else:
            other += p
    if not seen:
        same += math.exp(token.logprob) if math.isfinite(token.logprob) else 0.0
    if same <= 0.0:
        return None
    value = same / (same + other) if other > 0.0 else same
    return min(1.0, max(0.0, value))


def logprob_confidences(choice: Choice, count: int | None = None) -> dict[int, float]:
    """Claim number → the probability of its verdict, from one choice's token logprobs.

    Empty when the choice has no logprobs or they do not spell its text; a claim
    whose verdict token cannot be found or read is left out (its caller falls back
    to the judge's words).
    """
    if choice.logprobs is None or choice.text is None:
        return {}
    out: dict[int, float] = {}
    for n, spot in verdict_offsets(choice.text, count).items():
        i = token_index(choice.logprobs, choice.text, spot.offset)
        if i is None:
            continue
        boolean = choice.text[spot.offset : spot.offset + 5].lower().startswith(("true", "false"))
        value = verdict_probability(choice.logprobs[i], spot.answer.verdict == "supports", boolean)
        if value is not None:
            out[n] = value
    return out


def supports_side(answer: JudgeAnswer) -> bool:
    """The binary reading of an answer (:mod:`citecal.support`)."""
    return answer.verdict == "supports"


@dataclass(frozen=True, slots=True)
class Majority:
    """The majority of K answers and how many agree with it."""

    answer: JudgeAnswer
    """The first answer on the majority side with that side's most common verdict."""
    agreeing: int
    total: int
    supports_share: float
    """Share of the answers that say ``supports``."""

    @property
    def share(self) -> float:
        """Share of the answers on the majority side: the confidence of the verdict."""
        return self.agreeing / self.total


def aggregate(answers: Sequence[JudgeAnswer]) -> Majority:
    """The majority verdict of ``answers`` (binary sides; a tie goes to the first answer's side).

    Raises:
        ValueError: no answers.
    """
    if not answers:
        raise ValueError("aggregate needs at least one answer")
    yes = sum(supports_side(a) for a in answers)
    no = len(answers) - yes
    side = supports_side(answers[0]) if yes == no else yes > no
    members = [a for a in answers if supports_side(a) == side]
    labels = Counter(a.verdict for a in members)
    top = max(labels.values())
    answer = next(a for a in members if labels[a.verdict] == top)
    return Majority(answer, len(members), len(answers), yes / len(answers))


__all__ = [
    "Majority",
    "VerdictSpot",
    "aggregate",
    "logprob_confidences",
    "supports_side",
    "token_index",
    "verdict_offsets",
    "verdict_probability",
]
