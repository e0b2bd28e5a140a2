"""Judge-versus-human figures for one slice of the prepared annotation table.

The unit of analysis is the (record, annotator) pair (DESIGN.md
"Calibration definitions"); only ``consensus_agreement_rate`` is per record.
Point estimates come from scipy and scikit-learn; confidence intervals from
the vectorised cluster bootstrap in :mod:`._bootstrap`. A figure that is
undefined on the data (one class, constant scores, too few pairs) is ``None``
and a note says why; library warnings are silenced here and never leak.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.metrics import (
    brier_score_loss,
    cohen_kappa_score,
    precision_recall_fscore_support,
)

from citecal.calibrate import _bootstrap as bs
from citecal.calibrate._ceiling import human_reliability
from citecal.calibrate._models import Confusion, Metrics, ReliabilityBin
from citecal.config import CalibrationConfig
from citecal.support import humans_support

MIN_PAIRS = 3
"""Correlations and kappas need at least this many judge-human pairs."""


def _finite(value: float | np.floating | None) -> float | None:
    if value is None:
        return None
    v = float(value)
    return v if np.isfinite(v) else None


T = TypeVar("T")


def _quiet(fn: Callable[[], T]) -> T:
    """Run a scipy/sklearn call with its warnings silenced (notes replace them)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn()


def confusion(pairs: pd.DataFrame) -> Confusion:
    """Binary confusion counts (positive = supports) of the judge against humans."""
    j = pairs["judge_pos"].to_numpy(dtype=bool)
    h = pairs["human_pos"].to_numpy(dtype=bool)
    return Confusion(
        tp=int((j & h).sum()),
        fp=int((j & ~h).sum()),
        fn=int((~j & h).sum()),
        tn=int((~j & ~h).sum()),
    )


def consensus_agreement(pairs: pd.DataFrame) -> tuple[float | None, int]:
    """Agreement per record, human side = median of the record's annotator scores.

    Returns the rate and how many records had conflicting judge verdicts
    across rows (then the first row's verdict is used).
    """
    if pairs.empty:
        return None, 0
    g = pairs.groupby("record_id", sort=False)
    median = g["human_score"].median()
    judge = g["judge_pos"].first()
    conflicting = int((g["judge_pos"].nunique() > 1).sum())
    return float((humans_support(median) == judge.astype(bool)).mean()), conflicting


def reliability_bins(scored: pd.DataFrame, n_bins: int = 5) -> list[ReliabilityBin]:
    """Equal-width judge-score bins with the human support rate in each (empty bins dropped)."""
    if scored.empty:
        return []
    edges = np.round(np.linspace(0.0, 1.0, n_bins + 1), 6)
    s = scored["judge_score"].to_numpy(dtype=np.float64)
    idx = np.clip(np.digitize(s, edges[1:-1], right=False), 0, n_bins - 1)
    frame = pd.DataFrame(
        {
            "bin": idx,
            "s": s,
            "pos": scored["human_pos"].to_numpy(),
            "h": scored["human_score"].to_numpy(),
        }
    )
    agg = frame.groupby("bin").agg(
        n=("s", "size"), s=("s", "mean"), pos=("pos", "mean"), h=("h", "mean")
    )
    return [
        ReliabilityBin(
            low=float(edges[b]),
            high=float(edges[b + 1]),
            n=int(row["n"]),
            mean_judge_score=float(row["s"]),
            human_support_rate=float(row["pos"]),
            mean_human_score=float(row["h"]),
        )
        for b, row in zip(agg.index.to_numpy(dtype=int), agg.to_dict("records"), strict=True)
    ]


def _prf(
    pairs: pd.DataFrame, notes: list[str]
) -> tuple[list[float | None], list[float | None], list[float | None]]:
    y = pairs["human_pos"].to_numpy(dtype=int)
    p = pairs["judge_pos"].to_numpy(dtype=int)
    result: Any = _quiet(
        lambda: precision_recall_fscore_support(y, p, labels=[1, 0], zero_division=np.nan)
    )
    prec, rec, f1 = result[0], result[1], result[2]
    out = ([_finite(v) for v in prec], [_finite(v) for v in rec], [_finite(v) for v in f1])
    if out[0][0] is None:
        notes.append("precision: the judge never said 'supports'")
    if out[1][0] is None:
        notes.append("recall: no human scored ≥ 2 (no 'supports' to find)")
    return out


def _one_class_note(values: pd.Series, who: str) -> str | None:
    if values.nunique() < 2:
        label = "supports" if bool(values.iloc[0]) else "not supports"
        return f"all {who} verdicts are '{label}'"
    return None


