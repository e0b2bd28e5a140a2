"""Read and validate the annotation table (DESIGN.md "Annotation table").

The table comes from ``citecal pull`` (Parquet) or from another tool (CSV,
JSONL). Everything that can be wrong with it is caught here, once, and turned
into a one-line :class:`~citecal.errors.InputError`; the statistics modules can
then assume clean columns. :func:`prepare` also derives the columns every
figure needs (judge support score, binary verdicts, 0–3 judge score,
language), so the judge-score mapping lives in exactly one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from citecal.errors import InputError
from citecal.models import VERDICT_CONFIDENCE_SCORE
from citecal.source import language_for_path
from citecal.support import (
    DECIDED_VERDICTS,
    SUPPORTING_VERDICTS,
    humans_support,
    verdicts_support,
)

REQUIRED_COLUMNS: tuple[str, ...] = ("record_id", "report_id", "annotator", "human_score")
"""Columns without which no figure can be computed."""

JUDGE_COLUMNS: tuple[str, ...] = ("llm_verdict", "llm_score")
"""At least one of these must be present: the judge's answer."""

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
)

_VERDICTS = frozenset({"supports", "partial", "not_supports", "unverified"})
_CONFIDENCES = frozenset({"high", "medium", "low"})
_LINE_RANGES = frozenset({"correct", "too_narrow", "too_broad"})


def read_table(path: Path | str, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Read an annotation table from Parquet, CSV or JSONL, chosen by file suffix.

    ``columns``, when given, limits a Parquet read to those of them the file
    has (``citecal estimate`` reads 7 columns of a million-row table); other
    formats are read whole.

    Raises:
        InputError: the file is missing, unreadable, of an unknown type or empty.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"annotation table not found: {p}")
    if p.is_dir():
        raise InputError(f"annotation table is a directory, not a file: {p}")
    suffix = p.suffix.lower()
    try:
        if suffix in {".parquet", ".pq"}:
            if columns is not None:
                import pyarrow.parquet as pq

                present = set(pq.read_schema(p).names)
                df = pd.read_parquet(p, columns=[c for c in columns if c in present])
            else:
                df = pd.read_parquet(p)
        elif suffix == ".csv":
            df = pd.read_csv(p, dtype={"record_id": str, "report_id": str, "annotator": str})
        elif suffix in {".jsonl", ".ndjson", ".json"}:
            df = pd.read_json(p, lines=suffix != ".json", dtype=False)
        else:
            raise InputError(
                f"unknown annotation table type '{p.suffix}' ({p}): use .parquet, .csv or .jsonl"
            )
    except InputError:
        raise
    except pd.errors.EmptyDataError:
        raise InputError(f"annotation table is empty: {p}") from None
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        # pyarrow's ArrowInvalid / ArrowIOError subclass ValueError / OSError.
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot read annotation table {p}: {first[:200]}") from None
    if df.empty:
        raise InputError(f"annotation table is empty: {p}")
    if suffix == ".csv":
        _check_last_csv_row(p, len(df.columns), len(df))
    return df


