"""Records that cross stage boundaries.

The names and fields here are public API (see README "JSON output"): the JSON
written by ``citecal eval`` and read by ``citecal push`` is built from
:class:`EvalResult`; :class:`JudgeVerdict` is the judge's answer as push, pull
and rejudge carry it (the annotation table itself is :mod:`citecal.annotations`).
Add fields freely; never rename one casually.

In-memory values passed between pure stages are frozen dataclasses; anything
written to disk or printed as JSON is a pydantic model with a
``schema_version``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

VerdictLabel = Literal["supports", "partial", "not_supports", "unverified"]
"""Outcome of verifying one claim against its cited code."""

Method = Literal["extractive", "llm", "local"]
"""How a verdict was reached: term matching in code, an LLM judge, or the local verifier
of the cascade (README "The cascade")."""

Confidence = Literal["high", "medium", "low"]
"""The judge's own word on how sure it is (recorded; real models do not calibrate it)."""

ConfidenceSource = Literal["verbal", "logprob", "consistency", "simulated"]
"""Where a judged row's ``confidence_value`` comes from (README "Judge confidence"): the
judge's own words, the probability of its verdict token, the agreement of K samples, or
the agreement of K few-shot variants built from people's labels (simulated annotators)."""

CONFIDENCE_SOURCES: tuple[ConfidenceSource, ...] = ("verbal", "logprob", "consistency", "simulated")

Mode = Literal["extractive", "abstractive", "unknown"]
"""Claim classification (README "Routing"): which verifier a claim needs."""

FailureType = Literal["invalid_file", "invalid_range", "not_supporting", "low_confidence"]
"""Why a citation failed (README "`citecal correct`")."""

SuggestedAction = Literal[
    "fix_reference", "rewrite_claim", "remove_citation", "expand_range", "annotate"
]
"""What the correction loop should try first (README "`citecal correct`"); ``annotate``: a
person must decide (README "Security": possible prompt injection)."""

AbstainReason = Literal[
    "possible prompt injection", "budget reached", "needs a person", "judge and verifier disagree"
]
"""Why no verifier decided a claim (README "Security"; "needs a person": the cascade
abstained, README "The cascade"; "judge and verifier disagree": the judge said supports
where the local verifier strongly doubts it, docs/explanation/routing.md)."""

RiskBandName = Literal["high", "elevated", "moderate", "low"]
"""Risk of being unsupported, from the calibrated ``p_supports`` (docs/explanation/cascade.md)."""

LineRangeAnswer = Literal["correct", "too_narrow", "too_broad"]


# --------------------------------------------------------------------------- stage 1

LINE_NUMBER_OVERFLOW = 10**18
"""Stored for a cited line number of more than 18 digits (validation: ``invalid_range``)."""


def report_digest(text: str) -> str:
    """SHA-256 (hex) of a report's text: its identity across eval, correct and push."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class Citation:
    """A reference to lines of a file in the evaluated repository.

    Lines are 1-indexed and inclusive; a single-line citation ``[path:N]`` has
    ``start_line == end_line``. The values are kept exactly as written, even
    when nonsensical (``end_line < start_line``), so that validation can say
    what is wrong instead of the parser silently fixing it.
    """

    file_path: str
    start_line: int
    end_line: int
    location: str | None = None
    """A location specifier as written, for citations that are not plain line
    ranges (README "Excerpt citations"): ``p12``, ``sec-intro``, ``2:15``,
    ``general``, ``S:3``, or ``L42-67`` inside ``[[...]]``. Lines stay 0 until
    the location is resolved against the file."""
    item: str | None = None
    """The item id as written inside ``[[...]]``; ``file_path`` becomes the
    item's path once it is looked up. None for ``[path:...]`` citations."""

    def __str__(self) -> str:
        if self.item is not None:
            where = "" if self.location is None else f":{self.location}"
            return f"[[{self.item}{where}]]"
        if self.location is not None:
            return f"[{self.file_path}:{self.location}]"
        if self.start_line == self.end_line:
            return f"[{self.file_path}:{self.start_line}]"
        return f"[{self.file_path}:{self.start_line}-{self.end_line}]"


