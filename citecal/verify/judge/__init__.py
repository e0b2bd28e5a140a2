"""LLM judge for abstractive claims (README "The LLM judge").

The pipeline routes claims with :func:`citecal.verify.route_claim`, builds
:class:`JudgeRequest` values, and calls ``build_judge(config).judge(requests)``;
``citecal eval --dry-run`` calls :func:`estimate_cost` instead. ``citecal
rejudge`` judges the records of an annotation table again (:func:`rejudge_frame`).
"""

from citecal.verify.judge._asks import claim_cost
from citecal.verify.judge._batching import make_batches
from citecal.verify.judge._budget import (
    BUDGET_REASON,
    Budget,
    Ledger,
    SpendingNotApproved,
    answer_ceiling,
    count_tokens,
    request_ceiling,
    request_estimate,
)
from citecal.verify.judge._cache import (
    DirectoryVerdictCache,
    VerdictCache,
    VerdictStore,
    cache_key,
    default_cache_path,
    normalise_endpoint,
)
from citecal.verify.judge._client import (
    ChatClient,
    Completion,
    JudgeAPIError,
    ResponseFormatRejected,
    RetryPolicy,
    TemperatureRejected,
    TimedOut,
    Unreachable,
    openai_client,
    request_timeout,
    retry_after_s,
)
from citecal.verify.judge._estimate import estimate_cost
from citecal.verify.judge._injection import (
    INJECTION_REASON,
    Injection,
    batch_injection,
    find_injection,
    hold_back,
    load_patterns,
    prompt_injection,
    request_injection,
    screen,
    suspicion,
)
from citecal.verify.judge._judge import (
    CONFIDENCE_CERTAINTY,
    Judge,
    build_judge,
    is_loopback_url,
    resolve_endpoint,
)
from citecal.verify.judge._parse import (
    AnswerParseError,
    JudgeAnswer,
    parse_batch,
    parse_single,
    response_format,
)
from citecal.verify.judge._pricing import cost_usd, find_price
from citecal.verify.judge._prompts import (
    PromptTemplate,
    available_prompts,
    code_block,
    defang,
    fence_for,
    load_prompt,
    parse_prompt,
    prompt_text,
    prompt_warning,
    render_messages,
    with_examples,
)
from citecal.verify.judge._rejudge import (
    apply_verdicts,
    prompt_with_examples,
    rejudge_frame,
    rejudge_repeats,
    rejudge_requests,
)
from citecal.verify.judge._types import DryRunEstimate, JudgeRequest, JudgeRun, JudgeUnavailable

__all__ = [
    "BUDGET_REASON",
    "CONFIDENCE_CERTAINTY",
    "INJECTION_REASON",
    "AnswerParseError",
    "Budget",
    "ChatClient",
    "Completion",
    "DirectoryVerdictCache",
    "DryRunEstimate",
    "Injection",
    "Judge",
    "JudgeAPIError",
    "JudgeAnswer",
    "JudgeRequest",
    "JudgeRun",
    "JudgeUnavailable",
    "Ledger",
    "PromptTemplate",
    "ResponseFormatRejected",
    "RetryPolicy",
    "SpendingNotApproved",
    "TemperatureRejected",
    "TimedOut",
    "Unreachable",
    "VerdictCache",
    "VerdictStore",
    "answer_ceiling",
    "apply_verdicts",
    "available_prompts",
    "batch_injection",
    "build_judge",
    "cache_key",
    "claim_cost",
    "code_block",
    "cost_usd",
    "count_tokens",
    "defang",
    "default_cache_path",
    "estimate_cost",
    "fence_for",
    "find_injection",
    "find_price",
    "hold_back",
    "is_loopback_url",
    "load_patterns",
    "load_prompt",
    "make_batches",
    "normalise_endpoint",
    "openai_client",
    "parse_batch",
    "parse_prompt",
    "parse_single",
    "prompt_injection",
    "prompt_text",
    "prompt_warning",
    "prompt_with_examples",
    "rejudge_frame",
    "rejudge_repeats",
    "rejudge_requests",
    "render_messages",
    "request_ceiling",
    "request_estimate",
    "request_injection",
    "request_timeout",
    "resolve_endpoint",
    "response_format",
    "retry_after_s",
    "screen",
    "suspicion",
    "with_examples",
]
