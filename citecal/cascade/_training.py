"""Labelled rows for the cascade: from evaluation rows or pulled annotations, and folds.

Training data is one :class:`Row` per labelled, structurally valid citation: the
verifier's features, the rule check's own decision, people's support label and
the group it belongs to (a package for the ground truth, a report for pulled
annotations). Anything learnt or tuned is scored out of sample: probabilities
for threshold selection come from leave-one-group-out fits (README "The cascade").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from citecal.cascade._calibration import Calibrator, disagreement_threshold, fit_calibrator
from citecal.cascade._cascade import (
    VERDICTS,
    CascadeSpec,
    Item,
    TierSpec,
    calibrate_cascade,
)
from citecal.cascade._features import FeatureInput, feature_matrix
from citecal.cascade._verifier import DEFAULT_C, LocalVerifier, train_verifier
from citecal.models import CitationResult

LOCAL_TIERS: tuple[TierSpec, ...] = (TierSpec("rules"), TierSpec("local"))


@dataclass(frozen=True)
class Row:
    """One labelled citation as training data."""

    group: str
    features: FeatureInput
    rule: str | None
    human: bool
    judges: tuple[tuple[str, float], ...] = ()
    judge_verdicts: tuple[tuple[str, str, float], ...] = ()
    """(model, verdict side, confidence_value) per judge (README "Judge confidence")."""
    origin: str = "natural"
    """natural (reports as users bring them, and every pulled annotation) or planted: the
    calibrator is fitted on natural rows only (DESIGN "Routing and the cascade")."""

    def item(self, local: float | None = None, *, with_rule: bool = True) -> Item:
        """The row as the cascade's threshold search sees it, with the verifier's ``local``."""
        return Item(
            rule=self.rule if with_rule else None,
            local=local,
            judges=dict(self.judges),
            human=self.human,
            judge_verdicts={m: (v, c) for m, v, c in self.judge_verdicts},
        )


def rule_of(row: CitationResult) -> str | None:
    """The rule check's decided verdict in an evaluation row."""
    if row.method == "extractive" and row.verdict in VERDICTS:
        return row.verdict
    return None


def input_of(
    row: CitationResult, context_before: str, file_lines: tuple[str, ...] | None = None
) -> FeatureInput:
    """Features input of an evaluation row (``eval`` without a judge)."""
    return FeatureInput(
        claim=row.claim,
        code=row.cited_code or "",
        context_before=context_before,
        mode=row.mode,
        rule_verdict=rule_of(row) or "unverified",
        matched=len(row.matched_terms),
        missing=len(row.missing_terms),
        hint=row.hint is not None,
        file_lines=file_lines,
        start_line=row.start_line,
        end_line=row.end_line,
    )


def out_of_fold(
    rows: Sequence[Row], c: float = DEFAULT_C, x: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """Each row's support probability from a verifier fit without its group.

    ``x``: the rows' feature matrix when the caller has it already.
    """
    if x is None:
        x = feature_matrix([r.features for r in rows])
    y = np.asarray([r.human for r in rows], dtype=bool)
    groups = np.asarray([r.group for r in rows])
    probs = np.full(len(rows), np.nan)
    for g in sorted(set(groups.tolist())):
        test = groups == g
        train = ~test
        if train.sum() < 10 or len(set(y[train].tolist())) < 2:
            continue
        probs[test] = train_verifier(x[train], y[train], c=c).predict(x[test])
    return probs


def calibrate_verifier(oof: NDArray[np.float64], y: NDArray[np.bool_]) -> Calibrator | None:
    """The calibrator of out-of-fold probabilities, with the disagreement cut; None when the
    labels cannot support one (fewer than 10 predictions of both kinds)."""
    try:
        calibrator = fit_calibrator(oof, y)
    except ValueError:
        return None
    keep = np.isfinite(oof)
    calibrated = calibrator(oof[keep])
    return calibrator.model_copy(
        update={"disagree_below": disagreement_threshold(calibrated, y[keep])}
    )


def fit_cascade(
    rows: Sequence[Row],
    agreement: dict[str, float],
    delta: float,
    labels: dict[str, object],
    tiers: Sequence[TierSpec] = LOCAL_TIERS,
    c: float = DEFAULT_C,
    thresholds_on: frozenset[str] | None = None,
) -> CascadeSpec:
    """Train the verifier on every row, set thresholds on out-of-fold probabilities.

    ``thresholds_on``: the origins whose rows the thresholds are set on (None: all).
    The guarantee holds for claims exchangeable with those rows: users bring natural
    reports, so the shipped cascade is calibrated on natural labels only, while planted
    faults still teach the verifier (docs/explanation/cascade.md).
    """
    x = feature_matrix([r.features for r in rows])
    y = np.asarray([r.human for r in rows], dtype=bool)
    verifier: LocalVerifier = train_verifier(
        x,
        y,
        c=c,
        meta={
            "n": len(rows),
            "supported": int(y.sum()),
            "source": labels.get("source"),
            "c": c,
        },
    )
    oof = out_of_fold(rows, c, x)
    natural = np.asarray([r.origin == "natural" for r in rows], dtype=bool)
    calibrator = calibrate_verifier(oof[natural], y[natural])
    items = [
        r.item(float(p) if np.isfinite(p) else None)
        for r, p in zip(rows, oof, strict=True)
        if thresholds_on is None or r.origin in thresholds_on
    ]
    about: dict[str, object] = {**labels, "n": len(items)}
    if thresholds_on is not None:
        about["thresholds_on"] = sorted(thresholds_on)
        about["trained_on"] = len(rows)
    return calibrate_cascade(items, tiers, agreement, delta, about, verifier, calibrator)


__all__ = [
    "LOCAL_TIERS",
    "Row",
    "calibrate_verifier",
    "fit_cascade",
    "input_of",
    "out_of_fold",
    "rule_of",
]