@dataclass(frozen=True, slots=True)
class ExtractedCitation:
    """One citation found in a report, with the claim it backs.

    ``position`` is the character offset of the citation's bracket in the
    report (of the bracket group when several citations share one bracket),
    ``context`` the paragraph it sits in, ``section`` the nearest heading above
    it ("" before the first heading), ``paragraph_index`` the 0-based index of
    that paragraph in the report, ``occurrence`` how many earlier citations had
    the same claim text and citation (this keeps ids stable and distinct).
    ``excerpt`` is what the citation claims to quote (README "Excerpt citations"): the quoted
    text before it (``excerpt_quoted``), or for ``[[item]]`` citations the text
    of the sentence before it; None when there is nothing to check.
    """

    citation: Citation
    claim_text: str
    section: str
    paragraph_index: int
    position: int
    context: str
    raw: str = ""
    occurrence: int = 0
    excerpt: str | None = None
    excerpt_quoted: bool = False

    @property
    def id(self) -> str:
        """Stable id: same report text and citation give the same id."""
        return citation_id(self.claim_text, str(self.citation), self.occurrence)


def citation_id(claim_text: str, citation: str, occurrence: int = 0) -> str:
    """Hash of claim + citation + occurrence index (README "JSON output")."""
    h = hashlib.sha256(f"{claim_text}\x1f{citation}\x1f{occurrence}".encode())
    return h.hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Claim:
    """A sentence of the report that asserts something about the code (README "`citecal eval`")."""

    text: str
    section: str
    paragraph_index: int
    position: int
    cited: bool


# --------------------------------------------------------------------------- stage 2


@dataclass(frozen=True, slots=True)
class ValidationResult:
    """Structural check of one citation against the source store.

    ``cited_content`` is the text of the cited lines (joined with ``\\n``, no
    trailing newline) when ``valid``; ``language`` is the tree-sitter language
    name guessed from the file name (``None`` when unknown).
    """

    valid: bool
    error: str | None = None
    failure_type: FailureType | None = None
    cited_content: str | None = None
    language: str | None = None


# --------------------------------------------------------------------------- stage 3


@dataclass(frozen=True, slots=True)
class Classification:
    """Which verifier a claim needs, and why (README "Routing")."""

    mode: Mode
    confidence: float
    matched_patterns: tuple[str, ...] = ()


# --------------------------------------------------------------------------- stage 4


@dataclass(frozen=True, slots=True)
class Verdict:
    """Result of verifying one claim against its cited code.

    ``score`` is the probability that the code supports the claim, in [0, 1]:
    the term-coverage score for extractive checks, the judge's stated
    probability (or the verdict/confidence mapping of README "Calibration") for the LLM.
    ``hint`` carries evidence for the correction loop, e.g. where a missing
    name was found elsewhere in the file. ``escalated_from`` keeps the first
    judge's answer when a low-confidence verdict was asked again of the
    escalation model (the escalated answer decides).
    """

    verdict: VerdictLabel
    method: Method
    confidence: Confidence
    score: float | None = None
    reasoning: str = ""
    matched_terms: tuple[str, ...] = ()
    missing_terms: tuple[str, ...] = ()
    model: str | None = None
    prompt_version: str | None = None
    tokens: int = 0
    cost_usd: float = 0.0
    hint: str | None = None
    hint_lines: tuple[int, int] | None = None
    escalated_from: Verdict | None = None
    cached: bool = False
    mode: Mode | None = None
    """The judge's classification of the claim, when it was asked for one
    (``classify.use_llm_classification``)."""
    abstain_reason: AbstainReason | None = None
    """Why the claim was not sent to the judge (README "Security"); verdict ``unverified``."""
    confidence_source: ConfidenceSource | None = None
    """How ``confidence_value`` was measured; None for rows no judge decided."""
    confidence_value: float | None = None
    """How likely the verdict is right, in [0, 1] (README "Judge confidence")."""


