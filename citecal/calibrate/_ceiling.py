"""Human-human reliability and the human ceiling.

A judge cannot be expected to agree with annotators more often than they agree
with each other. The ceiling is measured leave-one-annotator-out: each
annotation is compared with the consensus of the *other* annotators of the
same record, and the judge is compared with that same held-out consensus, so
both figures are on the same records and the same reference.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import krippendorff
import numpy as np
import pandas as pd

from citecal.calibrate._table import id_codes


@dataclass(frozen=True, slots=True)
class HumanReliability:
    """Human-human figures for one slice (``None`` with a note when undefined)."""

    alpha: float | None
    exact: float | None
    within1: float | None
    ceiling: float | None
    judge_ceiling: float | None
    ceiling_pairs: int
    notes: tuple[str, ...]


def krippendorff_alpha(
    df: pd.DataFrame,
    *,
    level: str = "ordinal",
    value_domain: list[int] | None = None,
    value: str = "human_score",
) -> tuple[float | None, str | None]:
    """Krippendorff's α between annotators of a long table, or a reason for ``None``.

    The long (record, annotator, score) table is pivoted to the coders × units
    matrix the ``krippendorff`` package expects; a missing cell is a unit the
    annotator did not score. Units with a single score are pairable with
    nothing and drop out (Krippendorff 2011, step 1), as the package does.

    Args:
        df: rows with ``record_id``, ``annotator`` and ``value``.
        level: "nominal", "ordinal", "interval" or "ratio".
        value_domain: the ordered scale (ordinal α needs the categories no one used too).
        value: the score column.
    """
    records, _ = id_codes(df, "record_id")
    multi = df[(np.bincount(records) >= 2)[records]]
    if multi.empty:
        return None, "krippendorff_alpha: no record has two or more annotators"
    if multi[value].nunique() < 2:
        return None, "krippendorff_alpha: every human score is identical (no variation to explain)"
    # The annotators × records matrix, both in sorted order (what DataFrame.pivot gives).
    rows, n_rows = id_codes(multi, "annotator")
    cols, n_cols = id_codes(multi, "record_id")
    data = np.full((n_rows, n_cols), np.nan)
    data[rows, cols] = multi[value].to_numpy(dtype=np.float64)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            alpha = float(
                krippendorff.alpha(
                    reliability_data=data,
                    level_of_measurement=level,  # type: ignore[arg-type]
                    value_domain=value_domain,
                )
            )
        except (ValueError, ZeroDivisionError) as exc:
            return None, f"krippendorff_alpha: undefined ({exc})"
    if not np.isfinite(alpha):
        return None, "krippendorff_alpha: undefined (no expected disagreement)"
    return alpha, None


def pairwise_human_agreement(df: pd.DataFrame) -> tuple[float | None, float | None]:
    """Share of annotator pairs on the same record with equal / within-1 scores.

    Counted from per-record score histograms (c₀…c₃): equal pairs are
    Σ cₛ(cₛ−1)/2, adjacent pairs Σ cₛ·cₛ₊₁, out of n(n−1)/2 pairs per record.
    """
    codes, n_records = id_codes(df, "record_id")
    scores = df["human_score"].to_numpy(dtype=np.int64)
    flat = np.bincount(codes * 4 + scores, minlength=n_records * 4)
    c = flat.reshape(n_records, 4).astype(np.float64)
    n = c.sum(axis=1)
    pairs = float((n * (n - 1) / 2).sum())
    if pairs == 0:
        return None, None
    equal = float((c * (c - 1) / 2).sum())
    adjacent = float((c[:, :-1] * c[:, 1:]).sum())
    return equal / pairs, (equal + adjacent) / pairs


def leave_one_out(df: pd.DataFrame) -> tuple[float | None, float | None, int, int]:
    """Human ceiling and the judge's agreement with the same held-out consensus.

    For every annotation on a record with ≥ 2 annotators and a binary judge
    verdict, the reference is the majority "supports" vote of the *other*
    annotators; ties (possible with an even number of others) are left out.

    Returns:
        (ceiling, judge agreement, pairs used, tied pairs left out).
    """
    rows = df[df["judge_pos"].notna()]
    records, _ = id_codes(rows, "record_id")
    own = rows["human_pos"].to_numpy(dtype=np.float64)
    n = np.bincount(records)[records].astype(np.float64)
    total = np.bincount(records, weights=own)[records]
    keep = n >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        share = (total - own) / (n - 1)
    tied = keep & (share == 0.5)
    use = keep & ~tied
    if not use.any():
        return None, None, 0, int(tied.sum())
    reference = share[use] > 0.5
    human = float(np.mean(own[use].astype(bool) == reference))
    judge = float(np.mean(rows["judge_pos"].to_numpy()[use].astype(bool) == reference))
    return human, judge, int(use.sum()), int(tied.sum())


def human_reliability(df: pd.DataFrame) -> HumanReliability:
    """All human-human figures of one slice of the prepared table."""
    notes: list[str] = []
    max_ann = int(np.bincount(id_codes(df, "record_id")[0]).max()) if len(df) else 0
    if max_ann < 2:
        notes.append("human reliability and ceiling: one annotator per record, nothing to compare")
        return HumanReliability(None, None, None, None, None, 0, tuple(notes))
    alpha, why = krippendorff_alpha(df, level="ordinal", value_domain=[0, 1, 2, 3])
    if why:
        notes.append(why)
    exact, within1 = pairwise_human_agreement(df)
    ceiling, judge, used, tied = leave_one_out(df)
    if ceiling is None:
        notes.append("human_ceiling: no record with ≥ 2 annotators and a judge verdict")
    if tied:
        notes.append(
            f"human_ceiling: {tied} annotation(s) left out because the other annotators "
            "were split evenly"
        )
    return HumanReliability(alpha, exact, within1, ceiling, judge, used, tuple(notes))
