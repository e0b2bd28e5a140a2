"""The search of ``citecal align``: candidates built on training folds, scored on held-out ones.

1. The start prompt judges every record once (the baseline, and the verdicts
   whose disagreements the candidates learn from).
2. Per fold, from the training reports only: few-shot examples mined from the
   start's disagreements (:func:`~citecal.calibrate.mine_few_shot`) and
   instruction edits proposed by the prompt critic (:mod:`._critic`).
3. Each recipe (an edit, the few-shot set, then combinations of the best of
   each) is made into a prompt per fold and judges that fold's scoring reports;
   pooled over the folds this is its out-of-sample answer on every record.
4. The best recipe by ``metric`` is kept only when the paired comparison with
   the start shows it better (:func:`decide`); the written prompt is the recipe
   applied to every label.

Every judgement goes through :class:`~citecal.verify.judge.Judge` and its
cache; the budget is checked before each judge run with the dry-run estimate
of the cache misses, so a limit is never overshot by a judge run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import tempfile
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from citecal.align._candidates import (
    Recipe,
    combinations,
    common_instructions,
    system_with,
    write_candidate,
)
from citecal.align._critic import Edit, ask_critic, critic_messages, load_critic_prompt
from citecal.align._decide import decide, mcnemar
from citecal.align._folds import Fold, make_folds
from citecal.align._models import AlignResult, CandidateResult, Interval
from citecal.align._score import METRICS, PairedScore, Side, paired_score
from citecal.calibrate import categorise, compare_judges, mine_few_shot, prepare
from citecal.config import CalibrationConfig, JudgeConfig
from citecal.errors import InputError
from citecal.models import Verdict
from citecal.verify.judge import (
    Budget,
    Judge,
    JudgeRun,
    PromptTemplate,
    apply_verdicts,
    build_judge,
    count_tokens,
    default_cache_path,
    estimate_cost,
    load_prompt,
    parse_prompt,
    prompt_text,
    prompt_warning,
    rejudge_requests,
    resolve_endpoint,
)

MAX_SEED = 2**32 - 1
"""Largest ``--seed`` (numpy's seeds are 0 or more)."""
MIN_RESAMPLES = 100
MAX_RESAMPLES = 100_000
"""``--resamples`` bounds: each resample of every candidate is a table in memory."""


@dataclass(frozen=True)
class AlignSettings:
    """What the search may try and spend (``citecal align`` options)."""

    folds: int = 5
    metric: str = "weighted_kappa"
    seed: int = 0
    examples: int = 6
    edits: int = 4
    max_candidates: int = 10
    max_calls: int | None = None
    max_cost: float | None = None
    resamples: int = 1000
    critic_prompt: str = "v2"

    def check(self) -> None:
        """Refuse settings no search can run with (README "Security": budgets that hold).

        Raises:
            InputError: a metric it does not know, a cost that is not a finite amount of
                dollars (NaN, infinite, negative), negative calls, a seed outside
                0..2**32-1 or resamples outside 100..:data:`MAX_RESAMPLES`.
        """
        import math

        if self.metric not in METRICS:
            raise InputError(f"metric {self.metric!r}: use one of {', '.join(METRICS)}")
        if self.max_cost is not None and not (math.isfinite(self.max_cost) and self.max_cost >= 0):
            raise InputError(f"--max-cost {self.max_cost!r}: give a number of dollars, 0 or more")
        if self.max_calls is not None and self.max_calls < 0:
            raise InputError(f"--max-calls {self.max_calls}: give a number of calls, 0 or more")
        if not 0 <= self.seed <= MAX_SEED:
            raise InputError(f"--seed {self.seed}: give a number from 0 to {MAX_SEED}")
        if not MIN_RESAMPLES <= self.resamples <= MAX_RESAMPLES:
            raise InputError(
                f"--resamples {self.resamples}: give a number from {MIN_RESAMPLES} to"
                f" {MAX_RESAMPLES:,}"
            )


Progress = Callable[[str, int, int], None]
"""``progress(description, done, total)``: units are (candidate or start) × fold."""


class BudgetExhausted(Exception):
    """The next judge or critic call would go past ``--max-calls`` / ``--max-cost``."""


@dataclass
class _Spend:
    settings: AlignSettings
    budget: Budget
    """One ledger for every judge and critic request of the search (README "Security"):
    each request reserves its ceiling and a call before it is sent."""
    calls: int = 0
    judge_calls: int = 0
    critic_calls: int = 0
    cache_hits: int = 0
    tokens: int = 0
    cost: float = 0.0
    stopped: str | None = None
    warnings: list[str] = field(default_factory=list)
    reserved_calls: int = 0
    reserved_cost: float = 0.0

    def check(self, calls: int, cost: float, what: str) -> None:
        """Raise BudgetExhausted when ``calls`` / ``cost`` more would pass a limit."""
        s = self.settings
        spent = self.calls + self.reserved_calls
        if s.max_calls is not None and spent + calls > s.max_calls:
            self.stopped = (
                f"--max-calls {s.max_calls}: {what} needs {calls} more call(s) after {spent}"
            )
            raise BudgetExhausted(self.stopped)
        dollars = self.cost + self.reserved_cost
        if s.max_cost is not None and dollars + cost > s.max_cost:
            self.stopped = (
                f"--max-cost {s.max_cost:g}: {what} needs ~${cost:.4f} more after ${dollars:.4f}"
            )
            raise BudgetExhausted(self.stopped)

    def add(self, run: JudgeRun, what: str = "a judge run") -> None:
        """Count a finished judge run; raise BudgetExhausted when the ledger refused any of
        its requests (a re-ask, a batch): its verdicts are incomplete."""
        self.count(run)
        if run.budget_reached:
            raise BudgetExhausted(self.refused(what))

    def refused(self, what: str) -> str:
        """Why the ledger stopped ``what`` (and the search)."""
        s = self.settings
        limits = [f"--max-calls {s.max_calls}"] if s.max_calls is not None else []
        limits += [f"--max-cost {s.max_cost:g}"] if s.max_cost is not None else []
        self.stopped = self.stopped or (
            f"{' / '.join(limits) or 'the budget'}: reached during {what} after"
            f" {self.budget.calls() or self.calls} call(s), ${self.budget.spent():.4f}"
        )
        return self.stopped

    def count(self, run: JudgeRun) -> None:
        """Count a finished judge run."""
        self.calls += run.calls
        self.judge_calls += run.calls
        self.cache_hits += run.cache_hits
        self.tokens += run.tokens
        self.cost += run.cost_usd
        for w in run.warnings:
            if w not in self.warnings:
                self.warnings.append(w)


def labels_hash(table: pd.DataFrame) -> str:
    """SHA-256 of the labels (record, annotator, human score), independent of row order."""
    import hashlib

    rows = sorted(
        zip(
            table["record_id"].astype(str),
            table["annotator"].astype(str),
            table["human_score"].astype(str),
            strict=True,
        )
    )
    return hashlib.sha256("\n".join("\t".join(r) for r in rows).encode()).hexdigest()


class _Search:
    def __init__(
        self,
        table: pd.DataFrame,
        config: JudgeConfig,
        start: PromptTemplate,
        start_spec: str,
        model: str,
        settings: AlignSettings,
        use_cache: bool,
        workdir: Path,
        progress: Progress | None,
        budget: Budget,
    ) -> None:
        self.table = table
        # One model scores each prompt: escalation would mix a second model into the scores.
        self.config = config.model_copy(update={"escalation_model": ""})
        self.start = start
        self.start_spec = start_spec
        self.model = model
        self.settings = settings
        self.use_cache = use_cache
        self.workdir = workdir
        self.progress = progress
        self.spend = _Spend(settings, budget)
        self.requests = {r.key: r for r in rejudge_requests(table)}
        first = table.drop_duplicates("record_id")
        self.record_report = dict(
            zip(first["record_id"].astype(str), first["report_id"].astype(str), strict=True)
        )
        self.folds = make_folds(list(table["report_id"].astype(str)), settings.folds, settings.seed)
        self.units = 0
        self.total_units = len(self.folds) * (1 + settings.max_candidates)
        self.critic = load_critic_prompt(settings.critic_prompt)
        self.start_judged: pd.DataFrame | None = None

    # ---------------------------------------------------------------- judging

    def _tick(self, what: str, n: int = 1) -> None:
        self.units += n
        if self.progress is not None:
            self.progress(what, min(self.units, self.total_units), self.total_units)

    def _judge(self, prompt_spec: str, keys: list[str], what: str) -> dict[str, Verdict]:
        reqs = [self.requests[k] for k in keys]
        est = estimate_cost(
            reqs, self.config, prompt_spec, model=self.model, use_cache=self.use_cache
        )
        self.spend.check(est.calls, est.ceiling_usd, what)
        judge = build_judge(
            self.config,
            prompt=prompt_spec,
            model=self.model,
            use_cache=self.use_cache,
            budget=self.spend.budget,
        )
        try:
            run = judge.judge(reqs)
        finally:
            judge.close()
        self.spend.add(run, what)
        return run.verdicts

    def _scoring_keys(self, fold: Fold) -> list[str]:
        scoring = set(fold.scoring_reports)
        return [k for k in self.requests if self.record_report[k] in scoring]

    # ---------------------------------------------------------------- stages

    def start_pass(self) -> pd.DataFrame:
        verdicts = self._judge(self.start_spec, list(self.requests), "the start prompt")
        self._tick("start prompt", len(self.folds))
        self.start_judged = apply_verdicts(self.table, verdicts)
        return self.start_judged

    def fold_material(self, judged: pd.DataFrame) -> tuple[list[tuple[Edit, ...]], list[str]]:
        """Per fold: the critic's edits and the few-shot text, from its training reports only."""
        base_url, api_key = resolve_endpoint(self.config)
        cache_dir = None
        if self.use_cache and self.config.cache:
            cache_dir = Path(self.config.cache_path or default_cache_path()).parent / "critic-cache"
        edits: list[tuple[Edit, ...]] = []
        shots: list[str] = []
        reports = judged["report_id"].astype(str)
        for fold in self.folds:
            train = judged[reports.isin(set(fold.training_reports))]
            scored = judged[reports.isin(set(fold.scoring_reports))]
            if self.settings.examples:
                few = mine_few_shot(train, scored, k=self.settings.examples)
                shots.append(few.text if few.n_examples else "")
            else:
                shots.append("")
            if self.settings.edits:
                mismatch = categorise(prepare(train))
                messages = critic_messages(
                    self.critic, self.start.system, mismatch, self.settings.edits
                )
                tokens = sum(count_tokens(m["content"], self.model) for m in messages)
                ceiling = self.config.critic_max_tokens
                self.spend.check(1, _price(self.config, self.model, tokens, ceiling), "the critic")
                answer = ask_critic(
                    self.config,
                    base_url=base_url,
                    api_key=api_key,
                    model=self.model,
                    critic=self.critic,
                    messages=messages,
                    n_edits=self.settings.edits,
                    cache_dir=cache_dir,
                    budget=self.spend.budget,
                )
                if answer.over_budget:
                    raise BudgetExhausted(self.spend.refused("the critic"))
                for why in answer.dropped:  # README "Security": edits are untrusted too
                    self.spend.warnings.append(f"fold {fold.index + 1}: the critic's {why}")
                self.spend.calls += answer.calls
                self.spend.critic_calls += answer.calls
                self.spend.cache_hits += answer.cache_hit
                self.spend.tokens += answer.prompt_tokens + answer.completion_tokens
                self.spend.cost += answer.cost_usd
                if answer.problem:
                    self.spend.warnings.append(
                        f"fold {fold.index + 1}: the critic's answer gave no edit"
                        f" ({answer.problem})"
                    )
                edits.append(answer.edits)
            else:
                edits.append(())
        return edits, shots

    def _text(
        self, recipe: Recipe, edits: tuple[Edit, ...], shots: str, where: str
    ) -> tuple[str, list[str]]:
        instructions = [edits[i - 1].instruction for i in recipe.edits if i <= len(edits)]
        examples = shots if recipe.examples else ""
        system = system_with(self.start, instructions, examples)
        comment = f"{self.start.version} + {recipe.name} (citecal align; {where})"
        return prompt_text(self.start, system, comment), instructions

    def _runs(
        self, recipe: Recipe, edits: list[tuple[Edit, ...]], shots: list[str]
    ) -> list[tuple[str, list[str], int]]:
        """The judge runs of a recipe: (prompt file, records scored with it, folds it covers).

        Folds whose prompt text is the same (an edit every fold's critic proposed) share one run.
        """
        groups: dict[str, list[Fold]] = {}
        for fold in self.folds:
            text, _ = self._text(
                recipe, edits[fold.index], shots[fold.index], "built on training folds"
            )
            groups.setdefault(text, []).append(fold)
        return [
            (
                str(write_candidate(self.workdir, self.start, recipe, text)),
                [k for f in folds for k in self._scoring_keys(f)],
                len(folds),
            )
            for text, folds in groups.items()
        ]

    def evaluate_all(
        self, recipes: list[Recipe], edits: list[tuple[Edit, ...]], shots: list[str]
    ) -> list[tuple[Recipe, dict[str, Verdict]]]:
        """Each recipe's out-of-sample verdict on every record (each from its scoring fold).

        Recipes are admitted in order while the budget covers their estimated calls and
        cost (the first that does not stops the search); the admitted ones are judged
        concurrently, all their requests sharing one ``concurrency`` limit, so one
        candidate's slowest batches do not hold up the next.
        """
        admitted: list[tuple[Recipe, list[tuple[str, list[str], int]]]] = []
        for recipe in recipes:
            runs = self._runs(recipe, edits, shots)
            ests = [
                estimate_cost(
                    [self.requests[k] for k in keys],
                    self.config,
                    path,
                    model=self.model,
                    use_cache=self.use_cache,
                )
                for path, keys, _ in runs
            ]
            # What the candidate's requests can cost at most: the ledger reserves as much.
            calls, cost = sum(e.calls for e in ests), sum(e.ceiling_usd for e in ests)
            try:
                self.spend.check(calls, cost, f"candidate {recipe.name}")
            except BudgetExhausted:
                break
            self.spend.reserved_calls += calls
            self.spend.reserved_cost += cost
            admitted.append((recipe, runs))
        try:
            results = _run_coroutine(self._judge_concurrently(admitted))
        finally:
            self.spend.reserved_calls = 0
            self.spend.reserved_cost = 0.0
        return results

    async def _judge_concurrently(
        self, admitted: list[tuple[Recipe, list[tuple[str, list[str], int]]]]
    ) -> list[tuple[Recipe, dict[str, Verdict]]]:
        slots = asyncio.Semaphore(self.config.concurrency)
        judges: list[Judge] = []

        async def one(judge: Judge, keys: list[str], n_folds: int, name: str) -> JudgeRun:
            run = await judge.ajudge([self.requests[k] for k in keys])
            self.spend.count(run)
            if run.budget_reached:  # a refused re-ask or batch: this candidate is incomplete
                self.spend.refused(f"candidate {name}")
            self._tick(f"candidate {name}", n_folds)
            return run

        try:
            tasks = []
            for recipe, runs in admitted:
                for path, keys, n_folds in runs:
                    judge = build_judge(
                        self.config,
                        prompt=path,
                        model=self.model,
                        use_cache=self.use_cache,
                        slots=lambda: slots,
                        budget=self.spend.budget,
                    )
                    judges.append(judge)
                    tasks.append(one(judge, keys, n_folds, recipe.name))
            done = list(await asyncio.gather(*tasks))
        finally:
            for judge in judges:
                judge.close()
        out: list[tuple[Recipe, dict[str, Verdict]]] = []
        i = 0
        for recipe, runs in admitted:
            verdicts: dict[str, Verdict] = {}
            complete = True
            for _ in runs:
                verdicts.update(done[i].verdicts)
                complete = complete and not done[i].budget_reached
                i += 1
            if complete:  # a candidate the budget cut short is not scored
                out.append((recipe, verdicts))
        return out


T = TypeVar("T")


def _run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to the end; inside a running loop (Jupyter) in a worker thread's own loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="citecal-align") as ex:
        return ex.submit(asyncio.run, coro).result()


def _price(config: JudgeConfig, model: str, prompt_tokens: int, completion_tokens: int) -> float:
    from citecal.verify.judge import cost_usd

    return cost_usd(model, prompt_tokens, completion_tokens, config.pricing) or 0.0


def _interval(value: float | None, ci: list[float] | None) -> Interval:
    return Interval(value=value, ci=ci)


def align_prompt(
    table: pd.DataFrame,
    config: JudgeConfig,
    *,
    prompt: str,
    model: str | None = None,
    settings: AlignSettings | None = None,
    use_cache: bool = True,
    input_name: str = "annotations",
    progress: Progress | None = None,
    budget: Budget | None = None,
) -> AlignResult:
    """Search for a judge prompt that agrees better with the labels in ``table``.

    ``budget`` is the ledger every judge and critic request reserves from before it
    is sent (default: ``settings.max_cost`` and ``settings.max_calls``, no question);
    the CLI passes one that asks above ``judge.confirm_above_usd`` (README "Security").

    Returns the scored candidates, the decision and, when a candidate is kept,
    the prompt text to write (:attr:`AlignResult.prompt_text`, provenance front
    matter included). Nothing is written here.

    Raises:
        InputError: bad table, prompt, folds or metric.
        JudgeUnavailable: no API key for a non-local endpoint.
        JudgeError: the API failed past the retry policy.
    """
    settings = settings or AlignSettings()
    settings.check()
    if budget is None:
        budget = Budget(settings.max_cost, max_calls=settings.max_calls)
    start = load_prompt(prompt)
    prepare(table)  # validates the human columns before any call
    with tempfile.TemporaryDirectory(prefix="citecal-align-") as tmp:
        search = _Search(
            table,
            config,
            start,
            prompt,
            model or config.judge_model,
            settings,
            use_cache,
            Path(tmp),
            progress,
            budget,
        )
        return _run(search, input_name)


def _run(search: _Search, input_name: str) -> AlignResult:
    s = search.settings
    table = search.table
    result_base = {
        "input": input_name,
        "parent": search.start.version,
        "labels_sha256": labels_hash(table),
        "n_records": len(search.requests),
        "n_annotations": len(table),
        "n_reports": int(table["report_id"].nunique()),
        "folds": len(search.folds),
        "fold_reports": [list(f.scoring_reports) for f in search.folds],
        "metric": s.metric,
        "model": search.model,
        "critic": search.critic.version,
        "seed": s.seed,
    }
    try:
        judged = search.start_pass()
    except BudgetExhausted:
        return AlignResult(
            **result_base,
            before=Interval(value=None, ci=None),
            candidates=[],
            kept=False,
            reason="the budget does not cover judging the start prompt",
            **_spend_fields(search),
        )
    start_prep = prepare(judged)
    start_side = Side.of(start_prep)
    reports = start_prep["report_id"].to_numpy(dtype=object)
    human = start_prep["human_score"].to_numpy(dtype=np.int64)
    scored: list[tuple[Recipe, CandidateResult, pd.DataFrame, PairedScore]] = []
    before: PairedScore | None = None

    def score(recipe: Recipe, verdicts: dict[str, Verdict], instructions: list[str]) -> None:
        nonlocal before
        prep = prepare(apply_verdicts(table, verdicts))
        ps = paired_score(
            s.metric, reports, human, start_side, Side.of(prep), resamples=s.resamples, seed=s.seed
        )
        if before is None:
            before = ps
        scored.append(
            (
                recipe,
                CandidateResult(
                    name=recipe.name,
                    kind=recipe.kind,
                    instructions=instructions,
                    examples=recipe.examples,
                    score=_interval(ps.b, ps.ci_b),
                    gain=_interval(ps.diff, ps.ci_diff),
                    n_pairs=ps.n_pairs,
                ),
                prep,
                ps,
            )
        )

    try:
        edits, shots = search.fold_material(judged)
        singles: list[Recipe] = []
        n_edits = max((len(e) for e in edits), default=0)
        singles += [Recipe(edits=(i,)) for i in range(1, n_edits + 1)]
        if s.examples and any(shots):
            singles.append(Recipe(examples=s.examples))
        singles = singles[: s.max_candidates]
        search.total_units = len(search.folds) * (1 + len(singles))  # grows with combinations
        for recipe, verdicts in search.evaluate_all(singles, edits, shots):
            score(recipe, verdicts, common_instructions(recipe, edits))
        if search.spend.stopped is None:
            combos = combinations([(r, ps) for r, _, _, ps in scored], s.examples)[
                : max(0, s.max_candidates - len(scored))
            ]
            search.total_units += len(search.folds) * len(combos)
            for recipe, verdicts in search.evaluate_all(combos, edits, shots):
                score(recipe, verdicts, common_instructions(recipe, edits))
    except BudgetExhausted:
        pass
    if before is None:  # no candidate finished: the start's own score, for the report
        before = paired_score(
            s.metric, reports, human, start_side, start_side, resamples=s.resamples, seed=s.seed
        )
    base = _interval(before.a, before.ci_a)
    candidates = [c for _, c, _, _ in scored]
    if not scored:
        return AlignResult(
            **result_base,
            before=base,
            candidates=candidates,
            kept=False,
            reason="no candidate was scored"
            + (" before the budget ran out" if search.spend.stopped else ""),
            **_spend_fields(search),
        )
    tried = len(scored)
    cal = CalibrationConfig(bootstrap_resamples=s.resamples, seed=s.seed)

    def rank(i: int) -> tuple[float, int, int]:
        recipe, _, _, ps = scored[i]
        value = ps.b if ps.b is not None else -np.inf
        return (value, -len(recipe.edits) - bool(recipe.examples), -i)

    # Every candidate is tested at ALPHA / tried (decide): the best by the metric among
    # those shown better is kept; when none is, the report names the best and why not.
    chosen: tuple[int, bool, str] | None = None
    for i in sorted(range(tried), key=rank, reverse=True):
        ps = scored[i][3]
        if ps.diff is None or ps.diff <= 0:
            break
        b01, b10, p = mcnemar(start_prep, scored[i][2])
        kept, reason = decide(ps, p, b01, b10, tried)
        if chosen is None or kept:
            chosen = (i, kept, reason)
        if kept:
            break
    if chosen is None:
        chosen = (max(range(tried), key=rank), False, "no candidate scored above the start")
    best, kept, reason = chosen
    comparison = compare_judges(
        start_prep,
        scored[best][2],
        name_a=search.start.version,
        name_b=scored[best][0].name,
        config=cal,
    )
    recipe, winner = scored[best][0], scored[best][1]
    result = AlignResult(
        **result_base,
        before=base,
        candidates=candidates,
        winner=recipe.name,
        after=winner.score,
        gain=winner.gain,
        mcnemar_p=comparison.mcnemar_p,
        comparison=comparison,
        kept=kept,
        reason=reason,
        **_spend_fields(search),
    )
    if kept:
        text = _final_text(search, recipe, edits)
        # README "Security": what is written is sent with every request of every later run.
        steering = prompt_warning(parse_prompt(text, search.start.name, "(the written prompt)"))
        if steering is not None:
            return result.model_copy(update={"kept": False, "reason": f"{steering}; not written"})
        result = result.model_copy(update={"prompt_text": text})
    return result


def _spend_fields(search: _Search) -> dict[str, object]:
    sp = search.spend
    return {
        "calls": sp.calls,
        "judge_calls": sp.judge_calls,
        "critic_calls": sp.critic_calls,
        "cache_hits": sp.cache_hits,
        "tokens": sp.tokens,
        "cost_usd": sp.cost,
        "stopped": sp.stopped,
        "warnings": sp.warnings,
    }


def _final_text(search: _Search, recipe: Recipe, edits: list[tuple[Edit, ...]]) -> str:
    """The recipe applied to every label: the edits scored in the folds, examples from all."""
    instructions = common_instructions(recipe, edits)
    examples = ""
    if recipe.examples and search.start_judged is not None:
        judged = search.start_judged
        few = mine_few_shot(judged, judged.iloc[0:0], k=recipe.examples)
        examples = few.text
    system = system_with(search.start, instructions, examples)
    return prompt_text(
        search.start, system, f"{search.start.version} + {recipe.name} (citecal align)"
    )
