"""Score citecal's verdicts against people's labels (the ground-truth benchmark).

Positive means "supports": a person's score ≥ 2 and citecal's verdict
``supports`` (the one rule of :mod:`citecal.support`). A structurally invalid
citation is a decision that the citation does not support its claim. A valid
citation whose verdict is ``unverified`` is *undecided*: it counts against
recall and decision coverage, never as agreement or disagreement.

Figures (README, "Ground truth"): ``agreement`` over decided citations;
``false_supports`` / ``false_support_rate`` (decided "supports" that people
reject, over every citation people reject); ``false_rejects`` /
``false_reject_rate`` (decided non-support that people accept, over every
citation people accept); ``decision_coverage`` over all citations, as in
``citecal eval``'s summary, and ``decision_coverage_valid`` over the valid
ones only (the structural check decides invalid ones trivially, so they
flatter the first); precision, recall and F1 of "supports".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from citecal.bench._labels import CitationLabel, GroundTruth
from citecal.bench._size import package_size
from citecal.models import CitationResult, EvalResult
from citecal.support import human_supports, verdict_decided, verdict_supports

SCHEMA_VERSION = 1
GROUPS: tuple[str, ...] = (
    "origin",
    "category",
    "claim_kind",
    "difficulty",
    "language",
    "package",
    "size",
    "fault_class",
    "mode",
    "method",
)
ORIGINS: tuple[str, ...] = ("natural", "planted")
ORIGIN_GROUPS: tuple[str, ...] = ("language", "size", "category", "claim_kind", "fault_class")


@dataclass(frozen=True, slots=True)
class Scored:
    """One labelled citation next to what citecal said about it."""

    package: str
    language: str
    label: CitationLabel
    row: CitationResult | None  # None: citecal did not extract this citation
    size: str = "unknown"
    """small / medium / large: the package's lines of code (:mod:`citecal.bench._size`)."""

    @property
    def human(self) -> bool:
        return human_supports(self.label.human_score)

    @property
    def valid(self) -> bool:
        return self.row is not None and self.row.valid

    @property
    def decided(self) -> bool:
        if self.row is None:
            return False
        return not self.row.valid or verdict_decided(self.row.verdict)

    @property
    def predicted(self) -> bool:
        return self.row is not None and self.row.valid and verdict_supports(self.row.verdict)

    def group(self, by: str) -> str:
        if by in ("category", "difficulty", "origin"):
            return str(getattr(self.label, by))
        if by == "claim_kind":
            return self.label.claim_kind or "unknown"
        if by == "fault_class":
            return self.label.error_class or "supported"
        if by == "size":
            return self.size
        if by == "language":
            return self.language
        if by == "package":
            return self.package
        if self.row is None:
            return "not_extracted"
        if not self.row.valid:
            return "invalid"
        value = self.row.mode if by == "mode" else self.row.method
        return value or "none"


class Metrics(BaseModel):
    """Agreement of citecal with people on a set of labelled citations."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(description="Labelled citations.")
    valid: int = Field(description="Of those, structurally valid according to citecal.")
    supported: int = Field(description="People's score >= 2.")
    unsupported: int = Field(description="People's score <= 1.")
    decided: int = Field(description="Invalid, or valid with a supports/partial/not_supports.")
    undecided: int = Field(description="Valid and unverified (or not extracted).")
    agreement: float | None = Field(description="Decided citations where citecal agrees.")
    false_supports: int
    false_support_rate: float | None = Field(description="false_supports / unsupported.")
    false_rejects: int
    false_reject_rate: float | None = Field(description="false_rejects / supported.")
    decision_coverage: float | None = Field(description="decided / n, as in eval's summary.")
    decision_coverage_valid: float | None = Field(
        description="Decided valid citations / valid citations."
    )
    precision: float | None = Field(description="Of citecal's supports, people accept.")
    recall: float | None = Field(description="Of what people accept, citecal says supports.")
    f1: float | None
    structural_agreement: float | None = Field(
        description="Citations whose valid/invalid status matches the label."
    )


class Disagreement(BaseModel):
    """A decided citation where citecal and people differ (for reading, not scoring)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    type: str = Field(description="false_support | false_reject")
    citation: str
    claim: str
    human_score: int
    category: str
    verdict: str | None
    method: str | None
    mode: str | None
    reasoning: str | None
    rationale: str


