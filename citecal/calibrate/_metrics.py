"""Judge-versus-human figures for one slice of the prepared annotation table.

The unit of analysis is the (record, annotator) pair (README
"Calibration"); only ``consensus_agreement_rate`` is per record.
Point estimates come from scipy and scikit-learn; confidence intervals from
the vectorised cluster bootstrap in :mod:`._bootstrap`. A figure that is
undefined on the data (one class, constant scores, too few pairs) is ``None``
and a note says why; library warnings are silenced here and never leak.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats
from sklearn.metrics import brier_score_loss

from citecal.calibrate import _bootstrap as bs
from citecal.calibrate._ceiling import human_reliability
from citecal.calibrate._models import Confusion, Metrics, ReliabilityBin
from citecal.calibrate._table import CODE_COLUMNS, id_codes
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
    g = pairs.groupby(id_codes(pairs, "record_id")[0], sort=False)
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


def table_kappa(table: NDArray[np.int64], weights: str | None = None) -> float | None:
    """Cohen's kappa from a confusion table (rows human, columns judge).

    The arithmetic of :func:`sklearn.metrics.cohen_kappa_score`, step for step,
    so results are the same to the last bit, without re-scanning a million
    labels for each call; ``None`` where sklearn would give NaN.
    """
    confusion = table.astype(np.float64)
    n_classes = confusion.shape[0]
    sum0 = np.sum(confusion, axis=0)
    sum1 = np.sum(confusion, axis=1)
    total = np.sum(sum0)
    if total == 0:
        return None
    expected = np.outer(sum0, sum1) / total
    if weights is None:
        w_mat = np.ones([n_classes, n_classes], dtype=np.float64)
        np.fill_diagonal(w_mat, 0)
    else:
        w_mat = np.zeros([n_classes, n_classes], dtype=np.float64)
        w_mat += np.arange(n_classes)
        w_mat = np.abs(w_mat - w_mat.T) if weights == "linear" else (w_mat - w_mat.T) ** 2
    denominator = np.sum(w_mat * expected)
    if denominator == 0:
        return None
    return _finite(1 - np.sum(w_mat * confusion) / denominator)


def _counts(x: NDArray[np.int64], y: NDArray[np.int64], k: int) -> NDArray[np.int64]:
    """``k × k`` table of (x, y) code pairs."""
    return np.bincount(x * k + y, minlength=k * k).reshape(k, k)


def _divide(num: float, den: float) -> float | None:
    """sklearn's ``zero_division=np.nan`` division: undefined (None) when ``den`` is 0."""
    return None if den == 0 else _finite(np.float64(num) / np.float64(den))


def expected_calibration_error(bins: list[ReliabilityBin]) -> float | None:
    """ECE over the reliability bins: Σ (n_b / n)·|mean judge score_b − share supported_b|.

    The same bins as the reliability diagram (width 0.2), so the number and the
    picture tell one story (README "Calibrated confidence"). None without scores.
    """
    total = sum(b.n for b in bins)
    if not total:
        return None
    return sum(b.n * abs(b.mean_judge_score - b.human_support_rate) for b in bins) / total


def _prf(
    conf: Confusion, notes: list[str]
) -> tuple[list[float | None], list[float | None], list[float | None]]:
    """Precision, recall and F1 for "supports" then "not supports".

    :func:`sklearn.metrics.precision_recall_fscore_support`'s arithmetic
    (F1 = 2·tp / (true + predicted)) on the confusion counts already made.
    """
    out: tuple[list[float | None], list[float | None], list[float | None]] = ([], [], [])
    for tp, fp, fn in ((conf.tp, conf.fp, conf.fn), (conf.tn, conf.fn, conf.fp)):
        pred, true = tp + fp, tp + fn
        out[0].append(_divide(tp, pred))
        out[1].append(_divide(tp, true))
        out[2].append(_divide(2.0 * tp, 1.0 * true + pred))
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
    s_constant, h_constant = bool(s.min() == s.max()), bool(h.min() == h.max())
    if s_constant or h_constant:
        who = "judge support scores" if s_constant else "human scores"
        notes.append(
            f"spearman_rho, kendall_tau: all {who} are identical (rank correlation undefined)"
        )
    else:
        rho = _quiet(lambda: stats.spearmanr(s, h))
        out["spearman_rho"] = _finite(rho.statistic)  # type: ignore[attr-defined]
        out["spearman_p"] = _finite(rho.pvalue)  # type: ignore[attr-defined]
        tau = _quiet(lambda: stats.kendalltau(s, h, variant="b"))
        out["kendall_tau"] = _finite(tau.statistic)  # type: ignore[attr-defined]
    ordinal = scored["judge_ord"].to_numpy(dtype=np.int64)
    if h_constant and ordinal.min() == ordinal.max():
        notes.append("weighted_kappa: judge and humans each used a single score")
    else:
        table = _counts(h.astype(np.int64), ordinal, 4)
        out["weighted_kappa"] = _quiet(lambda: table_kappa(table, "quadratic"))
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
    report_codes, n_reports = id_codes(pairs, "report_id")
    if n_reports < 2:
        notes.append("ci: one report only; the cluster bootstrap needs ≥ 2 reports")
        return dict.fromkeys(names)
    rng = np.random.default_rng(config.seed)
    codes = bs.Codes(report_codes, n_reports)
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
        scodes = bs.Codes(*id_codes(scored, "report_id"))
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


METRIC_COLUMNS: tuple[str, ...] = (
    *CODE_COLUMNS.values(),
    "judge_pos",
    "judge_score",
    "judge_ord",
    "human_pos",
    "human_score",
    "line_range",
)
"""The prepared columns :func:`compute_metrics` reads (breakdowns slice only these)."""


def metric_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` narrowed to :data:`METRIC_COLUMNS`: slicing the text columns costs memory.

    The ids themselves are kept only where their integer codes are missing
    (a table that did not come from :func:`~citecal.calibrate.prepare`).
    """
    ids = [c for c, code in CODE_COLUMNS.items() if code not in df.columns]
    return df[[c for c in (*ids, *METRIC_COLUMNS) if c in df.columns]]


def compute_metrics(df: pd.DataFrame, config: CalibrationConfig | None = None) -> Metrics:
    """Every figure of README "Calibration"'s METRICS for one slice of a prepared table.

    Args:
        df: rows from :func:`citecal.calibrate.prepare` (one per record × annotator).
        config: threshold, ceiling margin, bootstrap resamples and seed.
    """
    config = config or CalibrationConfig()
    df = metric_columns(df)
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
            table = np.array([[conf.tn, conf.fp], [conf.fn, conf.tp]], dtype=np.int64)
            kappa = _quiet(lambda: table_kappa(table))
        precision, recall, f1 = _prf(conf, notes)
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
    seen = lr.value_counts()
    counts = {k: int(seen.get(k, 0)) for k in ("correct", "too_narrow", "too_broad")}
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
    bins = reliability_bins(scored)
    return Metrics(
        n_records=id_codes(df, "record_id")[1],
        n_annotations=len(df),
        n_annotators=id_codes(df, "annotator")[1],
        n_pairs=len(pairs),
        n_reports=id_codes(df, "report_id")[1],
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
        reliability=bins,
        ece=expected_calibration_error(bins),
        calibrated=None if rho is None else bool(rho > config.spearman_threshold),
        notes=notes,
    )
