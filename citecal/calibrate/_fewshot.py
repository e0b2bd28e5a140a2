"""Few-shot examples mined from disagreements, for ``citecal rejudge --few-shot-from``.

A query over the annotation table: the records where the judge and the
annotators disagree, from reports the evaluated table does not contain, so
no example can leak the answer to a record being scored. The prompt itself
is written by :func:`citecal.verify.judge.prompt_with_examples`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from citecal.calibrate._disagreements import categorise
from citecal.calibrate._table import prepare
from citecal.errors import InputError
from citecal.support import human_supports
from citecal.verify.judge import defang, find_injection


def _addresses_judge(row: pd.Series) -> bool:
    return any(
        find_injection(str(row.get(column) or "")) is not None
        for column in ("claim", "citation", "cited_code", "notes", "correction")
    )


@dataclass(frozen=True, slots=True)
class FewShot:
    """Examples appended to the prompt and what was left out to prevent leakage."""

    text: str
    n_examples: int
    excluded_reports: tuple[str, ...]
    candidates: int


def mine_few_shot(
    source: pd.DataFrame, evaluated: pd.DataFrame, *, k: int = 6, split_by: str = "report"
) -> FewShot:
    """Disagreement examples from ``source`` whose reports are not in ``evaluated``.

    The human consensus (median score) is the label shown; examples alternate
    false positives and false negatives so the prompt is not pushed one way.
    The code shown is the table's raw ``cited_code``.

    Raises:
        InputError: unknown ``split_by``.
    """
    if split_by != "report":
        raise InputError(f"--split-by {split_by!r}: only 'report' is supported")
    prepared = prepare(source)
    held_out = set(evaluated["report_id"].astype(str))
    excluded = tuple(sorted(held_out & set(prepared["report_id"])))
    usable = prepared[~prepared["report_id"].isin(held_out)]
    mismatch = categorise(usable)
    if mismatch.empty:
        return FewShot("", 0, excluded, 0)
    median = usable.groupby("record_id")["human_score"].median()
    per_record = mismatch.drop_duplicates("record_id").sort_values(["type", "record_id"])
    # Examples go into the system message: one whose claim, code or note speaks to the
    # judge is never shown (README "Security").
    per_record = per_record[~per_record.apply(_addresses_judge, axis=1).astype(bool)]
    fps = per_record[per_record["type"] == "false_positive"]
    fns = per_record[per_record["type"] == "false_negative"]
    chosen: list[pd.Series] = []
    for i in range(max(len(fps), len(fns))):
        for part in (fps, fns):
            if i < len(part) and len(chosen) < k:
                chosen.append(part.iloc[i])
    blocks = []
    for n, ex in enumerate(chosen, start=1):
        supported = human_supports(float(median[ex["record_id"]]))
        code = ex.get("cited_code") or ""
        reason = ex.get("notes") or ex.get("correction") or ""
        fence = "`" * max(3, max((len(r) for r in re.findall(r"`{3,}", code)), default=2) + 1)
        example = (
            f'Claim: "{ex["claim"]}"\nCode from {ex["citation"]}:\n{fence}\n{code}\n{fence}\n'
            + (f"Annotator note: {reason}\n" if reason else "")
        )
        blocks.append(
            f"Example {n} (annotators: {'SUPPORTED' if supported else 'NOT SUPPORTED'};"
            f" a previous judge got this wrong)\n"
            f"<untrusted_input>\n{defang(example)}</untrusted_input>\n"
        )
    text = (
        "Worked examples from human review (other reports than the ones being judged):\n\n"
        + "\n".join(blocks)
    )
    return FewShot(text, len(chosen), excluded, int(per_record.shape[0]))
