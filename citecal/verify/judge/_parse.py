"""Judge answers: the JSON schema asked for, and tolerant parsing of what comes back.

Endpoints differ: OpenAI honours ``response_format`` JSON schemas, many local
servers ignore or reject them, and small models wrap JSON in code fences,
prose or ``<think>`` blocks, say ``"verdict": "Supported"`` instead of
``"supports": true`` or give confidence as a number. Everything is normalised
here and validated by :class:`JudgeAnswer`; what cannot be parsed raises
:class:`AnswerParseError` so the caller records an ``unverified``/``low``
verdict (README "The LLM judge") instead of crashing. Tolerance stops at the answer's
meaning: a score or confidence outside what the prompt defines (a score
outside [0, 1], NaN, an unknown confidence label) is a parse failure too,
never rescaled or replaced, so it is neither counted as a verdict nor cached
(README "Security").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from citecal.models import Confidence, Mode, VerdictLabel


class AnswerParseError(ValueError):
    """A judge answer that holds no usable verdict."""


_VERDICT_SYNONYMS: dict[str, VerdictLabel] = {
    "supports": "supports",
    "supported": "supports",
    "support": "supports",
    "supporting": "supports",
    "yes": "supports",
    "true": "supports",
    "partial": "partial",
    "partially": "partial",
    "partly": "partial",
    "partially_supports": "partial",
    "partially_supported": "partial",
    "not_supports": "not_supports",
    "not_supported": "not_supports",
    "not_support": "not_supports",
    "unsupported": "not_supports",
    "does_not_support": "not_supports",
    "doesnt_support": "not_supports",
    "contradicts": "not_supports",
    "no": "not_supports",
    "false": "not_supports",
    "unverified": "unverified",
}
_CONFIDENCE_SYNONYMS: dict[str, Confidence] = {
    "high": "high",
    "very_high": "high",
    "certain": "high",
    "medium": "medium",
    "moderate": "medium",
    "mid": "medium",
    "low": "low",
    "very_low": "low",
    "uncertain": "low",
}
_SCORE_KEYS = ("score", "probability", "support_probability", "support_score", "p_supports")
_REASON_KEYS = ("reasoning", "explanation", "rationale", "analysis", "reason")
_ID_KEYS = ("claim_id", "id", "claim", "claim_number", "index")


def _norm(word: str) -> str:
    return re.sub(r"[\s\-]+", "_", word.strip().lower()).replace("'", "")


def _number(value: Any, what: str) -> float:
    """A probability in [0, 1] as the prompt defines it (README "The LLM judge").

    A number must already be in [0, 1]; only a string with a ``%`` sign is
    read as a percentage ("85%"). Anything else (7.5, 150, -0.5, NaN, "high-ish")
    is outside the answer schema: an :class:`AnswerParseError`, never a guess.
    """
    if isinstance(value, bool):
        raise ValueError(f"{what} {value!r} is not a number in [0, 1]")
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            x = float(value.strip()[:-1]) / 100
        except ValueError:
            raise ValueError(f"{what} {value!r} is not a number in [0, 1]") from None
    else:
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{what} {value!r} is not a number in [0, 1]") from None
    if not 0.0 <= x <= 1.0:  # also false for NaN
        raise ValueError(f"{what} {value!r} is outside [0, 1]")
    return x


def _confidence(value: Any) -> Confidence:
    """A confidence label, or a number in [0, 1] bucketed into one."""
    if isinstance(value, str):
        label = _CONFIDENCE_SYNONYMS.get(_norm(value))
        if label is not None:
            return label
        try:
            float(value.strip().rstrip("%"))
        except ValueError:
            raise ValueError(
                f"confidence {value!r} is not high, medium or low (nor a number in [0, 1])"
            ) from None
    x = _number(value, "confidence")
    return "high" if x >= 0.8 else "medium" if x >= 0.5 else "low"


def _score(value: Any) -> float | None:
    if value is None:
        return None
    return _number(value, "score")


def _claim_id(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        m = re.search(r"\d+", value)
        return int(m.group(0)) if m else None
    return None


class JudgeAnswer(BaseModel):
    """One normalised judge answer (``claim_id`` only in batch answers)."""

    model_config = ConfigDict(extra="ignore")

    claim_id: int | None = Field(None, description="1-based claim number in a batch prompt.")
    verdict: VerdictLabel = Field(description="supports | partial | not_supports.")
    confidence: Confidence = Field(description="The judge's own certainty label.")
    score: float | None = Field(None, ge=0, le=1, description="Support probability, if given.")
    reasoning: str = Field("", description="The judge's analysis.")
    mode: Mode | None = Field(None, description="extractive | abstractive, when asked for.")

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError("answer is not a JSON object")
        lowered = {str(k).lower(): v for k, v in data.items()}
        verdict: VerdictLabel | None = None
        raw_verdict = lowered.get("verdict", lowered.get("label"))
        if isinstance(raw_verdict, str):
            verdict = _VERDICT_SYNONYMS.get(_norm(raw_verdict))
        if verdict is None and "supports" in lowered:
            sup = lowered["supports"]
            if isinstance(sup, bool):
                verdict = "supports" if sup else "not_supports"
            elif isinstance(sup, str):
                verdict = _VERDICT_SYNONYMS.get(_norm(sup))
        if verdict is None:
            raise ValueError("no verdict: expected 'supports': true/false or a 'verdict' string")
        reasoning = next((lowered[k] for k in _REASON_KEYS if isinstance(lowered.get(k), str)), "")
        score = next((_score(lowered[k]) for k in _SCORE_KEYS if k in lowered), None)
        claim_id = next((_claim_id(lowered[k]) for k in _ID_KEYS if k in lowered), None)
        raw_confidence = lowered.get("confidence")
        mode = lowered.get("mode", lowered.get("claim_type"))
        mode = _norm(mode) if isinstance(mode, str) else None
        return {
            "mode": mode if mode in ("extractive", "abstractive") else None,
            "claim_id": claim_id,
            "verdict": verdict,
            # A missing confidence is the conservative "low" (README "Faults"); an unknown one
            # ("extreme", 7.5) is outside the schema and raises above.
            "confidence": "low" if raw_confidence is None else _confidence(raw_confidence),
            "score": score,
            "reasoning": reasoning.strip(),
        }


def _answer_schema(with_id: bool) -> dict[str, Any]:
    props: dict[str, Any] = {
        "reasoning": {"type": "string"},
        "supports": {"type": "boolean"},
        "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
        "score": {"type": "number"},
        "mode": {"type": "string", "enum": ["extractive", "abstractive"]},
    }
    if with_id:
        props = {"claim_id": {"type": "integer"}, **props}
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def response_format(batch: bool) -> dict[str, Any]:
    """The ``response_format`` for structured outputs (strict JSON schema).

    The schema root must be an object, so a batch answer is ``{"results": [...]}``;
    the tolerant parser accepts that and a bare array alike.
    """
    if batch:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {"results": {"type": "array", "items": _answer_schema(True)}},
            "required": ["results"],
            "additionalProperties": False,
        }
        name = "citecal_judge_batch"
    else:
        schema = _answer_schema(False)
        name = "citecal_judge_single"
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


_THINK_RE = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE_RE = re.compile(r"```[A-Za-z0-9_-]*\s*\n(.*?)```", re.DOTALL)


_OPEN_RE = re.compile(r"[\[{]")


def _decode_all(chunk: str) -> Iterator[Any]:
    decoder = json.JSONDecoder()
    i = 0
    while (m := _OPEN_RE.search(chunk, i)) is not None:
        try:
            value, end = decoder.raw_decode(chunk, m.start())
        except json.JSONDecodeError:
            i = m.start() + 1
            continue
        yield value
        i = end


def iter_json_values(text: str) -> Iterator[Any]:
    """Every top-level JSON object or array in ``text``, left to right.

    ``<think>`` blocks of reasoning models are dropped; when a fenced block
    holds JSON, only that block counts (models often fence their JSON and
    quote fragments of it in the prose around).
    """
    text = _THINK_RE.sub("", text)
    for m in _FENCE_RE.finditer(text):
        values = list(_decode_all(m.group(1)))
        if values:
            yield from values
            return
    yield from _decode_all(text)


def _validate(obj: Any) -> JudgeAnswer:
    try:
        return JudgeAnswer.model_validate(obj)
    except ValidationError as exc:
        msg = str(exc.errors()[0]["msg"])
        raise AnswerParseError(msg.removeprefix("Value error, ")) from None


def parse_single(text: str | None) -> JudgeAnswer:
    """The answer to a one-claim prompt; raise AnswerParseError when there is none."""
    if not text or not text.strip():
        raise AnswerParseError("empty answer")
    last_error = "no JSON object in the answer"
    for value in iter_json_values(text):
        candidates = value if isinstance(value, list) else [value]
        for obj in candidates:
            if isinstance(obj, dict) and isinstance(obj.get("results"), list) and obj["results"]:
                obj = obj["results"][0]
            try:
                return _validate(obj)
            except AnswerParseError as exc:
                last_error = str(exc)
    raise AnswerParseError(last_error)


def _batch_items(text: str) -> list[Any]:
    values = list(iter_json_values(text))
    for value in values:
        if isinstance(value, list):
            return value
        if isinstance(value, dict):
            for key in ("results", "answers", "claims", "verdicts", "evaluations", "items"):
                if isinstance(value.get(key), list):
                    return list(value[key])
            lists = [v for v in value.values() if isinstance(v, list) and v]
            if len(lists) == 1 and all(isinstance(x, dict) for x in lists[0]):
                return lists[0]
    # Several bare objects one after another.
    return [v for v in values if isinstance(v, dict)]


def parse_batch(text: str | None, count: int) -> tuple[dict[int, JudgeAnswer], list[str]]:
    """Answers of a batch prompt by claim number (1..count), and what was wrong.

    Items without a valid verdict, with an unknown number or repeating a number
    are dropped and described in the returned problems; the caller retries
    the claims that have no answer alone. When no item carries a number but
    there are exactly ``count`` items, they are taken in order.

    Raises:
        AnswerParseError: the text holds no JSON at all.
    """
    if not text or not text.strip():
        raise AnswerParseError("empty answer")
    items = _batch_items(text)
    if not items:
        raise AnswerParseError("no JSON array or object in the answer")
    problems: list[str] = []
    answers: list[JudgeAnswer] = []
    for item in items:
        try:
            answers.append(_validate(item))
        except AnswerParseError as exc:
            problems.append(f"unusable item ({exc}): {json.dumps(item)[:120]}")
    if answers and all(a.claim_id is None for a in answers) and len(answers) == count:
        answers = [a.model_copy(update={"claim_id": i}) for i, a in enumerate(answers, 1)]
    out: dict[int, JudgeAnswer] = {}
    for a in answers:
        if a.claim_id is None or not 1 <= a.claim_id <= count:
            problems.append(f"ignored answer for unknown claim_id {a.claim_id!r}")
        elif a.claim_id in out:
            problems.append(f"ignored repeated answer for claim_id {a.claim_id}")
        else:
            out[a.claim_id] = a
    return out, problems
