"""Assemble a :class:`CalibrationReport`: overall figures, breakdowns, disagreements."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from citecal.calibrate._compare import compare_judges
from citecal.calibrate._disagreements import categorise, category_counts, to_records
from citecal.calibrate._drift import drift, snapshot
from citecal.calibrate._metrics import compute_metrics, metric_columns
from citecal.calibrate._models import (
    CalibrationReport,
    Comparison,
    Drift,
    Gate,
    JudgeSnapshot,
    Metrics,
    SignalQuality,
)
from citecal.calibrate._recalibrate import MapMethod, RecalibrationMap, cross_validate, fit_map
from citecal.calibrate._signals import signal_quality
from citecal.calibrate._table import load_annotations
from citecal.config import CalibrationConfig
from citecal.correct._acceptance import StrategyAcceptance, correction_acceptance
from citecal.errors import InputError

GROUP_COLUMNS: dict[str, str] = {
    "mode": "mode",
    "model": "judge_model",
    "prompt_version": "prompt_version",
    "language": "language",
    "report": "report_id",
    "repo": "repo",
}
"""``--by`` names and the table column each one groups on."""

DEFAULT_BY: tuple[str, ...] = ("mode", "model", "prompt_version")
"""Breakdowns made when the user names none (README "Calibration")."""


def default_by(df: pd.DataFrame) -> tuple[str, ...]:
    """:data:`DEFAULT_BY`, plus ``repo`` when the table spans several repositories.

    A table pulled from an eval-batch sample covers many repositories, and
    the judge may do well on one and badly on another (README "Many reports").
    """
    several = df["repo"].dropna().nunique() > 1 if "repo" in df else False
    return (*DEFAULT_BY, "repo") if several else DEFAULT_BY


MISSING_GROUP = "(none)"


def group_metrics(
    df: pd.DataFrame, by: str, config: CalibrationConfig, overall: Metrics | None = None
) -> dict[str, Metrics]:
    """Figures per value of one ``--by`` dimension (missing values grouped as "(none)").

    ``overall``, the figures of all of ``df``, is reused for a group that holds
    every row (one prompt version, one model): the same rows in the same order
    give the same figures, bootstrap included, so they are not computed twice.
    """
    if by not in GROUP_COLUMNS:
        raise InputError(f"cannot group by {by!r}: use one of {', '.join(GROUP_COLUMNS)}")
    keys = df[GROUP_COLUMNS[by]].fillna(MISSING_GROUP).astype(str)
    narrow = metric_columns(df)
    out: dict[str, Metrics] = {}
    for value, part in narrow.groupby(keys, sort=True):
        whole = overall is not None and len(part) == len(df)
        out[str(value)] = (
            overall if whole and overall is not None else compute_metrics(part, config)
        )
    return out


@dataclass(frozen=True, slots=True)
class _Figures:
    """What the tables are needed for; the rest of a report is made from these alone."""

    overall: Metrics
    groups: dict[str, dict[str, Metrics]]
    mismatch: pd.DataFrame
    comparison: Comparison | None
    judge: JudgeSnapshot | None
    drift: Drift | None
    recalibration: RecalibrationMap | None
    corrections: dict[str, StrategyAcceptance] | None = None
    signals: list[SignalQuality] | None = None


@dataclass(frozen=True)
class Checks:
    """Optional checks of a calibration: drift against a saved one, a recalibration map."""

    baseline: JudgeSnapshot | None = None
    baseline_name: str = "baseline"
    drift_margin: float = 0.05
    map_method: MapMethod | None = None
    snapshot: bool = True
    """Keep the judge's answer per record (JSON output, a later --baseline)."""


def _figures(
    df: pd.DataFrame,
    by: Sequence[str],
    config: CalibrationConfig,
    compare: pd.DataFrame | None,
    input_name: str,
    compare_name: str,
    checks: Checks,
) -> _Figures:
    overall = compute_metrics(df, config)
    fitted = None
    if checks.map_method is not None:
        scored = df[df["judge_score"].notna()]
        fitted = fit_map(
            scored["judge_score"].to_numpy(),
            scored["human_pos"].to_numpy(),
            checks.map_method,
            source=input_name,
        ).model_copy(
            update={
                "cv": cross_validate(
                    scored["judge_score"].to_numpy(),
                    scored["human_pos"].to_numpy(),
                    scored["report_id"].to_numpy(),
                    checks.map_method,
                )
            }
        )
    return _Figures(
        overall=overall,
        groups={name: group_metrics(df, name, config, overall) for name in dict.fromkeys(by)},
        mismatch=categorise(df),
        comparison=(
            None
            if compare is None
            else compare_judges(df, compare, name_a=input_name, name_b=compare_name, config=config)
        ),
        corrections=correction_acceptance(df),
        judge=snapshot(df) if checks.snapshot else None,
        drift=(
            None
            if checks.baseline is None
            else drift(
                df,
                checks.baseline,
                baseline_name=checks.baseline_name,
                current_name=input_name,
                margin=checks.drift_margin,
                config=config,
            )
        ),
        recalibration=fitted,
        signals=signal_quality(df, config),
    )


