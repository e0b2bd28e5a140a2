"""What ``citecal calibrate --format json`` writes (README "Calibration", schema_version 1).

Every figure that cannot be computed is ``None`` and the ``notes`` of the same
METRICS block say why, so a reader never has to guess whether ``null`` means
"zero" or "undefined". Fields beyond the documented minimum are additive.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from citecal.calibrate._estimate_models import EstimateReport
from citecal.calibrate._recalibrate import RecalibrationMap
from citecal.correct._acceptance import StrategyAcceptance
from citecal.models import SCHEMA_VERSION

DisagreementType = Literal["false_positive", "false_negative"]

DisagreementCategory = Literal[
    "wrong_file_or_symbol",
    "lines_off",
    "annotators_disagree",
    "rule_check_disagrees",
    "partial_support",
    "claim_overstates_code",
    "judge_overlooked_evidence",
]
"""What a prompt author should look at for one disagreement (README "Calibration")."""

CATEGORY_HELP: dict[str, str] = {
    "wrong_file_or_symbol": "annotator notes say the citation points at the wrong file or symbol",
    "lines_off": "annotator marked the line range too narrow or too broad",
    "annotators_disagree": "the record's annotators fall on both sides of 'supports'",
    "rule_check_disagrees": "the extractive term check and the judge gave opposite answers",
    "partial_support": "borderline: the human score is 1 or 2, the code supports part of the claim",
    "claim_overstates_code": "judge accepted a claim the code clearly does not back (human 0)",
    "judge_overlooked_evidence": "judge rejected a claim the code clearly backs (human 3)",
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Confusion(_Model):
    """Binary confusion of the judge against humans; positive means "supports"."""

    tp: int = Field(description="Judge supports, human ≥ 2.")
    fp: int = Field(description="Judge supports, human ≤ 1.")
    fn: int = Field(description="Judge does not support, human ≥ 2.")
    tn: int = Field(description="Judge does not support, human ≤ 1.")


class ReliabilityBin(_Model):
    """One bin of the reliability diagram: judge support score vs what humans said."""

    low: float = Field(description="Lower edge of the judge-score bin.")
    high: float = Field(description="Upper edge (inclusive for the last bin).")
    n: int = Field(description="Pairs in the bin.")
    mean_judge_score: float
    human_support_rate: float = Field(description="Share of these pairs with human score ≥ 2.")
    mean_human_score: float


class ConfidenceBin(_Model):
    """One bin of a confidence signal's reliability diagram (README "Judge confidence")."""

    low: float = Field(description="Lower edge of the confidence bin.")
    high: float = Field(description="Upper edge (inclusive for the last bin).")
    n: int = Field(description="Pairs in the bin.")
    mean_confidence: float = Field(description="Mean confidence_value of those pairs.")
    agreement_rate: float = Field(description="Share of them where the annotator agrees.")


class SignalQuality(_Model):
    """How well one confidence source tells verdicts people agree with from the rest."""

    source: str = Field(description="verbal, logprob, consistency or simulated.")
    n_pairs: int = Field(description="(record, annotator) pairs with a verdict and a confidence.")
    n_records: int = Field(description="Distinct records among them.")
    agreement_rate: float = Field(description="Share of those pairs where the annotator agrees.")
    mean_confidence: float = Field(description="Mean confidence_value: what the signal claims.")
    roc_auc: float | None = Field(
        description="ROC AUC of confidence_value for 'the annotator agrees' (0.5: no signal)."
    )
    roc_auc_ci: list[float] | None = Field(
        None, description="Cluster-bootstrap 95% interval of roc_auc (resampled by report)."
    )
    ece: float | None = Field(
        description="Expected calibration error over ten bins: Σ (n/N)·|confidence − agreement|."
    )
    reliability: list[ConfidenceBin] = Field(
        default_factory=list, description="The reliability diagram: ten equal-width bins."
    )
    notes: list[str] = Field(default_factory=list, description="Why a figure is null.")


