"""Anchor set: records people agree on, re-judged to check a judge before it is used.

A record is an anchor when at least two annotators scored it and all of them
fall on the same side of "supports" (score ≥ 2, :mod:`citecal.support`): its
label is not in doubt, so a judge that gets many anchors wrong is wrong, not
unlucky. ``citecal rejudge ANNOTATIONS --anchor --prompt NEW`` re-judges only
these records and compares the new judge's agreement with the old one's on the
same records (McNemar's exact test), README "Drift alarms".
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from scipy import stats

from citecal.calibrate._table import prepare
from citecal.errors import InputError
from citecal.support import humans_support

MIN_ANNOTATORS = 2


def anchor_records(table: pd.DataFrame, min_annotators: int = MIN_ANNOTATORS) -> pd.DataFrame:
    """The rows of ``table`` whose record has ≥ ``min_annotators`` annotators who all agree.

    Raises:
        InputError: the table lacks record_id / human_score, or has no anchor.
    """
    missing = [c for c in ("record_id", "human_score") if c not in table]
    if missing:
        raise InputError(f"annotation table lacks column(s) {', '.join(missing)}")
    support = pd.Series(
        humans_support(pd.to_numeric(table["human_score"], errors="coerce")), index=table.index
    )
    g = support.groupby(table["record_id"].astype(str))
    agreed = (g.size() >= min_annotators) & (g.nunique() == 1)
    keep = table["record_id"].astype(str).isin(agreed[agreed].index)
    if not keep.any():
        raise InputError(
            f"no anchor record: none has {min_annotators}+ annotators who all agree on "
            "'supports' (score ≥ 2) or all on 'not supports'"
        )
    return table[keep]


@dataclass(frozen=True, slots=True)
class AnchorCheck:
    """How the old and the new judge do on the anchor records (consensus label)."""

    records: int
    of_records: int
    new_agree: int
    old_agree: int | None
    only_old_right: int
    only_new_right: int
    mcnemar_p: float | None

    @property
    def new_rate(self) -> float:
        return self.new_agree / self.records

    @property
    def old_rate(self) -> float | None:
        return None if self.old_agree is None else self.old_agree / self.records

    def line(self, prompt: str) -> str:
        """The one-line summary the CLI prints."""
        old = (
            "previous judge: no verdicts"
            if self.old_rate is None
            else f"previous judge {self.old_agree}/{self.records} ({self.old_rate:.3f})"
        )
        p = "" if self.mcnemar_p is None else f"; McNemar p = {self.mcnemar_p:.3g}"
        return (
            f"anchor: {self.records} record(s) with annotator consensus (of {self.of_records}); "
            f"judge {prompt} agrees on {self.new_agree} ({self.new_rate:.3f}); {old}{p}"
        )


def anchor_check(old: pd.DataFrame, new: pd.DataFrame, of_records: int) -> AnchorCheck:
    """Compare the judges of two versions of the anchor rows (same records, same people)."""
    a = prepare(old)
    b = prepare(new)
    label = a.groupby("record_id")["human_pos"].first()
    old_pos = a.groupby("record_id")["judge_pos"].first().reindex(label.index)
    new_pos = b.groupby("record_id")["judge_pos"].first().reindex(label.index)
    new_right = (new_pos == label).to_numpy()
    has_old = old_pos.notna().to_numpy()
    old_right = (old_pos == label).to_numpy()
    only_old = int((old_right & ~new_right & has_old).sum())
    only_new = int((~old_right & new_right & has_old).sum())
    p = None
    if has_old.any():
        p = (
            float(stats.binomtest(only_new, only_old + only_new, 0.5).pvalue)
            if only_old + only_new
            else 1.0
        )
    return AnchorCheck(
        records=int(label.size),
        of_records=of_records,
        new_agree=int(new_right.sum()),
        old_agree=int(old_right[has_old].sum()) if has_old.any() else None,
        only_old_right=only_old,
        only_new_right=only_new,
        mcnemar_p=p,
    )


__all__ = ["MIN_ANNOTATORS", "AnchorCheck", "anchor_check", "anchor_records"]
