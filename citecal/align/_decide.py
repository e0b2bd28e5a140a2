"""The rule that keeps a candidate prompt (README "Aligning the judge").

The winner of a search is the best of several candidates on the same labels,
so its apparent gain is biased upward even out of sample; a candidate is kept
only when its paired interval lies above 0 *and* McNemar's exact test on
records, corrected for the number of candidates scored, says its verdicts are
better. The correction is what holds the false-keep rate at 5% when no prompt
is better (``benchmarks/align_search.py``, target b).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from citecal.align._score import PairedScore

ALPHA = 0.05


def mcnemar(a: pd.DataFrame, b: pd.DataFrame) -> tuple[int, int, float]:
    """McNemar's exact test on records, as ``calibrate --compare`` runs it.

    Records decided by both judges, each against its annotators' median
    score (README "Calibration"): how many only A gets right (b01), only B
    (b10), and the two-sided binomial p-value (1 with no discordant record).
    """
    from scipy import stats

    from citecal.support import humans_support

    keep = a["judge_pos"].notna().to_numpy() & b["judge_pos"].notna().to_numpy()
    frame = pd.DataFrame(
        {
            "record_id": a["record_id"].to_numpy()[keep],
            "human": a["human_score"].to_numpy()[keep],
            "a": a["judge_pos"].to_numpy()[keep],
            "b": b["judge_pos"].to_numpy()[keep],
        }
    )
    records = frame.groupby("record_id", sort=False).agg(
        human=("human", "median"), a=("a", "first"), b=("b", "first")
    )
    truth = np.asarray(humans_support(records["human"]), dtype=bool)
    right_a = records["a"].astype(bool).to_numpy() == truth
    right_b = records["b"].astype(bool).to_numpy() == truth
    b01, b10 = int((right_a & ~right_b).sum()), int((~right_a & right_b).sum())
    p = float(stats.binomtest(b10, b01 + b10, 0.5).pvalue) if b01 + b10 else 1.0
    return b01, b10, p


def decide(
    score: PairedScore, mcnemar_p: float | None, b01: int, b10: int, tried: int
) -> tuple[bool, str]:
    """Whether the winner is shown better than the start, and why (README "Aligning the judge").

    Two conditions: the metric's paired 95% interval lies above 0, and the
    verdicts are better by McNemar's exact test at ``ALPHA / tried``
    (Bonferroni over the candidates scored: the winner was picked as the best
    of them on these same labels, so one test at ``ALPHA`` would let chance
    through too often).
    """
    if score.diff is None or score.diff <= 0:
        return False, "no candidate scored above the start"
    if score.ci_diff is None:
        return False, "the paired interval is undefined (too few reports or pairs)"
    if score.ci_diff[0] <= 0:
        return False, (
            f"the paired 95% interval of the gain [{score.ci_diff[0]:.3f}, "
            f"{score.ci_diff[1]:.3f}] includes 0"
        )
    level = ALPHA / max(tried, 1)
    if mcnemar_p is None or b10 <= b01 or mcnemar_p >= level:
        p = "undefined" if mcnemar_p is None else f"{mcnemar_p:.3g}"
        return False, (
            f"McNemar's test on records is not significant after {tried} candidates "
            f"(p = {p}, only start right {b01}, only candidate right {b10}; needs p < {level:.3g})"
        )
    return True, (
        f"paired 95% interval of the gain [{score.ci_diff[0]:.3f}, {score.ci_diff[1]:.3f}] "
        f"above 0; McNemar p = {mcnemar_p:.3g} < {level:.3g} (0.05 / {tried} candidates)"
    )
