"""In-memory values the judge takes and returns (frozen dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass, field

from citecal.errors import ServiceError
from citecal.models import ConfidenceSource, Verdict


class JudgeUnavailable(ServiceError):
    """The judge cannot run at all (no API key): the pipeline degrades to ``unverified``."""


@dataclass(frozen=True)
class JudgeRequest:
    """One claim and the code it cites, as the judge sees it.

    ``key`` identifies the request in :attr:`JudgeRun.verdicts` (the citation id);
    ``before``/``after`` are context lines around the cited range (shown to the
    judge marked as context), ``code`` the cited lines joined with ``\\n``.
    ``extractive`` is the rule-based result (terms found and missing, hint):
    prompts that have an ``{evidence}`` placeholder show it to the judge.
    ``classify`` asks the judge to classify the claim too (unknown claims under
    ``classify.use_llm_classification``).
    """

    key: str
    claim: str
    citation: str
    file_path: str
    language: str | None
    start_line: int
    end_line: int
    code: str
    before: str = ""
    after: str = ""
    extractive: Verdict | None = None
    classify: bool = False
    siblings: tuple[tuple[str, str], ...] = ()
    """(citation, cited code) of the sentence's other citations: the claim is supported
    by its citations together (README "The cascade"), so the judge sees them all."""


@dataclass(frozen=True)
class JudgeRun:
    """Verdicts of one :meth:`Judge.judge` call with what it cost.

    Every request gets a verdict; ``calls`` counts answered API requests (cache
    hits and failed attempts that were retried excluded), tokens are the API's
    ``usage`` figures summed over those calls, ``cache_hits`` counts answers
    served from the cache (first-pass and escalation answers alike).
    """

    verdicts: dict[str, Verdict]
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cache_hits: int = 0
    warnings: list[str] = field(default_factory=list)
    held_back: int = 0
    """Requests never sent: possible prompt injection (README "Security")."""
    budget_reached: int = 0
    """Requests left unjudged because the spending cap had no room (README "Security")."""
    confidence_source: ConfidenceSource = "verbal"
    """How the judge's confidence was measured (README "Judge confidence")."""
    samples: int = 1
    """Answers asked per claim: K for consistency and simulated."""

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class DryRunEstimate:
    """What a judge run would take, computed without any network call.

    Tokens are estimates (``tiktoken`` when installed, else characters / 4 for
    prompts and a fixed allowance per answered claim); escalations cannot be
    known in advance and are not counted.
    """

    requests: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    model: str
    cache_hits: int = 0
    warnings: list[str] = field(default_factory=list)
    held_back: int = 0
    """Requests never sent: possible prompt injection (README "Security")."""
    confidence_source: ConfidenceSource = "verbal"
    samples: int = 1
    """Answers counted per claim: K for consistency and simulated (README "Judge confidence")."""
    ceiling_usd: float = 0.0
    """Dollars the requests can cost at most: their prompts plus their ``max_tokens``, what
    they reserve of a spending cap before they are sent (README "Security")."""

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens
