"""``citecal align --dry-run``: the calls, tokens and cost a search would take, sending nothing.

The start pass is estimated exactly as ``rejudge --dry-run`` does (its cache
hits not counted). Candidate prompts are the start prompt plus edits and
examples that are not known before the critic answers, so each candidate pass
is estimated with the start prompt plus the few-shot text mined from the
table's own verdicts: calls are exact (batching does not depend on the
prompt), tokens and dollars a lower bound, and cached candidates are not
foreseen (README "Aligning the judge").
"""

from __future__ import annotations

import pandas as pd

from citecal.align._critic import critic_messages, load_critic_prompt
from citecal.align._folds import make_folds
from citecal.align._search import AlignSettings
from citecal.calibrate import categorise, mine_few_shot, prepare
from citecal.config import JudgeConfig
from citecal.verify.judge import cost_usd, count_tokens, estimate_cost, rejudge_requests

CRITIC_ANSWER_TOKENS = 400
"""Allowance for one critic answer (a few edits of one or two sentences)."""


def search_estimate(
    table: pd.DataFrame,
    config: JudgeConfig,
    *,
    prompt: str,
    model: str | None,
    settings: AlignSettings,
    use_cache: bool = True,
) -> tuple[str, float]:
    """The dry-run line and its dollars (0 for a model without a price): what ``align``
    compares with ``judge.confirm_above_usd`` before any call (README "Security")."""
    config = config.model_copy(update={"escalation_model": ""})
    model = model or config.judge_model
    requests = rejudge_requests(table)
    folds = make_folds(list(table["report_id"].astype(str)), settings.folds, settings.seed)
    start = estimate_cost(requests, config, prompt, model=model, use_cache=use_cache)
    nocache = estimate_cost(requests, config, prompt, model=model, use_cache=False)
    prepared = prepare(table)
    reports = table["report_id"].astype(str)
    report_of = dict(zip(table["record_id"].astype(str), reports, strict=False))
    critic_in = critic_out = 0
    shots_tokens = 0
    per_fold_calls = 0
    for fold in folds:
        train = table[reports.isin(set(fold.training_reports))]
        scored = table[reports.isin(set(fold.scoring_reports))]
        if settings.edits:
            mismatch = categorise(prepared[prepared["report_id"].isin(set(fold.training_reports))])
            messages = critic_messages(
                load_critic_prompt(settings.critic_prompt), "", mismatch, settings.edits
            )
            critic_in += sum(count_tokens(m["content"], model) for m in messages)
            critic_out += CRITIC_ANSWER_TOKENS
        fold_reqs = [r for r in requests if report_of[r.key] in set(fold.scoring_reports)]
        est = estimate_cost(fold_reqs, config, prompt, model=model, use_cache=False)
        per_fold_calls += est.calls
        if settings.examples:
            few = mine_few_shot(train, scored, k=settings.examples)
            shots_tokens += count_tokens(few.text, model) * est.calls
    n_critic = len(folds) if settings.edits else 0
    singles = settings.edits + (1 if settings.examples else 0)
    combos = (1 if settings.edits >= 2 else 0) + (2 if settings.edits and settings.examples else 0)
    n_candidates = min(settings.max_candidates, singles + combos)
    cand_calls = n_candidates * per_fold_calls
    cand_in = n_candidates * nocache.prompt_tokens * per_fold_calls // max(nocache.calls, 1)
    cand_in += shots_tokens * (1 + (1 if combos >= 2 else 0)) if settings.examples else 0
    cand_out = n_candidates * nocache.completion_tokens * per_fold_calls // max(nocache.calls, 1)
    tokens_in = start.prompt_tokens + critic_in + cand_in
    tokens_out = start.completion_tokens + critic_out + cand_out
    calls = start.calls + n_critic + cand_calls
    dollars = cost_usd(model, tokens_in, tokens_out, config.pricing)
    price = f"~${dollars:.4f}" if dollars is not None else f"$0 (no price for model {model})"
    cached = f" ({start.cache_hits} start answers cached)" if start.cache_hits else ""
    line = (
        f"dry run: {len(requests)} records, {len(folds)} folds by report, up to {n_candidates} "
        f"candidates ({model}): up to {calls} calls ({start.calls} start{cached}, "
        f"{n_critic} critic, {cand_calls} candidate), ~{tokens_in + tokens_out} tokens "
        f"(~{tokens_in} in, ~{tokens_out} out), {price}; candidates' edits are not known before "
        "the critic answers, so tokens and cost are a lower bound; nothing was sent"
    )
    return line, dollars or 0.0