# Judge support score when a judge only gives a verdict and a confidence (README "Calibration").
VERDICT_CONFIDENCE_SCORE: dict[tuple[str, str], float] = {
    ("supports", "high"): 1.0,
    ("supports", "medium"): 0.83,
    ("supports", "low"): 0.67,
    ("not_supports", "low"): 0.33,
    ("not_supports", "medium"): 0.17,
    ("not_supports", "high"): 0.0,
    ("partial", "high"): 0.5,
    ("partial", "medium"): 0.5,
    ("partial", "low"): 0.5,
}


def support_score(verdict: str, confidence: str, score: float | None = None) -> float | None:
    """The judge's support probability: its own ``score`` when given, else the mapping."""
    if score is not None:
        return float(score)
    return VERDICT_CONFIDENCE_SCORE.get((verdict, confidence))


def verdict_confidence(verdict: str, support: float | None) -> float | None:
    """How likely ``verdict`` is right, given a support probability (README "Judge confidence").

    A verdict is read as binary as everywhere else (:mod:`citecal.support`: only
    ``supports`` supports): ``supports`` is right with probability ``support``, any
    other decided verdict with ``1 − support``. None for ``unverified`` or no support.
    """
    if support is None or verdict == "unverified":
        return None
    s = min(1.0, max(0.0, float(support)))
    return s if verdict == "supports" else 1.0 - s


def support_of(verdict: str, confidence_value: float) -> float:
    """The support probability a verdict and its confidence imply (inverse of the above)."""
    c = min(1.0, max(0.0, float(confidence_value)))
    return c if verdict == "supports" else 1.0 - c


# --------------------------------------------------------------------------- stage 5 (JSON)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Summary(_Model):
    """Report-level metrics (README "JSON output"). Rates are null when their denominator is 0."""

    total_citations: int = Field(description="Citations found in the report.")
    valid_citations: int = Field(description="Citations that passed structural validation.")
    validity_rate: float | None = Field(description="valid_citations / total_citations.")
    extractive_checked: int = Field(description="Valid citations verified by term matching.")
    extractive_supports: int = Field(description="Of those, verdict 'supports'.")
    extractive_precision: float | None = Field(description="extractive_supports / checked.")
    abstractive_checked: int = Field(description="Valid citations verified by the LLM judge.")
    abstractive_supports: int = Field(description="Of those, verdict 'supports'.")
    abstractive_precision: float | None = Field(description="abstractive_supports / checked.")
    overall_precision: float | None = Field(
        description="Supports / valid citations with a verdict (unverified ones left out)."
    )
    unverified: int = Field(description="Valid citations no verifier could decide.")
    decided: int = Field(
        0, description="Citations with a final outcome: invalid, or a verdict by rules or judge."
    )
    undecided: int = Field(0, description="Citations left unverified (the judge was needed).")
    decision_coverage: float | None = Field(None, description="decided / total_citations.")
    decided_precision: float | None = Field(
        None, description="Supports / decided citations (an invalid citation does not support)."
    )
    total_claims: int = Field(description="Claim sentences in the report (README 'JSON output').")
    cited_claims: int = Field(description="Claims carrying at least one citation.")
    coverage: float | None = Field(description="cited_claims / total_claims.")
    llm_calls: int = Field(0, description="Judge API requests made (cache hits excluded).")
    llm_tokens: int = Field(0, description="Prompt + completion tokens reported by the API.")
    cost_usd: float = Field(0.0, description="Judge cost from the pricing table.")
    budget_reached: int = Field(
        0, description="Claims the judge did not decide because the spending cap was reached."
    )
    max_cost_usd: float | None = Field(
        None, description="The run's spending cap (--max-cost, judge.max_cost_usd), or null."
    )
    budget_left_usd: float | None = Field(
        None, description="What was left of the cap when the report was done, or null."
    )
    excerpt_checked: int = Field(0, description="Citations with an excerpt check (README).")
    excerpt_verified: int = Field(0, description="Of those, status verified.")
    excerpt_unverified: int = Field(0, description="Of those, status unverified.")
    excerpt_failed: int = Field(0, description="Of those, status failed (no item / location).")
    cascade: CascadeSummary | None = Field(
        None, description="Decisions per tier and the guarantee, with --cascade (README)."
    )
    confidence_source: ConfidenceSource | None = Field(
        None,
        description="How the judge's confidence was measured this run (judge.confidence, "
        "--confidence); null when no judge ran.",
    )
    confidence_samples: int | None = Field(
        None,
        description="Answers asked per claim: K for consistency and simulated (their tokens "
        "and cost are in llm_tokens and cost_usd), 1 otherwise; null when no judge ran.",
    )
    risk_bands: list[RiskBandCount] = Field(
        default_factory=list,
        description="Valid citations per risk band of p_supports, with the share people "
        "found unsupported in that band of the calibration labels (an expectation, not a "
        "guarantee); empty without a calibrated verifier (--no-cascade).",
    )
    review_size: int = Field(
        0,
        description="Citations in the review list (the riskiest, with evidence and a "
        "proposed place: rows whose risk_rank is at most this).",
    )
    shift: ShiftCheck | None = Field(
        None,
        description="Are this report's verifier scores like the calibration labels'? Null "
        "without a calibrated verifier or with too few valid citations.",
    )