class OriginSlice(BaseModel):
    """The figures of one origin's labels (natural reports, or planted faults) alone."""

    model_config = ConfigDict(extra="forbid")

    overall: Metrics
    groups: dict[str, dict[str, Metrics]] = Field(
        description="By language, package size, category, claim_kind and fault_class."
    )


class BenchReport(BaseModel):
    """``citecal bench groundtruth --format json`` (schema_version 1)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    judge: str | None = Field(description="Judge model, or null for --no-llm.")
    sets: list[str] = Field(description="Label sets scored (package ids).")
    overall: Metrics
    groups: dict[str, dict[str, Metrics]]
    by_origin: dict[str, OriginSlice] = Field(
        default_factory=dict,
        description="The same figures for natural-report labels and planted ones apart.",
    )
    disagreements: list[Disagreement]
    not_extracted: list[str] = Field(description="Label ids citecal found no citation for.")
    sentences: SentenceFigures | None = Field(
        None, description="Sentences with several citations: the joint verdict against people's."
    )
    decided_by: dict[str, Metrics] = Field(
        default_factory=dict,
        description="Valid citations by who decided them: 'rules or judge' (method extractive "
        "or llm) and 'local' (the cascade's certified local tier), each apart.",
    )
    abstained: dict[str, int] = Field(
        default_factory=dict,
        description="Valid citations sent to a person, by abstain_reason (e.g. 'judge and "
        "verifier disagree', 'needs a person').",
    )


class SentenceFigures(BaseModel):
    """Do a sentence's citations together support it? (``claim_verdict`` against people)."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(description="Sentence labels (sentences with 2+ citations).")
    supported: int = Field(description="People's joint score >= 2.")
    decided: int = Field(description="Joint verdict supports or not_supports.")
    agreement: float | None
    false_supports: int
    false_rejects: int


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def metrics(items: Sequence[Scored]) -> Metrics:
    """The figures of the module docstring over ``items``."""
    n = len(items)
    supported = sum(s.human for s in items)
    decided = [s for s in items if s.decided]
    agree = sum(s.predicted == s.human for s in decided)
    fs = sum(s.predicted and not s.human for s in decided)
    fr = sum(not s.predicted and s.human for s in decided)
    tp = sum(s.predicted and s.human for s in items)
    predicted = sum(s.predicted for s in items)
    valid = [s for s in items if s.valid]
    decided_valid = sum(s.decided for s in valid)
    precision = _ratio(tp, predicted)
    recall = _ratio(tp, supported)
    f1 = (
        round(2 * precision * recall / (precision + recall), 4)
        if precision and recall
        else (0.0 if precision is not None and recall is not None else None)
    )
    extracted = [s for s in items if s.row is not None]
    structural = sum((s.label.structural == "valid") == s.valid for s in extracted)
    return Metrics(
        n=n,
        valid=len(valid),
        supported=supported,
        unsupported=n - supported,
        decided=len(decided),
        undecided=n - len(decided),
        agreement=_ratio(agree, len(decided)),
        false_supports=fs,
        false_support_rate=_ratio(fs, n - supported),
        false_rejects=fr,
        false_reject_rate=_ratio(fr, supported),
        decision_coverage=_ratio(len(decided), n),
        decision_coverage_valid=_ratio(decided_valid, len(valid)),
        precision=precision,
        recall=recall,
        f1=f1,
        structural_agreement=_ratio(structural, len(extracted)),
    )


def match(truth: GroundTruth, result: EvalResult) -> list[Scored]:
    """Pair every label with the eval row of the same citation (path, lines, occurrence)."""
    seen: dict[tuple[str, int, int], int] = {}
    rows: dict[tuple[str, int, int, int], CitationResult] = {}
    for row in sorted(result.citations, key=lambda r: r.position):
        triple = (row.file_path, row.start_line, row.end_line)
        k = seen.get(triple, 0)
        seen[triple] = k + 1
        rows[(*triple, k)] = row
    lang = truth.labels.language
    size = package_size(truth.sources) if truth.sources.is_dir() else "unknown"
    return [
        Scored(truth.package, lang, label, rows.get(label.key), size)
        for label in truth.labels.citations
    ]


