"""Cascade training rows from a pulled annotation table (README "The cascade").

One row per record: people's consensus (the median of its annotators' scores,
supports when ≥ 2), the features the local verifier reads from the columns
``pull`` writes (claim, raw cited code, the lines above, the rule check's terms
and verdict, the mode), and each judge model's support score and, where the
table has them, its verdict with its ``confidence_value`` (README "Judge
confidence"): a judge tier then thresholds on that number. The record's
report is its group, so thresholds rest on probabilities from verifiers that
never saw that report.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from citecal.annotations import check_vocabularies, human_scores, llm_scores
from citecal.cascade._cascade import VERDICTS, TierSpec
from citecal.cascade._features import FeatureInput
from citecal.cascade._training import Row
from citecal.errors import InputError


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return str(value)


def _terms(value: object) -> int:
    return len([t for t in _text(value).split(",") if t.strip()])


def _checked(df: pd.DataFrame) -> pd.DataFrame:
    """Scores checked as ``calibrate`` checks them: people's 0–3, the judge's [0, 1].

    README "Security": a human score of 99, −1, inf, NaN or ``'abc'`` is one line
    naming the row, never a label the thresholds rest on (nor a traceback).
    """
    df = df.reset_index(drop=True)
    df["human_score"] = human_scores(df)
    if "llm_score" in df:
        raw = df["llm_score"]
        blank = raw.isna() | raw.astype(str).str.strip().eq("")
        df["llm_score"] = llm_scores(df, blank)
    check_vocabularies(df)
    return df


def rows_from_table(df: pd.DataFrame) -> tuple[list[Row], list[str]]:
    """Training rows (one per record) and the judge models seen, in table order.

    Raises:
        InputError: the table lacks the columns every row needs.
    """
    numeric = "confidence_value" in df and "llm_verdict" in df
    needed = {"record_id", "report_id", "claim", "cited_code", "human_score"}
    missing = sorted(needed - set(df.columns))
    if missing:
        raise InputError(f"annotation table lacks {', '.join(missing)}: cannot fit a cascade")
    df = _checked(df)
    models: list[str] = []
    rows: list[Row] = []
    for record_id, group in df.groupby("record_id", sort=True):
        first = group.iloc[0]
        human = float(np.median(group["human_score"].astype(float))) >= 2
        judges: dict[str, float] = {}
        verdicts: list[tuple[str, str, float]] = []
        if "judge_model" in group and "llm_score" in group:
            for model, sub in group.groupby("judge_model"):
                scores = pd.to_numeric(sub["llm_score"], errors="coerce").dropna()
                if len(scores):
                    judges[str(model)] = float(scores.iloc[0])
                    if str(model) not in models:
                        models.append(str(model))
                if numeric:
                    said = judge_verdict(sub)
                    if said is not None:
                        verdicts.append((str(model), *said))
                        if str(model) not in models:
                            models.append(str(model))
        rule = _text(first.get("extractive_verdict")) or None
        method = _text(first.get("method"))
        if rule is None and method == "extractive":
            rule = _text(first.get("llm_verdict")) or None
        before = _text(first.get("context_before"))
        feats = FeatureInput(
            claim=_text(first.get("claim")),
            code=_text(first.get("cited_code")),
            context_before="\n".join(before.splitlines()[-3:]),
            mode=_text(first.get("mode")) or None,
            rule_verdict=rule if rule in VERDICTS else "unverified",
            matched=_terms(first.get("matched_terms")),
            missing=_terms(first.get("missing_terms")),
        )
        rows.append(
            Row(
                group=_text(first.get("report_id")) or str(record_id),
                features=feats,
                rule=rule if rule in VERDICTS else None,
                human=human,
                judges=tuple(sorted(judges.items())),
                judge_verdicts=tuple(sorted(verdicts)),
            )
        )
    return rows, models


def judge_verdict(rows: pd.DataFrame) -> tuple[str, float] | None:
    """(verdict side, confidence_value) of one model's verdict on a record, if recorded."""
    values = pd.to_numeric(rows["confidence_value"], errors="coerce")
    first = rows[values.notna() & rows["llm_verdict"].notna()]
    if first.empty:
        return None
    said = _text(first["llm_verdict"].iloc[0])
    if said == "unverified":
        return None
    side = "supports" if said == "supports" else "not_supports"
    return side, float(values[first.index[0]])


def judge_sources(df: pd.DataFrame) -> dict[str, str]:
    """Each judge model's confidence source in the table (its most common one)."""
    if "confidence_source" not in df or "judge_model" not in df:
        return {}
    seen = df.dropna(subset=["confidence_source", "judge_model"])
    return {
        str(model): str(sub["confidence_source"].mode().iloc[0])
        for model, sub in seen.groupby("judge_model")
    }


def judge_tiers(
    models: Sequence[str],
    cost: dict[str, float | None],
    sources: dict[str, str] | None = None,
) -> list[TierSpec]:
    """Judge tiers cheapest first (unknown prices last, in table order)."""
    order = sorted(models, key=lambda m: (cost.get(m) is None, cost.get(m) or 0.0))
    return [TierSpec("judge", m, cost.get(m), (sources or {}).get(m)) for m in order]


__all__ = ["judge_sources", "judge_tiers", "judge_verdict", "rows_from_table"]
