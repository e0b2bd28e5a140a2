"""The annotation table made ready for statistics (README "Annotation table").

Reading, writing and the column checks belong to :mod:`citecal.annotations`;
:func:`prepare` runs those checks once and derives the columns every figure
needs (judge support score, binary verdicts, 0–3 judge score, language), so
the judge-score mapping lives in exactly one place and the statistics modules
can assume clean columns.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from citecal.annotations import (
    check_duplicates,
    check_vocabularies,
    human_scores,
    llm_scores,
    read_table,
    require_columns,
    require_judge_answer,
)
from citecal.errors import InputError
from citecal.models import VERDICT_CONFIDENCE_SCORE
from citecal.source import language_for_path
from citecal.support import (
    DECIDED_VERDICTS,
    SUPPORTING_VERDICTS,
    humans_support,
    verdicts_support,
)

OPTIONAL_TEXT_COLUMNS: tuple[str, ...] = (
    "citation",
    "claim",
    "cited_code",
    "mode",
    "judge_model",
    "prompt_version",
    "llm_confidence",
    "line_range",
    "notes",
    "submitted_at",
    "reasoning",
    "correction",
    "extractive_verdict",
    "repo",
    "confidence_source",
)

CODE_COLUMNS: dict[str, str] = {
    "record_id": "record_code",
    "report_id": "report_code",
    "annotator": "annotator_code",
}
"""Id column → the integer code column :func:`prepare` adds (codes in sorted id order)."""


def id_codes(df: pd.DataFrame, column: str) -> tuple[NDArray[np.int64], int]:
    """Codes 0..n-1 of ``df[column]`` in sorted order of the ids, and n.

    Every figure groups by record, report or annotator, several times per
    breakdown; grouping integers is far cheaper than hashing a million
    strings each time. The codes keep the ids' sorted order, so tables built
    from them come out exactly as a groupby or pivot on the ids would.
    """
    code_column = CODE_COLUMNS[column]
    if code_column in df:
        raw = df[code_column].to_numpy(dtype=np.int64)
        if raw.size == 0:
            return raw, 0
        # Renumber the codes present 0..n-1 keeping their order: a count, not a sort.
        present = np.bincount(raw) > 0
        renumber = np.cumsum(present) - 1
        return renumber[raw].astype(np.int64), int(present.sum())
    codes, labels = pd.factorize(df[column].astype(str), sort=True)
    return codes.astype(np.int64), len(labels)


def per_unique(series: pd.Series, fn: Callable[[Any], Any]) -> pd.Series:
    """``series.map(fn)`` with ``fn`` called once per distinct value (missing → ``fn(None)``).

    Annotation tables repeat their values (a record's claim and code once per
    annotator, a handful of models and modes), so this is far fewer Python
    calls, and equal results share one object instead of one per row.
    """
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    mapped = np.empty(len(uniques) + 1, dtype=object)
    mapped[:-1] = [fn(v) for v in np.asarray(uniques, dtype=object)]
    mapped[-1] = fn(None)
    return pd.Series(mapped[codes], index=series.index, dtype=object)


def _blank_to_none(value: Any) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return value


def _text(series: pd.Series) -> pd.Series:
    """Strings with missing values as ``None`` (NaN, None, "" and spaces all mean missing).

    Converted once per distinct value (:func:`per_unique`): rows share their
    string objects, and slicing these columns copies pointers, not text.
    """
    return per_unique(series, _blank_to_none)


def _terms(df: pd.DataFrame, column: str) -> pd.Series:
    """Whether a comma-separated term list (as ``pull`` writes it) is non-empty."""
    if column not in df:
        return pd.Series(False, index=df.index)
    return _text(df[column]).notna()


def _rule_verdict(df: pd.DataFrame) -> pd.Series:
    """The extractive term check's answer, derived from ``matched_terms`` / ``missing_terms``.

    ``pull`` writes the term lists, not a verdict: every term found means the
    rule check supports the claim, none found means it does not; a mix (or
    no lists) says nothing, so such rows never count as "rule check and judge
    disagree".
    """
    matched = _terms(df, "matched_terms")
    missing = _terms(df, "missing_terms")
    out = pd.Series(None, index=df.index, dtype=object)
    out[matched & ~missing] = "supports"
    out[~matched & missing] = "not_supports"
    return out


def language_of(citation: str | None) -> str:
    """Language guessed from the cited file's extension ("unknown" when it cannot be)."""
    if not citation:
        return "unknown"
    path = citation.strip().strip("[]").rsplit(":", 1)[0]
    found = language_for_path(path)
    if found is not None:
        return found
    return PurePosixPath(path).suffix.lower().lstrip(".") or "unknown"


