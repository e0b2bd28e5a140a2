"""Calibrated judge confidence: expected calibration error and a recalibration map.

A judge score of 0.8 should mean "8 in 10 such citations support their claim,
as people see it". The reliability diagram (``Metrics.reliability``) shows
whether it does; the expected calibration error (ECE) sums the gaps. A
recalibration map (isotonic regression or Platt scaling, scikit-learn) fitted
on the labels turns raw scores into ones that mean what they say; it is
evaluated out of sample by cross-validation grouped by report (a report's
citations share an author and a judge's habits, so they never straddle a
fold), saved as JSON, and applied by ``citecal eval --calibration FILE``
(README "Calibrated confidence").
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from citecal._io import MAX_JSON_BYTES, read_text_file
from citecal._json import JSONInputError, loads
from citecal.errors import InputError
from citecal.models import SCHEMA_VERSION, EvalResult, support_score

MapMethod = Literal["isotonic", "platt"]
FloatArray = NDArray[np.float64]

ECE_BINS = 5
"""Equal-width bins, the same as the reliability diagram's (width 0.2)."""

_EPS = 1e-6


def expected_calibration_error(
    scores: FloatArray, outcomes: FloatArray, n_bins: int = ECE_BINS
) -> float | None:
    """Σ_b (n_b / n)·|mean score_b − share supported_b| over equal-width score bins.

    None for no scores. The last bin includes 1.0 (as in the reliability diagram).
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.float64)
    if s.size == 0:
        return None
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    idx = np.clip(np.digitize(s, edges[1:-1], right=False), 0, n_bins - 1)
    counts = np.bincount(idx, minlength=n_bins).astype(np.float64)
    mean_s = np.bincount(idx, weights=s, minlength=n_bins)
    mean_y = np.bincount(idx, weights=y, minlength=n_bins)
    used = counts > 0
    gaps = np.abs(mean_s[used] / counts[used] - mean_y[used] / counts[used])
    return float((counts[used] * gaps).sum() / s.size)


class CrossValidation(BaseModel):
    """Out-of-sample figures of a map: each fold's scores mapped by a map fitted without it."""

    model_config = ConfigDict(extra="forbid")

    folds: int
    grouped_by: str = Field(description="Folds never split this unit (report).")
    ece_before: float | None
    ece_after: float | None
    brier_before: float | None
    brier_after: float | None


class RecalibrationMap(BaseModel):
    """A monotone map from the judge's support score to the share people call support.

    A map read from a file is checked before use (README "Calibrated confidence"): an
    isotonic map has as many values as knots (at least one), knots in [0, 1] in
    increasing order and values in [0, 1] that never decrease; a Platt map has a
    finite slope and intercept. NaN and infinity are refused everywhere, so
    ``apply`` always gives a score in [0, 1].
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    schema_version: int = SCHEMA_VERSION
    method: MapMethod
    x: list[float] = Field(
        default_factory=list, description="Isotonic: score knots (interpolated linearly)."
    )
    y: list[float] = Field(default_factory=list, description="Isotonic: mapped value per knot.")
    a: float | None = Field(None, description="Platt: slope on logit(score).")
    b: float | None = Field(None, description="Platt: intercept.")
    n_fitted: int = Field(description="(record, annotator) pairs the map was fitted on.")
    source: str = Field("", description="Annotation table it was fitted on.")
    cv: CrossValidation | None = None

    @model_validator(mode="after")
    def _usable(self) -> RecalibrationMap:
        if self.method == "platt":
            if self.a is None or self.b is None:
                raise ValueError("a Platt map needs its slope a and intercept b")
            return self
        if not self.x or len(self.x) != len(self.y):
            raise ValueError(
                f"an isotonic map needs as many values y as knots x, at least one "
                f"(got {len(self.x)} knots, {len(self.y)} values)"
            )
        if any(not 0.0 <= v <= 1.0 for v in (*self.x, *self.y)):
            raise ValueError("an isotonic map's knots and values must lie in [0, 1]")
        if any(b <= a for a, b in zip(self.x, self.x[1:], strict=False)):
            raise ValueError("an isotonic map's knots x must increase")
        if any(b < a for a, b in zip(self.y, self.y[1:], strict=False)):
            raise ValueError("an isotonic map's values y must not decrease (it is monotone)")
        return self

    def apply(self, scores: FloatArray) -> FloatArray:
        """Mapped scores in [0, 1] (vectorised)."""
        s = np.clip(np.asarray(scores, dtype=np.float64), 0.0, 1.0)
        if self.method == "isotonic":
            return np.asarray(np.interp(s, self.x, self.y), dtype=np.float64)
        logit = np.log(np.clip(s, _EPS, 1 - _EPS) / np.clip(1 - s, _EPS, 1.0))
        return np.asarray(1.0 / (1.0 + np.exp(-((self.a or 0.0) * logit + (self.b or 0.0)))))


def _logit(s: FloatArray) -> FloatArray:
    c = np.clip(s, _EPS, 1 - _EPS)
    return np.asarray(np.log(c / (1 - c)))


def fit_map(
    scores: FloatArray, outcomes: FloatArray, method: MapMethod = "isotonic", source: str = ""
) -> RecalibrationMap:
    """Fit a map on (score, human support) pairs.

    Raises:
        InputError: fewer than 10 pairs, or people gave one answer only.
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.float64)
    if s.size < 10:
        raise InputError(f"a recalibration map needs at least 10 scored pairs, got {s.size}")
    if np.unique(y).size < 2:
        raise InputError("a recalibration map needs both supported and unsupported labels")
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(s, y)
        return RecalibrationMap(
            method="isotonic",
            x=[float(v) for v in iso.X_thresholds_],
            y=[float(v) for v in iso.y_thresholds_],
            n_fitted=int(s.size),
            source=source,
        )
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e6).fit(_logit(s)[:, None], y.astype(int))
    return RecalibrationMap(
        method="platt",
        a=float(lr.coef_[0, 0]),
        b=float(lr.intercept_[0]),
        n_fitted=int(s.size),
        source=source,
    )


