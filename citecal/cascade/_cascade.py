"""The cascade: rules → local verifier → judges, each deciding only where people's labels
say it may (README "The cascade").

A cascade file (JSON, schema_version 1) lists the tiers in order with a
threshold per verdict chosen by :func:`citecal.cascade.fixed_sequence` on human
labels, the agreement asked for, δ, what the labels were, and the local
verifier's parameters inline, so one file is everything ``eval --cascade``
needs and nothing in it can run code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from citecal._io import atomic_write_text, read_text_file
from citecal.cascade._calibration import Calibrator
from citecal.cascade._thresholds import Threshold, fixed_sequence
from citecal.cascade._verifier import LocalVerifier, validate_json
from citecal.errors import InputError
from citecal.models import ConfidenceSource

SCHEMA_VERSION: Literal[1] = 1
VERDICTS: tuple[str, str] = ("supports", "not_supports")
TierKind = Literal["rules", "local", "judge"]
DEFAULT_CASCADE = "default_cascade.json"
MAX_CASCADE_BYTES = 8 * 2**20
"""Largest cascade file read (README "Security"; the shipped one is 5 kB)."""
MAX_MODEL_CHARS = 256
"""Longest model name in a cascade's cost (a name, not a document)."""
LABEL_COUNTS = ("n", "records")
"""Keys of a cascade's ``labels`` that count labels, checked as counts when it is loaded."""


Count = Annotated[int, Field(ge=0, strict=True)]
"""A count of labels: a non-negative integer (JSON ``3``, never ``3.0``, ``true`` or ``NaN``)."""
Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
"""A rate or probability in [0, 1]."""


class TierThreshold(BaseModel):
    """One verdict of one tier: decide at confidence ≥ ``value`` (never when null).

    Every field is checked when a file is loaded (README "Security"): a threshold
    of 0, a negative one or −inf would let the tier decide everything, NaN would
    silently mean never; a threshold is a confidence in [0.5, 1] or null.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float | None = Field(ge=0.5, le=1, allow_inf_nan=False)
    n: Count = Field(description="Calibration labels decided at this threshold.")
    errors: Count = Field(description="Of those, people disagree.")
    candidates: Count = Field(description="Labels reaching the tier with this predicted verdict.")
    agreement: Share | None
    interval: tuple[Share, Share] | None = Field(description="Clopper-Pearson 95% of agreement.")
    p_value: Share | None

    @model_validator(mode="after")
    def _counts(self) -> TierThreshold:
        if self.errors > self.n or self.n > self.candidates:
            raise ValueError("counts must satisfy errors ≤ n ≤ candidates")
        return self

    @classmethod
    def of(cls, t: Threshold) -> TierThreshold:
        return cls(
            value=t.value,
            n=t.n,
            errors=t.errors,
            candidates=t.candidates,
            agreement=t.agreement,
            interval=t.interval(),
            p_value=t.p_value,
        )


class Tier(BaseModel):
    """A tier and its calibrated thresholds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: TierKind
    model: str | None = Field(None, description="The judge model of a judge tier.")
    confidence: ConfidenceSource | None = Field(
        None,
        description="A judge tier's confidence source (verbal, logprob, consistency, "
        "simulated): its thresholds are on that confidence_value (README 'Judge "
        "confidence'); null: on the judge's support score, as before.",
    )
    thresholds: dict[str, TierThreshold]
    reached: Count = Field(0, description="Calibration labels that reached this tier.")
    decided: Count = Field(0, description="Of those, decided here.")
    cost_per_1000: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="USD per 1 000 claims decided here."
    )

    @model_validator(mode="after")
    def _decided(self) -> Tier:
        if set(self.thresholds) != set(VERDICTS):
            raise ValueError(f"thresholds must give {' and '.join(VERDICTS)}, no other verdict")
        if self.decided > self.reached:
            raise ValueError("decided must not exceed reached")
        if self.confidence is not None and self.kind != "judge":
            raise ValueError("only a judge tier has a confidence source")
        return self