def judge_support(
    verdicts: pd.Series | np.ndarray, confidences: pd.Series | np.ndarray, scores: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The judge's support score and binary verdict: one rule for every table.

    Score: the judge's own ``score`` when given, else the README "Calibration" mapping of
    verdict and confidence. Binary: 1.0 for ``supports``, 0.0 for ``partial`` /
    ``not_supports`` (:mod:`citecal.support`), NaN for ``unverified`` or no
    answer; a score without a verdict counts by whether it is ≥ 0.5. Used by
    :func:`prepare` and by ``citecal estimate`` on a million judged citations.
    """
    # A verdict without a confidence is read as medium confidence; one lookup per
    # distinct (verdict, confidence) pair.
    vcodes, vuniq = pd.factorize(verdicts, use_na_sentinel=True)
    ccodes, cuniq = pd.factorize(confidences, use_na_sentinel=True)
    lookup = np.full((len(vuniq) + 1, len(cuniq) + 1), np.nan)
    for i, v in enumerate(vuniq):
        for j, c in enumerate([*cuniq, None]):
            lookup[i, j] = VERDICT_CONFIDENCE_SCORE.get((v, c or "medium"), np.nan)
    mapped = lookup[vcodes, ccodes]
    given = np.asarray(scores, dtype=np.float64)
    judge_score = np.where(np.isnan(given), mapped, given)
    # The support rule (citecal.support) is applied to the distinct labels, then spread
    # over the rows by their codes: one decision per label, not a million comparisons.
    verdict_labels = np.asarray(vuniq, dtype=object)
    is_pos = np.isin(vcodes, np.flatnonzero(verdicts_support(verdict_labels)))
    not_support = sorted(DECIDED_VERDICTS - SUPPORTING_VERDICTS)
    is_neg = np.isin(vcodes, np.flatnonzero(np.isin(verdict_labels, not_support)))
    no_verdict = vcodes == -1
    pos = np.full(len(vcodes), np.nan)
    pos[is_pos] = 1.0
    pos[is_neg] = 0.0
    from_score = no_verdict & ~np.isnan(judge_score)
    pos[from_score] = (judge_score[from_score] >= 0.5).astype(np.float64)
    return judge_score, pos


def prepare(raw: pd.DataFrame) -> pd.DataFrame:
    """Validate the table and add the derived columns the statistics use.

    Derived columns: ``judge_score`` (support probability, README "Calibration" mapping
    when the judge gave no score), ``judge_pos`` (1.0 supports, 0.0 partial
    or not_supports, NaN unverified or no answer: the one rule of
    :mod:`citecal.support`), ``judge_ord`` (the support
    score on the human 0–3 scale: ``min(3, floor(4·score))``, so the 0.5
    threshold of the binary verdict coincides with the human ``≥ 2``),
    ``human_pos`` (human score ≥ 2, README "Calibration"), ``language``, and integer
    codes of the ids (:data:`CODE_COLUMNS`, see :func:`id_codes`).

    Raises:
        InputError: missing columns, duplicate (record, annotator) rows, a
            human score outside 0–3 or a verdict outside the vocabulary.
    """
    require_columns(raw)
    require_judge_answer(raw)
    # No copy: only whole columns are assigned below, never written into (the caller's
    # table stays as it was, and a year of annotations is not held twice).
    df = raw.reset_index(drop=True)
    for col in ("record_id", "report_id", "annotator"):
        missing_ids = df[col].isna().to_numpy()
        ids = df[col].astype(str)
        codes, labels = pd.factorize(ids, sort=True)
        blank_labels = np.flatnonzero(pd.Series(labels, dtype=str).str.strip().eq("").to_numpy())
        blank = missing_ids | np.isin(codes, blank_labels)
        if blank.any():
            raise InputError(f"row {int(np.argmax(blank)) + 1}: {col} is empty")
        df[col] = ids
        df[CODE_COLUMNS[col]] = codes.astype(np.int64)

    df["human_score"] = human_scores(df)
    check_duplicates(df, [CODE_COLUMNS["record_id"], CODE_COLUMNS["annotator"]])

    # ``citecal pull`` names the judge's reasoning ``judge_reasoning``.
    if "reasoning" not in df and "judge_reasoning" in df:
        df["reasoning"] = df["judge_reasoning"]
    for col in OPTIONAL_TEXT_COLUMNS:
        df[col] = _text(df[col]) if col in df else None
    # pull writes the rule check's verdict (schema 2); older tables and other tools'
    # have only the term lists it is derived from.
    rule = df["extractive_verdict"]
    df["extractive_verdict"] = rule.where(rule.notna(), _rule_verdict(df))
    if "llm_verdict" not in raw:
        df["llm_verdict"] = None
    check_vocabularies(df)
    if "llm_score" in df:
        df["llm_score"] = llm_scores(df, _text(df["llm_score"]).isna())
    else:
        df["llm_score"] = np.nan

    judge_score, pos = judge_support(
        df["llm_verdict"], df["llm_confidence"], df["llm_score"].to_numpy(dtype=np.float64)
    )
    df["judge_score"] = judge_score
    df["judge_pos"] = pos
    _confidence(df)
    df["judge_ord"] = np.minimum(3.0, np.floor(df["judge_score"] * 4.0))
    df["human_pos"] = humans_support(df["human_score"]).astype(float)
    if "language" in raw:
        lang = _text(df["language"])
        derived = per_unique(df["citation"], language_of)
        df["language"] = lang.where(lang.notna(), derived)
    else:
        df["language"] = per_unique(df["citation"], language_of)
    return df


def _confidence(df: pd.DataFrame) -> None:
    """``confidence_value`` in [0, 1] (how likely the verdict is right), ``confidence_source``.

    README "Judge confidence". A row whose table does not say (a table written before
    schema 3, or another tool's) is read as the judge's own words: ``verbal``, its
    support score for ``supports`` and one minus it for any other verdict. A value
    without a source is ``unknown``.
    """
    if "confidence_value" in df:
        blank = _text(df["confidence_value"]).isna()
        df["confidence_value"] = llm_scores(df, blank, "confidence_value")
    else:
        df["confidence_value"] = np.nan
    value = df["confidence_value"].to_numpy(dtype=np.float64)
    score = df["judge_score"].to_numpy(dtype=np.float64)
    pos = df["judge_pos"].to_numpy(dtype=np.float64)
    missing = np.isnan(value) & ~np.isnan(pos) & ~np.isnan(score)
    verbal = np.where(pos == 1.0, score, 1.0 - score)
    df["confidence_value"] = np.where(missing, verbal, value)
    source = df["confidence_source"]
    known = ~np.isnan(df["confidence_value"].to_numpy(dtype=np.float64))
    unknown = source.isna().to_numpy() & known
    filled = source.to_numpy(dtype=object).copy()
    filled[unknown] = "unknown"
    filled[missing] = "verbal"
    df["confidence_source"] = pd.Series(filled, index=df.index, dtype=object)


def load_annotations(path: Path | str) -> pd.DataFrame:
    """:func:`read_table` then :func:`prepare`; errors name the file."""
    try:
        return prepare(read_table(path))
    except InputError as exc:
        msg = str(exc)
        raise InputError(msg if str(path) in msg else f"{path}: {msg}") from None


LABEL_COLUMNS: tuple[str, ...] = ("record_id", "annotator", "human_score")
"""What ``citecal estimate`` needs of an annotation table (any tool's)."""


DESIGN_COLUMNS: tuple[str, ...] = (
    "sampling_probability",
    "sampling_round",
    "sampling_order",
    "sampling_drawn",
)
"""How ``push`` drew and served a record, carried to ``estimate`` when present."""


def prepare_labels(raw: pd.DataFrame) -> pd.DataFrame:
    """Per-record human labels for ``citecal estimate``, from annotation-table rows.

    Returns one row per record: ``record_id``, ``label`` (the share of its
    annotators scoring ≥ 2, :func:`citecal.support.humans_support`: 1 or 0
    when they agree), ``n_annotators``, ``sampling_weight`` (NaN when the
    table has none) and ``sampling_strategy`` (None when unknown), as
    ``citecal push --sample`` records them (README "Estimates").

    Raises:
        InputError: missing columns, empty ids, scores outside 0–3, duplicate
            (record, annotator) rows, or a sampling weight that is not a
            positive number or differs between a record's rows.
    """
    require_columns(raw, LABEL_COLUMNS)
    df = raw.reset_index(drop=True).copy()
    for col in ("record_id", "annotator"):
        blank = df[col].isna() | (df[col].astype(str).str.strip() == "")
        if blank.any():
            raise InputError(f"row {int(np.argmax(blank.to_numpy())) + 1}: {col} is empty")
        df[col] = df[col].astype(str)
    df["human_score"] = human_scores(df)
    check_duplicates(df, ["record_id", "annotator"])
    df["support"] = humans_support(df["human_score"]).astype(np.float64)
    if "sampling_weight" in df:
        weight = pd.to_numeric(df["sampling_weight"], errors="coerce")
        bad = weight.notna() & ~(weight > 0)
        bad |= df["sampling_weight"].notna() & weight.isna()
        if bad.any():
            row = int(np.argmax(bad.to_numpy()))
            raise InputError(
                f"row {row + 1}: sampling_weight must be a positive number, "
                f"got {df['sampling_weight'][row]!r}"
            )
        df["sampling_weight"] = weight
    else:
        df["sampling_weight"] = np.nan
    strategy = _text(df["sampling_strategy"]) if "sampling_strategy" in df else None
    df["sampling_strategy"] = strategy
    design = [c for c in DESIGN_COLUMNS if c in df]
    for col in design:
        df[col] = pd.to_numeric(df[col], errors="coerce")
    g = df.groupby("record_id", sort=True)
    out = pd.DataFrame(
        {
            "label": g["support"].mean(),
            "n_annotators": g["annotator"].size(),
            "sampling_weight": g["sampling_weight"].first(),
            "sampling_strategy": g["sampling_strategy"].first(),
            **{col: g[col].first() for col in design},
        }
    )
    spread = g["sampling_weight"].nunique()
    if (spread > 1).any():
        rid = str(spread[spread > 1].index[0])
        raise InputError(f"record {rid!r} has different sampling_weight values on its rows")
    return out.reset_index()


def load_labels(path: Path | str) -> pd.DataFrame:
    """:func:`read_table` then :func:`prepare_labels`; errors name the file."""
    try:
        return prepare_labels(read_table(path))
    except InputError as exc:
        msg = str(exc)
        raise InputError(msg if str(path) in msg else f"{path}: {msg}") from None
