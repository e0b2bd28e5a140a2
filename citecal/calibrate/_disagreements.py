"""Disagreements between the judge and annotators, grouped for prompt authors (seed §7.4).

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

import numpy as np
import pandas as pd

from citecal.calibrate._models import CATEGORY_HELP, Disagreement
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
    pairs = df[df["judge_pos"].notna()]
    mismatch = pairs[pairs["judge_pos"].astype(bool) != pairs["human_pos"].astype(bool)].copy()
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
    spread = df.groupby("record_id")["human_pos"].agg(["min", "max"])
    split = (spread["min"] != spread["max"]).reindex(mismatch["record_id"]).to_numpy(dtype=bool)
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


def to_records(mismatch: pd.DataFrame) -> list[Disagreement]:
    """Pydantic records of :func:`categorise` rows, false positives first."""
    ordered = mismatch.sort_values(
        ["type", "category", "record_id", "annotator"],
        ascending=[False, True, True, True],
        kind="stable",
    )
    cols = [
        "record_id", "annotator", "type", "category", "claim", "citation", "llm_verdict",
        "judge_score", "human_score", "reasoning", "notes", "report_id", "mode", "line_range",
        "correction", "cited_code",
    ]  # fmt: skip
    out: list[Disagreement] = []
    for row in ordered[cols].itertuples(index=False, name=None):
        (rid, ann, typ, cat, claim, cit, verdict, jscore, hscore, reason, notes, rep, mode, lr,
         corr, code) = row  # fmt: skip
        js = None if jscore is None or np.isnan(jscore) else float(jscore)
        out.append(
            Disagreement(
                record_id=str(rid),
                annotator=str(ann),
                type=typ,
                category=cat,
                claim=_opt(claim),
                citation=_opt(cit),
                judge_verdict=_opt(verdict),
                judge_score=js,
                human_score=int(hscore),
                reasoning=_opt(reason),
                notes=_opt(notes),
                report_id=_opt(rep),
                mode=_opt(mode),
                line_range=_opt(lr),
                correction=_opt(corr),
                cited_code=_opt(code),
            )
        )
    return out
