"""Out-of-sample scores of candidate prompts and their paired comparison with the start.

Every figure is computed from per-report contingency tables with the formulas
of :mod:`citecal.calibrate._bootstrap`, so a point estimate and its paired
cluster-bootstrap interval (the same resampled reports for the start and the
candidate, as ``citecal calibrate --compare`` does) come from one code path,
and the definitions are README "Calibration"'s: agreement and F1 on the binary
verdict (``supports`` only), weighted κ on the 0–3 scale, ρ on the support score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import pandas as pd

from citecal.calibrate import _bootstrap as bs

Metric = Literal["weighted_kappa", "agreement", "spearman_rho", "f1"]
METRICS: tuple[str, ...] = get_args(Metric)


@dataclass(frozen=True, slots=True)
class Side:
    """One judge's answers on the scored pairs: binary verdict, 0–3 score, support score."""

    pos: np.ndarray
    ord: np.ndarray
    score: np.ndarray

    @classmethod
    def of(cls, prepared: pd.DataFrame) -> Side:
        """The judge columns of a prepared table (:func:`citecal.calibrate.prepare`)."""
        return cls(
            prepared["judge_pos"].to_numpy(dtype=np.float64),
            prepared["judge_ord"].to_numpy(dtype=np.float64),
            prepared["judge_score"].to_numpy(dtype=np.float64),
        )

    def take(self, mask: np.ndarray) -> Side:
        """The rows where ``mask`` is true."""
        return Side(self.pos[mask], self.ord[mask], self.score[mask])

    @property
    def decided(self) -> np.ndarray:
        """Rows with a binary verdict and a support score."""
        return np.asarray(~np.isnan(self.pos) & ~np.isnan(self.score))


@dataclass(frozen=True, slots=True)
class PairedScore:
    """The metric for the start (a) and a candidate (b), with paired bootstrap intervals."""

    a: float | None
    b: float | None
    diff: float | None
    ci_a: list[float] | None
    ci_b: list[float] | None
    ci_diff: list[float] | None
    n_pairs: int


def _metric(
    metric: str,
    weights: np.ndarray,
    codes: bs.Codes,
    side: Side,
    human_score: np.ndarray,
) -> np.ndarray:
    """``metric`` for each row of ``weights`` (resample counts of each report)."""
    human_pos = (human_score >= 2).astype(np.int64)
    if metric in ("agreement", "f1"):
        t = bs.resampled_tables(
            weights, bs.cluster_tables(codes, side.pos.astype(np.int64), human_pos, 2, 2), 2, 2
        )
        if metric == "agreement":
            return bs.agreement_from_tables(t)
        tp, fp, fn = t[:, 1, 1], t[:, 1, 0], t[:, 0, 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(2 * tp / (2 * tp + fp + fn), dtype=np.float64)
    if metric == "weighted_kappa":
        t = bs.resampled_tables(
            weights, bs.cluster_tables(codes, side.ord.astype(np.int64), human_score, 4, 4), 4, 4
        )
        return bs.kappa_from_tables(t, "quadratic")
    levels, nx, _ = bs.level_codes(side.score, 4096)
    t = bs.resampled_tables(weights, bs.cluster_tables(codes, levels, human_score, nx, 4), nx, 4)
    return bs.spearman_from_tables(t)


def _finite(values: np.ndarray) -> float | None:
    value = float(values[0])
    return value if np.isfinite(value) else None


def paired_score(
    metric: str,
    reports: np.ndarray,
    human_score: np.ndarray,
    start: Side,
    candidate: Side,
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> PairedScore:
    """The metric of both judges on the pairs both decided, and B − A with a paired CI."""
    keep = start.decided & candidate.decided
    a, b = start.take(keep), candidate.take(keep)
    hs = human_score[keep].astype(np.int64)
    codes = bs.cluster_codes(reports[keep])
    if not keep.any():
        return PairedScore(None, None, None, None, None, None, 0)
    ones = np.ones((1, codes.n_clusters))
    pa = _finite(_metric(metric, ones, codes, a, hs))
    pb = _finite(_metric(metric, ones, codes, b, hs))
    diff = None if pa is None or pb is None else pb - pa
    ci_a = ci_b = ci_diff = None
    if resamples and codes.n_clusters >= 2:
        weights = bs.resample_counts(codes.n_clusters, resamples, np.random.default_rng(seed))
        sa = _metric(metric, weights, codes, a, hs)
        sb = _metric(metric, weights, codes, b, hs)
        ci_a, _ = bs.percentile_ci(sa, level)
        ci_b, _ = bs.percentile_ci(sb, level)
        ci_diff, _ = bs.percentile_ci(sb - sa, level)
    return PairedScore(pa, pb, diff, ci_a, ci_b, ci_diff, int(keep.sum()))
