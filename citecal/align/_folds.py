"""K folds by report: every record of a report is scored in exactly one fold.

Claims of one report share an author, a repository and often one judge
mistake, so a candidate prompt built from some of a report's records and
scored on the others would look better than it is (README "Aligning the
judge"). Reports, not records, are dealt to folds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from citecal.errors import InputError


@dataclass(frozen=True, slots=True)
class Fold:
    """One fold: the reports scored in it and the reports a candidate may learn from."""

    index: int
    scoring_reports: tuple[str, ...]
    training_reports: tuple[str, ...]


def make_folds(reports: list[str] | pd.Series, k: int, seed: int = 0) -> list[Fold]:
    """Deal the distinct reports to ``min(k, n_reports)`` folds after a seeded shuffle.

    Raises:
        InputError: fewer than 2 reports or ``k`` < 2 (nothing could be held out).
    """
    distinct = sorted({str(r) for r in reports})
    if k < 2:
        raise InputError(f"--folds {k}: at least 2 folds are needed to score out of sample")
    if len(distinct) < 2:
        raise InputError(
            f"the annotations hold {len(distinct)} report(s): folds by report need at least 2"
        )
    k = min(k, len(distinct))
    order = np.random.default_rng(seed).permutation(len(distinct))
    shuffled = [distinct[i] for i in order]
    folds = []
    for i in range(k):
        scoring = tuple(sorted(shuffled[i::k]))
        training = tuple(r for r in distinct if r not in set(scoring))
        folds.append(Fold(i, scoring, training))
    return folds