class CascadeSummary(_Model):
    """Who decided what under ``--cascade`` (README "The cascade")."""

    decided_by: dict[str, int] = Field(description="Tier name → citations it decided.")
    abstained: int = Field(description="Valid citations no tier was confident about.")
    disagreed: int = Field(
        0,
        description="Judge supports sent to a person because the local verifier strongly "
        "doubts them (abstain_reason 'judge and verifier disagree').",
    )
    agreement: dict[str, float] = Field(description="Per verdict: the agreement guaranteed.")
    delta: float = Field(description="Probability that the guarantee fails.")
    labels: int = Field(description="Human labels the thresholds rest on.")
    source: str = Field(description="Where those labels came from.")


class RiskBandCount(_Model):
    """One risk band of a report: its citations and what the calibration labels expect."""

    name: RiskBandName = Field(description="high, elevated, moderate or low risk.")
    lower: float = Field(description="p_supports >= lower ...")
    upper: float = Field(description="... and < upper (<= 1 for the last band).")
    citations: int = Field(description="Valid citations of this report in the band.")
    expected_unsupported: float | None = Field(
        description="Share of the calibration labels in this band that people found "
        "unsupported; null when no label fell in it."
    )
    labels: int = Field(description="Calibration labels in this band.")


class ShiftCheck(_Model):
    """The report's p_supports against the calibration labels' (docs/explanation/cascade.md)."""

    test: str = Field(
        description="The two-sample test used: kolmogorov-smirnov (asymptotic p-value)."
    )
    p_value: float = Field(description="Small: the scores look unlike the calibration labels'.")
    shifted: bool = Field(description="p_value below the level: thresholds may not hold here.")
    level: float = Field(description="The level p_value is compared with.")
    message: str = Field(description="What it means and what to do, in one sentence.")


GateStatus = Literal["PASS", "WARN", "FAIL"]
"""Quality gate outcome (README "`citecal validate`"): P2 PASS, P1 WARN, P0 FAIL."""


class Gate(_Model):
    """A quality gate's decision and every rule that fired (README "Quality gates")."""

    status: GateStatus = Field(description="FAIL (P0), WARN (P1) or PASS (P2).")
    reasons: list[str] = Field(description="One line per rule that fired; empty on PASS.")


class EscalationRecord(_Model):
    """The first judge answer of an escalated verdict (kept for audit)."""

    model: str | None
    verdict: VerdictLabel
    confidence: Confidence
    score: float | None
    reasoning: str
    confidence_source: ConfidenceSource | None = Field(
        None, description="How the first answer's confidence_value was measured."
    )
    confidence_value: float | None = Field(
        None, description="How likely the first answer's verdict was right, in [0, 1]."
    )


ExcerptStatus = Literal["verified", "unverified", "failed"]
"""README "Excerpt citations"'s verification status of an excerpt citation."""


