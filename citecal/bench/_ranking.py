"""How well ``p_supports`` ranks and how honest its bands are, out of sample.

docs/explanation/cascade.md, "The review list": ``bench groundtruth --folds
package`` scores each held-out package with a verifier and calibrator that
never saw it; these figures read those held-out probabilities against
people's labels. ROC AUC (does a lower probability mean unsupported more
often?); the share unsupported among the 10% and 20% of valid citations ranked
most doubtful (what a reviewer reading the list from the top finds); and, per
risk band, the share people found unsupported next to what the summary told
them to expect (the band's share in the training folds' calibration labels)
and next to the mean predicted ``1 − p_supports``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field


@dataclass(frozen=True, slots=True)
class Ranked:
    """One held-out valid citation: its calibrated probability and people's label."""

    p_supports: float
    human: bool
    band: str
    expected: float | None
    """The unsupported share the summary states for its band (training folds' labels)."""


class BandReliability(BaseModel):
    """Expected against observed unsupported share in one risk band."""

    model_config = ConfigDict(extra="forbid")

    name: str
    n: int
    predicted_unsupported: float | None = Field(description="Mean of 1 - p_supports.")
    expected_unsupported: float | None = Field(
        description="What the summary states: the band's share in the calibration labels."
    )
    observed_unsupported: float | None = Field(description="Share people found unsupported.")


class RankingFigures(BaseModel):
    """The review list's figures on one slice of held-out citations."""

    model_config = ConfigDict(extra="forbid")

    n: int
    unsupported: int
    auc: float | None = Field(description="ROC AUC of p_supports for 'supported'.")
    top10_unsupported: float | None = Field(
        description="Unsupported share of the 10% ranked most doubtful."
    )
    top20_unsupported: float | None = Field(
        description="Unsupported share of the 20% ranked most doubtful."
    )
    reliability: list[BandReliability]


def _r(value: float | np.floating[Any] | None) -> float | None:
    return None if value is None else round(float(value), 4)


def top_share(items: Sequence[Ranked], fraction: float) -> float | None:
    """Unsupported share of the ``fraction`` of ``items`` with the lowest p_supports."""
    k = round(len(items) * fraction)
    if k == 0:
        return None
    order = sorted(items, key=lambda r: r.p_supports)[:k]
    return sum(not r.human for r in order) / k


def ranking_figures(items: Sequence[Ranked], bands: Sequence[str]) -> RankingFigures:
    """AUC, top-10/20% precision and the reliability table over ``items``."""
    y = np.asarray([r.human for r in items], dtype=bool)
    p = np.asarray([r.p_supports for r in items], dtype=float)
    auc = None
    if y.any() and not y.all():
        from sklearn.metrics import roc_auc_score

        auc = float(roc_auc_score(y, p))
    rel = []
    for name in bands:
        part = [r for r in items if r.band == name]
        expected = [r.expected for r in part if r.expected is not None]
        rel.append(
            BandReliability(
                name=name,
                n=len(part),
                predicted_unsupported=_r(np.mean([1 - r.p_supports for r in part]))
                if part
                else None,
                expected_unsupported=_r(np.mean(expected)) if expected else None,
                observed_unsupported=_r(np.mean([not r.human for r in part])) if part else None,
            )
        )
    return RankingFigures(
        n=len(items),
        unsupported=int((~y).sum()),
        auc=_r(auc),
        top10_unsupported=_r(top_share(items, 0.1)),
        top20_unsupported=_r(top_share(items, 0.2)),
        reliability=rel,
    )


__all__ = ["BandReliability", "Ranked", "RankingFigures", "ranking_figures", "top_share"]