class Metrics(_Model):
    """Every judge-human and human-human figure for one slice of the table."""

    n_records: int = Field(description="Distinct records (claim-citation pairs).")
    n_annotations: int = Field(description="(record, annotator) rows in the slice.")
    n_annotators: int = Field(description="Distinct annotators.")
    n_pairs: int = Field(0, description="Rows with a binary judge verdict (the pairwise unit).")
    n_reports: int = Field(0, description="Distinct reports (bootstrap clusters).")
    agreement_rate: float | None = Field(
        description="Judge-human agreement over (record, annotator) pairs (README 'Calibration')."
    )
    consensus_agreement_rate: float | None = Field(
        description="Agreement with the median human score per record."
    )
    spearman_rho: float | None = Field(description="Judge support score vs human 0–3 score.")
    spearman_p: float | None = Field(description="Two-sided p-value of spearman_rho.")
    kendall_tau: float | None = Field(description="Kendall τ-b, judge score vs human score.")
    cohen_kappa: float | None = Field(description="Binary kappa (human ≥ 2 = supports).")
    weighted_kappa: float | None = Field(
        description="Quadratic-weighted kappa on 0–3 (judge score mapped by min(3, ⌊4s⌋))."
    )
    brier: float | None = Field(description="Mean (judge score − human support)².")
    precision: float | None = Field(description="Judge precision for 'supports'.")
    recall: float | None = Field(description="Judge recall for 'supports'.")
    f1: float | None = Field(description="Judge F1 for 'supports'.")
    precision_not_supports: float | None = Field(None, description="Precision for 'not'.")
    recall_not_supports: float | None = Field(None, description="Recall for 'not supports'.")
    f1_not_supports: float | None = Field(None, description="F1 for 'not supports'.")
    confusion: Confusion
    krippendorff_alpha: float | None = Field(description="Ordinal α between annotators.")
    human_exact_agreement: float | None = Field(
        None, description="Share of annotator pairs on one record giving the same score."
    )
    human_within1_agreement: float | None = Field(
        None, description="Share of annotator pairs within one point of each other."
    )
    human_ceiling: float | None = Field(
        description="Leave-one-annotator-out: how often an annotator agrees with the others."
    )
    judge_ceiling_agreement: float | None = Field(
        None, description="How often the judge agrees with the same held-out consensus."
    )
    judge_vs_ceiling: float | None = Field(
        description="judge_ceiling_agreement − human_ceiling (negative: judge below humans)."
    )
    within_ceiling: bool | None = Field(
        None, description="judge_vs_ceiling ≥ −ceiling_margin (default 0.05)."
    )
    line_range_accuracy: float | None = Field(description="Share of line_range answers 'correct'.")
    line_range_counts: dict[str, int] = Field(
        default_factory=dict, description="Counts of correct / too_narrow / too_broad."
    )
    ci: dict[str, list[float] | None] = Field(
        default_factory=dict, description="Cluster-bootstrap 95% CIs (resampled by report)."
    )
    reliability: list[ReliabilityBin] = Field(
        default_factory=list, description="Judge score bins (width 0.2) vs human support."
    )
    ece: float | None = Field(
        None,
        description="Expected calibration error: Σ (n_bin/n)·|mean score − share supported| "
        "over the reliability bins.",
    )
    calibrated: bool | None = Field(description="spearman_rho > threshold (README 'Calibration').")
    notes: list[str] = Field(default_factory=list, description="Why a figure is null, etc.")


class Disagreement(_Model):
    """One (record, annotator) pair where the judge and the human disagree."""

    record_id: str
    annotator: str
    type: DisagreementType
    category: DisagreementCategory
    claim: str | None
    citation: str | None
    judge_verdict: str | None
    judge_score: float | None
    human_score: int
    reasoning: str | None = Field(description="The judge's reasoning, when recorded.")
    notes: str | None = Field(description="The annotator's notes.")
    report_id: str | None = None
    mode: str | None = None
    line_range: str | None = None
    correction: str | None = None
    cited_code: str | None = None


class MetricDiff(_Model):
    """One figure for judges A and B on the same pairs, and B − A."""

    a: float | None
    b: float | None
    diff: float | None = Field(description="b − a.")
    ci: list[float] | None = Field(description="Paired cluster-bootstrap 95% CI of diff.")