def _disagreement(s: Scored) -> Disagreement:
    row = s.row
    assert row is not None
    return Disagreement(
        id=s.label.id,
        type="false_support" if s.predicted else "false_reject",
        citation=s.label.citation,
        claim=s.label.claim,
        human_score=s.label.human_score,
        category=s.label.category,
        verdict=row.verdict if row.valid else "invalid",
        method=row.method,
        mode=row.mode,
        reasoning=row.reasoning or row.error,
        rationale=s.label.rationale,
    )


def _grouped(items: Sequence[Scored], by_names: Sequence[str]) -> dict[str, dict[str, Metrics]]:
    groups: dict[str, dict[str, Metrics]] = {}
    for by in by_names:
        buckets: dict[str, list[Scored]] = {}
        for s in items:
            buckets.setdefault(s.group(by), []).append(s)
        groups[by] = {k: metrics(v) for k, v in sorted(buckets.items())}
    return groups


def score(scored: Iterable[Scored], judge: str | None, sets: Sequence[str]) -> BenchReport:
    """Overall and grouped figures, the same per origin, and the disagreements to read."""
    items = list(scored)
    by_origin = {}
    for origin in ORIGINS:
        part = [s for s in items if s.label.origin == origin]
        if part:
            by_origin[origin] = OriginSlice(
                overall=metrics(part), groups=_grouped(part, ORIGIN_GROUPS)
            )
    valid = [s for s in items if s.valid]
    method = {id(s): s.row.method if s.row is not None else None for s in valid}
    deciders = {
        "rules or judge": [
            s for s in valid if s.decided and method[id(s)] in ("extractive", "llm")
        ],
        "local": [s for s in valid if s.decided and method[id(s)] == "local"],
    }
    abstained: dict[str, int] = {}
    for s in valid:
        reason = s.row.abstain_reason if s.row is not None else None
        if reason is not None:
            abstained[reason] = abstained.get(reason, 0) + 1
    return BenchReport(
        judge=judge,
        sets=list(sets),
        overall=metrics(items),
        groups=_grouped(items, GROUPS),
        by_origin=by_origin,
        decided_by={k: metrics(v) for k, v in deciders.items() if v},
        abstained=dict(sorted(abstained.items())),
        disagreements=[_disagreement(s) for s in items if s.decided and s.predicted != s.human],
        not_extracted=[s.label.id for s in items if s.row is None],
    )


def run_groundtruth(
    sets: Sequence[GroundTruth],
    evaluate: Callable[[GroundTruth], EvalResult],
    judge: str | None,
) -> BenchReport:
    """Evaluate every set's report with ``evaluate`` and score it against the labels."""
    scored: list[Scored] = []
    joint: list[tuple[bool, str | None]] = []
    for truth in sets:
        part = match(truth, evaluate(truth))
        scored.extend(part)
        joint.extend(sentence_pairs(truth, part))
    report = score(scored, judge, [t.id for t in sets])
    return report.model_copy(update={"sentences": sentence_figures(joint)}) if joint else report


def sentence_pairs(truth: GroundTruth, scored: Sequence[Scored]) -> list[tuple[bool, str | None]]:
    """(people's joint support, citecal's joint verdict) for each sentence label."""
    rows = {s.label.id: s.row for s in scored}
    out: list[tuple[bool, str | None]] = []
    for sentence in truth.labels.sentences:
        found = [rows.get(cid) for cid in sentence.citations]
        verdict = next((r.claim_verdict for r in found if r is not None), None)
        out.append((human_supports(sentence.human_score), verdict))
    return out


def sentence_figures(pairs: Sequence[tuple[bool, str | None]]) -> SentenceFigures:
    decided = [(h, v) for h, v in pairs if v in ("supports", "not_supports")]
    agree = sum(h == (v == "supports") for h, v in decided)
    return SentenceFigures(
        n=len(pairs),
        supported=sum(h for h, _ in pairs),
        decided=len(decided),
        agreement=_ratio(agree, len(decided)),
        false_supports=sum(not h and v == "supports" for h, v in decided),
        false_rejects=sum(h and v == "not_supports" for h, v in decided),
    )


__all__ = [
    "GROUPS",
    "ORIGINS",
    "BenchReport",
    "Disagreement",
    "Metrics",
    "OriginSlice",
    "Scored",
    "SentenceFigures",
    "match",
    "metrics",
    "run_groundtruth",
    "score",
]
