"""The LLM judge: batched, concurrent, cached, costed, escalating, fault tolerant.

:func:`build_judge` checks what can be checked without the network (prompt,
API key) and returns a :class:`Judge`; :meth:`Judge.judge` runs one set of
requests and always returns a verdict per request unless the API refuses in a
way that must stop the run (:class:`~citecal.errors.JudgeError`).

Escalation: a first-pass verdict whose certainty is below
``confidence_threshold`` is asked again, alone, of ``escalation_model``. The
certainty of a confidence label is :data:`CONFIDENCE_CERTAINTY` (high 0.9,
medium 0.6, low 0.3), so with the default threshold 0.7 medium and low answers
escalate. Both answers are kept (``escalated_from``); the escalated one
decides. Escalation is off when ``escalation_model`` is empty or equals the
judge model; an escalation model the endpoint does not know (HTTP 404, e.g.
``gpt-4o`` on a local server) switches escalation off for the run with a
warning instead of stopping it. With a numeric confidence (``logprob``,
``consistency``, ``simulated``: README "Judge confidence") a verdict escalates
when its ``confidence_value`` is below the threshold.

Confidence: every verdict records ``confidence_source`` and
``confidence_value`` (how likely it is right). The requests a batch takes per
source are :func:`~citecal.verify.judge._asks.plan_asks`'s; K answers are
aggregated by :func:`~citecal.verify.judge._confidence.aggregate`, a verdict
token's probability read by
:func:`~citecal.verify.judge._confidence.logprob_confidences`. A server
without logprobs, or that ignores ``n``, is handled with one warning: the
judge's own words, or one request per sample.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import ipaddress
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from typing import TypeVar
from urllib.parse import urlparse

from citecal.config import JudgeConfig
from citecal.errors import InputError
from citecal.models import Verdict, support_of, support_score, verdict_confidence
from citecal.verify.judge._asks import Ask, answer_variant, plan_asks
from citecal.verify.judge._batching import make_batches
from citecal.verify.judge._budget import (
    BUDGET_REASON,
    Budget,
    answer_ceiling,
    request_ceiling,
    request_estimate,
)
from citecal.verify.judge._cache import VerdictCache, VerdictStore, cache_key
from citecal.verify.judge._client import (
    ChatClient,
    Choice,
    Completion,
    JudgeAPIError,
    LogprobsRejected,
    NotAdmitted,
    NRejected,
    ResponseFormatRejected,
    RetryPolicy,
    TemperatureRejected,
    TimedOut,
    Unreachable,
    openai_client,
)
from citecal.verify.judge._confidence import aggregate, logprob_confidences
from citecal.verify.judge._injection import INJECTION_REASON, Injection, hold_back, screen
from citecal.verify.judge._parse import (
    AnswerParseError,
    JudgeAnswer,
    parse_batch,
    parse_single,
    response_format,
)
from citecal.verify.judge._pricing import cost_usd
from citecal.verify.judge._prompts import PromptTemplate, load_prompt, render_messages
from citecal.verify.judge._types import JudgeRequest, JudgeRun, JudgeUnavailable

log = logging.getLogger("citecal.judge")

T = TypeVar("T")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_API_KEY = "citecal-local"
"""Key sent to a loopback endpoint when none is set (local servers accept any key)."""

CONFIDENCE_CERTAINTY: dict[str, float] = {"high": 0.9, "medium": 0.6, "low": 0.3}
"""Numeric certainty of a confidence label, compared with ``confidence_threshold``."""


def is_loopback_url(url: str) -> bool:
    """True for ``localhost`` and 127.0.0.0/8 or ``::1`` URLs."""
    host = urlparse(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def judge_base_url(config: JudgeConfig) -> str:
    """The endpoint: ``judge.base_url`` (user settings only), ``OPENAI_BASE_URL``, or OpenAI."""
    return config.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL


def resolve_endpoint(config: JudgeConfig) -> tuple[str, str]:
    """Base URL and API key to use; raise JudgeUnavailable when there is no key.

    A loopback endpoint (vLLM, Ollama, llama.cpp on this machine) may run
    without ``OPENAI_API_KEY``: such servers accept any key, so a placeholder
    is sent. Any other endpoint needs the key named by ``api_key_env``.
    """
    base_url = judge_base_url(config)
    key = os.environ.get(config.api_key_env, "").strip()
    if not key:
        if is_loopback_url(base_url):
            return base_url, LOCAL_API_KEY
        raise JudgeUnavailable(
            f"LLM judge unavailable: {config.api_key_env} is not set"
            f" (needed for {base_url}; use --no-llm to skip the judge)"
        )
    return base_url, key


@dataclass
class _Tally:
    """Mutable accounting of one run (single event loop: no locking needed)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cache_hits: int = 0
    no_usage_calls: int = 0
    unpriced: set[str] = field(default_factory=set)
    parse_failures: int = 0
    first_parse_error: str = ""
    unusable_items: int = 0
    timed_out: int = 0
    unreachable: int = 0
    escalation_failures: int = 0
    budget_reached: int = 0
    escalations_over_budget: int = 0
    escalate: bool = True
    no_logprobs: int = 0
    warnings: list[str] = field(default_factory=list)


