"""Paired comparison of two judges (prompts or models) on the same annotations.

Both tables carry the same human scores; only the judge columns differ
(``citecal rejudge`` writes B from A). Differences B − A of agreement, kappa,
weighted kappa and ρ get paired cluster-bootstrap CIs: the *same* resampled
reports are used for both judges, so the CI reflects the change, not the
spread of either judge alone. McNemar's exact test runs on records (the
consensus human label), because the judge gives one verdict per record and
counting each annotator would count the same verdict several times.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from citecal.calibrate import _bootstrap as bs
from citecal.calibrate._metrics import MIN_PAIRS, _correlations, _finite, _quiet
from citecal.calibrate._models import Comparison, FlippedRecord, MetricDiff
from citecal.config import CalibrationConfig
from citecal.errors import InputError
from citecal.support import humans_support

SIGNIFICANCE = 0.05

_JUDGE = ["judge_pos", "judge_score", "judge_ord", "llm_verdict", "prompt_version"]


def _binary_figures(pairs: pd.DataFrame, side: str) -> tuple[float | None, float | None]:
    from sklearn.metrics import cohen_kappa_score

    j = pairs[f"judge_pos_{side}"].astype(int)
    h = pairs["human_pos"].astype(int)
    agreement = float((j == h).mean()) if len(pairs) else None
    kappa = None
    if len(pairs) >= MIN_PAIRS and j.nunique() > 1 and h.nunique() > 1:
        kappa = _finite(_quiet(lambda: cohen_kappa_score(h, j)))  # type: ignore[arg-type]
    return agreement, kappa


def _side(pairs: pd.DataFrame, side: str) -> pd.DataFrame:
    out = pairs[["record_id", "report_id", "human_score", "human_pos"]].copy()
    for col in ("judge_pos", "judge_score", "judge_ord"):
        out[col] = pairs[f"{col}_{side}"]
    return out


def _paired_samples(
    pairs: pd.DataFrame, config: CalibrationConfig
) -> dict[str, tuple[bs.FloatArray, bs.FloatArray]]:
    """Bootstrap samples of each figure for A and B over the same resampled reports."""
    rng = np.random.default_rng(config.seed)
    codes = bs.cluster_codes(pairs["report_id"].to_numpy())
    weights = bs.resample_counts(codes.n_clusters, config.bootstrap_resamples, rng)
    human = pairs["human_pos"].to_numpy(dtype=np.int64)
    score = pairs["human_score"].to_numpy(dtype=np.int64)
    out: dict[str, tuple[bs.FloatArray, bs.FloatArray]] = {}
    per_side: dict[str, dict[str, bs.FloatArray]] = {}
    for side in ("a", "b"):
        t2 = bs.resampled_tables(
            weights,
            bs.cluster_tables(
                codes, pairs[f"judge_pos_{side}"].to_numpy(dtype=np.int64), human, 2, 2
            ),
            2,
            2,
        )
        t4 = bs.resampled_tables(
            weights,
            bs.cluster_tables(
                codes, pairs[f"judge_ord_{side}"].to_numpy(dtype=np.int64), score, 4, 4
            ),
            4,
            4,
        )
        max_levels = max(2, bs.MAX_TABLE_CELLS // (4 * codes.n_clusters))
        levels, nx, _ = bs.level_codes(
            pairs[f"judge_score_{side}"].to_numpy(dtype=np.float64), min(max_levels, 4096)
        )
        tr = bs.resampled_tables(weights, bs.cluster_tables(codes, levels, score, nx, 4), nx, 4)
        per_side[side] = {
            "agreement_rate": bs.agreement_from_tables(t2),
            "cohen_kappa": bs.kappa_from_tables(t2),
            "weighted_kappa": bs.kappa_from_tables(t4, "quadratic"),
            "spearman_rho": bs.spearman_from_tables(tr),
        }
    for name in per_side["a"]:
        out[name] = (per_side["a"][name], per_side["b"][name])
    return out


def _opt(value: Any) -> str | None:
    return None if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def _mode(series: pd.Series) -> str | None:
    values = series.dropna()
    return None if values.empty else str(values.mode().iloc[0])


def compare_judges(
    a: pd.DataFrame,
    b: pd.DataFrame,
    *,
    name_a: str = "A",
    name_b: str = "B",
    config: CalibrationConfig | None = None,
) -> Comparison:
    """Compare judge B against baseline judge A on their common (record, annotator) pairs.

    Raises:
        InputError: the tables share no scored (record, annotator) pair.
    """
    config = config or CalibrationConfig()
    notes: list[str] = []
    keys = ["record_id", "annotator"]
    left = a[[*keys, "report_id", "human_score", "human_pos", "claim", "citation", *_JUDGE]]
    right = b[[*keys, "human_score", *_JUDGE]]
    joined = left.merge(right, on=keys, suffixes=("_a", "_b"), how="inner")
    if joined.empty:
        raise InputError(f"{name_a} and {name_b} share no (record_id, annotator) pair to compare")
    differ = int((joined["human_score_a"] != joined["human_score_b"]).sum())
    if differ:
        notes.append(f"{differ} pair(s) have different human scores in B; A's scores are used")
    joined = joined.rename(columns={"human_score_a": "human_score"}).drop(columns="human_score_b")
    only = len(a) + len(b) - 2 * len(joined)
    if only:
        notes.append(f"{only} row(s) present in only one table were left out")
    pairs = joined[joined["judge_pos_a"].notna() & joined["judge_pos_b"].notna()]
    dropped = len(joined) - len(pairs)
    if dropped:
        notes.append(f"{dropped} pair(s) without a binary verdict from both judges left out")
    if pairs.empty:
        raise InputError(f"{name_a} and {name_b} have no pair with a verdict from both judges")

    points: dict[str, tuple[float | None, float | None]] = {}
    ag_a, k_a = _binary_figures(pairs, "a")
    ag_b, k_b = _binary_figures(pairs, "b")
    points["agreement_rate"] = (ag_a, ag_b)
    points["cohen_kappa"] = (k_a, k_b)
    both = pairs[pairs["judge_score_a"].notna() & pairs["judge_score_b"].notna()]
    corr_a = _correlations(_side(both, "a"), [])
    corr_b = _correlations(_side(both, "b"), [])
    for name in ("weighted_kappa", "spearman_rho"):
        points[name] = (corr_a[name], corr_b[name])

    samples: dict[str, tuple[bs.FloatArray, bs.FloatArray]] = {}
    n_reports = int(pairs["report_id"].nunique())
    if config.bootstrap_resamples == 0:
        notes.append("ci: bootstrap disabled (bootstrap_resamples = 0)")
    elif n_reports < 2:
        notes.append("ci: one report only; the paired cluster bootstrap needs ≥ 2 reports")
    elif len(both) == len(pairs) and len(pairs) >= MIN_PAIRS:
        samples = _paired_samples(pairs, config)
    figures: dict[str, MetricDiff] = {}
    for name, (va, vb) in points.items():
        diff = None if va is None or vb is None else vb - va
        ci = None
        if diff is not None and name in samples:
            sa, sb = samples[name]
            ci, _ = bs.percentile_ci(sb - sa)
        figures[name] = MetricDiff(a=va, b=vb, diff=diff, ci=ci)

    records = pairs.groupby("record_id", sort=False).agg(
        human_median=("human_score", "median"),
        pos_a=("judge_pos_a", "first"),
        pos_b=("judge_pos_b", "first"),
        verdict_a=("llm_verdict_a", "first"),
        verdict_b=("llm_verdict_b", "first"),
        claim=("claim", "first"),
        citation=("citation", "first"),
    )
    truth = humans_support(records["human_median"])
    right_a = records["pos_a"].astype(bool) == truth
    right_b = records["pos_b"].astype(bool) == truth
    b01 = int((right_a & ~right_b).sum())
    b10 = int((~right_a & right_b).sum())
    if b01 + b10:
        p: float | None = float(stats.binomtest(b10, b01 + b10, 0.5).pvalue)
    else:
        p = 1.0
        notes.append("mcnemar: no discordant records (both judges right or wrong together)")
    ag_ci = figures["agreement_rate"].ci
    worse = (p is not None and p < SIGNIFICANCE and b01 > b10) or (
        ag_ci is not None and ag_ci[1] < 0
    )
    better = (p is not None and p < SIGNIFICANCE and b10 > b01) or (
        ag_ci is not None and ag_ci[0] > 0
    )
    flipped_rows = records[records["pos_a"] != records["pos_b"]]
    flipped = [
        FlippedRecord(
            record_id=str(rid),
            claim=_opt(row["claim"]),
            citation=_opt(row["citation"]),
            verdict_a=_opt(row["verdict_a"]),
            verdict_b=_opt(row["verdict_b"]),
            human_median=float(row["human_median"]),
            effect="fixed" if bool(right_b.loc[rid]) else "broke",
        )
        for rid, row in zip(flipped_rows.index, flipped_rows.to_dict("records"), strict=True)
    ]
    flipped.sort(key=lambda f: (f.effect, f.record_id))
    return Comparison(
        a=name_a,
        b=name_b,
        n_pairs=len(pairs),
        n_records=len(records),
        prompt_a=_mode(pairs["prompt_version_a"]),
        prompt_b=_mode(pairs["prompt_version_b"]),
        figures=figures,
        mcnemar_b01=b01,
        mcnemar_b10=b10,
        mcnemar_p=p,
        significantly_worse=bool(worse),
        significantly_better=bool(better and not worse),
        flipped=flipped,
        notes=notes,
    )
