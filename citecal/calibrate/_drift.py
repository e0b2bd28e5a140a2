"""Drift alarms: is the judge now worse than the calibration we saved?

``citecal calibrate NEW --baseline CALIBRATION.json`` compares today's judge
(new prompt, new model, new month) with the judge of a saved calibration on
the records both share. The saved calibration carries the judge's answer per
record (:class:`JudgeSnapshot`, in JSON output), so the baseline judge is put next to today's
human scores and :func:`compare_judges` runs the paired tests: McNemar's exact
test for agreement, the paired cluster bootstrap for κ, weighted κ and ρ. An
alarm is raised when a figure drops by more than the margin *and* the drop is
significant (its paired 95% interval lies below zero, or for agreement
McNemar's p < 0.05 against today's judge), README "Drift alarms".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import ValidationError

from citecal._io import MAX_JSON_BYTES, read_text_file
from citecal._json import JSONInputError, loads
from citecal.calibrate._compare import SIGNIFICANCE, compare_judges
from citecal.calibrate._models import Drift, JudgeSnapshot
from citecal.calibrate._table import CODE_COLUMNS, judge_support
from citecal.config import CalibrationConfig
from citecal.errors import InputError

DRIFT_FIGURES: tuple[str, ...] = ("agreement_rate", "cohen_kappa", "weighted_kappa", "spearman_rho")
"""Figures watched for a drop."""

DEFAULT_MARGIN = 0.05


def _none(values: np.ndarray) -> list[float | None]:
    return [None if not np.isfinite(v) else float(v) for v in values.astype(np.float64)]


def _texts(series: pd.Series) -> list[str | None]:
    return [v if isinstance(v, str) else None for v in series.astype(object)]


def snapshot(df: pd.DataFrame) -> JudgeSnapshot:
    """One entry per record of a prepared table: the judge's verdict, score and prompt.

    Only what cannot be recomputed is kept (the binary answer follows from the
    verdict and score, the report from today's table), and the lists are built
    without validation copies: a year of annotations has a quarter of a
    million records, and calibrate's memory target is 1 GB (README).
    """
    # First row of each record, found on the integer record codes prepare() adds, and only
    # the four columns taken: a copy of the million-row table would cost 100 MB at the peak.
    key = CODE_COLUMNS["record_id"] if CODE_COLUMNS["record_id"] in df else "record_id"
    _, first = np.unique(df[key].to_numpy(), return_index=True)
    first = np.sort(first)

    def column(name: str) -> pd.Series:
        return pd.Series(df[name].to_numpy()[first])

    return JudgeSnapshot.model_construct(
        record_id=column("record_id").astype(str).tolist(),
        llm_verdict=_texts(column("llm_verdict")),
        judge_score=_none(column("judge_score").to_numpy()),
        prompt_version=_texts(column("prompt_version")),
    )


def read_snapshot(path: Path | str) -> JudgeSnapshot:
    """The judge snapshot of a saved ``citecal calibrate --format json`` output.

    Raises:
        InputError: missing or unreadable file, not a calibration JSON, or one
            saved before calibrations carried the judge's answers.
    """
    p = Path(path)
    text = read_text_file(p, "baseline calibration", MAX_JSON_BYTES)
    try:
        data = loads(text, str(p), "a calibration JSON")  # README "Security": bounded numbers
    except JSONInputError as exc:
        raise InputError(f"cannot read baseline calibration {p}: {exc.reason}") from None
    if not isinstance(data, dict) or "overall" not in data:
        raise InputError(f"{p} is not a `citecal calibrate --format json` output")
    if data.get("judge") is None:
        raise InputError(
            f"{p} has no per-record judge answers (saved by an older citecal): "
            "calibrate the baseline table again with --format json"
        )
    try:
        return JudgeSnapshot.model_validate(data["judge"])
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(part) for part in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        raise InputError(f"{p}: 'judge' block: {f'{where}: ' if where else ''}{msg}") from None


def baseline_table(current: pd.DataFrame, base: JudgeSnapshot) -> pd.DataFrame:
    """Today's table restricted to the shared records, with the baseline judge's columns."""
    scores = np.array([np.nan if v is None else v for v in base.judge_score], dtype=np.float64)
    verdicts = np.array(base.llm_verdict, dtype=object)
    # The one rule of citecal.support, as prepare() applies it (the score is already the
    # support score, so no confidence is needed).
    score, pos = judge_support(verdicts, np.full(len(verdicts), None, dtype=object), scores)
    judge = pd.DataFrame(
        {
            "record_id": base.record_id,
            "llm_verdict": verdicts,
            "judge_pos": pos,
            "judge_score": score,
            "prompt_version": base.prompt_version,
        }
    ).drop_duplicates("record_id")
    judge["judge_ord"] = np.minimum(3.0, np.floor(judge["judge_score"] * 4.0))
    keep = current.drop(columns=[c for c in judge.columns if c != "record_id"])
    return keep.merge(judge, on="record_id", how="inner")


def drift(
    current: pd.DataFrame,
    base: JudgeSnapshot,
    *,
    baseline_name: str,
    current_name: str,
    margin: float = DEFAULT_MARGIN,
    config: CalibrationConfig | None = None,
) -> Drift:
    """Paired comparison of the baseline judge (A) with today's (B) and the alarms raised.

    Raises:
        InputError: the calibrations share no record.
    """
    a = baseline_table(current, base)
    shared = set(a["record_id"])
    if not shared:
        raise InputError(
            f"{baseline_name} and {current_name} share no record: drift is measured on the "
            "records both calibrations annotated"
        )
    b = current[current["record_id"].isin(shared)]
    comparison = compare_judges(a, b, name_a=baseline_name, name_b=current_name, config=config)
    alarms: list[str] = []
    for name in DRIFT_FIGURES:
        d = comparison.figures.get(name)
        if d is None or d.diff is None or d.diff >= -margin:
            continue
        ci_below = d.ci is not None and d.ci[1] < 0
        mcnemar = (
            name == "agreement_rate"
            and comparison.mcnemar_p is not None
            and comparison.mcnemar_p < SIGNIFICANCE
            and comparison.mcnemar_b01 > comparison.mcnemar_b10
        )
        if ci_below or mcnemar:
            why = (
                f"paired 95% CI [{d.ci[0]:.3f}, {d.ci[1]:.3f}]"
                if ci_below and d.ci is not None
                else f"McNemar p = {comparison.mcnemar_p:.3g}"
            )
            alarms.append(
                f"{name} dropped {-d.diff:.3f} (from {d.a:.3f} to {d.b:.3f}) > margin "
                f"{margin:g}, significant ({why})"
            )
    return Drift(
        baseline=baseline_name,
        margin=margin,
        shared_records=len(shared),
        comparison=comparison,
        alarms=alarms,
    )


__all__ = [
    "DEFAULT_MARGIN",
    "DRIFT_FIGURES",
    "Drift",
    "JudgeSnapshot",
    "baseline_table",
    "drift",
    "read_snapshot",
    "snapshot",
]