class FlippedRecord(_Model):
    """A record whose binary verdict changed between judge A and judge B."""

    record_id: str
    claim: str | None
    citation: str | None
    verdict_a: str | None
    verdict_b: str | None
    human_median: float
    effect: Literal["fixed", "broke", "changed"] = Field(
        description="fixed: B now agrees with the humans; broke: B no longer does."
    )


class Comparison(_Model):
    """Paired comparison of two judges on the same annotated records."""

    a: str = Field(description="Input of judge A (baseline).")
    b: str = Field(description="Input of judge B (candidate).")
    n_pairs: int
    n_records: int
    prompt_a: str | None = None
    prompt_b: str | None = None
    figures: dict[str, MetricDiff]
    mcnemar_b01: int = Field(description="Records only A got right (consensus label).")
    mcnemar_b10: int = Field(description="Records only B got right.")
    mcnemar_p: float | None = Field(description="Exact McNemar p-value (binomial test).")
    significantly_worse: bool = Field(
        description="B is worse: McNemar p < 0.05 against B, or agreement-diff CI below 0."
    )
    significantly_better: bool
    flipped: list[FlippedRecord]
    notes: list[str] = Field(default_factory=list)


class JudgeSnapshot(_Model):
    """The judge's answer per record of a calibration, column by column (compact JSON).

    Saved with every calibration so a later one can be compared with it
    (``citecal calibrate --baseline``, README "Drift alarms").
    """

    record_id: list[str]
    llm_verdict: list[str | None]
    judge_score: list[Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None] = Field(
        description="Support score (own, else mapped), in [0, 1]."
    )
    prompt_version: list[str | None]

    @model_validator(mode="after")
    def _same_length(self) -> JudgeSnapshot:
        """A cut or edited snapshot (columns of different lengths) is refused, not misaligned."""
        lengths = {
            "record_id": len(self.record_id),
            "llm_verdict": len(self.llm_verdict),
            "judge_score": len(self.judge_score),
            "prompt_version": len(self.prompt_version),
        }
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{k} {v}" for k, v in lengths.items())
            raise ValueError(f"its columns differ in length ({shown}): truncated or edited")
        return self


class Drift(_Model):
    """The paired comparison with a saved calibration and the alarms it raised."""

    baseline: str = Field(description="The saved calibration JSON.")
    margin: float = Field(description="A drop larger than this (and significant) alarms.")
    shared_records: int = Field(description="Records in both calibrations.")
    comparison: Comparison = Field(description="A = baseline judge, B = today's judge.")
    alarms: list[str] = Field(default_factory=list, description="One line per alarming figure.")


class Gate(_Model):
    """``--fail-under``: minimum values of named figures (overall)."""

    thresholds: dict[str, float]
    passed: bool
    failures: list[str] = Field(default_factory=list)


class CalibrationReport(_Model):
    """``citecal calibrate`` output (schema_version 1)."""

    schema_version: int = SCHEMA_VERSION
    input: str = Field(description="The annotation table that was calibrated.")
    overall: Metrics
    groups: dict[str, dict[str, Metrics]] = Field(default_factory=dict)
    disagreements: list[Disagreement] = Field(default_factory=list)
    categories: dict[str, int] = Field(
        default_factory=dict, description="Disagreement counts per category."
    )
    compare: Comparison | None = None
    corrections: dict[str, StrategyAcceptance] | None = Field(
        None,
        description="Acceptance of corrections proposed by `citecal correct`, by strategy.",
    )
    settings: dict[str, float | int | None] = Field(
        default_factory=dict, description="Threshold, margin, resamples and seed used."
    )
    judge: JudgeSnapshot | None = Field(
        None, description="The judge's answer per record (for a later --baseline)."
    )
    drift: Drift | None = None
    recalibration: RecalibrationMap | None = Field(
        None, description="Map fitted with --save-map, with its cross-validated figures."
    )
    gate: Gate | None = None
    estimate: EstimateReport | None = Field(
        None, description="Corrected precision of judged citations (--judged), README Estimates."
    )
    signals: list[SignalQuality] = Field(
        default_factory=list,
        description="Per confidence source in the table: ROC AUC, ECE and reliability of "
        "confidence_value for 'people agree with the verdict' (README 'Judge confidence').",
    )