class ExcerptMatch(_Model):
    """Where in the cited item the excerpt matches best (rapidfuzz alignment)."""

    start_line: int
    end_line: int
    score: float = Field(description="Alignment score in [0, 1] (1 = verbatim).")
    text: str = Field(description="The matching text of the item.")


class CitationResult(_Model):
    """One citation with every stage's outcome (a row of ``citations``)."""

    id: str = Field(description="Stable hash of claim + citation + occurrence index.")
    citation: str = Field(description="Normalised citation text, e.g. [src/a.py:1-5].")
    file_path: str
    start_line: int
    end_line: int
    claim: str = Field(description="The claim text the citation backs.")
    section: str = Field(description="Nearest heading above the citation.")
    paragraph_index: int
    position: int = Field(description="Character offset of the citation in the report.")
    valid: bool = Field(description="Structural validity.")
    error: str | None = Field(description="Why the citation is invalid, or null.")
    failure_type: FailureType | None = Field(description="Set when the citation failed.")
    mode: Mode | None = Field(description="Claim classification; null when invalid.")
    verdict: VerdictLabel | None = Field(description="Null for a structurally invalid citation.")
    method: Method | None
    confidence: Confidence | None
    score: float | None = Field(description="Support probability in [0, 1].")
    reasoning: str | None
    matched_terms: list[str]
    missing_terms: list[str]
    suggested_action: SuggestedAction | None
    model: str | None = Field(description="Judge model, for LLM verdicts.")
    prompt_version: str | None = Field(description="Judge prompt name + content hash.")
    # Additions beyond the documented minimum (additive, documented in README).
    language: str | None = Field(None, description="Language of the cited file.")
    context: str = Field("", description="The paragraph around the citation.")
    cited_code: str | None = Field(None, description="Text of the cited lines when valid.")
    hint: str | None = Field(None, description="Evidence for the correction loop.")
    tokens: int = Field(0, description="Judge tokens spent on this citation.")
    cost_usd: float = Field(0.0, description="Judge cost of this citation.")
    escalated_from: EscalationRecord | None = Field(None, description="First judge answer.")
    abstain_reason: AbstainReason | None = Field(
        None,
        description="Why the judge did not decide this claim: 'possible prompt injection' "
        "(README 'Security'; a person decides), 'budget reached' (--max-cost), 'needs a "
        "person' (no tier of the cascade was confident enough) or 'judge and verifier "
        "disagree' (the judge said supports where the local verifier strongly doubts it).",
    )
    # Excerpt citations (README "Excerpt citations"); null for plain line citations.
    item: str | None = Field(None, description="Item id as written in [[...]].")
    location: str | None = Field(None, description="Location specifier as written (p12, ...).")
    located: str | None = Field(None, description="What the location resolved to.")
    excerpt: str | None = Field(None, description="The text the citation claims to quote.")
    excerpt_quoted: bool | None = Field(None, description="The excerpt was in quotation marks.")
    excerpt_status: ExcerptStatus | None = Field(None, description="verified/unverified/failed.")
    excerpt_confidence: Confidence | None = Field(
        None, description="high/medium/low (README 'Excerpt citations')."
    )
    excerpt_verified: bool | None = Field(None, description="The excerpt appears at the location.")
    excerpt_score: float | None = Field(None, description="Share of its words found (1 = exact).")
    excerpt_match: ExcerptMatch | None = Field(None, description="Best-matching span of the item.")
    # `citecal eval --calibration MAP` (README "Calibrated confidence").
    raw_score: float | None = Field(
        None, description="The judge's support score before recalibration (score is mapped)."
    )
    # The sentence's citations together (README "The cascade", ALCE's citation recall).
    claim_citations: int = Field(1, description="Citations of this sentence (this one included).")
    claim_verdict: VerdictLabel | None = Field(
        None,
        description="Do the sentence's citations together support it: supports when every "
        "one is valid and supports its part, not_supports when all are decided and one is "
        "not, else unverified.",
    )
    # Judge confidence (README "Judge confidence"); null for rows no judge decided.
    confidence_source: ConfidenceSource | None = Field(
        None,
        description="How confidence_value was measured: verbal (the judge's own words), "
        "logprob (its verdict token's probability), consistency (agreement of K samples) or "
        "simulated (agreement of K few-shot variants built from people's labels).",
    )
    confidence_value: float | None = Field(
        None, description="How likely the verdict is right, in [0, 1] (judged rows)."
    )
    # The review list (docs/explanation/cascade.md, "The review list").
    p_supports: float | None = Field(
        None,
        description="The local verifier's support probability, calibrated on people's labels "
        "(out of fold); null for an invalid citation or with --no-cascade.",
    )
    risk_rank: int | None = Field(
        None, description="1 = most likely unsupported of this report's valid citations."
    )
    risk_band: RiskBandName | None = Field(
        None, description="high, elevated, moderate or low risk of being unsupported."
    )
    risk_evidence: list[str] = Field(
        default_factory=list,
        description="For the review list's citations: what drove the doubt (names missing "
        "from the range, where they are, a better-matching window nearby).",
    )
    proposed_citation: str | None = Field(
        None,
        description="For the review list's citations: where the claim most likely belongs "
        "([path:start-end], from the correction index, no judge), or null.",
    )


