"""What ``citecal estimate --format json`` writes (schema_version 1, README "Estimates")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citecal.models import SCHEMA_VERSION

Predictor = Literal["score", "verdict"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Interval(_Model):
    """A share and its confidence interval (null when it cannot be computed)."""

    estimate: float | None = Field(description="The share of citations that support their claim.")
    ci: list[float] | None = Field(description="[low, high] at the report's level, in [0, 1].")


class Point(_Model):
    """A share without an interval."""

    estimate: float | None


class Figures(_Model):
    """Corrected, judge-only and human-only precision for one population or subgroup."""

    n_judged: int = Field(description="Decided judged citations in the population.")
    n_labelled: int = Field(description="Of those, records with a human label.")
    corrected: Interval = Field(description="PPI++ estimate: judge corrected by human labels.")
    judge_only: Point = Field(description="Share of judged citations the judge says support.")
    human_only: Interval = Field(description="Classical interval from the labels alone.")
    effective_labels: float | None = Field(
        description="Labels the human-only interval would need to be as narrow as corrected."
    )
    power_tuning: float | None = Field(
        None, description="PPI++ λ (0: judge ignored, 1: plain PPI); null when stratified."
    )
    notes: list[str] = Field(default_factory=list)


class Cell(_Model):
    """One stratum of the overall estimate."""

    key: dict[str, str] = Field(description="Values of the stratification dimensions.")
    cells: int = Field(1, description="Cells pooled into this stratum (small ones are pooled).")
    n_judged: int
    n_labelled: int
    share: float = Field(description="n_judged / all judged: the stratum's weight.")
    power_tuning: float
    corrected: Interval


class Stratification(_Model):
    """How the overall estimate was stratified."""

    by: list[str] = Field(description="Dimensions crossed to form cells.")
    min_labelled: int = Field(description="Cells with fewer labels are pooled.")
    strata: list[Cell]


class GateResult(_Model):
    """``--fail-under``: thresholds on the corrected interval's lower bound."""

    thresholds: dict[str, float]
    passed: bool
    failures: list[str] = Field(default_factory=list, description="One reason per failed gate.")


class LabelPlanReport(_Model):
    """``--target-width``: labels expected to bring the corrected interval to a width."""

    target_width: float = Field(description="The wanted width of the corrected interval.")
    width: float | None = Field(description="The corrected interval's width now.")
    labels_current_design: float | None = Field(
        description="Labels in all under the current design (null: out of reach)."
    )
    more_current_design: int | None = Field(description="Of those, still to label.")
    labels_uniform: float | None = Field(description="Labels in all under uniform sampling.")
    more_uniform: int | None = Field(description="Of those, still to label.")


class EstimateReport(_Model):
    """``citecal estimate`` output (schema_version 1)."""

    schema_version: int = SCHEMA_VERSION
    judged: list[str] = Field(description="Inputs of judged citations.")
    annotations: str = Field(description="The annotation table the labels came from.")
    predictor: Predictor = Field(
        description="What the judge contributes: support score or verdict."
    )
    level: float = Field(description="Confidence level of every interval.")
    n_judged: int
    n_labelled: int
    corrected: Interval
    judge_only: Point
    human_only: Interval
    effective_labels: float | None
    strata: dict[str, dict[str, Figures]] = Field(
        default_factory=dict, description="Per dimension (mode, language, repo), per value."
    )
    stratification: Stratification
    sampling: str = Field(description="How the labelled records were drawn, as far as known.")
    design: str = Field(
        "uniform",
        description="uniform (assumed), census, census (random order), all, stratified, active.",
    )
    uniform_labels: float | None = Field(
        None,
        description="Active design: labels a uniform random sample would need for this "
        "corrected interval (its gain over uniform sampling).",
    )
    plan: LabelPlanReport | None = Field(None, description="--target-width: labels needed.")
    notes: list[str] = Field(default_factory=list)
    gate: GateResult | None = None


__all__ = [
    "Cell",
    "EstimateReport",
    "Figures",
    "GateResult",
    "Interval",
    "LabelPlanReport",
    "Point",
    "Predictor",
    "Stratification",
]
