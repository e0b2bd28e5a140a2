"""The local verifier's probability, calibrated on people's labels (docs/explanation/cascade.md).

The verifier ranks well, but its raw probability is a logistic fit on every
label at once: in sample, overconfident. The calibrator maps it to the share of
citations people found supported, fitted on *out-of-fold* predictions (each
label scored by a verifier that never saw its group), so ``p_supports`` means
"of citations scored like this one in the calibration labels, this share was
supported". Platt scaling (a logistic curve on the logit, two numbers) keeps
the ranking intact and is the default; isotonic regression (a monotone step
curve, stored as its knots) is there for larger label sets.

Risk bands put the calibrated probability into words: per band, the share of
the calibration labels people found unsupported — an expectation from those
labels, never a guarantee. The calibration labels' out-of-fold scores are
stored too, so a report whose scores look unlike them can say so (the shift
check, :func:`shift_check`). Everything here is numbers in the cascade file:
loading it runs no code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import BaseModel, ConfigDict, Field, model_validator

CalibratorKind = Literal["platt", "isotonic"]

BAND_EDGES: tuple[float, ...] = (0.0, 0.35, 0.65, 0.85, 1.0)
"""Risk bands on the calibrated ``p_supports``, riskiest first: [0, .35), [.35, .65), …"""
BAND_NAMES: tuple[str, ...] = ("high", "elevated", "moderate", "low")

SHIFT_LEVEL = 0.01
"""p-value under which a report's scores are called unlike the calibration labels'."""
SHIFT_MIN_CITATIONS = 20
"""Fewer valid citations than this: too few for the shift check to say anything."""

_EPS = 1e-6


def _logit(p: NDArray[np.float64]) -> NDArray[np.float64]:
    q = np.clip(p, _EPS, 1 - _EPS)
    out: NDArray[np.float64] = np.log(q / (1 - q))
    return out


class RiskBand(BaseModel):
    """One band of calibrated ``p_supports`` and what the calibration labels showed in it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="high, elevated, moderate or low (risk of being unsupported).")
    lower: float = Field(description="p_supports >= lower ...")
    upper: float = Field(description="... and < upper (<= 1 for the last band).")
    labels: int = Field(description="Calibration labels whose calibrated score fell here.")
    unsupported: int = Field(description="Of those, people found unsupported.")
    share: float | None = Field(description="unsupported / labels; null without labels.")