class EvalResult(_Model):
    """What ``citecal eval`` returns and writes (schema_version 1)."""

    schema_version: int = SCHEMA_VERSION
    report: str = Field(description="Path (or name) of the evaluated report.")
    report_sha256: str | None = Field(
        None,
        description="SHA-256 of the report's text as read (UTF-8, BOM removed): how "
        "`citecal push --corrections` knows a corrections file is for this report.",
    )
    repo: str = Field(description="Repository the citations were checked against.")
    rev: str | None = Field(None, description="Git revision, when evaluated at one.")
    context: str | None = Field(None, description="Directory of [[item]] citations (--context).")
    summary: Summary
    citations: list[CitationResult]
    failed_citations: list[CitationResult]
    uncited_claims: list[str] = Field(default_factory=list, description="Claims with no citation.")
    warnings: list[str] = Field(default_factory=list, description="Degradations, one line each.")
    gate: Gate | None = Field(None, description="Quality gate, with `citecal eval --gate`.")
    calibration: str | None = Field(
        None, description="Recalibration map applied to scores (`citecal eval --calibration`)."
    )

    @property
    def needs_correction(self) -> bool:
        """True if any citation failed (README "JSON output")."""
        return bool(self.failed_citations)

    @property
    def is_perfect(self) -> bool:
        """All citations valid, decided and supporting, none failed (README "JSON output").

        A report with unverified citations is not perfect (nobody checked them),
        and neither is a report with no citations at all.
        """
        s = self.summary
        return (
            s.total_citations > 0
            and s.validity_rate == 1.0
            and s.overall_precision == 1.0
            and s.unverified == 0
            and not self.failed_citations
        )

    def strict_failures(self) -> list[str]:
        """Why ``--strict`` fails this result, one line each (empty: it passes).

        One rule for every command with ``--strict``: a failed citation, an
        unverified one (whether the judge was off, unreachable or gave no usable
        answer) and a report without citations all fail.
        """
        s = self.summary
        problems: list[str] = []
        if s.total_citations == 0:
            problems.append("the report has no citations")
        if self.failed_citations:
            problems.append(f"{len(self.failed_citations)} citation(s) failed")
        if s.unverified:
            problems.append(f"{s.unverified} citation(s) are unverified")
        return problems


# --------------------------------------------------------------------------- judge verdict