class CascadeCost(BaseModel):
    """The judge tiers' expected cost per 1 000 claims and the strongest judge's alone.

    Every claim reaching a judge tier pays for it (K answers for consistency and
    simulated); README "Judge confidence".
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    per_1000: float = Field(
        ge=0,
        allow_inf_nan=False,
        description="USD per 1 000 claims: Σ share reaching a tier × its cost.",
    )
    baseline_model: str = Field(
        max_length=MAX_MODEL_CHARS, description="The most expensive judge tier's model."
    )
    baseline_per_1000: float = Field(
        ge=0,
        allow_inf_nan=False,
        description="USD per 1 000 claims when that model judges every claim (one answer each).",
    )
    ratio: float | None = Field(
        ge=0, allow_inf_nan=False, description="per_1000 / baseline_per_1000."
    )


class CascadeSpec(BaseModel):
    """``--cascade FILE`` (schema_version 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = SCHEMA_VERSION
    agreement: dict[str, Annotated[float, Field(ge=0.5, lt=1, allow_inf_nan=False)]] = Field(
        description="Per verdict: the agreement guaranteed, in [0.5, 1)."
    )
    delta: float = Field(
        gt=0, lt=1, allow_inf_nan=False, description="Probability that the guarantee fails."
    )
    labels: dict[str, object] = Field(description="What the thresholds rest on: n, source, hash.")
    tiers: list[Tier]
    abstained: Count = Field(0, description="Calibration labels no tier decided.")
    verifier: LocalVerifier | None = None
    cost: CascadeCost | None = Field(
        None, description="What the judge tiers cost per 1 000 claims against the strongest."
    )
    calibrator: Calibrator | None = Field(
        None,
        description="The verifier's probability calibrated on out-of-fold predictions, the "
        "risk bands and the calibration scores (absent from files written before round 4).",
    )

    @field_validator("labels")
    @classmethod
    def _label_counts(cls, labels: dict[str, object]) -> dict[str, object]:
        for key in LABEL_COUNTS:
            value = labels.get(key)
            if key in labels and (type(value) is not int or value < 0):
                raise ValueError(f"labels.{key} must be a count (an integer ≥ 0), got {value!r}")
        return labels

    @field_validator("agreement")
    @classmethod
    def _verdicts(cls, agreement: dict[str, float]) -> dict[str, float]:
        if set(agreement) != set(VERDICTS):
            raise ValueError(f"agreement must give one level for each of {', '.join(VERDICTS)}")
        return agreement

    def tier(self, kind: TierKind, model: str | None = None) -> Tier | None:
        for t in self.tiers:
            if t.kind == kind and (model is None or t.model == model):
                return t
        return None


@dataclass(frozen=True, slots=True)
class Item:
    """One labelled citation as the cascade sees it."""

    rule: str | None
    """The rule check's decided verdict (supports / not_supports) or None."""
    local: float | None
    """The local verifier's support probability."""
    judges: dict[str, float] = field(default_factory=dict)
    """Judge model → support score."""
    human: bool = False
    """People's consensus: supports (score ≥ 2)."""
    judge_verdicts: dict[str, tuple[str, float]] = field(default_factory=dict)
    """Judge model → (verdict side, confidence_value): what a judge tier with a confidence
    source thresholds on (README "Judge confidence")."""


def predict(kind: TierKind, item: Item, model: str | None = None) -> tuple[str, float] | None:
    """(verdict, confidence) the tier gives ``item``, or None when it has nothing to say."""
    if kind == "rules":
        return (item.rule, 1.0) if item.rule in VERDICTS else None
    if kind == "judge" and (model or "") in item.judge_verdicts:
        verdict, confidence = item.judge_verdicts[model or ""]
        return (verdict, float(confidence)) if np.isfinite(confidence) else None
    p = item.local if kind == "local" else item.judges.get(model or "")
    if p is None or not np.isfinite(p):
        return None
    return ("supports", float(p)) if p >= 0.5 else ("not_supports", float(1.0 - p))


def decides(tier: Tier, verdict: str, confidence: float) -> bool:
    t = tier.thresholds.get(verdict)
    return t is not None and t.value is not None and confidence >= t.value


@dataclass(frozen=True)
class TierSpec:
    """A tier to calibrate: its kind, judge model and cost per claim (USD)."""

    kind: TierKind
    model: str | None = None
    cost_per_claim: float | None = None
    confidence: str | None = None
    """A judge tier's confidence source (its items carry ``judge_verdicts``)."""

    @property
    def name(self) -> str:
        return f"judge:{self.model}" if self.kind == "judge" else self.kind


def calibrate_cascade(
    items: Sequence[Item],
    tiers: Sequence[TierSpec],
    agreement: dict[str, float],
    delta: float,
    labels: dict[str, object],
    verifier: LocalVerifier | None = None,
    calibrator: Calibrator | None = None,
) -> CascadeSpec:
    """Thresholds for every tier, in order, on the labels that reach it.

    δ is split evenly over the (tier, verdict) tests (a union bound), so all the
    guarantees hold together with probability ≥ 1 − δ.
    """
    tests = max(1, len(tiers) * len(VERDICTS))
    remaining = list(range(len(items)))
    out: list[Tier] = []
    for spec in tiers:
        reached = len(remaining)
        thresholds: dict[str, TierThreshold] = {}
        decided: set[int] = set()
        for verdict in VERDICTS:
            idx: list[int] = []
            conf: list[float] = []
            for i in remaining:
                pred = predict(spec.kind, items[i], spec.model)
                if pred is not None and pred[0] == verdict:
                    idx.append(i)
                    conf.append(pred[1])
            ok = [items[i].human == (verdict == "supports") for i in idx]
            th = fixed_sequence(conf, ok, 1.0 - agreement[verdict], delta / tests)
            thresholds[verdict] = TierThreshold.of(th)
            if th.value is not None:
                decided.update(i for i, c in zip(idx, conf, strict=True) if c >= th.value)
        remaining = [i for i in remaining if i not in decided]
        cost = None if spec.cost_per_claim is None else round(spec.cost_per_claim * 1000, 6)
        out.append(
            Tier(
                name=spec.name,
                kind=spec.kind,
                model=spec.model,
                confidence=spec.confidence,
                thresholds=thresholds,
                reached=reached,
                decided=len(decided),
                cost_per_1000=cost,
            )
        )
    return CascadeSpec(
        agreement=dict(agreement),
        delta=delta,
        labels=labels,
        tiers=out,
        abstained=len(remaining),
        verifier=verifier,
        calibrator=calibrator,
    )


def judge_cost(
    spec: CascadeSpec, baseline_model: str, baseline_per_claim: float | None
) -> CascadeCost | None:
    """The judge tiers' expected cost per 1 000 claims against ``baseline_model`` alone.

    A claim pays for every judge tier it reaches (the share of labels reaching it);
    None when a judge tier has no price.
    """
    n = spec.labels.get("n")
    judges = [t for t in spec.tiers if t.kind == "judge"]
    if not judges or not isinstance(n, int | float) or not n:
        return None
    if any(t.cost_per_1000 is None for t in judges) or baseline_per_claim is None:
        return None
    per_1000 = sum(t.reached / float(n) * float(t.cost_per_1000 or 0.0) for t in judges)
    base = baseline_per_claim * 1000
    return CascadeCost(
        per_1000=round(per_1000, 6),
        baseline_model=baseline_model,
        baseline_per_1000=round(base, 6),
        ratio=round(per_1000 / base, 6) if base else None,
    )


def run_cascade(spec: CascadeSpec, item: Item) -> tuple[str, str] | None:
    """(tier name, verdict) of the first tier that decides ``item``; None: abstain."""
    for tier in spec.tiers:
        pred = predict(tier.kind, item, tier.model)
        if pred is not None and decides(tier, *pred):
            return tier.name, pred[0]
    return None


def parse_agreement(text: str) -> dict[str, float]:
    """``0.95`` (both verdicts) or ``supports=0.98,not_supports=0.90``.

    Raises:
        InputError: not a level in (0, 1), or an unknown verdict.
    """
    levels: dict[str, float] = {}
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        if len(parts) == 1 and "=" not in parts[0]:
            levels = {v: float(parts[0]) for v in VERDICTS}
        else:
            for part in parts:
                key, _, value = part.partition("=")
                if key.strip() not in VERDICTS:
                    raise InputError(
                        f"--agreement: unknown verdict {key.strip()!r} (supports, not_supports)"
                    )
                if key.strip() in levels:  # the last one silently won before (issue 29)
                    raise InputError(f"--agreement: {key.strip()} twice in {text!r}: give it once")
                levels[key.strip()] = float(value)
    except ValueError:
        raise InputError(f"--agreement: not a number in {text!r}") from None
    if set(levels) != set(VERDICTS):
        raise InputError(
            "--agreement: give one level, or one for supports and one for not_supports"
        )
    if not all(0.5 <= v < 1.0 for v in levels.values()):  # NaN fails too
        raise InputError("--agreement: each level must be in [0.5, 1)")
    return levels


def load_cascade(path: Path | str) -> CascadeSpec:
    """A cascade file, or ``default`` for the one shipped in the package."""
    if str(path) == "default":
        text = resources.files("citecal.cascade").joinpath(DEFAULT_CASCADE).read_text("utf-8")
        where = "the shipped default cascade"
    else:
        text = read_text_file(Path(path), "cascade file", MAX_CASCADE_BYTES)
        where = str(path)
    return validate_json(CascadeSpec, text, where, "a citecal cascade file")


def save_cascade(path: Path, spec: CascadeSpec) -> None:
    atomic_write_text(path, spec.model_dump_json(indent=2) + "\n")


__all__ = [
    "MAX_CASCADE_BYTES",
    "VERDICTS",
    "CascadeCost",
    "CascadeSpec",
    "Item",
    "Tier",
    "TierSpec",
    "TierThreshold",
    "calibrate_cascade",
    "decides",
    "judge_cost",
    "load_cascade",
    "parse_agreement",
    "predict",
    "run_cascade",
    "save_cascade",
]
