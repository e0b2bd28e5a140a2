"""The one meaning of "supports" for every yes/no figure (README "One meaning of `partial`").

A citation supports its claim only when its verdict is ``supports``; ``partial``
is not support (its ``score`` carries the nuance for rank statistics), and
``not_supports`` / ``unverified`` are not either. For people, a 0–3 score of 2
or more is support (README "Calibration"). Eval's precision, calibrate's agreement,
kappa, confusion and precision/recall, and the ground-truth benchmark all use
these definitions, so a verdict can never count as support in one report and
not in another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SUPPORTING_VERDICTS: frozenset[str] = frozenset({"supports"})
"""Verdict labels that count as support."""

DECIDED_VERDICTS: frozenset[str] = frozenset({"supports", "partial", "not_supports"})
"""Verdict labels that are a decision (everything but ``unverified`` / no verdict)."""

HUMAN_SUPPORT_MIN_SCORE = 2
"""A human 0–3 score at or above this is support."""


def verdict_supports(verdict: str | None) -> bool:
    """True when ``verdict`` counts as support (only ``supports``)."""
    return verdict in SUPPORTING_VERDICTS


def verdict_decided(verdict: str | None) -> bool:
    """True when ``verdict`` is a decision rather than ``unverified`` or missing."""
    return verdict in DECIDED_VERDICTS


def human_supports(score: float) -> bool:
    """True when a human 0–3 score counts as support (≥ 2)."""
    return score >= HUMAN_SUPPORT_MIN_SCORE


def verdicts_support(verdicts: npt.ArrayLike) -> np.ndarray:
    """Vectorised :func:`verdict_supports` for table columns (same rule)."""
    import numpy as np

    return np.isin(np.asarray(verdicts, dtype=object), sorted(SUPPORTING_VERDICTS))


def humans_support(scores: npt.ArrayLike) -> np.ndarray:
    """Vectorised :func:`human_supports` for table columns (same rule)."""
    import numpy as np

    return np.asarray(scores, dtype=np.float64) >= HUMAN_SUPPORT_MIN_SCORE


__all__ = [
    "DECIDED_VERDICTS",
    "HUMAN_SUPPORT_MIN_SCORE",
    "SUPPORTING_VERDICTS",
    "human_supports",
    "humans_support",
    "verdict_decided",
    "verdict_supports",
    "verdicts_support",
]