class JudgeVerdict(_Model):
    """The judge's answer for one claim–code pair, as push, pull and rejudge carry it.

    One type for every place a judge verdict travels after evaluation (the
    raw record data ``push`` stores, the ``llm_*`` columns of the annotation
    table, ``rejudge``'s new columns), so its fields are never copied by hand
    and its support ``score`` is computed once, by :meth:`of`.
    """

    verdict: VerdictLabel = Field(description="The judge's verdict.")
    confidence: Confidence | None = Field(None, description="The judge's stated confidence.")
    score: float | None = Field(
        None,
        description="Support probability in [0, 1]: the judge's own, else the mapping of "
        "verdict and confidence (README 'Calibration').",
    )
    model: str | None = Field(None, description="Judge model (or the scorer's name).")
    prompt_version: str | None = Field(None, description="Judge prompt name + content hash.")
    reasoning: str | None = Field(None, description="Why, in the judge's words.")
    method: Method = Field("llm", description="llm, or extractive for a rule-based scorer.")
    confidence_source: ConfidenceSource | None = Field(
        None, description="How confidence_value was measured (README 'Judge confidence')."
    )
    confidence_value: float | None = Field(
        None, ge=0, le=1, description="How likely the verdict is right, in [0, 1]."
    )

    @classmethod
    def of(
        cls,
        verdict: VerdictLabel,
        confidence: Confidence | None,
        score: float | None,
        *,
        model: str | None = None,
        prompt_version: str | None = None,
        reasoning: str | None = None,
        method: Method = "llm",
        confidence_source: ConfidenceSource | None = None,
        confidence_value: float | None = None,
    ) -> JudgeVerdict:
        """A verdict with its support score computed (and clamped to [0, 1]) here, once.

        An LLM verdict that does not say how its confidence was measured (an
        evaluation written before README "Judge confidence") is the judge's own
        word: ``verbal``, its value read from the support score.
        """
        support = support_score(verdict, confidence or "medium", score)
        support = None if support is None else min(1.0, max(0.0, support))
        if confidence_value is None and confidence_source in (None, "verbal") and method == "llm":
            confidence_value = verdict_confidence(verdict, support)
            confidence_source = "verbal" if confidence_value is not None else None
        return cls(
            verdict=verdict,
            confidence=confidence,
            score=support,
            model=model,
            prompt_version=prompt_version,
            reasoning=reasoning or None,
            method=method,
            confidence_source=confidence_source if confidence_value is not None else None,
            confidence_value=confidence_value,
        )

    @classmethod
    def from_verdict(cls, v: Verdict) -> JudgeVerdict:
        """The judge's :class:`Verdict` of a run (``rejudge``)."""
        return cls.of(
            v.verdict,
            v.confidence,
            v.score,
            model=v.model,
            prompt_version=v.prompt_version,
            reasoning=v.reasoning,
            method=v.method,
            confidence_source=v.confidence_source,
            confidence_value=v.confidence_value,
        )

    @classmethod
    def from_citation(
        cls, c: CitationResult, methods: tuple[Method, ...] = ("llm",)
    ) -> JudgeVerdict | None:
        """The judge's verdict on an evaluated citation; None when no judge gave one.

        Only verdicts reached by one of ``methods`` count (the LLM judge by
        default: a rule verdict of ``--no-llm`` is not a judge verdict), and
        an ``unverified`` verdict without a model means the judge was not asked.
        """
        if c.verdict is None or c.method not in methods:
            return None
        if c.verdict == "unverified" and c.model is None:
            return None
        return cls.of(
            c.verdict,
            c.confidence,
            c.score if c.raw_score is None else c.raw_score,
            model=c.model,
            prompt_version=c.prompt_version,
            reasoning=c.reasoning,
            method=c.method,
            confidence_source=c.confidence_source,
            confidence_value=c.confidence_value,
        )

    def columns(self) -> dict[str, object]:
        """The annotation table's judge columns (README "Annotation table")."""
        return {
            "llm_verdict": self.verdict,
            "llm_confidence": self.confidence,
            "llm_score": self.score,
            "judge_model": self.model,
            "prompt_version": self.prompt_version,
            "judge_reasoning": self.reasoning,
            "confidence_source": self.confidence_source,
            "confidence_value": self.confidence_value,
        }


JUDGE_COLUMNS: tuple[str, ...] = (
    "llm_verdict",
    "llm_confidence",
    "llm_score",
    "judge_model",
    "prompt_version",
    "judge_reasoning",
    "confidence_source",
    "confidence_value",
)
"""The annotation table's columns that :meth:`JudgeVerdict.columns` fills."""