def cross_validate(
    scores: FloatArray,
    outcomes: FloatArray,
    groups: NDArray[np.object_],
    method: MapMethod = "isotonic",
    folds: int = 5,
) -> CrossValidation | None:
    """ECE and Brier of the raw scores and of out-of-fold mapped scores (GroupKFold by report).

    None when there are fewer than 2 groups (no fold can be held out).
    """
    from sklearn.model_selection import GroupKFold

    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.float64)
    n_groups = int(np.unique(np.asarray(groups, dtype=str)).size)
    k = min(folds, n_groups)
    if k < 2:
        return None
    mapped = np.empty_like(s)
    for train, test in GroupKFold(n_splits=k).split(s, y, groups):
        if np.unique(y[train]).size < 2 or train.size < 10:
            mapped[test] = y[train].mean() if train.size else s[test]
            continue
        mapped[test] = fit_map(s[train], y[train], method).apply(s[test])
    return CrossValidation(
        folds=k,
        grouped_by="report",
        ece_before=expected_calibration_error(s, y),
        ece_after=expected_calibration_error(mapped, y),
        brier_before=float(np.mean((s - y) ** 2)),
        brier_after=float(np.mean((mapped - y) ** 2)),
    )


def read_map(path: Path | str) -> RecalibrationMap:
    """A map saved by ``citecal calibrate --save-map``.

    Raises:
        InputError: missing, unreadable or not a recalibration map.
    """
    p = Path(path)
    text = read_text_file(p, "calibration map", MAX_JSON_BYTES)  # a regular file, bounded
    what = "a `citecal calibrate --save-map` file"
    try:
        data = loads(text, str(p), what)  # README "Security": no NaN, no 5 000-digit integer
        return RecalibrationMap.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(part) for part in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        why = f"{where}: {msg}" if where else msg
        raise InputError(f"{p} is not a `citecal calibrate --save-map` file: {why[:200]}") from None
    except JSONInputError as exc:
        raise InputError(f"{p} is not {what}: {exc.reason}") from None


def apply_to_eval(result: EvalResult, mapping: RecalibrationMap, name: str) -> EvalResult:
    """``result`` with every decided citation's score recalibrated (``raw_score`` keeps the old).

    The input score is the judge's support score (its own ``score``, else the
    README "Calibration" verdict/confidence mapping), the same number the map was fitted
    on; verdicts are unchanged, so precision figures are too.
    """

    def fix(c: object) -> object:
        from citecal.models import CitationResult

        assert isinstance(c, CitationResult)
        if c.verdict is None or c.verdict == "unverified":
            return c
        raw = support_score(c.verdict, c.confidence or "medium", c.score)
        if raw is None:
            return c
        new = float(mapping.apply(np.array([raw]))[0])
        return c.model_copy(update={"score": new, "raw_score": raw})

    return result.model_copy(
        update={
            "citations": [fix(c) for c in result.citations],
            "failed_citations": [fix(c) for c in result.failed_citations],
            "calibration": name,
        }
    )


__all__ = [
    "ECE_BINS",
    "CrossValidation",
    "MapMethod",
    "RecalibrationMap",
    "apply_to_eval",
    "cross_validate",
    "expected_calibration_error",
    "fit_map",
    "read_map",
]