def _split(total: int, n: int) -> list[int]:
    """``total`` split into ``n`` integer shares that add up exactly."""
    base, rest = divmod(total, n)
    return [base + (1 if i < rest else 0) for i in range(n)]


async def _gather_or_cancel(coros: Iterable[Awaitable[T]]) -> list[T]:
    """Run concurrently; on the first error cancel the rest, then re-raise it."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _injection_warning(requests: Sequence[JudgeRequest], held: dict[str, Injection]) -> str:
    first = next(r for r in requests if r.key in held)
    found = held[first.key]
    return (
        f"{len(held)} claims not sent to the judge: {INJECTION_REASON} (text addressed to the"
        f" judge, e.g. in the {found.where} of {first.citation}: {found.text!r}); they are"
        " unverified with suggested action annotate, for a person to check"
    )


@dataclass
class _Gathered:
    """What the requests of one batch brought back, per claim (mutable while they arrive)."""

    answers: list[list[tuple[JudgeAnswer, float | None]]]
    tokens: list[int]
    cost: list[float]
    calls: int = 0
    failures: list[str] = field(default_factory=list)

    @classmethod
    def empty(cls, n: int) -> _Gathered:
        return cls([[] for _ in range(n)], [0] * n, [0.0] * n)

    def add(
        self,
        comp: Completion,
        cost: float,
        n: int,
        answers: list[list[tuple[JudgeAnswer, float | None]]],
    ) -> None:
        """One answered request: its usage split evenly over the batch's claims."""
        self.calls += 1
        for i, share in enumerate(_split(comp.prompt_tokens + comp.completion_tokens, n)):
            self.tokens[i] += share
            self.cost[i] += cost / n
            self.answers[i].extend(answers[i])


class _EscalationModelMissing(Exception):
    pass


class _OverBudget(Exception):
    """A request's estimate does not fit in what is left of the cap: not sent."""