def _correlations(scored: pd.DataFrame, notes: list[str]) -> dict[str, float | None]:
    out: dict[str, float | None] = dict.fromkeys(
        ("spearman_rho", "spearman_p", "kendall_tau", "weighted_kappa", "brier"), None
    )
    if scored.empty:
        notes.append("spearman_rho, kendall_tau, weighted_kappa, brier: no judge support score")
        return out
    s = scored["judge_score"].to_numpy(dtype=np.float64)
    h = scored["human_score"].to_numpy(dtype=np.float64)
    out["brier"] = _finite(
        _quiet(lambda: brier_score_loss(scored["human_pos"].to_numpy(dtype=int), s, pos_label=1))  # type: ignore[arg-type]
    )
    if len(scored) < MIN_PAIRS:
        notes.append(
            f"spearman_rho, kendall_tau, weighted_kappa: fewer than {MIN_PAIRS} scored pairs"
        )
        return out
    if np.unique(s).size < 2 or np.unique(h).size < 2:
        who = "judge support scores" if np.unique(s).size < 2 else "human scores"
        notes.append(
            f"spearman_rho, kendall_tau: all {who} are identical (rank correlation undefined)"
        )
    else:
        rho = _quiet(lambda: stats.spearmanr(s, h))
        out["spearman_rho"] = _finite(rho.statistic)  # type: ignore[attr-defined]
        out["spearman_p"] = _finite(rho.pvalue)  # type: ignore[attr-defined]
        tau = _quiet(lambda: stats.kendalltau(s, h, variant="b"))
        out["kendall_tau"] = _finite(tau.statistic)  # type: ignore[attr-defined]
    ordinal = scored["judge_ord"].to_numpy(dtype=int)
    if np.unique(h).size < 2 and np.unique(ordinal).size < 2:
        notes.append("weighted_kappa: judge and humans each used a single score")
    else:
        wk = _quiet(
            lambda: cohen_kappa_score(
                h.astype(int), ordinal, labels=[0, 1, 2, 3], weights="quadratic"
            )
        )
        out["weighted_kappa"] = _finite(wk)  # type: ignore[arg-type]
        if out["weighted_kappa"] is None:
            notes.append("weighted_kappa: undefined (no expected disagreement)")
    return out


