"""Rewrite a claim to what its cited code shows (strategy ``rewrite``, README "`citecal correct`").

The rewrite is asked of the same OpenAI-compatible endpoint and model as the
judge, with the prompt ``prompts/rewrite_v1.md`` shipped in the package. A
rewrite is never taken on the model's word: the new claim is checked at the
same citation by the rules and then by the judge (README "Routing"), and only
a ``supports`` verdict accepts it. The claim is replaced in place, only when
the citation ends its sentence (so the sentence is the claim).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from citecal.config import Config
from citecal.extract import sentence_spans
from citecal.models import CitationResult, ExtractedCitation, Verdict

if TYPE_CHECKING:
    from citecal.verify.judge import Judge

PROMPT_VERSION = "rewrite_v1"
_SECTION = re.compile(r"^## (system|user)\s*$", re.MULTILINE)
_JSON = re.compile(r"\{.*\}", re.DOTALL)


def load_rewrite_prompt() -> dict[str, str]:
    """The ``system`` and ``user`` sections of the shipped rewrite prompt."""
    text = resources.files("citecal.correct").joinpath("prompts", f"{PROMPT_VERSION}.md")
    raw = text.read_text(encoding="utf-8")
    parts = _SECTION.split(raw)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def _fill(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def parse_rewrite(content: str | None) -> str | None:
    """The claim of an answer ``{"claim": ...}`` (tolerant of prose and fences); None if none."""
    if not content:
        return None
    m = _JSON.search(content)
    if m is None:
        return None
    try:
        value = json.loads(m.group(0))
    except json.JSONDecodeError:
        return None
    claim = value.get("claim") if isinstance(value, dict) else None
    if not isinstance(claim, str):
        return None
    claim = " ".join(claim.split()).replace("[", "(").replace("]", ")")
    return claim or None


def claim_span(text: str, ex: ExtractedCitation) -> tuple[int, int] | None:
    """Offsets of the claim text before ``ex`` when the citation ends its sentence, else None."""
    for start, end in sentence_spans(text):
        if start <= ex.position < end:
            tail = text[ex.position + len(ex.raw) : end]
            head = text[start : ex.position]
            if tail.strip(" \t.;:!?,") or "[" in head:
                return None  # more text after the citation, or another bracket before it
            stop = len(head.rstrip())
            if stop == 0:
                return None
            return start, start + stop
    return None


@dataclass(frozen=True, slots=True)
class Rewrite:
    """An accepted rewrite: the new claim, where it goes, and the verdict that accepted it."""

    claim: str
    span: tuple[int, int]
    verdict: Verdict
    evidence: dict[str, Any]


class Rewriter:
    """Asks the model for a rewrite and accepts it only when the judge says ``supports``."""

    def __init__(self, config: Config, judge: Judge, model: str | None = None) -> None:
        self.config = config
        self.judge = judge
        self.model = model or config.judge.judge_model
        self.prompt = load_rewrite_prompt()
        self.last_reason: str | None = None

    def _ask(self, messages: list[dict[str, str]]) -> str | None:
        import openai

        from citecal.verify.judge import (
            BUDGET_REASON,
            cost_usd,
            openai_client,
            request_ceiling,
            request_timeout,
            resolve_endpoint,
        )

        base_url, api_key = resolve_endpoint(self.config.judge)
        # Rewrites spend from the judge's budget (README "Security").
        budget = self.judge.budget
        ceiling = self.config.judge.rewrite_max_tokens
        estimate = request_ceiling(messages, ceiling, self.model, self.config.judge)
        if not budget.reserve(estimate):
            self.last_reason = f"{BUDGET_REASON}: no rewrite requested"
            return None
        spent = 0.0

        async def call() -> str | None:
            nonlocal spent
            timeout = self.config.judge.timeout_s
            client = openai_client(base_url, api_key, timeout, max_retries=2)
            try:
                async with asyncio.timeout(timeout):  # one deadline, not per read (README)
                    resp = await client.chat.completions.create(
                        model=self.model,
                        messages=messages,  # type: ignore[arg-type]
                        temperature=self.config.judge.temperature,
                        timeout=request_timeout(timeout),
                        max_tokens=ceiling,  # README "Security": every request is bounded
                    )
            finally:
                await client.close()
            if resp.usage is not None:
                pricing = self.config.judge.pricing
                usage = resp.usage
                spent = (
                    cost_usd(self.model, usage.prompt_tokens, usage.completion_tokens, pricing)
                    or 0.0
                )
            return resp.choices[0].message.content if resp.choices else None

        try:
            return asyncio.run(call())
        except openai.OpenAIError as exc:
            self.last_reason = f"rewrite request failed: {type(exc).__name__}"
            return None
        except TimeoutError:
            timeout = self.config.judge.timeout_s
            self.last_reason = f"rewrite request failed: no complete answer within {timeout:g}s"
            return None
        finally:
            budget.settle(estimate, spent)

    def rewrite(self, text: str, ex: ExtractedCitation, row: CitationResult) -> Rewrite | None:
        """A judged rewrite of ``row``'s claim at its own citation, or None (``last_reason``)."""
        from citecal.verify.judge import JudgeRequest

        self.last_reason = None
        if not row.valid or row.cited_code is None:
            self.last_reason = "the citation is invalid: nothing to rewrite the claim to"
            return None
        # Text addressed to a model is never sent to one (README "Security").
        from citecal.verify.judge import INJECTION_REASON, find_injection

        if find_injection(row.claim) or find_injection(row.cited_code, "code"):
            self.last_reason = f"{INJECTION_REASON}: rewrite left to a person"
            return None
        span = claim_span(text, ex)
        if span is None:
            self.last_reason = "the citation does not end its sentence: rewrite left to a person"
            return None
        c = ex.citation
        numbered = "\n".join(
            f"{c.start_line + i} {line}" for i, line in enumerate(row.cited_code.split("\n"))
        )
        values = {
            "claim": row.claim,
            "reasoning": row.reasoning or "",
            "citation": str(c),
            "language": row.language or "text",
            "code": numbered,
        }
        messages = [
            {"role": "system", "content": self.prompt["system"]},
            {"role": "user", "content": _fill(self.prompt["user"], values)},
        ]
        claim = parse_rewrite(self._ask(messages))
        if claim is None:
            self.last_reason = self.last_reason or "the model proposed no rewrite"
            return None
        request = JudgeRequest(
            key="rewrite",
            claim=claim,
            citation=str(c),
            file_path=c.file_path,
            language=row.language,
            start_line=c.start_line,
            end_line=c.end_line,
            code=row.cited_code,
        )
        verdict = self.judge.judge([request]).verdicts.get("rewrite")
        if verdict is None or verdict.verdict != "supports":
            got = verdict.verdict if verdict is not None else "no verdict"
            self.last_reason = f"the rewritten claim was judged {got}: {claim!r}"
            return None
        return Rewrite(
            claim=claim,
            span=span,
            verdict=verdict,
            evidence={
                "method": "llm",
                "prompt": PROMPT_VERSION,
                "model": self.model,
                "judge_model": verdict.model,
                "reasoning": verdict.reasoning,
                "original_claim": row.claim,
            },
        )


def build_rewriter(config: Config, judge: Judge, model: str | None = None) -> Rewriter:
    """The rewriter for a run with a judge (``--no-llm`` runs have none)."""
    return Rewriter(config, judge, model)


__all__ = ["PROMPT_VERSION", "Rewrite", "Rewriter", "build_rewriter", "claim_span", "parse_rewrite"]