class Judge:
    """Verifies claims against cited code with an LLM (build with :func:`build_judge`).

    Attributes:
        model: first-pass judge model.
        escalation_model: model asked again for uncertain verdicts, or None.
        prompt_version: prompt name + content hash, stored on every verdict.
        base_url: the OpenAI-compatible endpoint.
    """

    def __init__(
        self,
        config: JudgeConfig,
        prompt: PromptTemplate,
        model: str,
        base_url: str,
        api_key: str,
        cache: VerdictStore | None,
        slots: Callable[[], AbstractAsyncContextManager[object]] | None = None,
        budget: Budget | None = None,
        variants: Sequence[PromptTemplate] = (),
    ) -> None:
        self.config = config
        # What the run may spend (README "Security"); no cap and no question by default.
        self.budget = budget if budget is not None else Budget()
        self.prompt = prompt
        self.model = model
        self.prompt_version = prompt.version
        esc = (config.escalation_model or "").strip()
        self.escalation_model: str | None = esc if esc and esc != model else None
        self.base_url = base_url
        self._api_key = api_key
        self.cache = cache
        # Request slots: one semaphore per run by default; eval-batch passes a
        # cluster-wide one so all Dask workers together respect one limit.
        self._slots = slots
        self._structured = config.structured_outputs
        self._temperature: float | None = config.temperature
        # README "Judge confidence": how sure the judge is, and what asking costs.
        self.confidence = config.confidence
        self.samples = config.samples
        self.variants: tuple[PromptTemplate, ...] = tuple(variants)
        if self.confidence == "simulated" and len(self.variants) < self.samples:
            raise InputError(
                f"--confidence simulated needs {self.samples} few-shot variants (judge.samples),"
                f" got {len(self.variants)}: give --simulated-from ANNOTATIONS"
            )
        self.repeat = 0
        """Which repeat of the same question this is (``rejudge --repeats``; cached apart)."""
        self._use_n = config.use_n
        self._logprobs = True
        self._sample_temperature: float | None = config.sample_temperature
        self._policy = RetryPolicy(
            max_retries=config.max_retries,
            backoff_base_s=config.backoff_base_s,
            backoff_max_s=config.backoff_max_s,
            timeout_s=config.timeout_s,
        )

    # ------------------------------------------------------------------ public

    def judge(
        self,
        requests: Sequence[JudgeRequest],
        progress: Callable[[int], None] | None = None,
    ) -> JudgeRun:
        """Judge every request; block until done.

        ``progress`` is called with the number of requests finished so far
        (cumulative, cache hits included) each time some finish. Runs its own
        event loop; inside an already running loop (a Jupyter kernel) it runs
        in a worker thread.

        Raises:
            JudgeError: an API error the retry policy cannot get past.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.ajudge(requests, progress))
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="citecal-judge") as ex:
            return ex.submit(asyncio.run, self.ajudge(requests, progress)).result()

    def for_model(self, model: str, *, escalate: bool = False) -> Judge:
        """This judge (settings, cache, budget, request slots) asking ``model`` instead.

        The cascade's judge tiers (README "The cascade") ask each model in turn and
        decide escalation themselves, so the copy does not escalate unless asked.
        """
        other = copy.copy(self)
        other.model = model
        if not escalate:
            other.escalation_model = None
        return other

    def for_repeat(self, repeat: int) -> Judge:
        """This judge asking the same questions again: repeat ``repeat`` is cached apart.

        ``citecal rejudge --repeats K`` measures how stable the judge's verdicts
        are (README "Judge confidence"); repeat 0 is the ordinary answer.
        """
        other = copy.copy(self)
        other.repeat = repeat
        return other

    def variant(self) -> dict[str, object]:
        """What changes this judge's answers beyond model, prompt and claim (cache keys)."""
        return answer_variant(self.config, self.variants, self.repeat)

    async def ajudge(
        self,
        requests: Sequence[JudgeRequest],
        progress: Callable[[int], None] | None = None,
    ) -> JudgeRun:
        """The coroutine behind :meth:`judge`, for callers that have a loop."""
        keys = [r.key for r in requests]
        if len(set(keys)) != len(keys):
            raise ValueError("JudgeRequest keys must be unique within a run")
        if not requests:
            return JudgeRun(verdicts={})
        tally = _Tally()
        finished = 0

        def done(n: int) -> None:
            nonlocal finished
            finished += n
            if progress is not None:
                progress(finished)

        # Text addressed to the judge never reaches it: a person decides (README "Security").
        everything = requests
        requests, held_back = screen(requests, self.config.max_code_lines)
        held = {key: self._held_back(found) for key, found in held_back.items()}
        if held_back:
            tally.warnings.append(_injection_warning(everything, held_back))
            done(len(held))
        if not requests:
            return JudgeRun(
                verdicts={r.key: held[r.key] for r in everything},
                warnings=tally.warnings,
                held_back=len(held),
            )

        # The same claim citing the same code twice is judged once (copies cost nothing).
        by_content: dict[str, JudgeRequest] = {}
        copies: dict[str, list[str]] = {}
        for r in requests:
            original = by_content.setdefault(self._key(self.model, r), r)
            if original is not r:
                copies.setdefault(original.key, []).append(r.key)
        unique = list(by_content.values())
        first: dict[str, Verdict] = {}
        pending: list[JudgeRequest] = []
        for r in unique:
            hit = self._cache_get(self.model, r)
            if hit is not None:
                first[r.key] = hit
                tally.cache_hits += 1
            else:
                pending.append(r)
        if pending and self.budget.needs_estimate():  # README "Security": ask before spending
            estimate = self._estimate(pending)
            if self.budget.remote:  # a cluster ledger answers over the network
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(None, self.budget.check_estimate, estimate)
            else:
                self.budget.check_estimate(estimate)
        client = openai_client(self.base_url, self._api_key, self.config.timeout_s)
        chat = ChatClient(
            client,
            self.base_url,
            self._policy,
            self._slots() if self._slots else asyncio.Semaphore(self.config.concurrency),
            api_key_env=self.config.api_key_env,
        )
        tally.escalate = self.escalation_model is not None
        try:

            async def from_cache(r: JudgeRequest) -> dict[str, Verdict]:
                final = await self._finish(chat, r, first[r.key], tally)
                done(1)
                return {r.key: final}

            async def from_batch(batch: list[JudgeRequest]) -> dict[str, Verdict]:
                got = await self._first_pass(chat, batch, tally)
                finals = await _gather_or_cancel(
                    self._finish(chat, r, got[r.key], tally) for r in batch
                )
                out = {r.key: v for r, v in zip(batch, finals, strict=True)}
                done(len(batch))
                return out

            coros: list[Awaitable[dict[str, Verdict]]] = [
                from_cache(r) for r in unique if r.key in first
            ]
            coros += [
                from_batch(b)
                for b in make_batches(
                    pending, self.config.max_batch_size, self.config.max_code_lines
                )
            ]
            parts = await _gather_or_cancel(coros)
        finally:
            await client.close()
        merged: dict[str, Verdict] = dict(held)
        for part in parts:
            merged.update(part)
        for key, dupes in copies.items():
            for dupe in dupes:
                merged[dupe] = replace(merged[key], tokens=0, cost_usd=0.0)
        done(sum(len(d) for d in copies.values()))
        self._summarise(tally, chat)
        return JudgeRun(
            verdicts={k: merged[k] for k in keys},
            calls=tally.calls,
            prompt_tokens=tally.prompt_tokens,
            completion_tokens=tally.completion_tokens,
            cost_usd=tally.cost_usd,
            cache_hits=tally.cache_hits,
            warnings=tally.warnings,
            held_back=len(held),
            budget_reached=tally.budget_reached,
            confidence_source=self.confidence,
            samples=self.samples if self.confidence in ("consistency", "simulated") else 1,
        )

    def close(self) -> None:
        """Release the cache connection (the client is per run and already closed)."""
        if self.cache is not None:
            self.cache.close()

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ stages

    def _estimate(self, pending: Sequence[JudgeRequest]) -> float:
        """Dollars the first pass of ``pending`` is expected to cost (as a dry run counts)."""
        if not self.budget.needs_estimate():
            return 0.0
        total = 0.0
        asks = self._plan()
        for batch in make_batches(
            list(pending), self.config.max_batch_size, self.config.max_code_lines
        ):
            for ask in asks:
                messages = render_messages(
                    ask.prompt, batch, self.config.max_code_lines, self.config.context_lines
                )
                total += request_estimate(messages, len(batch), self.model, self.config, ask.n)
        return total

    def _plan(self) -> list[Ask]:
        return plan_asks(self.config, self.prompt, self.variants, use_n=self._use_n)

    def _key(self, model: str, r: JudgeRequest) -> str:
        return cache_key(
            model, self.prompt_version, r, endpoint=self.base_url, variant=self.variant()
        )

    def _cache_get(self, model: str, r: JudgeRequest) -> Verdict | None:
        if self.cache is None:
            return None
        return self.cache.get(self._key(model, r))

    def _cache_put(self, model: str, r: JudgeRequest, v: Verdict) -> None:
        if self.cache is not None and v.verdict != "unverified":
            self.cache.put(self._key(model, r), v)

    def _unverified(self, model: str, why: str, tokens: int = 0, cost: float = 0.0) -> Verdict:
        return Verdict(
            verdict="unverified",
            method="llm",
            confidence="low",
            score=None,
            reasoning=why,
            model=model,
            prompt_version=self.prompt_version,
            tokens=tokens,
            cost_usd=cost,
        )

    def _over_budget(self, model: str) -> Verdict:
        cap = self.budget.cap or 0.0
        return Verdict(
            verdict="unverified",
            method="llm",
            confidence="low",
            score=None,
            reasoning=f"{BUDGET_REASON}: the judge's spending cap (${cap:.4f}) had no room"
            " for this request; not judged",
            model=model,
            prompt_version=self.prompt_version,
            abstain_reason="budget reached",
        )

    def _held_back(self, found: Injection) -> Verdict:
        return hold_back(None, found, self.prompt_version)

    def _verdict(
        self,
        a: JudgeAnswer,
        model: str,
        tokens: int,
        cost: float,
        logprob: float | None = None,
    ) -> Verdict:
        """One answer as a verdict: its own words, or its verdict token's probability."""
        support = support_score(a.verdict, a.confidence, a.score)
        source = "verbal"
        value = verdict_confidence(a.verdict, support)
        if logprob is not None:
            source, value, support = "logprob", logprob, support_of(a.verdict, logprob)
        return Verdict(
            verdict=a.verdict,
            method="llm",
            confidence=a.confidence,
            score=support,
            reasoning=a.reasoning,
            model=model,
            prompt_version=self.prompt_version,
            tokens=tokens,
            cost_usd=cost,
            mode=a.mode,
            confidence_source=source,  # type: ignore[arg-type]
            confidence_value=value,
        )

    def _majority(
        self, answers: Sequence[JudgeAnswer], model: str, tokens: int, cost: float
    ) -> Verdict:
        """K answers as one verdict: the majority, its confidence the share agreeing with it."""
        m = aggregate(answers)
        a = m.answer
        what = "samples" if self.confidence == "consistency" else "simulated annotators"
        asked = f" ({self.samples} asked)" if m.total < self.samples else ""
        return Verdict(
            verdict=a.verdict,
            method="llm",
            confidence=a.confidence,
            score=round(m.supports_share, 6),
            reasoning=f"{m.agreeing} of {m.total} {what} agree{asked}. {a.reasoning}".strip(),
            model=model,
            prompt_version=self.prompt_version,
            tokens=tokens,
            cost_usd=cost,
            mode=a.mode,
            confidence_source=self.confidence,
            confidence_value=round(m.share, 6),
        )

    async def _call(
        self,
        chat: ChatClient,
        model: str,
        batch: Sequence[JudgeRequest],
        tally: _Tally,
        ask: Ask | None = None,
    ) -> tuple[Completion, float]:
        """One API request for ``batch``; falls back to plain JSON once if needed."""
        ask = ask or Ask(self.prompt)
        messages = render_messages(
            ask.prompt, batch, self.config.max_code_lines, self.config.context_lines
        )
        # README "Security": a request starts only when what it can cost at most (its prompt
        # and its max_tokens for each of its n answers) fits in what is left, checked when it
        # holds its slot, after the answers before it were counted.
        ceiling = answer_ceiling(len(batch), self.config)
        estimate = request_ceiling(messages, ceiling * ask.n, model, self.config)
        held = False

        async def admit() -> bool:
            nonlocal held
            if held:  # asked again after a fallback (plain JSON, default temperature)
                return True
            if self.budget.remote:
                loop = asyncio.get_running_loop()
                held = await loop.run_in_executor(None, self.budget.reserve, estimate)
            else:
                held = self.budget.reserve(estimate)
            return held

        try:
            comp = await self._complete(
                chat, model, messages, len(batch) > 1, tally, admit, ask, ceiling
            )
        except NotAdmitted:
            raise _OverBudget from None
        except BaseException:
            if held:
                await self._settle(estimate, 0.0)
            raise
        tally.calls += 1
        tally.prompt_tokens += comp.prompt_tokens
        tally.completion_tokens += comp.completion_tokens
        if not comp.has_usage:
            tally.no_usage_calls += 1
        cost = cost_usd(model, comp.prompt_tokens, comp.completion_tokens, self.config.pricing)
        if cost is None:
            tally.unpriced.add(model)
            cost = 0.0
        tally.cost_usd += cost
        await self._settle(estimate, cost)  # counted as the answer arrives
        return comp, cost

    async def _settle(self, estimate: float, cost: float) -> None:
        if self.budget.remote:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, self.budget.settle, estimate, cost)
        else:
            self.budget.settle(estimate, cost)

    async def _complete(
        self,
        chat: ChatClient,
        model: str,
        messages: list[dict[str, str]],
        is_batch: bool,
        tally: _Tally,
        admit: Callable[[], Awaitable[bool]],
        ask: Ask,
        max_tokens: int,
    ) -> Completion:
        """The API request; falls back to plain JSON / default temperature / no logprobs once."""
        while True:
            rf = response_format(is_batch) if self._structured else None
            temperature = self._sample_temperature if ask.sampled else self._temperature
            top = ask.top_logprobs if self._logprobs else None
            try:
                comp = await chat.complete(
                    model,
                    messages,
                    rf,
                    temperature,
                    admit,
                    n=ask.n,
                    top_logprobs=top,
                    max_tokens=max_tokens,
                )
            except ResponseFormatRejected as exc:
                if self._structured:
                    self._structured = False
                    tally.warnings.append(
                        f"endpoint {self.base_url} rejected structured outputs ({exc});"
                        " using plain JSON instructions"
                    )
                continue
            except TemperatureRejected as exc:
                if ask.sampled and self._sample_temperature is not None:
                    self._sample_temperature = None
                    tally.warnings.append(
                        f"model {model} rejected temperature={temperature} for the consistency"
                        f" samples ({exc}); sampling at the model's default"
                    )
                elif not ask.sampled and self._temperature is not None:
                    self._temperature = None
                    tally.warnings.append(
                        f"model {model} rejected temperature={temperature} ({exc});"
                        " using the model's default"
                    )
                continue
            except LogprobsRejected as exc:
                if self._logprobs:
                    self._logprobs = False
                    tally.warnings.append(
                        f"endpoint {self.base_url} rejected logprobs ({exc}): confidence from"
                        " the judge's own words (verbal) for this run"
                    )
                continue
            return comp

    async def _answers(
        self, chat: ChatClient, model: str, batch: Sequence[JudgeRequest], tally: _Tally
    ) -> _Gathered:
        """Every answer the confidence source asks for, per claim of ``batch`` (module doc)."""
        asks = self._plan()
        got = _Gathered.empty(len(batch))

        async def one(ask: Ask) -> None:
            try:
                comp, cost = await self._call(chat, model, batch, tally, ask)
            except _OverBudget:
                got.failures.append("budget")
                return
            except TimedOut as exc:
                got.failures.append(f"timeout:{exc}")
                return
            except Unreachable:
                got.failures.append("unreachable")
                return
            except NRejected as exc:
                if self._use_n:
                    self._use_n = False
                    tally.warnings.append(
                        f"endpoint {self.base_url} rejected n={ask.n} ({exc}): the"
                        f" {self.samples} consistency samples are asked one request each"
                    )
                await _gather_or_cancel(one(Ask(ask.prompt, sampled=True)) for _ in range(ask.n))
                return
            got.add(comp, cost, len(batch), self._read(comp, len(batch), tally))
            short = ask.n - len(comp.choices)
            if ask.n > 1 and short > 0 and comp.choices:
                # The server ignored n (as some do): the missing samples one request each.
                if self._use_n:
                    self._use_n = False
                    tally.warnings.append(
                        f"endpoint {self.base_url} returned {len(comp.choices)} choice(s) for"
                        f" n={ask.n}: the other consistency samples are asked one request each"
                    )
                await _gather_or_cancel(one(Ask(ask.prompt, sampled=True)) for _ in range(short))

        await _gather_or_cancel(one(a) for a in asks)
        return got

    def _read(
        self, comp: Completion, count: int, tally: _Tally
    ) -> list[list[tuple[JudgeAnswer, float | None]]]:
        """Each claim's answers in one completion (one per choice), with its logprob confidence."""
        out: list[list[tuple[JudgeAnswer, float | None]]] = [[] for _ in range(count)]
        choices = comp.choices or (Choice(comp.text),)  # no choice at all: an empty answer
        for choice in choices:
            lps = (
                logprob_confidences(choice, None if count == 1 else count)
                if self.confidence == "logprob"
                else {}
            )
            if count == 1:
                try:
                    answer = parse_single(choice.text)
                except AnswerParseError as exc:
                    tally.parse_failures += 1
                    tally.first_parse_error = tally.first_parse_error or str(exc)
                    log.warning("unparseable judge answer (%s): %r", exc, choice.text)
                    continue
                out[0].append((answer, lps.get(1)))
                continue
            try:
                answers, problems = parse_batch(choice.text, count)
            except AnswerParseError as exc:
                answers, problems = {}, [str(exc)]
            tally.unusable_items += len(problems)
            for p in problems:
                log.warning("judge batch answer: %s", p)
            for n, a in answers.items():
                out[n - 1].append((a, lps.get(n)))
        return out

    def _decide(
        self,
        answers: Sequence[tuple[JudgeAnswer, float | None]],
        model: str,
        tokens: int,
        cost: float,
        tally: _Tally,
    ) -> Verdict:
        """A claim's answers as its verdict, under this judge's confidence source."""
        if self.confidence in ("consistency", "simulated"):
            return self._majority([a for a, _ in answers], model, tokens, cost)
        answer, logprob = answers[0]
        if self.confidence == "logprob" and logprob is None:
            tally.no_logprobs += 1  # the server sent none, or the verdict token was not found
        return self._verdict(answer, model, tokens, cost, logprob)

    def _failed(self, got: _Gathered, model: str, n: int, tally: _Tally) -> list[Verdict]:
        """Verdicts for claims of a batch no request answered (every ask failed)."""
        kinds = {f.split(":", 1)[0] for f in got.failures}
        if "budget" in kinds and len(kinds) == 1:
            tally.budget_reached += n
            return [self._over_budget(model) for _ in range(n)]
        if "unreachable" in kinds:
            tally.unreachable += n
            why = f"judge unreachable at {self.base_url}"
            return [self._unverified(model, why) for _ in range(n)]
        if "timeout" in kinds:
            tally.timed_out += n
            first = next(f for f in got.failures if f.startswith("timeout"))
            why = f"judge timed out: {first.split(':', 1)[1]}"
            return [self._unverified(model, why) for _ in range(n)]
        return [self._unverified(model, "no request was answered") for _ in range(n)]

    async def _ask_single(
        self, chat: ChatClient, model: str, r: JudgeRequest, tally: _Tally
    ) -> Verdict:
        """Ask about one claim; failures become ``unverified``/``low`` (never raise)."""
        got = await self._answers(chat, model, [r], tally)
        if not got.calls:
            return self._failed(got, model, 1, tally)[0]
        tokens, cost = got.tokens[0], got.cost[0]
        if not got.answers[0]:
            why = tally.first_parse_error or "no usable answer"
            return self._unverified(model, f"judge answer could not be parsed: {why}", tokens, cost)
        v = self._decide(got.answers[0], model, tokens, cost, tally)
        self._cache_put(model, r, v)
        return v

    async def _first_pass(
        self, chat: ChatClient, batch: list[JudgeRequest], tally: _Tally
    ) -> dict[str, Verdict]:
        """First-pass verdicts for one batch (its requests; claims left unanswered asked alone)."""
        if len(batch) == 1:
            return {batch[0].key: await self._ask_single(chat, self.model, batch[0], tally)}
        got = await self._answers(chat, self.model, batch, tally)
        if not got.calls:
            failed = self._failed(got, self.model, len(batch), tally)
            return {r.key: v for r, v in zip(batch, failed, strict=True)}
        out: dict[str, Verdict] = {}
        missing: list[tuple[int, JudgeRequest]] = []
        for i, r in enumerate(batch):
            if not got.answers[i]:
                missing.append((i, r))
                continue
            v = self._decide(got.answers[i], self.model, got.tokens[i], got.cost[i], tally)
            self._cache_put(self.model, r, v)
            out[r.key] = v
        if missing:
            log.warning(
                "judge batch answer lacks %d of %d claims; asking alone", len(missing), len(batch)
            )
            alone = await _gather_or_cancel(
                self._ask_single(chat, self.model, r, tally) for _, r in missing
            )
            for (i, r), v in zip(missing, alone, strict=True):
                out[r.key] = replace(
                    v, tokens=v.tokens + got.tokens[i], cost_usd=v.cost_usd + got.cost[i]
                )
        return {r.key: out[r.key] for r in batch}

    def _should_escalate(self, v: Verdict) -> bool:
        if v.verdict == "unverified":
            return False
        if v.confidence_source not in (None, "verbal") and v.confidence_value is not None:
            return v.confidence_value < self.config.confidence_threshold
        return CONFIDENCE_CERTAINTY[v.confidence] < self.config.confidence_threshold

    async def _finish(
        self,
        chat: ChatClient,
        r: JudgeRequest,
        first: Verdict,
        tally: _Tally,
    ) -> Verdict:
        """Escalate an uncertain first verdict; the escalated answer decides."""
        esc_model = self.escalation_model
        if esc_model is None or not tally.escalate or not self._should_escalate(first):
            return first
        second = self._cache_get(esc_model, r)
        if second is not None:
            tally.cache_hits += 1
        else:
            try:
                second = await self._ask_escalation(chat, esc_model, r, tally)
            except _EscalationModelMissing as exc:
                if tally.escalate:
                    tally.escalate = False
                    tally.warnings.append(
                        f"escalation model '{esc_model}' not found at {self.base_url} ({exc});"
                        " escalation skipped (set judge.escalation_model)"
                    )
                return first
        if second.abstain_reason == "budget reached":
            tally.budget_reached -= 1  # the claim keeps its first verdict
            tally.escalations_over_budget += 1
            return first
        if second.verdict == "unverified":
            tally.escalation_failures += 1
            return first
        return replace(
            second,
            tokens=second.tokens + first.tokens,
            cost_usd=second.cost_usd + first.cost_usd,
            escalated_from=first,
        )

    async def _ask_escalation(
        self, chat: ChatClient, model: str, r: JudgeRequest, tally: _Tally
    ) -> Verdict:
        try:
            return await self._ask_single(chat, model, r, tally)
        except JudgeAPIError as exc:
            if exc.status == 404:
                raise _EscalationModelMissing(exc.detail) from None
            raise

    def _summarise(self, tally: _Tally, chat: ChatClient) -> None:
        w = tally.warnings
        if tally.unreachable:
            why = f" ({chat.unreachable})" if chat.unreachable else ""
            w.append(
                f"LLM judge unreachable at {self.base_url}{why}:"
                f" {tally.unreachable} claims unverified"
            )
        if tally.timed_out:
            w.append(
                f"LLM judge timed out (after {self.config.timeout_s:g}s, retried once)"
                f" on {tally.timed_out} claims: unverified"
            )
        if tally.unusable_items:
            w.append(
                f"{tally.unusable_items} batch answer items were unusable (outside the answer"
                " schema, or an unknown or repeated claim_id; logged): asked again alone"
            )
        if tally.parse_failures:
            w.append(
                f"{tally.parse_failures} judge answers could not be parsed or were outside the"
                f" answer schema (first: {tally.first_parse_error}; all logged): a claim without"
                " a usable answer is unverified, not cached"
            )
        if tally.no_logprobs:
            w.append(
                f"{tally.no_logprobs} answers came without a usable verdict-token probability"
                f" (no logprobs from {self.base_url}, or the verdict token was not found):"
                " their confidence is the judge's own words (confidence_source verbal)"
            )
        if tally.escalation_failures:
            w.append(
                f"{tally.escalation_failures} escalations got no usable answer: first verdicts kept"
            )
        if tally.budget_reached:
            w.append(
                f"{BUDGET_REASON} (--max-cost ${self.budget.cap or 0:.4f},"
                f" ${self.budget.spent():.4f} spent): {tally.budget_reached} claims not judged"
                " (unverified, abstain_reason 'budget reached')"
            )
        if tally.escalations_over_budget:
            w.append(
                f"{BUDGET_REASON}: {tally.escalations_over_budget} uncertain verdicts were not"
                " escalated (first verdicts kept)"
            )
        if chat.retries:
            codes = "/".join(str(s) for s in sorted(chat.retried_statuses))
            w.append(f"judge requests retried {chat.retries} times after HTTP {codes}")
        if tally.no_usage_calls:
            w.append(f"endpoint reported no token usage for {tally.no_usage_calls} calls")
        for model in sorted(tally.unpriced):
            w.append(
                f"no price for model {model}: its cost is counted as 0"
                " (add it to [judge.pricing] in your config file)"
            )