def _bootstrap_cis(
    pairs: pd.DataFrame, scored: pd.DataFrame, config: CalibrationConfig, notes: list[str]
) -> dict[str, list[float] | None]:
    """Cluster-bootstrap 95% CIs of agreement, kappas and ρ, resampling reports."""
    names = ("agreement_rate", "cohen_kappa", "weighted_kappa", "spearman_rho")
    if config.bootstrap_resamples == 0:
        notes.append("ci: bootstrap disabled (bootstrap_resamples = 0)")
        return {}
    n_reports = pairs["report_id"].nunique()
    if n_reports < 2:
        notes.append("ci: one report only; the cluster bootstrap needs ≥ 2 reports")
        return dict.fromkeys(names)
    rng = np.random.default_rng(config.seed)
    codes = bs.cluster_codes(pairs["report_id"].to_numpy())
    weights = bs.resample_counts(codes.n_clusters, config.bootstrap_resamples, rng)
    binary = bs.cluster_tables(
        codes,
        pairs["judge_pos"].to_numpy(dtype=np.int64),
        pairs["human_pos"].to_numpy(dtype=np.int64),
        2,
        2,
    )
    t2 = bs.resampled_tables(weights, binary, 2, 2)
    samples: dict[str, bs.FloatArray] = {
        "agreement_rate": bs.agreement_from_tables(t2),
        "cohen_kappa": bs.kappa_from_tables(t2),
    }
    if len(scored) >= MIN_PAIRS:
        scodes = bs.cluster_codes(scored["report_id"].to_numpy())
        sweights = (
            weights
            if scodes.n_clusters == codes.n_clusters
            else (bs.resample_counts(scodes.n_clusters, config.bootstrap_resamples, rng))
        )
        ordinal = bs.cluster_tables(
            scodes,
            scored["judge_ord"].to_numpy(dtype=np.int64),
            scored["human_score"].to_numpy(dtype=np.int64),
            4,
            4,
        )
        samples["weighted_kappa"] = bs.kappa_from_tables(
            bs.resampled_tables(sweights, ordinal, 4, 4), "quadratic"
        )
        max_levels = max(2, bs.MAX_TABLE_CELLS // (4 * scodes.n_clusters))
        levels, nx, binned = bs.level_codes(
            scored["judge_score"].to_numpy(dtype=np.float64), min(max_levels, 4096)
        )
        if binned:
            notes.append(
                f"ci.spearman_rho: judge scores binned into {nx} quantile levels for the bootstrap"
            )
        ranks = bs.cluster_tables(
            scodes, levels, scored["human_score"].to_numpy(dtype=np.int64), nx, 4
        )
        samples["spearman_rho"] = bs.spearman_from_tables(
            bs.resampled_tables(sweights, ranks, nx, 4)
        )
    out: dict[str, list[float] | None] = {}
    for name in names:
        if name not in samples:
            out[name] = None
            continue
        ci, undefined = bs.percentile_ci(samples[name])
        out[name] = ci
        if ci is None:
            notes.append(f"ci.{name}: undefined in most resamples")
        elif undefined:
            notes.append(
                f"ci.{name}: {undefined} of {config.bootstrap_resamples} resamples undefined, "
                "interval from the rest"
            )
    return out


def compute_metrics(df: pd.DataFrame, config: CalibrationConfig | None = None) -> Metrics:
    """Every figure of DESIGN.md's METRICS for one slice of a prepared table.

    Args:
        df: rows from :func:`citecal.calibrate.prepare` (one per record × annotator).
        config: threshold, ceiling margin, bootstrap resamples and seed.
    """
    config = config or CalibrationConfig()
    notes: list[str] = []
    pairs = df[df["judge_pos"].notna()]
    scored = pairs[pairs["judge_score"].notna()]
    left_out = len(df) - len(pairs)
    if left_out:
        notes.append(
            f"{left_out} annotation(s) without a binary judge verdict (unverified or missing) "
            "left out of judge-human figures"
        )
    conf = confusion(pairs)
    agreement = float((conf.tp + conf.tn) / len(pairs)) if len(pairs) else None
    if not len(pairs):
        notes.append("no judge verdicts: every judge-human figure is undefined")
    consensus, conflicting = consensus_agreement(pairs)
    if conflicting:
        notes.append(
            f"consensus_agreement_rate: {conflicting} record(s) carry different judge verdicts "
            "on different rows; the first was used"
        )
    kappa: float | None = None
    none: list[float | None] = [None, None]
    precision, recall, f1 = none, none, none
    if len(pairs) >= MIN_PAIRS:
        one_class = [
            n
            for n in (
                _one_class_note(pairs["human_pos"], "human"),
                _one_class_note(pairs["judge_pos"], "judge"),
            )
            if n
        ]
        if one_class:
            notes.append(f"cohen_kappa: {'; '.join(one_class)} (one class only)")
        else:
            kappa = _finite(
                _quiet(lambda: cohen_kappa_score(pairs["human_pos"], pairs["judge_pos"]))  # type: ignore[arg-type]
            )
        precision, recall, f1 = _prf(pairs, notes)
    elif len(pairs):
        notes.append(f"cohen_kappa, precision, recall, f1: fewer than {MIN_PAIRS} pairs")
    corr = _correlations(scored, notes)
    human = human_reliability(df)
    notes.extend(human.notes)
    judge_vs = (
        human.judge_ceiling - human.ceiling
        if human.ceiling is not None and human.judge_ceiling is not None
        else None
    )
    lr = df["line_range"].dropna()
    counts = {k: int((lr == k).sum()) for k in ("correct", "too_narrow", "too_broad")}
    if lr.empty:
        notes.append("line_range_accuracy: no line_range answers")
    ci = _bootstrap_cis(pairs, scored, config, notes) if len(pairs) >= MIN_PAIRS else {}
    # An interval around an undefined estimate would be misleading.
    point = {
        "agreement_rate": agreement,
        "cohen_kappa": kappa,
        "weighted_kappa": corr["weighted_kappa"],
        "spearman_rho": corr["spearman_rho"],
    }
    ci = {k: (v if point.get(k) is not None else None) for k, v in ci.items()}
    rho = corr["spearman_rho"]
    return Metrics(
        n_records=int(df["record_id"].nunique()),
        n_annotations=len(df),
        n_annotators=int(df["annotator"].nunique()),
        n_pairs=len(pairs),
        n_reports=int(df["report_id"].nunique()),
        agreement_rate=agreement,
        consensus_agreement_rate=consensus,
        spearman_rho=rho,
        spearman_p=corr["spearman_p"],
        kendall_tau=corr["kendall_tau"],
        cohen_kappa=kappa,
        weighted_kappa=corr["weighted_kappa"],
        brier=corr["brier"],
        precision=precision[0],
        recall=recall[0],
        f1=f1[0],
        precision_not_supports=precision[1],
        recall_not_supports=recall[1],
        f1_not_supports=f1[1],
        confusion=conf,
        krippendorff_alpha=human.alpha,
        human_exact_agreement=human.exact,
        human_within1_agreement=human.within1,
        human_ceiling=human.ceiling,
        judge_ceiling_agreement=human.judge_ceiling,
        judge_vs_ceiling=judge_vs,
        within_ceiling=None if judge_vs is None else bool(judge_vs >= -config.ceiling_margin),
        line_range_accuracy=counts["correct"] / len(lr) if len(lr) else None,
        line_range_counts=counts,
        ci=ci,
        reliability=reliability_bins(scored),
        calibrated=None if rho is None else bool(rho > config.spearman_threshold),
        notes=notes,
    )