def _check_last_csv_row(path: Path, n_columns: int, n_rows: int) -> None:
    """Reject a CSV whose last row stops short: the file was cut mid-row.

    pandas fills a short row with missing values, so a table cut by a full
    disk or a killed copy would be read as if complete. A file that ends in a
    line break ends on a row boundary (a cut inside a quoted field is already a
    parser error); otherwise its last row is tokenised again on its own (the
    parser skips whole records, quoted line breaks included) and must hold
    every column.
    """
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - 2))
        end = fh.read()
    if not end or end.endswith((b"\n", b"\r")):
        return
    last = pd.read_csv(
        path, header=None, dtype=str, keep_default_na=False, skiprows=n_rows, nrows=1
    )
    if last.shape[1] < n_columns:
        with path.open("rb") as fh:
            line = 1 + sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
        text = ",".join(str(v) for v in last.iloc[0])
        raise InputError(
            f"line {line}: the last row has {last.shape[1]} of {n_columns} columns "
            f"({text[:60]!r}): the file looks cut mid-row"
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


def _check_vocabulary(df: pd.DataFrame, column: str, allowed: frozenset[str]) -> None:
    if column not in df:
        return
    values = df[column].dropna()
    bad = values[~values.isin(allowed)]
    if not bad.empty:
        row = int(bad.index[0])  # type: ignore[call-overload]
        raise InputError(
            f"row {row + 1}: {column} must be one of {', '.join(sorted(allowed))} "
            f"(or empty), got {bad.iloc[0]!r}"
        )


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


def _human_scores(df: pd.DataFrame) -> pd.Series:
    """``human_score`` as integers 0–3; InputError naming the first bad row."""
    scores = pd.to_numeric(df["human_score"], errors="coerce")
    bad = scores.isna() | (scores < 0) | (scores > 3) | (scores != np.floor(scores))
    if bad.any():
        row = int(np.argmax(bad.to_numpy()))
        raise InputError(
            f"row {row + 1}: human_score must be an integer 0–3, got {df['human_score'][row]!r}"
        )
    return scores.astype(int)


def _check_duplicates(df: pd.DataFrame, keys: list[str]) -> None:
    """One row per (record, annotator) (``keys``: those columns or their codes)."""
    dup = df.duplicated(keys, keep=False)
    if dup.any():
        row = int(np.argmax(dup.to_numpy()))
        raise InputError(
            f"duplicate annotation: record {df['record_id'][row]!r} scored twice by "
            f"annotator {df['annotator'][row]!r}"
        )


def judge_support(
    verdicts: pd.Series | np.ndarray, confidences: pd.Series | np.ndarray, scores: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The judge's support score and binary verdict: one rule for every table.

    Score: the judge's own ``score`` when given, else the DESIGN.md mapping of
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

    Derived columns: ``judge_score`` (support probability, DESIGN.md mapping
    when the judge gave no score), ``judge_pos`` (1.0 supports, 0.0 partial
    or not_supports, NaN unverified or no answer: the one rule of
    :mod:`citecal.support`), ``judge_ord`` (the support
    score on the human 0–3 scale: ``min(3, floor(4·score))``, so the 0.5
    threshold of the binary verdict coincides with the human ``≥ 2``),
    ``human_pos`` (human score ≥ 2, seed §7.3), ``language``, and integer
    codes of the ids (:data:`CODE_COLUMNS`, see :func:`id_codes`).

    Raises:
        InputError: missing columns, duplicate (record, annotator) rows, a
            human score outside 0–3 or a verdict outside the vocabulary.
    """
    if raw.empty:
        raise InputError("annotation table is empty")
    missing = [c for c in REQUIRED_COLUMNS if c not in raw.columns]
    if missing:
        raise InputError(
            f"annotation table lacks column(s) {', '.join(missing)} "
            f"(has: {', '.join(map(str, raw.columns[:12]))})"
        )
    if not any(c in raw.columns for c in JUDGE_COLUMNS):
        raise InputError("annotation table has no judge answer: needs llm_verdict or llm_score")
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

    df["human_score"] = _human_scores(df)
    _check_duplicates(df, [CODE_COLUMNS["record_id"], CODE_COLUMNS["annotator"]])

    # ``citecal pull`` names the judge's reasoning ``judge_reasoning``.
    if "reasoning" not in df and "judge_reasoning" in df:
        df["reasoning"] = df["judge_reasoning"]
    for col in OPTIONAL_TEXT_COLUMNS:
        df[col] = _text(df[col]) if col in df else None
    if df["extractive_verdict"].isna().all():
        df["extractive_verdict"] = _rule_verdict(df)
    if "llm_verdict" not in raw:
        df["llm_verdict"] = None
    _check_vocabulary(df, "llm_verdict", _VERDICTS)
    _check_vocabulary(df, "llm_confidence", _CONFIDENCES)
    _check_vocabulary(df, "line_range", _LINE_RANGES)

    llm_score = pd.to_numeric(df["llm_score"], errors="coerce") if "llm_score" in df else None
    if llm_score is not None:
        if not pd.api.types.is_numeric_dtype(df["llm_score"]):  # "0.8" is fine, "high" not
            not_numeric = _text(df["llm_score"]).notna() & llm_score.isna()
        else:
            not_numeric = pd.Series(False, index=df.index)
        if not_numeric.any():
            row = int(np.argmax(not_numeric.to_numpy()))
            raise InputError(
                f"row {row + 1}: llm_score must be a number in [0, 1] (or empty), "
                f"got {df['llm_score'][row]!r}"
            )
        out = llm_score.notna() & ((llm_score < 0) | (llm_score > 1))
        if out.any():
            row = int(np.argmax(out.to_numpy()))
            raise InputError(f"row {row + 1}: llm_score must be in [0, 1], got {llm_score[row]}")
        df["llm_score"] = llm_score
    else:
        df["llm_score"] = np.nan

    judge_score, pos = judge_support(
        df["llm_verdict"], df["llm_confidence"], df["llm_score"].to_numpy(dtype=np.float64)
    )
    df["judge_score"] = judge_score
    df["judge_pos"] = pos
    df["judge_ord"] = np.minimum(3.0, np.floor(df["judge_score"] * 4.0))
    df["human_pos"] = humans_support(df["human_score"]).astype(float)
    if "language" in raw:
        lang = _text(df["language"])
        derived = per_unique(df["citation"], language_of)
        df["language"] = lang.where(lang.notna(), derived)
    else:
        df["language"] = per_unique(df["citation"], language_of)
    return df


def load_annotations(path: Path | str) -> pd.DataFrame:
    """:func:`read_table` then :func:`prepare`; errors name the file."""
    try:
        return prepare(read_table(path))
    except InputError as exc:
        msg = str(exc)
        raise InputError(msg if str(path) in msg else f"{path}: {msg}") from None


LABEL_COLUMNS: tuple[str, ...] = ("record_id", "annotator", "human_score")
"""What ``citecal estimate`` needs of an annotation table (any tool's)."""


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
    if raw.empty:
        raise InputError("annotation table is empty")
    missing = [c for c in LABEL_COLUMNS if c not in raw.columns]
    if missing:
        raise InputError(
            f"annotation table lacks column(s) {', '.join(missing)} "
            f"(has: {', '.join(map(str, raw.columns[:12]))})"
        )
    df = raw.reset_index(drop=True).copy()
    for col in ("record_id", "annotator"):
        blank = df[col].isna() | (df[col].astype(str).str.strip() == "")
        if blank.any():
            raise InputError(f"row {int(np.argmax(blank.to_numpy())) + 1}: {col} is empty")
        df[col] = df[col].astype(str)
    df["human_score"] = _human_scores(df)
    _check_duplicates(df, ["record_id", "annotator"])
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
    g = df.groupby("record_id", sort=True)
    out = pd.DataFrame(
        {
            "label": g["support"].mean(),
            "n_annotators": g["annotator"].size(),
            "sampling_weight": g["sampling_weight"].first(),
            "sampling_strategy": g["sampling_strategy"].first(),
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
