"""Judge stability: does the same question get the same verdict? (``rejudge --repeats K``)

README "Judge confidence". Users of judge-based tools report verdicts that flip
between identical runs (deepeval issues 3110 and 1146, ragas 1125); nobody measured
it. Asked K times, a claim's **stability** is the share of its answers that agree
with their majority (1 when all agree), and the **flip rate** is the share of claims
whose answers do not all agree. Both read verdicts as binary, as every figure of
README "Calibration" does (only ``supports`` supports); answers that are not
verdicts (``unverified``: timeouts, unparseable answers) are left out.

With people's labels it also says whether the unstable claims are the ones people
disagree about: how often their annotators split (some score ≥ 2, some below) and
how often the judge's majority agrees with their consensus, for unstable and for
stable claims. Pure: verdicts and a prepared table in, numbers out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from citecal.support import human_supports


@dataclass(frozen=True, slots=True)
class RecordStability:
    """One claim asked K times."""

    record_id: str
    verdicts: tuple[str, ...]
    """Every verdict it got, in repeat order (``unverified`` answers included)."""
    majority: str | None
    """The majority side's most common verdict (ties: the first answer's side)."""
    agreeing: int
    answered: int

    @property
    def stability(self) -> float | None:
        """Share of its answers agreeing with the majority; None when none answered."""
        return self.agreeing / self.answered if self.answered else None

    @property
    def flipped(self) -> bool:
        """Its answers do not all agree."""
        return self.answered > 0 and self.agreeing < self.answered


@dataclass(frozen=True, slots=True)
class Stability:
    """Stability of a judge over K repeats, per claim and overall."""

    records: tuple[RecordStability, ...]
    repeats: int
    flip_rate: float | None
    """Share of claims (with an answer) whose answers do not all agree."""
    mean_stability: float | None
    people_split: dict[str, float | None]
    """``unstable`` / ``stable``: share of those claims whose annotators split."""
    people_agree: dict[str, float | None]
    """``unstable`` / ``stable``: share whose judge majority agrees with people's consensus."""
    counts: dict[str, int]
    """``unstable`` / ``stable``: claims with people's labels in each group."""


def _side(verdict: str) -> bool:
    return verdict == "supports"


def record_stability(record_id: str, verdicts: Sequence[str]) -> RecordStability:
    """How much one claim's K verdicts agree (module doc)."""
    answers = [v for v in verdicts if v not in ("unverified", "")]
    if not answers:
        return RecordStability(record_id, tuple(verdicts), None, 0, 0)
    yes = sum(_side(v) for v in answers)
    no = len(answers) - yes
    side = _side(answers[0]) if yes == no else yes > no
    members = [v for v in answers if _side(v) == side]
    majority = max(dict.fromkeys(members), key=members.count)
    return RecordStability(record_id, tuple(verdicts), majority, len(members), len(answers))


def _rate(values: Sequence[bool]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def stability(
    verdicts: Mapping[str, Sequence[str]], people: pd.DataFrame | None = None
) -> Stability:
    """Per-claim stability, the flip rate, and how unstable claims relate to people's labels.

    Args:
        verdicts: record id → its verdicts, one per repeat.
        people: annotation rows (``record_id``, ``human_score``) of those records.
    """
    records = tuple(record_stability(rid, vs) for rid, vs in verdicts.items())
    answered = [r for r in records if r.answered]
    repeats = max((len(r.verdicts) for r in records), default=0)
    split: dict[str, list[bool]] = {"unstable": [], "stable": []}
    agree: dict[str, list[bool]] = {"unstable": [], "stable": []}
    if people is not None and not people.empty:
        scores = people.assign(record_id=people["record_id"].astype(str)).groupby("record_id")[
            "human_score"
        ]
        by_record = {str(k): np.asarray(v, dtype=float) for k, v in scores}
        for r in answered:
            s = by_record.get(r.record_id)
            if s is None or r.majority is None:
                continue
            group = "unstable" if r.flipped else "stable"
            supports = s >= 2
            split[group].append(bool(supports.any() and (~supports).any()))
            agree[group].append(_side(r.majority) == human_supports(float(np.median(s))))
    return Stability(
        records=records,
        repeats=repeats,
        flip_rate=_rate([r.flipped for r in answered]),
        mean_stability=float(np.mean([r.stability for r in answered])) if answered else None,
        people_split={k: _rate(v) for k, v in split.items()},
        people_agree={k: _rate(v) for k, v in agree.items()},
        counts={k: len(v) for k, v in split.items()},
    )


__all__ = ["RecordStability", "Stability", "record_stability", "stability"]