def _report(figures: _Figures, input_name: str, config: CalibrationConfig) -> CalibrationReport:
    return CalibrationReport(
        input=input_name,
        overall=figures.overall,
        groups=figures.groups,
        disagreements=to_records(figures.mismatch),
        categories=category_counts(figures.mismatch),
        compare=figures.comparison,
        corrections=figures.corrections,
        judge=figures.judge,
        drift=figures.drift,
        recalibration=figures.recalibration,
        signals=figures.signals or [],
        settings={
            "spearman_threshold": config.spearman_threshold,
            "ceiling_margin": config.ceiling_margin,
            "bootstrap_resamples": config.bootstrap_resamples,
            "seed": config.seed,
        },
    )


def calibrate_frame(
    df: pd.DataFrame,
    *,
    input_name: str,
    by: Sequence[str] = DEFAULT_BY,
    config: CalibrationConfig | None = None,
    compare: pd.DataFrame | None = None,
    compare_name: str = "B",
    checks: Checks | None = None,
) -> CalibrationReport:
    """Calibrate a prepared annotation table (see :func:`citecal.calibrate.prepare`).

    Args:
        df: prepared table, one row per (record, annotator).
        input_name: what to call the input in the report (usually its path).
        by: breakdown dimensions (``mode``, ``model``, ``prompt_version``,
            ``language``, ``report``).
        config: thresholds and bootstrap settings.
        compare: a second prepared table judged by another prompt or model.
        compare_name: what to call it.
        checks: drift against a saved calibration, a recalibration map.
    """
    config = config or CalibrationConfig()
    figures = _figures(df, by, config, compare, input_name, compare_name, checks or Checks())
    return _report(figures, input_name, config)


def calibrate(
    path: Path | str,
    *,
    by: Sequence[str] | None = None,
    config: CalibrationConfig | None = None,
    compare: Path | str | None = None,
    checks: Checks | None = None,
) -> CalibrationReport:
    """Read an annotation table and calibrate the judge against its annotators.

    ``by`` None means :func:`default_by` of the table.

    Raises:
        InputError: unreadable or malformed table (missing columns, scores
            outside 0–3, duplicate rows), or an unknown ``by`` name.
    """
    for name in by or ():
        if name not in GROUP_COLUMNS:
            raise InputError(f"cannot group by {name!r}: use one of {', '.join(GROUP_COLUMNS)}")
    config = config or CalibrationConfig()
    df = load_annotations(path)
    by = default_by(df) if by is None else by
    other = load_annotations(compare) if compare is not None else None
    compare_name = str(compare) if compare is not None else "B"
    figures = _figures(df, by, config, other, str(path), compare_name, checks or Checks())
    # The tables are done with: free them before the disagreement records are made
    # (a year of annotations and a quarter of a million records are not held at once).
    del df, other
    return _report(figures, str(path), config)


GATE_FIGURES: tuple[str, ...] = (
    "agreement_rate",
    "consensus_agreement_rate",
    "cohen_kappa",
    "weighted_kappa",
    "spearman_rho",
    "kendall_tau",
    "precision",
    "recall",
    "f1",
    "krippendorff_alpha",
)
"""Overall figures ``citecal calibrate --fail-under`` can gate on (point estimates)."""


def apply_gate(report: CalibrationReport, thresholds: dict[str, float]) -> CalibrationReport:
    """``report`` with its gate: each named overall figure must reach its threshold.

    An undefined figure fails its gate (a CI gate must not pass on missing data).

    Raises:
        InputError: a name outside :data:`GATE_FIGURES`.
    """
    failures = []
    for name, value in thresholds.items():
        if name not in GATE_FIGURES:
            raise InputError(f"--fail-under {name!r}: use one of {', '.join(GATE_FIGURES)}")
        if not math.isfinite(value):
            raise InputError(f"--fail-under {name}: {value} is not a finite number")
        got = getattr(report.overall, name)
        if got is None or not math.isfinite(got):  # NaN compares false: it would pass
            failures.append(f"{name} is undefined (see the notes), required ≥ {value:g}")
        elif got < value:
            failures.append(f"{name} {got:.3f} < {value:g}")
    gate = Gate(thresholds=dict(thresholds), passed=not failures, failures=failures)
    return report.model_copy(update={"gate": gate})
