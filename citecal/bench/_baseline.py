"""The committed baseline of the ground-truth benchmark and the regression check.

The baseline holds the deterministic (``--no-llm``) figures last accepted. A
figure that gets worse than its baseline (beyond a rounding tolerance) is a
regression; when figures improve, the baseline is raised by rewriting it with
``citecal bench groundtruth --no-llm --write-baseline FILE``.
"""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from citecal._io import MAX_JSON_BYTES, atomic_write_text, read_text_file
from citecal._json import loads
from citecal.bench._score import BenchReport, Metrics
from citecal.errors import InputError

HIGHER_IS_BETTER: tuple[str, ...] = (
    "agreement",
    "decision_coverage",
    "decision_coverage_valid",
    "precision",
    "recall",
)
LOWER_IS_BETTER: tuple[str, ...] = ("false_support_rate", "false_reject_rate")
TOLERANCE = 1e-9


class Baseline(BaseModel):
    """``datasets/groundtruth/baseline.json``."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    schema_version: int = 1
    judge: str | None
    sets: list[str]
    figures: dict[str, float | None]
    """Finite numbers only: a NaN figure compares false both ways (nothing falls below it)."""


def baseline_of(report: BenchReport) -> Baseline:
    """The figures of ``report`` that the regression check compares."""
    o = report.overall
    return Baseline(
        judge=report.judge,
        sets=report.sets,
        figures={k: getattr(o, k) for k in (*HIGHER_IS_BETTER, *LOWER_IS_BETTER)},
    )


def read_baseline(path: Path) -> Baseline:
    """Load a baseline file; errors name the file (one line)."""
    data = loads(
        read_text_file(path, "baseline", MAX_JSON_BYTES), str(path), "a ground-truth baseline"
    )
    try:
        return Baseline.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(part) for part in err["loc"])
        raise InputError(f"{path}: not a ground-truth baseline: {where}: {err['msg']}") from None


def check_baseline_sets(baseline: Baseline, sets: list[str], path: Path) -> None:
    """Refuse to compare figures of different label sets (before any evaluation).

    Raises:
        InputError: the baseline was measured on other label sets than this run scores.
    """
    if sorted(baseline.sets) != sorted(sets):
        missing = sorted(set(baseline.sets) - set(sets))
        extra = sorted(set(sets) - set(baseline.sets))
        parts = []
        if missing:
            parts.append(f"not in this run: {', '.join(missing)}")
        if extra:
            parts.append(f"not in the baseline: {', '.join(extra)}")
        raise InputError(
            f"{path} was measured on other label sets ({'; '.join(parts) or 'repeated sets'}): "
            "its figures cannot be compared with this run's (use the same --only, or write "
            "a baseline for these sets with --write-baseline)"
        )


def write_baseline(path: Path, report: BenchReport) -> None:
    """Write ``report``'s figures as the new baseline (atomically)."""
    atomic_write_text(path, baseline_of(report).model_dump_json(indent=2) + "\n")


def regressions(overall: Metrics, baseline: Baseline) -> list[str]:
    """One line per figure that is worse than the baseline (empty when none is)."""
    found: list[str] = []
    for name, base in baseline.figures.items():
        if base is None:
            continue
        now = getattr(overall, name)
        if now is None:  # nothing to divide by in this run: nothing to compare
            continue
        if not math.isfinite(now):  # NaN compares false both ways: it must not pass
            found.append(f"{name} is not a number in this run ({now}; baseline {base})")
            continue
        if name in HIGHER_IS_BETTER and now < base - TOLERANCE:
            found.append(f"{name} fell to {now} (baseline {base})")
        elif name in LOWER_IS_BETTER and now > base + TOLERANCE:
            found.append(f"{name} rose to {now} (baseline {base})")
    return found


__all__ = [
    "Baseline",
    "baseline_of",
    "check_baseline_sets",
    "read_baseline",
    "regressions",
    "write_baseline",
]
