"""Dry-run estimates: calls, tokens and dollars of a judge run, without the network.

Batches are formed and prompts rendered exactly as :meth:`Judge.judge` would,
so the call count is exact (escalations aside) and prompt tokens are close;
answer tokens use fixed allowances (README "The LLM judge").
"""

from __future__ import annotations

from collections.abc import Sequence

from citecal.config import JudgeConfig
from citecal.verify.judge._asks import answer_variant, answers_per_claim, plan_asks
from citecal.verify.judge._batching import make_batches
from citecal.verify.judge._budget import answer_allowance, answer_ceiling, prompt_tokens
from citecal.verify.judge._cache import VerdictCache, VerdictStore, cache_key
from citecal.verify.judge._injection import screen
from citecal.verify.judge._judge import judge_base_url
from citecal.verify.judge._pricing import cost_usd
from citecal.verify.judge._prompts import PromptTemplate, load_prompt, render_messages
from citecal.verify.judge._types import DryRunEstimate, JudgeRequest


def estimate_cost(
    requests: Sequence[JudgeRequest],
    config: JudgeConfig,
    prompt: str | None = None,
    *,
    model: str | None = None,
    use_cache: bool = False,
    cache: VerdictStore | None = None,
    variants: Sequence[PromptTemplate] = (),
) -> DryRunEstimate:
    """Calls, tokens and dollars a judge run would take, without calling anything.

    Batches are formed exactly as :meth:`Judge.judge` forms them and prompts
    rendered in full; answer tokens use README "The LLM judge"'s allowances. With
    ``use_cache`` the local cache is read (no network) and hits are not counted:
    ``cache`` when given (eval-batch's shared directory), else the SQLite file.
    The confidence source's requests are counted as the judge makes them (README
    "Judge confidence"): K answers per claim for consistency (one prompt with
    ``n=K``, or K with ``use_n`` off) and simulated (K prompts, one per variant).
    """
    template = load_prompt(prompt or config.prompt)
    model = model or config.judge_model
    # Claims with text addressed to the judge are never sent (README "Security").
    pending, held = screen(requests, config.max_code_lines)
    hits = 0
    if use_cache and config.cache:
        endpoint = judge_base_url(config)
        store = cache if cache is not None else VerdictCache(config.cache_path)
        screened = pending
        variant = answer_variant(config, variants)
        try:
            pending = [
                r
                for r in screened
                if store.get(
                    cache_key(model, template.version, r, endpoint=endpoint, variant=variant)
                )
                is None
            ]
        finally:
            if cache is None:
                store.close()
        hits = len(screened) - len(pending)
    batches = make_batches(pending, config.max_batch_size, config.max_code_lines)
    asks = plan_asks(config, template, variants)
    n_prompt = 0
    completion_tokens = 0
    ceiling_tokens = 0
    for b in batches:
        for ask in asks:  # K answers of a request with n=K each reserve max_tokens
            messages = render_messages(ask.prompt, b, config.max_code_lines, config.context_lines)
            n_prompt += prompt_tokens(messages, model)
            completion_tokens += answer_allowance(len(b)) * ask.n
            ceiling_tokens += answer_ceiling(len(b), config) * ask.n
    cost = cost_usd(model, n_prompt, completion_tokens, config.pricing)
    ceiling = cost_usd(model, n_prompt, ceiling_tokens, config.pricing)
    warnings = []
    if cost is None:
        warnings.append(f"no price for model {model}: cost estimated as 0")
    return DryRunEstimate(
        requests=len(requests),
        calls=len(batches) * len(asks),
        prompt_tokens=n_prompt,
        completion_tokens=completion_tokens,
        cost_usd=cost or 0.0,
        model=model,
        cache_hits=hits,
        held_back=len(held),
        warnings=warnings,
        confidence_source=config.confidence,
        samples=answers_per_claim(config),
        ceiling_usd=ceiling or 0.0,
    )
