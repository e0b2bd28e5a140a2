"""Chat completions with the retry policy of README "The LLM judge", over the official openai SDK.

The SDK's own retries are switched off (``max_retries=0``) so the policy is
exactly this one and can be tested:

* HTTP 429 ``insufficient_quota``: no retry (waiting does not help).
* HTTP 429, 408, 409 and 5xx: up to ``max_retries`` (3) retries with
  exponential backoff and jitter; a ``Retry-After`` (seconds or HTTP date) or
  ``retry-after-ms`` header is honoured instead of the computed delay (capped
  at :data:`MAX_RETRY_AFTER_S`). Still failing after the retries: the run
  stops with :class:`~citecal.errors.JudgeError`.
* 400, 401, 403, 404, 422: no retry, the same request cannot succeed; the run
  stops with :class:`~citecal.errors.JudgeError` and a hint (key, model name,
  URL). Exception: a 400 about ``response_format`` raises
  :class:`ResponseFormatRejected` so the judge falls back to plain JSON.
* Timeout: every request has one deadline, ``timeout_s``, for connecting
  (itself at most :data:`citecal._http.CONNECT_S`) and the whole answer, not
  per read: a server that trickles bytes is cut off at the deadline (README
  "Security"). Retried once, then :class:`TimedOut`, whose message says what the
  server did (nothing after accepting, or part of an answer too slowly); the
  claims become ``unverified``.
* Connection refused / DNS / TLS failure: retried once, then
  :class:`Unreachable`, and every later call of the run fails fast the same
  way (the pipeline degrades, README "The LLM judge").
* A 400 about ``temperature`` raises :class:`TemperatureRejected` so the judge
  drops the parameter (models that only accept their default); one about
  ``logprobs`` raises :class:`LogprobsRejected` and one about ``n``
  :class:`NRejected`, so the judge falls back (README "Judge confidence").

Waiting for a retry does not hold a concurrency slot.
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from citecal._http import CONNECT_S, deadline_reason
from citecal.errors import JudgeError

if TYPE_CHECKING:
    import openai

log = logging.getLogger("citecal.judge")

MAX_RETRY_AFTER_S = 300.0
"""Longest server-requested wait honoured; a longer one is cut to this."""

RETRY_STATUSES = frozenset({408, 409, 429})
NO_RETRY_STATUSES = frozenset({400, 401, 403, 404, 422})


class JudgeAPIError(JudgeError):
    """An API error that stops the run; ``status`` is the HTTP status."""

    def __init__(self, message: str, status: int, detail: str) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


_answered: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar(
    "citecal_judge_answered", default=None
)


async def _mark_answered(response: Any) -> None:
    """HTTP response hook (the openai SDK's httpx): the status line and headers arrived."""
    flag = _answered.get()
    if flag is not None:
        flag[0] = True


def request_timeout(timeout_s: float) -> openai.Timeout:
    """Per-operation bounds under the request's deadline: connecting takes at most ``CONNECT_S``."""
    import openai  # imported when a client is made: ``citecal eval`` without a judge never pays

    return openai.Timeout(timeout_s, connect=min(CONNECT_S, timeout_s))


def openai_client(
    base_url: str | None, api_key: str, timeout_s: float, max_retries: int = 0
) -> openai.AsyncOpenAI:
    """The ``AsyncOpenAI`` client every judge-like call uses (judge, rewriter, critic).

    Its httpx client tells :meth:`ChatClient.complete` whether an answer had begun
    when a deadline passed; proxies from the environment apply as before.
    """
    import openai

    http = openai.DefaultAsyncHttpxClient(
        timeout=request_timeout(timeout_s), event_hooks={"response": [_mark_answered]}
    )
    return openai.AsyncOpenAI(
        api_key=api_key,
        base_url=base_url,
        max_retries=max_retries,
        timeout=request_timeout(timeout_s),
        http_client=http,
    )


class Unreachable(Exception):
    """The endpoint cannot be reached at all (connection refused, DNS, TLS)."""


class TimedOut(Exception):
    """A request timed out twice."""


class ResponseFormatRejected(Exception):
    """The endpoint rejected ``response_format`` (no structured-output support)."""


class NotAdmitted(Exception):
    """The request's ``admit`` check said no (the spending cap had no room): not sent."""


class TemperatureRejected(Exception):
    """The model rejected ``temperature`` (some reasoning models only allow the default)."""


class LogprobsRejected(Exception):
    """The endpoint rejected ``logprobs`` / ``top_logprobs``."""


class NRejected(Exception):
    """The endpoint rejected ``n`` (several choices in one request)."""


@dataclass(frozen=True)
class TokenLogprob:
    """One token of an answer with its log probability and the top alternatives.

    OpenAI's ``choices[i].logprobs.content[j]``: ``token``, ``logprob``, ``bytes``,
    ``top_logprobs`` (each a token, its logprob and bytes).
    """

    token: str
    logprob: float
    bytes: tuple[int, ...] | None = None
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Choice:
    """One choice of an answer: its text and, when the server gave them, its token logprobs."""

    text: str | None
    logprobs: tuple[TokenLogprob, ...] | None = None


@dataclass(frozen=True)
class Completion:
    """One answered request: the text and the API's usage figures.

    ``text`` is the first choice's; ``choices`` holds every choice (``n`` > 1).
    """

    text: str | None
    prompt_tokens: int
    completion_tokens: int
    has_usage: bool
    choices: tuple[Choice, ...] = ()


@dataclass(frozen=True)
class RetryPolicy:
    """Retry and timeout settings (from :class:`~citecal.config.JudgeConfig`)."""

    max_retries: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    timeout_s: float = 60.0

    def backoff(self, attempt: int) -> float:
        """Exponential delay for retry ``attempt`` (0-based) with "equal jitter"."""
        cap = min(self.backoff_max_s, self.backoff_base_s * float(2**attempt))
        return cap / 2 + random.uniform(0, cap / 2)


def retry_after_s(response: Any) -> float | None:
    """Seconds the server asked to wait (``retry-after-ms``, ``Retry-After``), or None."""
    if response is None:
        return None
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return min(max(float(ms) / 1000, 0.0), MAX_RETRY_AFTER_S)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(max(when.timestamp() - time.time(), 0.0), MAX_RETRY_AFTER_S)


def _short_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return " ".join(str(err["message"]).split())[:200]
        if isinstance(err, str):
            return " ".join(err.split())[:200]
    return " ".join(str(exc.message).split())[:200]


def _is_quota_error(exc: openai.APIStatusError) -> bool:
    body = exc.body
    err = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(err, dict):
        return "insufficient_quota" in (str(err.get("code")), str(err.get("type")))
    return False


def _mentions_response_format(exc: openai.APIStatusError) -> bool:
    text = f"{exc.message} {exc.body}".lower()
    return any(w in text for w in ("response_format", "json_schema", "structured", "schema"))


_N_PARAM = re.compile(r"(?<![\w.])['\"`]?n['\"`]?(?![\w.])")


def _mentions_n(message: str) -> bool:
    """An error names the ``n`` parameter (``'n'``, ``n must be 1``, "one completion choice")."""
    text = message.lower()
    return bool(_N_PARAM.search(text)) or "completion choice" in text


class ChatClient:
    """An ``AsyncOpenAI`` client with citecal's retry policy and call accounting."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        base_url: str,
        policy: RetryPolicy,
        semaphore: AbstractAsyncContextManager[object],
        api_key_env: str = "OPENAI_API_KEY",
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.client = client
        self.base_url = base_url
        self.policy = policy
        self.semaphore = semaphore
        self.api_key_env = api_key_env
        self._sleep = sleep
        self.unreachable: str | None = None
        self.token_key = "max_tokens"
        """The parameter bounding an answer; newer models want ``max_completion_tokens``."""
        self.retries = 0
        self.retried_statuses: set[int] = set()

    def _fatal(self, exc: openai.APIStatusError, model: str, retried: int) -> JudgeAPIError:
        status = exc.status_code
        msg = _short_message(exc)
        hints = {
            401: f"check {self.api_key_env}",
            403: f"the key in {self.api_key_env} may not have access to model '{model}'",
            404: f"check the model name '{model}' (judge_model / --model) and the endpoint URL",
            400: "the endpoint rejected the request",
            422: "the endpoint rejected the request",
        }
        hint = hints.get(status, "")
        if status == 429:
            hint = (
                "quota exhausted: check the account's plan and billing"
                if _is_quota_error(exc)
                else "rate limited: lower --concurrency or try later"
            )
        tries = f" after {retried} retries" if retried else " (not retried)"
        text = f"LLM judge API error: HTTP {status} from {self.base_url}{tries}: {msg}"
        return JudgeAPIError(f"{text} ({hint})" if hint else text, status, msg)

    async def complete(
        self,
        model: str,
        messages: Sequence[dict[str, str]],
        response_format: dict[str, Any] | None,
        temperature: float | None,
        admit: Callable[[], Awaitable[bool]] | None = None,
        *,
        n: int | None = None,
        top_logprobs: int | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """Send one chat completion, applying the retry policy (module doc).

        ``admit`` is awaited once, holding the request slot, just before the
        first attempt goes out (the spending cap: README "Security"); False
        raises :class:`NotAdmitted` and nothing is sent. ``n`` asks for that many
        choices, ``top_logprobs`` for token log probabilities with that many
        alternatives each (README "Judge confidence"). ``max_tokens`` bounds each
        answer (sent as ``max_completion_tokens`` to a model that refuses
        ``max_tokens``); with ``n`` choices each may use that many (README "Security").
        """
        import openai  # loaded already: ``self.client`` is an openai client

        token_key = self.token_key
        attempt = 0
        timeouts = 0
        connection_failures = 0
        while True:
            if self.unreachable is not None:
                raise Unreachable(self.unreachable)
            extra: dict[str, Any] = {}
            if response_format is not None:
                extra["response_format"] = response_format
            if temperature is not None:
                extra["temperature"] = temperature
            if n is not None and n > 1:
                extra["n"] = n
            if top_logprobs is not None:
                extra["logprobs"] = True
                extra["top_logprobs"] = top_logprobs
            if max_tokens is not None:
                extra[token_key] = max_tokens
            answered = [False]
            token = _answered.set(answered)
            try:
                async with self.semaphore:
                    if admit is not None:
                        if not await admit():
                            raise NotAdmitted
                        admit = None
                    # One deadline for the whole request, not per read (README "Security").
                    async with asyncio.timeout(self.policy.timeout_s):
                        resp = await self.client.chat.completions.create(
                            model=model,
                            messages=list(messages),  # type: ignore[arg-type]
                            timeout=request_timeout(self.policy.timeout_s),
                            **extra,
                        )
            except (TimeoutError, openai.APITimeoutError) as exc:
                timeouts += 1
                if type(exc.__cause__).__name__ == "ConnectTimeout":
                    why = f"no connection within {min(CONNECT_S, self.policy.timeout_s):g}s"
                else:
                    why = deadline_reason(self.policy.timeout_s, None if answered[0] else 0)
                if timeouts > 1:
                    raise TimedOut(f"{why} (asked twice)") from None
                log.warning("judge request timed out (%s); retrying once", why)
                await self._sleep(self.policy.backoff(0))
                continue
            except openai.APIConnectionError as exc:
                # Retried once: a dropped keep-alive connection must not look like an outage.
                connection_failures += 1
                cause = exc.__cause__ or exc
                reason = f"{type(cause).__name__}: {cause}"[:200]
                if connection_failures > 1:
                    self.unreachable = reason
                    raise Unreachable(reason) from None
                log.warning("judge connection failed (%s); retrying once", reason)
                await self._sleep(self.policy.backoff(0))
                continue
            except openai.APIStatusError as exc:
                status = exc.status_code
                message = _short_message(exc)
                if status == 400 and response_format is not None and _mentions_response_format(exc):
                    raise ResponseFormatRejected(message) from None
                if status == 400 and temperature is not None and "temperature" in message.lower():
                    raise TemperatureRejected(message) from None
                # llama.cpp answers n > 1 with HTTP 500 "Only one completion choice is
                # allowed" (tools/server/utils.hpp): a refusal, not an outage to retry.
                refused = status in (400, 422, 500)
                if refused and top_logprobs is not None and "logprob" in message.lower():
                    raise LogprobsRejected(message) from None
                if refused and n is not None and n > 1 and _mentions_n(message):
                    raise NRejected(message) from None
                if (
                    status == 400
                    and max_tokens is not None
                    and token_key == "max_tokens"
                    and "max_tokens" in message.lower()
                ):
                    token_key = self.token_key = "max_completion_tokens"
                    continue
                retryable = status in RETRY_STATUSES or status >= 500
                if status == 429 and _is_quota_error(exc):
                    retryable = False  # waiting does not refill a spent quota
                if not retryable or status in NO_RETRY_STATUSES:
                    raise self._fatal(exc, model, 0) from None
                if attempt >= self.policy.max_retries:
                    raise self._fatal(exc, model, attempt) from None
                delay = retry_after_s(exc.response)
                if delay is None:
                    delay = self.policy.backoff(attempt)
                log.warning("judge HTTP %s; retry %d in %.2fs", status, attempt + 1, delay)
                attempt += 1
                self.retries += 1
                self.retried_statuses.add(status)
                await self._sleep(delay)
                continue
            except (openai.APIResponseValidationError, ValueError) as exc:
                log.warning("judge response is not a valid chat completion: %s", exc)
                return Completion(None, 0, 0, has_usage=False)
            finally:
                _answered.reset(token)
            return _completion(resp)


def _token_logprobs(choice: Any) -> tuple[TokenLogprob, ...] | None:
    """``choice.logprobs.content`` as :class:`TokenLogprob` values; None when none came."""
    logprobs = getattr(choice, "logprobs", None)
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if not content:
        return None
    out: list[TokenLogprob] = []
    for item in content:
        token = getattr(item, "token", None)
        logprob = getattr(item, "logprob", None)
        if not isinstance(token, str) or not isinstance(logprob, int | float):
            return None  # not OpenAI's shape: treated as no logprobs
        top = tuple(
            (str(t.token), float(t.logprob))
            for t in (getattr(item, "top_logprobs", None) or [])
            if isinstance(getattr(t, "token", None), str)
            and isinstance(getattr(t, "logprob", None), int | float)
        )
        raw = getattr(item, "bytes", None)
        out.append(
            TokenLogprob(token, float(logprob), tuple(int(b) for b in raw) if raw else None, top)
        )
    return tuple(out)


def _choice_text(choice: Any) -> str | None:
    message = getattr(choice, "message", None)
    text = getattr(message, "content", None)
    if not text:
        # Some servers put a refusal or reasoning-only answer elsewhere.
        text = getattr(message, "refusal", None) or text
    return text if isinstance(text, str) else None


def _completion(resp: Any) -> Completion:
    raw = getattr(resp, "choices", None) or []
    choices = tuple(Choice(_choice_text(c), _token_logprobs(c)) for c in raw)
    text = choices[0].text if choices else None
    usage = getattr(resp, "usage", None)
    if usage is None:
        return Completion(text, 0, 0, has_usage=False, choices=choices)
    return Completion(
        text,
        max(0, int(getattr(usage, "prompt_tokens", 0) or 0)),
        max(0, int(getattr(usage, "completion_tokens", 0) or 0)),
        has_usage=True,
        choices=choices,
    )
