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
warning instead of stopping it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ipaddress
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from typing import TypeVar
from urllib.parse import urlparse

from citecal.config import JudgeConfig
from citecal.models import Verdict, support_score
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
    Completion,
    JudgeAPIError,
    NotAdmitted,
    ResponseFormatRejected,
    RetryPolicy,
    TemperatureRejected,
    TimedOut,
    Unreachable,
    openai_client,
)
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
            original = by_content.setdefault(
                cache_key(self.model, self.prompt_version, r, endpoint=self.base_url), r
            )
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
        for batch in make_batches(
            list(pending), self.config.max_batch_size, self.config.max_code_lines
        ):
            messages = render_messages(
                self.prompt, batch, self.config.max_code_lines, self.config.context_lines
            )
            total += request_estimate(messages, len(batch), self.model, self.config)
        return total

    def _cache_get(self, model: str, r: JudgeRequest) -> Verdict | None:
        if self.cache is None:
            return None
        return self.cache.get(cache_key(model, self.prompt_version, r, endpoint=self.base_url))

    def _cache_put(self, model: str, r: JudgeRequest, v: Verdict) -> None:
        if self.cache is not None and v.verdict != "unverified":
            self.cache.put(cache_key(model, self.prompt_version, r, endpoint=self.base_url), v)

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

    def _verdict(self, a: JudgeAnswer, model: str, tokens: int, cost: float) -> Verdict:
        return Verdict(
            verdict=a.verdict,
            method="llm",
            confidence=a.confidence,
            score=support_score(a.verdict, a.confidence, a.score),
            reasoning=a.reasoning,
            model=model,
            prompt_version=self.prompt_version,
            tokens=tokens,
            cost_usd=cost,
            mode=a.mode,
        )

    async def _call(
        self, chat: ChatClient, model: str, batch: Sequence[JudgeRequest], tally: _Tally
    ) -> tuple[Completion, float]:
        """One API request for ``batch``; falls back to plain JSON once if needed."""
        messages = render_messages(
            self.prompt, batch, self.config.max_code_lines, self.config.context_lines
        )
        # README "Security": a request starts only when what it can cost at most (its prompt
        # and its max_tokens) fits in what is left, checked when it holds its slot, after the
        # answers before it were counted.
        ceiling = answer_ceiling(len(batch), self.config)
        estimate = request_ceiling(messages, ceiling, model, self.config)
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
                chat, model, messages, len(batch) > 1, tally, admit, ceiling
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
        max_tokens: int,
    ) -> Completion:
        """The API request; falls back to plain JSON / default temperature once if needed."""
        while True:
            rf = response_format(is_batch) if self._structured else None
            temperature = self._temperature
            try:
                comp = await chat.complete(model, messages, rf, temperature, admit, max_tokens)
            except ResponseFormatRejected as exc:
                if self._structured:
                    self._structured = False
                    tally.warnings.append(
                        f"endpoint {self.base_url} rejected structured outputs ({exc});"
                        " using plain JSON instructions"
                    )
                continue
            except TemperatureRejected as exc:
                if self._temperature is not None:
                    self._temperature = None
                    tally.warnings.append(
                        f"model {model} rejected temperature={temperature} ({exc});"
                        " using the model's default"
                    )
                continue
            return comp

    async def _ask_single(
        self, chat: ChatClient, model: str, r: JudgeRequest, tally: _Tally
    ) -> Verdict:
        """Ask about one claim; failures become ``unverified``/``low`` (never raise)."""
        try:
            comp, cost = await self._call(chat, model, [r], tally)
        except _OverBudget:
            tally.budget_reached += 1
            return self._over_budget(model)
        except TimedOut as exc:
            tally.timed_out += 1
            return self._unverified(model, f"judge timed out: {exc}")
        except Unreachable:
            tally.unreachable += 1
            return self._unverified(model, f"judge unreachable at {self.base_url}")
        tokens = comp.prompt_tokens + comp.completion_tokens
        try:
            answer = parse_single(comp.text)
        except AnswerParseError as exc:
            tally.parse_failures += 1
            tally.first_parse_error = tally.first_parse_error or str(exc)
            log.warning("unparseable judge answer for %s (%s): %r", r.citation, exc, comp.text)
            return self._unverified(model, f"judge answer could not be parsed: {exc}", tokens, cost)
        v = self._verdict(answer, model, tokens, cost)
        self._cache_put(model, r, v)
        return v

    async def _first_pass(
        self, chat: ChatClient, batch: list[JudgeRequest], tally: _Tally
    ) -> dict[str, Verdict]:
        """First-pass verdicts for one batch (one request; missing items retried alone)."""
        if len(batch) == 1:
            return {batch[0].key: await self._ask_single(chat, self.model, batch[0], tally)}
        try:
            comp, cost = await self._call(chat, self.model, batch, tally)
        except _OverBudget:
            tally.budget_reached += len(batch)
            return {r.key: self._over_budget(self.model) for r in batch}
        except TimedOut as exc:
            tally.timed_out += len(batch)
            return {r.key: self._unverified(self.model, f"judge timed out: {exc}") for r in batch}
        except Unreachable:
            tally.unreachable += len(batch)
            why = f"judge unreachable at {self.base_url}"
            return {r.key: self._unverified(self.model, why) for r in batch}
        try:
            answers, problems = parse_batch(comp.text, len(batch))
        except AnswerParseError as exc:
            answers, problems = {}, [str(exc)]
        tally.unusable_items += len(problems)
        for p in problems:
            log.warning("judge batch answer (%s): %s", batch[0].file_path, p)
        tokens = _split(comp.prompt_tokens + comp.completion_tokens, len(batch))
        out: dict[str, Verdict] = {}
        missing: list[tuple[int, JudgeRequest]] = []
        for i, r in enumerate(batch):
            a = answers.get(i + 1)
            if a is None:
                missing.append((i, r))
                continue
            v = self._verdict(a, self.model, tokens[i], cost / len(batch))
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
                    v, tokens=v.tokens + tokens[i], cost_usd=v.cost_usd + cost / len(batch)
                )
        return {r.key: out[r.key] for r in batch}

    def _should_escalate(self, v: Verdict) -> bool:
        if v.verdict == "unverified":
            return False
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
                f" answer schema (first: {tally.first_parse_error}; all logged): claims"
                " unverified, not cached"
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

    Raises:
        InputError: unknown prompt version or bad prompt file.
        JudgeUnavailable: no API key for a non-local endpoint.
    """
    template = load_prompt(prompt or config.prompt)
    base_url, api_key = resolve_endpoint(config)
    store: VerdictStore | None = None
    if use_cache and config.cache:
        store = cache if cache is not None else VerdictCache(config.cache_path)
    return Judge(
        config, template, model or config.judge_model, base_url, api_key, store, slots, budget
    )