class Calibrator(BaseModel):
    """Raw verifier probability → calibrated ``p_supports`` (stored in the cascade file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: CalibratorKind = "platt"
    a: float = Field(1.0, description="Platt: slope on the logit of the raw probability.")
    b: float = Field(0.0, description="Platt: intercept.")
    knots_x: list[float] = Field(default_factory=list, description="Isotonic: raw knots.")
    knots_y: list[float] = Field(default_factory=list, description="Isotonic: calibrated.")
    n: int = Field(0, description="Out-of-fold predictions it was fitted on.")
    bands: list[RiskBand] = Field(default_factory=list)
    scores: list[float] = Field(
        default_factory=list,
        description="The calibration labels' calibrated out-of-fold scores, sorted "
        "(what a report's scores are compared with).",
    )
    disagree_below: float | None = Field(
        None,
        description="A judge's supports with p_supports below this goes to a person "
        "(judge and verifier disagree); null: never.",
    )

    @model_validator(mode="after")
    def _check(self) -> Calibrator:
        values = [self.a, self.b, *self.knots_x, *self.knots_y, *self.scores]
        if not all(np.isfinite(values)):
            raise ValueError("calibrator numbers must be finite")
        if len(self.knots_x) != len(self.knots_y):
            raise ValueError("knots_x and knots_y must have the same length")
        if self.kind == "isotonic" and len(self.knots_x) < 2:
            raise ValueError("an isotonic calibrator needs at least two knots")
        if any(b < a for a, b in zip(self.knots_x, self.knots_x[1:], strict=False)):
            raise ValueError("knots_x must be sorted")
        if self.disagree_below is not None and not 0.0 <= self.disagree_below <= 1.0:
            raise ValueError("disagree_below must be in [0, 1]")
        return self

    def __call__(self, raw: ArrayLike) -> NDArray[np.float64]:
        """Calibrated probabilities for raw verifier probabilities."""
        p = np.asarray(raw, dtype=np.float64)
        if self.kind == "isotonic":
            out: NDArray[np.float64] = np.interp(p, self.knots_x, self.knots_y)
            return out
        z = self.a * _logit(p) + self.b
        out = 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))
        return out

    def band(self, p: float) -> str:
        """The band name of a calibrated probability."""
        return band_of(p, self.bands)


def band_of(p: float, bands: Sequence[RiskBand]) -> str:
    for band in bands:
        if p < band.upper:
            return band.name
    return bands[-1].name if bands else ""


def fit_calibrator(
    raw: ArrayLike, supported: ArrayLike, kind: CalibratorKind = "platt"
) -> Calibrator:
    """Fit on out-of-fold raw probabilities and people's labels; bands and scores included.

    Predictions that are not finite (a group too small to hold out) are left out.
    """
    p = np.asarray(raw, dtype=np.float64)
    y = np.asarray(supported, dtype=bool)
    keep = np.isfinite(p)
    p, y = p[keep], y[keep]
    if len(p) < 10 or y.all() or not y.any():
        raise ValueError("calibration needs at least 10 predictions of both kinds")
    if kind == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p, y)
        base = Calibrator(
            kind="isotonic",
            knots_x=[float(v) for v in iso.X_thresholds_],
            knots_y=[float(v) for v in iso.y_thresholds_],
            n=len(p),
        )
    else:
        from sklearn.linear_model import LogisticRegression

        # Unpenalised: two numbers on hundreds of labels need no shrinking.
        lr = LogisticRegression(C=1e6, max_iter=1000).fit(_logit(p).reshape(-1, 1), y)
        base = Calibrator(
            kind="platt", a=float(lr.coef_[0][0]), b=float(lr.intercept_[0]), n=len(p)
        )
    cal = base(p)
    return base.model_copy(
        update={
            "bands": risk_bands(cal, y),
            "scores": sorted(round(float(v), 4) for v in cal),
        }
    )


def risk_bands(p_supports: ArrayLike, supported: ArrayLike) -> list[RiskBand]:
    """Per band of :data:`BAND_EDGES`: the labels in it and the share people found unsupported."""
    p = np.asarray(p_supports, dtype=np.float64)
    y = np.asarray(supported, dtype=bool)
    out: list[RiskBand] = []
    for k, name in enumerate(BAND_NAMES):
        lo, hi = BAND_EDGES[k], BAND_EDGES[k + 1]
        last = k == len(BAND_NAMES) - 1
        inside = (p >= lo) & ((p <= hi) if last else (p < hi))
        n = int(inside.sum())
        bad = int((inside & ~y).sum())
        out.append(
            RiskBand(
                name=name,
                lower=lo,
                upper=hi,
                labels=n,
                unsupported=bad,
                share=round(bad / n, 4) if n else None,
            )
        )
    return out


def risk_ranks(p_supports: Sequence[float | None]) -> list[int | None]:
    """1 for the lowest probability (most likely unsupported), ties in input order."""
    order = sorted(
        (i for i, p in enumerate(p_supports) if p is not None),
        key=lambda i: (p_supports[i], i),
    )
    ranks: list[int | None] = [None] * len(p_supports)
    for rank, i in enumerate(order, 1):
        ranks[i] = rank
    return ranks


def shift_check(
    report_scores: Sequence[float], calibration_scores: Sequence[float]
) -> float | None:
    """Two-sample Kolmogorov–Smirnov p-value of a report's scores against the calibration labels'.

    A small p-value says the report's citations are scored unlike the ones the
    thresholds and bands were set on: the guarantee and the expectations do not
    carry over (docs/explanation/cascade.md). The statistic is the largest gap
    between the two empirical distributions; the p-value is Smirnov's asymptotic
    one, ``kolmogorov(sqrt(n m / (n + m)) D)`` (``scipy.special``: ``scipy.stats``
    would double eval's start-up). None when either side is too small.
    """
    if len(report_scores) < SHIFT_MIN_CITATIONS or len(calibration_scores) < SHIFT_MIN_CITATIONS:
        return None
    from scipy.special import kolmogorov

    a = np.sort(np.asarray(report_scores, dtype=np.float64))
    b = np.sort(np.asarray(calibration_scores, dtype=np.float64))
    both = np.concatenate([a, b])
    gap = np.abs(
        np.searchsorted(a, both, side="right") / len(a)
        - np.searchsorted(b, both, side="right") / len(b)
    )
    n, m = len(a), len(b)
    return float(min(1.0, kolmogorov(np.sqrt(n * m / (n + m)) * float(gap.max()))))


def disagreement_threshold(
    p_supports: ArrayLike, supported: ArrayLike, max_supported: float = 0.1, min_labels: int = 20
) -> float | None:
    """Where the verifier "strongly doubts": the highest cut below which people rarely agree.

    The largest value ``t`` of a grid (0.05, 0.10, …, 0.50) such that, of the
    calibration labels with ``p_supports < t``, at most ``max_supported`` were
    supported by people (and there are at least ``min_labels`` of them). A
    judge's ``supports`` below ``t`` contradicts what the labels say about such
    citations, so a person reads it (issue 29 1(c); docs/explanation/routing.md).
    """
    p = np.asarray(p_supports, dtype=np.float64)
    y = np.asarray(supported, dtype=bool)
    best: float | None = None
    for t in np.round(np.arange(0.05, 0.501, 0.05), 2):
        below = p < t
        n = int(below.sum())
        if n >= min_labels and (y & below).sum() <= max_supported * n:
            best = float(t)
    return best


__all__ = [
    "BAND_EDGES",
    "BAND_NAMES",
    "Calibrator",
    "RiskBand",
    "band_of",
    "disagreement_threshold",
    "fit_calibrator",
    "risk_bands",
    "risk_ranks",
    "shift_check",
]
