"""Which requests one batch of claims takes, per confidence source (README "Judge confidence").

One plan for the judge, the spending cap and the dry run, so the three count the
same requests and tokens:

- ``verbal``: one request at the configured temperature;
- ``logprob``: the same request with ``logprobs`` / ``top_logprobs``;
- ``consistency``: K samples at ``sample_temperature`` — one request with ``n=K``
  (``use_n``), or K requests;
- ``simulated``: K requests, one per few-shot variant (simulated annotator), at the
  configured temperature.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from citecal.config import JudgeConfig
from citecal.verify.judge._pricing import cost_usd
from citecal.verify.judge._prompts import PromptTemplate


@dataclass(frozen=True, slots=True)
class Ask:
    """One request of a plan: its prompt, how many choices, the temperature, logprobs."""

    prompt: PromptTemplate
    n: int = 1
    sampled: bool = False
    """At ``sample_temperature`` (consistency) rather than the configured temperature."""
    top_logprobs: int | None = None


def plan_asks(
    config: JudgeConfig,
    prompt: PromptTemplate,
    variants: Sequence[PromptTemplate] = (),
    *,
    use_n: bool | None = None,
) -> list[Ask]:
    """The requests one batch takes under ``config.confidence`` (module doc).

    ``use_n`` overrides ``config.use_n`` (a run that found its server ignores ``n``).
    """
    k = config.samples
    if config.confidence == "logprob":
        return [Ask(prompt, top_logprobs=config.top_logprobs)]
    if config.confidence == "consistency":
        one = config.use_n if use_n is None else use_n
        return [Ask(prompt, n=k, sampled=True)] if one else [Ask(prompt, sampled=True)] * k
    if config.confidence == "simulated":
        return [Ask(v) for v in variants[:k]]
    return [Ask(prompt)]


def answer_variant(
    config: JudgeConfig, variants: Sequence[PromptTemplate] = (), repeat: int = 0
) -> dict[str, object]:
    """What changes a judge's answers beyond model, prompt and claim: part of the cache key.

    Empty for a plain verbal answer at temperature 0, so those keys stay what they
    were before README "Judge confidence"; else the confidence source, K, the
    temperatures, the variants' prompt versions and the repeat
    (``rejudge --repeats``).
    """
    out: dict[str, object] = {}
    source = config.confidence
    if source != "verbal":
        out["confidence"] = source
    if source == "logprob":
        out["top_logprobs"] = config.top_logprobs
    if source in ("consistency", "simulated"):
        out["samples"] = config.samples
    if source == "consistency":
        out["sample_temperature"] = config.sample_temperature
    if config.temperature != 0.0:
        out["temperature"] = config.temperature
    if source == "simulated":
        out["variants"] = [v.version for v in variants[: config.samples]]
    if repeat:
        out["repeat"] = repeat
    return out


CLAIM_PROMPT_TOKENS = 700
CLAIM_ANSWER_TOKENS = 80
EXAMPLE_TOKENS = 150
"""A claim's judge request is about 700 prompt tokens and 80 answer tokens (README "The
cascade"); a simulated annotator's prompt adds about 150 per labelled example."""


def claim_cost(model: str, source: str | None, config: JudgeConfig) -> float | None:
    """Expected dollars of judging one claim with ``model`` under confidence ``source``.

    K answers for consistency (one prompt with ``n=K``, or K prompts without
    ``use_n``) and simulated (K prompts with their examples); None without a price
    (README "Judge confidence", ``calibrate --write-cascade``).
    """
    k = config.samples
    prompts, answers, prompt = 1, 1, CLAIM_PROMPT_TOKENS
    if source == "consistency":
        prompts, answers = (1 if config.use_n else k), k
    elif source == "simulated":
        prompts, answers = k, k
        prompt += EXAMPLE_TOKENS * config.simulated_examples
    return cost_usd(model, prompts * prompt, answers * CLAIM_ANSWER_TOKENS, config.pricing)


def answers_per_claim(config: JudgeConfig) -> int:
    """Answers each claim gets: K for consistency and simulated, else 1."""
    return config.samples if config.confidence in ("consistency", "simulated") else 1


__all__ = ["Ask", "answer_variant", "answers_per_claim", "claim_cost", "plan_asks"]