def build_judge(
    config: JudgeConfig,
    *,
    prompt: str | None = None,
    model: str | None = None,
    use_cache: bool = True,
    cache: VerdictStore | None = None,
    slots: Callable[[], AbstractAsyncContextManager[object]] | None = None,
    budget: Budget | None = None,
    variants: Sequence[PromptTemplate] = (),
) -> Judge:
    """A ready judge; no network access until the first :meth:`Judge.judge`.

    Args:
        config: judge settings.
        prompt: prompt version name or file path (default ``config.prompt``).
        model: judge model override (default ``config.judge_model``).
        use_cache: False bypasses the verdict cache, for reads and writes
            (also off when ``config.cache`` is false).
        cache: the verdict cache to use instead of the SQLite file at
            ``config.cache_path`` (eval-batch: a directory all workers share).
        slots: makes the async context manager each request holds while in
            flight, once per run (default: a semaphore of ``config.concurrency``).
        budget: what the run may spend (default: no cap, no confirmation;
            README "Security"). Shared by every :meth:`Judge.judge` call.
        variants: the few-shot variants of the prompt, one per simulated annotator
            (``confidence = "simulated"``; :func:`citecal.calibrate.simulated_prompts`).

    Raises:
        InputError: unknown prompt version or bad prompt file, or too few variants
            for ``simulated``.
        JudgeUnavailable: no API key for a non-local endpoint.
    """
    template = load_prompt(prompt or config.prompt)
    base_url, api_key = resolve_endpoint(config)
    store: VerdictStore | None = None
    if use_cache and config.cache:
        store = cache if cache is not None else VerdictCache(config.cache_path)
    return Judge(
        config,
        template,
        model or config.judge_model,
        base_url,
        api_key,
        store,
        slots,
        budget,
        variants,
    )
