"""Column-wise checks of an annotation table from any tool (README "Annotation table").

``calibrate`` and ``estimate`` read tables of a million rows, so these check
whole columns at once instead of building an :class:`AnnotationRow` per
row; each failure is one :class:`~citecal.errors.InputError` naming the
first bad row (1-based) and what was expected.
"""

from __future__ import annotations

from typing import get_args

import numpy as np
import pandas as pd

from citecal.errors import InputError
from citecal.models import Confidence, ConfidenceSource, LineRangeAnswer, VerdictLabel

REQUIRED_COLUMNS: tuple[str, ...] = ("record_id", "report_id", "annotator", "human_score")
"""Columns without which no figure can be computed."""

JUDGE_ANSWER_COLUMNS: tuple[str, ...] = ("llm_verdict", "llm_score")
"""At least one of these must be present: the judge's answer."""

VOCABULARIES: dict[str, frozenset[str]] = {
    "llm_verdict": frozenset(get_args(VerdictLabel)),
    "extractive_verdict": frozenset(get_args(VerdictLabel)),
    "llm_confidence": frozenset(get_args(Confidence)),
    "line_range": frozenset(get_args(LineRangeAnswer)),
    "confidence_source": frozenset(get_args(ConfidenceSource)),
}
"""Closed vocabularies of the table's text columns (empty is always allowed)."""


def require_columns(raw: pd.DataFrame, columns: tuple[str, ...] = REQUIRED_COLUMNS) -> None:
    """InputError when ``raw`` is empty or lacks one of ``columns``."""
    if raw.empty:
        raise InputError("annotation table is empty")
    missing = [c for c in columns if c not in raw.columns]
    if missing:
        raise InputError(
            f"annotation table lacks column(s) {', '.join(missing)} "
            f"(has: {', '.join(map(str, raw.columns[:12]))})"
        )


def require_judge_answer(raw: pd.DataFrame) -> None:
    """InputError when the table has neither ``llm_verdict`` nor ``llm_score``."""
    if not any(c in raw.columns for c in JUDGE_ANSWER_COLUMNS):
        raise InputError("annotation table has no judge answer: needs llm_verdict or llm_score")


def human_scores(df: pd.DataFrame) -> pd.Series:
    """``human_score`` as integers 0–3; InputError naming the first bad row."""
    scores = pd.to_numeric(df["human_score"], errors="coerce")
    bad = scores.isna() | (scores < 0) | (scores > 3) | (scores != np.floor(scores))
    if bad.any():
        row = int(np.argmax(bad.to_numpy()))
        raise InputError(
            f"row {row + 1}: human_score must be an integer 0–3, got {df['human_score'][row]!r}"
        )
    return scores.astype(int)


def check_duplicates(df: pd.DataFrame, keys: list[str]) -> None:
    """One row per (record, annotator) (``keys``: those columns or their codes)."""
    dup = df.duplicated(keys, keep=False)
    if dup.any():
        row = int(np.argmax(dup.to_numpy()))
        raise InputError(
            f"duplicate annotation: record {df['record_id'][row]!r} scored twice by "
            f"annotator {df['annotator'][row]!r}"
        )


def check_vocabularies(df: pd.DataFrame) -> None:
    """Every value of a :data:`VOCABULARIES` column is in its vocabulary (or missing)."""
    for column, allowed in VOCABULARIES.items():
        if column not in df:
            continue
        values = df[column].dropna()
        bad = values[~values.isin(allowed)]
        if not bad.empty:
            row = int(bad.index[0])  # type: ignore[call-overload]
            raise InputError(
                f"row {row + 1}: {column} must be one of {', '.join(sorted(allowed))} "
                f"(or empty), got {bad.iloc[0]!r}"
            )


def llm_scores(df: pd.DataFrame, blank: pd.Series, column: str = "llm_score") -> pd.Series:
    """``column`` (``llm_score``, ``confidence_value``) as floats in [0, 1] or NaN.

    ``blank`` marks rows whose text is empty. "0.8" is fine, "high" is not.
    """
    scores = pd.to_numeric(df[column], errors="coerce")
    if not pd.api.types.is_numeric_dtype(df[column]):
        not_numeric = ~blank & scores.isna()
    else:
        not_numeric = pd.Series(False, index=df.index)
    if not_numeric.any():
        row = int(np.argmax(not_numeric.to_numpy()))
        raise InputError(
            f"row {row + 1}: {column} must be a number in [0, 1] (or empty), "
            f"got {df[column][row]!r}"
        )
    out = scores.notna() & ((scores < 0) | (scores > 1))
    if out.any():
        row = int(np.argmax(out.to_numpy()))
        raise InputError(f"row {row + 1}: {column} must be in [0, 1], got {scores[row]}")
    return scores
