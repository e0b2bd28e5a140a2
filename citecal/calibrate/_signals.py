"""Which confidence signal separates the verdicts people agree with from the rest?

README "Judge confidence". For every confidence source present in the annotation table
(``verbal``, ``logprob``, ``consistency``, ``simulated``; a table without the column is
read as the judge's own words, ``verbal``), over the (record, annotator) pairs with a
binary judge verdict, as every pairwise figure of README "Calibration":

- **ROC AUC** of ``confidence_value`` for "the annotator agrees with the verdict"
  (scikit-learn ``roc_auc_score``): 0.5 is a signal that knows nothing, 1 one that
  ranks every agreed verdict above every disputed one. Its 95% interval is a cluster
  bootstrap by report, the same resamples as the other figures' (seeded).
- **Expected calibration error**: Σ (n_bin/n)·|mean confidence − share agreeing| over
  ten equal-width bins, and those bins (the reliability diagram of the HTML report).

A team reads off which signal to threshold the cascade's judge tiers on (README "The
cascade") and whether it may be taken at face value. Pure: a prepared table in,
records out.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from citecal.calibrate import _bootstrap as bs
from citecal.calibrate._models import ConfidenceBin, SignalQuality
from citecal.calibrate._table import id_codes
from citecal.config import CalibrationConfig

BINS = 10
"""Equal-width confidence bins of the reliability diagram and the ECE."""


def _auc(agree: np.ndarray, value: np.ndarray) -> float | None:
    if len(agree) < 2 or agree.all() or not agree.any():
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(roc_auc_score(agree, value))


def confidence_bins(value: np.ndarray, agree: np.ndarray, bins: int = BINS) -> list[ConfidenceBin]:
    """Equal-width bins of the confidence with the share agreeing in each (empty ones dropped)."""
    if not len(value):
        return []
    edges = np.round(np.linspace(0.0, 1.0, bins + 1), 6)
    idx = np.clip(np.digitize(value, edges[1:-1], right=False), 0, bins - 1)
    out = []
    for b in range(bins):
        inside = idx == b
        n = int(inside.sum())
        if n:
            out.append(
                ConfidenceBin(
                    low=float(edges[b]),
                    high=float(edges[b + 1]),
                    n=n,
                    mean_confidence=float(value[inside].mean()),
                    agreement_rate=float(agree[inside].mean()),
                )
            )
    return out


def auc_from_tables(t: np.ndarray) -> np.ndarray:
    """ROC AUC of each ``(…, levels, 2)`` table (ordered confidence levels × disagree/agree).

    Mann–Whitney: the chance an agreed pair's confidence is above a disputed one's,
    ties counted half. NaN where a table lacks one of the classes.
    """
    neg, pos = t[..., 0], t[..., 1]
    below = np.cumsum(neg, axis=-1) - neg
    wins = (pos * (below + 0.5 * neg)).sum(axis=-1)
    total = pos.sum(axis=-1) * neg.sum(axis=-1)
    with np.errstate(all="ignore"):
        return np.where(total > 0, wins / np.where(total > 0, total, 1.0), np.nan)


def _bootstrap_auc(
    agree: np.ndarray, value: np.ndarray, reports: np.ndarray, config: CalibrationConfig
) -> list[float] | None:
    """Percentile 95% interval of the AUC over resampled reports, as the other figures'.

    Per-report tables of confidence level × agreement, resampled by one matrix product
    (the cluster bootstrap of README "Calibration"); confidences are quantile-binned
    when there are more levels than memory allows.
    """
    codes, n = id_codes(pd.DataFrame({"report_id": reports}), "report_id")
    if config.bootstrap_resamples == 0 or n < 2:
        return None
    rng = np.random.default_rng(config.seed)
    cl = bs.Codes(codes, n)
    weights = bs.resample_counts(n, config.bootstrap_resamples, rng)
    levels, nx, _ = bs.level_codes(value, min(max(2, bs.MAX_TABLE_CELLS // (2 * n)), 4096))
    tables = bs.cluster_tables(cl, levels, agree.astype(np.int64), nx, 2)
    samples = auc_from_tables(bs.resampled_tables(weights, tables, nx, 2))
    ci, undefined = bs.percentile_ci(samples)
    return None if ci is None or undefined > config.bootstrap_resamples / 2 else ci


def signal_quality(
    df: pd.DataFrame, config: CalibrationConfig | None = None
) -> list[SignalQuality]:
    """ROC AUC, ECE and reliability bins of each confidence source in ``df`` (module doc).

    Args:
        df: a table from :func:`citecal.calibrate.prepare` (``confidence_source``,
            ``confidence_value``, ``judge_pos``, ``human_pos`` filled in).
        config: bootstrap resamples and seed for the AUC's interval.
    """
    config = config or CalibrationConfig()
    have = df["judge_pos"].notna() & df["confidence_value"].notna()
    pairs = df[have]
    out: list[SignalQuality] = []
    for source, part in pairs.groupby(pairs["confidence_source"].fillna("verbal"), sort=True):
        agree = (part["judge_pos"].to_numpy() == part["human_pos"].to_numpy()).astype(bool)
        value = part["confidence_value"].to_numpy(dtype=np.float64)
        bins = confidence_bins(value, agree)
        total = sum(b.n for b in bins)
        ece = (
            sum(b.n * abs(b.mean_confidence - b.agreement_rate) for b in bins) / total
            if total
            else None
        )
        auc = _auc(agree, value)
        notes = []
        if auc is None:
            notes.append("roc_auc: annotators agree with every verdict, or with none (one class)")
        out.append(
            SignalQuality(
                source=str(source),
                n_pairs=len(part),
                n_records=id_codes(part, "record_id")[1],
                agreement_rate=float(agree.mean()),
                mean_confidence=float(value.mean()),
                roc_auc=auc,
                roc_auc_ci=(
                    None
                    if auc is None
                    else _bootstrap_auc(agree, value, part["report_id"].to_numpy(), config)
                ),
                ece=ece,
                reliability=bins,
                notes=notes,
            )
        )
    return out


__all__ = ["BINS", "auc_from_tables", "confidence_bins", "signal_quality"]
