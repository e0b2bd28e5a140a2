"""How often annotators accepted proposed corrections, by strategy (``citecal calibrate``).

The pulled annotation table carries, for records pushed with ``citecal push
--corrections``, the proposal (``correction_suggested``) and its strategy
(``correction_strategy``) next to the annotator's own answer (``correction``).
An answer equal to the proposal (spacing aside) accepted it; another answer
edited it; no answer rejected it. Pure: a DataFrame in, small records out.
"""

from __future__ import annotations

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field


class StrategyAcceptance(BaseModel):
    """How annotators answered one strategy's proposed corrections."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(description="Submitted answers to records with a proposed correction.")
    accepted: int = Field(description="The answer is the proposal (spacing aside).")
    edited: int = Field(description="The answer is another correction.")
    cleared: int = Field(description="No correction given: the proposal was rejected.")
    acceptance_rate: float | None = Field(description="accepted / n.")


def correction_acceptance(df: pd.DataFrame) -> dict[str, StrategyAcceptance] | None:
    """Acceptance of proposed corrections by strategy; None when the table has none."""
    if "correction_strategy" not in df or df["correction_strategy"].isna().all():
        return None
    rows = df[df["correction_strategy"].notna()]
    out: dict[str, StrategyAcceptance] = {}
    for strategy, part in rows.groupby("correction_strategy", sort=True):
        accepted = edited = cleared = 0
        answers = part["correction"] if "correction" in part else pd.Series(index=part.index)
        for suggested, answer in zip(part["correction_suggested"], answers, strict=True):
            given = " ".join(str(answer).split()) if isinstance(answer, str) else ""
            if not given:
                cleared += 1
            elif given == " ".join(str(suggested).split()):
                accepted += 1
            else:
                edited += 1
        n = len(part)
        out[str(strategy)] = StrategyAcceptance(
            n=n,
            accepted=accepted,
            edited=edited,
            cleared=cleared,
            acceptance_rate=accepted / n if n else None,
        )
    return out


__all__ = ["StrategyAcceptance", "correction_acceptance"]
