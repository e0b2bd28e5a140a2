"""Disagreements between the judge and annotators, grouped for prompt authors.

README "Calibration" lists the categories.

Every false positive (judge supports, human ≤ 1) and false negative (judge
does not, human ≥ 2) is listed with its claim, code, reasoning and notes, and
put in exactly one category. Categories come from the data, checked in order
of how specific the evidence is:

1. ``wrong_file_or_symbol`` — the annotator's notes or correction say so;
2. ``lines_off`` — the annotator answered ``too_narrow`` / ``too_broad``;
3. ``annotators_disagree`` — the record's annotators fall on both sides of 2;
4. ``rule_check_disagrees`` — the extractive verdict (when the table has one)
   is on the human's side, against the judge;
5. ``partial_support`` — borderline human score (1 for a false positive,
   2 for a false negative);
6. ``claim_overstates_code`` — false positive with human score 0;
7. ``judge_overlooked_evidence`` — false negative with human score 3.

Everything is vectorised so that 100 000 annotations take milliseconds.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from citecal.calibrate._models import CATEGORY_HELP, Disagreement
from citecal.calibrate._table import id_codes, per_unique
from citecal.support import verdicts_support

WRONG_TARGET_PATTERN = (
    r"wrong (?:file|function|class|method|symbol|module|location|place|line)"
    r"|different (?:file|function|class|method|module)"
    r"|not in (?:this|that|the cited) (?:file|function|class|range)"
    r"|(?:should|must) (?:cite|point|reference)"
    r"|(?:is|lives|defined) (?:actually )?in (?:another|a different)"
    r"|cites? the wrong|elsewhere"
)
"""Note phrases meaning the citation points at the wrong place."""


def categorise(df: pd.DataFrame) -> pd.DataFrame:
    """The disagreeing rows of a prepared table, with ``type`` and ``category`` columns."""
    judge = df["judge_pos"].to_numpy(dtype=np.float64)
    human = df["human_pos"].to_numpy(dtype=np.float64).astype(bool)
    # One selection of the disagreeing rows: slicing every text column twice would
    # copy a year of claims and code for nothing.
    mismatch: pd.DataFrame = df[~np.isnan(judge) & (judge.astype(bool) != human)].copy()
    if mismatch.empty:
        mismatch["type"] = pd.Series(dtype=object)
        mismatch["category"] = pd.Series(dtype=object)
        return mismatch
    fp = mismatch["judge_pos"].astype(bool).to_numpy()
    text = (
        mismatch["notes"].fillna("").astype(str)
        + " "
        + mismatch["correction"].fillna("").astype(str)
    )
    wrong_target = text.str.contains(WRONG_TARGET_PATTERN, case=False, regex=True).to_numpy()
    lines_off = mismatch["line_range"].isin(["too_narrow", "too_broad"]).to_numpy()
    codes, n_records = id_codes(df, "record_id")
    low = np.ones(n_records)
    high = np.zeros(n_records)
    np.minimum.at(low, codes, df["human_pos"].to_numpy(dtype=np.float64))
    np.maximum.at(high, codes, df["human_pos"].to_numpy(dtype=np.float64))
    split = (low != high)[codes[~np.isnan(judge) & (judge.astype(bool) != human)]]
    extractive = mismatch["extractive_verdict"]
    rule_pos = verdicts_support(extractive.to_numpy())
    rule_known = extractive.notna().to_numpy() & (extractive != "unverified").to_numpy()
    rule_disagrees = rule_known & (rule_pos != fp)
    score = mismatch["human_score"].to_numpy()
    borderline = (fp & (score == 1)) | (~fp & (score == 2))
    conditions = [wrong_target, lines_off, split, rule_disagrees, borderline, fp]
    choices = [
        "wrong_file_or_symbol",
        "lines_off",
        "annotators_disagree",
        "rule_check_disagrees",
        "partial_support",
        "claim_overstates_code",
    ]
    mismatch["category"] = np.select(conditions, choices, default="judge_overlooked_evidence")
    mismatch["type"] = np.where(fp, "false_positive", "false_negative")
    return mismatch


def category_counts(mismatch: pd.DataFrame) -> dict[str, int]:
    """Count per category, every category present (zeros included), in CATEGORY_HELP order."""
    counts = mismatch["category"].value_counts() if len(mismatch) else pd.Series(dtype=int)
    return {name: int(counts.get(name, 0)) for name in CATEGORY_HELP}


def _opt(value: object) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return str(value)


_OPTIONAL = {
    "claim": "claim",
    "citation": "citation",
    "judge_verdict": "llm_verdict",
    "reasoning": "reasoning",
    "notes": "notes",
    "report_id": "report_id",
    "mode": "mode",
    "line_range": "line_range",
    "correction": "correction",
    "cited_code": "cited_code",
}
"""Disagreement field → table column, for the text fields that may be missing."""


def to_records(mismatch: pd.DataFrame) -> list[Disagreement]:
    """Pydantic records of :func:`categorise` rows, false positives first.

    Built column by column (each distinct text converted once), not row by
    row: a year of annotations has a quarter of a million of them. Every value
    already passed :func:`~citecal.calibrate.prepare` and has its field's type
    here, so the records are assembled without validating each again
    (:func:`_assemble`; ``tests/calibrate`` checks they equal validated ones).
    """
    ordered = mismatch.sort_values(
        ["type", "category", "record_id", "annotator"],
        ascending=[False, True, True, True],
        kind="stable",
    )
    columns: dict[str, list[Any]] = {
        "record_id": ordered["record_id"].astype(str).tolist(),
        "annotator": ordered["annotator"].astype(str).tolist(),
        "type": ordered["type"].tolist(),
        "category": ordered["category"].tolist(),
        "human_score": ordered["human_score"].astype(int).tolist(),
    }
    columns["judge_score"] = [
        None if np.isnan(v) else float(v) for v in ordered["judge_score"].to_numpy(dtype=np.float64)
    ]
    for name, column in _OPTIONAL.items():
        columns[name] = per_unique(ordered[column], _opt).tolist()
    names = list(Disagreement.model_fields)  # field order is the JSON key order
    rows = zip(*(columns[name] for name in names), strict=True)
    return _assemble(list(map(dict, map(partial(zip, names), rows))))


def _assemble(rows: list[dict[str, Any]]) -> list[Disagreement]:
    """Disagreements from complete, already typed field dicts, without validation.

    What ``Disagreement.model_construct`` does when every field is given, minus
    its per-call overhead (8× faster on 250 000 records): each instance gets
    its field dict and one shared "fields set" (every field is set on every
    record, so sharing it is safe and halves the memory).
    """
    fields = set(Disagreement.model_fields)
    if rows and list(rows[0]) != list(Disagreement.model_fields):
        raise ValueError(f"disagreement fields {list(rows[0])}: not in the model's order")
    new, put = object.__new__, object.__setattr__
    out: list[Disagreement] = []
    for row in rows:
        item = new(Disagreement)
        put(item, "__dict__", row)
        put(item, "__pydantic_fields_set__", fields)
        put(item, "__pydantic_extra__", None)
        put(item, "__pydantic_private__", None)
        out.append(item)
    return out
